#!/usr/bin/env bash
# Regenerates every golden of tests/golden that a script of tools/ makes, and checks the result
# equals the committed files byte for byte (issue 60: every generator is covered):
#  - tools/make_goldens.py (with tools/torch_oracle.py) into a temporary folder: rng.json,
#    rng_generic.json, variance.json, every scenarios/*.json, f64/oracle-*.json; the bug
#    gallery's fixes come from ATTENTION_LAB (`presets --bug-fixes`, default
#    build/app/attention-lab);
#  - tools/make_decode_goldens.py: every decode/*.json;
#  - the generators that write into the repository (make_qkv, make_grad, make_train,
#    make_circuits, make_print, make_match, make_trick, make_sum, make_numpy,
#    make_python_random, make_rng_large, make_scaling_demo, microgpt_reference), run in a copy
#    of tools/, assets/ and tests/golden, whose tests/golden and assets/presets/scaling-demo*.json
#    must then equal the committed ones (python_random.json up to the CPython release it
#    records: the draws are compared, not which 3.11 release made them).
# About 3 minutes on 2 cores (tests/golden/code and figures are the app's own outputs, compared
# by the tests that read them). Needs Debian's python3-torch and python3-numpy; exits 77
# (skipped) without torch.   usage: tools/check_goldens.sh [PYTHON [ATTENTION_LAB]]
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-/usr/bin/python3}
if [ -n "${2:-}" ]; then export ATTENTION_LAB=$2; fi
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "skipped: $python has no torch"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" tools/make_goldens.py --out "$tmp" >/dev/null
diff -r --brief tests/golden/scenarios "$tmp/scenarios"
cmp tests/golden/rng.json "$tmp/rng.json"
cmp tests/golden/rng_generic.json "$tmp/rng_generic.json"
cmp tests/golden/variance.json "$tmp/variance.json"
# The float64 variants of tools/make_goldens.py (f64/oracle-*.json; the other f64 goldens are
# make_qkv_goldens.py's): the same set, byte for byte.
diff <(cd tests/golden/f64 && ls oracle-*.json) <(cd "$tmp/f64" && ls oracle-*.json)
for f in "$tmp"/f64/oracle-*.json; do cmp "tests/golden/f64/$(basename "$f")" "$f"; done
"$python" tools/make_decode_goldens.py --out "$tmp/decode" 2>/dev/null
diff -r --brief tests/golden/decode "$tmp/decode"
# The generators that write into the repository, run in a copy of it.
tree=$tmp/tree
mkdir -p "$tree/tests"
cp -r tools assets "$tree/"
cp -r tests/golden "$tree/tests/"
(
  cd "$tree"
  for generator in make_qkv_goldens make_grad_goldens make_train_goldens make_circuits_goldens \
                   make_print_goldens make_match_goldens make_trick_goldens make_sum_goldens \
                   make_numpy_goldens make_python_random_goldens microgpt_reference; do
    "$python" "tools/$generator.py" >/dev/null 2>"$tmp/$generator.log" ||
      { cat "$tmp/$generator.log" >&2; echo "error: tools/$generator.py failed" >&2; exit 1; }
  done
  "$python" tools/make_rng_large_goldens.py >tests/golden/rng_large.json
  "$python" tools/make_scaling_demo.py assets/presets >/dev/null
)
# The CPython release python_random.json records is the one that made it, not part of the draws.
"$python" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
a.pop("python", None), b.pop("python", None)
sys.exit(0 if a == b else 1)' tests/golden/python_random.json "$tree/tests/golden/python_random.json" ||
  { echo "tests/golden/python_random.json: the draws differ" >&2; exit 1; }
cp tests/golden/python_random.json "$tree/tests/golden/python_random.json"
diff -r --brief tests/golden "$tree/tests/golden"
cmp assets/presets/scaling-demo.json "$tree/assets/presets/scaling-demo.json"
cmp assets/presets/scaling-demo-scaled.json "$tree/assets/presets/scaling-demo-scaled.json"
echo "goldens regenerated identically: $(ls "$tmp/scenarios" | wc -l) scenarios, rng, variance," \
     "$(ls "$tmp/decode" | wc -l) decode, and the goldens of 13 more generators"
