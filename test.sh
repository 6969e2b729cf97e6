#!/usr/bin/env bash
# Builds Attention Lab (installing missing Debian packages) and runs every test through ctest,
# then the sanitizer and fuzz step (tools/sanitize.sh: the suite under ASan + UBSan, the
# libFuzzer targets for a short time, LeakSanitizer on the window, ThreadSanitizer on the tests
# that run threads; about 35 minutes more on 2 quiet cores, most of it the two sanitizer builds:
# docs/building.md). ATTNLAB_SKIP_SANITIZERS=1 skips that step for a quick local run; CI always
# runs it.
set -euo pipefail
cd "$(dirname "$0")"
tools/build.sh
ctest --test-dir build -j2 --output-on-failure
if [ "${ATTNLAB_SKIP_SANITIZERS:-0}" != 1 ]; then
  tools/sanitize.sh
fi
