// train_panel.cpp: the Training view. One attention head is trained on a synthetic task
// (core train.h) twice from the same seed, with 1/sqrt(d_k) and without, in a background
// thread; the view plots both loss curves and shows the chosen example's attention at any step
// (slider, play/pause), and exports the curves (CSV) and either trained head as a scenario.
//
// The UI thread only starts and cancels the worker and copies its finished runs: training
// never runs in a frame. Script commands (script.cpp) reach it through TrainScriptCommand.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>
#include <thread>

#include "attnlab/colormap.h"
#include "attnlab/file_io.h"
#include "attnlab/scenario.h"
#include "attnlab/train.h"
#include "gui/actions.h"
#include "gui/app_state.h"
#include "gui/panels/panels.h"
#include "gui/plot.h"
#include "gui/widgets.h"

namespace attnlab::gui {
namespace {

const ImU32 kScaledColor = IM_COL32(90, 150, 230, 255);
const ImU32 kUnscaledColor = IM_COL32(235, 110, 80, 255);
constexpr int64_t kDkChoices[] = {8, 64, 256};
const char* const kRunNames[2] = {"scaled", "unscaled"};

// The experiment: its settings, the worker thread and the runs it finished.
struct TrainExperiment {
  int task = 2;  // index into TrainTasks(): associative recall shows the gap best
  int64_t steps = 300;
  int dk = 2;  // index into kDkChoices
  std::string csv_path = "training-curves.csv", scenario_path = "trained-head.json";
  std::string message;  // the last export's result, or an error

  std::thread worker;
  std::atomic<int64_t> done{0};  // steps done over both runs
  std::atomic<bool> cancel{false}, finished{false};
  std::mutex mu;                 // guards pending and pending_error
  std::vector<TrainRun> pending;  // the worker's result, taken by the UI thread
  std::string pending_error;

  bool running = false;
  int64_t total = 0;        // steps of both runs
  std::vector<TrainRun> runs;  // scaled, unscaled: what is shown
  int snapshot = 0;          // scrubbed snapshot index
  bool playing = false;
  double play_clock = 0;

  ~TrainExperiment() { Stop(); }
  void Stop() {
    cancel = true;
    if (worker.joinable()) worker.join();
    running = false;
  }
};

TrainExperiment& Experiment() {
  static TrainExperiment e;
  return e;
}

// Starts training scaled then unscaled on `scenario` in the background.
void StartTraining(TrainExperiment& e, const Scenario& scenario) {
  e.Stop();
  e.cancel = false;
  e.finished = false;
  e.done = 0;
  e.total = 2 * e.steps;
  e.running = true;
  e.message.clear();
  TrainOptions o;
  o.task = TrainTasks()[e.task].task;
  o.steps = e.steps;
  o.d_k = kDkChoices[e.dk];
  e.worker = std::thread([&e, scenario, o] {
    std::vector<TrainRun> runs;
    std::string error;
    try {
      for (bool scale : {true, false}) {
        TrainOptions one = o;
        one.scale = scale;
        const int64_t before = e.done;
        runs.push_back(TrainAttentionHead(scenario, one, [&e, before](int64_t n) {
          e.done = before + n;
          return !e.cancel.load();
        }));
        if (e.cancel) break;
      }
    } catch (const std::exception& ex) {
      error = ex.what();
    }
    std::lock_guard<std::mutex> lock(e.mu);
    e.pending = std::move(runs);
    e.pending_error = error;
    e.finished = true;
  });
}

// On the UI thread: takes the finished runs (a move, no training work).
void CollectResults(TrainExperiment& e) {
  if (!e.running || !e.finished) return;
  if (e.worker.joinable()) e.worker.join();
  e.running = false;
  std::lock_guard<std::mutex> lock(e.mu);
  if (!e.pending_error.empty()) {
    e.message = "Cannot train: " + e.pending_error;
  } else if (e.pending.size() == 2 && !e.pending[1].cancelled) {
    e.runs = std::move(e.pending);
    e.snapshot = static_cast<int>(e.runs[0].snapshots.size()) - 1;
  } else {
    e.message = "Cancelled.";
  }
  e.pending.clear();
}

// ---------------------------------------------------------------------------------------------
// Drawing

void DrawSettings(AppState& state, TrainExperiment& e) {
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
  const std::string dk = std::to_string(kDkChoices[e.dk]);
  if (ImGui::BeginCombo("d_k", dk.c_str())) {
    for (int i = 0; i < 3; ++i)
      if (ImGui::Selectable(std::to_string(kDkChoices[i]).c_str(), i == e.dk)) e.dk = i;
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
  if (e.running) {
    ImGui::SameLine();
    const float f = e.total > 0 ? static_cast<float>(e.done.load()) / e.total : 0.0f;
    const std::string label = std::to_string(e.done.load()) + " / " + std::to_string(e.total) +
                              " steps";
    ImGui::ProgressBar(f, ImVec2(ImGui::GetFontSize() * 14.0f, 0), label.c_str());
  }
  if (!e.message.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", e.message.c_str());
  }
}

// The loss curves of both runs, the scrubbed step marked.
void DrawCurves(const TrainExperiment& e, ImVec2 size) {
  double hi = 0;
  for (const TrainRun& r : e.runs)
    for (float l : r.loss) hi = std::max(hi, static_cast<double>(l));
  PlotSpec spec;
  spec.id = "train_loss";
  spec.size = size;
  spec.x0 = 0;
  spec.x1 = std::max<double>(1, static_cast<double>(e.runs[0].loss.size() - 1));
  spec.y0 = 0;
  spec.y1 = hi * 1.05;
  spec.x_label = "Adam step";
  spec.y_label = "loss (cross-entropy)";
  const PlotAxes axes = BeginPlot(spec);
  for (size_t r = 0; r < e.runs.size(); ++r) {
    std::vector<double> x, y;
    for (size_t s = 0; s < e.runs[r].loss.size(); ++s) {
      x.push_back(static_cast<double>(s));
      y.push_back(e.runs[r].loss[s]);
    }
    PlotLine(axes, x, y, r == 0 ? kScaledColor : kUnscaledColor, 1.5f);
  }
  const double step = static_cast<double>(e.runs[0].snapshots[e.snapshot].step);
  PlotVLine(axes, std::min(step, spec.x1), IM_COL32(255, 200, 60, 200));
  char a[64], b[64];
  std::snprintf(a, sizeof a, "scaled by 1/\u221Ad_k: %.3f at the end", e.runs[0].loss.back());
  std::snprintf(b, sizeof b, "unscaled: %.3f at the end", e.runs[1].loss.back());
  PlotLegend(axes, {{a, kScaledColor}, {b, kUnscaledColor}}, true);
}

// One T x T attention map (weights in [0, 1], viridis) with hover values.
void DrawMap(const Matrix& w, const std::vector<std::string>& tokens, const char* title,
             ImU32 title_color, ImVec2 origin, float side) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddText(origin, title_color, title);
  const float top = origin.y + ImGui::GetTextLineHeightWithSpacing();
  const int64_t T = w.rows();
  const float cell = side / static_cast<float>(T);
  const Colormap& cm = DefaultColormap(false);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      const float v = std::clamp(w(i, j), 0.0f, 1.0f);
      const Rgb c = cm.lut[static_cast<size_t>(std::lround(v * 255.0f))];
      const ImVec2 p(origin.x + j * cell, top + i * cell);
      dl->AddRectFilled(p, ImVec2(p.x + cell, p.y + cell), IM_COL32(c.r, c.g, c.b, 255));
    }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, top));
  ImGui::InvisibleButton(title, ImVec2(side, side));
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int64_t i = std::clamp<int64_t>(static_cast<int64_t>((m.y - top) / cell), 0, T - 1);
    const int64_t j = std::clamp<int64_t>(static_cast<int64_t>((m.x - origin.x) / cell), 0, T - 1);
    ImGui::SetTooltip("query %lld (%s) attends to key %lld (%s) with weight %.4f\n(rows: queries, "
                      "columns: keys; indices from 0)",
                      static_cast<long long>(i), tokens[i].c_str(), static_cast<long long>(j),
                      tokens[j].c_str(), w(i, j));
  }
}

// The scrub slider, play/pause, and the two maps of the chosen example at that step.
void DrawScrub(TrainExperiment& e, ImVec2 size) {
  const int last = static_cast<int>(e.runs[0].snapshots.size()) - 1;
  if (e.playing) {
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
  const std::string fmt = "step " + std::to_string(e.runs[0].snapshots[e.snapshot].step);
  ImGui::SliderInt("##step", &e.snapshot, 0, last, fmt.c_str());
  Tip("The step whose attention the maps show (the weights the loss of that step was computed "
      "with; the last is the trained head).");
  const TrainRun& r = e.runs[0];
  std::string tokens;
  for (const std::string& t : r.example_tokens) tokens += t + " ";
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Example %lld of the first batch: %s",
                      static_cast<long long>(r.options.example), tokens.c_str());
  ImGui::PopTextWrapPos();
  Tip("The task's symbols (A..P); associative recall shows key:value pairs and the queried key. "
      "The head sees no mask: every token may attend to every token.");
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float gap = ImGui::GetFontSize();
  const float side = std::max(40.0f, std::min((size.x - gap) * 0.5f,
                                              ImGui::GetContentRegionAvail().y -
                                                  ImGui::GetTextLineHeightWithSpacing() * 2));
  DrawMap(e.runs[0].snapshots[e.snapshot].weights, r.example_tokens, "scaled by 1/\u221Ad_k",
          kScaledColor, origin, side);
  DrawMap(e.runs[1].snapshots[std::min<size_t>(e.snapshot, e.runs[1].snapshots.size() - 1)].weights,
          r.example_tokens, "unscaled", kUnscaledColor, ImVec2(origin.x + side + gap, origin.y),
          side);
  ImGui::TextDisabled("rows: queries, columns: keys; weight 0 dark .. 1 yellow");
}

// Writes the curves as CSV; returns the message to show.
std::string ExportCurves(const TrainExperiment& e, const std::string& path) {
  WriteFileAtomic(path, LossCurvesCsv({&e.runs[0], &e.runs[1]}, {"scaled", "unscaled"}));
  return "Wrote " + path;
}

std::string SaveHead(const TrainExperiment& e, int which, const std::string& path) {
  WriteFileAtomic(path, WriteScenario(TrainedHeadScenario(e.runs[which])));
  return "Wrote " + path;
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

void DrawExports(AppState& state, TrainExperiment& e) {
  auto attempt = [&e](const std::function<std::string()>& f) {
    try {
      e.message = f();
    } catch (const std::exception& ex) {
      e.message = ex.what();
    }
  };
  ToolbarPath("##csv", &e.csv_path);
  if (ToolbarButton("Export curves (CSV)")) attempt([&] { return ExportCurves(e, e.csv_path); });
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
}

}  // namespace

void DrawTrainPanel(AppState& state) {
  TrainExperiment& e = Experiment();
  CollectResults(e);
  DrawSettings(state, e);
  if (e.runs.empty()) {
    ImGui::TextWrapped(
        "Run trains this scenario's head twice from the same seed, with and without 1/\u221Ad_k, "
        "on the chosen task; then both loss curves and the attention of one example appear "
        "here. Try d_k = 256: the unscaled head's softmax is peaked from the start and it "
        "learns slower, or stalls.");
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float bottom = ImGui::GetFrameHeightWithSpacing() * 2.2f;  // exports, may wrap
  const float half = (avail.x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  ImGui::BeginChild("train_curves", ImVec2(half, avail.y - bottom), false,
                    ImGuiWindowFlags_NoScrollbar);
  DrawCurves(e, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("train_maps", ImVec2(half, avail.y - bottom), false,
                    ImGuiWindowFlags_NoScrollbar);
  DrawScrub(e, ImVec2(half, avail.y - bottom));
  ImGui::EndChild();
  DrawExports(state, e);
}

bool TrainScriptCommand(AppState& state, const std::vector<std::string>& w, std::string* failure) {
  TrainExperiment& e = Experiment();
  const std::string& cmd = w[0];
  try {
    if (cmd == "train-run") {  // train-run TASK STEPS D_K
      const std::optional<TrainTask> task = ParseTrainTask(w.at(1));
      if (!task) throw std::invalid_argument("unknown task " + w.at(1));
      e.task = static_cast<int>(*task);
      e.steps = std::stoll(w.at(2));
      const int64_t dk = std::stoll(w.at(3));
      const auto* it = std::find(std::begin(kDkChoices), std::end(kDkChoices), dk);
      if (it == std::end(kDkChoices)) throw std::invalid_argument("d_k must be 8, 64 or 256");
      e.dk = static_cast<int>(it - std::begin(kDkChoices));
      StartTraining(e, state.shown);
    } else if (cmd == "train-wait") {  // blocks until the worker is done (scripts only)
      if (e.worker.joinable()) e.worker.join();
      CollectResults(e);
      if (e.runs.empty()) throw std::runtime_error("no training result: " + e.message);
    } else if (cmd == "train-cancel") {
      e.cancel = true;
    } else if (cmd == "train-step") {  // scrub to the snapshot at or before step N
      if (e.runs.empty()) throw std::runtime_error("nothing trained yet");
      const int64_t step = std::stoll(w.at(1));
      const auto& snaps = e.runs[0].snapshots;
      int k = 0;
      while (k + 1 < static_cast<int>(snaps.size()) && snaps[k + 1].step <= step) ++k;
      e.snapshot = k;
    } else if (cmd == "train-export-csv") {
      if (e.runs.empty()) throw std::runtime_error("nothing trained yet");
      e.message = ExportCurves(e, w.at(1));
    } else if (cmd == "train-save-scenario") {  // scaled|unscaled FILE
      if (e.runs.empty()) throw std::runtime_error("nothing trained yet");
      e.message = SaveHead(e, w.at(1) == "unscaled" ? 1 : 0, w.at(2));
    } else {
      return false;
    }
  } catch (const std::exception& ex) {
    *failure = cmd + ": " + ex.what();
  }
  return true;
}

}  // namespace attnlab::gui
