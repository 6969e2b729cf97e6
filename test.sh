#!/usr/bin/env bash
# Builds Attention Lab (installing missing Debian packages) and runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")"
tools/build.sh
ctest --test-dir build -j2 --output-on-failure
