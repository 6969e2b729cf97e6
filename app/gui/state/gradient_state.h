// gradient_state.h: the gradients view's state and caches (gradient_panel.cpp draws them): the
// loss key J the learner clicked, the gradients of "row i should attend to key j" (grad.h) for
// the run on screen, the row's Jacobian and its norm against the multiplier, and the compare
// view's readout of ||dL/dW_query|| for A and B. Refreshed only when what they come from changes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/lessons/grad.h"

namespace attnlab::gui {

struct AppState;
struct HeatmapSlot;  // app_state.h

struct GradientState {
  int64_t key = 0;       ///< J, the key the query row should attend to (clamped to the row's keys)
  std::string made_for;  ///< what the caches below were made from
  std::optional<Gradients> grads;  ///< of the shown run for (row, key); none when error is set
  std::string error;               ///< why there is none (a masked key, ...)
  Matrix jacobian;                 ///< RowJacobian of the shown batch, head and row
  std::vector<double> multipliers, norms;  ///< JacobianNormCurve of that row
  /// The heatmaps' ids, in the order of `maps` (also their names in --layout's "views").
  static constexpr int kMapCount = 5;
  static constexpr const char* kMapIds[kMapCount] = {"grad_jacobian", "grad_logits", "grad_scores",
                                                     "grad_Q", "grad_K"};
  /// Heatmaps: kMapIds' maps (incomplete type here); null until the view is first drawn.
  std::unique_ptr<HeatmapSlot[]> maps;
  bool upload = true;
  /// Whether the last frame drew the loss row's table under the maps (they printed no numbers),
  /// and where it ended (screen y, pixels): save-views reports both.
  bool loss_row_shown = false;
  float loss_row_y1 = 0;
  // The compare view's readout: ||dL/dW_query|| of A and of B for (row, key).
  std::string compare_for;
  double norm_a = 0, norm_b = 0;
  std::string compare_error;
};

/// Makes the caches again if the shown run, batch, head, row or key changed.
void RefreshGradients(AppState& state);

/// Frees the view's GPU textures (at exit, while the GL context is still current).
void ReleaseGradientTextures(AppState& state);

/// The view's numbers as JSON text (the script's save-views): row, key, loss, norms, error, and
/// "loss_row": the loss row's table (shown, y1, and the text of its weights, grad_logits and
/// grad_scores rows, as printed).
std::string GradientsJson(AppState& state);

}  // namespace attnlab::gui
