// figure_draw.h (internal to the core): the one drawing of a figure, in pixels, through a Painter
// that a backend implements: cairo (figure_cairo.cpp: PNG on an image surface, PDF on
// figure_pdf.cpp's surface, text shaped by pango) and SVG (figure_svg.cpp, written as XML so the
// tokens are <text>). Layout and every drawing decision live in figure.cpp; backends only put
// rectangles, hatches, pictures and text where they are told.
//
// Legend: T tokens.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/text.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/heatmap_spec.h"
#include "attnlab/figures/stage_view.h"
#include "raster.h"

namespace attnlab::figure {

/// A line of text with its box (measured by pango, raster.h, so every backend lays out alike).
struct Label {
  std::string text;
  float px = 0;  ///< pixel height (ascent + descent), raster::MeasureLine
  int w = 0, h = 0;
  int baseline = 0;  ///< rows from the box's top to the baseline
  int width() const { return w; }
  int height() const { return h; }
};

/// `text` at `px`, measured (raster::MeasureLine). Errors: FontError.
Label MakeLabel(const std::string& text, float px);

/// What a backend draws with; coordinates are pixels of the whole figure, y down.
class Painter {
 public:
  virtual ~Painter() = default;
  /// A solid rectangle.
  virtual void Fill(int x, int y, int w, int h, Rgb c) = 0;
  /// A rectangle of the masked cells' stripes (MaskedColorAt at each pixel of the figure).
  virtual void Hatch(int x, int y, int w, int h) = 0;
  /// An image with its top-left at (x, y), one image pixel per figure pixel, never smoothed.
  virtual void Picture(int x, int y, const Image& image) = 0;
  /// Text with its bitmap's top-left at (x, y); vertical: turned 90 degrees counter-clockwise,
  /// its bottom-left then at (x, y + width).
  virtual void Text(const Label& t, int x, int y, Rgb c, bool vertical = false) = 0;
  /// A straight line from (x0, y0) to (x1, y1), `width` pixels wide, antialiased, in colour c
  /// at opacity `alpha` (0..1) over what is below (the token view's lines).
  virtual void Line(float x0, float y0, float x1, float y1, float width, Rgb c, float alpha) = 0;
  /// True when the backend is pixels anyway (every grid is then one picture).
  virtual bool Raster() const { return false; }
};

/// The figure of one heatmap laid out (text measured, every position in pixels).
struct Geometry {
  int s = 1;  // scale
  int rows = 0, cols = 0, cell = 1, grid_x = 0, grid_y = 0, grid_w = 0, grid_h = 0;
  Label title, subtitle, row_axis, col_axis;
  std::vector<Label> row_text, col_text, tick_text, legend_text;
  int row_label_w = 0, col_label_w = 0, label_h = 0;
  int row_step = 1, col_step = 1, col_band = 0;
  bool rotate = false;
  int bar_x = 0, bar_w = 0, bar_h = 0;
  int width = 0, height = 0;
  int origin_x = 0, origin_y = 0;  ///< the figure's top-left (Shift moves it)
};

/// The layout of `spec` at `scale` (1..8), its top-left at (0, 0); without a colorbar when
/// `colorbar` is false (its legends then take the colorbar's place).
Geometry LayOut(const HeatmapSpec& spec, int scale, bool colorbar = true);

/// Moves every position of `g` by (dx, dy) (a panel of a multi-panel figure).
void Shift(Geometry& g, int dx, int dy);

/// Draws the figure laid out as `g` (title and subtitle included). Returns whether cell values
/// were printed.
bool Draw(Painter& painter, const HeatmapSpec& spec, const StageView& view, const Geometry& g);

/// A figure of one or more panels: each a heatmap laid out by LayOut and shifted into place, in
/// rows of at most kPanelsPerRow under one title (a single panel has no extra title).
struct Composition {
  std::vector<StageView> views;
  std::vector<HeatmapSpec> specs;
  std::vector<Geometry> panels;
  Label title;  ///< empty for one panel
  int s = 1, width = 0, height = 0;
};
inline constexpr int kPanelsPerRow = 4;

/// Lays out `views` as panels under `title`. Errors: std::invalid_argument for no view, a scale
/// outside 1..8 or an unknown colormap; FontError.
Composition Compose(std::vector<StageView> views, const std::string& title,
                    const FigureOptions& options);

/// Draws the title of a multi-panel figure.
void DrawTitle(Painter& painter, const Composition& c);

/// Draws every panel of `c` (and its title when it has several).
void Draw(Painter& painter, const Composition& c);

/// SVG text of `c` (tokens as <text>, grids over kMaxVectorCells cells as one PNG picture);
/// `metadata` (may be empty) goes, XML-escaped, into <metadata>; `inches`: its printed width.
std::string SvgFigure(const Composition& c, const std::string& metadata, double inches);

/// An SVG document width x height figure pixels, printed `inches` wide, with `metadata` (may be
/// empty) in <metadata> and `draw`'s drawing on white (SvgFigure's frame, for any picture).
std::string SvgDocument(int width, int height, const std::string& metadata, double inches,
                        const std::function<void(Painter&)>& draw);

/// PDF bytes of a width x height picture drawn by `draw`, the page `inches` wide, titled `title`,
/// carrying `metadata` as PdfFigure does. Errors: std::runtime_error when cairo fails.
std::string PdfDocument(int width, int height, const std::string& title,
                        const std::string& metadata, double inches,
                        const std::function<void(Painter&)>& draw);

/// PDF bytes of `c` drawn by cairo with pango text, the page `inches` wide;
/// `metadata` (may be empty): kPdfMetadataPrefix then its base64, as the document's Keywords
/// (cairo 1.16 writes no custom keys; base64 keeps the PDF string free of escapes).
/// Errors: std::runtime_error when cairo fails.
std::string PdfFigure(const Composition& c, const std::string& metadata, double inches);
inline constexpr std::string_view kPdfMetadataPrefix = "attention-lab-figure:";

/// Runs `draw` with a painter on `cr`: raster (an image surface: grids and hatches as exact
/// pixels, fills unsmoothed) or vector (PDF).
void DrawWithCairo(cairo_t* cr, bool raster, const std::function<void(Painter&)>& draw);

/// A white width x height image with `draw` painted on it by cairo (raster painter).
/// Errors: std::runtime_error when cairo fails; FontError.
Image RasterDraw(int width, int height, const std::function<void(Painter&)>& draw);

/// Base64 (RFC 4648, padded) of bytes (base/text.h), and back (nullopt for anything else).
using ::attnlab::Base64Encode;
std::optional<std::string> Base64Decode(std::string_view text);

/// Grids with more cells than this are drawn by vector backends as one picture.
inline constexpr int64_t kMaxVectorCells = 4096;

}  // namespace attnlab::figure
