// figure.cpp: heatmap figures on the CPU (see figure.h).
//
#include "attnlab/figure.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "attnlab/text.h"
#include "raster.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] stages
// ---------------------------------------------------------------------------------------------

namespace {

using raster::Canvas;
using raster::RenderText;
using raster::TextBitmap;

constexpr Rgb kInk{30, 30, 30};
constexpr Rgb kMuted{90, 90, 90};
constexpr Rgb kWhite{255, 255, 255};

// Whitespace tokens would be invisible labels: show them as visible symbols.
std::string VisibleLabel(const std::string& s, size_t max_chars) {
  std::string out;
  for (char c : s) {
    if (c == ' ')
      out += "\u2423";  // open box
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else
      out += c;
  }
  if (Utf8Length(out) > max_chars) {
    // Cut at a code point boundary and add an ellipsis.
    size_t n = 0, i = 0;
    while (i < out.size() && n < max_chars - 1) {
      const unsigned char c = out[i];
      i += c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
      ++n;
    }
    out = out.substr(0, i) + "\u2026";
  }
  return out;
}

std::string CellText(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 999.5f ? "%.3g" : "%.4f", v);
  // torch prints -0.0000 for tiny negatives; keep the sign as it does.
  return buf;
}

std::string TickText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] layout and RenderFigure
// ---------------------------------------------------------------------------------------------

// Every length of the figure at scale 1, in pixels.
struct Metrics {
  int pad = 16;
  float title_px = 17, label_px = 13, value_px = 11.5f, tick_px = 12;
  int max_cell = 58;
  int grid_target = 620;  // cells shrink so the grid stays near this size, down to 1 px
  int bar_width = 18, bar_gap = 24;
  int max_label_chars = 14;
};

}  // namespace

ValueRange StageRange(Stage stage, bool diverging, float lo, float hi, bool any_finite,
                      RangeMode mode) {
  if (stage == Stage::kMask) return {0, 1};
  if ((stage == Stage::kWeights || stage == Stage::kWeightsDropped) && !diverging) {
    const float top = RangeFromExtremes(lo, hi, any_finite, false).hi;
    if (mode == RangeMode::kData) return {0, top > 0 ? top : 1.0f};
    return {0, std::max(1.0f, top)};
  }
  return RangeFromExtremes(lo, hi, any_finite, diverging);
}

ValueRange FigureRange(const StageView& view, RangeMode mode) {
  const ValueScan e = ScanValues(view.values);
  return StageRange(view.stage, view.diverging, e.lo, e.hi, e.any_finite, mode);
}

Image RenderFigure(const StageView& view, const FigureOptions& options, FigureLayout* layout) {
  if (options.scale < 1 || options.scale > 8)
    throw std::invalid_argument("scale " + std::to_string(options.scale) + " is outside 1..8");
  const Colormap& cmap = !options.colormap.empty() ? FindColormap(options.colormap)
                         : view.diverging && !options.diverging_colormap.empty()
                             ? FindColormap(options.diverging_colormap)
                         : !view.diverging && !options.sequential_colormap.empty()
                             ? FindColormap(options.sequential_colormap)
                             : DefaultColormap(view.diverging);
  const int s = options.scale;
  const Metrics m;
  const int rows = static_cast<int>(view.values.rows()),
            cols = static_cast<int>(view.values.cols());
  const int cell = s * std::clamp(m.grid_target / std::max({rows, cols, 1}), 1, m.max_cell);
  const int grid_w = cell * cols, grid_h = cell * rows;
  const bool show_values = options.values == ValuesMode::kOn ||
                           (options.values == ValuesMode::kAuto && rows <= 12 && cols <= 12);

  // Labels, and how many to skip so neighbours do not overlap.
  const float label_px = m.label_px * s;
  std::vector<TextBitmap> row_text, col_text;
  int row_label_w = 0, col_label_w = 0, label_h = 0;
  for (const std::string& l : view.row_labels) {
    row_text.push_back(RenderText(VisibleLabel(l, m.max_label_chars), label_px));
    row_label_w = std::max(row_label_w, row_text.back().width);
    label_h = std::max(label_h, row_text.back().height);
  }
  for (const std::string& l : view.col_labels) {
    col_text.push_back(RenderText(VisibleLabel(l, m.max_label_chars), label_px));
    col_label_w = std::max(col_label_w, col_text.back().width);
    label_h = std::max(label_h, col_text.back().height);
  }
  const int row_step = std::max(1, (label_h + cell - 1) / cell);
  const bool rotate = col_label_w + 4 * s > cell;  // horizontal labels would overlap
  const int col_step = rotate ? std::max(1, (label_h + cell - 1) / cell) : 1;
  const int col_band = rotate ? col_label_w : label_h;

  // Title, axis names, colorbar ticks.
  const TextBitmap title = RenderText(view.title, m.title_px * s);
  const TextBitmap row_axis = RenderText(view.row_axis + " \u2193", label_px);
  const TextBitmap col_axis = RenderText(view.col_axis + " \u2192", label_px);
  const ValueRange range = FigureRange(view, options.range);
  std::vector<double> ticks;
  for (int i = 0; i <= 4; ++i) ticks.push_back(range.lo + (range.hi - range.lo) * i / 4.0);
  std::vector<TextBitmap> tick_text;
  int tick_w = 0;
  for (double t : ticks) {
    tick_text.push_back(RenderText(TickText(t), m.tick_px * s));
    tick_w = std::max(tick_w, tick_text.back().width);
  }
  bool any_masked = false, any_nan = false;
  for (Eigen::Index i = 0; i < view.values.size(); ++i)
    any_nan |= std::isnan(view.values.data()[i]);
  for (Eigen::Index i = 0; i < view.masked.size(); ++i) any_masked |= view.masked.data()[i] != 0;
  const TextBitmap masked_text = RenderText("masked", m.tick_px * s);
  const TextBitmap nan_text = RenderText("nan", m.tick_px * s);

  // Layout, left to right: axis name | row labels | grid | colorbar | ticks.
  const int pad = m.pad * s;
  const int grid_x = pad + row_axis.height + pad / 2 + row_label_w + 6 * s;
  const int grid_y = pad + title.height + pad;
  const int bar_h = std::max(grid_h, 160 * s);
  const int bar_x = grid_x + grid_w + m.bar_gap * s;
  const int legend_w = 18 * s + std::max(masked_text.width, nan_text.width);
  const int width = std::max({bar_x + m.bar_width * s + 6 * s + std::max(tick_w, legend_w) + pad,
                              pad + title.width + pad});
  const int height = std::max(grid_y + grid_h + 6 * s + col_band + pad / 2 + col_axis.height,
                              grid_y + bar_h + (any_masked || any_nan ? 44 * s : 0)) +
                     pad;

  if (layout) {
    *layout = FigureLayout{grid_x,          grid_y, cell,     rows,     cols,   bar_x,      grid_y,
                           m.bar_width * s, bar_h,  row_step, col_step, rotate, show_values};
  }
  Image im;
  im.width = width;
  im.height = height;
  im.rgb.assign(static_cast<size_t>(width) * height * 3, 255);
  Canvas cv(im);

  cv.Text(title, pad, pad, kInk);
  // The grid: each cell its colormap colour, masked cells hatched, NaN magenta.
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float v = view.values(r, c);
      const bool masked = view.masked.size() > 0 && view.masked(r, c);
      const Rgb col = std::isnan(v) ? kNanColor : cmap.lut[LutIndex(v, range)];
      const int x0 = grid_x + c * cell, y0 = grid_y + r * cell;
      for (int y = y0; y < y0 + cell; ++y)
        for (int x = x0; x < x0 + cell; ++x) cv.Put(x, y, masked ? MaskedColorAt(x, y) : col);
    }
  // Thin white lines between cells when cells are big enough to read one by one.
  if (cell >= 12 * s) {
    for (int r = 1; r < rows; ++r) cv.Fill(grid_x, grid_y + r * cell, grid_w, 1, kWhite);
    for (int c = 1; c < cols; ++c) cv.Fill(grid_x + c * cell, grid_y, 1, grid_h, kWhite);
  }
  if (show_values) {
    const float px = std::min(m.value_px * s, cell * 0.3f);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const float v = view.values(r, c);
        const bool masked = view.masked.size() > 0 && view.masked(r, c);
        if (masked) continue;  // the hatch and the legend say it
        const TextBitmap t = RenderText(CellText(v), px);
        if (t.width > cell) continue;
        const Rgb bg = std::isnan(v) ? kNanColor : cmap.lut[LutIndex(v, range)];
        const double lum = 0.2126 * bg.r + 0.7152 * bg.g + 0.0722 * bg.b;
        const Rgb ink = masked ? kInk : lum < 140 ? kWhite : kInk;
        cv.Text(t, grid_x + c * cell + (cell - t.width) / 2,
                grid_y + r * cell + (cell - t.height) / 2, ink);
      }
  }
  // Row labels (right-aligned), column labels (below, rotated when they would overlap).
  for (int r = 0; r < rows; r += row_step) {
    const TextBitmap& t = row_text[r];
    cv.Text(t, grid_x - 6 * s - t.width, grid_y + r * cell + (cell - t.height) / 2, kInk);
  }
  for (int c = 0; c < cols; c += col_step) {
    const TextBitmap& t = col_text[c];
    if (rotate)
      cv.Text(t, grid_x + c * cell + (cell - t.height) / 2,
              grid_y + grid_h + 6 * s + col_label_w - t.width, kInk, true);
    else
      cv.Text(t, grid_x + c * cell + (cell - t.width) / 2, grid_y + grid_h + 6 * s, kInk);
  }
  cv.Text(row_axis, pad, grid_y + (grid_h - row_axis.width) / 2, kMuted, true);
  cv.Text(col_axis, grid_x + (grid_w - col_axis.width) / 2,
          grid_y + grid_h + 6 * s + col_band + pad / 2, kMuted);
  // Colorbar: high at the top, with ticks at five evenly spaced values.
  const int bw = m.bar_width * s;
  for (int y = 0; y < bar_h; ++y) {
    const int idx = static_cast<int>(std::lround(255.0 * (bar_h - 1 - y) / std::max(1, bar_h - 1)));
    cv.Fill(bar_x, grid_y + y, bw, 1, cmap.lut[idx]);
  }
  for (size_t i = 0; i < ticks.size(); ++i) {
    const int y = grid_y + static_cast<int>(std::lround((bar_h - 1) * (1.0 - i / 4.0)));
    cv.Fill(bar_x + bw, y, 4 * s, std::max(1, s), kInk);
    const TextBitmap& t = tick_text[i];
    cv.Text(t, bar_x + bw + 6 * s,
            std::clamp(y - t.height / 2, grid_y - t.height / 2, grid_y + bar_h - t.height / 2),
            kInk);
  }
  // Legend for what is not on the colour scale.
  int ly = grid_y + bar_h + 12 * s;
  if (any_masked) {
    for (int y = ly; y < ly + 14 * s; ++y)
      for (int x = bar_x; x < bar_x + 14 * s; ++x) cv.Put(x, y, MaskedColorAt(x, y));
    cv.Text(masked_text, bar_x + 18 * s, ly + (14 * s - masked_text.height) / 2, kInk);
    ly += 20 * s;
  }
  if (any_nan) {
    cv.Fill(bar_x, ly, 14 * s, 14 * s, kNanColor);
    cv.Text(nan_text, bar_x + 18 * s, ly + (14 * s - nan_text.height) / 2, kInk);
  }
  return im;
}

}  // namespace attnlab
