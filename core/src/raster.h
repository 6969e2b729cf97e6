// raster.h (internal to the core): drawing figures into an 8-bit RGB Image: a line of text
// rasterised with stb_truetype (DejaVu Sans, or $ATTNLAB_FONT) and a canvas with fills and
// alpha blending.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/colormap.h"
#include "attnlab/figure.h"

namespace attnlab::raster {

// An 8-bit coverage bitmap of a line of text; the baseline is at `ascent`.
struct TextBitmap {
  int width = 0, height = 0;
  int baseline = 0;  ///< rows from the top to the baseline
  std::vector<uint8_t> alpha;
};

/// Rasterises one line of UTF-8 text at a pixel height `px` (kerning applied; code points the
/// font lacks draw as its missing glyph). Errors: FontError when no font is found.
TextBitmap RenderText(const std::string& text, float px);

/// The font size (em, in pixels) that RenderText uses for pixel height `px`: what vector
/// backends give their text so it measures as the raster's. Errors: FontError.
float EmPixels(float px);

/// The family name of the figure font ("DejaVu Sans" unless $ATTNLAB_FONT names another).
/// Errors: FontError.
std::string FontFamily();

/// The width in pixels RenderText(text, px) would have, without rasterising.
int MeasureText(const std::string& text, float px);

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

  // Blends `c` with coverage a (0..255) over the pixel.
  void Blend(int x, int y, Rgb c, uint8_t a) {
    if (a == 0 || x < 0 || y < 0 || x >= im_.width || y >= im_.height) return;
    uint8_t* p = &im_.rgb[(static_cast<size_t>(y) * im_.width + x) * 3];
    auto mix = [a](uint8_t dst, uint8_t src) {
      return static_cast<uint8_t>((dst * (255 - a) + src * a + 127) / 255);
    };
    p[0] = mix(p[0], c.r), p[1] = mix(p[1], c.g), p[2] = mix(p[2], c.b);
  }

  // Draws a text bitmap with its top-left corner at (x, y); vertical = rotated 90 degrees
  // counter-clockwise (reads bottom to top), its bottom-left corner then at (x, y + width).
  void Text(const TextBitmap& t, int x, int y, Rgb c, bool vertical = false) {
    for (int ty = 0; ty < t.height; ++ty)
      for (int tx = 0; tx < t.width; ++tx) {
        const uint8_t a = t.alpha[static_cast<size_t>(ty) * t.width + tx];
        if (vertical)
          Blend(x + ty, y + t.width - 1 - tx, c, a);
        else
          Blend(x + tx, y + ty, c, a);
      }
  }

 private:
  Image& im_;
};

}  // namespace attnlab::raster
