#!/usr/bin/python3
"""Writes the golden files of tests/golden/ with real PyTorch (Debian's python3-torch).

Run with Debian's interpreter, which has torch:   /usr/bin/python3 tools/make_goldens.py
The tests read the committed goldens and never need torch.

  tests/golden/rng.json         generator calls: seed, a sequence of calls, and every value
                                they return (float32 as uint32 bit patterns: compared exactly)
  tests/golden/rng_generic.json the same calls (three seeds) with PyTorch's generic CPU kernels
                                (ATEN_CPU_CAPABILITY=default), as on a CPU without AVX2
  tests/golden/variance.json    the variance experiment as torch computes it
  tests/golden/scenarios/*.json one scenario each ({"scenario": ..., "expected": ...}), the
                                expected stages computed by the PyTorch oracle of the scenario
                                format, tools/torch_oracle.py
  tests/golden/f64/oracle-*.json the float64 variants of the scenarios of issue 26's settings
                                (FLOAT64_VARIANTS: the same scenarios with "dtype": "float64"),
                                by the same oracle in torch.float64, with the variances the
                                float64 test reads (the other f64 goldens: make_qkv_goldens.py)

usage: tools/make_goldens.py [--out tests/golden]
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

import torch_oracle  # tools/torch_oracle.py, next to this file

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def bits(t):
    a = t.detach().contiguous().numpy()
    if a.dtype == np.float32:
        return a.view(np.uint32).ravel().tolist()
    return a.ravel().tolist()


# --------------------------------------------------------------------------------------------
# Generator calls. Each case: a seed, then a list of calls made in order on the same generator
# (so the randn cache and the word stream carry over between them, as in a notebook).
# --------------------------------------------------------------------------------------------
def run_call(c):
    op = c["op"]
    if op == "rand":
        return bits(torch.rand(c["n"]))
    if op == "uniform":
        return bits(torch.empty(c["n"]).uniform_(c["low"], c["high"]))
    if op == "randn":
        return bits(torch.randn(c["n"]))
    if op == "normal":
        return bits(torch.empty(c["n"]).normal_(c["mean"], c["std"]))
    if op == "randint":
        return bits(torch.randint(c["low"], c["high"], (c["n"],)))
    if op == "bernoulli":
        return bits(torch.empty(c["n"]).bernoulli_(c["p"]))
    if op == "linear":
        lin = torch.nn.Linear(c["in"], c["out"], bias=c["bias"])
        out = bits(lin.weight)
        if c["bias"]:
            out += bits(lin.bias)
        return out
    if op == "embedding":
        return bits(torch.nn.Embedding(c["num"], c["dim"]).weight)
    if op == "dropout":  # dropout of torch.rand(n) drawn just before, in training mode
        x = torch.rand(c["n"])
        d = torch.nn.Dropout(c["p"])
        d.train()
        return bits(d(x))
    raise ValueError(op)


def rng_cases(seeds=(0, 1, 42, 123, 1337, 2**32 + 7)):
    cases = []
    for s in seeds:
        for n in range(1, 41):
            cases.append({"seed": s, "calls": [{"op": "rand", "n": n}]})
            cases.append({"seed": s, "calls": [{"op": "randn", "n": n}]})
        cases.append({"seed": s, "calls": [{"op": "randn", "n": k} for k in (3, 1, 2, 17, 1, 5, 33)]})
        cases.append({"seed": s, "calls": [{"op": "normal", "n": n, "mean": m, "std": sd}
                                           for n in (6, 21, 48) for (m, sd) in ((0.5, 0.02), (-1.0, 3.0))]})
        cases.append({"seed": s, "calls": [{"op": "uniform", "n": 30, "low": -0.7, "high": 0.3}]})
        for (i, o, b) in ((3, 2, False), (3, 2, True), (5, 7, True), (32, 16, False), (768, 64, True)):
            cases.append({"seed": s, "calls": [{"op": "linear", "in": i, "out": o, "bias": b}]})
        cases.append({"seed": s, "calls": [{"op": "linear", "in": 3, "out": 2, "bias": False}] * 3})
        for (v, d) in ((9, 3), (7, 3), (4, 3), (50, 16)):
            cases.append({"seed": s, "calls": [{"op": "embedding", "num": v, "dim": d}]})
        for p in (0.5, 0.1, 0.2):
            cases.append({"seed": s, "calls": [{"op": "dropout", "n": 36, "p": p}]})
        cases.append({"seed": s, "calls": [{"op": "bernoulli", "n": 20, "p": 0.3}]})
        cases.append({"seed": s, "calls": [{"op": "randint", "low": 0, "high": 10, "n": 6},
                                           {"op": "randint", "low": -5, "high": 2**40, "n": 7}]})
    cases.append({"seed": -1, "calls": [{"op": "rand", "n": 4}]})
    for c in cases:
        torch.manual_seed(c["seed"])
        c["expected"] = [run_call(call) for call in c["calls"]]
    return cases


# --------------------------------------------------------------------------------------------
# The variance experiment, as experiments.h defines it.
# --------------------------------------------------------------------------------------------
def variance_cases():
    out = []
    for (dims, trials, seed) in (([5, 100], 1000, 0), ([1, 2, 16, 64], 500, 123)):
        rows = []
        for d in dims:
            torch.manual_seed(seed)
            q = torch.randn(trials, d)
            k = torch.randn(trials, d)
            dots = (q * k).sum(-1).double()
            rows.append({"d": d, "var_unscaled": dots.var(unbiased=False).item(),
                         "var_scaled": (dots / math.sqrt(d)).var(unbiased=False).item()})
        out.append({"dims": dims, "trials": trials, "seed": seed, "expected": rows})
    return out


# --------------------------------------------------------------------------------------------
# Scenarios: the presets plus a spread of every init, mask, normalization, heads, batch and
# dropout setting.
# --------------------------------------------------------------------------------------------
F = "attention-lab/scenario@1"
JOURNEY = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
           [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]


def spread():
    s = {}
    s["simplified-identity"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "identity"}, "scaling": {"sqrt_dk": False}}
    s["batch2-randn-heads2-causal-naive"] = {
        "format": F,
        "input": {"source": "matrix", "values": [JOURNEY[:4], [[r[2], r[0], r[1]] for r in JOURNEY[2:]]]},
        "projections": {"init": "randn", "d_out": 4, "seed": 7, "heads": 2},
        "mask": {"kind": "causal"}, "normalization": "softmax_naive"}
    s["text-words-linear-bias-outproj-custom"] = {
        "format": F,
        "input": {"source": "text", "text": "Your journey starts with one step, doesn't it?",
                  "tokenizer": "words", "d_in": 6, "seed": 3},
        "projections": {"init": "linear", "d_out": 4, "seed": 3, "bias": True, "out_proj": True,
                        "heads": 2},
        "mask": {"kind": "custom", "allowed": [[1 if (i + j) % 3 != 1 or i == j else 0
                                                for j in range(12)] for i in range(12)]}}
    s["text-chars-randn-sum-mult"] = {
        "format": F,
        "input": {"source": "text", "text": "hello, attention", "tokenizer": "chars", "d_in": 3,
                  "seed": 11},
        "projections": {"init": "randn", "d_out": 3, "seed": None},
        "scaling": {"sqrt_dk": False, "multiplier": 3.5}, "normalization": "sum"}
    s["randn-batch2-linear-dropout-causal"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 4, "seed": 5},
        "projections": {"init": "linear", "d_out": 4, "seed": None},
        "mask": {"kind": "causal"}, "dropout": {"p": 0.5, "seed": 123}}
    s["randn-t20-heads4-dropout-continue"] = {
        "format": F, "input": {"source": "randn", "length": 20, "d_in": 16, "seed": 2024},
        "projections": {"init": "linear", "d_out": 16, "seed": 99, "heads": 4},
        "scaling": {"multiplier": 0.25}, "dropout": {"p": 0.1, "seed": None}}
    s["naive-overflow"] = {
        "format": F, "input": {"source": "matrix", "values": [[30.0, -2.0], [25.0, 40.0], [-30.0, 12.0]]},
        "projections": {"init": "identity"}, "scaling": {"sqrt_dk": True, "multiplier": 100.0},
        "normalization": "softmax_naive"}
    s["stable-softmax-large"] = dict(s["naive-overflow"], normalization="softmax")
    s["order-value-query-key"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "torch_rand", "d_out": 2, "seed": 123,
                        "order": ["value", "query", "key"]}}
    s["custom-mask-empty-row"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY[:3]},
        "projections": {"init": "torch_rand", "d_out": 2, "seed": 1},
        "mask": {"kind": "custom", "allowed": [[1, 0, 1], [0, 0, 0], [1, 1, 1]]}}
    s["mean-custom"] = {
        "format": F, "input": {"source": "randn", "length": 4, "d_in": 2, "seed": 42},
        "projections": {"init": "identity"}, "normalization": "mean",
        "mask": {"kind": "custom", "allowed": [[1, 1, 0, 0], [0, 1, 0, 1], [1, 1, 1, 1], [0, 0, 0, 1]]}}
    s["text-specials-negative-seed"] = {
        "format": F,
        "input": {"source": "text", "text": "the cat sat on the mat", "tokenizer": "words_and_spaces",
                  "d_in": 4, "seed": -1, "special_tokens": ["<pad>"]},
        "projections": {"init": "torch_rand", "d_out": 3, "seed": -5}}
    s["matrix-W"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY, "tokens": list("abcdef")},
        "projections": {"init": "matrix", "d_out": 2,
                        "W_query": [[0.5, -1.0], [0.25, 0.0], [1.0, 2.0]],
                        "W_key": [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]],
                        "W_value": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]},
        "mask": {"kind": "causal"}}
    s["randn-t40-randnW"] = {
        "format": F, "input": {"source": "randn", "length": 40, "d_in": 8, "seed": 8},
        "projections": {"init": "randn", "d_out": 8, "seed": None}, "mask": {"kind": "causal"}}
    s["linear-bias-outproj-dropout"] = {
        "format": F, "input": {"source": "randn", "batch": 3, "length": 6, "d_in": 5, "seed": 0},
        "projections": {"init": "linear", "d_out": 6, "seed": 12, "bias": True, "out_proj": True,
                        "heads": 3},
        "dropout": {"p": 0.2, "seed": 9}}
    s["karpathy-head-scaled-dropout"] = {
        "format": F, "input": {"source": "randn", "batch": 4, "length": 8, "d_in": 32, "seed": 1337},
        "projections": {"init": "linear", "d_out": 16, "order": ["key", "query", "value"]},
        "mask": {"kind": "causal"}, "dropout": {"p": 0.3, "seed": None}}
    s["mean-none"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "torch_rand", "d_out": 2, "seed": 123}, "normalization": "mean"}
    s["sum-causal-heads2"] = {
        "format": F, "input": {"source": "randn", "length": 7, "d_in": 4, "seed": 31},
        "projections": {"init": "torch_rand", "d_out": 4, "seed": 4, "heads": 2},
        "mask": {"kind": "causal"}, "normalization": "sum"}
    # Softmax, then the mask, then each row over its new sum (Raschka 3.5.1's first way), on
    # a batch of two with two heads, a causal mask and dropout; and with a custom mask.
    s["then-mask-causal-heads2-batch2-dropout"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 6, "d_in": 4, "seed": 11},
        "projections": {"init": "torch_rand", "d_out": 4, "seed": 5, "heads": 2},
        "scaling": {"multiplier": 2.5}, "mask": {"kind": "causal"},
        "normalization": "softmax_then_mask", "dropout": {"p": 0.25, "seed": 9}}
    s["then-mask-window-heads2"] = {
        "format": F, "input": {"source": "randn", "length": 6, "d_in": 4, "seed": 12},
        "projections": {"init": "randn", "d_out": 4, "seed": 6, "heads": 2},
        "mask": {"kind": "sliding_window", "window": 2}, "normalization": "softmax_then_mask"}
    s["then-mask-empty-row-zero"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY[:4]},
        "projections": {"init": "identity"},
        "mask": {"kind": "custom", "allowed": [[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 0],
                                               [0, 1, 1, 1]], "masked_rows": "zero"},
        "normalization": "softmax_then_mask"}
    s["then-mask-custom-linear"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "linear", "d_out": 3, "seed": 2, "bias": True},
        "mask": {"kind": "custom", "allowed": [[int(j <= i or j == 5) for j in range(6)]
                                                for i in range(6)]},
        "normalization": "softmax_then_mask"}
    # Nothing seeded before the first draw: the app starts from libtorch's default seed
    # (torch_oracle.DEFAULT_SEED) and the generated program pins it (issue 33's example first).
    s["unseeded-torch-rand"] = {
        "format": F, "input": {"source": "matrix", "values": [[1.0, 2.0], [3.0, 4.0]]},
        "projections": {"init": "torch_rand", "d_out": 2}}
    s["unseeded-linear-then-dropout"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "linear", "d_out": 4, "bias": True, "heads": 2},
        "dropout": {"p": 0.3}}
    s["unseeded-dropout"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "identity"}, "dropout": {"p": 0.4}}
    # Dropout multiplies by its mask (0 or 1 / (1 - p)): a dropped inf weight becomes nan.
    s["dropout-inf-weights"] = {
        "format": F, "input": {"source": "matrix",
                               "values": [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]},
        "projections": {"init": "identity"}, "scaling": {"sqrt_dk": False},
        "normalization": "sum", "dropout": {"p": 0.5, "seed": 3}}
    # One module per head (MultiHeadAttentionWrapper): each head draws its own W (and bias)
    # after the previous head's, and its own dropout mask; with randn, each head's draw is
    # below 16 numbers where the whole matrix would not be.
    s["per-head-linear-bias-outproj-dropout"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 4, "seed": 3},
        "projections": {"init": "linear", "d_out": 6, "seed": 21, "heads": 3, "bias": True,
                        "out_proj": True, "per_head": True, "order": ["key", "query", "value"]},
        "mask": {"kind": "causal"}, "dropout": {"p": 0.3, "seed": None}}
    s["per-head-randn-heads2"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "randn", "d_out": 8, "seed": 5, "heads": 2, "per_head": True}}
    s["per-head-torch-rand-unseeded"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "torch_rand", "d_out": 4, "heads": 2, "per_head": True},
        "dropout": {"p": 0.5, "seed": 1}}
    # Python's \s and str.strip() on str: no-break, em and ideographic spaces, NEL, the line
    # separator and the ASCII file separator \x1c are all whitespace to the tokenizers.
    uni = "Your\u00a0journey starts\u2003with one\u3000step,\u0085the\u2028next\x1cstep --\u00a0now"
    for tok in ("words", "words_and_spaces", "chars"):
        s["text-unicode-spaces-" + tok] = {
            "format": F,
            "input": {"source": "text", "text": uni, "tokenizer": tok, "d_in": 3, "seed": 123},
            "projections": {"init": "torch_rand", "d_out": 2, "seed": 123}}
    return s


# --------------------------------------------------------------------------------------------
# Non-finite rows: every normalization under every mask kind where a row's normaliser is 0,
# inf or nan, so PyTorch writes nan (or -0) into the masked cells too and the context turns nan.
# --------------------------------------------------------------------------------------------
def custom_mask(T):
    """Row 1 masked out entirely (0 / 0), the others causal plus the last key (a masked cell on
    both sides of an allowed one)."""
    return [[0 if i == 1 else int(j <= i or j == T - 1) for j in range(T)] for i in range(T)]


def nonfinite():
    s = {}
    masks = {"none": {"kind": "none"}, "causal": {"kind": "causal"}}

    def add(name, values, norm, scaling, projections=None):
        T = len(values)
        for kind in ("none", "causal", "custom"):
            mask = masks.get(kind) or {"kind": "custom", "allowed": custom_mask(T)}
            s[f"nonfinite-{name}-{kind}"] = {
                "format": F, "input": {"source": "matrix", "values": values},
                "projections": projections or {"init": "identity"}, "scaling": scaling,
                "mask": mask, "normalization": norm}

    # +inf and -inf scores from a huge multiplier (1e38), beside finite ones and 0.
    mixed = [[1.0, 2.0], [3.0, -1.0], [-2.0, 1.0], [0.5, 0.5]]
    for norm in ("softmax", "softmax_naive", "sum", "mean", "softmax_then_mask"):
        add("huge-mult-" + norm, mixed, norm, {"multiplier": 1e38})
    # exp overflow (sum inf), exp underflow (sum 0) and a zero row sum with "sum".
    add("naive-overflow", [[30.0, -2.0], [25.0, 40.0], [-30.0, 12.0]], "softmax_naive",
        {"multiplier": 100.0})
    add("naive-underflow", [[3.0, 1.0], [2.0, 2.0], [1.0, 3.0]], "softmax_naive",
        {"multiplier": -100.0})
    # softmax_then_mask: the allowed keys' shares underflow to 0 beside a masked key: 0 / 0.
    add("then-mask-underflow", [[3.0, 1.0], [2.0, 2.0], [1.0, 3.0], [-1.0, 4.0]],
        "softmax_then_mask", {"multiplier": 40.0})
    add("sum-zero-row", [[0.0, 0.0], [1.0, 1.0], [-1.0, 2.0], [2.0, -3.0]], "sum",
        {"multiplier": -1.0})
    # Scores overflow to +-inf in float32 and K.var() is inf (var_K above float32's max).
    add("big-values-mean", [[4e19, -3e19], [2e19, 1e19], [-1e19, 3e19]], "mean", {})
    # V holds inf: the masked weights (0) times inf are nan in PyTorch's full product.
    add("inf-value-softmax", [[1.0, 0.5], [3e38, 1.0], [0.5, -1.0]], "softmax", {},
        {"init": "matrix", "d_out": 2, "W_query": [[1.0, 0.0], [0.0, 1.0]],
         "W_key": [[1e-38, 0.0], [0.0, 1.0]], "W_value": [[2.0, 0.0], [0.0, 1.0]]})
    return s


# --------------------------------------------------------------------------------------------
# The mask composer (issue 26): sliding window, prefix-LM, packed documents, and / or, and the
# masked rows that give 0 (PyTorch >= 2.5's SDPA) instead of nan.
# --------------------------------------------------------------------------------------------
RANDN8 = {"source": "randn", "length": 8, "d_in": 4, "seed": 21}
HEADS2 = {"init": "randn", "d_out": 4, "seed": 22, "heads": 2}


def masks():
    s = {}
    randn8, heads2 = RANDN8, HEADS2
    s["mask-sliding-window-w3-heads2"] = {
        "format": F, "input": randn8, "projections": heads2,
        "mask": {"kind": "sliding_window", "window": 3}}
    s["mask-sliding-window-w1-sum"] = {
        "format": F, "input": randn8, "projections": heads2,
        "mask": {"kind": "sliding_window", "window": 1}, "normalization": "sum"}
    s["mask-sliding-window-wide-mean"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "torch_rand", "d_out": 2, "seed": 123},
        "mask": {"kind": "sliding_window", "window": 9}, "normalization": "mean"}
    s["mask-prefix-lm-p3-batch2"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 7, "d_in": 4, "seed": 8},
        "projections": {"init": "linear", "d_out": 4, "seed": 9, "heads": 2},
        "mask": {"kind": "prefix_lm", "prefix": 3}, "dropout": {"p": 0.25, "seed": 4}}
    s["mask-document-naive"] = {
        "format": F, "input": randn8, "projections": heads2,
        "mask": {"kind": "document", "doc_ids": [0, 0, 0, 1, 1, 2, 2, 2]},
        "normalization": "softmax_naive"}
    s["mask-or-window-prefix"] = {
        "format": F, "input": randn8, "projections": heads2,
        "mask": {"kind": "or", "of": [{"kind": "sliding_window", "window": 2},
                                      {"kind": "prefix_lm", "prefix": 2}]}}
    s["mask-and-document-window"] = {
        "format": F, "input": randn8, "projections": heads2,
        "mask": {"kind": "and", "of": [{"kind": "document", "doc_ids": [5, 5, 5, 5, 9, 9, 9, 9]},
                                       {"kind": "sliding_window", "window": 2}]}}
    # An empty row (query 1 sees nothing): nan by default, 0 with masked_rows "zero".
    empty_row = {"kind": "and", "of": [
        {"kind": "causal"},
        {"kind": "custom", "allowed": [[0 if i == 1 else 1 for j in range(8)] for i in range(8)]}]}
    for rows in ("nan", "zero"):
        for norm in ("softmax", "sum"):
            mask = dict(empty_row)
            if rows == "zero":
                mask["masked_rows"] = "zero"
            s[f"mask-empty-row-{rows}-{norm}"] = {
                "format": F, "input": randn8, "projections": heads2, "mask": mask,
                "normalization": norm}
    s["mask-custom-empty-row-zero-dropout"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "torch_rand", "d_out": 2, "seed": 123},
        "mask": {"kind": "custom", "allowed": custom_mask(6), "masked_rows": "zero"},
        "dropout": {"p": 0.5, "seed": 1}}
    return s


# --------------------------------------------------------------------------------------------
# Grouped K/V heads (issue 26): projections.kv_heads, as LLMs-from-scratch's GroupedQueryAttention
# (W_key and W_value nn.Linear(d_in, kv_heads * head_dim), drawn key, value, query as its
# __init__ makes them; K and V repeat_interleave'd for each group of query heads).
# --------------------------------------------------------------------------------------------
def grouped_kv():
    s = {}
    randn6 = {"source": "randn", "length": 6, "d_in": 8, "seed": 31}
    s["gqa-linear-h4-kv2-causal"] = {
        "format": F, "input": randn6,
        "projections": {"init": "linear", "d_out": 8, "seed": 32, "heads": 4, "kv_heads": 2,
                        "order": ["key", "value", "query"]},
        "mask": {"kind": "causal"}}
    s["gqa-mqa-randn-h4-kv1-batch2-dropout"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 4, "seed": 33},
        "projections": {"init": "randn", "d_out": 8, "seed": 34, "heads": 4, "kv_heads": 1},
        "mask": {"kind": "causal"}, "dropout": {"p": 0.25, "seed": 35}}
    s["gqa-torch-rand-h6-kv3-window-multiplier"] = {
        "format": F, "input": randn6,
        "projections": {"init": "torch_rand", "d_out": 12, "seed": 36, "heads": 6,
                        "kv_heads": 3},
        "scaling": {"multiplier": 0.5}, "mask": {"kind": "sliding_window", "window": 3}}
    s["gqa-linear-bias-outproj-h4-kv2"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "linear", "d_out": 4, "seed": 37, "heads": 4, "kv_heads": 2,
                        "bias": True, "out_proj": True}}
    s["gqa-matrix-h2-kv1"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "matrix", "d_out": 4, "heads": 2, "kv_heads": 1,
                        "W_query": [[0.5, -0.25, 0.75, 1.0], [0.125, 0.5, -0.5, 0.25],
                                    [1.0, 0.0, 0.25, -0.75]],
                        "W_key": [[0.25, -1.0], [0.5, 0.75], [-0.5, 0.125]],
                        "W_value": [[1.0, 0.5], [-0.25, 0.25], [0.75, -0.5]]},
        "mask": {"kind": "causal"}, "normalization": "softmax_naive"}
    return s


def head_splits():
    """projections.head_split "view_no_transpose" (bug-view-no-transpose) beyond its preset:
    with grouped K/V heads, RoPE, a bias and out_proj over a batch of 2; and with T = 5 not a
    multiple of the heads, a sliding window and dropout."""
    s = {}
    s["view-no-transpose-gqa-rope-bias-outproj-batch2"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 6, "d_in": 8, "seed": 41},
        "projections": {"init": "linear", "d_out": 8, "seed": 42, "heads": 4, "kv_heads": 2,
                        "bias": True, "out_proj": True, "head_split": "view_no_transpose"},
        "positions": {"kind": "rope"}, "mask": {"kind": "causal"}}
    s["view-no-transpose-t5-window3-dropout"] = {
        "format": F, "input": {"source": "randn", "length": 5, "d_in": 4, "seed": 43},
        "projections": {"init": "randn", "d_out": 4, "seed": 44, "heads": 2,
                        "head_split": "view_no_transpose"},
        "mask": {"kind": "sliding_window", "window": 3}, "dropout": {"p": 0.2, "seed": 45}}
    return s


# --------------------------------------------------------------------------------------------
# The score modifiers of issue 26: Gemma 2's soft-capping and gpt-oss's attention sink.
# --------------------------------------------------------------------------------------------
def score_modifiers():
    s = {}
    randn8, heads2 = RANDN8, HEADS2
    # Logits well beyond the cap (multiplier 3): tanh flattens the large ones.
    s["softcap-c2-causal-heads2"] = {
        "format": F, "input": randn8, "projections": heads2,
        "scaling": {"multiplier": 3.0, "softcap": 2.0}, "mask": {"kind": "causal"}}
    s["softcap-sum-none"] = {
        "format": F, "input": {"source": "matrix", "values": JOURNEY},
        "projections": {"init": "torch_rand", "d_out": 2, "seed": 123},
        "scaling": {"softcap": 0.5, "sqrt_dk": False}, "normalization": "sum"}
    s["sink-scalar-causal-heads2"] = {
        "format": F, "input": randn8, "projections": heads2,
        "scaling": {"sink": 0.5}, "mask": {"kind": "causal"}}
    # One sink per head, and a row with every key masked: 0 weights (the sink takes it all).
    empty_row = {"kind": "and", "of": [
        {"kind": "causal"},
        {"kind": "custom", "allowed": [[0 if i == 1 else 1 for j in range(8)] for i in range(8)]}]}
    s["sink-per-head-empty-row"] = {
        "format": F, "input": randn8, "projections": heads2,
        "scaling": {"sink": [-1.0, 2.5]}, "mask": empty_row}
    # torchtitan's sigmoid form (scaling.sink_form) where every row sees a key: the concat
    # form's numbers up to rounding (bug-sink-sigmoid's preset has the row that sees none).
    s["sink-sigmoid-per-head-causal"] = {
        "format": F, "input": randn8, "projections": heads2,
        "scaling": {"sink": [0.5, -2.0], "sink_form": "sigmoid"}, "mask": {"kind": "causal"}}
    s["sink-batch2-dropout-none"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 4, "seed": 8},
        "projections": {"init": "linear", "d_out": 4, "seed": 9, "heads": 2},
        "scaling": {"sink": 1.0}, "dropout": {"p": 0.25, "seed": 4}}
    s["sink-softcap-window"] = {
        "format": F, "input": randn8, "projections": heads2,
        "scaling": {"multiplier": 2.0, "softcap": 1.5, "sink": [0.0, -0.5]},
        "mask": {"kind": "sliding_window", "window": 3, "masked_rows": "zero"}}
    # ALiBi: -slope_h * (i - j) on the logits, H a power of two and not (3 heads: the
    # reference code's interleaved slopes), with the cap after it.
    s["alibi-heads4-causal"] = {
        "format": F, "input": randn8, "projections": {"init": "randn", "d_out": 8, "seed": 22, "heads": 4},
        "mask": {"kind": "causal"}, "positions": {"kind": "alibi"}}
    s["alibi-heads3-none-softcap-sink"] = {
        "format": F, "input": {"source": "randn", "length": 6, "d_in": 6, "seed": 2},
        "projections": {"init": "linear", "d_out": 6, "seed": 3, "heads": 3},
        "scaling": {"softcap": 0.75, "sink": 0.0, "multiplier": 1.5}, "positions": {"kind": "alibi"}}
    s["alibi-one-head-batch2-naive"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 4, "seed": 8},
        "projections": {"init": "torch_rand", "d_out": 4, "seed": 9},
        "mask": {"kind": "causal"}, "positions": {"kind": "alibi"}, "normalization": "softmax_naive"}
    # ALiBi's settings of issue 61: attention-gym's slopes 2^(-8(h+1)/H) with 3 heads (not the
    # paper's), the symmetric -m|i - j| of bidirectional models without a mask (keys after the
    # query lose too), with the cap after it; slopes given as numbers, one negative.
    s["alibi-gym-heads3-symmetric-softcap"] = {
        "format": F, "input": {"source": "randn", "length": 6, "d_in": 6, "seed": 2},
        "projections": {"init": "linear", "d_out": 6, "seed": 3, "heads": 3},
        "scaling": {"softcap": 0.75, "multiplier": 1.5},
        "positions": {"kind": "alibi", "slopes": "attention_gym", "symmetric": True}}
    # out_proj without its bias (issue 61: nanoGPT, nanochat, LLMs-from-scratch's 04_gqa, Gemma's
    # o_proj): nn.Linear(d_out, d_out, bias=False) draws the weight only, so the dropout mask
    # drawn after it is not the one drawn after a bias.
    s["outproj-nobias-heads2-dropout"] = {
        "format": F, "input": {"source": "randn", "length": 5, "d_in": 4, "seed": 8},
        "projections": {"init": "linear", "d_out": 4, "seed": 9, "heads": 2, "bias": True,
                        "out_proj": {"bias": False}},
        "mask": {"kind": "causal"}, "dropout": {"p": 0.25}}
    s["alibi-given-slopes-heads2-window"] = {
        "format": F, "input": randn8, "projections": heads2,
        "mask": {"kind": "sliding_window", "window": 4},
        "positions": {"kind": "alibi", "slopes": [0.7, -0.1]}}
    return s


# RoPE (issue 26): both layouts and both signs, each written by the oracle as its reference
# implementation writes it (LLMs-from-scratch, nanochat, Meta's Llama).
def positions():
    s = {}
    randn9 = {"source": "randn", "length": 9, "d_in": 8, "seed": 31}
    s["rope-split-halves-heads2-causal"] = {
        "format": F, "input": randn9, "projections": {"init": "randn", "d_out": 8, "seed": 32, "heads": 2},
        "mask": {"kind": "causal"},
        "positions": {"kind": "rope", "layout": "split_halves", "theta": 10000, "sign": 1}}
    s["rope-split-halves-sign-neg-linear-bias"] = {
        "format": F, "input": randn9,
        "projections": {"init": "linear", "d_out": 8, "seed": 33, "bias": True, "out_proj": True},
        "mask": {"kind": "causal"},
        "positions": {"kind": "rope", "layout": "split_halves", "theta": 10000, "sign": -1}}
    s["rope-interleaved-batch2-theta500000"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 7, "d_in": 6, "seed": 34},
        "projections": {"init": "randn", "d_out": 12, "seed": 35, "heads": 3},
        "positions": {"kind": "rope", "layout": "interleaved", "theta": 500000, "sign": 1}}
    s["rope-interleaved-sign-neg-dropout"] = {
        "format": F, "input": randn9, "projections": {"init": "torch_rand", "d_out": 6, "seed": 36},
        "mask": {"kind": "sliding_window", "window": 4}, "dropout": {"p": 0.25, "seed": 5},
        "positions": {"kind": "rope", "layout": "interleaved", "theta": 100, "sign": -1}}
    s["rope-split-halves-t40"] = {
        "format": F, "input": {"source": "randn", "length": 40, "d_in": 6, "seed": 37},
        "projections": {"init": "randn", "d_out": 8, "seed": 38, "heads": 2},
        "mask": {"kind": "causal"}, "positions": {"kind": "rope"}}
    # The original Transformer's sinusoidal encoding added to X (an odd d_in: one sin more).
    s["sinusoidal-text-heads2"] = {
        "format": F, "input": {"source": "text", "text": "the cat sat on the mat", "d_in": 6, "seed": 3},
        "projections": {"init": "linear", "d_out": 4, "seed": 4, "heads": 2},
        "mask": {"kind": "causal"}, "positions": {"kind": "sinusoidal"}}
    s["sinusoidal-randn-odd-d-in-batch2"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 12, "d_in": 5, "seed": 39},
        "projections": {"init": "randn", "d_out": 4, "seed": 40},
        "positions": {"kind": "sinusoidal"}}
    # RoPE with grouped K/V heads: K's 2 heads turned before each is shared by 2 query heads
    # (LLMs-from-scratch's GroupedQueryAttention applies apply_rope to its kv groups).
    s["rope-gqa-h4-kv2-causal"] = {
        "format": F, "input": randn9,
        "projections": {"init": "linear", "d_out": 16, "seed": 41, "heads": 4, "kv_heads": 2},
        "mask": {"kind": "causal"}, "positions": {"kind": "rope"}}
    s["rope-interleaved-mqa-h2-kv1-batch2"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 6, "d_in": 4, "seed": 42},
        "projections": {"init": "randn", "d_out": 8, "seed": 43, "heads": 2, "kv_heads": 1},
        "positions": {"kind": "rope", "layout": "interleaved", "theta": 100, "sign": -1}}
    # QK-norm (issue 61): nanochat's weightless RMSNorm after the rotation (sign -1, times 1.2),
    # the same before it (the two orders agree to rounding: a rotation keeps a row's length),
    # and Gemma's weighted norm (eps 1e-6) before and after, which differ.
    nano = {"init": "linear", "d_out": 16, "seed": 44, "heads": 4, "kv_heads": 2,
            "out_proj": {"bias": False}}
    rope_neg = {"kind": "rope", "sign": -1}
    s["qk-norm-nanochat-after-rope-gqa"] = {
        "format": F, "input": randn9, "mask": {"kind": "causal"}, "positions": rope_neg,
        "projections": dict(nano, qk_norm={"order": "after_rope", "scale": 1.2})}
    s["qk-norm-weightless-before-rope-gqa"] = {
        "format": F, "input": randn9, "mask": {"kind": "causal"}, "positions": rope_neg,
        "projections": dict(nano, qk_norm={"order": "before_rope", "scale": 1.2})}
    weight = [1.5, 0.25, 1.0, 2.0]
    heads2 = {"init": "randn", "d_out": 8, "seed": 45, "heads": 2}
    for order in ("before_rope", "after_rope"):
        s["qk-norm-weight-%s-heads2" % order.replace("_", "-")] = {
            "format": F, "input": randn9, "mask": {"kind": "causal"}, "positions": {"kind": "rope"},
            "projections": dict(heads2, qk_norm={"eps": 1e-6, "weight": weight, "order": order})}
    s["qk-norm-no-rope-batch2"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 6, "seed": 46},
        "projections": {"init": "torch_rand", "d_out": 6, "seed": 47, "heads": 3,
                        "qk_norm": {"eps": 0.01, "scale": 0.5}}}
    # SDPA's scaling (issue 61): q and k each times sqrt(scale) before the product, as
    # PyTorch's math path of scaled_dot_product_attention; with RoPE and grouped heads, a
    # negative multiplier (q takes the sign), and the multiplier alone (sqrt_dk off).
    s["sdpa-scale-q-and-k-heads2-causal"] = {
        "format": F, "input": randn9, "mask": {"kind": "causal"},
        "projections": {"init": "linear", "d_out": 8, "seed": 48, "heads": 2, "bias": True},
        "scaling": {"scale_at": "q_and_k"}}
    s["sdpa-scale-q-and-k-rope-gqa-negative"] = {
        "format": F, "input": randn9, "positions": {"kind": "rope"},
        "projections": {"init": "randn", "d_out": 16, "seed": 49, "heads": 4, "kv_heads": 2},
        "scaling": {"scale_at": "q_and_k", "multiplier": -0.7}}
    s["sdpa-scale-q-and-k-no-sqrt-dk-batch2"] = {
        "format": F, "input": {"source": "randn", "batch": 2, "length": 5, "d_in": 6, "seed": 50},
        "projections": {"init": "torch_rand", "d_out": 5, "seed": 51},
        "mask": {"kind": "causal"}, "scaling": {"scale_at": "q_and_k", "sqrt_dk": False,
                                                 "multiplier": 0.3}}
    # One dimension per head: each score is one product, so PyTorch's and the engine's agree bit
    # for bit, and (q f)(k f) shows its roundings against q k s (pipeline_test).
    s["sdpa-scale-q-and-k-dk1-exact"] = {
        "format": F, "input": {"source": "matrix", "values": [
            [0.43, 0.15, -0.89], [0.55, 0.87, 0.66], [-0.57, 0.85, 0.64], [0.22, -0.58, 0.33],
            [0.77, 0.25, 0.1], [0.05, 0.8, -0.55]]},
        "projections": {"init": "identity", "heads": 3}, "mask": {"kind": "causal"},
        "scaling": {"scale_at": "q_and_k", "multiplier": 0.3}}
    return s


def bug_fixes(presets):
    """The fix of each bug-gallery preset as the core makes it (model/bugs.h BugFix), read from
    `attention-lab presets --bug-fixes` so that the fixes are spelled in one place: the
    program is $ATTENTION_LAB, else build/app/attention-lab (build it first)."""
    exe = os.environ.get("ATTENTION_LAB", os.path.join(ROOT, "build", "app", "attention-lab"))
    text = subprocess.run([exe, "presets", "--bug-fixes"], check=True, capture_output=True,
                          text=True).stdout
    out = {}
    for bug_id, fix in json.loads(text).items():
        if "preset-" + bug_id not in presets:
            raise SystemExit(f"{exe}: bug {bug_id} is not a shipped preset")
        out["preset-" + bug_id + "-fixed"] = fix
    return out


def low_precision(presets):
    """bfloat16 and float16 ("dtype"): course presets, causal ones, multi-head with out_proj,
    and float16's overflow (scores beyond 65504 are inf, their softmax rows nan)."""
    out = {}
    for name in ("raschka-journey", "raschka-3.5-causal", "raschka-3.6-mha", "karpathy-head"):
        for dtype in ("bfloat16", "float16"):
            scn = json.loads(json.dumps(presets["preset-" + name]))
            scn["dtype"] = dtype
            out["lowp-%s-%s" % (dtype, name)] = scn
    big = [[200.0, 150.0, 100.0], [120.0, 250.0, 90.0], [60.0, 40.0, 300.0], [1.0, 2.0, 3.0]]
    for dtype in ("bfloat16", "float16"):
        out["lowp-%s-large-scores" % dtype] = {
            "format": "attention-lab/scenario@1", "dtype": dtype,
            "input": {"source": "matrix", "values": big},
            "projections": {"init": "identity"}, "mask": {"kind": "causal"}}
    # mask.fill with a row that sees no key: -inf gives nan, a finite fill 1 / T, except -1e9
    # in float16, where it is -inf again; and the upcast softmax (scaling.softmax_dtype).
    empty_row = {"format": "attention-lab/scenario@1",
                 "input": {"source": "matrix",
                           "values": [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64]]},
                 "projections": {"init": "torch_rand", "d_out": 2, "seed": 1},
                 "mask": {"kind": "custom", "allowed": [[1, 0, 1], [0, 0, 0], [1, 1, 1]]}}
    # Issue 61 adds Gemma's -2.3819763e38 (gemma_pytorch's model.py), -1e4 in float32 and
    # finfo_min in bfloat16: each fill and dtype with the row that sees no key.
    for dtype, fill in (("float32", "-1e9"), ("float32", "finfo_min"), ("float16", "-1e9"),
                        ("float16", "-1e4"), ("float16", "finfo_min"), ("bfloat16", "-1e9"),
                        ("float32", "-2.3819763e38"), ("bfloat16", "-2.3819763e38"),
                        ("float16", "-2.3819763e38"), ("float32", "-1e4"),
                        ("bfloat16", "finfo_min")):
        scn = json.loads(json.dumps(empty_row))
        scn["dtype"], scn["mask"]["fill"] = dtype, fill
        out["lowp-%s-fill-%s-empty-row" % (dtype, fill.lstrip("-"))] = scn
    for dtype in ("bfloat16", "float16"):
        for name in ("raschka-3.5-causal", "karpathy-head"):
            scn = json.loads(json.dumps(presets["preset-" + name]))
            scn["dtype"] = dtype
            scn.setdefault("scaling", {})["softmax_dtype"] = "float32"
            out["lowp-%s-%s-softmax-float32" % (dtype, name)] = scn
    return out


# The settings of issue 26 in bfloat16 and float16 too: RoPE (both layouts, dropout, biases),
# ALiBi with soft-capping and a sink, soft-capping, per-head sinks with an empty row, the sink
# as torchtitan's sigmoid rescale.
LOW_PRECISION_VARIANTS = [
    "rope-interleaved-sign-neg-dropout", "rope-split-halves-sign-neg-linear-bias",
    "alibi-heads3-none-softcap-sink", "softcap-c2-causal-heads2", "sink-per-head-empty-row",
    "sink-sigmoid-per-head-causal", "alibi-gym-heads3-symmetric-softcap",
    "outproj-nobias-heads2-dropout", "qk-norm-nanochat-after-rope-gqa",
    "qk-norm-weight-before-rope-heads2", "sdpa-scale-q-and-k-heads2-causal",
]


def low_precision_variants(cases):
    """lowp-<dtype>-<name> for each name of LOW_PRECISION_VARIANTS: the float32 case's
    scenario (one source) with "dtype" bfloat16 or float16."""
    out = {}
    for name in LOW_PRECISION_VARIANTS:
        for dtype in ("bfloat16", "float16"):
            scn = json.loads(json.dumps(cases[name]))
            scn["dtype"] = dtype
            out["lowp-%s-%s" % (dtype, name)] = scn
    return out


def scenario_cases(only=None):
    cases = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "assets", "presets", "*.json"))):
        with open(path) as f:
            preset = json.load(f)
        # Q, K, V given or drawn directly, and NumPy's generator: tools/make_qkv_goldens.py
        # makes those goldens (tests/golden/qkv) with real NumPy and PyTorch.
        if preset["input"]["source"] == "qkv" or preset["input"].get("generator") == "numpy":
            continue
        cases["preset-" + os.path.basename(path)[:-5]] = preset
    cases.update(low_precision(cases))
    cases.update(bug_fixes(cases))
    cases.update(spread())
    cases.update(nonfinite())
    cases.update(masks())
    cases.update(grouped_kv())
    cases.update(head_splits())
    cases.update(score_modifiers())
    cases.update(positions())
    cases.update(low_precision_variants(cases))
    out = {}
    for name, scn in cases.items():
        if only and not name.startswith(only):
            continue
        out[name] = {"scenario": scn, "expected": torch_oracle.expected(json.loads(json.dumps(scn)))}
    return out


# The scenarios of issue 26's settings also checked in float64: RoPE (both layouts, a sliding
# window and dropout), ALiBi (with soft-capping and a sink), soft-capping, sinks (per head, an
# empty row, in a window), grouped K/V heads (with RoPE, a sliding window) and a sliding window.
FLOAT64_VARIANTS = [
    "rope-split-halves-heads2-causal", "rope-interleaved-sign-neg-dropout",
    "rope-split-halves-sign-neg-linear-bias", "alibi-heads4-causal",
    "alibi-heads3-none-softcap-sink", "softcap-c2-causal-heads2", "sink-per-head-empty-row",
    "sink-softcap-window", "gqa-linear-h4-kv2-causal", "gqa-torch-rand-h6-kv3-window-multiplier",
    "rope-gqa-h4-kv2-causal", "mask-sliding-window-w3-heads2",
    "alibi-gym-heads3-symmetric-softcap", "qk-norm-nanochat-after-rope-gqa",
    "sdpa-scale-q-and-k-heads2-causal",
]


def float64_cases(cases):
    """tests/golden/f64/oracle-<name>.json for each name of FLOAT64_VARIANTS: the float32
    case's scenario (one source) with "dtype": "float64", every stage by the oracle in float64,
    and "stats" (torch's Tensor.var() of Q, K, the scores, logits and weights) as the float64
    test reads them."""
    out = {}
    for name in FLOAT64_VARIANTS:
        scn = json.loads(json.dumps(cases[name]["scenario"]))
        scn["dtype"] = "float64"
        stages = torch_oracle.run(json.loads(json.dumps(scn)))
        ex = {key: torch_oracle.plain(value) for key, value in stages.items()}
        ex["stats"] = {key: torch_oracle.plain(stages[stage].var().item()) for key, stage in
                       (("var_q", "Q"), ("var_k", "K"), ("var_scores", "scores"),
                        ("var_logits", "logits"), ("var_weights", "weights"))}
        assert stages["weights"].dtype == torch.float64, name
        out["oracle-" + name] = {"scenario": scn, "expected": ex, "torch": torch.__version__}
    return out


def generic_rng_golden(out):
    """rng_generic.json: the generator calls of three seeds drawn by PyTorch's generic kernels
    (ATEN_CPU_CAPABILITY=default: no AVX2, no FMA), what a CPU without AVX2 gets. The capability
    is fixed when torch loads, so this runs in a second interpreter."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    subprocess.run([sys.executable, os.path.abspath(__file__), "--generic-rng-only", "--out", out],
                   env=env, check=True)


def write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "golden"))
    ap.add_argument("--generic-rng-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--only", metavar="PREFIX",
                    help="write only the scenario goldens whose names start with PREFIX (others kept)")
    a = ap.parse_args()
    torch.set_grad_enabled(False)
    if a.generic_rng_only:
        write(os.path.join(a.out, "rng_generic.json"),
              {"torch": torch.__version__, "capability": "default",
               "cases": rng_cases(seeds=(0, 123, 2**32 + 7))})
        return
    if a.only:
        for name, case in scenario_cases(a.only).items():
            case["torch"] = torch.__version__
            write(os.path.join(a.out, "scenarios", name + ".json"), case)
        return
    generic_rng_golden(a.out)
    write(os.path.join(a.out, "rng.json"), {"torch": torch.__version__, "cases": rng_cases()})
    write(os.path.join(a.out, "variance.json"), {"torch": torch.__version__, "cases": variance_cases()})
    cases = scenario_cases()  # before anything is removed: a failing case keeps the old set
    f64 = float64_cases(cases)
    for old in glob.glob(os.path.join(a.out, "scenarios", "*.json")) + \
            glob.glob(os.path.join(a.out, "f64", "oracle-*.json")):
        os.remove(old)
    for name, case in cases.items():
        case["torch"] = torch.__version__
        write(os.path.join(a.out, "scenarios", name + ".json"), case)
    for name, case in f64.items():
        write(os.path.join(a.out, "f64", name + ".json"), case)
    print("goldens written to", a.out, "with torch", torch.__version__)


if __name__ == "__main__":
    main()
