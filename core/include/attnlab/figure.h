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

namespace attnlab {

/// The stages a figure can show.
enum class Stage { kScores, kMask, kLogits, kWeights, kWeightsDropped, kContext };

/// "scores", "mask", "logits", "weights", "weights_dropped", "context".
const char* StageName(Stage stage);
/// The stage called `name`, or nullopt.
std::optional<Stage> ParseStage(const std::string& name);
/// Every stage, in pipeline order.
const std::vector<Stage>& AllStages();

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

/// PNG bytes of an image (stb_image_write).
std::string EncodePng(const Image& image);

/// The matrix as CSV: a header row "query,<col labels>", then one row per query token.
std::string StageCsv(const StageView& view);

/// The matrix as a NumPy .npy file (float32, C order, shape (rows, cols)).
std::string StageNpy(const StageView& view);

/// Output formats of an export.
enum class ExportFormat { kPng, kCsv, kNpy };

/// Renders (or serialises) one view and writes it atomically to `path`.
/// Errors: FileError (unwritable path), FontError, std::invalid_argument.
void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path);

/// Every stage, head and batch of a run into `dir` (created if missing), one file each, named
/// "<stage>[_h<head>][_b<batch>].<ext>" (head and batch parts only when there are several).
/// Returns the paths written. Errors as ExportView.
std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir);

}  // namespace attnlab
