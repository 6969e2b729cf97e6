// variance_panel.cpp: why 1/sqrt(d_k). For random q, k ~ N(0, 1)^d the dot product q.k has
// variance d, so logits grow with the head size; dividing by sqrt(d) brings the variance back
// to 1 (experiments.h VarianceExperiment). Left: var(q.k) against d, unscaled and scaled, the
// current d_k marked. Right: the histogram of the dot products at one d, unscaled and scaled.
#include <cmath>

#include "attnlab/base/text.h"
#include "attnlab/lessons/experiments.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

const ImU32 kUnscaledColor = IM_COL32(235, 110, 80, 255);
const ImU32 kScaledColor = IM_COL32(90, 150, 230, 255);

/// counts of values in `bins` equal bins over [lo, hi).
std::vector<double> Histogram(const std::vector<float>& values, double scale, double lo, double hi,
                              int bins) {
  std::vector<double> counts(bins, 0.0);
  for (float x : values) {
    const double v = x * scale;
    const int b = static_cast<int>(std::floor((v - lo) / (hi - lo) * bins));
    if (b >= 0 && b < bins) counts[b] += 1;
  }
  return counts;
}

/// The title row: the seed and trials inputs.
void DrawVarianceControls(AppState& state, const VarianceState& v) {
  ImGui::TextUnformatted("Why 1/\u221Ad_k");
  Tip("Draw q and k from N(0, 1) in d dimensions (torch.randn, the seed below): the dot "
      "product q\xC2\xB7k has variance d. Divided by \u221Ad it is back to 1, whatever d.");
  BeginToolbarItem(false, LabeledWidth(ImGui::GetFontSize() * 14.0f, "seed"));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.5f);
  uint64_t seed = v.seed;
  if (SeedInput("seed", &seed, "torch.manual_seed(seed) before drawing q and k for each d."))
    Emit(state, SetVarianceSeed{seed});
  BeginToolbarItem(false, LabeledWidth(ImGui::GetFontSize() * 6.0f, "trials"));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
  int trials = static_cast<int>(v.trials);
  if (ImGui::InputInt("trials", &trials, 500, 5000)) Emit(state, SetVarianceTrials{trials});
  Tip("How many random (q, k) pairs per d. More trials: smoother histogram, steadier variance.");
}

/// The same lesson on the learner's own run: var(q), var(k), var(q·k) and var of the scaled
/// scores for the shown batch and head, as the notebooks print them (torch's unbiased .var(),
/// NumPy's for NumPy scenarios), made again only when the run, batch or head changes.
void DrawOwnVariances(AppState& state) {
  VarianceState& v = state.variance;
  const Stages* readable = ReadableStages(state);  // null while a background run writes
  if (!HasShownRun(state) || (readable && readable->Q.empty())) return;
  const Shape& sh = ShownShape(state);
  const std::string key = std::to_string(state.shown_version) + "/" + std::to_string(state.batch) +
                          "/" + std::to_string(state.head);
  // At large T the variances take most of a second: they wait until the edits pause.
  const bool large = sh.T * sh.T > (1 << 18);
  bool stale = false;
  if (key != v.own_key && large) {
    if (key != v.own_pending) {
      v.own_pending = key;
      v.own_pending_since = ImGui::GetTime();
    }
    stale = ImGui::GetTime() - v.own_pending_since < 0.4 || ImGui::IsAnyMouseDown();
  }
  // During a background run the last numbers stay ("updating…") until its result is shown.
  stale = stale || (key != v.own_key && !readable);
  if (key != v.own_key && !stale) {
    const Stages& st = *readable;
    v.own_key = key;
    const VarianceKind kind = VarianceKindOf(state.shown.input.generator);
    v.own = HeadVariances(st, state.batch, state.head, kind);
    v.whole = WholeVariances(st, kind);
    // The scaled scores before the mask (Karpathy's wei.var() after * head_size**-0.5),
    // scaled on the fly: no copy of the T x T scores.
    const float divide = state.shown.scaling.sqrt_dk
                             ? static_cast<float>(std::sqrt(static_cast<double>(st.shape.dh)))
                             : 1.0f;
    v.own_scaled = ScaledVariance(st.Head(st.scores, state.batch, state.head),
                                  static_cast<float>(state.shown.scaling.multiplier), divide, kind);
  }
  auto num = [](double x) { return FormatNumber(x, NumberStyle::kGeneral, 4); };
  const bool scaled = state.shown.scaling.sqrt_dk || state.shown.scaling.multiplier != 1.0;
  const std::string who = sh.B > 1 || sh.H > 1 ? "batch " + std::to_string(state.batch) +
                                                     ", head " + std::to_string(state.head) + ":"
                                               : "your run:";
  // Each "name value" pair wraps as a whole: a number is never cut in two.
  std::vector<std::string> parts = {who, "var(q) " + num(v.own.var_q), "var(k) " + num(v.own.var_k),
                                    "var(q\xC2\xB7k) " + num(v.own.var_scores)};
  // The scaled variance says what it was scaled by: the multiplier is in the number too.
  const ScalingSpec& sc = state.shown.scaling;
  if (sc.scale_at == ScaleAt::kQAndK)  // SDPA's scaling: the scores are the scaled product
    parts.back() = "var(scores, q and k scaled) " + num(v.own.var_scores);
  else if (sc.sqrt_dk && sc.multiplier == 1.0)
    parts.push_back(
        "scaled by 1/\xE2\x88\x9A"
        "d_k " +
        num(v.own_scaled));
  else if (sc.sqrt_dk)
    parts.push_back("scaled by " + num(sc.multiplier) +
                    "/\xE2\x88\x9A"
                    "d_k (multiplier " +
                    "included) " + num(v.own_scaled));
  else if (scaled)
    parts.push_back("\xC3\x97 multiplier " + num(sc.multiplier) +
                    " (no 1/\xE2\x88\x9A"
                    "d_k) " +
                    num(v.own_scaled));
  if (stale || v.own_key.empty()) parts.push_back("(updating\xE2\x80\xA6)");
  WrappedParts(parts);
  if (ImGui::IsItemHovered()) {
    const std::string whole =
        "Over every batch and head, as a notebook prints q.var(), "
        "k.var(), wei.var(): " +
        num(v.whole.var_q) + ", " + num(v.whole.var_k) + ", " + num(v.whole.var_scores) + ".";
    Tip(("The variances of the shown batch and head (PyTorch's unbiased var(), or NumPy's for "
         "a NumPy scenario). With q and k of variance about 1, var(q\xC2\xB7k) is about d_k; "
         "scaled by 1/\xE2\x88\x9A"
         "d_k (and the multiplier) it is back near 1: the plot's "
         "lesson on your own data.\n\n" +
         whole)
            .c_str());
  }
}

/// Variance against d on log-log axes, unscaled and scaled, the current d_k marked.
void DrawVarianceCurve(const VarianceState& v, int64_t dk, ImVec2 size) {
  std::vector<double> ds, un, sc;
  for (const VariancePoint& p : v.points) {
    ds.push_back(static_cast<double>(p.d));
    un.push_back(p.var_unscaled);
    sc.push_back(p.var_scaled);
  }
  PlotSpec spec;
  spec.id = "variance";
  spec.size = size;
  spec.x0 = ds.front();
  spec.x1 = ds.back();
  spec.log_x = spec.log_y = true;
  spec.y0 = 0.25;
  spec.y1 = ds.back() * 2;
  spec.x_label = "dimension d";
  spec.legend_above = true;
  spec.y_label = "variance";
  const PlotAxes axes = BeginPlot(spec);
  PlotLine(axes, ds, un, kUnscaledColor, 2.0f);
  PlotLine(axes, ds, sc, kScaledColor, 2.0f);
  for (size_t k = 0; k < ds.size(); ++k) {
    PlotPoint(axes, ds[k], un[k], kUnscaledColor, 2.5f);
    PlotPoint(axes, ds[k], sc[k], kScaledColor, 2.5f);
  }
  if (dk > 0) {  // after the series, so that its label stays readable over them
    char label[32];
    std::snprintf(label, sizeof label, "d_k = %lld", static_cast<long long>(dk));
    // Its name at the top, where the curves are not (they start low on the left).
    PlotVLine(axes, static_cast<double>(dk), IM_COL32(255, 200, 60, 200), label, false);
  }
  PlotLegend(axes, {{"var(q\xC2\xB7k) \xE2\x89\x88 d", kUnscaledColor},
                    {"var(q\xC2\xB7k / \u221Ad) \xE2\x89\x88 1", kScaledColor}});
  if (axes.hovered) {
    const double at = axes.XAt(ImGui::GetIO().MousePos.x);
    size_t best = 0;
    for (size_t k = 1; k < ds.size(); ++k)
      if (std::fabs(std::log(ds[k] / at)) < std::fabs(std::log(ds[best] / at))) best = k;
    ImGui::SetTooltip("d = %g: var(q.k) = %.3f, var(q.k / sqrt(d)) = %.3f\n%lld trials, seed %llu",
                      ds[best], un[best], sc[best], static_cast<long long>(v.trials),
                      static_cast<unsigned long long>(v.seed));
  }
}

/// The histogram of the dot products at one d, unscaled and scaled, and its d slider.
void DrawDotHistogram(AppState& state, ImVec2 size) {
  const VarianceState& v = state.variance;
  ImGui::BeginGroup();
  const int shown = std::clamp(v.histogram_dim, 0, static_cast<int>(v.points.size()) - 1);
  const VariancePoint& p = v.points[shown];
  const double sd = std::sqrt(std::max(p.var_unscaled, 1e-9));
  const double lo = -3.5 * sd, hi = 3.5 * sd;
  const int bins = 41;
  std::vector<double> edges;
  for (int b = 0; b <= bins; ++b) edges.push_back(lo + (hi - lo) * b / bins);
  const std::vector<double> counts_un = Histogram(p.dots, 1.0, lo, hi, bins);
  const std::vector<double> counts_sc =
      Histogram(p.dots, 1.0 / std::sqrt(static_cast<double>(p.d)), lo, hi, bins);
  double top = 1;
  for (double c : counts_un) top = std::max(top, c);
  for (double c : counts_sc) top = std::max(top, c);
  PlotSpec hs;
  hs.id = "histogram";
  hs.size = ImVec2(size.x, size.y - ImGui::GetFrameHeightWithSpacing());
  hs.x0 = lo;
  hs.x1 = hi;
  hs.y0 = 0;
  hs.y1 = top * 1.08;
  hs.x_label = "q\xC2\xB7k";
  hs.legend_above = true;
  hs.y_label = "count";
  const PlotAxes ha = BeginPlot(hs);
  PlotHistogram(ha, edges, counts_un, IM_COL32(235, 110, 80, 110), kUnscaledColor);
  PlotHistogram(ha, edges, counts_sc, IM_COL32(90, 150, 230, 110), kScaledColor);
  PlotLegend(ha, {{"q\xC2\xB7k", kUnscaledColor}, {"q\xC2\xB7k / \u221Ad", kScaledColor}}, true);
  int dim = shown;
  char fmt[32];
  std::snprintf(fmt, sizeof fmt, "d = %lld", static_cast<long long>(p.d));
  ImGui::SetNextItemWidth(size.x);
  if (ImGui::SliderInt("##hist_d", &dim, 0, static_cast<int>(v.points.size()) - 1, fmt))
    Emit(state, SetVarianceHistogramDim{dim});
  Tip("The dimension d of the histogram. The unscaled dot products spread out as \u221Ad; "
      "the scaled ones keep a spread of 1.");
  ImGui::EndGroup();
}

}  // namespace

void DrawVariancePanel(AppState& state) {
  VarianceState& v = state.variance;
  const int64_t dk = ShownShape(state).dh;
  DrawVarianceControls(state, v);
  DrawOwnVariances(state);
  if (!v.error.empty()) {
    ErrorText(v.error);
    return;
  }
  if (v.points.empty()) return;

  // Side by side when each plot gets 14 characters' width; else the curve alone (the lesson).
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!RoomForPlot(avail.y)) return NoRoomForPlot();
  const float gap = ImGui::GetFontSize();
  const bool both = (avail.x - gap) * 0.5f >= ImGui::GetFontSize() * 14.0f;
  const ImVec2 plot_size(both ? (avail.x - gap) * 0.5f : avail.x, avail.y);
  DrawVarianceCurve(v, dk, plot_size);
  if (!both) return;
  ImGui::SameLine(0, gap);
  DrawDotHistogram(state, plot_size);
}

}  // namespace attnlab::gui
