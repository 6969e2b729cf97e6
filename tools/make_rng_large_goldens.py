#!/usr/bin/python3
"""Large randn draws of Debian's PyTorch, for tests/rng_test.cpp (LargeDrawsMatchPyTorch).

A draw of a million values is too large to keep whole: the golden keeps every value's bit
pattern folded into a 64-bit FNV-1a hash, plus 64 values at spread positions (to say where a
mismatch starts). Sizes cross the engine's threshold for transforming blocks on every thread
(65536 values) and end with and without a tail (n % 16).

Run: /usr/bin/python3 tools/make_rng_large_goldens.py > tests/golden/rng_large.json
"""
import json

import numpy as np
import torch


def fnv1a64(words):
    h = 0xCBF29CE484222325
    for w in words:
        h ^= int(w)
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    cases = []
    for seed, n in [(0, 65536), (1, 65536 * 3 + 5), (123, 1 << 20), (2024, (1 << 20) + 13)]:
        torch.manual_seed(seed)
        x = torch.randn(n).numpy()
        bits = x.view(np.uint32)
        positions = [int(i) for i in np.linspace(0, n - 1, 64).round()]
        cases.append({
            "seed": seed,
            "n": n,
            "fnv1a64": str(fnv1a64(bits)),
            "positions": positions,
            "bits": [int(bits[i]) for i in positions],
        })
    print(json.dumps({"torch": torch.__version__, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
