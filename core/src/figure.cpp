// figure.cpp: heatmap figures on the CPU (see figure.h), drawn from the HeatmapSpec that the
// window draws from too (heatmap_spec.h): every rule of what is shown lives there; this file
// only lays the figure out in pixels and paints it.
//
// [SECTION] Geometry: every length of the figure
// [SECTION] Painting: titles, grid, values, labels, colorbar, legends
// [SECTION] RenderFigure
#include "attnlab/figure.h"

#include <algorithm>
#include <cmath>

#include "attnlab/text.h"
#include "raster.h"

namespace attnlab {
namespace {

using raster::Canvas;
using raster::RenderText;
using raster::TextBitmap;

constexpr Rgb kInk{30, 30, 30};
constexpr Rgb kMuted{90, 90, 90};
constexpr Rgb kWhite{255, 255, 255};

// ---------------------------------------------------------------------------------------------
// [SECTION] Geometry: every length of the figure

// Every length of the figure at scale 1, in pixels.
struct Metrics {
  int pad = 16;
  float title_px = 17, subtitle_px = 13, label_px = 13, value_px = 11.5f, tick_px = 12;
  int max_cell = 58;
  int grid_target = 620;  // cells shrink so the grid stays near this size, down to 1 px
  int bar_width = 18, bar_gap = 24;
  int swatch = 14, legend_line = 20;
};

// The figure laid out: text already rasterised, every position in pixels.
struct Geometry {
  int s = 1;  // scale
  int rows = 0, cols = 0, cell = 1, grid_x = 0, grid_y = 0, grid_w = 0, grid_h = 0;
  TextBitmap title, subtitle, row_axis, col_axis;
  std::vector<TextBitmap> row_text, col_text, tick_text, legend_text;
  int row_label_w = 0, col_label_w = 0, label_h = 0;
  int row_step = 1, col_step = 1, col_band = 0;
  bool rotate = false;
  int bar_x = 0, bar_w = 0, bar_h = 0;
  int width = 0, height = 0;
};

// Labels as bitmaps, each cut to at most 14 average characters' width.
void LayOutLabels(const HeatmapSpec& spec, const Metrics& m, Geometry& g) {
  const float px = m.label_px * g.s;
  const float max_w = px * 0.62f * 14;
  const MeasureText measure = [px](std::string_view t) {
    return static_cast<float>(raster::MeasureText(std::string(t), px));
  };
  for (const std::string& l : spec.row_labels) {
    g.row_text.push_back(RenderText(FitLabel(l, max_w, measure), px));
    g.row_label_w = std::max(g.row_label_w, g.row_text.back().width);
    g.label_h = std::max(g.label_h, g.row_text.back().height);
  }
  for (const std::string& l : spec.col_labels) {
    g.col_text.push_back(RenderText(FitLabel(l, max_w, measure), px));
    g.col_label_w = std::max(g.col_label_w, g.col_text.back().width);
    g.label_h = std::max(g.label_h, g.col_text.back().height);
  }
  g.row_step = LabelStep(static_cast<float>(g.label_h), static_cast<float>(g.cell));
  g.rotate = g.col_label_w + 4 * g.s > g.cell;  // horizontal labels would overlap
  g.col_step = g.rotate ? LabelStep(static_cast<float>(g.label_h), static_cast<float>(g.cell)) : 1;
  g.col_band = g.rotate ? g.col_label_w : g.label_h;
}

Geometry LayOut(const HeatmapSpec& spec, int scale) {
  const Metrics m;
  Geometry g;
  g.s = scale;
  const int s = scale;
  g.rows = static_cast<int>(spec.rows);
  g.cols = static_cast<int>(spec.cols);
  g.cell = static_cast<int>(FigureCellSize(g.rows, g.cols, s));
  g.grid_w = g.cell * g.cols;
  g.grid_h = g.cell * g.rows;
  LayOutLabels(spec, m, g);
  g.title = RenderText(spec.title, m.title_px * s);
  g.subtitle = RenderText(spec.subtitle, m.subtitle_px * s);
  g.row_axis = RenderText(spec.row_axis + " \u2193", m.label_px * s);
  g.col_axis = RenderText(spec.col_axis + " \u2192", m.label_px * s);
  int side_w = 0;  // right of the colorbar: ticks or legend texts
  if (!spec.mask_legend)
    for (const ColorbarTick& t : spec.ticks) {
      g.tick_text.push_back(RenderText(t.text, m.tick_px * s));
      side_w = std::max(side_w, g.tick_text.back().width);
    }
  for (const LegendEntry& e : spec.legends) {
    g.legend_text.push_back(RenderText(e.text, m.tick_px * s));
    side_w = std::max(side_w, g.legend_text.back().width + (m.swatch + 4) * s - m.bar_width * s);
  }
  const int pad = m.pad * s;
  g.grid_x = pad + g.row_axis.height + pad / 2 + g.row_label_w + 6 * s;
  g.grid_y = pad + g.title.height + g.subtitle.height + pad;
  g.bar_w = spec.mask_legend ? 0 : m.bar_width * s;
  g.bar_h = spec.mask_legend ? 0 : std::max(g.grid_h, 160 * s);
  g.bar_x = g.grid_x + g.grid_w + m.bar_gap * s;
  const int legends_h = static_cast<int>(spec.legends.size()) * m.legend_line * s;
  g.width = std::max({g.bar_x + std::max(g.bar_w, m.swatch * s) + 6 * s + side_w + pad,
                      pad + std::max(g.title.width, g.subtitle.width) + pad});
  g.height = std::max(g.grid_y + g.grid_h + 6 * s + g.col_band + pad / 2 + g.col_axis.height,
                      g.grid_y + g.bar_h + (legends_h ? 12 * s + legends_h : 0)) +
             pad;
  return g;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Painting: titles, grid, values, labels, colorbar, legends

// Each cell its colour, masked cells hatched, NaN magenta; thin white lines between big cells.
void PaintGrid(Canvas& cv, const HeatmapSpec& spec, const StageView& view, const Geometry& g) {
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) {
      const bool masked = view.masked.size() > 0 && view.masked(r, c);
      const Rgb col = CellColor(spec, view.values(r, c), r);
      const int x0 = g.grid_x + c * g.cell, y0 = g.grid_y + r * g.cell;
      for (int y = y0; y < y0 + g.cell; ++y)
        for (int x = x0; x < x0 + g.cell; ++x) cv.Put(x, y, masked ? MaskedColorAt(x, y) : col);
    }
  if (g.cell >= 12 * g.s) {
    for (int r = 1; r < g.rows; ++r) cv.Fill(g.grid_x, g.grid_y + r * g.cell, g.grid_w, 1, kWhite);
    for (int c = 1; c < g.cols; ++c) cv.Fill(g.grid_x + c * g.cell, g.grid_y, 1, g.grid_h, kWhite);
  }
}

// The value in each unmasked cell, as many decimals as fit (FittedCellValue); false if none fit.
bool PaintValues(Canvas& cv, const HeatmapSpec& spec, const StageView& view, const Geometry& g) {
  const Metrics m;
  if (!spec.values_wanted || g.cell < 8 * g.s) return false;
  const float px = std::min(m.value_px * g.s, g.cell * 0.3f);
  const MeasureText measure = [px](std::string_view t) {
    return static_cast<float>(raster::MeasureText(std::string(t), px));
  };
  bool any = false;
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) {
      if (view.masked.size() > 0 && view.masked(r, c)) continue;  // the hatch and legend say it
      const float v = view.values(r, c);
      const std::string text = FittedCellValue(v, static_cast<float>(g.cell - 2 * g.s), measure);
      if (text.empty()) continue;
      const TextBitmap t = RenderText(text, px);
      cv.Text(t, g.grid_x + c * g.cell + (g.cell - t.width) / 2,
              g.grid_y + r * g.cell + (g.cell - t.height) / 2, CellInk(CellColor(spec, v, r)));
      any = true;
    }
  return any;
}

// Row labels right-aligned; column labels below, rotated when they would overlap; axis names.
void PaintLabels(Canvas& cv, const Geometry& g) {
  const int s = g.s, pad = Metrics().pad * s;
  for (int r = 0; r < g.rows; r += g.row_step) {
    const TextBitmap& t = g.row_text[r];
    cv.Text(t, g.grid_x - 6 * s - t.width, g.grid_y + r * g.cell + (g.cell - t.height) / 2, kInk);
  }
  for (int c = 0; c < g.cols; c += g.col_step) {
    const TextBitmap& t = g.col_text[c];
    if (g.rotate)
      cv.Text(t, g.grid_x + c * g.cell + (g.cell - t.height) / 2,
              g.grid_y + g.grid_h + 6 * s + g.col_label_w - t.width, kInk, true);
    else
      cv.Text(t, g.grid_x + c * g.cell + (g.cell - t.width) / 2, g.grid_y + g.grid_h + 6 * s, kInk);
  }
  cv.Text(g.row_axis, pad, g.grid_y + (g.grid_h - g.row_axis.width) / 2, kMuted, true);
  cv.Text(g.col_axis, g.grid_x + (g.grid_w - g.col_axis.width) / 2,
          g.grid_y + g.grid_h + 6 * s + g.col_band + pad / 2, kMuted);
}

// The colorbar, high at the top, with the spec's ticks at their values.
void PaintColorbar(Canvas& cv, const HeatmapSpec& spec, const Geometry& g) {
  if (spec.mask_legend) return;
  const int s = g.s;
  for (int y = 0; y < g.bar_h; ++y) {
    const int idx =
        static_cast<int>(std::lround(255.0 * (g.bar_h - 1 - y) / std::max(1, g.bar_h - 1)));
    cv.Fill(g.bar_x, g.grid_y + y, g.bar_w, 1, spec.colormap->lut[idx]);
  }
  const double lo = spec.range.lo, hi = spec.range.hi;
  for (size_t i = 0; i < spec.ticks.size(); ++i) {
    const double f = hi > lo ? (spec.ticks[i].value - lo) / (hi - lo) : 0.0;
    const int y = g.grid_y + static_cast<int>(std::lround((g.bar_h - 1) * (1.0 - f)));
    cv.Fill(g.bar_x + g.bar_w, y, 4 * s, std::max(1, s), kInk);
    const TextBitmap& t = g.tick_text[i];
    cv.Text(
        t, g.bar_x + g.bar_w + 6 * s,
        std::clamp(y - t.height / 2, g.grid_y - t.height / 2, g.grid_y + g.bar_h - t.height / 2),
        kInk);
  }
}

// One swatch per legend entry (under the colorbar; the mask's in its place).
void PaintLegends(Canvas& cv, const HeatmapSpec& spec, const Geometry& g) {
  const Metrics m;
  const int s = g.s, sw = m.swatch * s;
  int y = spec.mask_legend ? g.grid_y : g.grid_y + g.bar_h + 12 * s;
  for (size_t i = 0; i < spec.legends.size(); ++i) {
    const int x = g.bar_x;
    switch (spec.legends[i].kind) {
      case LegendKind::kAllowed:
        cv.Fill(x, y, sw, sw, spec.colormap->lut[255]);
        break;
      case LegendKind::kMasked:
        for (int py = y; py < y + sw; ++py)
          for (int px = x; px < x + sw; ++px) cv.Put(px, py, MaskedColorAt(px, py));
        break;
      case LegendKind::kNan:
        cv.Fill(x, y, sw, sw, kNanColor);
        break;
      case LegendKind::kInf:  // +inf and -inf take the scale's two ends
        cv.Fill(x, y, sw / 2, sw, spec.colormap->lut[0]);
        cv.Fill(x + sw / 2, y, sw - sw / 2, sw, spec.colormap->lut[255]);
        break;
      case LegendKind::kNote:  // text only, where the swatch and the text would be
        break;
    }
    const TextBitmap& t = g.legend_text[i];
    const bool note = spec.legends[i].kind == LegendKind::kNote;
    cv.Text(t, note ? x : x + sw + 4 * s, y + (sw - t.height) / 2, kInk);
    y += m.legend_line * s;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] RenderFigure

int64_t FigureCellSize(int64_t rows, int64_t cols, int scale) {
  const Metrics m;
  return std::clamp(scale, 1, 8) *
         std::clamp<int64_t>(m.grid_target / std::max<int64_t>({rows, cols, 1}), 1, m.max_cell);
}

ValueRange FigureRange(const StageView& view, RangeMode mode) {
  const ValueScan scan = ScanStage(view.stage, view.values);
  return StageRange(view.stage, view.diverging, scan,
                    ResolveRangeMode(view.stage, view.diverging, view.values.cols(), scan, mode));
}

HeatmapSpec FigureSpec(const StageView& view, const PresentationOptions& options) {
  const bool any_masked = view.masked.size() > 0 && view.masked.any();
  return MakeHeatmapSpec(view, view.values.rows(), view.values.cols(),
                         ScanStage(view.stage, view.values),
                         any_masked, options);
}

Image RenderFigure(const StageView& view, const FigureOptions& options, FigureLayout* layout) {
  if (options.scale < 1 || options.scale > 8)
    throw std::invalid_argument("scale " + std::to_string(options.scale) + " is outside 1..8");
  const HeatmapSpec spec = FigureSpec(view, options);
  const Geometry g = LayOut(spec, options.scale);
  Image im;
  im.width = g.width;
  im.height = g.height;
  im.rgb.assign(static_cast<size_t>(g.width) * g.height * 3, 255);
  Canvas cv(im);
  const int pad = Metrics().pad * g.s;
  cv.Text(g.title, pad, pad, kInk);
  cv.Text(g.subtitle, pad, pad + g.title.height, kMuted);
  PaintGrid(cv, spec, view, g);
  const bool values_shown = PaintValues(cv, spec, view, g);
  PaintLabels(cv, g);
  PaintColorbar(cv, spec, g);
  PaintLegends(cv, spec, g);
  if (layout)
    *layout =
        FigureLayout{g.grid_x, g.grid_y, g.cell,     g.rows,     g.cols,   g.bar_x,     g.grid_y,
                     g.bar_w,  g.bar_h,  g.row_step, g.col_step, g.rotate, values_shown};
  return im;
}

}  // namespace attnlab
