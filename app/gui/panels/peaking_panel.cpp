// peaking_panel.cpp: softmax peaking. The chosen query row's weights as bars at the current
// multiplier, its largest weight and entropy, and the entropy of that row's softmax against the
// multiplier (experiments.h PeakingCurve) with the current setting marked: turning the
// multiplier up (or dropping 1/sqrt(d_k)) collapses the row onto one key.
#include <algorithm>
#include <cmath>

#include "attnlab/base/text.h"
#include "attnlab/lessons/experiments.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

constexpr double kLowMultiplier = 0.01, kHighMultiplier = 100.0;

/// The query picker: a combo of the tokens (clipped, so T = 2048 is fine).
void DrawRowPicker(AppState& state, int64_t T) {
  char preview[96];
  std::snprintf(preview, sizeof preview, "%lld: %s", static_cast<long long>(state.row),
                HeadAxisLabel(state, state.row, false).c_str());
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
  if (ImGui::BeginCombo("query row", preview, ImGuiComboFlags_HeightLarge)) {
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(T));
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        std::snprintf(preview, sizeof preview, "%d: %s", i, HeadAxisLabel(state, i, false).c_str());
        if (ImGui::Selectable(preview, i == state.row)) Emit(state, SelectRow{i});
      }
    ImGui::EndCombo();
  }
  Tip("The query whose attention row is shown (the orange triangle marks it on the heatmaps). "
      "While the mouse is over a heatmap the panel shows the hovered row instead, and comes "
      "back to this one when the mouse leaves.");
  if (state.hover.active && state.hover.row != state.row) {
    ImGui::SameLine();
    ImGui::TextDisabled("showing row %lld (hovered)", static_cast<long long>(state.hover.row));
  }
}

}  // namespace

namespace {

/// The allowed keys of query row i (all of them without a mask).
std::vector<uint8_t> AllowedKeys(const Stages& st, int64_t i) {
  const int64_t T = st.shape.T;
  std::vector<uint8_t> allowed(T, 1);
  for (int64_t j = 0; j < T; ++j) allowed[j] = st.mask.rows() == T ? st.mask(i, j) : 1;
  return allowed;
}

/// max 0.2264 ("journey"): the row's largest weight and its key.
std::string MaxWeightText(const AppState& state, const PeakStats& stats) {
  char text[160];
  std::snprintf(text, sizeof text, "max %.4f (\"%s\")", stats.max_weight,
                stats.argmax >= 0 ? HeadAxisLabel(state, stats.argmax, true).c_str() : "-");
  return text;
}

/// The row's largest weight and its entropy, when the row is a probability distribution;
/// otherwise why there is no entropy.
void DrawRowSummary(const AppState& state, const RowVector& w, const PeakStats& stats, int64_t n) {
  const Scenario& s = state.shown;
  if (std::isnan(stats.max_weight) || std::isnan(stats.entropy)) {
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 1.0f, 1.0f), "NaN weights: %s",
                       s.normalization == Normalization::kSoftmaxNaive
                           ? "exp overflowed (inf / inf)"
                           : "nothing to normalise");
    Tip(s.normalization == Normalization::kSoftmaxNaive
            ? "exp(z) overflows float32 above z = 88.7: the sum is inf and inf / inf is NaN. "
              "The stable softmax subtracts the row's max first, so it never overflows."
            : "Every key of this row is masked, or the weights sum to zero: 0 / 0 is NaN.");
    return;
  }
  const double tol = DistributionTolerance(s.dtype);  // a bfloat16 row sums to 1 within 2^-7
  const bool distribution = IsDistribution(stats, tol);
  if (!distribution && !s.scaling.sink.empty() && stats.min_weight >= 0 && stats.sum <= 1.0 + tol) {
    // gpt-oss's sink: the softmax ran over the keys and the sink column, which was then dropped.
    char took[96];
    std::snprintf(took, sizeof took, "the sink took %.4f: the keys' weights sum to %.4f",
                  std::max(0.0f, 1.0f - w.sum()), w.sum());
    WrappedParts({MaxWeightText(state, stats), took});
    Tip("The softmax ran over this row's keys plus the sink's column (logit s); the sink's "
        "share was dropped before weights @ V, so the row sums to 1 minus it. Entropy and "
        "effective keys are left out: without the sink the row is not a distribution.");
    return;
  }
  if (!distribution) {
    WrappedParts({MaxWeightText(state, stats), "no entropy: this row is not a distribution"});
    Tip("Entropy and effective keys need weights >= 0 that sum to 1. Dividing by the sum "
        "(z / \u03A3 z) of signed logits gives negative weights, and weights larger than 1.");
    return;
  }
  char entropy[64], keys[64];
  std::snprintf(entropy, sizeof entropy, "entropy %.3f nats", stats.entropy);
  std::snprintf(keys, sizeof keys, "= %.1f of %lld keys", stats.effective_tokens,
                static_cast<long long>(n));
  WrappedParts({MaxWeightText(state, stats), entropy, keys});
  Tip("Effective keys = exp(entropy): how many keys the query averages over, in effect.");
}

/// The row's weights as bars over its keys, the uniform share as a line.
void DrawWeightBars(const AppState& state, const RowVector& w, const PeakStats& stats, int64_t n,
                    ImVec2 size) {
  const int64_t T = w.size();
  std::vector<double> bars(w.data(), w.data() + w.size());
  // 0..1 shows peaking best; a row of many tiny weights (large T) is scaled up to be seen.
  double lo = 0, top = 0;
  for (double b : bars)
    if (std::isfinite(b)) {
      lo = std::min(lo, b);
      top = std::max(top, b);
    }
  PlotSpec spec;
  spec.id = "bars";
  spec.size = size;
  spec.x0 = -0.5;
  spec.x1 = T - 0.5;
  spec.y0 = lo;
  spec.y1 = top > 0.05 ? std::max(1.0, top) : (top > 0 ? top * 1.2 : 1.0);
  spec.x_label = "key";
  spec.y_label = "weight";
  spec.legend_above = true;
  if (T <= 24)
    for (int64_t j = 0; j < T; ++j) spec.x_tick_labels.push_back(HeadAxisLabel(state, j, true));
  const PlotAxes axes = BeginPlot(spec);
  PlotBars(axes, bars, IM_COL32(90, 150, 230, 255), static_cast<int>(stats.argmax),
           IM_COL32(255, 200, 60, 255));
  if (n > 0) {
    PlotHLine(axes, 1.0 / n, IM_COL32(200, 200, 200, 180));  // named above, not on the bars
    PlotLegend(axes, {{"uniform 1/" + std::to_string(n), IM_COL32(200, 200, 200, 180)}});
  }
  if (axes.hovered) {
    const int j = std::clamp(static_cast<int>(std::lround(axes.XAt(ImGui::GetIO().MousePos.x))), 0,
                             static_cast<int>(T - 1));
    ImGui::SetTooltip("key %d \"%s\": weight %s", j, HeadAxisLabel(state, j, true).c_str(),
                      FormatNumber(bars[j], NumberStyle::kShortest).c_str());
  }
}

/// Entropy against the multiplier (the cached curve), the current point on it; clicking or
/// dragging sets the multiplier.
void DrawEntropyCurve(AppState& state, const PeakStats& stats, int64_t n, ImVec2 size) {
  const Scenario& s = state.shown;
  std::vector<double> xs, ys;
  for (const PeakingPoint& p : state.peaking.curve) {
    xs.push_back(p.multiplier);
    ys.push_back(p.stats.entropy);
  }
  PlotSpec spec;
  spec.id = "curve";
  spec.size = size;
  spec.x0 = kLowMultiplier;
  spec.x1 = kHighMultiplier;
  spec.log_x = true;
  spec.y0 = 0;
  spec.y1 = std::max(0.1, std::log(static_cast<double>(std::max<int64_t>(n, 1))) * 1.1);
  spec.x_label = "multiplier = 1/temperature";
  spec.x_label_short = "multiplier";
  spec.y_label = "entropy (nats)";
  spec.legend_above = true;
  const PlotAxes axes = BeginPlot(spec);
  const bool dragging = ImGui::IsItemActive();
  if (n > 1) {  // named in the legend above the plot: no label on the curve or the point
    PlotHLine(axes, std::log(static_cast<double>(n)), IM_COL32(200, 200, 200, 180));
    PlotLegend(axes, {{"uniform: log n", IM_COL32(200, 200, 200, 180)}});
  }
  PlotLine(axes, xs, ys, IM_COL32(90, 150, 230, 255), 2.0f);
  const double m = s.scaling.multiplier;
  if (IsSoftmaxOverAllowedKeys(s.normalization))
    PlotPoint(axes, std::clamp(m, kLowMultiplier, kHighMultiplier), stats.entropy,
              IM_COL32(255, 200, 60, 255));
  else
    PlotVLine(axes, m, IM_COL32(255, 200, 60, 255), "now (not softmax)", true);
  if (axes.hovered) {
    const double at = axes.XAt(ImGui::GetIO().MousePos.x);
    ImGui::SetTooltip("multiplier %.3g (temperature %.3g)\nclick or drag to set it", at, 1.0 / at);
  }
  if (dragging) {
    const double at = axes.XAt(ImGui::GetIO().MousePos.x);
    Emit(state, SetMultiplier{std::clamp(at, kLowMultiplier, kHighMultiplier)},
         "scaling.multiplier");
  }
}

}  // namespace

void RefreshPeaking(AppState& state) {
  const Stages* readable = ReadableStages(state);
  if (!HasShownRun(state) || !readable) return;  // a background run: the cache stays
  const Stages& st = *readable;
  const int64_t i = std::min(PeakingRow(state), st.shape.T - 1);
  const std::vector<uint8_t> allowed = AllowedKeys(st, i);
  // The head's own logit rules (scaling, ALiBi, soft-cap, sink) for this query row.
  const CurveRules rules = CurveRulesOf(state.shown, st.shape, state.head, i);
  const RowVector scores = st.Head(st.scores, state.batch, state.head).row(i);
  PeakingCache& cache = state.peaking;
  // The row's weights for the bars and the summary, copied here so that the panel draws them
  // while a later background run rewrites the stages.
  cache.row = i;
  cache.weights = st.Head(st.weights, state.batch, state.head).row(i);
  if (!cache.curve.empty() && cache.rules == rules && cache.allowed == allowed &&
      cache.scores.size() == scores.size() && cache.scores == scores)
    return;
  cache.scores = scores;
  cache.allowed = allowed;
  cache.rules = rules;
  cache.curve =
      PeakingCurve(scores, allowed, rules, LogSpace(kLowMultiplier, kHighMultiplier, 121));
}

/// "▴ larger" gives the two plots under the heatmaps most of the height (the maps' canvas
/// scrolls); "▾ smaller" gives it back. At the end of the header line, or under it.
void DrawPlotsToggle(AppState& state) {
  const char* label = state.plots_expanded ? "\xE2\x96\xBE smaller" : "\xE2\x96\xB4 larger";
  BeginToolbarItem(false, ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::SmallButton(label)) state.plots_expanded = !state.plots_expanded;
  Tip(state.plots_expanded ? "Give the heatmaps their room back."
                           : "Give these two plots (softmax peaking and why 1/\xE2\x88\x9A"
                             "d_k) "
                             "most of the height; the heatmaps above scroll.");
  const char* hide = "\xE2\x96\xBE hide";
  BeginToolbarItem(false, ImGui::CalcTextSize(hide).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::SmallButton(hide)) Emit(state, SetSectionOpen{SetSectionOpen::kPlots, false});
  Tip("Hide these two plots: the heatmaps take their room. The bar at the bottom brings them "
      "back; the choice is remembered.");
}

void DrawPeakingPanel(AppState& state) {
  if (!HasShownRun(state)) return;
  RefreshPeaking(state);  // a row picked this frame shows at once (no-op during a run)
  const PeakingCache& cache = state.peaking;
  const int64_t T = ShownShape(state).T;
  if (cache.weights.size() != T) return;  // not refreshed since the run that changed T

  ImGui::TextUnformatted("Softmax peaking");
  Tip("How concentrated one query's attention is. Entropy is -\xCE\xA3 w log w: log n when the "
      "n allowed keys share equally, 0 when one key takes everything.");
  BeginToolbarItem(false, LabeledWidth(ImGui::GetFontSize() * 9.0f, "query row"));
  DrawRowPicker(state, T);
  DrawPlotsToggle(state);

  const RowVector& w = cache.weights;
  const PeakStats stats = RowPeakStats(w);
  const int64_t n = std::count(cache.allowed.begin(), cache.allowed.end(), 1);
  DrawRowSummary(state, w, stats, n);

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!RoomForPlot(avail.y)) return NoRoomForPlot();
  const float gap = ImGui::GetFontSize();
  const ImVec2 plot_size((avail.x - gap) * 0.5f, avail.y);
  DrawWeightBars(state, w, stats, n, plot_size);
  ImGui::SameLine(0, gap);
  DrawEntropyCurve(state, stats, n, plot_size);
}

}  // namespace attnlab::gui
