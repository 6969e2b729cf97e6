#!/usr/bin/python3
"""Writes tests/golden/python_random.json: draws of CPython's random.Random (the module
microgpt.py uses) for the PythonRandom tests, each double as the hex of its IEEE bits (exact)
and its repr (to read). Standard library only; run with Debian's python3 (3.11):

    python3 tools/make_python_random_goldens.py

For each seed (0, 42, 2**32 - 1, 2**32, 2**64 + 5, -7, -(2**40)): the first 8 words
(getrandbits(32)), then random() x 5, getrandbits of 1, 7, 33 and 64 bits, _randbelow of 1, 5,
27, 1000 and 2**33 + 1, gauss(0, 0.08) x 5 (odd: the cached half is crossed), random() once
more, a shuffle of range(50), and choices over 27 weights three times (one weight zero).
"""
import json
import os
import random
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden",
                   "python_random.json")
SEEDS = [0, 42, 2**32 - 1, 2**32, 2**64 + 5, -7, -(2**40)]
WEIGHTS = [((i * 37) % 11) / 7.0 for i in range(27)]  # i = 0 gives weight 0


def bits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def draws(seed):
    r = random.Random(seed)
    out = {"seed": str(seed)}
    out["words"] = [r.getrandbits(32) for _ in range(8)]
    v = [r.random() for _ in range(5)]
    out["random"] = {"bits": [bits(x) for x in v], "repr": [repr(x) for x in v]}
    out["getrandbits"] = [[k, str(r.getrandbits(k))] for k in (1, 7, 33, 64)]
    out["randbelow"] = [[n, str(r._randbelow(n))] for n in (1, 5, 27, 1000, 2**33 + 1)]
    g = [r.gauss(0, 0.08) for _ in range(5)]
    out["gauss"] = {"bits": [bits(x) for x in g], "repr": [repr(x) for x in g]}
    x = r.random()
    out["random_after_gauss"] = bits(x)
    items = list(range(50))
    r.shuffle(items)
    out["shuffle50"] = items
    out["choices"] = [r.choices(range(len(WEIGHTS)), weights=WEIGHTS)[0] for _ in range(3)]
    return out


def main():
    doc = {
        "made_by": "tools/make_python_random_goldens.py",
        "python": sys.version.split()[0],
        "weights": WEIGHTS,
        "seeds": [draws(s) for s in SEEDS],
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
