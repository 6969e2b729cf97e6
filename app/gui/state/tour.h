// tour.h: the guided tour: Raschka's chapter 3 told in the app, one short card per step beside
// the heatmap it is about (attention without weights -> trainable weights -> scaling -> why
// 1/sqrt(d_k) -> causal mask -> dropout -> heads -> why scaling helps learning), each step on
// the preset that prints the book's numbers. The steps are data; actions/apply.cpp moves through
// them (TourCommand) and panels/tour_panel.cpp draws the card and the highlight.
#pragma once

#include <optional>
#include <vector>

#include "attnlab/figures/heatmap_spec.h"

namespace attnlab::gui {

struct AppState;

/// What a step points at.
enum class TourTarget {
  kNone,
  kScores,
  kMask,
  kLogits,
  kWeights,
  kWeightsDropped,
  kContext,
  kPeaking,   ///< the softmax peaking panel
  kVariance,  ///< the "why 1/sqrt(d_k)" panel
  kControls,  ///< the controls column
  kViews,     ///< the view switch in the menu bar
};

struct TourStep {
  const char* title;
  const char* text;
  const char* preset;  ///< loaded on entering the step unless already on screen; nullptr: keep
  TourTarget target;
  TourTarget also = TourTarget::kNone;  ///< a second, fainter highlight
  /// Something the learner is asked to do ("Your turn: ..."), or nullptr.
  const char* task = nullptr;
  /// True once the task is done, judged on the window's state each frame.
  bool (*task_done)(const AppState&) = nullptr;
};

/// The stage map a target is (kScores -> Stage::kScores, ...), or nullopt for a panel or none.
std::optional<Stage> TargetStage(TourTarget target);

/// The steps, in order.
const std::vector<TourStep>& TourSteps();

/// Marks the current step's task done (it stays done) once its check holds. Call once a
/// frame, after the frame's actions and hover.
void UpdateTourTask(AppState& state);

}  // namespace attnlab::gui
