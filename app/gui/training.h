// training.h: the Training view's functions that do not draw (train_panel.cpp draws it): its
// script commands, the settings the Code view shows, its state for scripts, and its release at
// exit. Its state is AppState::training (TrainState, app_state.h).
#pragma once

#include <string>
#include <vector>

#include "attnlab/train.h"

namespace attnlab::gui {

struct AppState;

/// The training view's script commands (train-run, train-wait, train-cancel, train-step,
/// train-export-csv, train-save-scenario); false if `words` is none of them. Failures go to
/// *failure.
bool TrainScriptCommand(AppState& state, const std::vector<std::string>& words,
                        std::string* failure);
/// The Training view's settings (task, steps, d_k) with `scale`: the loop the Code view shows.
TrainOptions TrainViewOptions(const AppState& state, bool scale);
/// The Training view's state as JSON text (the script's save-views): running, finished_runs,
/// message, loss (both runs' losses shown so far), snapshots (counts), snapshot_step.
std::string TrainViewJson(AppState& state);
/// Stops the worker and frees the Training view's GL textures (while the GL context lives).
void ReleaseTrainTextures(AppState& state);

}  // namespace attnlab::gui
