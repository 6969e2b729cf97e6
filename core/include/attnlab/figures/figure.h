// figure.h: heatmap figures a teacher can put on a slide or in a paper, rendered on the CPU (no
// window, no GPU), shared by the command line's `export` and the app's Export buttons, so both
// produce the same bytes for the same state and the colours equal the ones on screen
// (colormap.h). One drawing (figure.cpp, through figure_draw.h's Painter) makes PNG and PDF
// (cairo, text shaped by pango: combining accents, right-to-left scripts, emoji) and SVG
// (written as XML, text as <text>); several stages make one multi-panel figure; figure_meta.h
// puts the scenario into every figure file.
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

#include "attnlab/figures/colormap.h"
#include "attnlab/figures/font.h"
#include "attnlab/figures/png.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

/// StageRange (heatmap_spec.h) of a view's own values.
ValueRange FigureRange(const StageView& view, RangeMode mode = RangeMode::kFixed);

/// The colorbars of a multi-panel figure: one for the whole figure (right of the last panel) or
/// one per panel. kAuto: shared when every panel with a colorbar has the same scale (colormap,
/// range and ticks), else per panel. kShared on panels of different ranges puts them on one
/// range (their union; symmetric around 0 when all are signed); panels on different colormaps
/// or on a log or per-row scale cannot share one.
enum class ColorbarMode { kAuto, kShared, kPerPanel };

/// "auto", "shared", "per-panel".
const char* ColorbarModeName(ColorbarMode mode);

/// The mode named "auto", "shared" or "per-panel", or nullopt.
std::optional<ColorbarMode> ParseColorbarMode(const std::string& name);

/// The figure's choices: the presentation options shared with the window, and its size.
struct FigureOptions : PresentationOptions {
  ColorbarMode colorbar = ColorbarMode::kAuto;  ///< multi-panel figures only
  int scale = 1;  ///< 1..8: every length of the figure (cells, fonts, margins) times scale
  /// The printed width of the whole figure in inches; 0: its pixels at `dpi`.
  double width_inches = 0;
  /// Pixels per inch when printed; 0: 96 (SVG and PDF at CSS size, PNG without a pHYs chunk).
  double dpi = 0;
};

/// The printed width in inches of a figure `pixels` wide under `options` (width_inches, else
/// pixels / dpi, dpi 96 when unset).
double PrintWidthInches(int pixels, const FigureOptions& options);

/// The presentation of a view's own values under `options`: what RenderFigure draws.
HeatmapSpec FigureSpec(const StageView& view, const PresentationOptions& options);

/// The side of one cell in pixels for a rows x cols grid at `scale` (1..8): cells shrink so the
/// grid stays near 620 pixels, from 58 down to 1 pixel, then everything times the scale.
int64_t FigureCellSize(int64_t rows, int64_t cols, int scale);

/// Where RenderFigure put things, in pixels (for tests and for mapping a click to a cell).
struct FigureLayout {
  int grid_x = 0, grid_y = 0, cell = 0;  ///< top-left of the grid; cell side
  int rows = 0, cols = 0;
  int bar_x = 0, bar_y = 0, bar_w = 0, bar_h = 0;  ///< the colorbar (top = high end)
  int row_label_step = 1, col_label_step = 1;      ///< every n-th label drawn
  bool col_labels_rotated = false;
  bool values_shown = false;
};

/// Renders the figure (cairo; the cells, colorbar and hatches as exact pixels, the text shaped
/// by pango and antialiased). Cell size shrinks with T (at least 1 pixel per cell); T = 2048
/// renders in well under 1 s. Errors: FontError when the figure font is missing (DejaVu Sans
/// from fonts-dejavu-core, or the file named by $ATTNLAB_FONT); std::invalid_argument for an
/// unknown colormap or a scale outside 1..8; std::runtime_error when cairo fails.
Image RenderFigure(const StageView& view, const FigureOptions& options,
                   FigureLayout* layout = nullptr);

/// A multi-panel figure: one panel per view (each as RenderFigure draws it; colorbars shared or
/// per panel as options.colorbar says), in rows of at most 4, under `title` in larger type. One
/// view gives exactly RenderFigure(view). Errors as RenderFigure, and std::invalid_argument for
/// no view or a shared colorbar the panels cannot have (its message says why).
/// `layouts`: where each panel went (optional).
Image RenderFigure(const std::vector<StageView>& views, const std::string& title,
                   const FigureOptions& options, std::vector<FigureLayout>* layouts = nullptr);

/// The panels of a figure of the whole computation (`export --stage pipeline`): every stage a
/// run of `scenario` makes (StageInRun), in pipeline order (AllStages), the mask unless the
/// scenario has none.
std::vector<Stage> PipelineStages(const Scenario& scenario);

/// The PNG keyword of the text chunk a figure's metadata travels in.
inline constexpr const char* kFigureMetadataKey = "attention-lab:scenario";

/// The figure file formats, all drawn by the same code (figure.cpp) from the same layout.
enum class FigureFormat { kPng, kSvg, kPdf };

/// "png", "svg", "pdf".
const char* FigureFormatName(FigureFormat format);

/// The bytes of a figure file of `views` (as RenderFigure(views, title, options)) carrying
/// `metadata` (UTF-8 text, e.g. FigureMetadata in figure_meta.h; empty: none): PNG (an iTXt chunk
/// keyed kFigureMetadataKey; a pHYs chunk when options.dpi or width_inches is set), SVG (its
/// width and height in inches, PrintWidthInches; text as <text>, cells as rectangles up to 64 x 64
/// cells, else one embedded PNG; metadata in <metadata>) or PDF (cairo and pango, page
/// PrintWidthInches wide; metadata base64 in the document information's Keywords, figure_meta.h).
/// Errors as RenderFigure; std::runtime_error when PNG encoding or cairo fails.
std::string FigureFile(const std::vector<StageView>& views, const std::string& title,
                       const FigureOptions& options, FigureFormat format,
                       const std::string& metadata = "");

}  // namespace attnlab
