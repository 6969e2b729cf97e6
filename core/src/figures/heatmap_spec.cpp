// heatmap_spec.cpp: see heatmap_spec.h.
//
// [SECTION] Stages: signed or not (the rest is the row of stages.h)
// [SECTION] Content: titles, formulas, help, labels
// [SECTION] Colours: range, ticks, legends, the spec
// [SECTION] Cells and labels: colour, ink, value text, fitting, thinning
#include "attnlab/figures/heatmap_spec.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "attnlab/base/text.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] Stages: signed or not (the rest is the row of stages.h)

bool StageIsDiverging(Stage stage, const ValueScan& scan) {
  switch (RowOf(stage).colours) {
    case StageColours::kUnit:  // the mask's 0/1, the sink's share of a row
      return false;
    case StageColours::kWeights:
      return scan.has_negative;
    case StageColours::kSigned:
      return true;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Content: titles, formulas, help, labels
namespace {

std::string Num(double v) { return FormatNumber(v, NumberStyle::kGeneral, 6); }

// Whether projections.qk_norm normalizes Q and K (rotated: Q_rot and K_rot) of `s`.
bool QkNormOn(const Scenario& s, bool rotated) {
  const auto& q = s.projections.qk_norm;
  const bool after = q && q->after_rope && s.positions.kind == PositionKind::kRope;
  return q && after == rotated;
}

/// "Q = X W_query", with " + b_query" when the projections have a bias (inside norm(...) with
/// QK-norm); for Q, K, V given or drawn directly, "Q (given)" or "Q = randn(B, T, d_k)".
std::string ProjectionTitle(const Scenario& s, const char* name, const char* role) {
  if (s.input.source == InputSource::kQkv) {
    if (s.input.QkvGiven()) return std::string(name) + " (given)";
    const bool numpy = s.input.generator == Generator::kNumpy;
    return std::string(name) + (numpy ? " = np.random.randn(T, " : " = randn(B, T, ") +
           (std::string(name) == "V" ? "d_v)" : "d_k)");
  }
  std::string t = std::string("X W_") + role;
  if (s.projections.bias && s.projections.init == ProjectionInit::kLinear)
    t += std::string(" + b_") + role;
  // projections.qk_norm applied to Q and K themselves (not after RoPE's rotation).
  const bool normed = std::string(name) != "V" && QkNormOn(s, false);
  return std::string(name) + " = " + (normed ? "norm(" + t + ")" : t);
}

std::string StageTitle(const Scenario& s, Stage stage) {
  switch (stage) {
    case Stage::kX: {
      const std::string x = s.input.source == InputSource::kText    ? "X = embedding(token ids)"
                            : s.input.source == InputSource::kRandn ? "X = randn(B, T, d_in)"
                                                                    : "X = the input matrix";
      return s.positions.kind == PositionKind::kSinusoidal ? x + " + PE" : x;
    }
    case Stage::kQ:
      return ProjectionTitle(s, "Q", "query");
    case Stage::kK:
      return ProjectionTitle(s, "K", "key");
    case Stage::kV:
      return ProjectionTitle(s, "V", "value");
    case Stage::kQRot:
      return QkNormOn(s, true) ? "Q_rot = norm(RoPE(Q))" : "Q_rot = RoPE(Q)";
    case Stage::kKRot:
      return QkNormOn(s, true) ? "K_rot = norm(RoPE(K))" : "K_rot = RoPE(K)";
    case Stage::kScores:
      if (s.scaling.scale_at == ScaleAt::kQAndK)  // PyTorch's SDPA math path
        return s.positions.kind == PositionKind::kRope
                   ? "scores = (Q_rot \u221As)(K_rot \u221As)\u1D40"
                   : "scores = (Q \u221As)(K \u221As)\u1D40";
      return s.positions.kind == PositionKind::kRope ? "scores = Q_rot K_rot\u1D40"
                                                     : "scores = Q K\u1D40";
    case Stage::kMask:
      return s.mask.kind == MaskKind::kNone ? "mask: none (all allowed)"
                                            : "mask: " + MaskName(s.mask);
    case Stage::kLogits: {
      std::string h = "scores";
      const bool at_scores = s.scaling.scale_at == ScaleAt::kScores;  // else scaled in q and k
      if (s.scaling.multiplier != 1.0 && at_scores) h += " \u00D7 m";
      if (s.scaling.sqrt_dk && at_scores) h += " / \u221Ad_k";
      if (s.positions.kind == PositionKind::kAlibi)  // ALiBi
        h += s.positions.symmetric ? " \u2212 m\u2095|i \u2212 j|" : " \u2212 m\u2095(i \u2212 j)";
      if (s.scaling.softcap) return "logits = c tanh(" + h + " / c)";  // Gemma 2
      return "logits = " + h;
    }
    case Stage::kWeights:
      switch (s.normalization) {
        case Normalization::kSoftmax:  // gpt-oss's sink: one more column, dropped after
          if (s.scaling.sink.empty()) return "weights = softmax(logits)";
          return s.scaling.sink_form == SinkForm::kSigmoid  // torchtitan's rescale
                     ? "weights = softmax(logits) \u00B7 \u03C3(lse \u2212 sink)"
                     : "weights = softmax([logits, sink])[:, :T]";
        case Normalization::kSoftmaxNaive:
          return "weights = exp(z) / \u03A3 exp(z)";
        case Normalization::kSum:
          return "weights = z / \u03A3 z";
        case Normalization::kMean:
          return "weights = 1 / n (mean)";
        case Normalization::kSoftmaxThenMask:
          return "weights = softmax(logits) \u00D7 mask / \u03A3";
        case Normalization::kSoftmaxDimQuery:
          return "weights = softmax(logits, dim=-2)";
        case Normalization::kSoftmaxThenMaskNoRenorm:
          return "weights = softmax(logits) \u00D7 mask (no renorm)";
      }
      return "weights";
    case Stage::kWeightsDropped:
      return "weights_dropped = dropout(weights)";
    case Stage::kContext:
      return s.projections.out_proj ? "context = out_proj(weights V)" : "context = weights V";
    case Stage::kSink:  // the column of gpt-oss's sink that the weights drop
      return "sink = softmax([logits, sink])[:, T]";
  }
  return "";
}

std::string StageSubtitle(const Scenario& s, const Shape& sh, Stage stage, int64_t head,
                          int64_t batch) {
  std::vector<std::string> parts;
  if (StageIsPerHead(stage) && sh.H > 1)
    parts.push_back("head " + std::to_string(head) + " of " + std::to_string(sh.H));
  if (RowOf(stage).batched && sh.B > 1) parts.push_back("batch " + std::to_string(batch));
  if (stage == Stage::kX) {
    parts.push_back(std::to_string(sh.T) + " tokens \u00D7 d_in = " + std::to_string(sh.d_in));
    if (s.positions.kind == PositionKind::kSinusoidal)
      parts.push_back("plus the sinusoidal encoding of each position");
  } else if (StageIsProjected(stage)) {
    // V has its own width when d_v differs from d_k (qkv input): "d_v = 3".
    const bool own = stage == Stage::kV && sh.dh_v != sh.dh;
    const int64_t w = own ? sh.dh_v : sh.dh;
    const std::string name = own ? "d_v = " : "d_k = ";
    // K and V with grouped heads: the columns of the K/V head this query head shares.
    const bool grouped = GroupsKv(sh) && StageIsKeySide(stage);
    const int64_t col_head = StageColumnHead(stage, sh, head);
    parts.push_back(sh.H > 1
                        ? name + std::to_string(w) + " columns (" + std::to_string(col_head * w) +
                              ".." + std::to_string((col_head + 1) * w - 1) + ")"
                        : name + std::to_string(w));
    if (grouped) parts.push_back(KvGroupLegend(sh, col_head));
    if (sh.H > 1 && s.projections.head_split != HeadSplit::kTranspose &&
        s.input.source != InputSource::kQkv)
      parts.push_back("as the heads read it: view(B, heads, T, d_k), no transpose (the bug)");
    if (stage == Stage::kQRot || stage == Stage::kKRot) parts.push_back(PositionsName(s.positions));
  } else if (stage == Stage::kScores) {
    parts.push_back("q\u00B7k, before scaling");
    if (s.positions.kind == PositionKind::kRope) parts.push_back("rotated by position");
  } else if (stage == Stage::kSink) {
    if (!s.scaling.sink.empty())
      parts.push_back("sink logit " + Num(s.scaling.SinkOf(std::min(head, sh.H - 1))));
    if (s.scaling.sink_form == SinkForm::kSigmoid)
      parts.push_back("sink = 1 \u2212 \u03C3(lse \u2212 s)");
    parts.push_back("each row's weights + sink = 1");
  } else if (stage == Stage::kContext && sh.H > 1 &&
             s.projections.head_split != HeadSplit::kTranspose) {
    parts.push_back("heads merged with view(B, T, d_out), no transpose (the bug)");
  } else if (stage == Stage::kMask) {
    parts.push_back(MaskLegend(s.mask));
    if (s.mask.masked_rows == MaskedRows::kZero)
      parts.push_back("a row with no allowed key: " + MaskedRowsLegend(s.mask.masked_rows));
  } else {
    parts.push_back(s.scaling.sqrt_dk ? "scaled by 1/\u221Ad_k" : "unscaled");
    parts.push_back("multiplier " + Num(s.scaling.multiplier));
    if (s.positions.kind == PositionKind::kAlibi)
      parts.push_back(
          "ALiBi slope " +
          Num(AlibiSlopesOf(s.positions,
                            sh.H)[static_cast<size_t>(std::clamp<int64_t>(head, 0, sh.H - 1))]));
    if (s.scaling.softcap) parts.push_back("soft-cap c = " + Num(*s.scaling.softcap));
    if (stage == Stage::kWeights || stage == Stage::kWeightsDropped) {
      parts.push_back(Name(s.normalization));
      if (!s.scaling.sink.empty())
        parts.push_back("sink logit " + Num(s.scaling.SinkOf(std::min(head, sh.H - 1))) +
                        ": rows sum below 1");
    }
    if (stage == Stage::kWeightsDropped) parts.push_back("dropout p " + Num(s.dropout.p));
  }
  // The precision, when it is not PyTorch's default: figures and maps of a float64 scenario
  // say so (the values drawn are its double stages rounded to float32 for the colours); the
  // mask, 0 or 1, has no precision to speak of.
  // bfloat16 / float16: every stage is stored in it, except the upcast softmax's weights.
  const bool upcast = s.scaling.softmax_dtype == SoftmaxDtype::kFloat32 &&
                      (stage == Stage::kWeights || stage == Stage::kWeightsDropped);
  if (s.dtype != Dtype::kFloat32 && stage != Stage::kMask)
    parts.push_back(upcast ? std::string("float32 (upcast softmax)") : std::string(Name(s.dtype)));
  if (s.mask.fill != MaskFill::kNegInf && stage == Stage::kLogits && s.mask.kind != MaskKind::kNone)
    parts.push_back(std::string("masked = ") + Name(s.mask.fill));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

/// projections.head_split "view_no_transpose" (more than one head, projected input): the label
/// of row r of head `col_head`'s n x w view (n heads of w columns) is the token piece it reads,
/// "journey[2:4]" (HeadSplitSource, the split's one rule); empty for any other scenario.
std::vector<std::string> SplitRowLabels(const Scenario& sc, const Shape& sh, int64_t col_head,
                                        int64_t n, int64_t w,
                                        const std::vector<std::string>& token_labels) {
  std::vector<std::string> out;
  if (sh.H < 2 || sc.projections.head_split == HeadSplit::kTranspose ||
      sc.input.source == InputSource::kQkv || w < 1 ||
      static_cast<int64_t>(token_labels.size()) != sh.T)
    return out;
  for (int64_t r = 0; r < sh.T; ++r) {
    const StageCell from =
        HeadSplitSource(sc.projections.head_split, sh.T, n * w, w, r, col_head * w);
    out.push_back(token_labels[static_cast<size_t>(from.row)] + "[" + std::to_string(from.col) +
                  ":" + std::to_string(from.col + w) + "]");
  }
  return out;
}

}  // namespace

std::vector<std::string> TokenLabels(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  for (const std::string& t : tokens) out.push_back(VisibleToken(t));
  return out;
}

HeatmapContent StageContent(const Stages& st, const Scenario& sc, Stage stage, int64_t head,
                            int64_t batch, const std::vector<std::string>& token_labels,
                            const ValueScan& scan) {
  HeatmapContent c;
  c.stage = stage;
  c.head = head;
  c.batch = batch;
  c.title = StageTitle(sc, stage);
  c.subtitle = StageSubtitle(sc, st.shape, stage, head, batch);
  c.help = RowOf(stage).help;
  c.row_labels = token_labels;
  if (RowOf(stage).shape == StageShape::kTokenByDimension) {
    c.row_axis = stage == Stage::kX ? "token" : StageIsKeySide(stage) ? "key" : "query";
    c.col_axis = "dimension";
    const Shape& sh = st.shape;
    const int64_t n = stage == Stage::kX         ? sh.d_in
                      : stage == Stage::kContext ? sh.d_v
                      : stage == Stage::kV       ? sh.dh_v
                                                 : sh.dh;
    const int64_t first = stage == Stage::kContext || stage == Stage::kX
                              ? 0
                              : StageColumnHead(stage, sh, head) * n;  // K/V: the head it shares
    // With several heads a column says whose it is: "h1·d2" (column 2 of Q, K, V or the
    // context, written by head 1); after out_proj the context's columns mix the heads.
    const bool per_head =
        sh.H > 1 && stage != Stage::kX && !(stage == Stage::kContext && sc.projections.out_proj);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t owner = stage == Stage::kContext ? j / std::max<int64_t>(sh.dh_v, 1)
                                                     : StageColumnHead(stage, sh, head);
      c.col_labels.push_back((per_head ? "h" + std::to_string(owner) + "·" : "") + "d" +
                             std::to_string(first + j));
    }
    // The buggy split: a head's row is a piece of another token's row, and says which.
    if (StageIsProjected(stage)) {
      const Shape& sh = st.shape;
      const bool key_side = StageIsKeySide(stage);
      const std::vector<std::string> split = SplitRowLabels(
          sc, sh, StageColumnHead(stage, sh, head), key_side ? sh.Kv() : sh.H, n, token_labels);
      if (!split.empty()) c.row_labels = split;
    }
  } else if (RowOf(stage).shape == StageShape::kQueryByOne) {
    c.col_axis = "sink";
    c.col_labels = {"sink"};
    const Shape& sh = st.shape;
    const std::vector<std::string> q = SplitRowLabels(sc, sh, head, sh.H, sh.dh, token_labels);
    if (!q.empty()) c.row_labels = q;
  } else {
    c.col_labels = token_labels;
    // Scores, mask, logits and weights of the buggy split: rows are Q's pieces, columns K's.
    const Shape& sh = st.shape;
    const std::vector<std::string> q = SplitRowLabels(sc, sh, head, sh.H, sh.dh, token_labels);
    const std::vector<std::string> k =
        SplitRowLabels(sc, sh, sh.KvHead(head), sh.Kv(), sh.dh, token_labels);
    if (!q.empty() && !k.empty()) {
      c.row_labels = q;
      c.col_labels = k;
    }
  }
  c.diverging = StageIsDiverging(stage, scan);
  // The logits hold the mask's -inf only where it acts on them (not softmax_then_mask).
  c.hatch_masked = RowOf(stage).hatches_masked &&
                   (stage != Stage::kLogits || MaskAppliesToLogits(sc.normalization));
  return c;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Colours: range, ticks, legends, the spec

namespace {

/// The largest weight of the rows that are not one-hot (a row whose largest weight is 1: a
/// causal row 0, or a fully peaked softmax), or the largest of all when every row is.
float LargestSpreadWeight(const ValueScan& scan) {
  float top = -INFINITY, all = -INFINITY;
  for (float m : scan.row_max) {
    all = std::max(all, m);
    if (m < 1.0f) top = std::max(top, m);
  }
  return top > 0 ? top : all;
}

/// The typical row's largest weight: the median of the row maxima.
float MedianRowMax(const ValueScan& scan) {
  std::vector<float> m = scan.row_max;
  if (m.empty()) return 1.0f;
  std::nth_element(m.begin(), m.begin() + m.size() / 2, m.end());
  return m[m.size() / 2];
}

}  // namespace

// ScanStage is in scan.cpp, next to ScanValues.

RangeMode ResolveRangeMode(Stage stage, bool diverging, int64_t cols, const ValueScan& scan,
                           RangeMode mode) {
  if (!StageIsWeights(stage) || diverging) return RangeMode::kFixed;
  if (mode == RangeMode::kAuto)
    mode = cols > 32 && !scan.row_max.empty() && MedianRowMax(scan) < 0.25f ? RangeMode::kLog
                                                                            : RangeMode::kFixed;
  if (mode != RangeMode::kFixed && scan.row_max.empty()) return RangeMode::kFixed;
  return mode;
}

ValueRange StageRange(Stage stage, bool diverging, const ValueScan& scan, RangeMode mode) {
  if (RowOf(stage).colours == StageColours::kUnit) return {0, 1};  // the mask; the sink: a share
  if (StageIsWeights(stage) && !diverging) {
    const float top = RangeFromExtremes(scan.lo, scan.hi, scan.any_finite, false).hi;
    if (mode == RangeMode::kData) {
      const float spread = scan.row_max.empty() ? top : LargestSpreadWeight(scan);
      return {0, spread > 0 ? spread : 1.0f};
    }
    if (mode == RangeMode::kPerRow) return {0, 1};
    if (mode == RangeMode::kLog) {
      // Down to the smallest positive weight, but no further than two decades under the
      // uniform 1/T (nor 1e-6): the bar spends its colours where the weights are.
      const double small = std::isfinite(scan.min_positive) ? scan.min_positive : 1e-6;
      const double uniform = 1.0 / std::max<size_t>(scan.row_max.size(), 1);
      const double floor = std::max(std::floor(std::log10(uniform)) - 2, -6.0);
      const float lo = static_cast<float>(std::max(std::floor(std::log10(small)), floor));
      return {std::min(lo, -1.0f), 0.0f};
    }
    return {0, std::max(1.0f, top)};
  }
  return RangeFromExtremes(scan.lo, scan.hi, scan.any_finite, diverging);
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

namespace {

const Colormap& PickColormap(const PresentationOptions& o, bool diverging) {
  if (!o.colormap.empty()) return FindColormap(o.colormap);
  const std::string& name = diverging ? o.diverging_colormap : o.sequential_colormap;
  return name.empty() ? DefaultColormap(diverging) : FindColormap(name);
}

std::vector<LegendEntry> Legends(const HeatmapSpec& s, const ValueScan& scan, bool any_masked) {
  if (s.mask_legend)
    return {{LegendKind::kAllowed, "1 allowed"}, {LegendKind::kMasked, "0 masked"}};
  std::vector<LegendEntry> out;
  if (s.hatch_masked && any_masked) out.push_back({LegendKind::kMasked, "masked"});
  if (scan.has_nan) out.push_back({LegendKind::kNan, "NaN"});
  // -inf is how logits are masked, so only other stages' infinities need a word, and the
  // logits' +inf (a score that overflowed, float16's above 65504).
  if (scan.has_inf && s.stage != Stage::kLogits) out.push_back({LegendKind::kInf, "\u00B1inf"});
  if (scan.has_pos_inf && s.stage == Stage::kLogits) out.push_back({LegendKind::kInf, "+inf"});
  return out;
}

}  // namespace

HeatmapSpec MakeHeatmapSpec(const HeatmapContent& content, int64_t rows, int64_t cols,
                            const ValueScan& scan, bool any_masked,
                            const PresentationOptions& options) {
  HeatmapSpec s;
  static_cast<HeatmapContent&>(s) = content;
  s.rows = rows;
  s.cols = cols;
  s.colormap = &PickColormap(options, content.diverging);
  const RangeMode mode =
      ResolveRangeMode(content.stage, content.diverging, cols, scan, options.range);
  s.range = StageRange(content.stage, content.diverging, scan, mode);
  if (mode == RangeMode::kLog) {
    s.scaling = ColorScaling::kLog;
    for (int e = static_cast<int>(s.range.lo); e <= 0; ++e)
      s.ticks.push_back(
          {static_cast<double>(e), e >= -2 ? FormatNumber(std::pow(10.0, e), NumberStyle::kTick)
                                           : "1e" + std::to_string(e)});
  } else {
    for (double t : NiceTicks(s.range.lo, s.range.hi, 4))
      s.ticks.push_back({t, FormatNumber(t, NumberStyle::kTick)});
  }
  if (mode == RangeMode::kPerRow) {
    s.scaling = ColorScaling::kPerRow;
    s.row_scale = scan.row_max;
  }
  s.mask_legend = content.stage == Stage::kMask;
  s.legends = Legends(s, scan, any_masked);
  // Colours that are not the plain [0, 1] of a weight say so, in the legend of screen and figure.
  if (mode == RangeMode::kPerRow)
    s.legends.push_back({LegendKind::kNote, "colours: per row"});
  else if (mode == RangeMode::kLog)
    s.legends.push_back({LegendKind::kNote, "colours: log\u2081\u2080"});
  else if (mode == RangeMode::kData)
    s.legends.push_back({LegendKind::kNote, "colours: 0 \u2013 largest"});
  s.values_wanted = ValuesWanted(options.values, rows, cols);
  return s;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Cells and labels: colour, ink, value text, fitting, thinning

float ScalePosition(const HeatmapSpec& spec, float v, int64_t row) {
  double t = 0;
  switch (spec.scaling) {
    case ColorScaling::kLinear:
      return LutIndex(v, spec.range) / 255.0f;
    case ColorScaling::kPerRow: {
      const float top = row >= 0 && static_cast<size_t>(row) < spec.row_scale.size()
                            ? spec.row_scale[static_cast<size_t>(row)]
                            : 1.0f;
      t = v == INFINITY ? 1.0 : top > 0 && std::isfinite(top) ? v / static_cast<double>(top) : 0.0;
      break;
    }
    case ColorScaling::kLog:
      t = v <= 0 ? 0.0
                 : (std::log10(static_cast<double>(v)) - spec.range.lo) /
                       (static_cast<double>(spec.range.hi) - spec.range.lo);
      break;
  }
  return static_cast<float>(std::lround(std::clamp(t, 0.0, 1.0) * 255.0) / 255.0);
}

Rgb CellColor(const HeatmapSpec& spec, float v, int64_t row) {
  if (std::isnan(v)) return kNanColor;
  if (spec.scaling == ColorScaling::kLinear) return spec.colormap->lut[LutIndex(v, spec.range)];
  return spec.colormap->lut[std::lround(ScalePosition(spec, v, row) * 255.0f)];
}

Rgb CellInk(Rgb bg) {
  auto linear = [](uint8_t c) {
    const double x = c / 255.0;
    return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
  };
  const double l = 0.2126 * linear(bg.r) + 0.7152 * linear(bg.g) + 0.0722 * linear(bg.b);
  const double with_black = (l + 0.05) / 0.05, with_white = 1.05 / (l + 0.05);
  return with_black >= with_white ? Rgb{0, 0, 0} : Rgb{255, 255, 255};
}

namespace {

/// What a cell prints when its value does not fit: "\u2026" (the tooltip has the value).
std::string EllipsisIfFits(float max_width, const MeasureText& measure) {
  return measure("\u2026") <= max_width ? "\u2026" : "";
}

}  // namespace

std::string FittedCellValue(float v, float max_width, const MeasureText& measure) {
  for (int decimals : {4, 3, 2}) {
    std::string t = FormatNumber(v, NumberStyle::kFixed, decimals);
    if (measure(t) <= max_width) return t;
    if (!std::isfinite(v)) break;
  }
  return EllipsisIfFits(max_width, measure);
}

namespace {

/// The text of a cell that does not depend on the room: the mask's 0 and 1, a masked logit's
/// -inf (as PyTorch prints it). A masked weight is a number like the others, 0 printed with the
/// map's decimals ("0.0000" beside "0.1385", as print(attn_weights) shows it in Raschka's 3.5.1).
std::optional<std::string> FixedCellText(Stage stage, float v, bool masked) {
  if (stage == Stage::kMask) return masked || v == 0 ? "0" : "1";
  if (!masked) return std::nullopt;
  if (stage == Stage::kLogits && v == -INFINITY) return "-inf";
  return std::nullopt;  // a weight, nan, or what a finite fill gives: the number
}

}  // namespace

std::string CellText(Stage stage, float v, bool masked, float max_width,
                     const MeasureText& measure) {
  if (std::optional<std::string> t = FixedCellText(stage, v, masked))
    return measure(*t) <= max_width ? *t : EllipsisIfFits(max_width, measure);
  return FittedCellValue(v, max_width, measure);
}

std::vector<std::string> MapCellTexts(Stage stage, const std::vector<float>& values,
                                      const std::vector<uint8_t>& masked, float max_width,
                                      const MeasureText& measure) {
  const size_t n = values.size();
  std::vector<std::string> texts(n);
  std::vector<size_t> numbers;  // cells that print a number which fits at 2 decimals
  for (size_t k = 0; k < n; ++k) {
    if (std::optional<std::string> t = FixedCellText(stage, values[k], masked[k] != 0)) {
      texts[k] = measure(*t) <= max_width ? *t : EllipsisIfFits(max_width, measure);
      continue;
    }
    texts[k] = FormatNumber(values[k], NumberStyle::kFixed, 2);
    if (std::isfinite(values[k]) && measure(texts[k]) <= max_width)
      numbers.push_back(k);
    else if (measure(texts[k]) > max_width)
      texts[k] = EllipsisIfFits(max_width, measure);
  }
  for (int decimals : {4, 3}) {
    std::vector<std::string> wider(numbers.size());
    bool fits = true;
    for (size_t i = 0; i < numbers.size() && fits; ++i) {
      wider[i] = FormatNumber(values[numbers[i]], NumberStyle::kFixed, decimals);
      fits = measure(wider[i]) <= max_width;
    }
    if (!fits) continue;
    for (size_t i = 0; i < numbers.size(); ++i) texts[numbers[i]] = std::move(wider[i]);
    break;
  }
  return texts;
}

std::string ShortestCellText(Stage stage, float v, bool masked) {
  if (std::optional<std::string> t = FixedCellText(stage, v, masked)) return *t;
  return FormatNumber(v, NumberStyle::kFixed, 2);
}

std::string FitLabel(const std::string& label, float max_width, const MeasureText& measure) {
  if (measure(label) <= max_width) return label;
  std::vector<size_t> starts;  // where each code point begins
  for (size_t i = 0; i < label.size(); i += DecodeUtf8At(label, i).len) starts.push_back(i);
  // The longest prefix of n < starts.size() code points that fits with its ellipsis. Widths grow
  // with n, so: double n from 1 until it no longer fits, then halve the gap (a search that
  // measures about 2 log2(n) prefixes no longer than twice the answer, however long the label:
  // dropping one code point at a time measured the whole label n times).
  if (starts.empty()) return "\u2026";
  const size_t last = starts.size() - 1;  // at least one code point is dropped
  auto fits = [&](size_t n) { return measure(label.substr(0, starts[n]) + "\u2026") <= max_width; };
  size_t lo = 0, hi = 1;  // lo fits (or is 0: the bare ellipsis); hi does not, or is last + 1
  while (hi <= last && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  hi = std::min(hi, last + 1);
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid;
  }
  return label.substr(0, starts[lo]) + "\u2026";
}

int LabelStep(float label_extent, float cell_extent) {
  if (!(cell_extent > 0)) return 1;
  return std::max(1, static_cast<int>(std::ceil(label_extent / cell_extent - 1e-4f)));
}

bool RotateColumnLabels(float widest_label, float gap, float cell_width) {
  return widest_label + gap > cell_width;
}

nlohmann::json HeatmapSpecJson(const HeatmapSpec& s) {
  nlohmann::json ticks = nlohmann::json::array(), legends = nlohmann::json::array();
  for (const ColorbarTick& t : s.ticks) ticks.push_back(t.text);
  for (const LegendEntry& e : s.legends) legends.push_back(e.text);
  return {{"stage", StageName(s.stage)},
          {"title", s.title},
          {"subtitle", s.subtitle},
          {"row_labels", s.row_labels},
          {"col_labels", s.col_labels},
          {"colormap", s.colormap ? s.colormap->name : ""},
          {"diverging", s.diverging},
          {"range", {s.range.lo, s.range.hi}},
          {"scaling", s.scaling == ColorScaling::kPerRow ? "per-row"
                      : s.scaling == ColorScaling::kLog  ? "log"
                                                         : "linear"},
          {"ticks", ticks},
          {"legends", legends},
          {"values_wanted", s.values_wanted}};
}

}  // namespace attnlab
