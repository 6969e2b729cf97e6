// apply.h: the one place where actions (state/actions.h) change AppState: applying the frame's
// queue with undo, the engine's reruns (in the background for large scenarios), and starting
// from a scenario. Defined in apply.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "attnlab/model/scenario.h"

namespace attnlab::gui {

struct AppState;

/// A mask (the scenario's, or a part of an and / or) switched to `kind` gets a setting to start
/// from: W = 3, P = T / 2, two documents of T / 2 tokens; and / or combine the mask it was with
/// a sliding window of 3 (and) or a prefix of T / 2 keys (or). The same kind: unchanged.
void StartMaskKind(MaskSpec& m, MaskKind kind, int64_t T);

/// Applies the queued actions in order, then reruns the engine if the scenario changed.
/// Never throws: a scenario that cannot run sets state.error (the last good stages stay on
/// screen); a failed file or export action sets state.status and state.action_error.
void ApplyPendingActions(AppState& state);

/// Completes a background run (BackgroundRun) that has finished, or with `wait` waits for it:
/// its stages become the shown ones (or its error the banner). The scenario edited since it
/// started runs at the end of the frame (ApplyPendingActions). Nothing when none runs.
void FinishBackgroundRun(AppState& state, bool wait);

/// Waits for a background run and runs the scenario edited since, on this thread: afterwards
/// the stages are state.scenario's (scripts, file and undo actions need them so).
void SettleRuns(AppState& state);

/// Ends the open undo step (the mouse and keyboard let go of the widget being edited).
void CloseUndoStep(AppState& state);

/// Sets the scenario as the starting point (no undo step) and runs it.
void StartScenario(AppState& state, const Scenario& scenario, const std::string& preset_id);

}  // namespace attnlab::gui
