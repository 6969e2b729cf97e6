// codegen_loops.cpp: the two loops of lessons/inference.h (the KV-cache decode and
// FlashAttention's online softmax) written out after the scenario's program, in PyTorch or in
// NumPy (the scenario program's library), each step as inference.cpp takes it and as
// tools/make_decode_goldens.py writes it in torch; see codegen.h.
//
// Each loop is one skeleton (the plan, the cache's bookkeeping, the tiles) whose @NAME@ fields
// are the scenario's settings and the lines PyTorch and NumPy spell differently.
//
// [SECTION] The loop's context and shared lines
// [SECTION] A step's softmax, a tile's start, the heads and the mask
// [SECTION] The two skeletons, PyTorch and NumPy
// [SECTION] GenerateDecodeCode and GenerateTiledCode
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/python/codegen.h"
#include "python/codegen_parts.h"

namespace attnlab {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The loop's context and shared lines
// ---------------------------------------------------------------------------------------------

/// What a loop program needs besides its template.
struct LoopCtx {
  const Scenario& s;
  Shape sh;
  bool numpy;
  // dtype bfloat16 / float16: the scenario program's stored() rounds what the engine stores
  // (codegen.cpp); the loops store the same values, float32 in between.
  bool low = IsLowPrecision(s.dtype);
};

/// `expr` stored in the dtype (the program's stored()) in low precision; `expr` otherwise.
std::string Stored(const LoopCtx& c, const std::string& expr) {
  return c.low ? "stored(" + expr + ")" : expr;
}

/// out_proj applied to `x` as the scenario program applies it (codegen_parts::LinearCall).
std::string OutProj(const LoopCtx& c, const std::string& x) {
  return codegen_parts::LinearCall(c.low, "out_proj", x);
}

/// A line `indent var = stored(var)  # comment` in low precision; "" otherwise.
std::string StoreLine(const LoopCtx& c, const std::string& indent, const std::string& var,
                      const std::string& comment) {
  return c.low ? indent + var + " = stored(" + var + ")  # " + comment + "\n" : "";
}

/// `text` with every @NAME@ of `fields` replaced by its value.
std::string Fill(std::string text, const std::vector<std::pair<std::string, std::string>>& fields) {
  for (const auto& [name, value] : fields) {
    const std::string key = "@" + name + "@";
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  }
  return text;
}

/// ", dtype=torch.float64" after the tensors a float64 PyTorch loop makes; "" otherwise.
std::string TensorDtype(const LoopCtx& c) {
  return !c.numpy && c.s.dtype == Dtype::kFloat64 ? ", dtype=torch.float64" : "";
}

/// The engine's logit rule (pipeline.cpp): scores x multiplier / sqrt(d_k), as an expression
/// appended to a scores expression.
std::string Scale(const LoopCtx& c) {
  std::string out;
  if (c.s.scaling.multiplier != 1.0)
    out += " * " + codegen_parts::PythonFloat(c.s.scaling.multiplier);
  if (c.s.scaling.sqrt_dk) out += c.numpy ? " / math.sqrt(head_size)" : " / head_size**0.5";
  return out;
}

/// `values` as a Python list literal, "[a, b, ...]".
std::string PythonList(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t k = 0; k < values.size(); ++k)
    out += (k ? ", " : "") + codegen_parts::PythonFloat(values[k]);
  return out + "]";
}

/// The per-head values of the logit modifiers both loops read (the pipeline's, stage_rules.h):
/// ALiBi's slopes (AlibiSlopesOf) and gpt-oss's sink logits (Scenario::scaling.sink), one per
/// query head, in the scenario's number type; "" without them.
std::string ModifierValues(const LoopCtx& c) {
  const std::string open = c.numpy ? "np.array(" : "torch.tensor(";
  const std::string close = TensorDtype(c) + ")";
  std::string py;
  if (c.s.positions.kind == PositionKind::kAlibi)
    py += "alibi_slopes = " + open + PythonList(AlibiSlopesOf(c.s.positions, c.sh.H)) + close +
          (c.s.positions.symmetric
               ? "  # ALiBi's slope of each head: logits - slope * |i - j|, i and j absolute "
                 "positions\n"
               : "  # ALiBi's slope of each head: logits - slope * (i - j), i and j absolute "
                 "positions\n");
  if (!c.s.scaling.sink.empty()) {
    std::vector<double> sinks;
    for (int64_t h = 0; h < c.sh.H; ++h) sinks.push_back(c.s.scaling.SinkOf(h));
    py += "sink_logits = " + open + PythonList(sinks) + close +
          "  # gpt-oss's sink: one more logit in each row's softmax, per head\n";
  }
  return py;
}

/// The lines that turn `var` (scaled logits) into the pipeline's logits before the mask
/// (stage_rules.h LogitRows): ALiBi's - slope * (i - j) with `slope` the head's slope and
/// `qpos`, `kpos` the absolute positions of the rows and columns, then c * tanh(var / c).
std::string ModifierLines(const LoopCtx& c, const std::string& indent, const std::string& var,
                          const std::string& slope, const std::string& qpos,
                          const std::string& kpos) {
  std::string py;
  if (c.s.positions.kind == PositionKind::kAlibi && c.s.positions.symmetric)
    py += indent + var + " = " + var + " - " + slope + " * " + (c.numpy ? "np.abs(" : "(") + qpos +
          " - " + kpos + (c.numpy ? ")" : ").abs()") +
          "  # ALiBi (symmetric) at the absolute positions\n";
  else if (c.s.positions.kind == PositionKind::kAlibi)
    py += indent + var + " = " + var + " - " + slope + " * (" + qpos + " - " + kpos +
          ")  # ALiBi at the absolute positions\n";
  if (c.s.scaling.softcap) {
    const std::string cap = codegen_parts::PythonFloat(*c.s.scaling.softcap);
    py += indent + var + " = " + cap + " * " + (c.numpy ? "np" : "torch") + ".tanh(" + var + " / " +
          cap + ")  # soft-capping (Gemma 2), before the mask\n";
  }
  return py;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] A step's softmax, a tile's start, the heads and the mask
// ---------------------------------------------------------------------------------------------

/// A decode step's sigmoid sink (the scenario program's WriteSinkSigmoid on the step's rows):
/// the plain softmax of the keys times gate = sigmoid(lse - sink), the sink's share 1 - gate.
std::string StepSigmoidSink(const LoopCtx& c) {
  if (c.numpy)
    return "    mx = step_logits.max(axis=-1, keepdims=True)\n"
           "    mx = np.where(np.isinf(mx), 0.0, mx)  # as torch.logsumexp: a row of -inf gives "
           "-inf\n"
           "    with np.errstate(divide=\"ignore\"):  # log(0) = -inf: a row that sees no key\n"
           "        lse = np.log(np.exp(step_logits - mx).sum(axis=-1, keepdims=True)) + mx\n"
           "    gate = 1 / (1 + np.exp(-(lse - sink_logits.reshape(1, heads, 1, 1))))  # the keys' "
           "share\n"
           "    step_weights = softmax_rows(step_logits) * gate  # a row that sees no key: nan * 0 "
           "= nan\n"
           "    step_sink = 1 - gate  # (B, heads, n, 1): what the sink took of each new row\n";
  return "    lse = torch.logsumexp(step_logits, dim=-1, keepdim=True)  # -inf for a row that sees "
         "no key\n"
         "    gate = torch.sigmoid(lse - sink_logits.view(1, heads, 1, 1))  # the keys' share "
         "(torchtitan)\n"
         "    step_weights = torch.softmax(step_logits, dim=-1) * gate  # a row that sees no key: "
         "nan * 0 = nan\n"
         "    step_sink = 1 - gate  # (B, heads, n, 1): what the sink took of each new row\n";
}

/// A decode step's softmax: over the keys, or with a sink over the keys and the head's sink
/// column, which is dropped before weights @ V (gpt-oss's reference sdpa), or with a sigmoid
/// sink StepSigmoidSink. Low precision: the weights (and the sink's share) stored, unless
/// scaling.softmax_dtype "float32" keeps them.
std::string StepSoftmax(const LoopCtx& c) {
  const bool store = c.s.scaling.softmax_dtype != SoftmaxDtype::kFloat32;
  const std::string kept =
      store ? "" : "    # softmax_dtype float32: the weights stay float32, not stored\n";
  if (c.s.scaling.sink.empty())
    return (c.numpy ? "    step_weights = softmax_rows(step_logits)  # (B, heads, n, keys)\n"
                    : "    step_weights = torch.softmax(step_logits, dim=-1)  # (B, heads, n, "
                      "keys)\n") +
           (store   ? StoreLine(c, "    ", "step_weights", "computed in float32, stored")
            : c.low ? kept
                    : "");
  const std::string store_sink =
      !c.low  ? ""
      : store ? "    step_weights, step_sink = stored(step_weights), stored(step_sink)  # "
                "computed in float32, stored\n"
              : kept;
  if (c.s.scaling.SigmoidSink()) return StepSigmoidSink(c) + store_sink;
  return std::string(
             c.numpy ? "    sink_column = np.broadcast_to(sink_logits.reshape(1, heads, 1, 1), (B, "
                       "heads, n, 1))\n"
                       "    with_sink = softmax_rows(np.concatenate([step_logits, sink_column], "
                       "axis=-1))\n"
                     : "    sink_column = sink_logits.view(1, heads, 1, 1).expand(B, heads, n, 1)\n"
                       "    with_sink = torch.softmax(torch.cat([step_logits, sink_column], "
                       "dim=-1), dim=-1)\n") +
         "    step_weights = with_sink[..., :-1]  # (B, heads, n, keys): the sink's column "
         "dropped\n"
         "    step_sink = with_sink[..., -1:]  # (B, heads, n, 1): what the sink took of each new "
         "row\n" +
         store_sink;
}

/// A query block's running maximum and sum: m = -inf, l = 0, or with a sink column m = sink,
/// l = 1 (the sink's column, exp(sink - m) = 1, rescaled like the rest and never multiplied
/// with V; a sigmoid sink leaves the online softmax alone).
std::string TileStart(const LoopCtx& c) {
  const std::string dt = TensorDtype(c), in = "            ";
  const bool sink = !c.s.scaling.sink.empty() && !c.s.scaling.SigmoidSink();
  if (c.numpy)
    return sink ? in +
                      "m = np.full(i1 - i0, sink_logits[h])  # running maximum per row: the sink's "
                      "logit\n" +
                      in +
                      "l = np.ones(i1 - i0)  # running sum of exp(logit - m): the sink's exp(0)\n"
                : in + "m = np.full(i1 - i0, -np.inf)  # running maximum per row\n" + in +
                      "l = np.zeros(i1 - i0)  # running sum of exp(logit - m)\n";
  return sink ? in +
                    "m = sink_logits[h].repeat(i1 - i0)  # running maximum per row: the sink's "
                    "logit\n" +
                    in + "l = torch.ones(i1 - i0" + dt +
                    ")  # running sum of exp(logit - m): the sink's exp(0)\n"
              : in + "m = torch.full((i1 - i0,), float('-inf')" + dt +
                    ")  # running maximum per row\n" + in + "l = torch.zeros(i1 - i0" + dt +
                    ")  # running sum of exp(logit - m)\n";
}

/// The sizes, Q, K and V split into heads (K and V into their K/V heads), and allowed_full.
std::string HeadsAndMask(const LoopCtx& c) {
  const char* split = c.numpy ? ".transpose(0, 2, 1, 3)" : ".transpose(1, 2)";
  // With RoPE the cache holds rotated keys (each rotated at its own position, once): the loop
  // reads the program's Q_rot and K_rot.
  const bool rope = c.s.positions.kind == PositionKind::kRope;
  std::ostringstream py;
  py << "B, T, heads, kv_heads, head_size, head_size_v = " << c.sh.B << ", " << c.sh.T << ", "
     << c.sh.H << ", " << c.sh.Kv() << ", " << c.sh.dh << ", " << c.sh.dh_v << "\n"
     << "group = heads // kv_heads  # query heads h*group .. read K/V head h // group\n"
     << "q_heads = " << (rope ? "Q_rot" : "Q") << ".reshape(B, T, heads, head_size)" << split
     << "  # (B, heads, T, head_size)\n"
     << "k_heads = " << (rope ? "K_rot" : "K") << ".reshape(B, T, kv_heads, head_size)" << split
     << "  # (B, kv_heads, T, head_size)\n"
     << "v_heads = V.reshape(B, T, kv_heads, head_size_v)" << split
     << "  # (B, kv_heads, T, head_size_v)\n"
     << codegen_parts::AllowedCellsLines(c.s, c.sh, c.numpy) << ModifierValues(c);
  if (c.numpy)
    py << "\n\ndef softmax_rows(x):  # stable softmax over the last axis; a row of -inf only: nan\n"
          "    with np.errstate(invalid=\"ignore\"):\n"
          "        e = np.exp(x - x.max(axis=-1, keepdims=True))\n"
          "        return e / e.sum(axis=-1, keepdims=True)\n\n\n";
  else
    py << "\n";  // the loop starts a cell of its own in a notebook
  return py.str();
}

/// The largest |`loop` - context| printed (nan in both: the same row), as max_abs_diff.
std::string PrintDifference(const LoopCtx& c, const std::string& loop, const char* what) {
  std::ostringstream py;
  py << "full = context.reshape(B, T, -1)  # the ordinary computation above\n";
  if (c.numpy)
    py << "gap = np.abs(" << loop << " - full)\ngap[np.isnan(" << loop
       << ") & np.isnan(full)] = 0  # nan in both: the same row\n"
       << "max_abs_diff = float(gap.max())\n";
  else
    py << "gap = (" << loop << " - full).abs()\ngap[" << loop
       << ".isnan() & full.isnan()] = 0  # nan in both: the same row\n"
       << "max_abs_diff = gap.max().item()\n";
  py << "print(\"largest |" << what << " - full| over the context:\", max_abs_diff)\n";
  return py.str();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The two skeletons, PyTorch and NumPy
// ---------------------------------------------------------------------------------------------

const char* kDecode =
    R"(# A KV-cache decode: a prefill of P tokens (in chunks of C), then one token per step. Each
# step appends its tokens' K and V rows to the cache (one per K/V head) and its queries attend
# over the cache with the mask at their positions; the rows must equal the context above.
prefill, chunk = @P@, @C@
window = @W@  # sliding window: the cache keeps at most W keys (a ring buffer); None: every key
size = chunk if chunk > 0 else max(prefill, 1)
plan = [(p, min(size, prefill - p)) for p in range(0, prefill, size)]  # (first, n): the prefill
plan += [(p, 1) for p in range(prefill, T)]  # then one token per step
cache_k, cache_v, cache_pos = k_heads[:, :, :0], v_heads[:, :, :0], []
decode_context = @ZEROS@
decode_steps = []
for first, n in plan:
    evicted = []
    if window is not None:  # keys no query of this step (nor a later one) can see leave first
        drop = sum(1 for p in cache_pos if p < first - window + 1)
        evicted += cache_pos[:drop]
        cache_k, cache_v, cache_pos = cache_k[:, :, drop:], cache_v[:, :, drop:], cache_pos[drop:]
@ATTEND@    decode_context[:, first:first + n] = step_context
    keys = list(cache_pos)
    if window is not None and len(cache_pos) > window:  # the ring buffer holds W keys
        drop = len(cache_pos) - window
        evicted += cache_pos[:drop]
        cache_k, cache_v, cache_pos = cache_k[:, :, drop:], cache_v[:, :, drop:], cache_pos[drop:]
    decode_steps.append({"first": first, "t": first + n, "keys": keys, "cache_len": len(cache_pos),
                         "evicted": evicted, "weights": step_weights})
@SINKREC@)";

// A decode step in PyTorch: the new rows appended, the step's scores, logits, weights, context.
const char* kDecodeStepTorch =
    R"(    cache_k = torch.cat([cache_k, k_heads[:, :, first:first + n]], dim=2)  # the new tokens' rows
    cache_v = torch.cat([cache_v, v_heads[:, :, first:first + n]], dim=2)
    cache_pos = cache_pos + list(range(first, first + n))
    top = @TOP@
    step_allowed = allowed_full[top:top + n][:, cache_pos]  # (n, keys)
    step_scores = @SCORES@
    step_logits = step_scores@SCALE@
@MODIFY@    step_logits = step_logits.masked_fill(~step_allowed, float('-inf'))
@STORELOGITS@@SOFTMAX@@ZERO@    step_context = @CONTEXT@
@OUTPROJ@)";

// The same step in NumPy.
const char* kDecodeStepNumpy =
    R"(    cache_k = np.concatenate([cache_k, k_heads[:, :, first:first + n]], axis=2)  # the new rows
    cache_v = np.concatenate([cache_v, v_heads[:, :, first:first + n]], axis=2)
    cache_pos = cache_pos + list(range(first, first + n))
    top = @TOP@
    step_allowed = allowed_full[top:top + n][:, cache_pos]  # (n, keys)
    step_scores = @SCORES@
    step_logits = step_scores@SCALE@
@MODIFY@    step_logits = np.where(step_allowed, step_logits, -np.inf)
@STORELOGITS@@SOFTMAX@@ZERO@    step_context = @CONTEXT@
)";

const char* kTiled =
    R"(# FlashAttention's forward pass: Q in blocks of Br rows, K and V in blocks of Bc keys. Per row
# a running maximum m, a running sum l of exp(logit - m) and an unnormalised output O; when m
# grows, l and O are rescaled by exp(m_old - m_new). Tiles the mask forbids are skipped.
Br, Bc = @BR@, @BC@
tiled_context = @ZEROS@
tile_steps, skipped_tiles = [], 0
@SINKINIT@for b in range(B):
    for h in range(heads):
        kv = h // group  # the K/V head query head h reads
        for i0 in range(0, T, Br):
            i1 = min(i0 + Br, T)
@INIT@            for j0 in range(0, T, Bc):
                j1 = min(j0 + Bc, T)
                tile = allowed_full[i0:i1, j0:j1]
                rescale = @ONES@
                skipped = not bool(tile.any())
                if skipped:  # every cell masked: nothing to compute
                    skipped_tiles += 1
                else:
@UPDATE@                tile_steps.append({"batch": b, "head": h, "rows": [i0, i1], "keys": [j0, j1],
                                   "skipped": skipped, "m": m.@COPY@(), "l": l.@COPY@(),
                                   "rescale": rescale, "O": O.@COPY@()})
@SINKREC@@DIVIDE@@ZERO@            tiled_context[b, i0:i1, h * head_size_v:(h + 1) * head_size_v] = @OUT@
@OUTPROJ@)";

// A query block's state and a tile's update in PyTorch.
const char* kTiledInitTorch =
    R"(@MLINIT@            O = torch.zeros(i1 - i0, head_size_v@DT@)  # unnormalised output
)";
const char* kTiledUpdateTorch =
    R"(                    s = (q_heads[b, h, i0:i1] @ k_heads[b, kv, j0:j1].T)@SCALE@
@MODIFY@                    s = s.masked_fill(~tile, float('-inf'))
                    m_new = torch.maximum(m, s.max(dim=-1).values)
                    live = m_new != float('-inf')  # rows with an allowed key so far
                    shift = torch.where(live, m_new, torch.zeros_like(m_new))
                    rescale = torch.where(live, torch.exp(m - shift), torch.ones_like(m))  # exp(m_old - m_new)
                    p = torch.exp(s - shift[:, None])
                    l = rescale * l + p.sum(dim=-1)
@STOREP@                    O = rescale[:, None] * O + p @ v_heads[b, kv, j0:j1]
                    m = torch.where(live, m_new, m)
)";

// The same in NumPy.
const char* kTiledInitNumpy =
    R"(@MLINIT@            O = np.zeros((i1 - i0, head_size_v))  # unnormalised output
)";
const char* kTiledUpdateNumpy =
    R"(                    s = np.matmul(q_heads[b, h, i0:i1], k_heads[b, kv, j0:j1].T)@SCALE@
@MODIFY@                    s = np.where(tile, s, -np.inf)
                    m_new = np.maximum(m, s.max(axis=-1))
                    live = m_new != -np.inf  # rows with an allowed key so far
                    shift = np.where(live, m_new, 0.0)
                    rescale = np.where(live, np.exp(m - shift), 1.0)  # exp(m_old - m_new)
                    p = np.exp(s - shift[:, None])
                    l = rescale * l + p.sum(axis=-1)
@STOREP@                    O = rescale[:, None] * O + np.matmul(p, v_heads[b, kv, j0:j1])
                    m = np.where(live, m_new, m)
)";

// ---------------------------------------------------------------------------------------------
// [SECTION] GenerateDecodeCode and GenerateTiledCode
// ---------------------------------------------------------------------------------------------

/// masked_rows "zero": a row no key is allowed for gets 0 (`indent` spaces before the line).
std::string ZeroRows(const LoopCtx& c, const std::string& indent, const std::string& rows,
                     const std::string& weights) {
  if (c.s.mask.masked_rows != MaskedRows::kZero) return "";
  return indent + weights + " = " +
         (c.numpy ? "np.where(" + rows + ".any(axis=-1, keepdims=True), " + weights + ", 0.0)"
                  : weights + ".masked_fill(~" + rows + ".any(dim=-1, keepdim=True), 0.0)") +
         "  # masked_rows \"zero\"\n";
}

/// The loop programs take softmax only (softmax_then_mask equals it over the allowed keys).
void CheckLoopNormalization(const Scenario& s) {
  if (!IsSoftmaxOverAllowedKeys(s.normalization))
    throw InferenceError(std::string("normalization: the generated loop writes softmax, not \"") +
                         Name(s.normalization) + "\" (softmax or softmax_then_mask)");
  if (s.scaling.scale_at == ScaleAt::kQAndK)
    throw InferenceError(
        "scaling.scale_at: the generated loops scale the scores (\"scores\"), not q and k "
        "(\"q_and_k\"); the full program (code without --loop) writes q and k scaled");
}

/// After a query block's last tile: what the sink took of each row (tiled_sink) and, for a
/// sigmoid sink, the gate O / l is multiplied by (inference.cpp's RecordSink, SigmoidGates).
std::string TileSinkLines(const LoopCtx& c) {
  if (c.s.scaling.sink.empty()) return "";
  const std::string in = "            ", lib = c.numpy ? "np" : "torch";
  if (!c.s.scaling.SigmoidSink())
    return in + "tiled_sink[b, h, i0:i1, 0] = " + lib +
           ".exp(sink_logits[h] - m) / l  # the sink's column, exp(sink - m), over l\n";
  const std::string gate =
      c.numpy
          ? in + "with np.errstate(divide=\"ignore\"):  # log(0) = -inf: a row that saw no key\n" +
                in +
                "    gate = 1 / (1 + np.exp(-((m + np.log(l)) - sink_logits[h])))  # sigmoid(lse - "
                "sink)\n"
          : in + "gate = torch.sigmoid((m + torch.log(l)) - sink_logits[h])  # lse = m + log l "
                 "(torchtitan)\n";
  return gate + in + "tiled_sink[b, h, i0:i1, 0] = 1 - gate  # what the sink took of each row\n";
}

}  // namespace

std::string GenerateDecodeCode(const Scenario& s, const DecodeOptions& opt) {
  const std::string program = GeneratePyTorchCode(s);
  const LoopCtx c{s, ValidateScenario(s), s.input.generator == Generator::kNumpy};
  CheckDecode(s, c.sh.T, opt);
  CheckLoopNormalization(s);
  const std::string width = std::to_string(c.sh.d_v);
  const std::string step = Fill(
      c.numpy ? kDecodeStepNumpy : kDecodeStepTorch,
      {{"TOP", s.mask.align == MaskAlign::kBottomRight
                   ? "first  # mask.align \"bottom_right\": query r sits at position first + r"
                   : "cache_pos[0]  # mask.align \"top_left\": query r as if at the cache's "
                     "first position + r"},
       {"SCORES", Stored(c, c.numpy ? "np.matmul(q_heads[:, :, first:first + n], "
                                      "np.repeat(cache_k, group, axis=1).swapaxes(-2, -1))"
                                    : "q_heads[:, :, first:first + n] @ "
                                      "cache_k.repeat_interleave(group, dim=1).transpose(-2, -1)")},
       {"SCALE", Scale(c)},
       {"STORELOGITS", StoreLine(c, "    ", "step_logits",
                                 "the whole rule (scaling, mask) in float32, stored once")},
       {"CONTEXT", Stored(c, c.numpy ? "np.matmul(step_weights, np.repeat(cache_v, group, "
                                       "axis=1)).transpose(0, 2, 1, 3).reshape(B, n, -1)"
                                     : "(step_weights @ cache_v.repeat_interleave(group, "
                                       "dim=1)).transpose(1, 2).reshape(B, n, -1)")},
       {"MODIFY",
        ModifierLines(
            c, "    ", "step_logits",
            c.numpy ? "alibi_slopes.reshape(1, heads, 1, 1)" : "alibi_slopes.view(1, heads, 1, 1)",
            c.numpy ? "np.arange(first, first + n)[:, None]"
                    : "torch.arange(first, first + n)[:, None]",
            c.numpy ? "np.array(cache_pos)[None, :]" : "torch.tensor(cache_pos)[None, :]")},
       {"SOFTMAX", StepSoftmax(c)},
       {"ZERO", ZeroRows(c, "    ", "step_allowed", "step_weights")},
       {"OUTPROJ",
        s.projections.out_proj ? "    step_context = " + OutProj(c, "step_context") + "\n" : ""}});
  return program + "\n" + HeadsAndMask(c) +
         Fill(kDecode,
              {{"P", std::to_string(opt.prefill)},
               {"C", std::to_string(opt.chunk)},
               {"W",
                s.mask.kind == MaskKind::kSlidingWindow ? std::to_string(s.mask.window) : "None"},
               {"ZEROS", c.numpy ? "np.zeros((B, T, " + width + "))"
                                 : "torch.zeros(B, T, " + width + TensorDtype(c) + ")"},
               {"ATTEND", step},
               {"SINKREC",
                s.scaling.sink.empty() ? "" : "    decode_steps[-1][\"sink\"] = step_sink\n"}}) +
         PrintDifference(c, "decode_context", "decode");
}

std::string GenerateTiledCode(const Scenario& s, int64_t block_q, int64_t block_k) {
  const std::string program = GeneratePyTorchCode(s);
  const LoopCtx c{s, ValidateScenario(s), s.input.generator == Generator::kNumpy};
  CheckTiled(s, block_q, block_k);
  CheckLoopNormalization(s);  // the sink's form (CheckTiled has refused other normalizations)
  const std::string dt = TensorDtype(c);
  return program + "\n" + HeadsAndMask(c) +
         Fill(kTiled,
              {{"BR", std::to_string(block_q)},
               {"BC", std::to_string(block_k)},
               {"ZEROS", c.numpy ? "np.zeros((B, T, heads * head_size_v))"
                                 : "torch.zeros(B, T, heads * head_size_v" + dt + ")"},
               {"INIT", Fill(c.numpy ? kTiledInitNumpy : kTiledInitTorch,
                             {{"MLINIT", TileStart(c)}, {"DT", dt}})},
               {"ONES", c.numpy ? "np.ones(i1 - i0)" : "torch.ones(i1 - i0" + dt + ")"},
               {"UPDATE",
                Fill(c.numpy ? kTiledUpdateNumpy : kTiledUpdateTorch,
                     {{"SCALE", Scale(c)},
                      {"STOREP", StoreLine(c, "                    ", "p",
                                           "P stored in the dtype before P @ V; l summed the "
                                           "float32 P (FlashAttention-2)")},
                      {"MODIFY", ModifierLines(c, "                    ", "s", "alibi_slopes[h]",
                                               c.numpy ? "np.arange(i0, i1)[:, None]"
                                                       : "torch.arange(i0, i1)[:, None]",
                                               c.numpy ? "np.arange(j0, j1)[None, :]"
                                                       : "torch.arange(j0, j1)[None, :]")}})},
               {"COPY", c.numpy ? "copy" : "clone"},
               {"SINKINIT",
                s.scaling.sink.empty() ? ""
                : c.numpy
                    ? "tiled_sink = np.zeros((B, heads, T, 1))  # what the sink took of each row\n"
                    : "tiled_sink = torch.zeros(B, heads, T, 1" + dt +
                          ")  # what the sink took of each row\n"},
               {"SINKREC", TileSinkLines(c)},
               {"DIVIDE",
                (c.numpy ? "            with np.errstate(invalid=\"ignore\", divide=\"ignore\"):\n"
                           "                out = O / l[:, None]"
                         : "            out = O / l[:, None]") +
                    std::string(c.s.scaling.SigmoidSink()
                                    ? " * gate[:, None]  # the division, then the sink's gate\n"
                                    : "  # the softmax's division, once per row at the end\n")},
               {"ZERO", ZeroRows(c, "            ", "allowed_full[i0:i1]", "out")},
               {"OUT", c.low ? "stored(out)  # O / l made in float32, stored" : "out"},
               {"OUTPROJ", !c.numpy && s.projections.out_proj
                               ? "tiled_context = " + OutProj(c, "tiled_context") + "\n"
                               : ""}}) +
         PrintDifference(c, "tiled_context", "tiled");
}

}  // namespace attnlab
