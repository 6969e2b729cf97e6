// heatmap_spec.cpp: see heatmap_spec.h.
//
// [SECTION] Stages: names, per-head, signed
// [SECTION] Content: titles, formulas, help, labels
// [SECTION] Colours: range, ticks, legends, the spec
// [SECTION] Cells and labels: colour, ink, value text, fitting, thinning
#include "attnlab/heatmap_spec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attnlab/text.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] Stages: names, per-head, signed

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kScores:
      return "scores";
    case Stage::kMask:
      return "mask";
    case Stage::kLogits:
      return "logits";
    case Stage::kWeights:
      return "weights";
    case Stage::kWeightsDropped:
      return "weights_dropped";
    case Stage::kContext:
      return "context";
  }
  return "";
}

bool StageIsPerHead(Stage s) {
  return s == Stage::kScores || s == Stage::kLogits || s == Stage::kWeights ||
         s == Stage::kWeightsDropped;
}

bool StageIsDiverging(Stage stage, const ValueScan& scan) {
  switch (stage) {
    case Stage::kMask:
      return false;
    case Stage::kWeights:
    case Stage::kWeightsDropped:
      return scan.has_negative;
    default:
      return true;
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Content: titles, formulas, help, labels
namespace {

std::string Num(double v) { return FormatNumber(v, NumberStyle::kGeneral, 6); }

std::string StageTitle(const Scenario& s, Stage stage) {
  switch (stage) {
    case Stage::kScores:
      return "scores = Q K\u1D40";
    case Stage::kMask:
      return s.mask.kind == MaskKind::kNone     ? "mask: none (all allowed)"
             : s.mask.kind == MaskKind::kCausal ? "mask: causal"
                                                : "mask: custom";
    case Stage::kLogits: {
      std::string h = "logits = scores";
      if (s.scaling.multiplier != 1.0) h += " \u00D7 m";
      if (s.scaling.sqrt_dk) h += " / \u221Ad_k";
      return h;
    }
    case Stage::kWeights:
      switch (s.normalization) {
        case Normalization::kSoftmax:
          return "weights = softmax(logits)";
        case Normalization::kSoftmaxNaive:
          return "weights = exp(z) / \u03A3 exp(z)";
        case Normalization::kSum:
          return "weights = z / \u03A3 z";
        case Normalization::kMean:
          return "weights = 1 / n (mean)";
      }
      return "weights";
    case Stage::kWeightsDropped:
      return "weights_dropped = dropout(weights)";
    case Stage::kContext:
      return s.projections.out_proj ? "context = out_proj(weights V)" : "context = weights V";
  }
  return "";
}

std::string StageSubtitle(const Scenario& s, const Shape& sh, Stage stage, int64_t head,
                          int64_t batch) {
  std::vector<std::string> parts;
  if (StageIsPerHead(stage) && sh.H > 1)
    parts.push_back("head " + std::to_string(head) + " of " + std::to_string(sh.H));
  if (stage != Stage::kMask && sh.B > 1) parts.push_back("batch " + std::to_string(batch));
  if (stage == Stage::kScores) {
    parts.push_back("q\u00B7k, before scaling");
  } else if (stage == Stage::kMask) {
    parts.push_back(s.mask.kind == MaskKind::kCausal ? "each query sees itself and earlier keys"
                                                     : "1 allowed, 0 masked");
  } else {
    parts.push_back(s.scaling.sqrt_dk ? "scaled by 1/\u221Ad_k" : "unscaled");
    parts.push_back("multiplier " + Num(s.scaling.multiplier));
    if (stage == Stage::kWeights || stage == Stage::kWeightsDropped)
      parts.push_back(Name(s.normalization));
    if (stage == Stage::kWeightsDropped) parts.push_back("dropout p " + Num(s.dropout.p));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

const char* StageHelp(Stage stage) {
  switch (stage) {
    case Stage::kScores:
      return "Attention scores: the dot product of query i with key j, before any scaling. "
             "Rows are queries (the token that looks), columns are keys (the tokens looked at).";
    case Stage::kMask:
      return "Which keys each query may look at. Causal: only itself and earlier tokens. "
             "Masked cells (hatched) get a logit of -inf, so their weight is 0.";
    case Stage::kLogits:
      return "The scores times the multiplier (1/temperature), divided by sqrt(d_k) when "
             "scaling is on, with -inf where the mask forbids. Softmax sees these numbers.";
    case Stage::kWeights:
      return "Attention weights: each row is normalised (softmax by default) so it sums to 1. "
             "A peaked row means the query attends to almost one key.";
    case Stage::kWeightsDropped:
      return "nn.Dropout in training mode: each weight is zeroed with probability p and the "
             "survivors are divided by 1 - p.";
    case Stage::kContext:
      return "Context vectors: row i is the weighted average of the value vectors, using row i "
             "of the weights (heads side by side, then out_proj if any).";
  }
  return "";
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
  c.help = StageHelp(stage);
  c.row_labels = token_labels;
  if (stage == Stage::kContext) {
    c.col_axis = "dimension";
    for (int64_t j = 0; j < st.shape.d_out; ++j) c.col_labels.push_back("d" + std::to_string(j));
  } else {
    c.col_labels = token_labels;
  }
  c.diverging = StageIsDiverging(stage, scan);
  c.hatch_masked = stage == Stage::kMask || stage == Stage::kLogits || stage == Stage::kWeights ||
                   stage == Stage::kWeightsDropped;
  return c;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Colours: range, ticks, legends, the spec

ValueRange StageRange(Stage stage, bool diverging, const ValueScan& scan, RangeMode mode) {
  if (stage == Stage::kMask) return {0, 1};
  if ((stage == Stage::kWeights || stage == Stage::kWeightsDropped) && !diverging) {
    const float top = RangeFromExtremes(scan.lo, scan.hi, scan.any_finite, false).hi;
    if (mode == RangeMode::kData) return {0, top > 0 ? top : 1.0f};
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
  // -inf is how logits are masked, so only other stages' infinities need a word.
  if (scan.has_inf && s.stage != Stage::kLogits) out.push_back({LegendKind::kInf, "\u00B1inf"});
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
  s.range = StageRange(content.stage, content.diverging, scan, options.range);
  for (double t : NiceTicks(s.range.lo, s.range.hi, 4))
    s.ticks.push_back({t, FormatNumber(t, NumberStyle::kTick)});
  s.mask_legend = content.stage == Stage::kMask;
  s.legends = Legends(s, scan, any_masked);
  s.values_wanted =
      !s.mask_legend && (options.values == ValuesMode::kOn ||
                         (options.values == ValuesMode::kAuto && rows <= 12 && cols <= 12));
  return s;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Cells and labels: colour, ink, value text, fitting, thinning

Rgb CellColor(const HeatmapSpec& spec, float v) {
  if (std::isnan(v)) return kNanColor;
  return spec.colormap->lut[LutIndex(v, spec.range)];
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

std::string FittedCellValue(float v, float max_width, const MeasureText& measure) {
  for (int decimals : {4, 3, 2}) {
    std::string t = FormatNumber(v, NumberStyle::kFixed, decimals);
    if (measure(t) <= max_width) return t;
    if (!std::isfinite(v)) break;
  }
  return "";
}

std::string FitLabel(const std::string& label, float max_width, const MeasureText& measure) {
  if (measure(label) <= max_width) return label;
  std::vector<size_t> starts;  // where each code point begins
  for (size_t i = 0; i < label.size(); i += DecodeUtf8At(label, i).len) starts.push_back(i);
  for (size_t n = starts.size(); n-- > 0;) {
    std::string cut = label.substr(0, starts[n]) + "\u2026";
    if (measure(cut) <= max_width || n == 0) return cut;
  }
  return "\u2026";
}

int LabelStep(float label_extent, float cell_extent) {
  if (!(cell_extent > 0)) return 1;
  return std::max(1, static_cast<int>(std::ceil(label_extent / cell_extent - 1e-4f)));
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
          {"ticks", ticks},
          {"legends", legends},
          {"values_wanted", s.values_wanted}};
}

}  // namespace attnlab
