// stage_view.h: the stages of one run as matrices to present: which stage, head and batch, the
// values, the tokens along both axes, and which cells are masked. Shared by figures, exports,
// the window's compare view and the presentation model (heatmap_spec.h).
//
// Legend: T tokens, d_out context width, H heads, B batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/figures/heatmap_spec.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

/// The rows x cols of one matrix of `stage` in a run of this shape: T x d_in (X), T x d_k (Q, K,
/// V: one head), T x d_out (context), T x 1 (sink), else T x T.
std::pair<int64_t, int64_t> StageSize(Stage stage, const Shape& shape);

/// One matrix of one stage with what it is (title, labels, signed or not: HeatmapContent).
/// Owns its values: figures, exports and the compare view use it; the window draws the engine's
/// own matrices without this copy.
struct StageView : HeatmapContent {
  Matrix values;  ///< T x T (context: T x d_out)
  /// A float64 scenario's same cells as computed in double (values holds them rounded to
  /// float32, for drawing); empty for float32 scenarios and for the mask. CSV and NPY write it.
  MatrixD values64;
  MaskMatrix masked;  ///< 1 where the cell is masked (drawn hatched); may be empty
};

/// The cells of `stage` for `head` and `batch` in the float32 reference of a bfloat16 / float16
/// run (Stages::f32), shaped as ExtractStage's values: what float32 gives for the same
/// scenario. Empty for other runs, for the mask, for a stage the run does not have and for a
/// head or batch out of range. Errors: none.
Matrix ReferenceCells(const Stages& stages, Stage stage, int64_t head, int64_t batch);

/// The view of `stage` for `head` (per-head stages only) and `batch` of a run of `scenario`.
/// Errors: std::invalid_argument naming the culprit ("head 3 is out of range: the scenario has
/// 2 heads (0..1)", "weights_dropped needs dropout p > 0", "sink needs scaling.sink").
StageView ExtractStage(const Stages& stages, const Scenario& scenario, Stage stage, int64_t head,
                       int64_t batch);

/// The compare view's difference: a - b cell by cell (same shape required), drawn on a
/// diverging map; masked where either is masked; titled "<stage>: A − B" with the two given
/// names (subtitle "A − B, cell by cell"). Errors: std::invalid_argument when the shapes differ
/// (naming both).
StageView DifferenceView(const StageView& a, const StageView& b, const std::string& name_a,
                         const std::string& name_b);

/// The three heatmaps of a comparison, titled as both the window and its exports show them.
struct ComparedViews {
  StageView a, b, diff;
};

/// A and B retitled "A: <name_a> (current)" and "B: <name_b>" (their stage title moves into the
/// subtitle), with DifferenceView(a, b) between them. Errors as DifferenceView.
ComparedViews CompareViews(StageView a, StageView b, const std::string& name_a,
                           const std::string& name_b);

}  // namespace attnlab
