#!/usr/bin/env bash
# Installs what is missing and builds Release into build/ with two jobs. Used by run.sh and
# test.sh; idempotent (an up-to-date build does nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
