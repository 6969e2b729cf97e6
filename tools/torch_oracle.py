#!/usr/bin/python3
"""The PyTorch oracle of the scenario format (attention-lab/scenario@1): every stage of a
scenario computed with real PyTorch, as the notebooks compute it. tools/make_goldens.py writes
its results into tests/golden/scenarios/; the engine (core/src/model/pipeline.cpp) is tested against
them. The format itself is described in docs/scenario-format.md.

Run with Debian's interpreter, which has torch (python3-torch):

  /usr/bin/python3 tools/torch_oracle.py SCENARIO.json > EXPECTED.json

The output is one JSON object: X, Q, K, V, scores, logits, weights, context, mask, W_query,
W_key, W_value (nested lists of numbers; "nan", "inf", "-inf" as strings), var_K, tokens, and for
text input token_ids and vocab; weights_dropped comes first when dropout is on, and Q_rot and
K_rot (Q and K after RoPE's rotation, B x T x d_out) first of all with "positions" "rope".

Every operation is PyTorch's own, in the order a notebook writes it (scores * multiplier, then
/ sqrt(dh); masked_fill(-inf); softmax over the last dimension; ...), because that order is
what fixes the float32 results the engine must reproduce. A scenario with "dtype": "float64"
runs the same code with torch.float64 as the default dtype (its draws, nn.Linear, RoPE's
angles and every stage in float64).
"""
import json
import math
import re
import sys

import torch

# The notebooks' SimpleTokenizer split: punctuation marks, a double dash, or one whitespace
# character (Python's \s on str: Unicode spaces included), each kept as its own piece.
SPLIT_PATTERN = re.compile(r'([,.:;?_!"()\']|--|\s)')
DEFAULT_SPECIALS = ["<|endoftext|>", "<|unk|>"]
PROJECTION_NAMES = ("query", "key", "value")
DRAWING_INITS = {"torch_rand", "randn", "linear"}
# The seed a scenario that draws before any seed of its own starts from: libtorch's default
# (default_rng_seed_val, 67280421310721), which a new torch.Generator() holds. The default
# generator of a Python process does not: torch seeds it at random when it is imported.
DEFAULT_SEED = torch.Generator().initial_seed()


def split_text(text, tokenizer):
    """The tokens of `text`: chars keeps every character; words drops whitespace pieces and
    strips the rest; words_and_spaces keeps every non-empty piece, spaces too."""
    if tokenizer == "chars":
        return list(text)
    pieces = SPLIT_PATTERN.split(text)
    if tokenizer == "words_and_spaces":
        return [piece for piece in pieces if piece]
    if tokenizer == "words":
        stripped = (piece.strip() for piece in pieces)
        return [piece for piece in stripped if piece]
    raise ValueError("unknown tokenizer: %r" % tokenizer)


def default_labels(count):
    return ["x%d" % (i + 1) for i in range(count)]


def input_from_matrix(spec):
    X = torch.tensor(spec["values"], dtype=torch.get_default_dtype())
    if X.dim() == 2:  # one matrix: a batch of one
        X = X[None]
    labels = spec.get("tokens") or default_labels(X.shape[1])
    return X, {"tokens": labels}


def input_from_text(spec):
    tokens = split_text(spec["text"], spec.get("tokenizer", "words"))
    vocab = sorted(set(tokens)) + list(spec.get("special_tokens", DEFAULT_SPECIALS))
    first_index = {}
    for i, word in enumerate(vocab):
        first_index.setdefault(word, i)
    ids = [first_index[t] for t in tokens]
    torch.manual_seed(spec["seed"])
    table = torch.nn.Embedding(len(vocab), spec["d_in"]).weight.detach()
    X = table[torch.tensor(ids)][None].clone()
    return X, {"tokens": tokens, "token_ids": ids, "vocab": vocab}


def input_from_randn(spec):
    torch.manual_seed(spec["seed"])
    X = torch.randn(spec.get("batch", 1), spec["length"], spec["d_in"])
    return X, {"tokens": default_labels(X.shape[1])}


INPUT_SOURCES = {"matrix": input_from_matrix, "text": input_from_text, "randn": input_from_randn}


def make_weight(init, spec, name, d_in, d_out):
    """One projection's (W, bias or None), drawn from the generator where `init` draws."""
    if init == "identity":
        return torch.eye(d_in), None
    if init == "torch_rand":
        return torch.rand(d_in, d_out), None
    if init == "randn":
        return torch.randn(d_in, d_out), None
    if init == "linear":  # nn.Linear stores d_out x d_in; the format's W is x @ W: transpose
        layer = torch.nn.Linear(d_in, d_out, bias=spec.get("bias", False))
        bias = None if layer.bias is None else layer.bias.detach()
        return layer.weight.detach().T.contiguous(), bias
    if init == "matrix":
        return torch.tensor(spec["W_" + name], dtype=torch.get_default_dtype()), None
    raise ValueError("unknown projections.init: %r" % init)


def make_projections(spec, d_in):
    """W and bias per projection name, the output Linear (or None) and d_out."""
    init = spec["init"]
    d_out = d_in if init == "identity" else spec["d_out"]
    if init in DRAWING_INITS and spec.get("seed") is not None:
        torch.manual_seed(spec["seed"])
    weights, biases = {}, {}
    order = spec.get("order", list(PROJECTION_NAMES))
    if spec.get("per_head", False):
        # One module per head, as MultiHeadAttentionWrapper's CausalAttention heads: head h
        # draws its own three d_in x dh weights (in `order`) after head h - 1's; side by side
        # they make the d_in x d_out W.
        heads = spec.get("heads", 1)
        parts = {name: [] for name in PROJECTION_NAMES}
        bias_parts = {name: [] for name in PROJECTION_NAMES}
        for _ in range(heads):
            for name in order:
                W, bias = make_weight(init, spec, name, d_in, d_out // heads)
                parts[name].append(W)
                if bias is not None:
                    bias_parts[name].append(bias)
        weights = {name: torch.cat(parts[name], dim=1) for name in PROJECTION_NAMES}
        biases = {name: torch.cat(b) for name, b in bias_parts.items() if b}
    else:
        # Grouped K/V heads (kv_heads < heads): key and value project to kv_heads * dh columns,
        # as LLMs-from-scratch's GroupedQueryAttention makes W_key and W_value
        # nn.Linear(d_in, num_kv_groups * head_dim); the query stays d_in x d_out.
        heads = spec.get("heads", 1)
        d_kv = spec.get("kv_heads", heads) * (d_out // heads)
        for name in order:
            width = d_out if name == "query" else d_kv
            weights[name], bias = make_weight(init, spec, name, d_in, width)
            if bias is not None:
                biases[name] = bias
    out_layer = None
    if init == "linear" and spec.get("out_proj", False):
        # "out_proj": {"bias": false} is nn.Linear(d_out, d_out, bias=False): the weight only.
        out_bias = spec["out_proj"].get("bias", True) if isinstance(spec["out_proj"], dict) else True
        out_layer = torch.nn.Linear(d_out, d_out, bias=out_bias)
    return weights, biases, out_layer, d_out


def allowed_cells(mask, T):
    """The T x T bool mask of a scenario's "mask" (True where query i may see key j), each kind
    written out as the reference implementations write it (torch 1.13 has no
    scaled_dot_product_attention nor FlexAttention): positions i (rows) and j (columns)."""
    kind = mask.get("kind", "none")
    i = torch.arange(T).unsqueeze(1)
    j = torch.arange(T).unsqueeze(0)
    if kind == "none":
        return torch.ones(T, T, dtype=torch.bool)
    if kind == "causal":
        return torch.ones(T, T, dtype=torch.bool).tril()
    if kind == "custom":
        return torch.tensor(mask["allowed"]) != 0
    if kind == "sliding_window":  # gpt-oss / mlx-lm: W keys, the query's own included
        return (j <= i) & (j > i - mask["window"])
    if kind == "prefix_lm":  # attention-gym's prefix_lm_causal: the prefix, then causal
        return (j <= i) | (j < mask["prefix"])
    if kind == "document":  # packed documents: causal within a document, nothing across
        doc = torch.tensor(mask["doc_ids"])
        return (j <= i) & (doc.unsqueeze(1) == doc.unsqueeze(0))
    if kind in ("and", "or"):  # attention-gym's and_masks / or_masks, cell by cell
        parts = [allowed_cells(part, T) for part in mask["of"]]
        out = parts[0]
        for part in parts[1:]:
            out = (out & part) if kind == "and" else (out | part)
        return out
    raise ValueError("unknown mask.kind: %r" % kind)


def normalize(logits, allowed, how, shape):
    """weights from logits, row by row over the keys (the last dimension)."""
    if how == "softmax":
        return logits.softmax(dim=-1)
    if how == "softmax_naive":
        exps = logits.exp()
        return exps / exps.sum(dim=-1, keepdim=True)
    if how == "sum":
        kept = logits.masked_fill(~allowed, 0.0)
        return kept / kept.sum(dim=-1, keepdim=True)
    if how == "mean":
        ones = allowed.to(logits.dtype)
        return (ones / ones.sum(dim=-1, keepdim=True)).expand(*shape).clone()
    if how == "softmax_then_mask":
        # Raschka 3.5.1: attn_weights * mask_simple, then / row_sums (the logits unmasked).
        masked = logits.softmax(dim=-1) * allowed.to(logits.dtype)
        return masked / masked.sum(dim=-1, keepdim=True)
    if how == "softmax_dim_query":
        # The classic mistake (bug-softmax-dim): each key's column over the queries.
        return logits.softmax(dim=-2)
    if how == "softmax_then_mask_no_renorm":
        # The classic mistake (bug-mask-after-softmax): softmax, times the mask, no division.
        return logits.softmax(dim=-1) * allowed.to(logits.dtype)
    raise ValueError("unknown normalization: %r" % how)


def alibi_slopes(heads):
    """ALiBi's per-head slopes as the paper's reference code (ofirpress/attention_with_linear_biases)
    computes them: 2^(-8h/H), h = 1..H, for H a power of two; otherwise the slopes of the power
    of two just below H, then every other slope of twice that power for the remaining heads."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(heads).is_integer():
        return power_of_2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_2(closest) + power_of_2(2 * closest)[0::2][:heads - closest]


def alibi_slopes_of(positions, heads):
    """The slopes positions.slopes names: "paper" (default, alibi_slopes), "attention_gym"
    (attention-gym's generate_alibi_bias, attn_gym/mods/alibi.py: its score_mod's scale
    2^(-8(h+1)/H) for head h = 0..H-1, any H) or the numbers themselves, one per head."""
    rule = positions.get("slopes", "paper")
    if isinstance(rule, list):
        return [float(torch.tensor(m, dtype=torch.float32)) for m in rule]  # read as float32
    if rule == "attention_gym":  # as its score_mod computes them: an int32 head index made
        # float32 by PyTorch's default dtype (kept float32 here in a float64 run too)
        h = torch.arange(heads, dtype=torch.int32)
        return torch.exp2(-((h + 1).float() * 8.0 / heads)).tolist()
    assert rule == "paper", rule
    return alibi_slopes(heads)


def alibi_distance(positions, i, j):
    """ALiBi's distance of queries i from keys j (tensors that broadcast): i - j, or |i - j|
    with positions.symmetric (bidirectional models: a later key is penalized alike)."""
    d = i - j
    return d.abs() if positions.get("symmetric", False) else d


# ---- positions: RoPE, each layout and sign written as its reference implementation writes it ----

def rope_inv_freq(dh, theta):
    """1 / theta^(2p / dh), p < dh / 2, in the run's dtype (float32 as LLMs-from-scratch's
    compute_rope_params, Hugging Face's LlamaRotaryEmbedding, Meta's precompute_freqs_cis,
    nanochat; float64 for a float64 scenario)."""
    return 1.0 / (theta ** (torch.arange(0, dh, 2)[: dh // 2].to(torch.get_default_dtype()) / dh))


def rope_split_halves(x, theta):
    """LLMs-from-scratch's apply_rope (Hugging Face's rotate_half): x * cos + rotate_half(x) * sin,
    dimensions p and p + dh/2 paired; x is B x H x T x dh."""
    T, dh = x.shape[2], x.shape[3]
    angles = torch.arange(T)[:, None] * rope_inv_freq(dh, theta)[None, :]
    angles = torch.cat([angles, angles], dim=1)
    cos, sin = torch.cos(angles), torch.sin(angles)
    x1, x2 = x[..., : dh // 2], x[..., dh // 2:]
    rotated = torch.cat((-x2, x1), dim=-1)
    return (x * cos) + (rotated * sin)


def rope_split_halves_nanochat(x, theta):
    """nanochat's apply_rotary_emb (sign -1): y1 = x1 cos + x2 sin, y2 = x1 (-sin) + x2 cos."""
    T, dh = x.shape[2], x.shape[3]
    freqs = torch.outer(torch.arange(T), rope_inv_freq(dh, theta))
    cos, sin = freqs.cos(), freqs.sin()
    x1, x2 = x[..., : dh // 2], x[..., dh // 2:]
    y1 = x1 * cos + x2 * sin
    y2 = x1 * (-sin) + x2 * cos
    return torch.cat([y1, y2], -1)


def rope_interleaved(x, theta, sign):
    """Meta's Llama apply_rotary_emb: dimensions 2p and 2p + 1 as one complex number, times
    polar(1, angle) (the angle negated for sign -1)."""
    B, H, T, dh = x.shape
    dt = torch.get_default_dtype()  # float32 (Meta's .float()), or float64: complex128
    freqs = torch.outer(torch.arange(T), rope_inv_freq(dh, theta)).to(dt)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs * sign)
    xc = torch.view_as_complex(x.to(dt).reshape(B, H, T, dh // 2, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(3)


def sinusoidal(T, d):
    """The Annotated Transformer's PositionalEncoding (Vaswani et al. 2017, 3.5): sin on even,
    cos on odd dimensions (an odd d has one sin column more)."""
    pe = torch.zeros(T, d)
    position = torch.arange(0, T).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2) * -(math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[: d // 2])
    return pe


def rope(x, spec):
    theta = spec.get("theta", 10000.0)
    sign = spec.get("sign", 1)
    if spec.get("layout", "split_halves") == "interleaved":
        return rope_interleaved(x, theta, sign)
    return rope_split_halves(x, theta) if sign == 1 else rope_split_halves_nanochat(x, theta)


def modify_logits(scenario, logits, heads, rows, cols, head=None):
    """The scaled logits (..., heads, len(rows), len(cols); with `head`, that head's
    len(rows) x len(cols) block) with ALiBi's bias and then soft-capping, before the mask.
    rows and cols are the absolute positions of the queries and the keys (a decode step's or a
    tile's, range(T) for the full matrix): ALiBi's distance i - j is theirs."""
    scaling = scenario.get("scaling", {})
    positions = scenario.get("positions", {})
    if positions.get("kind") == "alibi":
        # ALiBi: -slope_h * (i - j) (|i - j| when symmetric) added to the scaled logits, before
        # the cap and the mask.
        slopes = torch.tensor(alibi_slopes_of(positions, heads), dtype=logits.dtype)
        slopes = slopes.view(1, heads, 1, 1) if head is None else slopes[head]
        i = torch.tensor(list(rows)).view(-1, 1)
        j = torch.tensor(list(cols)).view(1, -1)
        logits = logits + -(slopes * alibi_distance(positions, i, j))
    if "softcap" in scaling:  # Gemma 2's soft-capping, before the mask
        cap = scaling["softcap"]
        logits = cap * torch.tanh(logits / cap)
    return logits


def sink_logits(scenario, heads):
    """gpt-oss's sink logit of each head (scaling.sink: one number for all or one per head);
    None without a sink."""
    logit = scenario.get("scaling", {}).get("sink")
    if logit is None:
        return None
    return logit if isinstance(logit, list) else [logit] * heads


class Precision:
    """How a scenario's "dtype" stores each stage. float32: as computed. bfloat16: every tensor
    made torch.bfloat16 (drawn in float32, then .to(torch.bfloat16)) and a stage of one
    element-wise op (+ bias, RoPE's rotation) runs in PyTorch's bfloat16 (it computes in float32
    and rounds once); float16: PyTorch 1.13 has no CPU float16 matmul, so every op runs in
    float32 and its result is rounded with .half() (then widened back). A stage of several
    operations (the logits' scaling, ALiBi, soft-capping and mask; the normalization; dropout)
    is computed in float32 (wide()) and stored once, in both. Products are made in float32 from
    the stored operands in both, then stored: torch 1.13's CPU bfloat16 matmul rounds every product and
    partial sum to bfloat16, where GPUs and later PyTorch accumulate in float32, which is the
    engine's rule (pipeline.h, "bfloat16 and float16")."""

    def __init__(self, dtype):
        # float32 and float64 store as computed (run() sets torch's default dtype for float64).
        self.dtype = {"float32": None, "float64": None, "bfloat16": torch.bfloat16,
                      "float16": torch.float16}[dtype]

    def store(self, t):
        """t stored in the dtype: bfloat16 tensors stay bfloat16, float16 ones are float32
        tensors holding float16 values."""
        if self.dtype is None or not isinstance(t, torch.Tensor) or not t.is_floating_point():
            return t
        if self.dtype is torch.float16:
            return t.float().half().float()
        return t.to(self.dtype)

    def wide(self, t):
        """t to compute a rule of several operations on: float32 in low precision (the rule's
        result is then stored once, as the engine stores it), itself otherwise."""
        return t.float() if self.dtype is not None else t

    def finfo_min(self):
        return torch.finfo(self.dtype or torch.get_default_dtype()).min

    def mm(self, a, b):
        """a @ b accumulated in float32 from the stored operands, then stored."""
        if self.dtype is None:
            return a @ b
        return self.store(a.float() @ b.float())


QK_NORM_EPS = {"float32": torch.finfo(torch.float32).eps, "float64": torch.finfo(torch.float64).eps,
               "bfloat16": torch.finfo(torch.bfloat16).eps, "float16": torch.finfo(torch.float16).eps}


def qk_norm(x, spec, p, dtype):
    """projections.qk_norm on x (..., dh): RMSNorm of each head's row, re-derived from the
    composite F.rms_norm of PyTorch 2 (torch 1.13 has none): x * rsqrt(mean(x^2) + eps), times
    the weight if given, eps None meaning torch.finfo(dtype).eps. nanochat's gpt.py
    (CausalSelfAttention.forward) applies it weightless after the rotation and then multiplies
    q and k by 1.2; gemma_pytorch's model.py (GemmaAttention.forward, RMSNorm) with a weight,
    before the rotation. Low precision: computed in float32, stored, then the scale stored."""
    eps = spec.get("eps", QK_NORM_EPS[dtype])
    w = p.wide(x)
    y = w * torch.rsqrt(w.pow(2).mean(-1, keepdim=True) + eps)
    if "weight" in spec:
        y = y * torch.tensor(spec["weight"], dtype=torch.float32).to(y.dtype)
    y = p.store(y)
    if spec.get("scale", 1.0) != 1.0:
        y = p.store(p.wide(y) * spec["scale"])
    return y


def split_heads(M, B, T, heads, dh, how="transpose"):
    """M (B x T x heads*dh) as (B, heads, T, dh). projections.head_split "view_no_transpose" is
    the classic mistake (annotated-transformer #118, bentrevett #148): M.view(B, heads, T, dh),
    the same memory read as heads blocks of T rows."""
    if how == "view_no_transpose":
        return M.view(B, heads, T, dh)
    return M.view(B, T, heads, dh).transpose(1, 2)


def side_by_side(m):
    """(B, heads, T, dh) as B x T x heads*dh, the heads side by side as the app shows Q, K, V."""
    B, heads, T, dh = m.shape
    return m.transpose(1, 2).reshape(B, T, heads * dh)


def run(scenario):
    """Every stage of `scenario` (a parsed scenario@1 object) as tensors, plus var_K and the
    token lists, in the order the goldens store them; in float64 for "dtype": "float64"."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64 if scenario.get("dtype") == "float64" else torch.float32)
    try:
        return run_in_default_dtype(scenario)
    finally:
        torch.set_default_dtype(before)


def run_in_default_dtype(scenario):
    """run(scenario) in torch's default dtype."""
    torch.manual_seed(DEFAULT_SEED)  # a fresh process, as the app models it (DefaultSeed)
    p = Precision(scenario.get("dtype", "float32"))
    X, labels = INPUT_SOURCES[scenario["input"]["source"]](scenario["input"])
    X = p.store(X)
    B, T, d_in = X.shape
    if scenario.get("positions", {}).get("kind") == "sinusoidal":
        X = p.store(X + p.store(sinusoidal(T, d_in)))
    proj_spec = scenario["projections"]
    W, bias, out_layer, d_out = make_projections(proj_spec, d_in)
    W = {name: p.store(w) for name, w in W.items()}
    bias = {name: p.store(b) for name, b in bias.items()}
    heads = proj_spec.get("heads", 1)
    dh = d_out // heads

    projected = {}
    for name in PROJECTION_NAMES:
        projected[name] = p.mm(X, W[name])
        if name in bias:
            projected[name] = p.store(projected[name] + bias[name])
    Q, K, V = (projected[name] for name in PROJECTION_NAMES)
    how = proj_spec.get("head_split", "transpose")
    q = split_heads(Q, B, T, heads, dh, how)
    # Grouped K/V heads, as LLMs-from-scratch's GroupedQueryAttention: keys and values are
    # split into kv_heads heads, then each is repeated for the group_size = heads // kv_heads
    # query heads that share it (repeat_interleave along the head dimension). RoPE turns the
    # kv_heads heads of K before the repeat, as that module applies apply_rope.
    kv_heads = proj_spec.get("kv_heads", heads)
    group_size = heads // kv_heads
    k, v = (split_heads(M, B, T, kv_heads, dh, how) for M in (K, V))
    # Q, K and V as the heads read them (the projections themselves unless the split is the bug).
    Q, K, V = side_by_side(q), side_by_side(k), side_by_side(v)
    stages = {}
    positions = scenario.get("positions", {})
    norm = proj_spec.get("qk_norm")
    dtype = scenario.get("dtype", "float32")
    norm_after_rope = (norm is not None and positions.get("kind") == "rope" and
                       norm.get("order", "after_rope") == "after_rope")
    if norm is not None and not norm_after_rope:
        q, k = qk_norm(q, norm, p, dtype), qk_norm(k, norm, p, dtype)
        Q, K = side_by_side(q), side_by_side(k)
    if positions.get("kind") == "rope":
        q, k = p.store(rope(q, positions)), p.store(rope(k, positions))
        if norm_after_rope:
            q, k = qk_norm(q, norm, p, dtype), qk_norm(k, norm, p, dtype)
        stages["Q_rot"] = q.transpose(1, 2).reshape(B, T, d_out)
        stages["K_rot"] = k.transpose(1, 2).reshape(B, T, kv_heads * dh)
    k, v = (M.repeat_interleave(group_size, dim=1) for M in (k, v))

    scaling = scenario.get("scaling", {})
    if scaling.get("scale_at", "scores") == "q_and_k":
        # PyTorch's scaled_dot_product_attention, its math path (aten/src/ATen/native/
        # transformers/attention.cpp, _scaled_dot_product_attention_math; torch 1.13 has no
        # SDPA, so re-derived here): scale = the given scale (multiplier / sqrt(dh)) in double,
        # scaling_factor = sqrt(scale), query * scaling_factor, key^T * scaling_factor, then
        # their product; a negative scale multiplies q by -sqrt(|scale|). Each product is one
        # float32 rounding (opmath float in bfloat16 and float16), stored.
        scale = scaling.get("multiplier", 1.0)
        if scaling.get("sqrt_dk", True):
            scale = scale / math.sqrt(dh)
        f = math.sqrt(abs(scale))
        q_s = p.store(p.wide(q) * (0.0 - f if scale < 0 else f))
        k_s = p.store(p.wide(k).transpose(2, 3) * f)
        scores = p.mm(q_s, k_s)
        logits = p.wide(scores)  # already scaled
    else:
        scores = p.mm(q, k.transpose(2, 3))
        # The logit rule (scaling, ALiBi, soft-capping, the mask) is one stage: in low
        # precision computed in float32 from the stored scores and stored once (pipeline.h),
        # as a fused attention kernel keeps it in float32 registers; ALiBi's slopes in float32.
        logits = p.wide(scores) * scaling.get("multiplier", 1.0)
        if scaling.get("sqrt_dk", True):
            logits = logits / math.sqrt(dh)
    logits = modify_logits(scenario, logits, heads, range(T), range(T))
    allowed = allowed_cells(scenario.get("mask", {}), T)
    norm = scenario.get("normalization", "softmax")
    if norm not in ("softmax_then_mask", "softmax_then_mask_no_renorm"):  # these mask the weights
        # mask.fill: -inf, or the finite values repositories write (stored in the dtype: -1e9
        # is -inf in float16).
        fill = {"-inf": float("-inf"), "finfo_min": p.finfo_min(), "-1e9": -1e9,
                "-1e4": -1e4, "-2.3819763e38": -2.3819763e38,  # Gemma's (gemma_pytorch)
                }[scenario.get("mask", {}).get("fill", "-inf")]
        logits = logits.masked_fill(~allowed, fill)
    logits = p.store(logits)
    # scaling.softmax_dtype "float32": torch.softmax(logits, dim=-1, dtype=torch.float32), the
    # weights and their dropout kept in float32; the context computed from them in float32.
    upcast = scaling.get("softmax_dtype", "same") == "float32"
    keep = (lambda t: t) if upcast else p.store
    # Low precision: the weights computed in float32 from the stored logits (the sink's logit
    # in float32 too), then stored once unless upcast.
    logits_in = p.wide(logits)
    sink = None
    if "sink" in scaling:
        # gpt-oss's reference sdpa: one sink logit per head as one more column of every row's
        # softmax (torch.cat([QK, S], dim=-1).softmax(dim=-1)), dropped before the product with V.
        S = torch.tensor(sink_logits(scenario, heads), dtype=logits_in.dtype).reshape(1, heads, 1, 1).expand(B, -1, T, 1)
        if scaling.get("sink_form", "concat") == "sigmoid":
            # torchtitan (PR #2211): the sink applied after attention, each row's plain softmax
            # times sigmoid(lse - sink), the keys' share of the softmax over [logits, sink]; a
            # row that sees no key is nan (0/0) times sigmoid(-inf) = 0, still nan.
            lse = torch.logsumexp(logits_in, dim=-1, keepdim=True)
            gate = torch.sigmoid(lse - S)
            weights, sink = keep(logits_in.softmax(dim=-1) * gate), keep(1 - gate)
        else:
            full = keep(torch.cat([logits_in, S], dim=-1).softmax(dim=-1))
            weights, sink = full[..., :-1], full[..., -1:]
    else:
        weights = keep(normalize(logits_in, allowed, scenario.get("normalization", "softmax"),
                                 (B, heads, T, T)))
    if scenario.get("mask", {}).get("masked_rows", "nan") == "zero":
        # PyTorch >= 2.5's scaled_dot_product_attention (_safe_softmax): a row with no allowed
        # key gives 0 weights, not softmax's nan.
        weights = weights.masked_fill(~allowed.any(dim=-1, keepdim=True), 0.0)

    dropout = scenario.get("dropout", {})
    attended = weights
    if dropout.get("p", 0.0) > 0:
        if dropout.get("seed") is not None:
            torch.manual_seed(dropout["seed"])
        layer = torch.nn.Dropout(dropout["p"])
        layer.train()
        dropped_in = p.wide(weights)  # low precision: dropped and scaled in float32, then stored
        if proj_spec.get("per_head", False):  # each head's module drops its own weights
            attended = torch.stack([layer(dropped_in[:, h].contiguous()) for h in range(heads)],
                                   dim=1)
        else:
            attended = layer(dropped_in)
        attended = keep(attended)
        stages["weights_dropped"] = attended
    context = p.mm(attended, v)
    if how == "view_no_transpose":  # the bug merges the heads back without a transpose too
        context = context.contiguous().view(B, T, d_out)
    else:
        context = context.transpose(1, 2).contiguous().view(B, T, d_out)
    if out_layer is not None and p.dtype is None:
        context = out_layer(context)
    elif out_layer is not None:  # the product, then + bias, each stored
        W_out = p.store(out_layer.weight.T.detach())
        context = p.mm(context, W_out)  # stored
        if out_layer.bias is not None:
            context = p.store(context + p.store(out_layer.bias.detach()))

    stages.update(X=X, Q=Q, K=K, V=V, scores=scores, logits=logits, weights=weights,
                  context=context, mask=allowed.int(), W_query=W["query"], W_key=W["key"],
                  W_value=W["value"])
    if sink is not None:
        stages["sink"] = sink
    # The variance of K in the scenario's own float32 or float64; low precision: in float32.
    stages["var_K"] = (K.float() if p.dtype is not None else K).var().item()
    stages.update(labels)
    return stages


def plain(value):
    """A tensor, number or list as JSON-ready values: tensors as nested lists, non-finite
    floats as the strings "nan", "inf" and "-inf"."""
    if isinstance(value, torch.Tensor):
        if value.dim() == 0:
            return plain(value.item())
        return [plain(row) for row in value]
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def expected(scenario):
    """run(scenario) with every value made plain: what a golden's "expected" holds."""
    return {key: plain(value) for key, value in run(scenario).items()}


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: torch_oracle.py SCENARIO.json\n")
        return 2
    with open(argv[1]) as f:
        scenario = json.load(f)
    torch.set_grad_enabled(False)
    json.dump(expected(scenario), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
