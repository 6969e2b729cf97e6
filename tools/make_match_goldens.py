#!/usr/bin/python3
"""Writes the goldens of `attention-lab match` and of NumPy's print(array):

  tests/golden/match/cases.json   [{"name", "preset", "text", "verdict", "stage", "cause"},
                                  and "d_out" where the preset's projections.d_out is changed]:
                                  "text" is what print() writes in real PyTorch 1.13 for one
                                  stage of Raschka's chapter 3 programs (the presets raschka-*),
                                  run as the book writes them ("verdict": "match") or with one
                                  known mistake ("verdict": "explained", "cause": its id in
                                  match.h KnownCauses()).
  tests/golden/print/numpy_str_cases.json  [{"name", "shape", "bits" (float64 bit patterns),
                                  "float32", "str"}]: str(ndarray), what print(array) writes
                                  with NumPy's default print options (numpy_print.h NumpyArrayStr).

Run with Debian's interpreter, which has torch:   /usr/bin/python3 tools/make_match_goldens.py
The tests read the committed goldens and never need torch.

The programs follow the book (rasbt/LLMs-from-scratch ch03.ipynb: SelfAttention_v1/v2,
CausalAttention, MultiHeadAttention) re-written here as one function with switches, each
switch a mistake of match.h's list.
"""
import json
import os
import struct

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(os.path.dirname(HERE), "tests", "golden")

INPUTS = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
          [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]


def attention(seed=789, d_out=2, init="linear", k_first=False, scale="sqrt", causal=False,
              softmax_dim=-1, mask_after=False, dropout=0.0, dropout_seed=None, eval_mode=False,
              dtype=torch.float32, heads=1, view_bug=False, out_proj=False, batch=1,
              extra=None):
    """The chapter's attention on INPUTS (stacked `batch` times), returning its stages as the
    book's variables hold them: queries, keys, values, attn_scores, attn_weights,
    weights_dropped (the weights after dropout), context. One head: (T, d); several: MultiHeadAttention's shapes."""
    x = torch.tensor(INPUTS, dtype=dtype)
    if batch > 1:
        x = torch.stack([x] * batch)
    d_in = x.shape[-1]
    torch.manual_seed(seed)
    if extra is not None:  # one more module created first: (in, out, bias)
        torch.nn.Linear(extra[0], extra[1], bias=extra[2], dtype=dtype)
    if init == "rand":  # SelfAttention_v1: nn.Parameter(torch.rand(d_in, d_out))
        names = ["k", "q", "v"] if k_first else ["q", "k", "v"]
        w = {n: torch.rand(d_in, d_out, dtype=dtype) for n in names}
        proj = {n: (lambda t, m=w[n]: t @ m) for n in names}
    else:  # SelfAttention_v2: nn.Linear(d_in, d_out, bias=False), applied as x @ weight.T
        names = ["k", "q", "v"] if k_first else ["q", "k", "v"]
        lin = {n: torch.nn.Linear(d_in, d_out, bias=False, dtype=dtype) for n in names}
        proj = {n: lin[n] for n in names}
    o_proj = torch.nn.Linear(d_out, d_out, dtype=dtype) if out_proj else None
    # No torch.no_grad(): the prints carry grad_fn=<...> where nn.Linear made them, as the
    # book's do.
    q, k, v = proj["q"](x), proj["k"](x), proj["v"](x)
    T = x.shape[-2]
    if heads > 1:
        b, hd = x.shape[0], d_out // heads
        if view_bug:  # q.view(b, heads, T, hd): no transpose
            split = lambda t: t.view(b, heads, T, hd)
        else:
            split = lambda t: t.view(b, T, heads, hd).transpose(1, 2)
        qh, kh, vh = split(q), split(k), split(v)
    else:
        qh, kh, vh = q, k, v
    scores = qh @ kh.transpose(-2, -1)
    dk = kh.shape[-1]
    scaled = {"sqrt": scores / dk ** 0.5, "off": scores, "d": scores / dk,
              "d_in": scores / d_in ** 0.5}[scale]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    if causal and not mask_after:
        scaled = scaled.masked_fill(mask, -torch.inf)
    weights = torch.softmax(scaled, dim=softmax_dim)
    if causal and mask_after:  # softmax, then zero the future, no renormalisation
        weights = weights * torch.tril(torch.ones(T, T, dtype=dtype))
    dropped = weights
    if dropout > 0 and not eval_mode:
        torch.manual_seed(dropout_seed)
        dropped = torch.nn.Dropout(dropout)(weights)
    context = dropped @ vh
    if heads > 1:
        if view_bug:
            context = context.contiguous().view(b, T, d_out)
        else:
            context = context.transpose(1, 2).contiguous().view(b, T, d_out)
    if o_proj is not None:
        context = o_proj(context)
    return {"Q": q, "K": k, "V": v, "scores": scores, "weights": weights,
            "weights_dropped": dropped, "context": context}


def case(name, preset, stage, verdict, cause=None, tensor=None, **kw):
    t = attention(**kw)[stage] if tensor is None else tensor
    return {"name": name, "preset": preset, "text": str(t), "verdict": verdict,
            "stage": stage if verdict != "none" else None, "cause": cause}


def match_cases():
    journey = dict(init="rand", seed=123)
    v2 = dict(seed=789)
    causal = dict(seed=789, causal=True)
    mha = dict(seed=123, causal=True, heads=2, out_proj=True, batch=2)
    c = [
        # The book's own numbers: each a stage of its preset.
        case("journey-weights", "raschka-journey", "weights", "match", **journey),
        case("journey-context", "raschka-journey", "context", "match", **journey),
        case("journey-queries", "raschka-journey", "Q", "match", **journey),
        case("journey-weights-row", "raschka-journey", "weights", "match",
             tensor=attention(**journey)["weights"][1]),
        case("v2-context", "raschka-3.4-v2", "context", "match", **v2),
        case("causal-weights", "raschka-3.5-causal", "weights", "match", **causal),
        case("dropout-weights", "raschka-3.5-dropout", "weights_dropped", "match",
             dropout=0.5, dropout_seed=123, **causal),
        case("mha-context", "raschka-3.6-mha", "context", "match", **mha),
        # Each known mistake, made in the program.
        case("journey-scale-off", "raschka-journey", "weights", "explained", "scale-off",
             scale="off", **journey),
        case("journey-scale-by-d", "raschka-journey", "weights", "explained", "scale-by-d-k",
             scale="d", **journey),
        case("journey-scale-d-in", "raschka-journey", "weights", "explained",
             "bug-scale-d-model", scale="d_in", **journey),
        case("journey-softmax-dim0", "raschka-journey", "weights", "explained",
             "bug-softmax-dim", softmax_dim=0, **journey),
        case("causal-mask-after-softmax", "raschka-3.5-causal", "weights", "explained",
             "bug-mask-after-softmax", mask_after=True, **causal),
        case("causal-mask-dropped", "raschka-3.5-causal", "weights", "explained",
             "bug-causal-dropped", seed=789),
        case("mha-view-no-transpose", "raschka-3.6-mha", "context", "explained",
             "bug-view-no-transpose", view_bug=True, **mha),
        case("v2-key-first", "raschka-3.4-v2", "context", "explained", "draw-order-k-first",
             k_first=True, **v2),
        case("v2-extra-linear-same", "raschka-3.4-v2", "context", "explained",
             "extra-linear-same", extra=(3, 2, False), **v2),
        # d_out = 4 (the preset with projections.d_out 4): at the book's d_out = 2 an
        # nn.Linear(2, 2) with its bias takes as many draws (6) as nn.Linear(3, 2, bias=False).
        dict(case("v2-extra-linear-other", "raschka-3.4-v2", "context", "explained",
                  "extra-linear-other", extra=(4, 4, True), seed=789, d_out=4), d_out=4),
        case("v2-torch-rand", "raschka-3.4-v2", "context", "explained", "rand-vs-linear",
             init="rand", seed=789),
        case("dropout-eval", "raschka-3.5-dropout", "context", "explained", "dropout-eval",
             dropout=0.5, dropout_seed=123, eval_mode=True, **causal),
        case("journey-float64", "raschka-journey", "weights", "explained", "float64-vs-float32",
             dtype=torch.float64, **journey),
        case("journey-seed-124", "raschka-journey", "weights", "explained",
             "seed-projections-plus-1", init="rand", seed=124),
        # Nothing fits: the weights of another input.
        case("journey-other-input", "raschka-journey", "weights", "none",
             tensor=torch.softmax(torch.tensor([[1.0, 2.0, 0.5, 0.25, 3.0, 1.5]] * 6), -1)),
    ]
    return c


def bits64(a):
    return [struct.unpack("<Q", struct.pack("<d", float(v)))[0] for v in a.ravel()]


def numpy_str_cases():
    rng = np.random.RandomState(0)
    nan, inf = float("nan"), float("inf")
    cases = {
        "matrix": rng.randn(3, 4),
        "wide_wraps": rng.randn(2, 12),
        "stack_3d": rng.randn(2, 3, 4),
        "stack_4d": rng.randn(1, 2, 3, 3),
        "sci": np.array([[1e-5, 2.5], [3.0, -4e-7]]),
        "ints": np.array([[1.0, 2.0], [3.0, 4.0]]),
        "mask_neg_inf": np.array([[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]),
        "nan_inf": np.array([[nan, 1.5], [inf, -inf]]),
        "vector": np.array([0.5, -1.25, 3.0]),
        "summarised": rng.randn(40, 30),
        "wide_sci_wraps": rng.randn(3, 9) * 1e-6,
    }
    out = []
    for name, a in cases.items():
        out.append({"name": name, "shape": list(a.shape), "bits": bits64(a), "float32": False,
                    "str": str(a)})
        f = a.astype(np.float32)
        out.append({"name": name + "_f32", "shape": list(a.shape),
                    "bits": bits64(f.astype(np.float64)), "float32": True, "str": str(f)})
    return out


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    torch.set_printoptions(profile="default")
    write(os.path.join(GOLDEN, "match", "cases.json"), match_cases())
    write(os.path.join(GOLDEN, "print", "numpy_str_cases.json"), numpy_str_cases())
