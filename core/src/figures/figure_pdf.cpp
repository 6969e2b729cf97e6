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

std::string PdfDocument(int width, int height, const std::string& title,
                        const std::string& metadata, double inches,
                        const std::function<void(Painter&)>& draw) {
  std::string out;
  const double points_per_pixel = inches * 72 / width;
  cairo_surface_t* surface = cairo_pdf_surface_create_for_stream(
      Append, &out, width * points_per_pixel, height * points_per_pixel);
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> own(surface,
                                                                         cairo_surface_destroy);
  cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "Attention Lab");
  if (!title.empty())
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title.c_str());
  if (!metadata.empty())
    cairo_pdf_surface_set_metadata(
        surface, CAIRO_PDF_METADATA_KEYWORDS,
        (std::string(kPdfMetadataPrefix) + Base64Encode(metadata)).c_str());
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, points_per_pixel, points_per_pixel);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  DrawWithCairo(cr, false, draw);
  const cairo_status_t drawn = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t status = drawn ? drawn : cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("PDF: cairo failed: ") + cairo_status_to_string(status));
  return out;
}

std::string PdfFigure(const Composition& c, const std::string& metadata, double inches) {
  const std::string title = c.views.empty()      ? ""
                            : c.views.size() > 1 ? c.title.text
                                                 : c.specs[0].title;
  return PdfDocument(c.width, c.height, title, metadata, inches,
                     [&c](Painter& painter) { Draw(painter, c); });
}

}  // namespace attnlab::figure
