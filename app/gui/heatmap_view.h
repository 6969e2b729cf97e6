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

#include "attnlab/figure.h"
#include "gui/app_state.h"

namespace attnlab::gui {

/// What one heatmap shows and how.
struct HeatmapViewSpec {
  const char* id = "map";  ///< unique among the heatmaps of a window (the cells' button id)
  std::string heading;
  const char* help = nullptr;  ///< the heading's tooltip
  const Matrix* values = nullptr;
  const char* empty_text = "(nothing to show)";  ///< when values is null or not uploaded
  std::function<std::string(int64_t)> row_label, col_label;
  int64_t labels_key = 0;  ///< changes when the labels change (their widths are measured again)
  bool hatch = false;      ///< masked cells hatched (the slot's own mask, else the run's)
  const MaskMatrix* allowed = nullptr;  ///< 1 where allowed, for cell values; nullptr: all
  bool any_masked = false;              ///< show the "masked" legend entry
  bool mask_legend = false;  ///< a two-entry legend (allowed, masked) instead of a colorbar
  int colormap = 0;          ///< index into Colormaps()
  int64_t marked_row = -1;   ///< an orange triangle at this row (the peaking row)
  int64_t highlight_row = -1, highlight_col = -1;  ///< last frame's hovered cell
  bool track_outside = false;  ///< report the cell under the mouse while another item is held
};

/// The cell under the mouse this frame.
struct HeatmapViewHover {
  bool active = false;
  int64_t row = -1, col = -1;
};

/// Draws `spec` into the rectangle (origin, size) of the current window. `slot` holds the
/// textures, range and flags (UploadMatrix, UploadView) and receives where the image went. When
/// there is an image, the cells are an InvisibleButton, the last item on return (for clicks and
/// popups of the caller).
HeatmapViewHover DrawHeatmapView(const AppState& state, HeatmapSlot& slot,
                                 const HeatmapViewSpec& spec, ImVec2 origin, ImVec2 size);

/// Uploads a matrix into slot and derives its colour range as StageRange (figure.h) does for
/// `stage` (weights: [0, max(1, hi)] unless negative; signed stages: symmetric), NaN and inf.
void UploadMatrix(HeatmapSlot& slot, const Matrix& m, Stage stage);

/// Uploads a figure's view into slot: its values, its masked cells as the slot's own mask, and
/// FigureRange(view), so the heatmap has the colours of the exported figure.
void UploadView(HeatmapSlot& slot, const StageView& view);

/// A short cell value for tooltips: 4 significant digits, "nan", "inf", "-inf".
std::string CellNumber(double v);

}  // namespace attnlab::gui
