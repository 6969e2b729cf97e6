// loss_plot.cpp: the loss curves of training runs as a PNG plot (loss_plot.h). cairo strokes
// the axes and the antialiased curves on an image surface; the text is figure_draw.h's labels,
// shaped by pango and put by the figures' cairo painter, so it matches the heatmap figures.
#include "attnlab/figures/loss_plot.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "attnlab/base/text.h"
#include "attnlab/figures/heatmap_spec.h"
#include "attnlab/figures/png.h"
#include "figure_draw.h"

namespace attnlab {
namespace {

constexpr Rgb kInk{40, 40, 40}, kGrid{228, 228, 228};
constexpr float kTickPx = 15, kAxisPx = 17, kTitlePx = 19;

void SetSource(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

std::string Tick(double v) { return FormatNumber(v, NumberStyle::kShortest); }

void CheckPlot(const std::vector<const TrainRun*>& runs, const std::vector<std::string>& names,
               int width, int height) {
  if (runs.empty()) throw std::invalid_argument("loss plot: no run to plot");
  if (names.size() != runs.size()) throw std::invalid_argument("loss plot: give one name per run");
  for (const TrainRun* r : runs)
    if (!r || r->loss.empty()) throw std::invalid_argument("loss plot: a run has no steps");
  if (width < 320 || width > 4096 || height < 240 || height > 4096)
    throw std::invalid_argument("loss plot: size " + std::to_string(width) + " x " +
                                std::to_string(height) + " is outside 320..4096 x 240..4096");
}

// The plotting area and the axes' ends, from the runs and the labels' sizes.
LossPlotLayout LayOutPlot(const std::vector<const TrainRun*>& runs, int width, int height) {
  LossPlotLayout l;
  size_t steps = 1;
  float hi = 0;
  for (const TrainRun* r : runs) {
    steps = std::max(steps, r->loss.size());
    for (float v : r->loss)
      if (std::isfinite(v)) hi = std::max(hi, v);
  }
  l.x_max = std::max<double>(1, static_cast<double>(steps - 1));
  l.y_max = hi > 0 ? hi * 1.05 : 1.0;
  int widest = 0;
  for (double t : NiceTicks(0, l.y_max, 6))
    widest = std::max(widest, raster::MeasureText(Tick(t), kTickPx));
  const int line = raster::MeasureLine("Ag", kAxisPx).height;
  l.left = 12 + line + 8 + widest + 6;
  l.top = 16 + raster::MeasureLine("Ag", kTitlePx).height + 10;
  l.right = width - 24;
  l.bottom = height - (10 + line + 6 + raster::MeasureLine("0", kTickPx).height + 6);
  return l;
}

double X(const LossPlotLayout& l, double step) {
  return l.left + step / l.x_max * (l.right - l.left);
}
double Y(const LossPlotLayout& l, double loss) {
  return l.bottom - loss / l.y_max * (l.bottom - l.top);
}

// Grid lines, axes, ticks and their numbers, the axis labels and the title.
void DrawAxes(cairo_t* cr, figure::Painter& p, const LossPlotLayout& l, const std::string& title,
              int width, int height) {
  cairo_set_line_width(cr, 1);
  for (double t : NiceTicks(0, l.y_max, 6)) {
    const int y = static_cast<int>(std::lround(Y(l, t)));
    p.Fill(l.left, y, l.right - l.left, 1, kGrid);
    const figure::Label label = figure::MakeLabel(Tick(t), kTickPx);
    p.Text(label, l.left - 6 - label.width(), y - label.height() / 2, kInk);
  }
  for (double t : NiceTicks(0, l.x_max, 8)) {
    const int x = static_cast<int>(std::lround(X(l, t)));
    p.Fill(x, l.top, 1, l.bottom - l.top, kGrid);
    p.Fill(x, l.bottom, 1, 5, kInk);
    const figure::Label label = figure::MakeLabel(Tick(t), kTickPx);
    p.Text(label, x - label.width() / 2, l.bottom + 6, kInk);
  }
  p.Fill(l.left, l.top, 1, l.bottom - l.top + 1, kInk);
  p.Fill(l.left, l.bottom, l.right - l.left + 1, 1, kInk);
  const figure::Label xl = figure::MakeLabel("Adam step", kAxisPx);
  p.Text(xl, (l.left + l.right - xl.width()) / 2, height - 10 - xl.height(), kInk);
  const figure::Label yl = figure::MakeLabel("loss (cross-entropy)", kAxisPx);
  p.Text(yl, 12, (l.top + l.bottom - yl.width()) / 2, kInk, /*vertical=*/true);
  const figure::Label tl = figure::MakeLabel(title, kTitlePx);
  p.Text(tl, std::max(8, (width - tl.width()) / 2), 16, kInk);
}

// Each run's curve, antialiased, 2.5 pixels wide.
void DrawCurves(cairo_t* cr, const std::vector<const TrainRun*>& runs, const LossPlotLayout& l) {
  cairo_save(cr);
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
  cairo_rectangle(cr, l.left, l.top - 4, l.right - l.left + 4, l.bottom - l.top + 4);
  cairo_clip(cr);
  cairo_set_line_width(cr, 2.5);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (size_t k = 0; k < runs.size(); ++k) {
    const std::vector<float>& loss = runs[k]->loss;
    bool pen_down = false;
    for (size_t s = 0; s < loss.size(); ++s) {
      if (!std::isfinite(loss[s])) {
        pen_down = false;
        continue;
      }
      const double x = X(l, static_cast<double>(s)), y = Y(l, loss[s]);
      if (pen_down)
        cairo_line_to(cr, x, y);
      else
        cairo_move_to(cr, x, y);
      pen_down = true;
    }
    if (loss.size() == 1) cairo_rel_line_to(cr, 0.01, 0);
    SetSource(cr, LossCurveColor(k));
    cairo_stroke(cr);
  }
  cairo_restore(cr);
}

// The legend, top right inside the plot: a swatch, the run's name and its last loss.
void DrawLegend(figure::Painter& p, const std::vector<const TrainRun*>& runs,
                const std::vector<std::string>& names, const LossPlotLayout& l) {
  std::vector<figure::Label> labels;
  int w = 0, h = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    char last[48];
    std::snprintf(last, sizeof last, ": %.4f at step %zu", runs[k]->loss.back(),
                  runs[k]->loss.size() - 1);
    labels.push_back(figure::MakeLabel(names[k] + last, kTickPx));
    w = std::max(w, labels.back().width());
    h += labels.back().height() + 4;
  }
  const int box_w = w + 44, box_h = h + 12;
  const int x0 = l.right - box_w - 10, y0 = l.top + 10;
  p.Fill(x0 - 1, y0 - 1, box_w + 2, box_h + 2, Rgb{190, 190, 190});
  p.Fill(x0, y0, box_w, box_h, Rgb{255, 255, 255});
  int y = y0 + 8;
  for (size_t k = 0; k < labels.size(); ++k) {
    p.Fill(x0 + 10, y + labels[k].height() / 2 - 2, 24, 4, LossCurveColor(k));
    p.Text(labels[k], x0 + 40, y, kInk);
    y += labels[k].height() + 4;
  }
}

// The image surface's pixels as an Image (cairo's RGB24 is one 32-bit word per pixel).
Image SurfacePixels(cairo_surface_t* surface, int width, int height) {
  cairo_surface_flush(surface);
  Image im{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  const int stride = cairo_image_surface_get_stride(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  uint8_t* d = im.rgb.data();
  for (int y = 0; y < height; ++y) {
    const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
    for (int x = 0; x < width; ++x) {
      *d++ = static_cast<uint8_t>(row[x] >> 16);
      *d++ = static_cast<uint8_t>(row[x] >> 8);
      *d++ = static_cast<uint8_t>(row[x]);
    }
  }
  return im;
}

}  // namespace

Rgb LossCurveColor(size_t k) {
  static constexpr Rgb kColors[] = {{90, 150, 230}, {235, 110, 80}, {80, 170, 90}, {150, 100, 200}};
  return kColors[k % 4];
}

Image LossCurvesImage(const std::vector<const TrainRun*>& runs,
                      const std::vector<std::string>& names, const std::string& title, int width,
                      int height, LossPlotLayout* layout) {
  CheckPlot(runs, names, width, height);
  const LossPlotLayout l = LayOutPlot(runs, width, height);
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height), cairo_surface_destroy);
  std::unique_ptr<cairo_t, decltype(&cairo_destroy)> cr(cairo_create(surface.get()), cairo_destroy);
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  figure::DrawWithCairo(cr.get(), /*raster=*/true, [&](figure::Painter& p) {
    DrawAxes(cr.get(), p, l, title, width, height);
    DrawCurves(cr.get(), runs, l);
    DrawLegend(p, runs, names, l);
  });
  if (const cairo_status_t status = cairo_status(cr.get()); status != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string("loss plot: cairo failed: ") +
                             cairo_status_to_string(status));
  if (layout) *layout = l;
  return SurfacePixels(surface.get(), width, height);
}

std::string LossCurvesPng(const std::vector<const TrainRun*>& runs,
                          const std::vector<std::string>& names, const std::string& title) {
  return EncodePng(LossCurvesImage(runs, names, title));
}

std::string LossPlotTitle(const TrainRun& run) {
  char lr[32];
  std::snprintf(lr, sizeof lr, "%g", run.options.lr);
  return std::string(Name(run.options.task)) + " \xC2\xB7 T " + std::to_string(run.T) +
         " \xC2\xB7 d_k " + std::to_string(run.d_k) + " \xC2\xB7 " +
         std::to_string(run.options.steps) + " Adam steps (lr " + lr + ", batch " +
         std::to_string(run.options.batch) + ")";
}

}  // namespace attnlab
