#!/usr/bin/python3
"""Writes tests/golden/decode/*.json: a scenario run the two ways models run attention, each
loop written out in PyTorch, what core/src/lessons/inference.cpp must reproduce
(tests/inference_test.cpp).

1. KV-cache decoding: a prefill of P tokens in chunks of C, then one token per step; per head a
   cache of K and V rows grown with torch.cat; each step's queries attend over the cache with
   the scenario's mask at the aligned positions (mask.align: bottom_right, the query's own
   position; top_left, the step's first key + r, as torch.ones(L, S).tril()); a sliding window
   drops the keys no later query can see before the step and keeps at most W after it.
2. FlashAttention's forward loop (online softmax): Q in blocks of Br rows, K and V in blocks of
   Bc; per row the running maximum m, sum l and output O, rescaled by exp(m_old - m_new); tiles
   the mask forbids entirely are skipped; the context is O / l.

Q, K, V and the mask come from tools/torch_oracle.py (the scenario's own inputs, projections
and allowed cells). Grouped K/V heads (projections.kv_heads) repeat each K/V head for
the query heads sharing it. Soft-capping and ALiBi (torch_oracle.modify_logits, at the step's
or the tile's absolute positions) and gpt-oss's sink (one more softmax column; in the tiles the
running state starts at m = sink, l = 1) as the oracle applies them. Each file: {"scenario", "torch", "full_context" (the oracle's ordinary
attention), "decode": {"prefill", "chunk", "expected": {"context", "steps": [{"t",
"cache_len", "evicted", "keys", "weights" (B x H x q x keys)}]}}, "tiled": {"block_q",
"block_k", "expected": {"context", "skipped_tiles", "steps": [{"batch", "head", "rows",
"keys" ([first, end)), "skipped", "m", "l", "rescale", "O"}]}}}. Values float32 (the lowp-*
cases: bfloat16 / float16 values, and the tiles' float32 state; the f64-* cases float64).

Run with Debian's interpreter, which has torch:   /usr/bin/python3 tools/make_decode_goldens.py
[--out DIR] (default tests/golden/decode; tools/check_goldens.sh regenerates them elsewhere and
compares).
"""
import copy
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import torch_oracle  # noqa: E402  (tools/, next to this file)

OUT = os.path.join(ROOT, "tests", "golden", "decode")
PRESETS = os.path.join(ROOT, "assets", "presets")


def oracle(scenario):
    """The oracle's stages and its out_proj layer (None without one)."""
    captured = {}
    make = torch_oracle.make_projections

    def capture(spec, d_in):
        result = make(spec, d_in)
        captured["out"] = result[2]
        return result

    torch_oracle.make_projections = capture
    try:
        stages = torch_oracle.run(scenario)
    finally:
        torch_oracle.make_projections = make
    return stages, captured.get("out")


def heads_of(scenario, stages):
    """q, k, v as B x H x T x (dh or dh_v), H, dh. With grouped K/V heads (projections.kv_heads)
    K and V split into kv_heads heads, each repeated for the heads // kv_heads query heads
    sharing it (repeat_interleave, as LLMs-from-scratch's GroupedQueryAttention): the cache
    below then holds every K/V head once per query head, the same numbers."""
    H = scenario["projections"].get("heads", 1)
    KV = scenario["projections"].get("kv_heads", H)
    Q, K, V = stages["Q"], stages["K"], stages["V"]
    B, T, d_out = Q.shape
    dh, dh_v = d_out // H, V.shape[-1] // KV
    k = torch_oracle.split_heads(K, B, T, KV, dh).repeat_interleave(H // KV, dim=1)
    v = torch_oracle.split_heads(V, B, T, KV, dh_v).repeat_interleave(H // KV, dim=1)
    return torch_oracle.split_heads(Q, B, T, H, dh), k, v, H, dh


def logits_of(scenario, scores, dh, store=lambda t: t):
    """scores * multiplier / sqrt(dh), each operation's result stored by `store` (the decode in
    bfloat16 / float16 stores them as the oracle's full computation does; the tiles keep them
    in float32)."""
    scaling = scenario.get("scaling", {})
    logits = store(scores * scaling.get("multiplier", 1.0))
    if scaling.get("sqrt_dk", True):
        logits = store(logits / math.sqrt(dh))
    return logits


def out_projection(p, out_layer, context):
    """out_proj as the oracle applies it: the layer itself, or in bfloat16 / float16 the
    product and then + bias, each stored, from the layer's weights stored in the dtype."""
    if out_layer is None:
        return context
    if p.dtype is None:
        return out_layer(context)
    out = p.mm(context, p.store(out_layer.weight.T.detach()))  # stored
    if out_layer.bias is None:  # "out_proj": {"bias": false}
        return out
    return p.store(out + p.store(out_layer.bias.detach()))


def softmax_with_sink(scenario, logits, H, p):
    """Softmax over the last dimension of logits (B x H x n x keys); with a sink (gpt-oss) over
    the keys plus the head's sink column, which is then dropped. bfloat16 / float16: stored in
    the dtype, or computed from the float32 logits and kept with scaling.softmax_dtype
    "float32" (the oracle's rule)."""
    if scenario.get("scaling", {}).get("softmax_dtype", "same") == "float32":
        logits = logits.float()
    elif p.dtype is not None:
        return p.store(softmax_with_sink(scenario, logits, H, torch_oracle.Precision("float32")))
    sinks = torch_oracle.sink_logits(scenario, H)
    if sinks is None:
        return logits.softmax(dim=-1)
    B, _, n, _ = logits.shape
    S = torch.tensor(sinks, dtype=logits.dtype).reshape(1, H, 1, 1).expand(B, -1, n, 1)
    return torch.cat([logits, S], dim=-1).softmax(dim=-1)[..., :-1]


def decode(scenario, stages, out_layer, prefill, chunk):
    """The decode loop; in bfloat16 / float16 each step's scores, logits, weights and context
    stored in the dtype as the oracle stores the full computation's (products in float32 from
    the stored operands: Precision.mm), from the K and V rows the cache holds as stored."""
    p = torch_oracle.Precision(scenario.get("dtype", "float32"))
    q, k, v, H, dh = heads_of(scenario, stages)
    B, _, T, _ = q.shape
    mask = scenario.get("mask", {})
    allowed = torch_oracle.allowed_cells(mask, T)
    align = mask.get("align", "bottom_right")
    window = mask["window"] if mask.get("kind") == "sliding_window" else None
    size = chunk if chunk > 0 else max(prefill, 1)
    plan = [(p, min(size, prefill - p)) for p in range(0, prefill, size)]
    plan += [(p, 1) for p in range(prefill, T)]

    cache_k, cache_v, cache_pos = k[:, :, :0], v[:, :, :0], []
    context = torch.zeros(B, T, stages["context"].shape[-1], dtype=q.dtype)
    steps = []
    for first, n in plan:
        evicted = []
        if window is not None:  # keys no query of this step can see any more
            drop = sum(1 for p in cache_pos if p < first - window + 1)
            evicted += cache_pos[:drop]
            cache_k, cache_v, cache_pos = cache_k[:, :, drop:], cache_v[:, :, drop:], cache_pos[drop:]
        cache_k = torch.cat([cache_k, k[:, :, first:first + n]], dim=2)
        cache_v = torch.cat([cache_v, v[:, :, first:first + n]], dim=2)
        cache_pos = cache_pos + list(range(first, first + n))
        top = first if align == "bottom_right" else cache_pos[0]
        step_mask = allowed[torch.arange(top, top + n)][:, torch.tensor(cache_pos)]
        scores = p.mm(q[:, :, first:first + n], cache_k.transpose(2, 3))
        logits = logits_of(scenario, scores, dh, p.store)
        logits = p.store(torch_oracle.modify_logits(scenario, logits, H, range(first, first + n), cache_pos))
        weights = softmax_with_sink(scenario, logits.masked_fill(~step_mask, float("-inf")), H, p)
        if mask.get("masked_rows", "nan") == "zero":
            weights = weights.masked_fill(~step_mask.any(dim=-1, keepdim=True), 0.0)
        ctx = p.mm(weights, cache_v).transpose(1, 2).reshape(B, n, -1)
        ctx = out_projection(p, out_layer, ctx)
        context[:, first:first + n] = ctx
        keys = list(cache_pos)
        if window is not None and len(cache_pos) > window:  # the ring buffer holds W keys
            drop = len(cache_pos) - window
            evicted += cache_pos[:drop]
            cache_k, cache_v, cache_pos = cache_k[:, :, drop:], cache_v[:, :, drop:], cache_pos[drop:]
        steps.append({"t": first + n, "cache_len": len(cache_pos), "evicted": evicted,
                      "keys": keys, "weights": weights})
    return {"context": context, "steps": steps}


def tiled(scenario, stages, out_layer, Br, Bc):
    """FlashAttention's loop; in bfloat16 / float16 as FlashAttention-2's kernel runs it
    (csrc/flash_attn/src/flash_fwd_kernel.h): Q, K, V as stored; each tile's logits, m, l and O
    in float32 (l sums the float32 P); P stored in the dtype before P @ V, accumulated in
    float32; O / l stored in the dtype."""
    p_ = torch_oracle.Precision(scenario.get("dtype", "float32"))
    q, k, v, H, dh = heads_of(scenario, stages)
    if p_.dtype is not None:  # the stored values, computed with in float32
        q, k, v = q.float(), k.float(), v.float()
    B, _, T, dh_v = v.shape
    mask = scenario.get("mask", {})
    allowed = torch_oracle.allowed_cells(mask, T)
    neg_inf = float("-inf")
    sinks = torch_oracle.sink_logits(scenario, H)
    context = torch.zeros(B, T, H * dh_v, dtype=q.dtype)
    steps, skipped_tiles = [], 0
    for b in range(B):
        for h in range(H):
            for i0 in range(0, T, Br):
                i1 = min(i0 + Br, T)
                # A sink starts each row at m = sink, l = exp(sink - sink) = 1: one more column,
                # rescaled with the rest, never multiplied with V.
                sink = None if sinks is None else sinks[h]
                m = torch.full((i1 - i0,), neg_inf if sink is None else sink, dtype=q.dtype)
                l = torch.full((i1 - i0,), 0.0 if sink is None else 1.0, dtype=q.dtype)
                O = torch.zeros(i1 - i0, dh_v, dtype=q.dtype)
                for j0 in range(0, T, Bc):
                    j1 = min(j0 + Bc, T)
                    tile = allowed[i0:i1, j0:j1]
                    rescale = torch.ones(i1 - i0, dtype=q.dtype)
                    skipped = not bool(tile.any())
                    if skipped:
                        skipped_tiles += 1
                    else:
                        s = logits_of(scenario, q[b, h, i0:i1] @ k[b, h, j0:j1].T, dh)
                        s = torch_oracle.modify_logits(scenario, s, H, range(i0, i1), range(j0, j1),
                                                       head=h)
                        s = s.masked_fill(~tile, neg_inf)
                        m_new = torch.maximum(m, s.max(dim=-1).values)
                        live = m_new != neg_inf  # rows with an allowed key so far
                        shift = torch.where(live, m_new, torch.zeros_like(m_new))
                        rescale = torch.where(live, torch.exp(m - shift), torch.ones_like(m))
                        p = torch.exp(s - shift[:, None])
                        l = rescale * l + p.sum(dim=-1)
                        if p_.dtype is not None:  # P stored in the dtype before P @ V
                            p = p_.store(p).float()
                        O = rescale[:, None] * O + p @ v[b, h, j0:j1]
                        m = torch.where(live, m_new, m)
                    steps.append({"batch": b, "head": h, "rows": [i0, i1], "keys": [j0, j1],
                                  "skipped": skipped, "m": m.clone(), "l": l.clone(),
                                  "rescale": rescale, "O": O.clone()})
                out = O / l[:, None]
                if mask.get("masked_rows", "nan") == "zero":
                    out = out.masked_fill(~allowed[i0:i1].any(dim=-1, keepdim=True), 0.0)
                context[b, i0:i1, h * dh_v:(h + 1) * dh_v] = p_.store(out)
    context = out_projection(p_, out_layer, context)
    return {"context": context, "skipped_tiles": skipped_tiles, "steps": steps}


def plain(value):
    """torch_oracle.plain, into dicts too."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return torch_oracle.plain(value)


def preset(name, **changes):
    with open(os.path.join(PRESETS, name + ".json")) as f:
        scenario = json.load(f)
    for key, value in changes.items():
        if key == "heads":
            scenario["projections"]["heads"] = value
        else:
            scenario[key] = value
    return scenario


# name: (scenario, P, C, Br, Bc)
CASES = {
    "journey-causal-p2": (preset("raschka-journey", mask={"kind": "causal"}), 2, 0, 2, 2),
    "journey-top-left-p2": (preset("raschka-journey", mask={"kind": "causal", "align": "top_left"}),
                            2, 0, 2, 2),
    "journey-window2-p4-c3": (preset("raschka-journey", mask={"kind": "sliding_window", "window": 2}),
                              4, 3, 3, 2),
    "mha-2heads-outproj-p3-c2": (preset("raschka-3.6-mha"), 3, 2, 2, 3),
    "karpathy-4heads-p0": (preset("karpathy-head", heads=4), 0, 0, 3, 5),
    "karpathy-window3-p5-c2": (preset("karpathy-head", mask={"kind": "sliding_window", "window": 3}),
                               5, 2, 4, 4),
    "packed-documents-p3-c1": (preset("packed-documents"), 3, 1, 2, 2),
    "gqa-8q-2kv-p3-c2": (preset("gqa-8-query-2-kv"), 3, 2, 3, 2),
    "gqa-8q-2kv-window3-p4": (preset("gqa-8-query-2-kv", mask={"kind": "sliding_window",
                                                               "window": 3}), 4, 0, 4, 3),
    # The logit modifiers inside both loops: soft-capping, gpt-oss's sink, ALiBi at absolute
    # positions (a sliding window moves the cache away from position 0), a sink in a window.
    "softcap-p3-c2": (preset("softcap"), 3, 2, 3, 2),
    "gpt-oss-sink-p2": (preset("gpt-oss-sink"), 2, 0, 2, 3),
    # Row 1 may see no key: its weights are 0 and the sink takes 1 (no nan), in both loops.
    "gpt-oss-sink-empty-row-p1": (preset("gpt-oss-sink", mask={"kind": "and", "of": [
        {"kind": "causal"}, {"kind": "custom", "allowed": [[1] * 8, [0] * 8] + [[1] * 8] * 6}]}),
                                  1, 0, 2, 2),
    "alibi-p4-c3": (preset("alibi"), 4, 3, 4, 3),
    "alibi-sink-window3-p5-c2": (preset("alibi", mask={"kind": "sliding_window", "window": 3},
                                        scaling={"sink": [0.5, -1.0, 2.0, 0.0]}), 5, 2, 3, 2),
    # bfloat16 and float16 (the oracle's Precision: bfloat16 with torch's own bfloat16 ops and
    # softmax, float16 in float32 with .half() after each op, products in float32): the decode
    # stores each step's stages; the tiles follow FlashAttention-2 (float32 state, P stored).
    "lowp-bfloat16-journey-causal-p2": (preset("raschka-journey", mask={"kind": "causal"},
                                               dtype="bfloat16"), 2, 0, 2, 2),
    "lowp-float16-journey-causal-p2": (preset("raschka-journey", mask={"kind": "causal"},
                                              dtype="float16"), 2, 0, 2, 2),
    "lowp-bfloat16-mha-2heads-outproj-p3-c2": (preset("raschka-3.6-mha", dtype="bfloat16"), 3, 2, 2, 3),
    "lowp-float16-mha-2heads-outproj-p3-c2": (preset("raschka-3.6-mha", dtype="float16"), 3, 2, 2, 3),
    "lowp-bfloat16-karpathy-window3-p5-c2": (preset("karpathy-head", mask={
        "kind": "sliding_window", "window": 3}, dtype="bfloat16"), 5, 2, 4, 4),
    "lowp-float16-karpathy-4heads-softmax-float32-p0": (preset(
        "karpathy-head", heads=4, dtype="float16", scaling={"softmax_dtype": "float32"}), 0, 0, 3, 5),
    "lowp-bfloat16-gqa-8q-2kv-p3-c2": (preset("gqa-8-query-2-kv", dtype="bfloat16"), 3, 2, 3, 2),
    # float64: the oracle runs the scenario with torch's default dtype float64, so both loops
    # run in float64 too.
    "f64-mha-2heads-outproj-p3-c2": (preset("raschka-3.6-mha", dtype="float64"), 3, 2, 2, 3),
    "f64-karpathy-window3-alibi-sink-p5-c2": (preset(
        "karpathy-head", mask={"kind": "sliding_window", "window": 3}, dtype="float64",
        positions={"kind": "alibi"}, scaling={"sink": 0.5}), 5, 2, 4, 4),
}


def main():
    torch.set_grad_enabled(False)
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else OUT
    os.makedirs(out, exist_ok=True)
    for name, (scenario, P, C, Br, Bc) in CASES.items():
        assert scenario.get("normalization", "softmax") == "softmax", name
        stages, out_layer = oracle(copy.deepcopy(scenario))
        golden = {
            "scenario": scenario, "torch": torch.__version__,
            "full_context": torch_oracle.plain(stages["context"]),
            "decode": {"prefill": P, "chunk": C, "expected": plain(
                decode(scenario, stages, out_layer, P, C))},
            "tiled": {"block_q": Br, "block_k": Bc, "expected": plain(
                tiled(scenario, stages, out_layer, Br, Bc))},
        }
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(golden, f, separators=(",", ":"))
            f.write("\n")
        print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
