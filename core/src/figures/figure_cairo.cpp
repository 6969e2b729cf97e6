// figure_cairo.cpp: the cairo backend of the figure drawing (figure_draw.h), for PDF (vector:
// text stays text) and for PNG (an image surface: grids, colorbars and hatches are put as exact
// pixels, only the text is antialiased). Text is shaped by pango (raster.h), so combining
// accents, Arabic and emoji draw as the fonts mean them.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "figure_draw.h"

namespace attnlab::figure {
namespace {

void SetColor(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

class CairoPainter : public Painter {
 public:
  CairoPainter(cairo_t* cr, bool raster) : cr_(cr), raster_(raster) {
    if (raster) cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);  // fills on whole pixels
  }

  void Fill(int x, int y, int w, int h, Rgb c) override {
    SetColor(cr_, c);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_fill(cr_);
  }
  // Stripes along x + y, as MaskedColorAt: as pixels on an image, else the light colour, then
  // each stripe as a band clipped to the rectangle.
  void Hatch(int x, int y, int w, int h) override {
    if (raster_) {
      Image im{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h * 3)};
      raster::Canvas cv(im);
      for (int py = 0; py < h; ++py)
        for (int px = 0; px < w; ++px) cv.Put(px, py, MaskedColorAt(x + px, y + py));
      return Picture(x, y, im);
    }
    cairo_save(cr_);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_clip(cr_);
    Fill(x, y, w, h, MaskedColorAt(kMaskedPeriod / 2, 0));
    SetColor(cr_, MaskedColorAt(0, 0));
    const int first = (x + y) / kMaskedPeriod * kMaskedPeriod - kMaskedPeriod;
    for (int u = first; u <= x + y + w + h; u += kMaskedPeriod) {
      cairo_move_to(cr_, u - y, y);
      cairo_line_to(cr_, u + kMaskedStripeWidth - y, y);
      cairo_line_to(cr_, u + kMaskedStripeWidth - y - h, y + h);
      cairo_line_to(cr_, u - y - h, y + h);
      cairo_close_path(cr_);
    }
    cairo_fill(cr_);
    cairo_restore(cr_);
  }
  void Picture(int x, int y, const Image& image) override {
    if (raster_) return Put(x, y, image);
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, image.width, image.height);
    const int stride = cairo_image_surface_get_stride(s);
    unsigned char* data = cairo_image_surface_get_data(s);
    for (int py = 0; py < image.height; ++py) {
      const uint8_t* q = &image.rgb[static_cast<size_t>(py) * image.width * 3];
      auto* d = reinterpret_cast<uint32_t*>(data + static_cast<size_t>(py) * stride);
      for (int px = 0; px < image.width; ++px, q += 3)
        d[px] = uint32_t{q[0]} << 16 | uint32_t{q[1]} << 8 | q[2];
    }
    cairo_surface_mark_dirty(s);
    cairo_set_source_surface(cr_, s, x, y);
    cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr_, x, y, image.width, image.height);
    cairo_fill(cr_);
    cairo_surface_destroy(s);
  }
  // The label's baseline on a whole pixel (Label::baseline rows below y).
  void Text(const Label& t, int x, int y, Rgb c, bool vertical) override {
    if (t.text.empty()) return;
    PangoLayout* layout = raster::ShapedLayout(t.text, t.px);
    PangoRectangle logical;
    pango_layout_get_extents(layout, nullptr, &logical);
    const double shift = t.baseline - double(pango_layout_get_baseline(layout)) / PANGO_SCALE;
    const double left = 1 - double(logical.x) / PANGO_SCALE;
    cairo_save(cr_);
    SetColor(cr_, c);
    if (vertical) {
      cairo_translate(cr_, x, y + t.width());
      cairo_rotate(cr_, -M_PI / 2);
      cairo_move_to(cr_, left, shift);
    } else {
      cairo_move_to(cr_, x + left, y + shift);
    }
    pango_cairo_show_layout(cr_, layout);
    cairo_restore(cr_);
  }
  // Antialiased even on a raster painter (a thin slanted line on whole pixels would be stairs).
  void Line(float x0, float y0, float x1, float y1, float width, Rgb c, float alpha) override {
    cairo_save(cr_);
    cairo_set_antialias(cr_, CAIRO_ANTIALIAS_DEFAULT);
    cairo_set_source_rgba(cr_, c.r / 255.0, c.g / 255.0, c.b / 255.0, alpha);
    cairo_set_line_width(cr_, width);
    cairo_set_line_cap(cr_, CAIRO_LINE_CAP_BUTT);
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_stroke(cr_);
    cairo_restore(cr_);
  }
  bool Raster() const override { return raster_; }

 private:
  // The raster Picture: the pixels copied straight into the image surface (no transform on a
  // raster painter), without a source surface to composite: a T = 2048 grid is 4 M pixels.
  void Put(int x, int y, const Image& image) {
    cairo_surface_t* target = cairo_get_target(cr_);
    cairo_surface_flush(target);
    unsigned char* data = cairo_image_surface_get_data(target);
    const int stride = cairo_image_surface_get_stride(target);
    const int x0 = std::max(0, x),
              x1 = std::min(cairo_image_surface_get_width(target), x + image.width);
    const int y0 = std::max(0, y),
              y1 = std::min(cairo_image_surface_get_height(target), y + image.height);
    for (int py = y0; py < y1; ++py) {
      const uint8_t* q = &image.rgb[(static_cast<size_t>(py - y) * image.width + (x0 - x)) * 3];
      auto* d = reinterpret_cast<uint32_t*>(data + static_cast<size_t>(py) * stride);
      for (int px = x0; px < x1; ++px, q += 3)
        d[px] = uint32_t{q[0]} << 16 | uint32_t{q[1]} << 8 | q[2];
    }
    if (x1 > x0 && y1 > y0) cairo_surface_mark_dirty_rectangle(target, x0, y0, x1 - x0, y1 - y0);
  }

  cairo_t* cr_;
  bool raster_;
};

}  // namespace

void DrawWithCairo(cairo_t* cr, bool raster, const std::function<void(Painter&)>& draw) {
  CairoPainter painter(cr, raster);
  draw(painter);
}

Image RasterDraw(int width, int height, const std::function<void(Painter&)>& draw) {
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> own(surface,
                                                                         cairo_surface_destroy);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  DrawWithCairo(cr, true, draw);
  const cairo_status_t drawn = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  const cairo_status_t status = drawn ? drawn : cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("PNG: cairo failed: ") + cairo_status_to_string(status));
  Image im{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  const int stride = cairo_image_surface_get_stride(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  for (int y = 0; y < height; ++y) {
    const auto* s = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
    uint8_t* d = &im.rgb[static_cast<size_t>(y) * width * 3];
    for (int x = 0; x < width; ++x, d += 3)
      d[0] = uint8_t(s[x] >> 16), d[1] = uint8_t(s[x] >> 8), d[2] = uint8_t(s[x]);
  }
  return im;
}

}  // namespace attnlab::figure
