// inference_views.h: the Decode and Tiled views' steps (lessons/inference.h) as heatmaps to
// export: a decode step's weights over its cache (with the sink's column), and a tile's state
// per query row (m, l, rescale, O). The window's export of those views and the command line's
// `attention-lab decode|tiled ... --step K -o OUT.png` draw these very views (export.h
// ExportView), so the same state gives the same bytes.
//
// Legend: B batch, H heads, T tokens, dh_v the width of one head's V.
#pragma once

#include <cstdint>

#include "attnlab/figures/figure.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/lessons/inference.h"

namespace attnlab {

/// The options every step figure is drawn with, by the command line (`decode|tiled --step K
/// -o FIG`) and by the window's Export step alike: FigureOptions{} (viridis / coolwarm, the
/// automatic range and values mode, scale 1, 96 dpi). A step's figure thus depends on the
/// scenario and the step's options (P, C or Br, Bc; the step; head and batch) only, not on the
/// colormaps, range or values mode chosen in the window. Errors: none.
FigureOptions StepFigureOptions();

/// Step `step` of `run` (a decode of `scenario`, whose stages are `st`) for `head` and `batch`
/// as a heatmap (stage kWeights, range [0, 1]): one row per new token of the step, one column
/// per key it attends over (the cache, then its own tokens; labelled by token and position),
/// masked cells hatched; with scaling.sink one more column "sink", what the sink took of each
/// row. Title "decode step k + 1 of n: weights over the cache" (counted from 1, as the view's
/// slider shows it); subtitle t, the cache's length, the
/// evicted positions, the step's max |decoded - full| and the dtype when it is not float32
/// ("bfloat16", "float16, weights float32" with the upcast softmax, "float64"). values64 holds the
/// cells of a float64 run. Errors: std::invalid_argument naming the culprit (step, head or batch
/// out of range: "step 9 is out of range: the decode has 5 steps (0..4)").
StageView DecodeStepView(const Stages& st, const Scenario& scenario, const DecodeRun& run,
                         int64_t step, int64_t head, int64_t batch);

/// Tile `step` of `run` (FlashAttention's loop over `scenario`, stages `st`) as a heatmap
/// (stage kContext: signed, diverging): one row per query row of the tile's block, columns
/// "m", "l", "rescale" and "O0".. "O<dh_v - 1>", each row's state after the tile (m = -inf
/// while no key was allowed). Title "tile k + 1 of n: the online softmax's state per row"; subtitle
/// the batch, head, rows, keys (and "skipped" when the mask forbids the whole tile), Br x Bc and
/// the skipped tiles of the run, and the dtype when it is not float32 ("bfloat16 Q, K, V, P;
/// float32 state", "float64"). Errors: std::invalid_argument when `step` is out of range.
StageView TileStateView(const Stages& st, const Scenario& scenario, const TiledRun& run,
                        int64_t step);

}  // namespace attnlab
