// stage_view.h: the stages of one run as matrices to present: which stage, head and batch, the
// values, the tokens along both axes, and which cells are masked. Shared by figures, exports,
// the window's compare view and the presentation model (heatmap_spec.h).
//
// Legend: T tokens, d_out context width, H heads, B batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/pipeline.h"

namespace attnlab {

/// The stages a figure can show.
enum class Stage { kScores, kMask, kLogits, kWeights, kWeightsDropped, kContext };

/// "scores", "mask", "logits", "weights", "weights_dropped", "context".
const char* StageName(Stage stage);
/// The stage called `name`, or nullopt.
std::optional<Stage> ParseStage(const std::string& name);
/// Every stage, in pipeline order.
const std::vector<Stage>& AllStages();
/// Stages with one matrix per head: scores, logits, weights, weights_dropped.
bool StageIsPerHead(Stage stage);

/// One matrix of one stage, ready to draw.
struct StageView {
  Stage stage = Stage::kWeights;
  int64_t head = 0, batch = 0;
  Matrix values;                        ///< T x T (context: T x d_out)
  std::vector<std::string> row_labels;  ///< T query tokens
  std::vector<std::string> col_labels;  ///< T key tokens (context: "d0".."d{d_out-1}")
  MaskMatrix masked;               ///< 1 where the cell is masked (drawn hatched); may be empty
  bool diverging = false;          ///< signed data: a diverging colormap centred on zero
  std::string title;               ///< e.g. "weights, head 0, batch 0 (scaled, multiplier 1)"
  std::string row_axis, col_axis;  ///< "query", "key" (context: "query", "dimension")
};

/// The view of `stage` for `head` (per-head stages only) and `batch` of a run of `scenario`.
/// Errors: std::invalid_argument naming the culprit ("head 3 is out of range: the scenario has
/// 2 heads (0..1)", "weights_dropped needs dropout p > 0").
StageView ExtractStage(const Stages& stages, const Scenario& scenario, Stage stage, int64_t head,
                       int64_t batch);

/// The compare view's difference: a - b cell by cell (same shape required), drawn on a
/// diverging map; masked where either is masked; titled "<stage>: A - B" with the two given
/// names. Errors: std::invalid_argument when the shapes differ (naming both).
StageView DifferenceView(const StageView& a, const StageView& b, const std::string& name_a,
                         const std::string& name_b);

}  // namespace attnlab
