// training.h: the Training view's functions that do not draw (training.cpp; train_panel.cpp
// draws it): its worker, its exports, its script commands, the settings the Code view shows,
// its state for scripts, and its release at exit. Its state is AppState::training (TrainState,
// app_state.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/lessons/train.h"

namespace attnlab::gui {

struct AppState;
struct TrainState;

/// The two runs' names in the legends, the maps' titles and the PNG plot: scaled, unscaled.
inline constexpr const char* kLegendNames[2] = {"scaled by 1/\u221Ad_k", "unscaled"};

/// Starts training `scenario`'s head scaled, then unscaled, on a worker thread (stopping the
/// one before), with e's task, steps and d_k.
void StartTraining(TrainState& e, const Scenario& scenario);
/// On the UI thread: copies what the worker did since the last call (losses, snapshots),
/// keeping the scrubber on the newest snapshot while it follows.
void CopyProgress(TrainState& e);
/// On the UI thread: CopyProgress, then takes the finished runs (a move, no training work).
void CollectResults(TrainState& e);
/// Writes both loss curves to `path`: a PNG plot (LossCurvesPng) for .png, else CSV; returns
/// "Wrote PATH". Errors: WriteFileAtomic's. Needs both runs finished.
std::string ExportCurves(const TrainState& e, const std::string& path);
/// Writes trained head `which` (0 scaled, 1 unscaled) as a scenario; returns "Wrote PATH".
std::string SaveHead(const TrainState& e, int which, const std::string& path);

/// The Training view's script commands (script.cpp's table lists them, with their words).
/// train-run TASK STEPS D_K: trains the shown scenario's head scaled, then unscaled, in the
/// background. Errors: std::invalid_argument "unknown task T", "d_k must be 8, 64 or 256".
void TrainScriptRun(AppState& state, const std::string& task, int64_t steps, int64_t dk);
/// train-wait: blocks until the worker ends. Errors: std::runtime_error "no training result: ...".
void TrainScriptWait(AppState& state);
/// train-wait-steps N: blocks (sleeping 2 ms at a time) until N steps of both runs are done.
void TrainScriptWaitSteps(AppState& state, int64_t steps);
/// train-cancel: asks the worker to stop after its current step.
void TrainScriptCancel(AppState& state);
/// train-code scaled|unscaled|off: what the Code view shows (the Training loop or the scenario).
void TrainScriptCode(AppState& state, const std::string& which);
/// train-step N: the attention maps at the snapshot at or before step N.
/// Errors: std::runtime_error "nothing trained yet".
void TrainScriptStep(AppState& state, int64_t step);
/// train-save-scenario scaled|unscaled FILE: one trained head as a scenario file. Errors:
/// std::runtime_error "nothing trained yet", "the run has not finished", or the file's error.
void TrainScriptSaveScenario(AppState& state, bool unscaled, const std::string& path);
/// train-export-csv FILE.csv, train-export-curves FILE.csv|FILE.png: both loss curves. Errors:
/// as TrainScriptSaveScenario.
void TrainScriptExportCurves(AppState& state, const std::string& path);
/// The Training view's settings (task, steps, d_k) with `scale`: the loop the Code view shows.
TrainOptions TrainViewOptions(const AppState& state, bool scale);
/// The Training view's state as JSON text (the script's save-views): running, finished_runs,
/// message, loss (both runs' losses shown so far), snapshots (counts), snapshot_step.
std::string TrainViewJson(AppState& state);
/// Stops the worker and frees the Training view's GL textures (while the GL context lives).
void ReleaseTrainTextures(AppState& state);

}  // namespace attnlab::gui
