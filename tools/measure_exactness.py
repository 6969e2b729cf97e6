#!/usr/bin/python3
"""Measures how far Attention Lab's float32 stages are from PyTorch's own computation, in
float32 ulp (units in the last place), at each of the engine's instruction-set levels.

PyTorch's side is tools/torch_oracle.py (every stage as PyTorch 1.13 computes it: nn.Linear,
@, softmax, masked_fill ...); the app's side is `attention-lab dump SCENARIO -o -` run with
ATTNLAB_CPU_CAPABILITY set to each level. For each stage the script prints how many values
there are, how many differ from PyTorch's at all, and the largest distance in ulp (the number
of float32 values between the two, so 1 is "the last bit"). docs/exactness.md quotes its output.

usage: /usr/bin/python3 tools/measure_exactness.py [--app build/app/attention-lab]
                                                   [--levels default,avx2,avx512] [PRESET ...]
Needs Debian's python3-torch (exits 77 without it) and a built attention-lab.
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

try:
    import torch
    import torch_oracle
except ImportError:
    print("skipped: %s has no torch" % sys.executable)
    sys.exit(77)

# Float32 presets of the seed notebooks and of the modern settings (the default set).
PRESETS = ["raschka-journey", "raschka-3.5-causal", "raschka-3.6-mha", "karpathy-head",
           "alibi", "alibi-heads3-attention-gym"]
# The stages compared: the drawn ones (X and the weights) and every computed one.
DRAWN = ("X", "W_query", "W_key", "W_value")
COMPUTED = ("Q", "K", "V", "scores", "logits", "weights", "context")


def flat(v):
    """A nested list of numbers (or "nan" / "inf" strings) as a flat list of floats."""
    if isinstance(v, list):
        return [x for item in v for x in flat(item)]
    if isinstance(v, str):
        return [float(v)]
    return [float(v)]


def ordered(x):
    """x as a float32 bit pattern mapped to an integer that counts float32 values in order
    (so the difference of two is their distance in ulp; -0 and +0 are the same)."""
    (i,) = struct.unpack("<i", struct.pack("<f", x))
    return i if i >= 0 else -(i & 0x7FFFFFFF)


def f32(x):
    """x rounded to float32 (the dump writes the shortest text, which reads as a double)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def ulps(a, b):
    """The distance of float32 values a and b in ulp; 0 for two nans or equal infinities."""
    if a != a or b != b:
        return 0 if (a != a and b != b) else float("inf")
    if a == b:
        return 0
    return abs(ordered(a) - ordered(b))


def app_stages(app, scenario_path, level):
    env = dict(os.environ, ATTNLAB_CPU_CAPABILITY=level, ATTNLAB_THREADS="1")
    out = subprocess.run([app, "dump", scenario_path, "-o", "-"], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", default=os.path.join(ROOT, "build", "app", "attention-lab"))
    ap.add_argument("--levels", default="default,avx2,avx512")
    ap.add_argument("presets", nargs="*", default=PRESETS)
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    totals = {}  # (level, stage) -> [values, differing, max ulp]
    for preset in a.presets:
        path = os.path.join(ROOT, "assets", "presets", preset + ".json")
        with open(path) as f:
            scenario = json.load(f)
        torch_side = torch_oracle.expected(json.loads(json.dumps(scenario)))
        for level in a.levels.split(","):
            app_side = app_stages(a.app, path, level)
            for stage in DRAWN + COMPUTED:
                if stage not in torch_side or stage not in app_side:
                    continue
                t, e = flat(torch_side[stage]), flat(app_side[stage])
                assert len(t) == len(e), (preset, stage, len(t), len(e))
                d = [ulps(x, y) for x, y in zip(t, e)]
                # The same differences in ulp of the stage's largest value (what a cancelling
                # sum's small result makes look large in its own ulp).
                big = max([abs(x) for x in t if math.isfinite(x)] or [0.0])
                unit = 2.0 ** (math.frexp(big)[1] - 24) if big > 0 else 2.0 ** -149
                g = [abs(f32(x) - f32(y)) / unit for x, y in zip(t, e)
                     if math.isfinite(x) and math.isfinite(y)]
                row = totals.setdefault((level, stage), [0, 0, 0, 0.0])
                row[0] += len(d)
                row[1] += sum(1 for x in d if x)
                row[2] = max(row[2], max(d) if d else 0)
                row[3] = max(row[3], max(g) if g else 0.0)
                worst = max(d) if d else 0
                print("%-28s %-8s %-8s %5d values  %5d differ  max %s ulp, %.2f ulp of the largest" %
                      (preset, level, stage, len(d), sum(1 for x in d if x), worst,
                       max(g) if g else 0.0))
    print("\nall presets (%s), torch %s:" % (", ".join(a.presets), torch.__version__))
    for (level, stage), (n, differ, worst, of_big) in sorted(totals.items()):
        print("%-8s %-8s %6d values  %6d differ (%4.1f%%)  max %s ulp of the value, %.2f ulp "
              "of the stage's largest" % (level, stage, n, differ, 100.0 * differ / max(n, 1),
                                          worst, of_big))


if __name__ == "__main__":
    main()
