// microgpt_panel.cpp: the microgpt view (microgpt_view.h; its worker and script commands are
// actions/microgpt_view.cpp): Train or Open, the loss curve, the step slider, and the chosen
// step's document's four heads beside step 1's, as the Heatmaps view draws its maps
// (DrawHeatmapView), with the token loop's numbers on hover.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "gui/actions/microgpt_view.h"
#include "gui/panels/panels.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {

namespace {

// A token as a learner reads it: the character, or "BOS" (the start and end of a name).
std::string TokenLabel(const MicrogptViewState& e, int token) {
  if (token < 0 || token >= static_cast<int>(e.chars.size())) return "BOS";
  return MicrogptUtf8(std::u32string(1, e.chars[token]));
}

void DrawControls(AppState& state, MicrogptViewState& e) {
  BeginToolbarItem(true, ImGui::GetFontSize() * 7);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4);
  int steps = static_cast<int>(e.steps);
  if (ImGui::InputInt("steps", &steps, 0)) e.steps = std::clamp(steps, 1, 100000);
  Tip("Training steps (num_steps; microgpt.py's default is 1000, about 5 s here).");
  BeginToolbarItem(false, ImGui::GetFontSize() * 7);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4);
  ImGui::InputText("seed", &e.seed);
  Tip("random.seed(seed): any integer; 42 is the script's.");
  BeginToolbarItem(false, ImGui::GetFontSize() * 4);
  if (e.running) {
    if (ImGui::Button("Stop")) e.cancel = true;
    Tip("Stop after the current step; the steps so far stay.");
  } else if (ImGui::Button("Train")) {
    try {
      MicrogptStartTraining(state);
    } catch (const std::exception& ex) {
      e.message = ex.what();
    }
  }
  if (e.running) {
    BeginToolbarItem(false, ImGui::GetFontSize() * 10);
    const float f = e.total_steps > 0 ? float(e.done.load()) / float(e.total_steps) : 0.0f;
    char text[64];
    std::snprintf(text, sizeof text, "%lld / %lld", static_cast<long long>(e.done.load()),
                  static_cast<long long>(e.total_steps));
    ImGui::ProgressBar(f, ImVec2(ImGui::GetFontSize() * 10, 0), text);
  }
  BeginToolbarItem(false, ImGui::GetFontSize() * 14);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  ImGui::InputText("##run", &e.open_path);
  ImGui::SameLine();
  if (ImGui::Button("Open run")) {
    try {
      MicrogptOpen(state, e.open_path);
    } catch (const std::exception& ex) {
      e.message = ex.what();
    }
  }
  Tip("Open a run saved by `attention-lab microgpt --save-every 1 -o RUN.json` (every step "
      "scrubbable; without --save-every only the last step has its parameters).");
  if (!e.message.empty()) ErrorText(e.message);
}

void DrawLossCurve(const MicrogptViewState& e, ImVec2 size) {
  double hi = 0;
  for (double l : e.shown.losses) hi = std::max(hi, l);
  PlotSpec spec;
  spec.id = "microgpt_loss";
  spec.size = size;
  spec.x0 = 1;
  spec.x1 = std::max<double>(2, static_cast<double>(e.total_steps));
  spec.y0 = 0;
  spec.y1 = hi > 0 ? hi * 1.05 : 4.0;
  spec.x_label = "step";
  spec.y_label = "loss";
  spec.legend_above = true;
  const PlotAxes axes = BeginPlot(spec);
  std::vector<float> loss(e.shown.losses.begin(), e.shown.losses.end());
  std::vector<double> x, y;
  ThinCurve(loss, static_cast<int>(axes.max.x - axes.min.x), &x, &y);
  for (double& xi : x) xi += 1;  // ThinCurve counts from 0; the script's steps from 1
  const ImU32 color = IM_COL32(90, 150, 230, 255);
  PlotLine(axes, x, y, color, 1.5f);
  std::vector<std::pair<std::string, ImU32>> legend;
  if (!e.shown.losses.empty()) {
    legend.emplace_back(MicrogptStepLine(e.step, e.total_steps, e.shown.losses[e.step - 1], false),
                        color);
    PlotVLine(axes, e.step, IM_COL32(255, 200, 60, 200));
  }
  PlotLegend(axes, legend, true);
}

// Head h's map of `a` (the chosen step's or step 1's) at `step`, with the token loop's numbers
// on hover: the logit q.k / sqrt(4) and the weight.
void DrawHeadMap(AppState& state, MicrogptViewState& e, int slot_index, const MicrogptAttention& a,
                 int h, int64_t step, ImVec2 origin, ImVec2 size) {
  HeatmapSlot& slot = e.maps[slot_index];
  const bool has = h < static_cast<int>(a.weights.size());
  std::array<Matrix, 2 * kMicrogptHeads>& shown = e.map_values;
  if (has && slot.dirty) {
    const int64_t T = a.weights[h].rows();
    shown[slot_index] = a.weights[h].cast<float>();
    MaskMatrix& masked = e.map_masks[slot_index];
    masked = MaskMatrix::Zero(T, T);
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = i + 1; j < T; ++j) masked(i, j) = 1;
    HeatmapContent c;
    c.stage = Stage::kWeights;
    c.head = h;
    c.title = "head " + std::to_string(h + 1);
    c.subtitle = "step " + std::to_string(step);
    c.help =
        "softmax(q \xC2\xB7 k / \xE2\x88\x9A"
        "4) of each position (row) over the positions so far (columns): the rows the "
        "token loop computed one at a time, stacked.";
    for (int64_t i = 0; i < T; ++i) c.row_labels.push_back(TokenLabel(e, a.tokens[i]));
    c.col_labels = c.row_labels;
    c.hatch_masked = true;
    UploadMatrix(slot, shown[slot_index], c, masked);
    slot.dirty = false;
  }
  static const char* const ids[2 * kMicrogptHeads] = {"mg_now1",   "mg_now2",   "mg_now3",
                                                      "mg_now4",   "mg_first1", "mg_first2",
                                                      "mg_first3", "mg_first4"};
  HeatmapViewSpec view;
  view.id = ids[slot_index];
  view.values = has ? &shown[slot_index] : nullptr;
  view.masked = has ? &e.map_masks[slot_index] : nullptr;  // no numbers above the diagonal
  view.empty_text = "(train or open a run)";
  view.labels_key = e.computed;
  view.row_labels = h == 0;
  view.colorbar = h == kMicrogptHeads - 1;
  const HeatmapViewHover hv = DrawHeatmapView(state, slot, view, origin, size);
  if (!hv.active || !has || hv.col > hv.row) return;
  const int64_t i = hv.row, j = hv.col;
  const MatrixD& q = a.q;
  const MatrixD& k = a.k;
  const int hd = kMicrogptHeadDim;
  ImGui::SetTooltip(
      "step %lld, head %d: position %lld (%s) looks at position %lld (%s)\n"
      "q = [%.3f %.3f %.3f %.3f]\nk = [%.3f %.3f %.3f %.3f]\n"
      "logit = q \xC2\xB7 k / \xE2\x88\x9A"
      "4 = %.5f\nweight = exp(logit \xE2\x88\x92 row max) / sum = %.5f",
      static_cast<long long>(step), h + 1, static_cast<long long>(i),
      TokenLabel(e, a.tokens[i]).c_str(), static_cast<long long>(j),
      TokenLabel(e, a.tokens[j]).c_str(), q(i, h * hd), q(i, h * hd + 1), q(i, h * hd + 2),
      q(i, h * hd + 3), k(j, h * hd), k(j, h * hd + 1), k(j, h * hd + 2), k(j, h * hd + 3),
      a.logits[h](i, j), a.weights[h](i, j));
}

}  // namespace

void DrawMicrogptPanel(AppState& state) {
  MicrogptViewState& e = MicrogptView(state);
  RefreshMicrogpt(state);
  DrawControls(state, e);
  const float avail_w = ImGui::GetContentRegionAvail().x;
  if (e.shown.losses.empty() && !e.running) {
    ImGui::TextWrapped(
        "Karpathy's microgpt.py, bit for bit: a whole tiny GPT (4 heads of 4, one layer) that "
        "learns names. Train it here (the same losses as `attention-lab microgpt` prints), or "
        "open a run saved with -o. Then scrub the steps and watch its four heads learn.");
    return;
  }
  ImGui::TextDisabled("%s", e.source.c_str());
  DrawLossCurve(e, ImVec2(avail_w, ImGui::GetFontSize() * 8));
  const int last = static_cast<int>(e.shown.losses.size());
  if (last == 0) return;
  ImGui::SetNextItemWidth(avail_w);
  if (ImGui::SliderInt("##mgstep", &e.step, 1, last, "step %d")) e.follow = e.step == last;
  Tip("The step whose document and parameters the maps show (the parameters after that step).");
  e.follow = e.follow || (e.running && e.step == last);
  if (!HasStep(e, e.step)) {
    ImGui::TextDisabled("No parameters were saved for step %d (--save-every).", e.step);
    return;
  }
  ImGui::Text("Step %d's document: \"%s\"  (BOS, its letters; each row predicts the next)", e.step,
              MicrogptUtf8(e.shown.documents[e.step - 1]).c_str());
  if (!e.attention_error.empty()) ErrorText(e.attention_error);
  const float gap = ImGui::GetFontSize() * 0.5f;
  const float rows_h = ImGui::GetContentRegionAvail().y - gap;
  const float each_w = (avail_w - 3 * gap) / kMicrogptHeads;
  const ImVec2 each(each_w, std::max(80.0f, std::min(rows_h * 0.5f, each_w)));
  ImVec2 origin = ImGui::GetCursorScreenPos();
  for (int row = 0; row < 2; ++row) {
    const MicrogptAttention& a = row == 0 ? e.now : e.first;
    for (int h = 0; h < kMicrogptHeads; ++h)
      DrawHeadMap(state, e, row * kMicrogptHeads + h, a, h, row == 0 ? e.step : 1,
                  ImVec2(origin.x + h * (each.x + gap), origin.y + row * (each.y + gap)), each);
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + 2 * (each.y + gap)));
  ImGui::Dummy(ImVec2(0, 0));
}

}  // namespace attnlab::gui
