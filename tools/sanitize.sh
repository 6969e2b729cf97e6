#!/usr/bin/env bash
# Sanitizers and fuzzing (issue 11), run by ./test.sh after the normal tests:
#  1. the libFuzzer targets of tests/fuzz, built with clang-14 (-fsanitize=fuzzer,address,
#     undefined) into build-fuzz/ (core and fuzzers only), each run for ATTNLAB_FUZZ_SECONDS
#     (default 30) from its committed corpus, two side by side (one per core); a crash leaves
#     its input in build-fuzz/crashes/;
#  2. the core's and the command line's test binaries built with AddressSanitizer +
#     UndefinedBehaviorSanitizer (g++, -O1 -g1, Eigen's assertions on, LeakSanitizer on) into
#     build-asan/, each run as two processes (sharded: a sanitized process costs about a second to
#     start and end, which ctest's one process per test paid 1,330 times), and the golden tests
#     at each instruction-set level through ctest. ctest's checks that repeat the Release
#     build's are left out (the Python programs, the objects' instructions, the sources), and
#     the GUI tests too (the window under llvmpipe and ASan is too slow for CI), but one
#     scripted window session (tests/lsan/gui_session.script) runs under LeakSanitizer, and the
#     same session with a deliberate leak of ours (ATTNLAB_LEAK_ON_PURPOSE=1) must fail it: the
#     check of the check. The window keeps the GL driver mapped until exit
#     (app/gui/gfx/keep_loaded.h), so what Mesa keeps in its globals is not reported as a leak of
#     an unmapped "<unknown module>" on one machine and not on another;
#  3. ThreadSanitizer (g++, -O1 -g1) into build-tsan/, of what runs threads only:
#     attnlab_thread_tests (tests/CMakeLists.txt: the thread pool, the engine on 1, 2 and 8
#     threads, the generator's large draws, the scans, the kernels' packing, training) as two
#     processes, the window's background-run drag test (Gui.LargeDragsRecomputeInTheBackground...)
#     and a training run in the window (tests/tsan/train_session.script), all without a report.
# Any sanitizer report (but the reported, not yet fixed ones in tools/ubsan.supp), failing test
# or fuzzer crash makes the script fail. Needs clang-14 and libclang-rt-14-dev
# (tools/install_deps.sh installs them); without clang the fuzzers are skipped with a message.
# ATTNLAB_SANITIZE_STEPS=fuzz, =asan or =thread runs one step only (or a comma-separated list).
# Measured on a quiet 2-core machine (79dea6e's clean-clone run): fuzz 4 min, ASan + UBSan
# about 32 min (of which 16 min ctest's one process per test), ThreadSanitizer 12.7 min. With
# the binaries run as two processes and ThreadSanitizer's build of the thread tests only, about
# 22 and 9 min are estimated from that run's logs (docs/building.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${ATTNLAB_FUZZ_SECONDS:-30}
steps=${ATTNLAB_SANITIZE_STEPS:-fuzz,asan,thread}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tools/ubsan.supp
# fontconfig's process-long caches (PDF figures through pango) are not leaks of ours.
# print_suppressions=0: the matched suppressions would be printed to stderr at exit, and the
# tests check that a bad command prints exactly one line there.
export LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp:print_suppressions=0
# -g1: line tables only (file:line in every report) at a fraction of -g's compile time.
sanitized=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1"
           -DATTNLAB_SANITIZE=address,undefined -DATTNLAB_BUILD_BENCH=OFF)

# Runs a GoogleTest binary as two processes side by side (GoogleTest's sharding deals its tests
# between them), in the directory ctest runs it in, each printing its failures only; the log of a
# failed one is shown. One process per binary rather than ctest's one per test: a sanitized
# process costs about a second to start and end (its shadow memory, LeakSanitizer's scan at
# exit), which was 80% of the ASan suite's time (1,390 of 1,726 s for 1,330 processes).
# The timeout catches a hang only (a loaded machine takes a few times the quiet one's minutes).
sharded() {  # LOG BINARY [GTEST ARGUMENTS...]
  local log=$1 binary=$2 pids=() failed=0
  shift 2
  for shard in 0 1; do
    (cd "$(dirname "$binary")" && GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard \
       exec timeout 3600 "${prefix[@]}" "./$(basename "$binary")" --gtest_brief=1 "$@") \
      >"$log.$shard" 2>&1 &
    pids+=($!)
  done
  for shard in 0 1; do
    if ! wait "${pids[$shard]}"; then
      failed=1
      tail -n 150 "$log.$shard" >&2
    fi
  done
  if [ "$failed" = 1 ]; then
    echo "error: $(basename "$binary") failed (logs: $log.0, $log.1)" >&2
    return 1
  fi
  echo "$(basename "$binary"): $(grep -ho "[0-9]* tests\? from [0-9]* test suites\? ran" \
    "$log.0" "$log.1" | awk '{n += $1} END {print n}') tests passed in two processes"
}
prefix=()  # a command the test binaries run under (ThreadSanitizer's setarch -R)

if [[ $steps == *fuzz* ]]; then
  if command -v clang++-14 >/dev/null; then
    start=$SECONDS
    cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++-14 "${sanitized[@]}" -DATTNLAB_FUZZ=ON \
          -DATTNLAB_BUILD_APP=OFF -DATTNLAB_BUILD_TESTS=OFF >/dev/null
    cmake --build build-fuzz -j2 --target fuzz_scenario fuzz_tokenizer fuzz_figure fuzz_tensor_text
    mkdir -p build-fuzz/crashes
    # One fuzzer runs on one core: two at a time keep both cores busy (each still runs its
    # full ATTNLAB_FUZZ_SECONDS; the verdict is a crash or none, never a count of inputs).
    fuzz() {  # run in the background: exec makes $! the fuzzer itself
      local target=$1 seeds=tests/fuzz/corpus/${1#fuzz_} dict=()
      [ "$target" = fuzz_figure ] && seeds=tests/fuzz/corpus/scenario
      [ "$target" != fuzz_tokenizer ] && [ "$target" != fuzz_tensor_text ] && dict=(-dict=tests/fuzz/scenario.dict)
      local work=build-fuzz/corpus/$target  # new inputs go here, never into the committed corpus
      mkdir -p "$work"
      exec build-fuzz/tests/fuzz/$target "$work" "$seeds" "${dict[@]}" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/crashes/$target-" 2>build-fuzz/$target.log
    }
    for pair in "fuzz_scenario fuzz_tokenizer" "fuzz_figure fuzz_tensor_text"; do
      read -r first second <<<"$pair"
      echo "== $first, $second: ${seconds} s each, side by side"
      fuzz "$first" & first_pid=$!
      fuzz "$second" & second_pid=$!
      for target in $first $second; do
        pid=$first_pid
        [ "$target" = "$second" ] && pid=$second_pid
        wait "$pid" ||
          { kill "$first_pid" "$second_pid" 2>/dev/null; tail -n 60 build-fuzz/$target.log
            echo "error: $target found a crash (input in build-fuzz/crashes/)" >&2; exit 1; }
        echo "$target:"
        grep -E "^stat::(number_of_executed_units|new_units_added)" build-fuzz/$target.log || true
      done
    done
    echo "fuzzers: $((SECONDS - start)) s"
  else
    echo "warning: clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev): fuzzers skipped" >&2
  fi
fi

if [[ $steps == *asan* ]]; then
  start=$SECONDS
  cmake -S . -B build-asan "${sanitized[@]}" >/dev/null
  cmake --build build-asan -j2 --target attnlab_tests attnlab_cli_tests attention-lab
  # The core's tests and the command line's, each binary as two processes (sharded, above).
  # Left out: *DefaultRunPrints*: microgpt's whole default run (1000 steps; 2 s in Release,
  # minutes here); its short runs stay. PhaseChange: the induction-head lesson's 3000 training
  # steps.
  sharded build-asan/core-tests build-asan/tests/attnlab_tests \
    --gtest_filter='-*DefaultRunPrints*:*PhaseChange*'
  sharded build-asan/cli-tests build-asan/tests/attnlab_cli_tests \
    --gtest_filter='-*DefaultRunPrints*:*PhaseChange*'
  # ctest's other checks: the golden tests again at each instruction-set level (the kernels of
  # each level under ASan). Left out, as they repeat what runs above or in Release: the `python`
  # label (codegen_*, goldens_regenerate_identically: Python and PyTorch run programs against
  # `dump`, `decode` and `tiled`, one ASan process per scenario, 200 s; the programs' text is
  # GeneratedCode's, in-process, and those commands run under ASan in attnlab_cli_tests),
  # cpu_dispatch_kept_apart (the instructions in the objects: the Release build's, which ship),
  # sources_formatted and layers_point_down (the sources, the same in every build).
  ctest --test-dir build-asan -j2 --output-on-failure -R "^goldens_at_"
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
    # The check of the check: the same window with one deliberate leak of ours must fail, and
    # LeakSanitizer must name our function (not an unknown module).
    if (cd build-asan/lsan-gui && ATTNLAB_LEAK_ON_PURPOSE=1 XDG_CONFIG_HOME=$PWD/config \
          timeout 600 xvfb-run -a -s "-screen 0 1280x800x24" ../app/attention-lab \
          --preset raschka-journey --size 1280x800 --frames 3 --no-autosave) \
         >build-asan/lsan-gui/probe.log 2>&1; then
      echo "error: a deliberate leak in the window was not reported by LeakSanitizer" >&2
      exit 1
    fi
    if ! grep -q "4096 byte(s) in 1 object(s)" build-asan/lsan-gui/probe.log ||
       ! grep -q "LeakOnPurposeIfAsked" build-asan/lsan-gui/probe.log; then
      cat build-asan/lsan-gui/probe.log >&2
      echo "error: the deliberate leak failed the window, but not as a leak of ours" >&2
      exit 1
    fi
    echo "window with a deliberate leak under LeakSanitizer: reported, as it must be"
  fi
  echo "test suite under ASan + UBSan: $((SECONDS - start)) s"
fi

if [[ $steps == *thread* ]]; then
  start=$SECONDS
  # TSan's runtime maps its shadow at fixed addresses: address-space randomisation above 28
  # bits (the default of newer kernels) makes some runs die at start, so the step runs with
  # randomisation off when setarch can do that.
  norandom=()
  setarch "$(uname -m)" -R true 2>/dev/null && norandom=(setarch "$(uname -m)" -R)
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tools/tsan.supp"
  # llvmpipe rasterizes on the calling thread: its own threads synchronise through futexes
  # TSan does not see, and their mutex set-up and tear-down is reported as a race of Mesa's.
  export LP_NUM_THREADS=0
  cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" \
        -DATTNLAB_SANITIZE=thread -DATTNLAB_BUILD_BENCH=OFF >/dev/null
  # Only what runs threads is built: attnlab_thread_tests (tests/CMakeLists.txt: the thread pool,
  # the engine's stages at 1, 2 and 8 threads on every golden scenario, the generator's large
  # draws, the row-block scans, the kernels' packing, training), the window's test binary for
  # its background runs, and the app. The rest of attnlab_tests runs the same ParallelFor tasks
  # on other scenarios (ASan and Release run it all); the command line's end-to-end tests run
  # the same engine in other processes.
  cmake --build build-tsan -j2 --target attnlab_thread_tests attnlab_gui_tests attention-lab
  prefix=("${norandom[@]}")
  sharded build-tsan/thread-tests build-tsan/tests/attnlab_thread_tests
  prefix=()
  if command -v xvfb-run >/dev/null; then
    # The window: large drags recomputed on the background run's worker while the panels draw.
    "${norandom[@]}" xvfb-run -a -s "-screen 0 1280x800x24" build-tsan/tests/attnlab_gui_tests \
      --gtest_filter='Gui.LargeDragsRecomputeInTheBackground*'
    # The window: a training run on its worker while the Training view draws its progress.
    mkdir -p build-tsan/train-gui
    (cd build-tsan/train-gui && XDG_CONFIG_HOME=$PWD/config timeout 900 "${norandom[@]}" \
       xvfb-run -a -s "-screen 0 1280x800x24" ../app/attention-lab --preset train-scaling \
       --size 1280x800 --script ../../tests/tsan/train_session.script --frames 3 --no-autosave) ||
      { echo "error: the Training view under ThreadSanitizer failed (see above)" >&2; exit 1; }
    echo "window under ThreadSanitizer: clean"
  fi
  echo "ThreadSanitizer: $((SECONDS - start)) s"
fi
