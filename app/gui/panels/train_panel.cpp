// train_panel.cpp: the Training view. One attention head is trained on a synthetic task
// (core train.h) twice from the same seed, with 1/sqrt(d_k) and without, in a background
// thread (actions/training.cpp); the view plots both loss curves and shows the chosen example's
// attention at any step (slider, play/pause) as heatmaps with token labels and a colorbar, and
// exports the curves (CSV or a PNG plot, loss_plot.h) and either trained head as a scenario.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "attnlab/figures/colormap.h"
#include "attnlab/lessons/train.h"
#include "attnlab/model/scenario.h"
#include "gui/actions/training.h"
#include "gui/panels/panels.h"
#include "gui/state/actions.h"
#include "gui/state/app_state.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

const ImU32 kScaledColor = IM_COL32(90, 150, 230, 255);    // loss_plot.h LossCurveColor(0)
const ImU32 kUnscaledColor = IM_COL32(235, 110, 80, 255);  // LossCurveColor(1)
const char* const kRunNames[2] = {"scaled", "unscaled"};

// ---------------------------------------------------------------------------------------------
// Drawing
void DrawSettings(AppState& state, TrainState& e) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Train a head");
  Tip("W_query, W_key and W_value start from this scenario's seed (as nn.Linear draws them) and "
      "are trained with Adam (lr 0.01, PyTorch's defaults otherwise) on batches of 16 drawn with "
      "the PyTorch generator: once with 1/\u221Ad_k, once without. `attention-lab code --train` "
      "writes the same loop in PyTorch.");
  ImGui::BeginDisabled(e.running);
  const float em = ImGui::GetFontSize();
  BeginToolbarItem(false, LabeledWidth(em * 11.0f, "task"));
  ImGui::SetNextItemWidth(em * 11.0f);
  if (ImGui::BeginCombo("task", TrainTasks()[e.task].name)) {
    for (int i = 0; i < static_cast<int>(TrainTasks().size()); ++i) {
      if (ImGui::Selectable(TrainTasks()[i].name, i == e.task)) e.task = i;
      Tip(TrainTasks()[i].description);
    }
    ImGui::EndCombo();
  }
  Tip(TrainTasks()[e.task].description);
  BeginToolbarItem(false, LabeledWidth(em * 7.5f, "steps"));
  ImGui::SetNextItemWidth(em * 7.5f);
  IntInput("steps", &e.steps, 10, 5000, "Adam steps of each run.");
  BeginToolbarItem(false, LabeledWidth(em * 4.0f, "d_k"));
  ImGui::SetNextItemWidth(em * 4.0f);
  const std::string dk = std::to_string(kTrainDkChoices[e.dk]);
  if (ImGui::BeginCombo("d_k", dk.c_str())) {
    for (int i = 0; i < 3; ++i)
      if (ImGui::Selectable(std::to_string(kTrainDkChoices[i]).c_str(), i == e.dk)) e.dk = i;
    ImGui::EndCombo();
  }
  Tip("The head size: W are d_in x d_k. Unscaled dot products grow like \u221Ad_k, so the larger "
      "d_k, the more peaked the unscaled softmax and the smaller its gradients.");
  ImGui::EndDisabled();
  BeginToolbarItem(false, em * 4.0f);
  if (!e.running) {
    if (ImGui::Button("Run")) StartTraining(e, state.shown);
    Tip("Train scaled and unscaled, one after the other, in the background.");
  } else if (ImGui::Button("Cancel")) {
    e.cancel = true;
  }
  // The progress and the message follow on the same line when they fit, else below it (a
  // narrow window used to cut them off).
  auto same_line_if_fits = [](float width) {
    ImGui::SameLine();
    if (width > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  };
  if (e.running) {
    const float width = ImGui::GetFontSize() * 14.0f;
    same_line_if_fits(width);
    const float f = e.total > 0 ? static_cast<float>(e.done.load()) / e.total : 0.0f;
    const std::string label =
        std::to_string(e.done.load()) + " / " + std::to_string(e.total) + " steps";
    ImGui::ProgressBar(f, ImVec2(width, 0), label.c_str());
  }
  if (!e.message.empty()) {
    same_line_if_fits(ImGui::CalcTextSize(e.message.c_str()).x);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", e.message.c_str());
    ImGui::PopStyleColor();
  }
}

// The loss curves of both runs so far (the x axis is the whole run, so they grow to the right),
// the scrubbed step marked.
void DrawCurves(const TrainState& e, ImVec2 size) {
  double hi = 0;
  for (const std::vector<float>& loss : e.shown.loss)
    for (float l : loss) hi = std::max(hi, static_cast<double>(l));
  PlotSpec spec;
  spec.id = "train_loss";
  spec.size = size;
  spec.x0 = 0;
  spec.x1 = std::max<double>(1, static_cast<double>(e.run_steps - 1));
  spec.y0 = 0;
  spec.y1 = hi > 0 ? hi * 1.05 : 1.0;
  spec.x_label = "Adam step";
  spec.legend_above = true;
  spec.y_label = "loss (cross-entropy)";
  const PlotAxes axes = BeginPlot(spec);
  std::vector<std::pair<std::string, ImU32>> legend;
  for (int r = 0; r < 2; ++r) {
    const std::vector<float>& loss = e.shown.loss[r];
    std::vector<double> x, y;
    ThinCurve(loss, static_cast<int>(axes.max.x - axes.min.x), &x, &y);
    const ImU32 color = r == 0 ? kScaledColor : kUnscaledColor;
    PlotLine(axes, x, y, color, 1.5f);
    char text[96];
    if (loss.empty())
      std::snprintf(text, sizeof text, "%s: not started", kLegendNames[r]);
    else
      std::snprintf(text, sizeof text, "%s: %.3g at step %zu", kLegendNames[r], loss.back(),
                    loss.size() - 1);
    legend.emplace_back(text, color);
  }
  if (!e.shown.snapshots[0].empty()) {
    const double step = static_cast<double>(e.shown.snapshots[0][e.snapshot].step);
    PlotVLine(axes, std::min(step, spec.x1), IM_COL32(255, 200, 60, 200));
  }
  PlotLegend(axes, legend, true);
}

// The content (title, labels) of run r's map at snapshot `snap`.
HeatmapContent MapContent(const TrainState& e, int r, const TrainSnapshot& snap) {
  HeatmapContent c;
  c.stage = Stage::kWeights;
  c.title = std::string("weights, ") + kLegendNames[r];
  c.subtitle = "step " + std::to_string(snap.step) + " of " + std::to_string(e.run_steps) +
               (snap.step == e.run_steps ? " (trained)" : "");
  c.help = "softmax(Q K\xE1\xB5\x80" +
           std::string(r == 0 ? " / \xE2\x88\x9A"
                                "d_k"
                              : "") +
           ") of the example: how much each query (row) takes from each key (column).";
  c.row_labels = e.shown.tokens;
  c.col_labels = e.shown.tokens;
  return c;
}

// Run r's attention map at the scrubbed snapshot (uploaded when it changes), with hover values.
void DrawRunMap(AppState& state, TrainState& e, int r, ImVec2 origin, ImVec2 size) {
  static const char* const ids[2] = {"train_scaled", "train_unscaled"};
  const std::vector<TrainSnapshot>& snaps = e.shown.snapshots[r];
  const bool has = e.snapshot < static_cast<int>(snaps.size()) && !e.shown.tokens.empty();
  const int64_t key = e.generation * 1000000 + e.snapshot;
  if (has && e.uploaded[r] != key) {
    UploadMatrix(e.maps[r], snaps[e.snapshot].weights, MapContent(e, r, snaps[e.snapshot]));
    e.uploaded[r] = key;
  }
  HeatmapViewSpec view;
  view.id = ids[r];
  view.values = has ? &snaps[e.snapshot].weights : nullptr;
  view.empty_text = r == 1 ? "(unscaled: not at this step yet)" : "(no step yet)";
  view.labels_key = e.generation;
  view.row_labels = true;  // both maps alike: the same cell width, the same decimals
  const HeatmapViewHover h = DrawHeatmapView(state, e.maps[r], view, origin, size);
  if (!h.active || !has) return;
  const Matrix& w = snaps[e.snapshot].weights;
  const std::vector<std::string>& t = e.shown.tokens;
  ImGui::SetTooltip(
      "query %lld (%s) attends to key %lld (%s) with weight %.4f\nstep %lld, %s "
      "(rows: queries, columns: keys; indices from 0)",
      static_cast<long long>(h.row), t[h.row].c_str(), static_cast<long long>(h.col),
      t[h.col].c_str(), w(h.row, h.col), static_cast<long long>(snaps[e.snapshot].step),
      kLegendNames[r]);
}

// The scrub slider, play/pause, and the two maps of the chosen example at that step.
void DrawScrub(AppState& state, TrainState& e, ImVec2 size) {
  const int last = static_cast<int>(e.shown.snapshots[0].size()) - 1;
  if (e.playing && last > 0) {
    e.play_clock += ImGui::GetIO().DeltaTime;
    if (e.play_clock > 1.0 / 30) {
      e.play_clock = 0;
      e.snapshot = e.snapshot >= last ? 0 : e.snapshot + 1;
    }
  }
  if (ImGui::Button(e.playing ? "Pause" : "Play")) e.playing = !e.playing;
  Tip("Watch the attention of the example below form, step by step.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  const std::string fmt = "step " + std::to_string(e.shown.snapshots[0][e.snapshot].step);
  if (ImGui::SliderInt("##step", &e.snapshot, 0, last, fmt.c_str())) e.follow = e.snapshot == last;
  Tip("The step whose attention the maps show (the weights the loss of that step was computed "
      "with; the last is the trained head). While training, the newest step is followed unless "
      "you scrub back.");
  e.follow = e.follow || e.snapshot == last;
  std::string tokens;
  for (const std::string& t : e.shown.tokens) tokens += t + " ";
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Example %lld of the first batch: %s",
                      static_cast<long long>(e.shown.example), tokens.c_str());
  ImGui::PopTextWrapPos();
  Tip("The task's symbols (A..P); associative recall shows key:value pairs and the queried key. "
      "The head sees no mask: every token may attend to every token.");
  // Which rows the loss scores: the other rows' weights are whatever the head gives them.
  static const char* const scored[] = {
      "The loss scores rows 1 to T-1 (each should attend to the token before it); row 0 is not "
      "scored.",
      "The loss scores every row (each should attend to token 0).",
      "Only the last position is scored: the last row (the query) should attend to the pair "
      "whose key it holds; the other rows are not trained, so their weights mean little."};
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(scored[static_cast<int>(TrainTasks()[e.task].task)]);
  ImGui::PopTextWrapPos();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float gap = ImGui::GetFontSize() * 0.5f;
  // As tall as wide, about: square cells (the labels above take about what the row labels and
  // the colorbar take across).
  const float w = (size.x - gap) * 0.5f;
  const ImVec2 each(w, std::max(80.0f, std::min(ImGui::GetContentRegionAvail().y, w)));
  DrawRunMap(state, e, 0, origin, each);
  DrawRunMap(state, e, 1, ImVec2(origin.x + each.x + gap, origin.y), each);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + each.y));
  ImGui::Dummy(ImVec2(0, 0));
}

// A toolbar button that wraps to the next line when the row is full.
bool ToolbarButton(const char* label) {
  BeginToolbarItem(false, ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2);
  return ImGui::Button(label);
}

void ToolbarPath(const char* id, std::string* path) {
  BeginToolbarItem(false, ImGui::GetFontSize() * 9.0f);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
  ImGui::InputText(id, path);
}

void DrawExports(AppState& state, TrainState& e) {
  auto attempt = [&e](const std::function<std::string()>& f) {
    try {
      e.message = f();
    } catch (const std::exception& ex) {
      e.message = ex.what();
    }
  };
  ImGui::BeginDisabled(e.runs.size() != 2);
  ToolbarPath("##curves", &e.curves_path);
  if (ToolbarButton("Export curves")) attempt([&] { return ExportCurves(e, e.curves_path); });
  Tip("Write both loss curves to the file on the left: .png a plot with axes and a legend (as "
      "`attention-lab train -o run.png`), .csv one column per run.");
  ToolbarPath("##scenario", &e.scenario_path);
  for (int which = 0; which < 2; ++which) {
    const std::string label = std::string("Save ") + kRunNames[which];
    if (ToolbarButton(label.c_str())) attempt([&] { return SaveHead(e, which, e.scenario_path); });
    Tip("Save that trained head to the file on the left: a scenario with init \"matrix\" on "
        "this example's input.");
  }
  if (ToolbarButton("Open in Heatmaps")) {
    const Scenario s = TrainedHeadScenario(e.runs[0]);
    Emit(state, EditScenario{"open the trained head", [s](Scenario& x) { x = s; }});
  }
  Tip("Show the trained (scaled) head in the Heatmaps view (Ctrl+Z goes back).");
  ImGui::EndDisabled();
}

}  // namespace

void DrawTrainPanel(AppState& state) {
  TrainState& e = state.training;
  CollectResults(e);
  DrawSettings(state, e);
  if (e.shown.snapshots[0].empty()) {
    ImGui::TextWrapped(
        "Run trains this scenario's head twice from the same seed, with and without 1/\u221Ad_k, "
        "on the chosen task; both loss curves and the attention of one example appear here as "
        "they train. Try d_k = 256: the unscaled head's softmax is peaked from the start and it "
        "learns slower, or stalls.");
    return;
  }
  // The curves across the top, the scrubber and the two maps side by side under them.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float bottom = ImGui::GetFrameHeightWithSpacing() * 2.2f;  // exports, may wrap
  const float curves_h = std::max(120.0f, (avail.y - bottom) * 0.38f);
  const float maps_h =
      std::max(120.0f, avail.y - bottom - curves_h - ImGui::GetStyle().ItemSpacing.y);
  ImGui::BeginChild("train_curves", ImVec2(avail.x, curves_h), false, ImGuiWindowFlags_NoScrollbar);
  DrawCurves(e, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  ImGui::BeginChild("train_maps", ImVec2(avail.x, maps_h), false, ImGuiWindowFlags_NoScrollbar);
  DrawScrub(state, e, ImVec2(avail.x, maps_h));
  ImGui::EndChild();
  DrawExports(state, e);
}

}  // namespace attnlab::gui
