// figure_pdf.cpp: PDF figures: the cairo painter (figure_cairo.cpp) on cairo's PDF surface, text
// shaped by pango (any script, emoji through fontconfig's fallbacks), so the text is real PDF
// text (selectable, found by search and pdftotext). The page is the printed size
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
    cairo_pdf_surface_set_metadata(
        surface, CAIRO_PDF_METADATA_TITLE,
        c.views.size() > 1 ? c.title.text.c_str() : c.specs[0].title.c_str());
  if (!metadata.empty())
    cairo_pdf_surface_set_metadata(
        surface, CAIRO_PDF_METADATA_KEYWORDS,
        (std::string(kPdfMetadataPrefix) + Base64Encode(metadata)).c_str());
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, points_per_pixel, points_per_pixel);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  DrawWithCairo(cr, false, [&c](Painter& painter) { Draw(painter, c); });
  const cairo_status_t drawn = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t status = drawn ? drawn : cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("PDF: cairo failed: ") + cairo_status_to_string(status));
  return out;
}

}  // namespace attnlab::figure
