// training.cpp: see training.h. The Training view's worker and what the UI thread takes from
// it, its exports and its script commands; train_panel.cpp draws the view.
//
// The UI thread only starts and cancels the worker and copies what it did: training never runs
// in a frame. After each step the worker appends the new loss (and snapshot) to `live` under a
// mutex; once a frame the UI thread copies what is new into `shown`, so the curves grow and the
// maps can be scrubbed while the run goes on. The worker runs at a lower priority (nice 10) so
// the window keeps its frame rate on a busy machine.
#include "gui/actions/training.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "attnlab/base/file_io.h"
#include "attnlab/figures/loss_plot.h"
#include "attnlab/lessons/train.h"
#include "attnlab/model/scenario.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {
namespace {

// On the worker: appends what run `r` did since the last call to e.live.
void Publish(TrainState& e, int r, const TrainRun& so_far) {
  std::lock_guard<std::mutex> lock(e.mu);
  RunsSoFar& live = e.live;
  live.loss[r].insert(live.loss[r].end(), so_far.loss.begin() + live.loss[r].size(),
                      so_far.loss.end());
  live.snapshots[r].insert(live.snapshots[r].end(),
                           so_far.snapshots.begin() + live.snapshots[r].size(),
                           so_far.snapshots.end());
  if (live.tokens.empty()) {
    live.tokens = so_far.example_tokens;
    live.example = so_far.options.example;
  }
}

// The worker: scaled, then unscaled, each step published.
void TrainBothWays(TrainState& e, const Scenario& scenario, const TrainOptions& o) {
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);  // the UI first
  std::vector<TrainRun> runs;
  std::string error;
  try {
    for (int r = 0; r < 2; ++r) {
      TrainOptions one = o;
      one.scale = r == 0;
      const int64_t before = e.done;
      runs.push_back(
          TrainAttentionHeadObserved(scenario, one, [&e, r, before](const TrainRun& so_far) {
            Publish(e, r, so_far);
            e.done = before + static_cast<int64_t>(so_far.loss.size());
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
}

}  // namespace

// Starts training scaled then unscaled on `scenario` in the background.
void StartTraining(TrainState& e, const Scenario& scenario) {
  e.Stop();
  e.cancel = false;
  e.finished = false;
  e.done = 0;
  e.run_steps = e.steps;
  e.total = 2 * e.steps;
  e.running = true;
  e.message.clear();
  e.live = RunsSoFar();
  e.shown = RunsSoFar();
  e.runs.clear();
  e.snapshot = 0;
  e.follow = true;
  ++e.generation;
  e.uploaded = {-1, -1};
  TrainOptions o;
  o.task = TrainTasks()[e.task].task;
  o.steps = e.steps;
  o.d_k = kTrainDkChoices[e.dk];
  e.worker = std::thread([&e, scenario, o] { TrainBothWays(e, scenario, o); });
}

// On the UI thread: copies what the worker did since the last frame (a few floats and at most
// a few T x T snapshots), keeping the scrubber on the newest snapshot while it follows.
void CopyProgress(TrainState& e) {
  if (!e.running) return;
  std::lock_guard<std::mutex> lock(e.mu);
  for (int r = 0; r < 2; ++r) {
    const auto& from = e.live.loss[r];
    e.shown.loss[r].insert(e.shown.loss[r].end(), from.begin() + e.shown.loss[r].size(),
                           from.end());
    const auto& snaps = e.live.snapshots[r];
    e.shown.snapshots[r].insert(e.shown.snapshots[r].end(),
                                snaps.begin() + e.shown.snapshots[r].size(), snaps.end());
  }
  if (e.shown.tokens.empty()) {
    e.shown.tokens = e.live.tokens;
    e.shown.example = e.live.example;
  }
  if (e.follow) e.snapshot = std::max(0, static_cast<int>(e.shown.snapshots[0].size()) - 1);
}

// On the UI thread: takes the finished runs (a move, no training work).
void CollectResults(TrainState& e) {
  CopyProgress(e);
  if (!e.running || !e.finished) return;
  if (e.worker.joinable()) e.worker.join();
  e.running = false;
  std::lock_guard<std::mutex> lock(e.mu);
  if (!e.pending_error.empty()) {
    e.message = "Cannot train: " + e.pending_error;
  } else if (e.pending.size() == 2 && !e.pending[1].cancelled) {
    e.runs = std::move(e.pending);
    for (int r = 0; r < 2; ++r) {  // the finished runs: with the trained head's snapshot
      e.shown.loss[r] = e.runs[r].loss;
      e.shown.snapshots[r] = e.runs[r].snapshots;
    }
    e.snapshot = static_cast<int>(e.runs[0].snapshots.size()) - 1;
  } else {
    e.message = "Cancelled: the curves so far stay; Run again to export.";
  }
  e.pending.clear();
}

// Writes the curves, as CSV or as a PNG plot by the path's extension; returns the message.
std::string ExportCurves(const TrainState& e, const std::string& path) {
  const bool png = path.size() >= 4 && path.compare(path.size() - 4, 4, ".png") == 0;
  const std::vector<const TrainRun*> runs = {&e.runs[0], &e.runs[1]};
  WriteFileAtomic(
      path, png ? LossCurvesPng(runs, {kLegendNames[0], kLegendNames[1]}, LossPlotTitle(e.runs[0]))
                : LossCurvesCsv(runs, {"scaled", "unscaled"}));
  return "Wrote " + path;
}

std::string SaveHead(const TrainState& e, int which, const std::string& path) {
  WriteFileAtomic(path, WriteScenario(TrainedHeadScenario(e.runs[which])));
  return "Wrote " + path;
}

TrainOptions TrainViewOptions(const AppState& state, bool scale) {
  const TrainState& e = state.training;
  TrainOptions o;
  o.task = TrainTasks()[e.task].task;
  o.steps = e.steps;
  o.d_k = kTrainDkChoices[e.dk];
  o.scale = scale;
  return o;
}

std::string TrainViewJson(AppState& state) {
  TrainState& e = state.training;
  CollectResults(e);
  nlohmann::json j = {
      {"running", e.running}, {"finished_runs", e.runs.size()}, {"message", e.message}};
  j["loss"] = {e.shown.loss[0], e.shown.loss[1]};
  j["snapshots"] = {e.shown.snapshots[0].size(), e.shown.snapshots[1].size()};
  j["snapshot_step"] = e.shown.snapshots[0].empty() ? -1 : e.shown.snapshots[0][e.snapshot].step;
  return j.dump();
}

void ReleaseTrainTextures(AppState& state) {
  TrainState& e = state.training;
  e.Stop();
  for (HeatmapSlot& slot : e.maps) slot.gpu.Release();
}

// The script's train-* commands (script.cpp's table names them and checks their words).

void TrainScriptRun(AppState& state, const std::string& task_name, int64_t steps, int64_t dk) {
  TrainState& e = state.training;
  const std::optional<TrainTask> task = ParseTrainTask(task_name);
  if (!task) throw std::invalid_argument("unknown task " + task_name);
  e.task = static_cast<int>(*task);
  e.steps = steps;
  const auto* it = std::find(std::begin(kTrainDkChoices), std::end(kTrainDkChoices), dk);
  if (it == std::end(kTrainDkChoices)) throw std::invalid_argument("d_k must be 8, 64 or 256");
  e.dk = static_cast<int>(it - std::begin(kTrainDkChoices));
  StartTraining(e, state.shown);
}

void TrainScriptWait(AppState& state) {
  TrainState& e = state.training;
  if (e.worker.joinable()) e.worker.join();
  CollectResults(e);
  if (e.runs.empty()) throw std::runtime_error("no training result: " + e.message);
}

void TrainScriptWaitSteps(AppState& state, int64_t steps) {
  TrainState& e = state.training;
  while (e.running && !e.finished && e.done.load() < steps)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CopyProgress(e);
}

void TrainScriptCancel(AppState& state) { state.training.cancel = true; }

void TrainScriptCode(AppState& state, const std::string& which) {
  state.code.training = which != "off";
  if (state.code.training) state.code.loop.clear();
  state.code.training_scaled = which != "unscaled";
}

namespace {

// The runs that train-step and the exports read. Errors: std::runtime_error "nothing trained
// yet", and with `finished` "the run has not finished".
TrainState& Trained(AppState& state, bool finished) {
  TrainState& e = state.training;
  if (e.shown.snapshots[0].empty()) throw std::runtime_error("nothing trained yet");
  if (finished && e.runs.size() != 2) throw std::runtime_error("the run has not finished");
  return e;
}

}  // namespace

void TrainScriptStep(AppState& state, int64_t step) {
  TrainState& e = Trained(state, false);
  const auto& snaps = e.shown.snapshots[0];
  int k = 0;
  while (k + 1 < static_cast<int>(snaps.size()) && snaps[k + 1].step <= step) ++k;
  e.snapshot = k;
  e.follow = k + 1 == static_cast<int>(snaps.size());
}

void TrainScriptSaveScenario(AppState& state, bool unscaled, const std::string& path) {
  TrainState& e = Trained(state, true);
  e.message = SaveHead(e, unscaled ? 1 : 0, path);
}

void TrainScriptExportCurves(AppState& state, const std::string& path) {
  TrainState& e = Trained(state, true);
  e.message = ExportCurves(e, path);
}

}  // namespace attnlab::gui
