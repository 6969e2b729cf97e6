#!/usr/bin/python3
"""Writes tests/golden/torch_sum.json: rows of float32 and what Debian's torch 1.13 gives as
their sum over the last dimension (x.view(1, n).sum(dim=-1)), as bit patterns, for rows whose
sum depends on the order of additions (partial sums that overflow to inf or cancel), signed
zeros, infinities and NaN, at lengths around the 8-lane vectors, the 4 interleaved sums and the
cascade's chunk sizes. tests/torch_sum_test.cpp checks core's TorchRowSum against them.
Run with Debian's python3 (python3-torch): /usr/bin/python3 tools/make_sum_goldens.py"""
import json
import os
import struct

import torch


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def main():
    g = torch.Generator().manual_seed(20261123)
    big = [3e38, -3e38, 2e38, -2e38, 1.5e38, -1.5e38, 1e38, -1e38]
    rows = []
    lengths = list(range(1, 41)) + [63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513,
                                    1000, 1024, 1031, 2048, 4100]
    for n in lengths:
        for kind in range(3):
            if kind == 0:  # huge values of both signs: partial sums overflow or cancel
                idx = torch.randint(0, len(big), (n,), generator=g)
                x = torch.tensor([big[i] for i in idx.tolist()], dtype=torch.float32)
            elif kind == 1:  # ordinary values, where only the rounding depends on the order
                x = torch.randn(n, generator=g) * 1000
            else:  # huge values among zeros and ordinary ones, a -0 and an inf now and then
                x = torch.randn(n, generator=g)
                pick = torch.rand(n, generator=g)
                for j in range(n):
                    if pick[j] < 0.3:
                        x[j] = big[j % len(big)]
                    elif pick[j] < 0.35:
                        x[j] = -0.0
                    elif pick[j] < 0.37:
                        x[j] = float("inf") if j % 2 else float("-inf")
            total = x.view(1, n).sum(dim=-1)[0].item()
            rows.append({"x": [bits(v) for v in x.tolist()], "sum": bits(total)})
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "torch_sum.json")
    with open(out, "w") as f:
        json.dump({"torch": torch.__version__, "rows": rows}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
