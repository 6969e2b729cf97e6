// figure.h: heatmap figures a teacher can put on a slide, rendered on the CPU (no window, no
// GPU), shared by the command line's `export` and the app's Export buttons, so both produce the
// same bytes for the same state and the colours equal the ones on screen (colormap.h).
//
// A figure: title (stage, head, batch, scaling on/off, temperature), the tokens along both axes
// (column labels rotated when they would overlap, thinned when there are too many), a colorbar
// with ticks and the value range, masked cells hatched (not the colormap's lowest colour), and
// the value printed in each cell when the grid is small enough to read.
//
// Legend: T tokens, d_out context width, H heads, B batch.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/colormap.h"
#include "attnlab/pipeline.h"
#include "attnlab/stage_view.h"

namespace attnlab {

/// How the colour range of weights is chosen.
enum class RangeMode {
  kFixed,  ///< weights over [0, max(1, largest)]: a sharper softmax shows as brighter cells
  kData,   ///< weights over [0, largest]: contrast at large T, where every weight is tiny
};

/// The value range a view's colours span, the same on screen and in figures: [0, 1] for the
/// mask, weights on a sequential map as `mode` says, symmetric [-a, a] around zero for
/// diverging data (a = the largest finite magnitude).
ValueRange FigureRange(const StageView& view, RangeMode mode = RangeMode::kFixed);

/// FigureRange's rule for a stage from the finite extremes of its values (see
/// RangeFromExtremes); the window uses it with extremes it scans faster.
ValueRange StageRange(Stage stage, bool diverging, float lo, float hi, bool any_finite,
                      RangeMode mode = RangeMode::kFixed);

/// When cell values are printed: auto prints them when the grid is at most 12 x 12.
enum class ValuesMode { kAuto, kOn, kOff };

struct FigureOptions {
  std::string colormap;  ///< a name from Colormaps() for every view; empty: see below
  int scale = 1;         ///< 1..8: every length of the figure (cells, fonts, margins) times scale
  ValuesMode values = ValuesMode::kAuto;
  RangeMode range = RangeMode::kFixed;
  /// When `colormap` is empty: the map for sequential views and for diverging ones (so one
  /// ExportAll can use the screen's two choices); empty: DefaultColormap(view.diverging).
  std::string sequential_colormap, diverging_colormap;
};

/// An 8-bit sRGB image, rows top to bottom, 3 bytes per pixel.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

/// Where RenderFigure put things, in pixels (for tests and for mapping a click to a cell).
struct FigureLayout {
  int grid_x = 0, grid_y = 0, cell = 0;  ///< top-left of the grid; cell side
  int rows = 0, cols = 0;
  int bar_x = 0, bar_y = 0, bar_w = 0, bar_h = 0;  ///< the colorbar (top = high end)
  int row_label_step = 1, col_label_step = 1;      ///< every n-th label drawn
  bool col_labels_rotated = false;
  bool values_shown = false;
};

/// A font could not be found or read; what() says where it looked and which package to install.
class FontError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Renders the figure. Cell size shrinks with T (at least 1 pixel per cell); T = 2048 renders
/// in well under 2 s. Errors: FontError when no TrueType font is found (DejaVu Sans from
/// fonts-dejavu-core, or the file named by $ATTNLAB_FONT); std::invalid_argument for an unknown
/// colormap or a scale outside 1..8.
Image RenderFigure(const StageView& view, const FigureOptions& options,
                   FigureLayout* layout = nullptr);

}  // namespace attnlab
