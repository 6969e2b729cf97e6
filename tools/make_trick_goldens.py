#!/usr/bin/python3
"""Writes tests/golden/trick.json: the "mathematical trick" of karpathy-mathematical-trick run
by real PyTorch (Debian's python3-torch 1.13) with the notebook's own cells, per batch entry,
for the inputs of the presets karpathy-trick (randn 4x8x2) and karpathy-head (randn 4x8x32).

Run with Debian's interpreter:   /usr/bin/python3 tools/make_trick_goldens.py
The tests read the committed golden and never need torch.

For each preset: "C", and per batch b: xbow, xbow2, xbow3 (T x C, float32 values), and
torch.allclose(xbow[b], xbow2[b]) / (xbow[b], xbow3[b]) with the largest |difference|.
"""
import json
import os

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "golden", "trick.json")


def trick(C):
    torch.manual_seed(1337)
    B, T = 4, 8
    x = torch.randn(B, T, C)
    # version 1
    xbow = torch.zeros((B, T, C))
    for b in range(B):
        for t in range(T):
            xprev = x[b, :t + 1]
            xbow[b, t] = torch.mean(xprev, dim=0)
    # version 2
    wei = torch.tril(torch.ones((T, T)))
    wei = wei / wei.sum(dim=1, keepdim=True)
    xbow2 = wei @ x
    # version 3
    tril = torch.tril(torch.ones((T, T)))
    wei = torch.zeros((T, T))
    wei = wei.masked_fill(tril == 0, float('-inf'))
    wei = F.softmax(wei, dim=-1)
    xbow3 = wei @ x
    batches = []
    for b in range(B):
        batches.append({
            "xbow": xbow[b].tolist(), "xbow2": xbow2[b].tolist(), "xbow3": xbow3[b].tolist(),
            "allclose2": torch.allclose(xbow[b], xbow2[b]),
            "allclose3": torch.allclose(xbow[b], xbow3[b]),
            "max_diff2": (xbow[b] - xbow2[b]).abs().max().item(),
            "max_diff3": (xbow[b] - xbow3[b]).abs().max().item(),
        })
    return {"C": C, "allclose_all": torch.allclose(xbow, xbow2), "batches": batches}


def main():
    doc = {"torch": torch.__version__,
           "karpathy-trick": trick(2), "karpathy-head": trick(32)}
    with open(OUT, "w") as f:
        json.dump(doc, f)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
