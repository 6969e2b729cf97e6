// heatmap_view.h: one heatmap on screen: heading, token labels on both axes, the image (coloured
// on the GPU, gfx/heatmap_gpu.h), cell values on small grids, a colorbar with ticks, legends for
// masked, NaN and inf cells, and the hovered row and column highlighted. The six stage heatmaps,
// the averaging trick's and the compare view's all draw through DrawHeatmapView, so they look
// and behave alike; what is specific to each (tooltips, painting the mask, context menus) stays
// in its panel.
//
// Legend: T tokens, C channels (d_in), d_out context width.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "attnlab/figures/figure.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

/// How one heatmap behaves on screen (what it shows and how it looks is the slot's spec).
struct HeatmapViewSpec {
  const char* id = "map";  ///< unique among the heatmaps of a window (the cells' button id)
  const Matrix* values = nullptr;
  /// Instead of values: a mask's 0/1 bytes shown as 0 and 1 (the mask stage; no float copy).
  const MaskMatrix* mask_values = nullptr;
  const char* empty_text = "(nothing to show)";  ///< when there are no values or none uploaded
  int64_t labels_key = 0;  ///< changes when the labels change (their widths are measured again)
  const MaskMatrix* allowed = nullptr;  ///< 1 where allowed, for cell values; nullptr: all
  /// Instead of allowed: 1 where masked (a view's own mask, as StageView has it).
  const MaskMatrix* masked = nullptr;
  std::string heading_note;  ///< drawn after the title (e.g. "click to paint")
  /// A heading too narrow for the title and heading_note cuts the title, not the note (the
  /// head grid's "selected").
  bool note_first = false;
  int64_t marked_row = -1;  ///< an orange triangle at this row (the peaking row)
  int64_t highlight_row = -1, highlight_col = -1;  ///< last frame's hovered cell
  bool track_outside = false;  ///< report the cell under the mouse while another item is held
  bool thumbnail = false;  ///< title and image only (no labels, colorbar or values): a strip item
  bool force_values = false;  ///< print values wherever they fit (unless the learner chose off)
  bool row_labels = true;     ///< false: the map left of it in the same row shows the tokens
  /// Keep the room of the "masked" legend on a map that may hatch (the logits, the weights, the
  /// mask) when nothing is masked: the Heatmaps view, whose maps must not move when the mask is
  /// toggled (stage_layout.h). Other views size their maps from what they show.
  bool keep_masked_room = false;
  const char* title_tip = nullptr;  ///< the title is clickable, with this tooltip line
  bool pan_with_left = true;        ///< a left drag pans a zoomed map (false where it paints)
  /// > 0: a dividing line after every col_group columns (the context: which head wrote which).
  int64_t col_group = 0;
  /// Right of the image: the map's own colorbar and legends (true, colorbar_of null), another
  /// map's (colorbar_of: the weights' drawn right of their sink column, one colorbar for both),
  /// or none (false: the sink column right of this map draws it).
  bool colorbar = true;
  const HeatmapSpec* colorbar_of = nullptr;
  /// The wheel zooms only with Ctrl held (on a scrolling canvas the wheel scrolls it).
  bool wheel_zoom_with_ctrl = false;
  /// A worker is rewriting the matrix (a background run): values and mask stay null and the
  /// view reads nothing; it shows the image rendered last (no values printed, no re-render).
  bool frozen = false;
  CellSource cells() const { return {values, mask_values}; }
};

/// The cell under the mouse this frame.
struct HeatmapViewHover {
  bool active = false;
  int64_t row = -1, col = -1;
  bool title_clicked = false;  ///< the title (or a thumbnail) was clicked this frame
};

/// Draws the slot's heatmap into the rectangle (origin, size) of the current window, from
/// slot.spec (made again first if the window's presentation options changed). When there is an
/// image, the cells are an InvisibleButton, the last item on return (for clicks and popups of
/// the caller).
HeatmapViewHover DrawHeatmapView(const AppState& state, HeatmapSlot& slot,
                                 const HeatmapViewSpec& view, ImVec2 origin, ImVec2 size);

/// Whether DrawHeatmapView would print numbers in the slot's heatmap drawn `size` pixels large
/// (the same layout and the same rule for each cell's text), without drawing. Makes the slot's
/// spec first. False when the spec wants no values or not even one number fits.
bool HeatmapPrintsValues(const AppState& state, HeatmapSlot& slot, const HeatmapViewSpec& view,
                         ImVec2 size);

/// The room a heatmap takes around its cells, for a layout that sizes the cells itself: row
/// labels (left), colorbar and legends (right), heading and column labels (top) when the cells
/// are cell_w wide; the height of a cell that holds one line of numbers; the image height the
/// colorbar's legends need. Makes the slot's spec first.
struct HeatmapFrame {
  float left = 0, right = 0, top = 0, cell_h = 0, min_image_h = 0;
};
HeatmapFrame MeasureHeatmapFrame(const AppState& state, HeatmapSlot& slot,
                                 const HeatmapViewSpec& view, int rows, int cols, float cell_w);

/// The width of `text` in the font the cells' numbers are printed in.
float CellTextWidth(const AppState& state, std::string_view text);

/// How wide the cells of a map of `stage` must be for every value of `m` to print with 2
/// decimals (min), and with 4 (max), as CellText prints them; `masked(i, j)`: the cell is masked.
struct NumberCells {
  float min = 0, max = 0;
};
NumberCells NumberCellWidths(const AppState& state, Stage stage, const CellSource& m,
                             const std::function<bool(int64_t, int64_t)>& masked);

/// The window's presentation options (colormaps, weights range, values mode) as the core's.
PresentationOptions ScreenPresentation(const AppState& state);

/// Uploads a matrix into slot with what it shows; `masked`: 1 where masked (may be empty).
/// The spec is made on the next draw.
void UploadMatrix(HeatmapSlot& slot, const Matrix& m, const HeatmapContent& content,
                  const MaskMatrix& masked = MaskMatrix());

/// Uploads a figure's view (values, masked cells as the slot's own mask, its content), so the
/// heatmap has the colours of the exported figure.
void UploadView(HeatmapSlot& slot, const StageView& view);

/// Makes slot.spec from its content and scan if it is missing or `options` changed.
void EnsureSpec(HeatmapSlot& slot, const PresentationOptions& options);

}  // namespace attnlab::gui
