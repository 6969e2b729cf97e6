// cell_explanation.cpp: the text of a cell's explanation (see cell_explanation.h).
//
// [SECTION] The cell and its numbers
// [SECTION] Scores and logits
// [SECTION] Weights: the normaliser, the mask, the sink
// [SECTION] Input, RoPE, projections, dropout, mask
// [SECTION] A stage's lines; ExplainCell
#include "attnlab/figures/cell_explanation.h"

#include <algorithm>
#include <cmath>

#include "attnlab/base/text.h"
#include "attnlab/figures/stage_view.h"

namespace attnlab {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The cell and its numbers
// ---------------------------------------------------------------------------------------------

std::string Num(double v) { return FormatNumber(v, NumberStyle::kShortest); }
std::string Int(int64_t v) { return std::to_string(v); }

/// What the lines need: the run, the cell, its head's T x T matrices.
struct Cell {
  const Stages& st;
  const Scenario& s;
  const CellRef& ref;
  int64_t i, j;
  bool allowed;
  const Matrix& scores;
  const Matrix& logits;
  const Matrix& weights;
  std::vector<ExplanationLine>& out;

  void Text(std::string text) const { out.push_back({std::move(text), false}); }
  void Note(std::string text) const { out.push_back({std::move(text), true}); }
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Scores and logits
// ---------------------------------------------------------------------------------------------

/// "score = q_i · k_j = ..." and over which dimensions of Q and K.
void ScoreLines(const Cell& c) {
  const Shape& sh = c.st.shape;
  const int64_t h0 = c.ref.head * sh.dh, h1 = h0 + sh.dh - 1;
  if (c.s.scaling.scale_at == ScaleAt::kQAndK) {  // PyTorch's SDPA math path
    const QkScale f = QkScaleOf(c.s.scaling, sh.dh);
    c.Text("score = (q_" + Int(c.i) + " \xC3\x97 " + Num(f.q) + ") \xC2\xB7 (k_" + Int(c.j) +
           " \xC3\x97 " + Num(f.k) + ") = " + Num(c.scores(c.i, c.j)));
    c.Note(
        "q and k each scaled by \u221Ascale before the product, as PyTorch's "
        "scaled_dot_product_attention does");
  } else {
    c.Text("score = q_" + Int(c.i) + " \xC2\xB7 k_" + Int(c.j) + " = " + Num(c.scores(c.i, c.j)));
  }
  const bool rope = c.s.positions.kind == PositionKind::kRope;
  const std::string q = rope ? "Q_rot" : "Q", k = rope ? "K_rot" : "K";
  if (!GroupsKv(sh)) {
    c.Note("dot product over d_k = " + Int(sh.dh) + " dims (columns " + Int(h0) + ".." + Int(h1) +
           " of " + q + " and " + k + ")");
  } else {
    const int64_t g = sh.KvHead(c.ref.head), k0 = g * sh.dh;
    c.Note("dot product over d_k = " + Int(sh.dh) + " dims (columns " + Int(h0) + ".." + Int(h1) +
           " of " + q + ", " + Int(k0) + ".." + Int(k0 + sh.dh - 1) + " of " + k + ")");
    c.Note(KvGroupLegend(sh, g));
  }
  if (rope)
    c.Note("RoPE: q turned by position " + Int(c.i) + ", k by " + Int(c.j) +
           ": the score depends on their distance " + Int(c.i - c.j) + " only");
}

/// "logit = score × m / √d_k = ..." or -inf when masked.
void LogitLine(const Cell& c) {
  if (!c.allowed && MaskAppliesToLogits(c.s.normalization)) {
    c.Text("logit = -inf (masked)");
    return;
  }
  std::string how = "logit = " + Num(c.scores(c.i, c.j));
  // scale_at "q_and_k": the score is already scaled (ScoreLines), as the engine's rule says.
  const bool at_scores = c.s.scaling.scale_at == ScaleAt::kScores;
  const double mult = at_scores ? c.s.scaling.multiplier : 1.0;
  const bool sqrt_dk = at_scores && c.s.scaling.sqrt_dk;
  if (mult != 1.0) how += " \xC3\x97 " + Num(mult);
  if (sqrt_dk) how += " / \u221A" + std::to_string(c.st.shape.dh);
  if (!at_scores)
    how += " (scaled in q and k)";
  else if (mult == 1.0 && !sqrt_dk)
    how += " (no scaling)";
  if (c.s.positions.kind == PositionKind::kAlibi) {
    const double slope =
        AlibiSlopesOf(c.s.positions, c.st.shape.H)[static_cast<size_t>(c.ref.head)];
    const std::string open = c.s.positions.symmetric ? " \xC2\xB7 |" : " \xC2\xB7 (";
    how += " \xE2\x88\x92 " + Num(slope) + open + Int(c.i) + " \xE2\x88\x92 " + Int(c.j) +
           (c.s.positions.symmetric ? "|" : ")");
  }
  if (c.s.scaling.softcap) {
    // The scaled score before the cap, recomputed as the engine computes it (float32).
    float x = c.scores(c.i, c.j);
    if (mult != 1.0) x = x * static_cast<float>(mult);
    if (sqrt_dk) x = x / static_cast<float>(std::sqrt(double(c.st.shape.dh)));
    if (c.s.positions.kind == PositionKind::kAlibi)
      x = x + -(static_cast<float>(
                    AlibiSlopesOf(c.s.positions, c.st.shape.H)[static_cast<size_t>(c.ref.head)]) *
                static_cast<float>(AlibiDistance(c.i, c.j, c.s.positions.symmetric)));
    const std::string cap = Num(*c.s.scaling.softcap);
    c.Text("x = " + how.substr(8) + " = " + Num(x));
    c.Text("logit = " + cap + " \xC2\xB7 tanh(x / " + cap + ") = " + Num(c.logits(c.i, c.j)));
    c.Note("soft-capping (Gemma 2): every logit within (-" + cap + ", " + cap + ")");
    return;
  }
  how += " = " + Num(c.logits(c.i, c.j));
  c.Text(how);
  if (c.s.positions.kind == PositionKind::kAlibi)
    c.Note("ALiBi: head " + Int(c.ref.head) +
           (c.s.positions.symmetric ? "'s slope times the distance |i \xE2\x88\x92 j|, "
                                      "subtracted (far keys lose more, on either side)"
                                    : "'s slope times the distance i \xE2\x88\x92 j, "
                                      "subtracted (far keys lose more)"));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Weights: the normaliser, the mask, the sink
// ---------------------------------------------------------------------------------------------

/// What gpt-oss's sink took of row i (scaling.sink; -1 without one).
double SinkShare(const Cell& c) {
  if (c.st.sink.empty()) return -1;
  return c.st.Head(c.st.sink, c.ref.batch, c.ref.head)(c.i, 0);
}

/// Whether row i of the cell's matrix may attend to key k: its mask cell, or every key when the
/// mask has no row i.
bool KeyAllowed(const Cell& c, int64_t k) {
  const MaskMatrix& mask = c.st.mask;
  return mask.rows() <= c.i || mask(c.i, k);
}

/// Row i's sums over its allowed keys (double, recomputed to explain the number): the largest
/// logit, sum of exp(z - max), sum of exp(z), sum of z, and how many keys.
struct AllowedRow {
  double mx = -INFINITY, sum_exp = 0, sum_exp_raw = 0, sum = 0;
  int64_t n = 0;
};
AllowedRow AllowedRowSums(const Cell& c) {
  const auto row = c.logits.row(c.i);
  AllowedRow r;
  for (int64_t k = 0; k < row.size(); ++k)
    if (KeyAllowed(c, k))
      r.mx = std::max(r.mx, static_cast<double>(row(k))), r.sum += row(k), ++r.n;
  for (int64_t k = 0; k < row.size(); ++k)
    if (KeyAllowed(c, k)) {
      r.sum_exp += std::exp(static_cast<double>(row(k)) - r.mx);
      r.sum_exp_raw += std::exp(static_cast<double>(row(k)));
    }
  return r;
}

/// Row i's softmax with gpt-oss's sink: the max over the allowed logits and the sink's logit,
/// Σ = the sum of exp(z - max) over both (double, recomputed to explain the number); n the
/// allowed keys.
struct SinkSum {
  double max = -INFINITY, sum = 0;
  int64_t n = 0;
};
SinkSum SinkSoftmaxSum(const Cell& c) {
  const auto row = c.logits.row(c.i);
  SinkSum out;
  out.max = c.s.scaling.SinkOf(c.ref.head);
  for (int64_t k = 0; k < row.size(); ++k)
    if (KeyAllowed(c, k)) out.max = std::max(out.max, static_cast<double>(row(k))), ++out.n;
  out.sum = std::exp(c.s.scaling.SinkOf(c.ref.head) - out.max);
  for (int64_t k = 0; k < row.size(); ++k)
    if (KeyAllowed(c, k)) out.sum += std::exp(static_cast<double>(row(k)) - out.max);
  return out;
}

/// Row i's logsumexp over its allowed keys (double, recomputed to explain the number): max +
/// log of the sum of exp(z - max), -inf when no key is allowed (torch.logsumexp).
double RowLse(const Cell& c) {
  const AllowedRow r = AllowedRowSums(c);
  return r.mx == -INFINITY ? r.mx : r.mx + std::log(r.sum_exp);
}

/// scaling.sink_form "sigmoid" (torchtitan): the keys' share g = sigmoid(lse - s) of row i.
void SigmoidGateLines(const Cell& c) {
  const double sink = c.s.scaling.SinkOf(c.ref.head), lse = RowLse(c);
  const double g = 1 / (1 + std::exp(-(lse - sink)));
  c.Note("\xCF\x83(lse \xE2\x88\x92 s) = \xCF\x83(" + Num(lse) + " \xE2\x88\x92 " + Num(sink) +
         ") = " + Num(g) + ": lse = log \xCE\xA3 exp(z) over the allowed keys, s = head " +
         Int(c.ref.head) +
         "'s sink logit (torchtitan's rescale, the keys' share of a softmax "
         "with the sink as one more column)");
}

/// The sink's column of row i: its logit's share of the softmax over the row and the sink.
void SinkLines(const Cell& c) {
  if (c.s.scaling.sink_form == SinkForm::kSigmoid) {
    c.Text("sink = 1 \xE2\x88\x92 \xCF\x83(lse \xE2\x88\x92 s) = " + Num(SinkShare(c)));
    SigmoidGateLines(c);
    return;
  }
  const SinkSum ss = SinkSoftmaxSum(c);
  const double sink = c.s.scaling.SinkOf(c.ref.head), share = SinkShare(c);
  c.Text("sink = exp(s - max) / \xCE\xA3");
  c.Text("     = exp(" + Num(sink) + " - " + Num(ss.max) + ") / " + Num(ss.sum) + " = " +
         Num(share));
  c.Note("s = head " + Int(c.ref.head) + "'s sink logit; \xCE\xA3 = sum of exp(z - max) over the " +
         Int(ss.n) + " allowed keys and the sink; max includes the sink");
  c.Note("dropped before weights \xC2\xB7 V: row " + Int(c.i) + "'s weights sum to " +
         Num(1 - share));
}

/// A masked cell's weight: 0, or nan where the sigmoid sink form meets a row with no key.
void MaskedWeightLines(const Cell& c) {
  if (std::isnan(c.weights(c.i, c.j)) && c.s.scaling.sink_form == SinkForm::kSigmoid) {
    c.Text("weight = softmax \xC2\xB7 \xCF\x83(lse \xE2\x88\x92 s) = nan \xC2\xB7 0 = nan");
    c.Note(
        "row " + Int(c.i) +
        " sees no key: its softmax is 0 / 0 = nan and lse = \xE2\x88\x92inf, "
        "so \xCF\x83(\xE2\x88\x92inf) = 0 cannot undo it (the concat form gives 0 and the sink 1)");
    return;
  }
  c.Text(MaskAppliesToLogits(c.s.normalization)
             ? "weight = 0 (masked: exp(-inf) = 0)"
             : "weight = 0 (masked after the softmax: its share times 0)");
  if (SinkShare(c) >= 0) c.Note("the sink took " + Num(SinkShare(c)) + " of this row");
}

/// An allowed cell's weight with a sink (scaling.sink): the softmax rescaled by
/// sigmoid(lse - s) (sink_form "sigmoid"), or one more column in its sum (gpt-oss, "concat").
void SinkWeightLines(const Cell& c, const AllowedRow& r) {
  const double z = c.logits(c.i, c.j), w = c.weights(c.i, c.j);
  if (c.s.scaling.sink_form == SinkForm::kSigmoid) {
    c.Text("weight = exp(z - max) / \xCE\xA3 \xC2\xB7 \xCF\x83(lse \xE2\x88\x92 s)");
    c.Text("       = exp(" + Num(z) + " - " + Num(r.mx) + ") / " + Num(r.sum_exp) + " \xC2\xB7 " +
           Num(1 - SinkShare(c)) + " = " + Num(w));
    SigmoidGateLines(c);
  } else {
    const SinkSum ss = SinkSoftmaxSum(c);
    c.Text("weight = exp(z - max) / \xCE\xA3");
    c.Text("       = exp(" + Num(z) + " - " + Num(ss.max) + ") / " + Num(ss.sum) + " = " + Num(w));
    c.Note("\xCE\xA3 = sum of exp(z - max) over the " + Int(r.n) +
           " allowed keys and the sink (logit " + Num(c.s.scaling.SinkOf(c.ref.head)) +
           "); max includes the sink");
  }
  c.Note("the sink took " + Num(SinkShare(c)) + " of this row: its weights sum to " +
         Num(1 - SinkShare(c)));
}

/// The row's normaliser and the weight it gives, as the normalization computes it (recomputed
/// from the logits row only to explain the number).
void WeightLines(const Cell& c) {
  if (!c.allowed) return MaskedWeightLines(c);
  const AllowedRow r = AllowedRowSums(c);
  if (SinkShare(c) >= 0) return SinkWeightLines(c, r);
  const auto row = c.logits.row(c.i);
  const double z = c.logits(c.i, c.j), w = c.weights(c.i, c.j);
  switch (c.s.normalization) {
    case Normalization::kSoftmax:
      c.Text("weight = exp(z - max) / \xCE\xA3");
      c.Text("       = exp(" + Num(z) + " - " + Num(r.mx) + ") / " + Num(r.sum_exp) + " = " +
             Num(w));
      c.Note("max = the row's largest logit; \xCE\xA3 = sum of exp(z - max) over the " + Int(r.n) +
             " allowed keys");
      break;
    case Normalization::kSoftmaxNaive:
      c.Text("weight = exp(z) / \xCE\xA3 exp(z) = exp(" + Num(z) + ") / " + Num(r.sum_exp_raw) +
             " = " + Num(w));
      c.Note("float32 exp overflows to inf above 88.7, and inf / inf = nan");
      break;
    case Normalization::kSum:
      c.Text("weight = z / \xCE\xA3 z = " + Num(z) + " / " + Num(r.sum) + " = " + Num(w));
      break;
    case Normalization::kMean:
      c.Text("weight = 1 / n = 1 / " + Int(r.n) + " = " + Num(w));
      break;
    case Normalization::kSoftmaxThenMask: {
      // The softmax over every key first (the logits are unmasked), then the allowed shares.
      double mx_all = -INFINITY, sum_all = 0;
      for (int64_t k = 0; k < row.size(); ++k) mx_all = std::max(mx_all, double(row(k)));
      for (int64_t k = 0; k < row.size(); ++k) sum_all += std::exp(double(row(k)) - mx_all);
      double kept = 0;
      for (int64_t k = 0; k < row.size(); ++k)
        if (KeyAllowed(c, k)) kept += std::exp(double(row(k)) - mx_all) / sum_all;
      const double p = std::exp(z - mx_all) / sum_all;
      c.Text("softmax over all " + Int(row.size()) + " keys: p = " + Num(p));
      c.Text("weight = p / \xCE\xA3 p (allowed) = " + Num(p) + " / " + Num(kept) + " = " + Num(w));
      c.Note("the masked keys' share (" + Num(1 - kept) + ") is dropped, the rest renormalised");
      break;
    }
    case Normalization::kSoftmaxDimQuery: {
      // softmax over dim=-2: this key's column over the queries, not this query's row.
      const auto col = c.logits.col(c.j);
      double cmx = -INFINITY, csum = 0;
      for (int64_t k = 0; k < col.size(); ++k) cmx = std::max(cmx, double(col(k)));
      for (int64_t k = 0; k < col.size(); ++k) csum += std::exp(double(col(k)) - cmx);
      c.Text("weight = exp(z - max) / \xCE\xA3 down key " + Int(c.j) + "'s column");
      c.Text("       = exp(" + Num(z) + " - " + Num(cmx) + ") / " + Num(csum) + " = " + Num(w));
      c.Note("softmax over dim=-2, the queries: the column sums to 1, the row does not (the bug)");
      break;
    }
    case Normalization::kSoftmaxThenMaskNoRenorm: {
      // The same softmax over every key, times the mask, and no division afterwards.
      double mx_all = -INFINITY, sum_all = 0, kept = 0;
      for (int64_t k = 0; k < row.size(); ++k) mx_all = std::max(mx_all, double(row(k)));
      for (int64_t k = 0; k < row.size(); ++k) sum_all += std::exp(double(row(k)) - mx_all);
      for (int64_t k = 0; k < row.size(); ++k)
        if (KeyAllowed(c, k)) kept += std::exp(double(row(k)) - mx_all) / sum_all;
      c.Text("weight = softmax over all " + Int(row.size()) + " keys \xC3\x97 mask = " + Num(w));
      c.Note("not renormalised: this row sums to " + Num(kept) + ", not 1 (the bug)");
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Input, RoPE, projections, dropout, mask
// ---------------------------------------------------------------------------------------------

/// X's cell: where the input comes from.
void InputLines(const Cell& c) {
  switch (c.s.input.source) {
    case InputSource::kText:
      if (static_cast<size_t>(c.i) < c.st.token_ids.size())
        c.Text("row " + std::to_string(c.st.token_ids[c.i]) +
               " of the embedding table (the token's id), dimension " + Int(c.j));
      break;
    case InputSource::kRandn:
      c.Text("drawn by torch.randn from the input seed");
      break;
    default:
      c.Text("an entry of the input matrix (edit it in the input section)");
  }
}

/// Q_rot or K_rot's cell: the pair it turns with and the angle (stage_rules.h RopeRotate).
void RopeLines(const Cell& c) {
  const Shape& sh = c.st.shape;
  const PositionsSpec& p = c.s.positions;
  const bool q = c.ref.stage == Stage::kQRot;
  const int64_t half = sh.dh / 2;
  const bool halves = p.layout == RopeLayout::kSplitHalves;
  const int64_t pair = halves ? c.j % half : c.j / 2;
  const int64_t partner = halves ? (c.j < half ? c.j + half : c.j - half) : (c.j ^ 1);
  const bool first = halves ? c.j < half : c.j % 2 == 0;
  const std::string v = q ? "q" : "k", i = Int(c.i), d = Int(c.j), o = Int(partner);
  c.Text(v + "_rot_" + i + "[d" + d + "] = " + v + "_" + i + "[d" + d + "] cos a " +
         (first ? "\xE2\x88\x92 " : "+ ") + v + "_" + i + "[d" + o + "] sin a");
  const double inv = 1.0 / std::pow(p.theta, 2.0 * static_cast<double>(pair) / sh.dh);
  c.Note("a = " + std::string(p.sign < 0 ? "\xE2\x88\x92" : "") + "position " + i + " \xC3\x97 " +
         Num(p.theta) + "^(\xE2\x88\x92" + Int(2 * pair) + "/" + Int(sh.dh) +
         ") = " + Num(p.sign * static_cast<double>(c.i) * inv) + " rad (pair " + Int(pair) + ": d" +
         Int(std::min(c.j, partner)) + " with d" + Int(std::max(c.j, partner)) + ")");
}

/// Q, K (or Q_rot, K_rot after the rotation) under projections.qk_norm: the line that says the
/// number shown is the normalized one (stage_rules.h QkNormRows is the rule).
void QkNormLine(const Cell& c) {
  const auto& q = c.s.projections.qk_norm;
  const Stage stage = c.ref.stage;
  if (!q || stage == Stage::kX || stage == Stage::kV) return;
  const bool rotated = stage == Stage::kQRot || stage == Stage::kKRot;
  const bool after = q->after_rope && c.s.positions.kind == PositionKind::kRope;
  if (rotated != after) return;
  std::string line =
      "then QK-norm: this head's row divided by its root mean square, "
      "sqrt(mean(x\xC2\xB2) + eps)";
  if (!q->weight.empty()) line += ", times weight[d" + Int(c.j % c.st.shape.dh) + "]";
  if (q->scale != 1.0) line += ", times " + Num(q->scale);
  c.Note(line);
}

/// X, Q, K or V's cell: where the number comes from.
void ProjectionLines(const Cell& c) {
  const Stage stage = c.ref.stage;
  const Shape& sh = c.st.shape;
  if (stage == Stage::kX) return InputLines(c);
  if (stage == Stage::kQRot || stage == Stage::kKRot) return RopeLines(c);
  if (c.s.input.source == InputSource::kQkv) {
    c.Text(c.s.input.QkvGiven()
               ? "given in the scenario (no embeddings, no projections)"
               : "drawn directly from the generator (no embeddings, no projections)");
    return;
  }
  const std::string role = stage == Stage::kQ ? "query" : stage == Stage::kK ? "key" : "value";
  const std::string letter = stage == Stage::kQ ? "q" : stage == Stage::kK ? "k" : "v";
  const int64_t hw = stage == Stage::kV ? sh.dh_v : sh.dh;  // V: its own head width
  // K and V: the columns of the K/V head this query head reads (GQA), its own without.
  const int64_t col_head = StageColumnHead(stage, sh, c.ref.head);
  const std::string d = Int(col_head * hw + c.j);
  if (c.s.projections.head_split != HeadSplit::kTranspose && sh.H > 1) {
    // The heads read other tokens' pieces (HeadSplitSource, the one rule of the split).
    const int64_t width = (stage == Stage::kQ ? sh.H : sh.Kv()) * hw;
    const StageCell from =
        HeadSplitSource(c.s.projections.head_split, sh.T, width, hw, c.i, col_head * hw + c.j);
    c.Text(letter + "_" + Int(c.i) + "[d" + d + "] = x_" + Int(from.row) + " \xC2\xB7 W_" + role +
           "[:, " + Int(from.col) + "]: token " + Int(from.row) + "'s, not token " + Int(c.i) +
           "'s");
    c.Note("split with view(B, heads, T, d_k), no transpose: head " + Int(col_head) + "'s row " +
           Int(c.i) + " is the d_k numbers at " + Int(from.row) + ", " +
           Int(from.col - from.col % hw) + ".." + Int(from.col - from.col % hw + hw - 1) +
           " of the projection (the bug)");
    return;
  }
  c.Text(letter + "_" + Int(c.i) + "[d" + d + "] = x_" + Int(c.i) + " \xC2\xB7 W_" + role + "[:, " +
         d + "] = \xCE\xA3_c x_" + Int(c.i) + "[c] W_" + role + "[c, " + d + "]");
  c.Note("over d_in = " + Int(sh.d_in) + " input dimensions" +
         (c.s.projections.bias ? ", plus the bias" : ""));
  if (sh.H > 1)
    c.Note("head " + Int(c.ref.head) + " uses columns " + Int(col_head * hw) + ".." +
           Int((col_head + 1) * hw - 1));
  if (stage != Stage::kQ && GroupsKv(sh)) c.Note(KvGroupLegend(sh, col_head));
}

/// Dropout's keep or drop of the weight, after the weight's own lines.
void DropoutLines(const Cell& c) {
  const double w = c.weights(c.i, c.j), v = c.ref.value;
  WeightLines(c);
  // Dropout multiplies by the mask: a dropped weight is w * 0, nan when w is inf.
  const bool dropped = std::isinf(w) ? std::isnan(v) : v == 0 && w != 0;
  if (dropped)
    c.Text("dropped: " + Num(w) + " x 0 = " + Num(v) + " (p = " + Num(c.s.dropout.p) + ")");
  else
    c.Text("kept: " + Num(w) + " / (1 - " + Num(c.s.dropout.p) + ") = " + Num(v));
}

/// Why the mask allows or masks the cell, by the mask's kind (its legend: MaskLegend).
void MaskLines(const Cell& c) {
  const MaskSpec& m = c.s.mask;
  const bool future = c.j > c.i;
  const bool causal_family = m.kind == MaskKind::kCausal || m.kind == MaskKind::kSlidingWindow ||
                             m.kind == MaskKind::kDocument ||
                             (m.kind == MaskKind::kPrefixLm && c.j >= m.prefix);
  if (c.allowed) {
    if (m.kind == MaskKind::kPrefixLm && c.j < m.prefix)
      c.Text("allowed: key " + Int(c.j) + " is in the prefix, which every query sees");
    else if (m.kind == MaskKind::kSlidingWindow)
      c.Text("allowed: key " + Int(c.j) + " is " + Int(c.i - c.j) + " back, inside the window of " +
             MaskLegend(m));
    else
      c.Text("allowed: the query may attend to this key");
  } else if (future && causal_family) {
    c.Text("masked: this key comes after the query (the future)");
  } else if (m.kind == MaskKind::kSlidingWindow) {
    c.Text("masked: key " + Int(c.j) + " is " + Int(c.i - c.j) + " back, outside the window of " +
           MaskLegend(m));
  } else if (m.kind == MaskKind::kDocument) {
    c.Text("masked: key " + Int(c.j) + " is in document " +
           std::to_string(m.doc_ids[static_cast<size_t>(c.j)]) + ", the query in document " +
           std::to_string(m.doc_ids[static_cast<size_t>(c.i)]) + ": nothing across");
  } else {
    c.Text(MaskAppliesToLogits(c.s.normalization)
               ? "masked: the logit becomes -inf, the weight 0"
               : "masked: the weight is multiplied by 0 after the softmax");
  }
  if (m.kind != MaskKind::kNone && m.kind != MaskKind::kCausal && m.kind != MaskKind::kCustom)
    c.Note("mask: " + MaskName(m) + ": " + MaskLegend(m));
  if (c.st.mask.rows() > c.i && !c.st.mask.row(c.i).any())
    c.Note("no key allowed in this row: " + MaskedRowsLegend(m.masked_rows));
  if (m.kind == MaskKind::kCustom) c.Note("click to toggle, drag to paint");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] A stage's lines; ExplainCell
// ---------------------------------------------------------------------------------------------

/// The lines of one stage, from the score to the stage itself.
void StageLines(const Cell& c) {
  switch (c.ref.stage) {
    case Stage::kX:
    case Stage::kQ:
    case Stage::kK:
    case Stage::kV:
    case Stage::kQRot:
    case Stage::kKRot:
      ProjectionLines(c);
      QkNormLine(c);
      break;
    case Stage::kScores:
      ScoreLines(c);
      break;
    case Stage::kMask:
      MaskLines(c);
      break;
    case Stage::kLogits:
      ScoreLines(c);
      LogitLine(c);
      break;
    case Stage::kWeights:
      ScoreLines(c);
      LogitLine(c);
      WeightLines(c);
      break;
    case Stage::kWeightsDropped:
      DropoutLines(c);
      break;
    case Stage::kSink:
      SinkLines(c);
      break;
    case Stage::kContext: {
      const Shape& sh = c.st.shape;
      // The heads' cell this context cell holds: itself, or where the buggy merge put it.
      const StageCell from = sh.dh_v > 0 ? HeadSplitTarget(c.s.projections.head_split, sh.T, sh.d_v,
                                                           sh.dh_v, {c.i, c.j})
                                         : StageCell{c.i, c.j};
      const int64_t h = sh.dh_v > 0 ? from.col / sh.dh_v : 0;  // dh_v per head
      c.Text("= \xCE\xA3_k weight[" + Int(from.row) + ", k] \xC2\xB7 v_k[d" + Int(from.col) +
             "]  (head " + Int(h) + ")");
      if (from.row != c.i || from.col != c.j)
        c.Note("merged with view(B, T, d_out), no transpose: head " + Int(h) + "'s row " +
               Int(from.row) + " lands in token " + Int(c.i) + "'s row (the bug)");
      if (c.s.projections.out_proj) c.Note("then out_proj mixes the dimensions");
      break;
    }
  }
}

}  // namespace

bool StageIsTokenByToken(Stage s) { return RowOf(s).shape == StageShape::kQueryByKey; }

CellExplanation ExplainCell(const Stages& st, const Scenario& s, const CellRef& ref) {
  CellExplanation out;
  const int64_t i = ref.i, j = ref.j;
  if (ref.stage == Stage::kSink)
    out.heading = "query " + Int(i) + " (\"" + ref.row_label + "\")  \xE2\x86\x92  the sink";
  else if (!StageIsTokenByToken(ref.stage))
    out.heading = std::string(StageName(ref.stage)) + "[" + Int(i) + ", " + ref.col_label + "]  (" +
                  (StageIsKeySide(ref.stage) ? "key" : "token") + " \"" + ref.row_label + "\")";
  else
    out.heading = "query " + Int(i) + " (\"" + ref.row_label + "\")  \xE2\x86\x92  key " + Int(j) +
                  " (\"" + ref.col_label + "\")";
  const bool allowed = st.mask.rows() > i && st.mask.cols() > j ? st.mask(i, j) != 0 : true;
  const Cell cell{st,
                  s,
                  ref,
                  i,
                  j,
                  allowed,
                  st.Head(st.scores, ref.batch, ref.head),
                  st.Head(st.logits, ref.batch, ref.head),
                  st.Head(st.weights, ref.batch, ref.head),
                  out.lines};
  StageLines(cell);
  out.value = "value: " + Num(ref.value);
  // bfloat16 / float16: the stored value against the same scenario's float32 run (Stages::f32).
  const Matrix f32 = ReferenceCells(st, ref.stage, ref.head, ref.batch);
  if (IsLowPrecision(st.dtype) && i < f32.rows() && j < f32.cols()) {
    const double want = f32(i, j), err = ref.value - want;
    out.value += std::string(" (") + Name(st.dtype) + ");  float32: " + Num(want);
    if (std::isfinite(err))
      out.value += ",  rounding error " + std::string(err > 0 ? "+" : "") + Num(err);
    else if (std::isinf(ref.value) && std::isfinite(want))
      out.value += std::string(",  beyond ") + Name(st.dtype) + "'s range: it overflowed";
    else if (std::isnan(ref.value) && !std::isnan(want))
      out.value += std::string(",  nan only in ") + Name(st.dtype);
  }
  out.note = "Rows and columns count from 0, as PyTorch indexes them; the labels are the tokens.";
  return out;
}

}  // namespace attnlab
