#!/usr/bin/env bash
# Regenerates the PyTorch goldens (tools/make_goldens.py with tools/torch_oracle.py) into a
# temporary folder and checks they equal the committed tests/golden byte for byte: rng.json,
# rng_generic.json, variance.json, every scenarios/*.json, f64/oracle-*.json and
# (tools/make_decode_goldens.py)
# every decode/*.json. Needs Debian's python3-torch; exits 77 (skipped)
# without it. The bug gallery's fixes come from ATTENTION_LAB (`presets --bug-fixes`,
# default build/app/attention-lab).  usage: tools/check_goldens.sh [PYTHON [ATTENTION_LAB]]
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
echo "goldens regenerated identically: $(ls "$tmp/scenarios" | wc -l) scenarios, rng, variance, $(ls "$tmp/decode" | wc -l) decode"
