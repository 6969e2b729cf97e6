// stage_info.h: which matrix of the engine's stages a heatmap shows for the chosen head and
// batch, and the token labels. What a stage is called, its formula and how it is coloured are
// the core's (heatmap_spec.h). Nothing is computed here; the matrices are the engine's own.
#pragma once

#include <string>
#include <vector>

#include "attnlab/heatmap_spec.h"
#include "gui/app_state.h"

namespace attnlab::gui {

/// The matrix on screen for `stage` (rows x cols), or nullptr when there is none (no stages
/// yet, or weights_dropped without dropout).
const Matrix* StageMatrix(const AppState& state, Stage stage);

/// Token i as the axes show it (VisibleToken: whitespace as visible signs), "" out of range.
std::string RowLabel(const AppState& state, int64_t i);

/// Column j's label: key token j, or "d<j>" for the context.
std::string ColumnLabel(const AppState& state, Stage stage, int64_t j);

}  // namespace attnlab::gui
