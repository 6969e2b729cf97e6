// stage_info.h: what the window needs to know about each heatmap: its name, its formula, its
// colour scale, and which matrix of the engine's stages it shows for the chosen head and batch.
// Nothing is computed here; the matrices are the engine's own (no copies).
#pragma once

#include <string>
#include <vector>

#include "attnlab/figure.h"
#include "gui/app_state.h"

namespace attnlab::gui {

/// The heatmap's heading with its formula, e.g. "weights = softmax(logits)" (depends on the
/// normalization and dropout of the shown scenario).
std::string StageHeading(const AppState& state, Stage stage);

/// One sentence on what the stage is, for its tooltip.
const char* StageHelp(Stage stage);

/// Signed data (scores, logits, context) uses a diverging colormap centred on zero; so do
/// weights with negative entries ("sum" normalization), as in figures (ExtractStage).
bool StageIsDiverging(const AppState& state, Stage stage);

/// Stages whose masked cells are hatched (mask, logits, weights, weights_dropped).
bool StageHatchesMask(Stage stage);

/// The matrix on screen for `stage` (rows x cols), or nullptr when there is none (no stages
/// yet, or weights_dropped without dropout).
const Matrix* StageMatrix(const AppState& state, Stage stage);

/// Row i's label (query token i) and column j's (key token j, or "d<j>" for the context).
/// Whitespace tokens (words_and_spaces, chars) show as the visible space sign.
std::string RowLabel(const AppState& state, int64_t i);
std::string ColumnLabel(const AppState& state, Stage stage, int64_t j);

/// The colormap index the stage is drawn with.
int StageColormap(const AppState& state, Stage stage);

}  // namespace attnlab::gui
