// views.h: what the trick, compare and code views show, made from the run on screen by the
// core (GeneratePyTorchCode, AveragingTrick, ExtractStage, DifferenceView, RowsPeakStats). No
// drawing here: the panels draw these caches, and the script's save-views writes them, so a test
// reads exactly what the learner sees. Each Refresh does its work only when its inputs changed.
//
// The trick and compare views cost tens of milliseconds per refresh at T = 2048 (AveragingTrick
// alone about 90 ms). While a slider is held on such a size they follow it at most every
// kHeldRefreshSeconds, so the drag stays smooth; they catch up as soon as it is let go.
//
// Legend: T tokens, C channels (d_in), H heads, d_k head size.
#pragma once

#include <string>

#include "attnlab/lessons/experiments.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

/// state.code becomes GeneratePyTorchCode(state.shown), when the shown run changed.
void RefreshCode(AppState& state);

/// From T x T cells on, the trick and compare views are held back during a drag.
inline constexpr int64_t kHeavyCells = 512 * 512;
inline constexpr double kHeldRefreshSeconds = 0.25;

/// state.trick becomes AveragingTrick of the shown run for state.batch, when either changed
/// (held back during a drag at large T unless `now`).
void RefreshTrick(AppState& state, bool now = false);

/// The notebook's variable holding step i's result: xbow, xbow2, xbow3, out.
const char* TrickResultName(int step);

/// Step i's verdict as the notebook prints it: "torch.allclose(xbow, xbow2) \u2192 True"; for v1
/// "xbow: the reference". `shapes_differ` is set when the result cannot be compared with v1's
/// (v4's T x d_k against T x C).
std::string TrickVerdict(const TrickStep& step, int i, bool* shapes_differ = nullptr);

/// "max |xbow2 - xbow| = 0" or "= 1.2e-07", or why there is none (shapes differ).
std::string TrickMaxDiff(const AppState& state, const TrickStep& step, int i);

/// When allclose says False although the step equals v1 up to float32 rounding (max
/// difference below 1e-6), why: allclose's atol of 1e-8 is stricter than float32 rounding for
/// values near 0. "" otherwise.
std::string TrickRoundingNote(const TrickStep& step, int i);

/// The compare view's caches (B's run, the three views, the row entropies), made again when the
/// mode, its settings, the stage, head, batch or the shown run changed (held back during a drag
/// at large T unless `now`).
void RefreshCompare(AppState& state, bool now = false);

/// The variance experiment again when its seed or trials changed (a few tens of milliseconds).
void RefreshVariance(AppState& state);

/// The peaking panel's entropy curve again when its row, head, scores, mask or scaling changed
/// (peaking_panel.cpp).
void RefreshPeaking(AppState& state);

/// After the frame's actions (ApplyPendingActions): the central view on screen and the variance
/// experiment are brought up to date, so draw calls only draw.
void RefreshVisibleViews(AppState& state);

/// The mode's short name for scripts and the layout: scaled, causal, heads, temperature, pinned.
const char* CompareModeName(CompareMode mode);

/// The views' state as JSON (the script's save-views): the central view, the tour, the trick's
/// verdicts, the compare view's names and row entropies, the code's length. Refreshes first.
std::string ViewsJson(AppState& state);

}  // namespace attnlab::gui
