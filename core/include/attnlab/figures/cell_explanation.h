// cell_explanation.h: how the number in one heatmap cell was made, as the window's tooltip
// teaches it. A presentation rule beside heatmap_spec.h: the text is decided here, in core, with
// the run's real numbers; the window (app/gui/panels/heatmaps_panel.cpp) only draws the lines.
//
// For a cell (i, j) of a stage, for batch b and head h: the heading (which query and key, or
// which token and dimension), the formula of each step from the score up to that stage with its
// numbers (score = q_i · k_j, logit = score × m / √d_k, weight = exp(z - max) / Σ, dropout's keep
// or drop, the context's weighted sum, or where X, Q, K, V come from), the value and a note.
//
// Legend: T tokens, d_in input width, dh = d_k the head width of Q and K, dh_v of V, H heads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/figures/heatmap_spec.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"

namespace attnlab {

/// One line of a cell's explanation.
struct ExplanationLine {
  std::string text;   ///< UTF-8, one line (the window wraps it only when it is too wide)
  bool note = false;  ///< a side remark, drawn dimmed (ImGui's disabled text colour)
};

/// A cell's explanation, in the order it is drawn: heading, a rule, the formula lines, a rule,
/// the value, the note.
struct CellExplanation {
  std::string heading;  ///< "query 1 ("cat")  →  key 0 ("the")" or "Q[1, d3]  (token "cat")"
  std::vector<ExplanationLine> lines;  ///< from the score (or the input) up to the stage
  /// "value: 0.25" (the shortest text of the value, as heatmaps print it); in a bfloat16 /
  /// float16 run followed by the dtype, the same cell of the float32 run (Stages::f32) and the
  /// rounding error, value - float32: "value: 0.25 (bfloat16);  float32: 0.2498,  rounding
  /// error +0.0002"
  std::string value;
  std::string note;  ///< how rows and columns are counted (drawn dimmed)
};

/// The cell being explained: stage, batch b, head h, row i, column j (0-based, as PyTorch
/// indexes them), its value as shown, and its labels as the heatmap shows them.
struct CellRef {
  Stage stage = Stage::kWeights;
  int64_t batch = 0, head = 0, i = 0, j = 0;
  double value = 0.0;     ///< the cell's value (the float32 stage, or float64's when shown)
  std::string row_label;  ///< the token of row i ("cat")
  std::string col_label;  ///< T x T stages: the token of key j; else the column ("d3")
};

/// Whether `stage` is T x T, queries by keys (scores, mask, logits, weights, weights_dropped),
/// as against X, Q, K, V and the context, which are tokens by dimensions, and the sink (T x 1).
bool StageIsTokenByToken(Stage stage);

/// How cell `c` of a run was made. `st` is the run's stages and `s` the scenario it ran (both
/// validated and of the same shape); c.batch < B, c.head < H, c.i and c.j inside the stage's
/// matrix. The numbers are the run's own (float32 stages): the normaliser Σ is recomputed in
/// double from the logits row, only to explain the weight. Errors: none (indices out of range
/// are the caller's bug). Source of the formulas: pipeline.h (Vaswani et al. 2017 eq. 1;
/// LLMs-from-scratch ch03 for the mask and dropout).
CellExplanation ExplainCell(const Stages& st, const Scenario& s, const CellRef& c);

}  // namespace attnlab
