#!/bin/bash
# bench_ratios.sh: the engine's goals of issue 16 as ratios, measured so that a noisy machine
# does not decide them. Each round runs BM_Pipeline, BM_DenseFloor and BM_MultiplierChange one
# after the other at the same T and thread count (0.4 s each), so both sides of a ratio see the
# same neighbours; the ratios of the rounds are then summarised by their median and range.
#
#   tools/bench_ratios.sh [BUILD_DIR] [ROUNDS]     (defaults: build, 5)
set -euo pipefail
build=${1:-build}
rounds=${2:-5}
bench="$build/bench/attention_bench"
[ -x "$bench" ] || { echo "bench_ratios.sh: no $bench (build the project first)" >&2; exit 2; }
time_of() {  # real time in ms of one benchmark (its exact name)
  "$bench" --benchmark_filter="^$1/real_time\$" --benchmark_min_time=0.4 \
    --benchmark_format=csv 2>/dev/null | tail -1 | cut -d, -f3
}
rows=$(for ((round = 1; round <= rounds; ++round)); do
  for threads in 1 0; do
    for T in 1024 2048; do
      echo "$threads $T $(time_of "BM_Pipeline/T:$T/d:64/threads:$threads")" \
        "$(time_of "BM_DenseFloor/T:$T/d:64/threads:$threads")" \
        "$(time_of "BM_MultiplierChange/T:$T/threads:$threads")"
    done
  done
done)
python3 - "$rows" <<'PY'
import statistics
import sys

rows = [line.split() for line in sys.argv[1].splitlines()]
print("threads      T   pipeline    floor  multiplier  pipeline/floor (goal <= 0.8)"
      "  multiplier/floor (goal <= 0.35)")
for threads in ("1", "0"):
    for T in ("1024", "2048"):
        r = [tuple(map(float, x[2:])) for x in rows if x[0] == threads and x[1] == T]
        med = lambda v: statistics.median(v)
        pf = [p / f for p, f, _ in r]
        mf = [m / f for _, f, m in r]
        print(f"{'all' if threads == '0' else threads:>7} {T:>6} {med([x[0] for x in r]):8.3f} ms"
              f" {med([x[1] for x in r]):6.3f} ms {med([x[2] for x in r]):7.3f} ms"
              f"   {med(pf):.2f} ({min(pf):.2f}-{max(pf):.2f})"
              f"                  {med(mf):.2f} ({min(mf):.2f}-{max(mf):.2f})")
PY
