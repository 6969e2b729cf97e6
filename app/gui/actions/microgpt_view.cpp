// microgpt_view.cpp: see microgpt_view.h; microgpt_panel.cpp draws the view.
//
// [SECTION] The worker and what the UI thread takes from it
// [SECTION] Script commands and JSON
#include "gui/actions/microgpt_view.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "attnlab/base/file_io.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

// ---------------------------------------------------------------------------------------------
// [SECTION] The worker and what the UI thread takes from it
// ---------------------------------------------------------------------------------------------
namespace {

// The worker: microgpt.py's training loop, each step's loss, document and parameters handed
// over under the lock. It never reads what the UI thread owns.
void TrainWorker(MicrogptViewState& e, MicrogptSettings settings) {
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);  // the UI first
  std::string error;
  try {
    Microgpt run(MicrogptDocuments(MicrogptNamesText()), settings);
    {
      std::lock_guard<std::mutex> lock(e.mu);
      e.live_chars = run.Characters();
      e.live.params.emplace_back(0, run.Params());
    }
    while (run.StepsDone() < settings.steps && !e.cancel) {
      const MicrogptStep s = run.Step();
      std::lock_guard<std::mutex> lock(e.mu);
      e.live.losses.push_back(s.loss);
      e.live.documents.push_back(run.Documents()[s.document]);
      e.live.params.emplace_back(run.StepsDone(), run.Params());
      e.done = run.StepsDone();
    }
  } catch (const std::exception& ex) {
    error = ex.what();
  }
  std::lock_guard<std::mutex> lock(e.mu);
  e.pending_error = error;
  e.finished = true;
}

// On the UI thread: moves the worker's new steps into `shown` (the lock held for a few moves).
void TakeProgress(MicrogptViewState& e) {
  if (!e.running) return;
  bool finished = false;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (e.chars.empty()) e.chars = e.live_chars;
    auto move_all = [](auto& from, auto& to) {
      to.insert(to.end(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
      from.clear();
    };
    move_all(e.live.losses, e.shown.losses);
    move_all(e.live.documents, e.shown.documents);
    move_all(e.live.params, e.shown.params);
    finished = e.finished;
    if (finished && !e.pending_error.empty()) e.message = "Cannot train: " + e.pending_error;
  }
  if (e.follow && !e.shown.losses.empty()) e.step = static_cast<int>(e.shown.losses.size());
  if (finished) {
    if (e.worker.joinable()) e.worker.join();
    e.running = false;
    if (e.cancel && static_cast<int64_t>(e.shown.losses.size()) < e.total_steps)
      e.message = "Stopped after " + std::to_string(e.shown.losses.size()) + " steps.";
  }
}

// The checkpoint after `step` steps, or null.
const std::vector<double>* ParamsAt(const MicrogptViewState& e, int64_t step) {
  for (const auto& [s, params] : e.shown.params)
    if (s == step) return &params;
  return nullptr;
}

}  // namespace

bool HasStep(const MicrogptViewState& e, int64_t step) {
  return step >= 1 && step <= static_cast<int64_t>(e.shown.documents.size()) && ParamsAt(e, step);
}

MicrogptViewState& MicrogptView(AppState& state) {
  if (!state.microgpt) state.microgpt = std::make_shared<MicrogptViewState>();
  return *state.microgpt;
}

void MicrogptStartTraining(AppState& state) {
  MicrogptViewState& e = MicrogptView(state);
  MicrogptSettings s;
  s.seed_text = e.seed;
  s.seed_key = PythonSeedKey(e.seed);
  if (e.steps < 1 || e.steps > 100000)
    throw std::invalid_argument("steps must be 1 to 100000 (the command line takes more)");
  s.steps = e.steps;
  e.Stop();
  e.cancel = false;
  e.finished = false;
  e.done = 0;
  e.live = MicrogptRecord();
  e.live_chars.clear();
  e.pending_error.clear();
  e.shown = MicrogptRecord();
  e.chars.clear();
  e.total_steps = s.steps;
  e.source = "trained here: names list, seed " + e.seed;
  e.message.clear();
  e.step = 1;
  e.follow = true;
  ++e.generation;
  e.running = true;
  e.worker = std::thread([&e, s] { TrainWorker(e, s); });
}

void MicrogptOpen(AppState& state, const std::string& path) {
  MicrogptViewState& e = MicrogptView(state);
  MicrogptSavedRun run;
  try {
    run = ReadMicrogptRunJson(ReadFile(path, uint64_t{1} << 30, "the run"));
  } catch (const std::exception& ex) {
    throw std::runtime_error(path + ": " + ex.what());
  }
  if (run.record.documents.empty() && !run.record.losses.empty())
    throw std::runtime_error(path +
                             ": the run has no \"step_documents\"; save it again with "
                             "`attention-lab microgpt -o` of this version");
  e.Stop();
  e.shown = std::move(run.record);
  e.chars = run.chars;
  e.total_steps = run.settings.steps;
  e.source = path + " (seed " + run.settings.seed_text + ")";
  e.message.clear();
  e.step = static_cast<int>(e.shown.losses.size());
  e.follow = false;
  ++e.generation;
}

void RefreshMicrogpt(AppState& state) {
  if (!state.microgpt) return;
  MicrogptViewState& e = *state.microgpt;
  TakeProgress(e);
  const int64_t steps = static_cast<int64_t>(e.shown.losses.size());
  if (steps == 0) return;
  e.step = std::clamp<int>(e.step, 1, static_cast<int>(steps));
  const int64_t key = e.generation * 10000000 + e.step;
  if (key == e.computed || !HasStep(e, e.step) || !HasStep(e, 1)) return;
  e.computed = key;
  try {
    const std::u32string& doc = e.shown.documents[e.step - 1];
    e.now = MicrogptAttentionOf(e.chars, *ParamsAt(e, e.step), doc);
    e.first = MicrogptAttentionOf(e.chars, *ParamsAt(e, 1), doc);
    e.attention_error.clear();
  } catch (const std::exception& ex) {
    e.now = e.first = MicrogptAttention();
    e.attention_error = ex.what();
  }
  for (HeatmapSlot& slot : e.maps) slot.dirty = true;
}

void ReleaseMicrogptView(AppState& state) {
  if (!state.microgpt) return;
  state.microgpt->Stop();
  for (HeatmapSlot& slot : state.microgpt->maps) slot.gpu.Release();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Script commands and JSON
// ---------------------------------------------------------------------------------------------

void MicrogptScriptTrain(AppState& state, int64_t steps, const std::string& seed) {
  MicrogptViewState& e = MicrogptView(state);
  e.steps = steps;
  e.seed = seed;
  MicrogptStartTraining(state);
}

void MicrogptScriptWait(AppState& state) {
  MicrogptViewState& e = MicrogptView(state);
  if (e.worker.joinable()) e.worker.join();
  TakeProgress(e);
  RefreshMicrogpt(state);
  if (!e.message.empty() && e.message.rfind("Cannot", 0) == 0) throw std::runtime_error(e.message);
}

void MicrogptScriptStep(AppState& state, int64_t step) {
  MicrogptViewState& e = MicrogptView(state);
  TakeProgress(e);
  if (!HasStep(e, step))
    throw std::runtime_error("no step " + std::to_string(step) +
                             " (steps with a checkpoint: 1 to " +
                             std::to_string(e.shown.losses.size()) + ")");
  e.step = static_cast<int>(step);
  e.follow = false;
  RefreshMicrogpt(state);
}

std::string MicrogptViewJson(AppState& state) {
  MicrogptViewState& e = MicrogptView(state);
  RefreshMicrogpt(state);
  nlohmann::json j;
  j["running"] = e.running;
  j["steps_done"] = e.shown.losses.size();
  j["total_steps"] = e.total_steps;
  j["checkpoints"] = e.shown.params.size();
  j["step"] = e.step;
  j["message"] = e.message;
  if (!e.shown.losses.empty()) {
    const double loss = e.shown.losses[e.step - 1];
    j["step_line"] = MicrogptStepLine(e.step, e.total_steps, loss, false);
    j["loss_hex"] = PythonFloatHex(loss);
    j["document"] = MicrogptUtf8(e.shown.documents[e.step - 1]);
    nlohmann::json heads = nlohmann::json::array();
    for (const MatrixD& w : e.now.weights) {
      nlohmann::json rows = nlohmann::json::array();
      for (Eigen::Index i = 0; i < w.rows(); ++i)
        rows.push_back(std::vector<double>(w.row(i).data(), w.row(i).data() + w.cols()));
      heads.push_back(rows);
    }
    j["weights"] = heads;
  }
  return j.dump();
}

}  // namespace attnlab::gui
