// raster.h (internal to the core): the figure's text, shaped by pango (harfbuzz: combining
// accents, right-to-left scripts, emoji through fontconfig's fallback fonts) in DejaVu Sans or
// the font file $ATTNLAB_FONT names, measured the same way for every backend; and a Canvas of
// fills into an 8-bit RGB Image for the pictures a figure is made of (grids, colorbars).
#pragma once

#include <pango/pangocairo.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/figures/colormap.h"
#include "attnlab/figures/font.h"
#include "attnlab/figures/png.h"

namespace attnlab::raster {

/// The box of a line of text in pixels: its advance plus 2 pixels of margin, its line height,
/// and the rows from its top to the baseline.
struct TextBox {
  int width = 0, height = 0;
  int baseline = 0;
};

/// The box of one line of UTF-8 text at pixel height `px` (ascent + descent of the figure font,
/// as stb_truetype's ScaleForPixelHeight took it, so the figures keep their proportions).
/// Errors: FontError when the figure font is missing.
TextBox MeasureLine(const std::string& text, float px);

/// MeasureLine(text, px).width.
int MeasureText(const std::string& text, float px);

/// The font size (em, in pixels) of pixel height `px`: what the SVG's font-size says.
/// Errors: FontError.
float EmPixels(float px);

/// The family name of the figure font ("DejaVu Sans" unless $ATTNLAB_FONT names another file).
/// Errors: FontError.
std::string FontFamily();

/// This thread's pango layout holding `text` at pixel height `px`, shaped with the font options
/// every backend draws with (no hinted metrics: the same advances on PNG, SVG and PDF). Valid
/// until the next call on this thread. Errors: FontError.
PangoLayout* ShapedLayout(const std::string& text, float px);

/// The glyphs of `text` no installed font has (pango's replacement boxes). Errors: FontError.
int UnknownGlyphs(const std::string& text);

// Drawing into an Image.
class Canvas {
 public:
  explicit Canvas(Image& im) : im_(im) {}

  void Put(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= im_.width || y >= im_.height) return;
    uint8_t* p = &im_.rgb[(static_cast<size_t>(y) * im_.width + x) * 3];
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
  }

  void Fill(int x0, int y0, int w, int h, Rgb c) {
    for (int y = std::max(0, y0); y < std::min(im_.height, y0 + h); ++y)
      for (int x = std::max(0, x0); x < std::min(im_.width, x0 + w); ++x) Put(x, y, c);
  }

 private:
  Image& im_;
};

}  // namespace attnlab::raster
