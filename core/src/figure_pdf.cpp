// figure_pdf.cpp: the PDF backend of the figure drawing (figure_draw.h): cairo's PDF surface
// with text shaped by pango (any script, emoji through fontconfig's fallbacks), so the text is
// real PDF text (selectable, found by search and pdftotext). The page is the printed size
// (by default one figure pixel is 0.75 pt, 96 dpi: the size the PNG shows on screen).
#include <cairo-pdf.h>
#include <pango/pangocairo.h>

#include <cmath>
#include <memory>
#include <stdexcept>

#include "figure_draw.h"

namespace attnlab::figure {
namespace {

cairo_status_t Append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void SetColor(cairo_t* cr, Rgb c) { cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0); }

class PdfPainter : public Painter {
 public:
  explicit PdfPainter(cairo_t* cr) : cr_(cr), layout_(pango_cairo_create_layout(cr)) {
    font_ = pango_font_description_new();
    pango_font_description_set_family(font_, raster::FontFamily().c_str());
  }
  ~PdfPainter() override {
    pango_font_description_free(font_);
    g_object_unref(layout_);
  }
  PdfPainter(const PdfPainter&) = delete;
  PdfPainter& operator=(const PdfPainter&) = delete;

  void Fill(int x, int y, int w, int h, Rgb c) override {
    SetColor(cr_, c);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_fill(cr_);
  }
  // Stripes along x + y, as MaskedColorAt: the light colour, then each stripe as a band
  // clipped to the rectangle.
  void Hatch(int x, int y, int w, int h) override {
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
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, image.width, image.height);
    const int stride = cairo_image_surface_get_stride(s);
    unsigned char* data = cairo_image_surface_get_data(s);
    for (int py = 0; py < image.height; ++py)
      for (int px = 0; px < image.width; ++px) {
        const uint8_t* q = &image.rgb[(static_cast<size_t>(py) * image.width + px) * 3];
        auto* d = reinterpret_cast<uint32_t*>(data + static_cast<size_t>(py) * stride) + px;
        *d = uint32_t{q[0]} << 16 | uint32_t{q[1]} << 8 | q[2];
      }
    cairo_surface_mark_dirty(s);
    cairo_set_source_surface(cr_, s, x, y);
    cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr_, x, y, image.width, image.height);
    cairo_fill(cr_);
    cairo_surface_destroy(s);
  }
  void Text(const Label& t, int x, int y, Rgb c, bool vertical) override {
    if (t.text.empty()) return;
    pango_font_description_set_absolute_size(font_, raster::EmPixels(t.px) * PANGO_SCALE);
    pango_layout_set_font_description(layout_, font_);
    pango_layout_set_text(layout_, t.text.c_str(), static_cast<int>(t.text.size()));
    const double shift = t.bitmap.baseline - pango_layout_get_baseline(layout_) / double(PANGO_SCALE);
    cairo_save(cr_);
    SetColor(cr_, c);
    if (vertical) {
      cairo_translate(cr_, x, y + t.width());
      cairo_rotate(cr_, -M_PI / 2);
      cairo_move_to(cr_, 1, shift);
    } else {
      cairo_move_to(cr_, x + 1, y + shift);
    }
    pango_cairo_update_layout(cr_, layout_);
    pango_cairo_show_layout(cr_, layout_);
    cairo_restore(cr_);
  }

 private:
  cairo_t* cr_;
  PangoLayout* layout_;
  PangoFontDescription* font_;
};

}  // namespace

std::string PdfFigure(const Composition& c, const std::string& metadata, double inches) {
  std::string out;
  const double points_per_pixel = inches * 72 / c.width;
  cairo_surface_t* surface = cairo_pdf_surface_create_for_stream(
      Append, &out, c.width * points_per_pixel, c.height * points_per_pixel);
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> own(surface,
                                                                         cairo_surface_destroy);
  cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "Attention Lab");
  if (!c.views.empty())
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE,
                                   c.views.size() > 1 ? c.title.text.c_str()
                                                      : c.specs[0].title.c_str());
  if (!metadata.empty())
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_KEYWORDS,
                                   (std::string(kPdfMetadataPrefix) + Base64Encode(metadata)).c_str());
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, points_per_pixel, points_per_pixel);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  {
    PdfPainter painter(cr);
    Draw(painter, c);
  }
  const cairo_status_t drawn = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t status = drawn ? drawn : cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("PDF: cairo failed: ") + cairo_status_to_string(status));
  return out;
}

}  // namespace attnlab::figure
