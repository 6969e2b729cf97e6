#!/usr/bin/python3
"""Writes tests/golden/numpy_rng.json: draws of NumPy's legacy global generator
(np.random.seed, then np.random.rand / np.random.randn in sequence) for the NumpyGenerator
tests, each double as the hex of its IEEE bits (exact) and its shortest repr (to read).

Needs Debian's python3-numpy (run with /usr/bin/python3); the tests read the JSON only.
The call sequences cross the cached-Gaussian boundary: odd and even counts, consecutive calls
(the cached second value carried over), randn after rand and rand after an odd randn (the cache
survives rand), a reseed in the middle, and the seeds 0, 1, 42, 74 and 2**32 - 1. Seeds NumPy
refuses (2**32, -1) are recorded with NumPy's error message.

    /usr/bin/python3 tools/make_numpy_goldens.py
"""
import json
import os
import struct

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden",
                   "numpy_rng.json")

# Each sequence: ("seed", s) | ("rand", n) | ("randn", n)
SEQUENCES = [
    [("seed", 0), ("randn", 1), ("randn", 1), ("randn", 1)],
    [("seed", 0), ("randn", 3), ("randn", 2), ("randn", 5)],
    [("seed", 0), ("rand", 7), ("randn", 4)],
    [("seed", 1), ("randn", 32)],
    [("seed", 1), ("randn", 5), ("rand", 3), ("randn", 2)],
    [("seed", 42), ("randn", 4), ("rand", 1), ("randn", 1), ("randn", 6)],
    [("seed", 42), ("randn", 1), ("seed", 42), ("randn", 2)],
    [("seed", 74), ("randn", 32), ("randn", 32), ("randn", 32)],
    [("seed", 2**32 - 1), ("randn", 9), ("rand", 4), ("randn", 3)],
    [("seed", 7), ("rand", 1000)],
    [("seed", 3), ("randn", 1001)],
]


def bits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def run(seq):
    calls = []
    for fn, arg in seq:
        if fn == "seed":
            np.random.seed(arg)
            calls.append({"fn": "seed", "seed": arg})
            continue
        values = getattr(np.random, fn)(arg)
        calls.append({"fn": fn, "n": arg, "bits": [bits(v) for v in values],
                      "repr": [repr(float(v)) for v in values]})
    return calls


def refusals():
    out = []
    for seed in (2**32, 2**64 - 1, -1):
        try:
            np.random.seed(seed)
            out.append({"seed": str(seed), "refused": False})
        except ValueError as e:
            out.append({"seed": str(seed), "refused": True, "message": str(e)})
    return out


def main():
    doc = {
        "made_by": "tools/make_numpy_goldens.py",
        "numpy": np.__version__,
        "sequences": [run(s) for s in SEQUENCES],
        "refused_seeds": refusals(),
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
