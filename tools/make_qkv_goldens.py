#!/usr/bin/python3
"""Writes tests/golden/qkv/*.json: scenarios with input.source "qkv" and/or input.generator
"numpy", with every stage computed by real PyTorch (float32) from draws made by real PyTorch
(torch.manual_seed, torch.randn, torch.rand) or real NumPy (np.random.seed, np.random.randn,
np.random.rand, rounded to float32 as the app does), plus the notebooks' variance prints
("stats": torch's Tensor.var() of the float32 stages; NumPy's ndarray.var() of the float32
stages widened to float64 for numpy scenarios).

Each file: {"scenario": ..., "expected": {stage: values}, "torch": version, "numpy": version}.
Needs Debian's python3-torch and python3-numpy (run with /usr/bin/python3); the tests read the
JSON only. This is its own small oracle for these scenarios (softmax, softmax_naive, sum, mean;
none, causal and custom masks; heads; identity, randn, torch_rand and matrix projections).

    /usr/bin/python3 tools/make_qkv_goldens.py
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

import torch_oracle  # tools/torch_oracle.py, next to this file: the masks' cells

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "golden", "qkv")
FMT = "attention-lab/scenario@1"
NP = {torch.float32: np.float32, torch.float64: np.float64}
DTYPES = {"float32": torch.float32, "float64": torch.float64}
F64_OUT = os.path.join(HERE, "..", "tests", "golden", "f64")


def f32_list(t):
    """Nested lists of the float32 values, as shortest-repr floats (inf/nan as strings)."""
    def conv(x):
        if isinstance(x, list):
            return [conv(y) for y in x]
        v = float(np.float32(x))
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return float(repr(np.float32(v)))
    return conv(t.tolist())


class Draws:
    """The scenario's generator: torch's or NumPy's legacy global one, float32 results (or
    float64 ones, for "dtype": "float64": NumPy's draws unrounded, torch's drawn as float64)."""

    def __init__(self, kind, dtype=torch.float32):
        self.kind = kind
        self.dtype = dtype
        # A fresh process as the app models it (DefaultSeed in scenario.h): libtorch's default
        # seed, which a new torch.Generator() holds, or 0 for NumPy, which seeds its global
        # generator from the operating system. Only a draw before any seed sees it.
        self.seed(0 if kind == "numpy" else torch.Generator().initial_seed())

    def seed(self, s):
        if self.kind == "numpy":
            np.random.seed(s)
        else:
            torch.manual_seed(s)

    def randn(self, *shape):
        if self.kind == "numpy":
            return torch.from_numpy(np.random.randn(*shape).astype(NP[self.dtype]))
        return torch.randn(*shape, dtype=self.dtype)

    def rand(self, *shape):
        if self.kind == "numpy":
            return torch.from_numpy(np.random.rand(*shape).astype(NP[self.dtype]))
        return torch.rand(*shape, dtype=self.dtype)


def inputs(scn):
    """X (or None) and Q, K, V as (B, T, d) float32 tensors, and the token labels."""
    inp, proj = scn["input"], scn.get("projections")
    dt = DTYPES[scn.get("dtype", "float32")]
    g = Draws(inp.get("generator", "torch"), dt)
    if inp["source"] == "qkv":
        if "Q" in inp:
            q, k, v = (torch.tensor(inp[n], dtype=dt) for n in "QKV")
            q, k, v = (t if t.dim() == 3 else t.unsqueeze(0) for t in (q, k, v))
        else:
            g.seed(inp["seed"])
            B, T, d_k = inp.get("batch", 1), inp["length"], inp["d_k"]
            d_v = inp.get("d_v", d_k)  # V has its own width d_v (default d_k)
            drawn = {}
            for name in inp.get("order", ["query", "key", "value"]):
                drawn[name] = g.randn(B, T, d_v if name == "value" else d_k)
            q, k, v = drawn["query"], drawn["key"], drawn["value"]
        T = q.shape[1]
        return None, None, (q, k, v), inp.get("tokens", ["x%d" % (i + 1) for i in range(T)])
    if inp["source"] == "randn":
        g.seed(inp["seed"])
        X = g.randn(inp.get("batch", 1), inp["length"], inp["d_in"])
    else:
        X = torch.tensor(inp["values"], dtype=dt)
        X = X if X.dim() == 3 else X.unsqueeze(0)
    init, d_in = proj["init"], X.shape[-1]
    W = {}
    if init in ("randn", "torch_rand"):
        if proj.get("seed") is not None:
            g.seed(proj["seed"])
        for name in proj.get("order", ["query", "key", "value"]):
            W[name] = (g.randn if init == "randn" else g.rand)(d_in, proj["d_out"])
    elif init == "matrix":
        for name in ("query", "key", "value"):
            W[name] = torch.tensor(proj["W_" + name], dtype=dt)
    elif init == "linear":  # float64 cases only: nn.Linear(..., dtype=torch.float64)
        if proj.get("seed") is not None:
            g.seed(proj["seed"])
        for name in proj.get("order", ["query", "key", "value"]):
            W[name] = torch.nn.Linear(d_in, proj["d_out"], bias=proj.get("bias", False), dtype=dt)
        if proj.get("out_proj"):
            W["out_proj"] = torch.nn.Linear(proj["d_out"], proj["d_out"], dtype=dt)
        qkv = tuple(W[n](X) for n in ("query", "key", "value"))
        T = X.shape[1]
        return X, W, qkv, inp.get("tokens", ["x%d" % (i + 1) for i in range(T)])
    else:
        for name in ("query", "key", "value"):
            W[name] = torch.eye(d_in, dtype=dt)
    qkv = tuple(X @ W[n] for n in ("query", "key", "value"))
    T = X.shape[1]
    return X, W, qkv, inp.get("tokens", ["x%d" % (i + 1) for i in range(T)])


def split_heads(t, heads):
    """(B, T, d) -> (B, heads, T, d // heads): each head its own columns of t."""
    B, T, d = t.shape
    return t.view(B, T, heads, d // heads).transpose(1, 2)


def merge_heads(t):
    """(B, heads, T, dh) -> (B, T, heads * dh): the heads side by side again."""
    B, H, T, dh = t.shape
    return t.transpose(1, 2).contiguous().view(B, T, H * dh)


def attention(scn, q, k, v, heads):
    B, T, d = q.shape
    dt = q.dtype
    dh = d // heads
    qh, kh, vh = split_heads(q, heads), split_heads(k, heads), split_heads(v, heads)
    scores = qh @ kh.transpose(-2, -1)
    sc = scn.get("scaling", {})
    logits = scores
    if sc.get("multiplier", 1.0) != 1.0:
        logits = logits * sc["multiplier"]
    if sc.get("sqrt_dk", True):
        logits = logits / torch.tensor(math.sqrt(dh), dtype=dt)
    mk = scn.get("mask", {}).get("kind", "none")
    allowed = torch_oracle.allowed_cells(scn.get("mask", {}), T).to(dt)  # every mask kind
    if mk != "none":
        logits = logits.masked_fill(allowed == 0, float("-inf"))
    norm = scn.get("normalization", "softmax")
    if norm == "softmax":
        weights = torch.softmax(logits, dim=-1)
    elif norm == "softmax_naive":
        weights = torch.exp(logits) / torch.exp(logits).sum(dim=-1, keepdim=True)
    elif norm == "sum":
        z = logits.masked_fill(allowed == 0, 0.0)
        weights = z / z.sum(dim=-1, keepdim=True)
    else:
        weights = (allowed / allowed.sum(dim=-1, keepdim=True)).expand_as(scores)
    if scn.get("mask", {}).get("masked_rows", "nan") == "zero":  # PyTorch >= 2.5's SDPA
        weights = weights.masked_fill(allowed.sum(dim=-1, keepdim=True) == 0, 0.0)
    context = merge_heads(weights @ vh)  # (B, T, d_v): V's width, not Q's
    return scores, logits, weights, allowed, context


def stats(kind, stages):
    out = {}
    for key, t in stages.items():
        if kind == "numpy":
            v = float(t.numpy().astype(np.float64).var())
        else:
            v = float(t.var())
        out[key] = "nan" if math.isnan(v) else ("inf" if math.isinf(v) else v)
    return out


def var_K(kind, k):
    """The dump's var_K: K.var() as the scenario's library computes it, NumPy's own default
    (ddof = 0, divides by n) for numpy scenarios, torch's (unbiased, n - 1) otherwise."""
    if kind == "numpy":
        a = k.detach().numpy().astype(np.float64)
        v = float(a.var())
        assert v == float(a.var(ddof=0)) and v != float(a.var(ddof=1))  # the documented ddof
    else:
        v = float(k.detach().var())
    return "nan" if math.isnan(v) else ("inf" if math.isinf(v) else v)


def run(scn):
    X, W, (q, k, v), tokens = inputs(scn)
    heads = (scn["input"] if scn["input"]["source"] == "qkv" else scn["projections"]).get("heads", 1)
    scores, logits, weights, allowed, context = attention(scn, q, k, v, heads)
    ex = {"Q": f32_list(q), "K": f32_list(k), "V": f32_list(v), "scores": f32_list(scores),
          "logits": f32_list(logits), "weights": f32_list(weights), "context": f32_list(context),
          "mask": allowed.to(torch.int64).tolist(), "tokens": tokens}
    if X is not None:
        ex["X"] = f32_list(X)
        for n in ("query", "key", "value"):
            ex["W_" + n] = f32_list(W[n])
    kind = scn["input"].get("generator", "torch")
    ex["stats"] = stats(kind, {"var_q": q, "var_k": k, "var_scores": scores,
                               "var_logits": logits, "var_weights": weights})
    ex["var_K"] = var_K(kind, k)
    if kind == "numpy":  # what `show` prints: NumPy's repr of the float32 arrays
        flat = q.shape[0] == 1 and heads == 1  # the program drops B = 1 with one head
        ex["show"] = {n: repr((t[0] if flat else t).numpy())
                      for n, t in (("Q", q), ("K", k), ("V", v))}
    return ex


def qkv(generator, seed, length, d_k, **kw):
    inp = {"source": "qkv", "seed": seed, "length": length, "d_k": d_k}
    if generator != "torch":
        inp["generator"] = generator
    inp.update(kw)
    return inp


def scenario(title, inp, proj=None, mask="none", norm="softmax", scaling=None, allowed=None):
    s = {"format": FMT, "title": title, "input": inp}
    if proj is not None:
        s["projections"] = proj
    s["mask"] = {"kind": mask}
    if allowed is not None:
        s["mask"]["allowed"] = allowed
    s["normalization"] = norm
    if scaling is not None:
        s["scaling"] = scaling
    return s


def given_qkv(d_v=4, **kw):
    torch.manual_seed(5)
    q, k, v = torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, d_v)
    inp = {"source": "qkv", "Q": f32_list(q), "K": f32_list(k), "V": f32_list(v),
           "tokens": ["a", "b", "c"]}
    inp.update(kw)
    return inp


HOLE = {"kind": "custom", "allowed": [[0 if i == 2 else 1 for j in range(5)] for i in range(5)]}

CASES = {
    "numpy-masked-seed0": scenario("NumPy notebook, seed 0", qkv("numpy", 0, 4, 8),
                                   mask="causal"),
    "numpy-odd-counts": scenario("numpy, 15 draws each: the cached Gaussian crosses q, k, v",
                                 qkv("numpy", 2**32 - 1, 3, 5,
                                     order=["value", "key", "query"]),
                                 scaling={"sqrt_dk": False, "multiplier": 0.5}),
    "numpy-batch-heads-naive": scenario("numpy, B = 2, 3 heads", qkv("numpy", 1, 3, 6, batch=2,
                                                                     heads=3),
                                        mask="custom", norm="softmax_naive",
                                        allowed=[[1, 0, 1], [1, 1, 0], [0, 1, 1]]),
    "numpy-randn-projections": scenario(
        "numpy randn X (15 draws) then randn W continuing the cached Gaussian",
        {"source": "randn", "generator": "numpy", "length": 5, "d_in": 3, "seed": 7},
        {"init": "randn", "d_out": 4, "heads": 2}, mask="causal", norm="sum"),
    "numpy-matrix-rand-W": scenario(
        "numpy rand W after its own seed",
        {"source": "matrix", "generator": "numpy", "values": [[1.0, 0.5], [-0.25, 2.0],
                                                              [0.0, 1.5]]},
        {"init": "torch_rand", "d_out": 3, "seed": 9, "order": ["key", "value", "query"]},
        norm="mean", mask="causal"),
    "torch-qkv-kqv-heads": scenario("torch qkv, key first, B = 2, 2 heads",
                                    qkv("torch", 42, 5, 8, batch=2, heads=2,
                                        order=["key", "query", "value"]),
                                    mask="causal"),
    "torch-qkv-small": scenario("torch qkv, 6 draws each (the scalar path)",
                                qkv("torch", 74, 2, 3)),
    "torch-qkv-given": scenario("Q, K, V given", given_qkv(), norm="mean"),
    # d_v != d_k: V (and the context) has its own width; with heads, each head takes
    # d_k / H columns of Q and K and d_v / H of V.
    "torch-qkv-dv-heads": scenario("torch qkv, d_k = 6, d_v = 4, 2 heads, B = 2",
                                   qkv("torch", 3, 4, 6, batch=2, d_v=4, heads=2),
                                   mask="causal"),
    # Nothing seeded before the projections: the app draws after np.random.seed(0) and the
    # generated program pins that seed.
    "numpy-unseeded-rand-W": scenario(
        "numpy rand W, no seed anywhere",
        {"source": "matrix", "generator": "numpy", "values": [[1.0, 2.0], [3.0, 4.0]]},
        {"init": "torch_rand", "d_out": 2}),
    # The mask composer in NumPy programs (issue 26).
    "numpy-sliding-window-heads": dict(
        scenario("numpy qkv, sliding window of 2 keys, 2 heads", qkv("numpy", 3, 6, 4, heads=2)),
        mask={"kind": "sliding_window", "window": 2}),
    "numpy-or-document-prefix-zero-rows": dict(
        scenario("numpy qkv, documents or a prefix, both with query 2 cut off: its row gives 0",
                 qkv("numpy", 4, 5, 4), norm="sum"),
        mask={"kind": "or", "masked_rows": "zero", "of": [
            {"kind": "and", "of": [{"kind": "document", "doc_ids": [0, 0, 1, 1, 1]}, HOLE]},
            {"kind": "and", "of": [{"kind": "prefix_lm", "prefix": 2}, HOLE]}]}),
    "numpy-dv-value-first": scenario("numpy qkv, d_v = 3 drawn first (the cached Gaussian)",
                                     qkv("numpy", 11, 3, 4, d_v=3,
                                         order=["value", "query", "key"])),
}


def numpy_notebook(seed):
    """The cells of the NumPy notebook numpy-scaled-masked-attention, in float64, run right
    after np.random.seed(seed) (the notebook itself ran unseeded): what the numpy-masked preset
    must show."""
    np.random.seed(seed)
    L, d_k, d_v = 4, 8, 8
    q, k, v = np.random.randn(L, d_k), np.random.randn(L, d_k), np.random.randn(L, d_v)
    scores = np.matmul(q, k.T)
    scaled = scores / math.sqrt(d_k)
    mask = np.tril(np.ones((L, L)))
    mask[mask == 0] = -np.inf
    mask[mask == 1] = 0
    e = np.exp(scaled + mask)  # the notebook's own softmax: no max subtracted
    attention = (e.T / np.sum(e, axis=-1)).T
    new_v = np.matmul(attention, v)
    return {"seed": seed, "q": q.tolist(), "k": k.tolist(), "v": v.tolist(),
            "scores": scores.tolist(), "scaled": scaled.tolist(), "attention": attention.tolist(),
            "new_v": new_v.tolist(), "q.var()": q.var(), "k.var()": k.var(),
            "np.matmul(q, k.T).var()": scores.var(), "scaled.var()": scaled.var(),
            # the text the notebook's cells show for them (repr of np.float64)
            "repr": {"q.var()": repr(q.var()), "k.var()": repr(k.var()),
                     "np.matmul(q, k.T).var()": repr(scores.var()),
                     "scaled.var()": repr(scaled.var())}}


def f64_list(t):
    """Nested lists of float64 values (Python's shortest repr), inf/nan as strings."""
    def conv(x):
        if isinstance(x, list):
            return [conv(y) for y in x]
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return float(x)
    return conv(t.tolist())


def run_f64(scn):
    """Every stage of a "dtype": "float64" scenario, computed by PyTorch in torch.float64 from
    float64 draws (torch's own, or NumPy's unrounded), with dropout and out_proj."""
    X, W, (q, k, v), tokens = inputs(scn)
    heads = (scn["input"] if scn["input"]["source"] == "qkv" else scn["projections"]).get("heads", 1)
    scores, logits, weights, allowed, context = attention(scn, q, k, v, heads)
    ex = {"Q": f64_list(q), "K": f64_list(k), "V": f64_list(v), "scores": f64_list(scores),
          "logits": f64_list(logits), "weights": f64_list(weights), "tokens": tokens,
          "mask": allowed.to(torch.int64).tolist()}
    drop = scn.get("dropout", {})
    if drop.get("p", 0) > 0:
        if drop.get("seed") is not None:
            torch.manual_seed(drop["seed"])
        dropped = torch.nn.Dropout(drop["p"])(weights)
        ex["weights_dropped"] = f64_list(dropped)
        context = merge_heads(dropped @ split_heads(v, heads))
    if X is not None:
        ex["X"] = f64_list(X)
        if "out_proj" in W:
            context = W["out_proj"](context)
        for n in ("query", "key", "value"):
            w = W[n].weight.T if isinstance(W[n], torch.nn.Linear) else W[n]
            ex["W_" + n] = f64_list(w.detach())
    ex["context"] = f64_list(context.detach())
    kind = scn["input"].get("generator", "torch")
    out = {}
    for key, t in {"var_q": q, "var_k": k, "var_scores": scores, "var_logits": logits,
                   "var_weights": weights}.items():
        val = float(t.detach().numpy().var()) if kind == "numpy" else float(t.detach().var())
        out[key] = "nan" if math.isnan(val) else val
    ex["stats"] = out
    ex["var_K"] = var_K(kind, k)
    return ex


def f64(scn):
    scn = dict(scn)
    scn["dtype"] = "float64"
    return scn


CASES_F64 = {
    "numpy-masked-seed0": f64(CASES["numpy-masked-seed0"]),
    "numpy-odd-counts": f64(CASES["numpy-odd-counts"]),
    "numpy-randn-projections": f64(CASES["numpy-randn-projections"]),
    "numpy-matrix-rand-W": f64(CASES["numpy-matrix-rand-W"]),
    "torch-qkv-small": f64(CASES["torch-qkv-small"]),
    "torch-qkv-kqv-heads": f64(CASES["torch-qkv-kqv-heads"]),
    "torch-qkv-given": f64(CASES["torch-qkv-given"]),
    "torch-qkv-dv-heads": f64(CASES["torch-qkv-dv-heads"]),
    "numpy-dv-heads": f64(scenario("numpy float64 qkv, L = 4, d_k = 8, d_v = 6, 2 heads",
                                   qkv("numpy", 7, 4, 8, d_v=6, heads=2), mask="causal")),
    "torch-qkv-given-dv": f64(scenario("Q and K given 3 x 4, V 3 x 2, 2 heads",
                                       given_qkv(d_v=2, heads=2), norm="softmax_naive",
                                       mask="causal")),
    "torch-randn-tail": f64(scenario(
        "torch float64 randn: 5 x 7 = 35 draws (two blocks of 16 and a redrawn tail), then "
        "torch.rand W", {"source": "randn", "length": 5, "d_in": 7, "seed": 123},
        {"init": "torch_rand", "d_out": 4, "heads": 2}, mask="causal", norm="softmax_naive")),
    "torch-linear-dropout": f64(dict(scenario(
        "torch float64 nn.Linear with bias and out_proj, dropout",
        {"source": "matrix", "values": [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66],
                                        [0.57, 0.85, 0.64], [0.22, 0.58, 0.33]]},
        {"init": "linear", "d_out": 4, "seed": 789, "bias": True, "out_proj": True,
         "heads": 2}, mask="causal"), dropout={"p": 0.25, "seed": 3})),
    "torch-matrix-sum-custom": f64(scenario(
        "torch float64 matrix W, sum normalisation, custom mask, multiplier",
        {"source": "matrix", "values": [[1.0, 0.5], [-0.25, 2.0], [0.1, 0.3]]},
        {"init": "matrix", "d_out": 2, "W_query": [[0.1, 0.2], [0.3, 0.4]],
         "W_key": [[0.5, -0.6], [0.7, 0.8]], "W_value": [[1.5, 0.25], [-0.75, 1.0]]},
        mask="custom", norm="sum", scaling={"sqrt_dk": True, "multiplier": 0.3},
        allowed=[[1, 0, 1], [1, 1, 0], [0, 1, 1]])),
}


def f64_draws():
    """float64 draws after torch.manual_seed(0), by the kernels this process runs: nn.Linear
    (uniform_ over [-bound, bound]), torch.rand and torch.randn (40 values: the block path)."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 16, bias=True, dtype=torch.float64)
    torch.manual_seed(0)
    rand = torch.rand(40, dtype=torch.float64)
    torch.manual_seed(0)
    randn = torch.randn(40, dtype=torch.float64)
    return {"linear_weight": lin.weight.detach().flatten().tolist(),
            "linear_bias": lin.bias.detach().tolist(), "rand": rand.tolist(),
            "randn": randn.tolist()}


def f64_kernels():
    """tests/golden/f64_kernels.json: f64_draws() by PyTorch's default kernels (AVX2 on this
    machine) and by its generic ones (a second interpreter under ATEN_CPU_CAPABILITY=default),
    and the claims docs/generator.md makes of them, checked here: nn.Linear weights differ
    between the two, each by at most one unit in the last place of the bound (the rounding of
    u * width that the AVX2 kernel fuses into x * width + low); rand and randn do not differ."""
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    generic = json.loads(subprocess.run([sys.executable, os.path.abspath(__file__), "--f64-draws"],
                                        env=env, check=True, capture_output=True,
                                        text=True).stdout)
    native = f64_draws()
    bound = math.sqrt(3.0) * (math.sqrt(2.0 / (1.0 + 5.0)) / math.sqrt(64))
    w, g = native["linear_weight"], generic["linear_weight"]
    differ = sum(a != b for a, b in zip(w, g))
    largest = max(abs(a - b) for a, b in zip(w, g)) / math.ulp(bound)
    assert 0 < differ < len(w) and largest == 1.0, (differ, largest)
    assert native["rand"] == generic["rand"] and native["randn"] == generic["randn"]
    return {"torch": torch.__version__, "seed": 0, "linear": [64, 16], "native": native,
            "generic": generic,
            "claims": {"linear_weights_differing": differ, "linear_weights": len(w),
                       "largest_difference_in_ulps_of_bound": largest,
                       "rand_same": True, "randn_same": True}}


def write_cases(folder, cases, runner):
    os.makedirs(folder, exist_ok=True)
    for name, scn in cases.items():
        doc = {"scenario": scn, "expected": runner(scn), "torch": torch.__version__,
               "numpy": np.__version__}
        with open(os.path.join(folder, name + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")


def main():
    if sys.argv[1:] == ["--f64-draws"]:  # the child of f64_kernels(), with generic kernels
        json.dump(f64_draws(), sys.stdout)
        return
    with open(os.path.join(OUT, "..", "f64_kernels.json"), "w") as f:
        json.dump(f64_kernels(), f, indent=1)
        f.write("\n")
    nb = os.path.join(OUT, "..", "notebooks")
    os.makedirs(nb, exist_ok=True)
    with open(os.path.join(nb, "numpy-masked.json"), "w") as f:
        json.dump({"made_by": "tools/make_qkv_goldens.py", "numpy": np.__version__,
                   "cells": numpy_notebook(0)}, f, indent=1)
        f.write("\n")
    write_cases(OUT, CASES, run)
    write_cases(F64_OUT, CASES_F64, run_f64)
    print("wrote", len(CASES), "files to", os.path.normpath(OUT), "and", len(CASES_F64), "to",
          os.path.normpath(F64_OUT))


if __name__ == "__main__":
    main()
