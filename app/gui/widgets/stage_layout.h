// stage_layout.h: where the Heatmaps view puts each stage's map, and how large the window opens,
// as pure functions of sizes (no window, no ImGui, no font: the caller measures and passes the
// widths), so that tests check them at 1024 x 700, 1152 x 720 and 1280 x 800 without a display.
//
// The rules a learner with chapter 3 open relies on:
//  - every map from X to the context on the first screen, whole, at 4 decimals where the canvas
//    has room (3, then 2 where it has not; past that the canvas scrolls);
//  - one number of decimals for the whole canvas, chosen from the canvas's size and the maps'
//    shapes only, never from the values: a logit passing 10 does not shrink the other maps;
//  - nothing jumps: the mask and the dropout have their slot whether they are on or off (a
//    reserved slot is drawn as a note), and a map's frame does not depend on its legends, so
//    toggling the mask, dropout, scaling or the normalization keeps every map in place.
//
// Legend: T tokens, d_in input width, d_out context width; sizes in pixels.
#pragma once

#include <vector>

#include "attnlab/figures/heatmap_spec.h"  // Stage

namespace attnlab::gui {

/// One map to place, in pipeline order.
struct StageBox {
  Stage stage = Stage::kX;
  int rows = 0, cols = 0;
  /// The width of a cell that prints every number of the map with 2, 3 and 4 decimals
  /// (index decimals - 2), its margin included. A compact map (compact) has one width.
  float cell_w[3] = {0, 0, 0};
  bool compact = false;  ///< more than 12 columns: small square cells, no numbers
  /// The frame around the cells: row labels (when the map labels its rows), colorbar and
  /// legends right of it; the heading and column labels above it, with cells sized for 2, 3
  /// and 4 decimals (labels wider than a cell are drawn upright, and take more height).
  float label_w = 0, right_w = 0, top_h[3] = {0, 0, 0};
  float min_image_h = 0;  ///< the colorbar and its legends need this much height
  /// Its rows are the tokens of the map left of it: beside it, it leaves the labels to that map.
  bool same_rows_as_previous = false;
  /// The stage is off (mask none, dropout p = 0): its slot is kept, drawn as a note.
  bool reserved = false;
};

/// The sizes every map shares.
struct StageMetrics {
  float cell_h = 17;        ///< a cell holding one line of numbers
  float gap_x = 16;         ///< between maps of a row
  float gap_y = 6;          ///< between rows
  float row_label_gap = 8;  ///< the margin left of a map that does not label its rows
};

/// A map's place on the canvas, from the canvas's top-left corner.
struct PlacedStage {
  Stage stage = Stage::kX;
  float x = 0, y = 0, w = 0, h = 0;
  float cell_w = 0;  ///< its cells' width
  bool row_labels = true;
  bool reserved = false;
};

struct StageGrid {
  std::vector<PlacedStage> maps;
  int decimals = 2;   ///< the numbers' decimals the cells were sized for (2, 3 or 4)
  float height = 0;   ///< the maps' total height
  bool fits = false;  ///< height <= the canvas's height (no scrolling)
};

/// Packs the boxes into rows of `width` in their order (a map goes to the next row when it does
/// not fit; the first map of a row labels its rows) with the most decimals (4, 3, 2) whose rows
/// fit `height`; with none, 2 decimals and a canvas taller than `height` (it scrolls). Spare
/// height makes the rows taller, up to square cells. Empty boxes: an empty grid. Errors: none.
StageGrid LayOutStageGrid(const std::vector<StageBox>& boxes, const StageMetrics& metrics,
                          float width, float height);

/// The height the boxes' rows need (one line of numbers per cell, no spare) with cells sized for
/// `decimals` (2, 3 or 4) in rows of `width`; 0 for no boxes.
float StageGridNeed(const std::vector<StageBox>& boxes, const StageMetrics& metrics, float width,
                    int decimals);

/// The height of the two plots under the Heatmaps view's maps (softmax peaking, 1/sqrt(d_k)) in
/// a body `body_h` tall: about a third of it (240 to 340 pixels times `unit`, the text's scale),
/// most of it when the learner expanded them; less, down to 120 pixels times `unit`, when the
/// maps need `maps_need` pixels (0: they scroll anyway) to show every number at 4 decimals.
/// Depends on no setting the learner toggles, so the maps do not move when the mask does.
float PlotsHeight(float body_h, float maps_need, float unit, bool expanded);

/// Whether a canvas that does not hold every map starts scrolled to the result (the weights and
/// the context) rather than at X: in a window smaller than 1280 x 800 times `scale` (the first
/// window's size, FirstWindowSize), where the result must be on the first screen; from that
/// size on, the canvas starts at X and shows the computation in reading order (a preset of 10
/// or 11 tokens: X, Q, K, V and the scores), the learner scrolls down for the rest.
bool StartsAtTheResult(float window_w, float window_h, float scale);

/// The size of the window at its first start on a monitor whose work area (the screen less the
/// desktop's panels) is work_w x work_h and whose content scale is `scale`: 1280 x 800 (times
/// the scale) where the work area has room, else the whole work area, so never below 1024 x 700
/// on a work area that has it, and at least 480 x 480. Errors: none (a work area of 0 x 0, as
/// some X servers report, gives 1280 x 800).
struct WindowSize {
  int width = 1280, height = 800;
};
WindowSize FirstWindowSize(int work_w, int work_h, float scale);

}  // namespace attnlab::gui
