#!/bin/bash
# bench_ratios.sh: the engine's speed goals as ratios, measured so that a noisy machine does not
# decide them. Each round runs BM_Pipeline, BM_DenseFloor and BM_MultiplierChange one after the
# other at the same T and thread count (0.4 s each), so both sides of a ratio see the same
# neighbours; the ratios of the rounds are then summarised by their median and range.
# BM_DenseFloor runs at the CPU's best instruction-set level in any build (the machine's floor).
# With a second build directory (a -DATTNLAB_NATIVE=ON build), each round also runs its
# BM_Pipeline and BM_MultiplierChange right after the first build's, and the table adds
# first ÷ second: how the portable build compares with the native one (issue 25).
#
#   tools/bench_ratios.sh [BUILD_DIR] [ROUNDS] [NATIVE_BUILD_DIR]     (defaults: build, 5)
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
native=${3:-}
bench="$build/bench/attention_bench"
[ -x "$bench" ] || { echo "bench_ratios.sh: no $bench (build the project first)" >&2; exit 2; }
if [ -n "$native" ]; then
  [ -x "$native/bench/attention_bench" ] ||
    { echo "bench_ratios.sh: no $native/bench/attention_bench" >&2; exit 2; }
fi
time_of() {  # real time in ms of one benchmark (its exact name) in binary $1
  "$1" --benchmark_filter="^$2/real_time\$" --benchmark_min_time=0.4 \
    --benchmark_format=csv 2>/dev/null | tail -1 | cut -d, -f3
}
rows=$(for ((round = 1; round <= rounds; ++round)); do
  for threads in 1 0; do
    for T in 1024 2048; do
      pipeline="BM_Pipeline/T:$T/d:64/threads:$threads"
      multiplier="BM_MultiplierChange/T:$T/threads:$threads"
      line="$threads $T $(time_of "$bench" "$pipeline") $(time_of "$bench" "BM_DenseFloor/T:$T/d:64/threads:$threads") $(time_of "$bench" "$multiplier")"
      if [ -n "$native" ]; then
        line="$line $(time_of "$native/bench/attention_bench" "$pipeline") $(time_of "$native/bench/attention_bench" "$multiplier")"
      fi
      echo "$line"
    done
  done
done)
python3 - "$rows" <<'PY'
import statistics
import sys

rows = [line.split() for line in sys.argv[1].splitlines()]
native = len(rows[0]) > 5
med = statistics.median
def spread(v):
    return f"{med(v):.2f} ({min(v):.2f}-{max(v):.2f})"
print("threads      T   pipeline    floor  multiplier  pipeline/floor (goal <= 1.0)"
      "  multiplier/floor (goal <= 0.4)" + ("  pipeline/native  multiplier/native" if native else ""))
for threads in ("1", "0"):
    for T in ("1024", "2048"):
        r = [tuple(map(float, x[2:])) for x in rows if x[0] == threads and x[1] == T]
        line = (f"{'all' if threads == '0' else threads:>7} {T:>6} {med([x[0] for x in r]):8.3f} ms"
                f" {med([x[1] for x in r]):6.3f} ms {med([x[2] for x in r]):7.3f} ms"
                f"   {spread([x[0] / x[1] for x in r])}"
                f"                 {spread([x[2] / x[1] for x in r])}")
        if native:
            line += (f"   {spread([x[0] / x[3] for x in r])}"
                     f"   {spread([x[2] / x[4] for x in r])}")
        print(line)
PY
