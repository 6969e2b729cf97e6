// stage_info.h: which matrix of the engine's stages a heatmap shows for the chosen head and
// batch, and the token labels. What a stage is called, its formula and how it is coloured are
// the core's (heatmap_spec.h). Nothing is computed here; the matrices are the engine's own, apart
// from one head's columns of Q, K and V when there are several heads.
#pragma once

#include <string>
#include <vector>

#include "attnlab/figures/heatmap_spec.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

/// The matrix on screen for `stage` (rows x cols), or nullptr when there is none (no stages
/// yet, or weights_dropped without dropout) or it is the mask (see StageCells).
const Matrix* StageMatrix(const AppState& state, Stage stage);

/// The cells on screen for `stage`: StageMatrix, or for the mask the stages' own 0/1 bytes.
CellSource StageCells(const AppState& state, Stage stage);

/// Copies the shown head's d_k columns of Q, K and V (those whose heatmap is dirty) into
/// state.head_qkv, where StageMatrix finds them when the scenario has several heads.
void RefreshHeadSlices(AppState& state);

/// Token i as the axes show it (VisibleToken: whitespace as visible signs; right-to-left runs in
/// visual order, VisualOrder), "" out of range.
std::string RowLabel(const AppState& state, int64_t i);

/// Query row i (`key` false) or key j (`key` true) of the shown head's T x T maps (scores,
/// logits, weights) as their axes label it: RowLabel, except where a head's rows are pieces of
/// the tokens (projections.head_split "view_no_transpose": "journey[2:4]", StageContent's rule).
std::string HeadAxisLabel(const AppState& state, int64_t i, bool key);

/// Column j's label: key token j, or "d<j>" for X, Q, K, V (the column in the whole matrix) and
/// the context.
std::string ColumnLabel(const AppState& state, Stage stage, int64_t j);

}  // namespace attnlab::gui
