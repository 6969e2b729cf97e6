#!/usr/bin/env bash
# Installs what is missing and builds Release into build/ with two jobs. Idempotent (an
# up-to-date build does nothing).
#   tools/build.sh app   the app's packages and the attention-lab target only (./run.sh)
#   tools/build.sh       every package and every target: tests, benchmarks (./test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-all}" = app ]; then
  tools/install_deps.sh app
  # The options as they are (a build/ of ./test.sh keeps its tests configured).
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j2 --target attention-lab
else
  tools/install_deps.sh all
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BUILD_TESTS=ON \
        -DATTNLAB_BUILD_BENCH=ON >/dev/null
  cmake --build build -j2
fi
