// compare_panel.cpp: two scenarios side by side. A is what the other views show (the main
// engine's run); B is A with one thing changed, picked with one click (scaling, mask, head,
// temperature) or a pinned snapshot, run in its own engine. Shown: A's and B's heatmap of one
// stage, their difference A - B on a diverging map (figure.h DifferenceView, hatched where
// either is masked), and the row entropies of both weights (RowsPeakStats). Each heatmap
// exports as the figure of the very view on screen. The caches live in views.h RefreshCompare.
//
// [SECTION] Controls: what B is, the stage, export
// [SECTION] The three heatmaps
// [SECTION] Row entropies
// [SECTION] The panel
#include <imgui_internal.h>  // ImRect

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "attnlab/base/text.h"
#include "attnlab/model/bugs.h"
#include "gui/actions/export.h"
#include "gui/actions/views.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

const ImU32 kColorA = IM_COL32(255, 170, 60, 255);
const ImU32 kColorB = IM_COL32(90, 160, 240, 255);

// ---------------------------------------------------------------------------------------------
// [SECTION] Controls: what B is, the stage, export

/// A button that stays lit while its option is the chosen one.
bool OptionButton(const char* label, bool selected, bool enabled = true) {
  if (selected)
    ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  ImGui::BeginDisabled(!enabled);
  const bool clicked = ImGui::Button(label);
  ImGui::EndDisabled();
  if (selected) ImGui::PopStyleColor();
  return clicked;
}

/// SameLine when a button labelled `label` fits the rest of the line, else a new line (a cut
/// "pin current a" says nothing).
void SameLineIfFits(const char* label, float gap) {
  const float w =
      ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + gap + w <= right) ImGui::SameLine(0, gap);
}

}  // namespace

void DrawBugGalleryItems(AppState& state) {
  const CompareState& c = state.compare;
  for (const BugInfo& b : Bugs()) {
    if (ImGui::MenuItem(b.name, b.id, c.bug_id == b.id)) Emit(state, LoadBugAction{b.id});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n(%s)", b.diagnosis, b.source);
  }
}

namespace {

/// The bug gallery (model/bugs.h): one click loads a classic mistake as B beside its fix as A.
void DrawBugGallery(AppState& state) {
  const CompareState& c = state.compare;
  const bool on = c.mode == CompareMode::kPinned && !c.bug_id.empty();
  if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
  if (ImGui::Button("Bug gallery \xE2\x96\xBE")) ImGui::OpenPopup("bug_gallery");
  if (on) ImGui::PopStyleColor();
  Tip("A classic attention mistake as B, beside the fixed computation as A: the difference, the "
      "rows' entropies, a diagnosis, and the wrong and right lines of PyTorch (also in the Code "
      "view). The fix replaces the scenario (Ctrl+Z undoes it).");
  if (ImGui::BeginPopup("bug_gallery")) {
    DrawBugGalleryItems(state);
    ImGui::EndPopup();
  }
}

/// Under the controls while B is a bug of the gallery: the diagnosis and the program lines
/// that differ (the bug's in B's colour, the fix's in A's).
void DrawBugDiagnosis(const AppState& state) {
  const CompareState& c = state.compare;
  if (c.mode != CompareMode::kPinned || c.bug_id.empty()) return;
  const BugInfo* bug = FindBug(c.bug_id);
  if (!bug) return;
  ImGui::TextWrapped("Bug: %s. %s.", bug->name, bug->diagnosis);
  if (state.fonts.mono) ImGui::PushFont(state.fonts.mono);
  for (const std::string& line : c.bug_diff.wrong)
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kColorB), "B (bug) - %s", line.c_str());
  for (const std::string& line : c.bug_diff.right)
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kColorA), "A (fix) + %s", line.c_str());
  if (state.fonts.mono) ImGui::PopFont();
}

void DrawControls(AppState& state) {
  CompareState& c = state.compare;
  const Shape& sh = ShownShape(state);
  const float gap = ImGui::GetStyle().ItemInnerSpacing.x;

  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("A = the current state,  B =");
  SameLineIfFits("scaled \xE2\x86\x94 unscaled", ImGui::GetStyle().ItemSpacing.x);
  if (OptionButton("scaled \xE2\x86\x94 unscaled", c.mode == CompareMode::kScaled))
    Emit(state, SetCompare{CompareMode::kScaled});
  Tip("B flips \"divide by \u221Ad_k\": see what the scaling does to every stage.");
  SameLineIfFits("causal \xE2\x86\x94 none", gap);
  if (OptionButton("causal \xE2\x86\x94 none", c.mode == CompareMode::kCausal))
    Emit(state, SetCompare{CompareMode::kCausal});
  Tip("B has no mask when A has one, else the causal mask.");
  SameLineIfFits("head 0 vs head 1", gap);
  if (OptionButton("head 0 vs head 1", c.mode == CompareMode::kHeads, sh.H > 1))
    Emit(state, SetCompare{CompareMode::kHeads});
  Tip(sh.H > 1 ? "Two heads of the same run: each head has its own d_k columns of Q, K and V."
               : "Needs two heads or more: set heads in the Projections section.");
  SameLineIfFits("temperature a vs b", gap);
  if (OptionButton("temperature a vs b", c.mode == CompareMode::kTemperature))
    Emit(state, SetCompare{CompareMode::kTemperature});
  Tip("A keeps the multiplier on the left (1/temperature); B gets its own.");
  SameLineIfFits("pin current as B", gap);
  if (OptionButton("pin current as B", false)) Emit(state, PinCompare{});
  Tip("B becomes a snapshot of what is on screen now. Then change anything on the left: A "
      "follows your edits, B stays.");
  SameLineIfFits("Bug gallery \xE2\x96\xBE", gap);
  DrawBugGallery(state);

  // -- second line: the stage, the mode's own settings, export
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("stage");
  ImGui::SameLine(0, gap);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
  if (ImGui::BeginCombo("##stage", StageName(c.stage))) {
    for (Stage s : AllStages())
      if (ImGui::Selectable(StageName(s), s == c.stage)) Emit(state, SetCompareStage{s});
    ImGui::EndCombo();
  }
  Tip("Which stage A and B show (the weights by default). The row entropies are always the "
      "weights'.");
  ImGui::SameLine(0, ImGui::GetFontSize());
  if (c.mode == CompareMode::kTemperature) {
    float a = static_cast<float>(state.scenario.scaling.multiplier);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
    if (ImGui::SliderFloat("A multiplier", &a, 0.01f, 100.0f, "\xC3\x97%.3g",
                           ImGuiSliderFlags_Logarithmic) &&
        a > 0)
      Emit(state, SetMultiplier{a}, "scaling.multiplier");
    Tip("A's multiplier: the same slider as on the left (an edit of the scenario).");
    ImGui::SameLine(0, ImGui::GetFontSize());
    float b = static_cast<float>(c.multiplier_b);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8.0f);
    if (ImGui::SliderFloat("B multiplier", &b, 0.01f, 100.0f, "\xC3\x97%.3g",
                           ImGuiSliderFlags_Logarithmic) &&
        b > 0)
      Emit(state, SetCompare{CompareMode::kTemperature, b});
    Tip("B's multiplier (1/temperature). Larger: peakier rows, lower entropy.");
    ImGui::SameLine(0, ImGui::GetFontSize());
  } else if (c.mode == CompareMode::kHeads && sh.H > 1) {
    int ha = static_cast<int>(std::min<int64_t>(c.head_a, sh.H - 1));
    int hb = static_cast<int>(std::min<int64_t>(c.head_b, sh.H - 1));
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.0f);
    if (ImGui::SliderInt("head A", &ha, 0, static_cast<int>(sh.H - 1)))
      Emit(state, SetCompare{CompareMode::kHeads, 0, ha, hb});
    ImGui::SameLine(0, ImGui::GetFontSize());
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.0f);
    if (ImGui::SliderInt("head B", &hb, 0, static_cast<int>(sh.H - 1)))
      Emit(state, SetCompare{CompareMode::kHeads, 0, ha, hb});
    ImGui::SameLine(0, ImGui::GetFontSize());
  } else if (c.mode == CompareMode::kPinned && c.pinned) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("B: %s", c.pinned_name.c_str());
    ImGui::SameLine(0, ImGui::GetFontSize());
  }
  if (OptionButton("as decoded", c.decoded)) Emit(state, SetCompareDecoded{!c.decoded});
  Tip("Show A and B as the KV-cache decode computes them (the Decode view's prefill and chunk, "
      "then one token per step) instead of the full computation. A decode step has fewer "
      "queries than keys, so the mask's alignment matters there (the bug gallery's "
      "bug-decode-top-left).");
  ImGui::SameLine(0, gap);
  if (ImGui::Button("Export...")) ImGui::OpenPopup("compare_export");
  Tip("Save A, B or the difference as a PNG figure: the same colours and range as on screen.");
  if (ImGui::BeginPopup("compare_export")) {
    const char* names[] = {"A...", "B...", "A \xE2\x88\x92 B (difference)..."};
    const std::optional<StageView>* views[] = {&c.view_a, &c.view_b, &c.diff};
    for (int k = 0; k < 3; ++k)
      if (ImGui::MenuItem(names[k], nullptr, false, views[k]->has_value()))
        Emit(state,
             OpenDialog{DialogKind::kExportCompare, Stage::kWeights, static_cast<CompareMap>(k)});
    ImGui::EndPopup();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The three heatmaps

/// The values of one cell in A, B and A - B, for the tooltip.
void CellTooltip(const AppState& state, int64_t i, int64_t j) {
  const CompareState& c = state.compare;
  const StageView& a = *c.view_a;
  ImGui::BeginTooltip();
  if (c.stage == Stage::kContext)
    ImGui::Text("context[%lld, d%lld]  (query \"%s\")", static_cast<long long>(i),
                static_cast<long long>(j), a.row_labels[i].c_str());
  else
    ImGui::Text("query %lld \"%s\"  \xE2\x86\x92  key %lld \"%s\"", static_cast<long long>(i),
                a.row_labels[i].c_str(), static_cast<long long>(j), a.col_labels[j].c_str());
  ImGui::Separator();
  auto value = [&](const std::optional<StageView>& v) -> std::string {
    if (!v || i >= v->values.rows() || j >= v->values.cols()) return "-";
    if (v->masked.size() && v->masked(i, j)) return "masked";
    return FormatNumber(v->values(i, j), NumberStyle::kShortest);
  };
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kColorA), "A (%s): %s", c.name_a.c_str(),
                     value(c.view_a).c_str());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kColorB), "B (%s): %s", c.name_b.c_str(),
                     value(c.view_b).c_str());
  ImGui::Text("A \xE2\x88\x92 B: %s", value(c.diff).c_str());
  ImGui::EndTooltip();
}

/// Where A, B and the difference go: side by side when their numbers fit so (each cell wide
/// enough for 2 decimals, as in the overview), else A and B over the difference (as wide as
/// both), else one above the other.
std::array<ImRect, 3> MapBoxes(AppState& state, const std::optional<StageView>* const* views,
                               const char* const* ids, ImVec2 origin, ImVec2 size) {
  const float gap = ImGui::GetFontSize();
  float need = 0;
  for (int k = 0; k < 3; ++k) {
    const std::optional<StageView>& v = *views[k];
    if (!v || !state.compare.maps[k].gpu.has_values()) continue;
    const CellSource cells{&v->values, nullptr};
    const NumberCells nc = NumberCellWidths(state, v->stage, cells, [&](int64_t i, int64_t j) {
      return v->hatch_masked && v->masked.size() && v->masked(i, j);
    });
    HeatmapViewSpec spec;
    spec.id = ids[k];
    spec.labels_key = static_cast<int64_t>(state.shown_version * 8 + state.compare.pin_version);
    const HeatmapFrame f =
        MeasureHeatmapFrame(state, state.compare.maps[k], spec, static_cast<int>(v->values.rows()),
                            static_cast<int>(v->values.cols()), nc.min);
    need = std::max(need, f.left + f.right + v->values.cols() * nc.min);
  }
  std::array<ImRect, 3> out;
  const float w3 = (size.x - 2 * gap) / 3;
  if (need > (size.x - gap) / 2 && need <= size.x && state.view.values != ValuesMode::kOff) {
    // One above the other, each as wide as the view (the maps' region then scrolls).
    const float h = std::max(size.y * 0.5f, need * 0.6f);
    for (int k = 0; k < 3; ++k) {
      const ImVec2 a(origin.x, origin.y + k * (h + gap));
      out[k] = ImRect(a, ImVec2(a.x + std::min(size.x, need * 1.2f), a.y + h));
    }
    return out;
  }
  if (need <= w3 || need > (size.x - gap) / 2) {
    for (int k = 0; k < 3; ++k) {
      const ImVec2 a(origin.x + k * (w3 + gap), origin.y);
      out[k] = ImRect(a, ImVec2(a.x + w3, a.y + size.y));
    }
    return out;
  }
  // A and B side by side, the difference under them across the whole width: its small values
  // (0.0067) get the room for 4 decimals instead of "0.01".
  const float w2 = (size.x - gap) / 2, h2 = (size.y - gap) / 2;
  for (int k = 0; k < 3; ++k) {
    const ImVec2 a(origin.x + (k % 2) * (w2 + gap), origin.y + (k / 2) * (h2 + gap));
    out[k] = ImRect(a, ImVec2(a.x + (k == 2 ? size.x : w2), a.y + h2));
  }
  return out;
}

void DrawMaps(AppState& state, ImVec2 origin, ImVec2 size) {
  CompareState& c = state.compare;
  if (c.upload) {
    if (c.view_a) UploadView(c.maps[0], *c.view_a);
    if (c.view_b) UploadView(c.maps[1], *c.view_b);
    if (c.diff) UploadView(c.maps[2], *c.diff);
    c.upload = false;
  }
  const std::optional<StageView>* views[] = {&c.view_a, &c.view_b, &c.diff};
  const char* ids[] = {"compare_a", "compare_b", "compare_diff"};
  const std::array<ImRect, 3> boxes = MapBoxes(state, views, ids, origin, size);
  for (int k = 0; k < 3; ++k) {
    const std::optional<StageView>& v = *views[k];
    HeatmapViewSpec spec;
    spec.id = ids[k];
    spec.values = v ? &v->values : nullptr;
    spec.masked = v && v->masked.size() ? &v->masked : nullptr;
    spec.empty_text = "(no view)";
    spec.labels_key = static_cast<int64_t>(state.shown_version * 8 + c.pin_version);
    if (c.hover.active) {
      spec.highlight_row = c.hover.row;
      spec.highlight_col = c.hover.col;
    }
    const HeatmapViewHover h =
        DrawHeatmapView(state, c.maps[k], spec, boxes[k].Min, boxes[k].GetSize());
    if (h.active && c.view_a) {
      c.hover_next = HeatmapViewHoverCell{true, h.row, h.col, c.stage != Stage::kContext};
      CellTooltip(state, h.row, h.col);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Row entropies

/// One side's mean row entropy: its sum over the `rows` rows that are numbers, and the sum of
/// their effective keys.
struct EntropySums {
  bool distribution;
  double sum, keys;
  int rows;
};

/// The headline after "Row entropy of the weights": each side's mean (or why it has none).
void DrawEntropyHeadline(const EntropySums& a, const EntropySums& b, size_t T) {
  const bool dist_a = a.distribution, dist_b = b.distribution;
  const double sum_a = a.sum, keys_a = a.keys, sum_b = b.sum, keys_b = b.keys;
  const int rows_a = a.rows, rows_b = b.rows;
  // Effective keys: one decimal for a few keys, whole numbers for hundreds.
  auto keys = [](double k) {
    char buf[32];
    std::snprintf(buf, sizeof buf, k < 100 ? "%.1f" : "%.0f", k);
    return std::string(buf);
  };
  const char* kNotDistribution = "%s: rows do not sum to 1 (not distributions), no entropy";
  // "A: mean 1.33 nats = 4.6 keys", with "over 6 rows; 2 rows nan" when some rows are nan.
  auto headline = [&](const char* side, double sum, double k, int rows) {
    char buf[160];
    if (rows == 0)
      std::snprintf(buf, sizeof buf, "%s: every row is nan (no entropy)", side);
    else if (rows < static_cast<int>(T))
      std::snprintf(buf, sizeof buf, "%s: mean %.3g nats \xE2\x89\x88 %s keys over %d rows; %d nan",
                    side, sum / rows, keys(k / rows).c_str(), rows, static_cast<int>(T) - rows);
    else
      std::snprintf(buf, sizeof buf, "%s: mean %.3g nats \xE2\x89\x88 %s keys", side, sum / rows,
                    keys(k / rows).c_str());
    return std::string(buf);
  };
  ImGui::SameLine(0, ImGui::GetFontSize());
  const ImVec4 color_a = ImGui::ColorConvertU32ToFloat4(kColorA),
               color_b = ImGui::ColorConvertU32ToFloat4(kColorB);
  if (!dist_a && !dist_b) {  // said once: two such sentences do not fit one line
    ImGui::TextDisabled(kNotDistribution, "A and B");
  } else {
    if (dist_a)
      ImGui::TextColored(color_a, "%s", headline("A", sum_a, keys_a, rows_a).c_str());
    else
      ImGui::TextColored(color_a, kNotDistribution, "A");
    ImGui::SameLine(0, ImGui::GetFontSize());
    if (dist_b)
      ImGui::TextColored(color_b, "%s", headline("B", sum_b, keys_b, rows_b).c_str());
    else
      ImGui::TextColored(color_b, kNotDistribution, "B");
  }
}

void DrawEntropies(AppState& state, ImVec2 size) {
  const CompareState& c = state.compare;
  if (c.rows_a.empty() || c.rows_b.empty()) return;
  const size_t T = std::min(c.rows_a.size(), c.rows_b.size());
  // Entropy describes a distribution: a side whose rows do not sum to 1 (softmax over the
  // queries, a mask after the softmax without renormalising, a sink's share) is not plotted.
  const bool dist_a = c.distributions_a, dist_b = c.distributions_b;
  std::vector<double> x, ea, eb;
  // The means are over the rows that are numbers: a nan row (0 / 0, a padding query in
  // bug-fp16-mask-fill) is counted and said apart instead of turning the mean into nan.
  double top = 0.1, sum_a = 0, sum_b = 0, keys_a = 0, keys_b = 0;
  int rows_a = 0, rows_b = 0;
  for (size_t i = 0; i < T; ++i) {
    x.push_back(static_cast<double>(i));
    ea.push_back(c.rows_a[i].entropy);
    eb.push_back(c.rows_b[i].entropy);
    if (dist_a && std::isfinite(ea.back())) top = std::max(top, ea.back());
    if (dist_b && std::isfinite(eb.back())) top = std::max(top, eb.back());
    if (std::isfinite(ea.back()) && std::isfinite(c.rows_a[i].effective_tokens)) {
      sum_a += ea.back();
      keys_a += c.rows_a[i].effective_tokens;
      ++rows_a;
    }
    if (std::isfinite(eb.back()) && std::isfinite(c.rows_b[i].effective_tokens)) {
      sum_b += eb.back();
      keys_b += c.rows_b[i].effective_tokens;
      ++rows_b;
    }
  }
  const double n = static_cast<double>(T);
  ImGui::TextUnformatted("Row entropy of the weights");
  Tip("Entropy -\xCE\xA3 w log w of each query's weights: log n when the row spreads evenly over "
      "n keys, 0 when it is one-hot. exp(entropy) is how many keys the query averages, in "
      "effect. Weights whose rows do not sum to 1 (softmax over the queries, a mask after the "
      "softmax without renormalising, an attention sink's share) are not distributions: no "
      "entropy is plotted for them.");
  DrawEntropyHeadline({dist_a, sum_a, keys_a, rows_a}, {dist_b, sum_b, keys_b, rows_b}, T);

  PlotSpec spec;
  spec.id = "entropies";
  spec.size = ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing());
  spec.x0 = -0.5;
  spec.x1 = n - 0.5;
  spec.y0 = 0;
  spec.y1 = top * 1.4;  // room for the legend
  spec.x_label = "query row";
  spec.legend_above = true;
  spec.y_label = "entropy (nats)";
  if (T <= 24)
    for (size_t i = 0; i < T; ++i) spec.x_tick_labels.push_back(c.view_a->row_labels[i]);
  const PlotAxes axes = BeginPlot(spec);
  if (dist_a) PlotLine(axes, x, ea, kColorA, T <= 64 ? 2.0f : 1.0f);
  if (dist_b)  // dashes need room
    PlotLine(axes, x, eb, kColorB, T <= 64 ? 2.0f : 1.0f, T <= 64 ? 6.0f : 0.0f);
  if (T <= 64)
    for (size_t i = 0; i < T; ++i) {
      if (dist_a) PlotPoint(axes, x[i], ea[i], kColorA, 3.5f);
      if (dist_b) PlotPoint(axes, x[i], eb[i], kColorB, 3.5f);
    }
  PlotLegend(axes, {{"A: " + c.name_a, kColorA}, {"B: " + c.name_b, kColorB}}, true);
  if (axes.hovered) {
    const int i = std::clamp(static_cast<int>(std::lround(axes.XAt(ImGui::GetIO().MousePos.x))), 0,
                             static_cast<int>(T) - 1);
    ImGui::SetTooltip(
        "query %d \"%s\"\nA: entropy %.3f nats, max weight %.3f\nB: entropy %.3f "
        "nats, max weight %.3f",
        i, c.view_a->row_labels[i].c_str(), ea[i], c.rows_a[i].max_weight, eb[i],
        c.rows_b[i].max_weight);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The panel

void DrawComparePanel(AppState& state) {
  CompareState& c = state.compare;
  c.hover_next = HeatmapViewHoverCell{};
  DrawControls(state);
  DrawBugDiagnosis(state);
  if (!c.decoded_note.empty()) ImGui::TextWrapped("%s", c.decoded_note.c_str());
  if (!c.error.empty()) ErrorText(c.error);
  if (!c.view_a && !c.view_b) {
    for (HeatmapSlot& s : c.maps) s.image_min = s.image_max = ImVec2(0, 0);
    return;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float plot_h = std::clamp(avail.y * 0.34f, 150.0f, 260.0f);
  const float maps_h = avail.y - plot_h - ImGui::GetStyle().ItemSpacing.y;
  // The maps on a canvas that scrolls when they are stacked (a narrow window).
  const std::optional<StageView>* views[] = {&c.view_a, &c.view_b, &c.diff};
  const char* ids[] = {"compare_a", "compare_b", "compare_diff"};
  const std::array<ImRect, 3> probe =
      MapBoxes(state, views, ids, ImVec2(0, 0), ImVec2(avail.x, maps_h));
  const bool stacked = probe[1].Min.y > probe[0].Min.y + 1;  // B under A: one column
  ImGui::BeginChild(
      "compare_maps", ImVec2(avail.x, maps_h), false,
      ImGuiWindowFlags_NoBackground |
          (stacked ? 0 : ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse));
  const ImVec2 maps_origin = ImGui::GetCursorScreenPos();
  const ImVec2 maps_avail = ImGui::GetContentRegionAvail();
  DrawMaps(state, maps_origin, maps_avail);
  float bottom = maps_origin.y;
  for (const HeatmapSlot& m : c.maps) bottom = std::max(bottom, m.image_max.y + 8);
  if (bottom > maps_origin.y + maps_avail.y) {  // stacked and taller than the region: scroll
    ImGui::SetCursorScreenPos(ImVec2(maps_origin.x, bottom));
    ImGui::Dummy(ImVec2(1, 1));
  }
  ImGui::EndChild();
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + maps_h + ImGui::GetStyle().ItemSpacing.y));
  // gradient_state.h: ||dL/dW_query|| of A and B, from the full computation (not as decoded)
  if (!c.decoded) DrawCompareGradientReadout(state);
  DrawEntropies(state, ImVec2(avail.x, plot_h - ImGui::GetTextLineHeightWithSpacing()));
  c.hover = c.hover_next;
}

}  // namespace attnlab::gui
