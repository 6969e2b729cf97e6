#!/usr/bin/env bash
# Sanitizers and fuzzing (issue 11), run by ./test.sh after the normal tests:
#  1. the libFuzzer targets of tests/fuzz, built with clang-14 (-fsanitize=fuzzer,address,
#     undefined) into build-fuzz/ (core and fuzzers only), each run for ATTNLAB_FUZZ_SECONDS
#     (default 45) from its committed corpus; a crash leaves its input in build-fuzz/crashes/;
#  2. the test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (g++, -O1 -g1,
#     Eigen's assertions on, LeakSanitizer on) into build-asan/ and run through ctest; the GUI
#     tests are left out (the window under llvmpipe and ASan is too slow for CI), but one
#     scripted window session (tests/lsan/gui_session.script) runs under LeakSanitizer.
# Any sanitizer report (but the reported, not yet fixed ones in tools/ubsan.supp), failing test
# or fuzzer crash makes the script fail. Needs clang-14 and libclang-rt-14-dev
# (tools/install_deps.sh installs them); without clang the fuzzers are skipped with a message.
# ATTNLAB_SANITIZE_STEPS=fuzz or =asan runs one step only.
# Measured from clean on the shared 2-core machine (load ~4): fuzz build + 3 x 45 s runs 6 min,
# ASan build + suite 12.5 min (suite alone 45-90 s); 18.5 min in all, 15 min of CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${ATTNLAB_FUZZ_SECONDS:-45}
steps=${ATTNLAB_SANITIZE_STEPS:-fuzz,asan}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tools/ubsan.supp
# fontconfig's process-long caches (PDF figures through pango) are not leaks of ours.
# print_suppressions=0: the matched suppressions would be printed to stderr at exit, and the
# tests check that a bad command prints exactly one line there.
export LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp:print_suppressions=0
# -g1: line tables only (file:line in every report) at a fraction of -g's compile time.
sanitized=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
           -DATTNLAB_SANITIZE=address,undefined -DATTNLAB_BUILD_BENCH=OFF)

if [[ $steps == *fuzz* ]]; then
  if command -v clang++-14 >/dev/null; then
    start=$SECONDS
    cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 "${sanitized[@]}" -DATTNLAB_FUZZ=ON \
          -DATTNLAB_BUILD_APP=OFF -DATTNLAB_BUILD_TESTS=OFF >/dev/null
    cmake --build build-fuzz -j2 --target fuzz_scenario fuzz_tokenizer fuzz_figure
    mkdir -p build-fuzz/crashes
    for target in fuzz_scenario fuzz_tokenizer fuzz_figure; do
      seeds=tests/fuzz/corpus/${target#fuzz_}
      [ "$target" = fuzz_figure ] && seeds=tests/fuzz/corpus/scenario
      dict=()
      [ "$target" != fuzz_tokenizer ] && dict=(-dict=tests/fuzz/scenario.dict)
      work=build-fuzz/corpus/$target  # new inputs go here, never into the committed corpus
      mkdir -p "$work"
      echo "== $target: ${seconds} s"
      build-fuzz/tests/fuzz/$target "$work" "$seeds" "${dict[@]}" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/crashes/$target-" 2>build-fuzz/$target.log ||
        { tail -n 60 build-fuzz/$target.log; echo "error: $target found a crash (input in build-fuzz/crashes/)" >&2; exit 1; }
      grep -E "^stat::(number_of_executed_units|new_units_added)" build-fuzz/$target.log || true
    done
    echo "fuzzers: $((SECONDS - start)) s"
  else
    echo "warning: clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev): fuzzers skipped" >&2
  fi
fi

if [[ $steps == *asan* ]]; then
  start=$SECONDS
  cmake -S . -B build-asan "${sanitized[@]}" >/dev/null
  cmake --build build-asan -j2 --target attnlab_tests attention-lab
  ctest --test-dir build-asan -j2 --output-on-failure -E "Gui|NOT_BUILT"
  # LeakSanitizer on the window: one scripted session through every view, the focus, the
  # compare and an export (about 6 s; the whole GUI suite is too slow under ASan and llvmpipe).
  # Third-party caches are in tools/lsan.supp; Mesa, GLFW and X11 report nothing.
  if command -v xvfb-run >/dev/null; then
    mkdir -p build-asan/lsan-gui
    (cd build-asan/lsan-gui && XDG_CONFIG_HOME=$PWD/config timeout 600 \
       xvfb-run -a -s "-screen 0 1280x800x24" ../app/attention-lab --preset raschka-journey \
       --size 1280x800 --script ../../tests/lsan/gui_session.script --frames 3 --no-autosave) ||
      { echo "error: the window under ASan + LeakSanitizer failed (see above)" >&2; exit 1; }
    echo "window session under ASan + LeakSanitizer: clean"
  fi
  echo "test suite under ASan + UBSan: $((SECONDS - start)) s"
fi
