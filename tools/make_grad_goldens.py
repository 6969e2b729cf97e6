#!/usr/bin/python3
"""Writes tests/golden/grad/*.json: the gradients of the loss

    L = -sum_{b,h} log weights[b, h, I, J]        (query row I should attend to key J)

computed by torch.autograd for a scenario, what core/src/lessons/grad.cpp must reproduce
(tests/grad_test.cpp). The forward pass is the oracles' own: the inputs and projections of
tools/torch_oracle.py (or, for input.source "qkv" and input.generator "numpy", of
tools/make_qkv_goldens.py), then the same operations in the same order as torch_oracle.run
(X @ W + bias, heads split, q @ k^T, * multiplier, / sqrt(dh), masked_fill(-inf), the
normalization), with W_query, W_key, Q, K, scores and the masked logits kept for their .grad.

Each file: {"scenario": ..., "loss_row": I, "loss_key": J, "torch": version, "expected": {
  "loss", "grad_logits", "grad_scores" (B x H x T x T), "grad_Q", "grad_K" (B x T x d_out),
  "grad_W_query", "grad_W_key" (d_in x d_out; absent for qkv input), "jacobian_row" (T x T:
  torch.autograd.functional.jacobian of row I of batch 0, head 0's normalization at its logits)}}.
Values are float32 (nested lists; "nan", "inf", "-inf" as strings).

Run with Debian's interpreter, which has torch:   /usr/bin/python3 tools/make_grad_goldens.py
"""
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import make_qkv_goldens  # noqa: E402  (tools/, next to this file)
import torch_oracle  # noqa: E402

OUT = os.path.join(ROOT, "tests", "golden", "grad")
FMT = "attention-lab/scenario@1"


def leaves(scenario):
    """X (or None), W and bias per projection name ({} for qkv input), and Q, K, V when they are
    given or drawn directly (qkv input), from the oracle that handles the scenario."""
    inp = scenario["input"]
    if inp["source"] == "qkv" or inp.get("generator", "torch") == "numpy":
        X, W, qkv, _ = make_qkv_goldens.inputs(scenario)
        return X, W or {}, {}, None if X is not None else qkv
    X, _ = torch_oracle.INPUT_SOURCES[inp["source"]](inp)
    W, bias, _, _ = torch_oracle.make_projections(scenario["projections"], X.shape[-1])
    return X, W, bias, None


def forward(scenario):
    """The forward pass with gradients kept: a dict of the tensors whose .grad the goldens hold,
    plus the weights, the allowed cells, the normalization and the head count."""
    X, W, bias, given = leaves(scenario)
    t = {}
    if given is None:
        for name in ("query", "key"):
            W[name] = W[name].clone().requires_grad_(True)
        t["W_query"], t["W_key"] = W["query"], W["key"]
        Q, K = (X @ W[n] + bias[n] if n in bias else X @ W[n] for n in ("query", "key"))
        heads = scenario["projections"].get("heads", 1)
    else:
        Q, K = (m.clone().requires_grad_(True) for m in given[:2])
        heads = scenario["input"].get("heads", 1)
    B, T, d_out = Q.shape
    dh = d_out // heads
    # Grouped K/V heads (LLMs-from-scratch's GroupedQueryAttention): K split into kv_heads
    # heads, RoPE on those, then each repeated for its query heads (autograd sums the copies).
    kv_heads = K.shape[2] // dh
    positions = scenario.get("positions", {})
    # projections.qk_norm (torch_oracle.qk_norm): before the rotation (or without RoPE) the
    # gradients of Q and K are those of the normalized stages the app shows; after it, of Q
    # and K themselves, with the norm's backward inside.
    norm = scenario.get("projections", {}).get("qk_norm")
    after = norm is not None and positions.get("kind") == "rope" and \
        norm.get("order", "after_rope") == "after_rope"
    p32 = torch_oracle.Precision("float32")
    if norm is not None and not after:
        Q, K = (torch_oracle.side_by_side(torch_oracle.qk_norm(
            torch_oracle.split_heads(M, B, T, M.shape[2] // dh, dh), norm, p32, "float32"))
            for M in (Q, K))
    q = torch_oracle.split_heads(Q, B, T, heads, dh)
    k = torch_oracle.split_heads(K, B, T, kv_heads, dh)
    if positions.get("kind") == "rope":  # the rotation is linear: autograd rotates back
        q, k = torch_oracle.rope(q, positions), torch_oracle.rope(k, positions)
        if after:
            q = torch_oracle.qk_norm(q, norm, p32, "float32")
            k = torch_oracle.qk_norm(k, norm, p32, "float32")
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    scores = q @ k.transpose(2, 3)
    scaling = scenario.get("scaling", {})
    logits = scores * scaling.get("multiplier", 1.0)
    if scaling.get("sqrt_dk", True):
        logits = logits / math.sqrt(dh)
    if positions.get("kind") == "alibi":  # a constant: no gradient of its own
        slopes = torch.tensor(torch_oracle.alibi_slopes_of(positions, heads)).view(1, heads, 1, 1)
        logits = logits + -(slopes * torch_oracle.alibi_distance(
            positions, torch.arange(T).view(T, 1), torch.arange(T).view(1, T)))
    if "softcap" in scaling:  # Gemma 2's soft-capping
        logits = scaling["softcap"] * torch.tanh(logits / scaling["softcap"])
    allowed = torch_oracle.allowed_cells(scenario.get("mask", {}), T)
    logits = logits.masked_fill(~allowed, float("-inf"))
    how = scenario.get("normalization", "softmax")
    if "sink" in scaling:  # gpt-oss's sink column, dropped after the softmax
        how = ("sink", sink_logits(scaling["sink"], heads))
        S = how[1].reshape(1, heads, 1, 1).expand(B, -1, T, 1)
        weights = torch.cat([logits, S], dim=-1).softmax(dim=-1)[..., :-1]
    else:
        weights = torch_oracle.normalize(logits, allowed, how, (B, heads, T, T))
    t.update(Q=Q, K=K, scores=scores, logits=logits)
    for tensor in t.values():
        if not tensor.is_leaf:
            tensor.retain_grad()
    return t, weights, allowed, how


def sink_logits(sink, heads):
    """scaling.sink as one float32 logit per head."""
    return torch.tensor(sink if isinstance(sink, list) else [sink] * heads)


def row_jacobian(logits_row, allowed_row, how):
    """d w / d z of one row's normalization at z = logits_row (T x T) (head 0's sink, if any)."""
    T = logits_row.shape[0]

    def normalize_row(z):
        if how[0] == "sink":
            return torch.cat([z, how[1][:1]]).softmax(dim=-1)[:-1]
        return torch_oracle.normalize(z[None, None, None], allowed_row[None], how, (1, 1, 1, T))[0, 0, 0]

    return torch.autograd.functional.jacobian(normalize_row, logits_row)


def gradients(scenario, row, key):
    t, weights, allowed, how = forward(scenario)
    loss = -weights[:, :, row, key].log().sum()
    if loss.requires_grad:  # "mean" does not depend on the logits: every gradient is 0
        loss.backward()
    out = {"loss": loss.item()}
    names = {"logits": "grad_logits", "scores": "grad_scores", "Q": "grad_Q", "K": "grad_K",
             "W_query": "grad_W_query", "W_key": "grad_W_key"}
    for name, tensor in t.items():
        grad = tensor.grad if tensor.grad is not None else torch.zeros_like(tensor)
        out[names[name]] = grad
    out["jacobian_row"] = row_jacobian(t["logits"][0, 0, row].detach(), allowed[row], how)
    return {k: torch_oracle.plain(v) for k, v in out.items()}


def preset(name):
    with open(os.path.join(ROOT, "assets", "presets", name + ".json")) as f:
        return json.load(f)


def scenario(title, inp, proj=None, **rest):
    s = {"format": FMT, "title": title, "input": inp}
    if proj is not None:
        s["projections"] = proj
    s.update(rest)
    return s


RASCHKA_X = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
             [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]

# name: (scenario, loss row I, loss key J)
CASES = {
    "preset-raschka-journey": (preset("raschka-journey"), 1, 3),
    "preset-dog-attacks-cat": (preset("dog-attacks-cat"), 2, 10),
    "preset-karpathy-head": (preset("karpathy-head"), 5, 2),
    "preset-karpathy-trick": (preset("karpathy-trick"), 3, 0),
    "preset-numpy-masked": (preset("numpy-masked"), 3, 1),
    "preset-scaling-demo": (preset("scaling-demo"), 0, 2),
    "linear-bias-heads2-batch2-mult": (scenario(
        "nn.Linear with bias, 2 heads, B = 2, multiplier 2.5, causal",
        {"source": "randn", "batch": 2, "length": 5, "d_in": 6, "seed": 7},
        {"init": "linear", "d_out": 8, "seed": 11, "bias": True, "heads": 2},
        scaling={"sqrt_dk": True, "multiplier": 2.5}, mask={"kind": "causal"}), 4, 1),
    "custom-mask-naive-unscaled": (scenario(
        "custom mask, softmax_naive, no 1/sqrt(d_k), randn W",
        {"source": "matrix", "values": RASCHKA_X},
        {"init": "randn", "d_out": 4, "seed": 3},
        scaling={"sqrt_dk": False, "multiplier": 1.0},
        mask={"kind": "custom", "allowed": [[1, 0, 1, 0, 1, 1], [1, 1, 0, 0, 1, 0],
                                            [0, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1],
                                            [0, 0, 0, 1, 1, 1], [1, 0, 0, 0, 0, 1]]},
        normalization="softmax_naive"), 2, 3),
    "sum-causal-heads2": (scenario(
        "normalization sum (z / sum z), 2 heads, causal",
        {"source": "randn", "length": 6, "d_in": 4, "seed": 5},
        {"init": "torch_rand", "d_out": 4, "seed": 2, "heads": 2},
        mask={"kind": "causal"}, normalization="sum"), 4, 2),
    "qkv-torch-batch2-heads2-causal": (scenario(
        "torch qkv, B = 2, 2 heads, causal, multiplier 0.5",
        {"source": "qkv", "seed": 42, "length": 5, "d_k": 8, "batch": 2, "heads": 2},
        scaling={"sqrt_dk": True, "multiplier": 0.5}, mask={"kind": "causal"}), 3, 3),
    "peaked-underflow-nan": (scenario(
        "multiplier 300 without scaling: key 0's weight underflows to 0, the loss is inf and "
        "PyTorch's gradient nan",
        {"source": "matrix", "values": RASCHKA_X},
        {"init": "torch_rand", "d_out": 2, "seed": 123},
        scaling={"sqrt_dk": False, "multiplier": 300.0}), 1, 0),
    "identity-text-dropout": (scenario(
        "identity projections on text input, dropout (does not enter the loss)",
        {"source": "text", "text": "attention is all you need", "d_in": 4, "seed": 1},
        {"init": "identity"}, dropout={"p": 0.3, "seed": 5}), 4, 0),
    # Issue 26's score modifiers: tanh's backward in grad_scores; the sink's column in the
    # softmax (its own gradient dropped).
    "softcap-sink-heads2-causal": (scenario(
        "soft-capping c = 1.5 after multiplier 2, a sink per head, 2 heads, causal",
        {"source": "randn", "length": 6, "d_in": 4, "seed": 5},
        {"init": "randn", "d_out": 4, "seed": 2, "heads": 2},
        scaling={"multiplier": 2.0, "softcap": 1.5, "sink": [0.5, -1.0]},
        mask={"kind": "causal"}), 5, 1),
    "preset-softcap": (preset("softcap"), 6, 2),
    "preset-alibi": (preset("alibi"), 7, 3),
    "alibi-softcap-heads2-none": (scenario(
        "ALiBi under soft-capping c = 1, 2 heads, no mask",
        {"source": "randn", "length": 5, "d_in": 4, "seed": 6},
        {"init": "randn", "d_out": 4, "seed": 4, "heads": 2},
        scaling={"softcap": 1.0}, positions={"kind": "alibi"}), 2, 4),
    "preset-gpt-oss-sink": (preset("gpt-oss-sink"), 4, 4),
    "rope-split-halves-sign-neg-heads2": (scenario(
        "RoPE, split halves, sign -1 (nanochat), 2 heads, causal",
        {"source": "randn", "length": 7, "d_in": 6, "seed": 12},
        {"init": "randn", "d_out": 8, "seed": 13, "heads": 2},
        mask={"kind": "causal"},
        positions={"kind": "rope", "layout": "split_halves", "theta": 10000, "sign": -1}), 5, 2),
    "rope-interleaved-batch2": (scenario(
        "RoPE, interleaved (Meta), theta 100, B = 2",
        {"source": "randn", "batch": 2, "length": 6, "d_in": 4, "seed": 14},
        {"init": "linear", "d_out": 4, "seed": 15, "bias": True},
        positions={"kind": "rope", "layout": "interleaved", "theta": 100.0, "sign": 1}), 3, 5),
    "rope-gqa-h4-kv2": (scenario(
        "RoPE with grouped K/V heads: 4 query heads, 2 K/V heads, causal",
        {"source": "randn", "length": 6, "d_in": 4, "seed": 16},
        {"init": "randn", "d_out": 8, "seed": 17, "heads": 4, "kv_heads": 2},
        mask={"kind": "causal"}, positions={"kind": "rope"}), 4, 1),
    "qk-norm-nanochat-gqa": (scenario(
        "QK-norm after RoPE (nanochat: no weight, times 1.2), 4 query heads, 2 K/V heads",
        {"source": "randn", "length": 6, "d_in": 8, "seed": 18},
        {"init": "linear", "d_out": 8, "seed": 19, "heads": 4, "kv_heads": 2,
         "qk_norm": {"scale": 1.2}},
        mask={"kind": "causal"}, positions={"kind": "rope", "sign": -1}), 4, 2),
    "qk-norm-weight-before-rope-bias": (scenario(
        "QK-norm with a weight before RoPE (Gemma), biases, 2 heads",
        {"source": "randn", "length": 5, "d_in": 6, "seed": 20},
        {"init": "linear", "d_out": 8, "seed": 21, "heads": 2, "bias": True,
         "qk_norm": {"eps": 1e-6, "weight": [1.5, 0.25, 1.0, 2.0], "order": "before_rope"}},
        positions={"kind": "rope"}), 3, 1),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (scn, row, key) in CASES.items():
        doc = {"scenario": scn, "loss_row": row, "loss_key": key, "torch": torch.__version__,
               "expected": gradients(scn, row, key)}
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(doc, f)
            f.write("\n")
    print("wrote", len(CASES), "files to", os.path.relpath(OUT, ROOT))


if __name__ == "__main__":
    main()
