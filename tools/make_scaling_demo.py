#!/usr/bin/python3
"""Writes assets/presets/scaling-demo.json and scaling-demo-scaled.json from real PyTorch (run
with Debian's /usr/bin/python3).

The notebook self-attention-from-scratch (the variance cell) draws, after torch.manual_seed(74):
x = randn(4, 8, 2), three nn.Linear(2, 16, bias=False), then k = randn(4, 8, 16) and
q = randn(4, 8, 16) (k first), and compares wei = q @ k^T, whose softmax is "almost one-hot"
([0.0000, 0.8555, 0.1444, 0.0000, ...] in row 0), with wei2 = q2 @ k2^T * head_size**-0.5
for the next draws k2 = randn(4, 8, 16), q2 = randn(4, 8, 16) ([0.2348, 0.0406, ...]).
Both presets give the notebook's vectors directly as input.source "qkv" (exactly its float32
values): scaling-demo Q = q, K = k, V = k unscaled, as the preset always did; scaling-demo-scaled
Q = q2, K = k2, V = k2 divided by sqrt(16). The draws from x and the layers are the notebook's
own and only move the generator on.

usage: tools/make_scaling_demo.py [OUT_DIR]
"""
import json
import os
import re
import sys

import numpy as np
import torch
from torch import nn


def f32(x):
    """Shortest decimal text that reads back as the same float32."""
    return float(str(np.float32(x)))


def stack(t):
    return [[[f32(v) for v in row] for row in batch] for batch in t.tolist()]


def scenario(title, q, k, scaled):
    return {
        "format": "attention-lab/scenario@1",
        "title": title,
        "input": {"source": "qkv", "Q": stack(q), "K": stack(k), "V": stack(k)},
        "scaling": {"sqrt_dk": scaled, "multiplier": 1.0},
        "mask": {"kind": "none"},
        "normalization": "softmax",
        "dropout": {"p": 0.0, "seed": None},
    }


def write(path, scn):
    text = json.dumps(scn, indent=1)
    # Keep each matrix row on one line so the file stays readable.
    text = re.sub(r"\[\s+([-0-9.e, \s]+?)\s+\]",
                  lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    with open(path, "w") as f:
        f.write(text + "\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "assets/presets"
    torch.manual_seed(74)
    B, T, C, head_size = 4, 8, 2, 16
    torch.randn(B, T, C)
    for _ in range(3):
        nn.Linear(C, head_size, bias=False)
    k = torch.randn(B, T, head_size)
    q = torch.randn(B, T, head_size)
    k2 = torch.randn(B, T, head_size)
    q2 = torch.randn(B, T, head_size)
    write(os.path.join(out, "scaling-demo.json"),
          scenario("Scaling demo: head size 16 without 1/sqrt(d_k), softmax turns almost one-hot "
                   "(self-attention-from-scratch, seed 74: the notebook's q and k as Q and K, "
                   "V = k)", q, k, False))
    write(os.path.join(out, "scaling-demo-scaled.json"),
          scenario("Scaling demo, scaled: q2 and k2 with head_size**-0.5, softmax stays diffuse "
                   "(self-attention-from-scratch's wei2, the next draws after q and k; V = k2; "
                   "compare with scaling-demo)", q2, k2, True))
    wei = q @ k.transpose(-2, -1)
    wei2 = q2 @ k2.transpose(-2, -1) * head_size ** -0.5
    print("wrote", out, "| wei.var() =", float(wei.var()), "| wei2.var() =", float(wei2.var()),
          "| softmax(wei)[0][0] =", torch.softmax(wei, dim=-1)[0][0].tolist())


if __name__ == "__main__":
    main()
