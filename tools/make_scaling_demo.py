#!/usr/bin/python3
"""Writes assets/presets/scaling-demo.json from real PyTorch (run with Debian's /usr/bin/python3).

The notebook self-attention-from-scratch ("V4" and the variance cell) draws, after
torch.manual_seed(74): x = randn(4, 8, 2), three nn.Linear(2, 16, bias=False), then
k = randn(4, 8, 16) and q = randn(4, 8, 16), and prints softmax(q @ k^T)[0][0] unscaled:
[0.0000, 0.8555, 0.1444, 0.0000, ...], "almost one-hot". A scenario cannot draw q and k
directly, so the preset stores X = [q | k] (4 x 8 x 32, exactly the notebook's float32 values)
and selects them with W_query = [I; 0] and W_key = W_value = [0; I] (32 x 16): Q = q, K = k
exactly, and scores = q @ k^T as in the notebook.

usage: tools/make_scaling_demo.py [OUT.json]
"""
import json
import sys

import numpy as np
import torch
from torch import nn


def f32(x):
    """Shortest decimal text that reads back as the same float32."""
    return float(str(np.float32(x)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "assets/presets/scaling-demo.json"
    torch.manual_seed(74)
    B, T, C, head_size = 4, 8, 2, 16
    torch.randn(B, T, C)
    for _ in range(3):
        nn.Linear(C, head_size, bias=False)
    k = torch.randn(B, T, head_size)
    q = torch.randn(B, T, head_size)
    X = torch.cat([q, k], dim=-1)
    eye, zero = np.eye(head_size), np.zeros((head_size, head_size))
    w_q = np.vstack([eye, zero]).tolist()
    w_k = np.vstack([zero, eye]).tolist()
    scn = {
        "format": "attention-lab/scenario@1",
        "title": "Scaling demo: head size 16 without 1/sqrt(d_k), softmax turns almost one-hot "
                 "(self-attention-from-scratch, seed 74)",
        "input": {"source": "matrix",
                  "values": [[[f32(v) for v in row] for row in batch] for batch in X.tolist()]},
        "projections": {"init": "matrix", "d_out": head_size, "seed": None,
                        "order": ["query", "key", "value"],
                        "W_query": w_q, "W_key": w_k, "W_value": w_k},
        "scaling": {"sqrt_dk": False, "multiplier": 1.0},
        "mask": {"kind": "none"},
        "normalization": "softmax",
        "dropout": {"p": 0.0, "seed": None},
    }
    text = json.dumps(scn, indent=1)
    # Keep each matrix row on one line so the file stays readable.
    import re
    text = re.sub(r"\[\s+([-0-9.e, \s]+?)\s+\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", text)
    with open(out, "w") as f:
        f.write(text + "\n")
    wei = q @ k.transpose(-2, -1)
    print("wrote", out, "| wei.var() =", float(wei.var()), "| softmax(wei)[0][0] =",
          torch.softmax(wei, dim=-1)[0][0].tolist())


if __name__ == "__main__":
    main()
