// figure.cpp: heatmap figures on the CPU (see figure.h), drawn from the HeatmapSpec that the
// window draws from too (heatmap_spec.h): every rule of what is shown lives there; this file
// only lays the figure out in pixels and paints it.
//
// [SECTION] Geometry: every length of the figure
// [SECTION] Painting: titles, grid, values, labels, colorbar, legends
// [SECTION] RenderFigure
#include "attnlab/figures/figure.h"

#include <algorithm>
#include <cmath>

#include "attnlab/base/text.h"
#include "figure_draw.h"
#include "raster.h"

namespace attnlab::figure {
namespace {

using raster::Canvas;

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

// Labels as bitmaps, each cut to at most 14 average characters' width.
void LayOutLabels(const HeatmapSpec& spec, const Metrics& m, Geometry& g) {
  const float px = m.label_px * g.s;
  const float max_w = px * 0.62f * 14;
  const MeasureText measure = [px](std::string_view t) {
    return static_cast<float>(raster::MeasureText(std::string(t), px));
  };
  for (const std::string& l : spec.row_labels) {
    g.row_text.push_back(MakeLabel(FitLabel(l, max_w, measure), px));
    g.row_label_w = std::max(g.row_label_w, g.row_text.back().width());
    g.label_h = std::max(g.label_h, g.row_text.back().height());
  }
  for (const std::string& l : spec.col_labels) {
    g.col_text.push_back(MakeLabel(FitLabel(l, max_w, measure), px));
    g.col_label_w = std::max(g.col_label_w, g.col_text.back().width());
    g.label_h = std::max(g.label_h, g.col_text.back().height());
  }
  g.row_step = LabelStep(static_cast<float>(g.label_h), static_cast<float>(g.cell));
  g.rotate = RotateColumnLabels(static_cast<float>(g.col_label_w), 4.0f * static_cast<float>(g.s),
                                static_cast<float>(g.cell));
  g.col_step = g.rotate ? LabelStep(static_cast<float>(g.label_h), static_cast<float>(g.cell)) : 1;
  g.col_band = g.rotate ? g.col_label_w : g.label_h;
}

}  // namespace

Geometry LayOut(const HeatmapSpec& spec, int scale, bool colorbar) {
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
  g.title = MakeLabel(spec.title, m.title_px * s);
  g.subtitle = MakeLabel(spec.subtitle, m.subtitle_px * s);
  g.row_axis = MakeLabel(spec.row_axis + " \u2193", m.label_px * s);
  g.col_axis = MakeLabel(spec.col_axis + " \u2192", m.label_px * s);
  const bool bar = colorbar && !spec.mask_legend;
  int side_w = 0;  // right of the colorbar: ticks or legend texts
  if (bar)
    for (const ColorbarTick& t : spec.ticks) {
      g.tick_text.push_back(MakeLabel(t.text, m.tick_px * s));
      side_w = std::max(side_w, g.tick_text.back().width());
    }
  for (const LegendEntry& e : spec.legends) {
    g.legend_text.push_back(MakeLabel(e.text, m.tick_px * s));
    side_w = std::max(side_w, g.legend_text.back().width() + (m.swatch + 4) * s - m.bar_width * s);
  }
  const int pad = m.pad * s;
  g.grid_x = pad + g.row_axis.height() + pad / 2 + g.row_label_w + 6 * s;
  g.grid_y = pad + g.title.height() + g.subtitle.height() + pad;
  g.bar_w = bar ? m.bar_width * s : 0;
  g.bar_h = bar ? std::max(g.grid_h, 160 * s) : 0;
  g.bar_x = g.grid_x + g.grid_w + m.bar_gap * s;
  const int legends_h = static_cast<int>(spec.legends.size()) * m.legend_line * s;
  g.width = std::max({g.bar_x + std::max(g.bar_w, m.swatch * s) + 6 * s + side_w + pad,
                      pad + std::max(g.title.width(), g.subtitle.width()) + pad});
  g.height = std::max(g.grid_y + g.grid_h + 6 * s + g.col_band + pad / 2 + g.col_axis.height(),
                      g.grid_y + g.bar_h + (legends_h ? 12 * s + legends_h : 0)) +
             pad;
  return g;
}

Label MakeLabel(const std::string& text, float px) {
  const raster::TextBox box = raster::MeasureLine(text, px);
  return Label{text, px, box.width, box.height, box.baseline};
}

void Shift(Geometry& g, int dx, int dy) {
  g.grid_x += dx, g.grid_y += dy, g.bar_x += dx;
  g.origin_x += dx, g.origin_y += dy;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Painting: titles, grid, values, labels, colorbar, legends

namespace {

// The cells as pixels (grid_w x grid_h): colours, masked cells hatched (the stripes follow the
// figure's pixels), NaN magenta; thin white lines between big cells.
Image GridPicture(const HeatmapSpec& spec, const StageView& view, const Geometry& g) {
  Image im{g.grid_w, g.grid_h, std::vector<uint8_t>(static_cast<size_t>(g.grid_w) * g.grid_h * 3)};
  Canvas cv(im);
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) {
      const bool masked =
          DrawnHatched(view.masked.size() > 0 && view.masked(r, c), view.values(r, c));
      const Rgb col = CellColor(spec, view.values(r, c), r);
      const int x0 = c * g.cell, y0 = r * g.cell;
      for (int y = y0; y < y0 + g.cell; ++y)
        for (int x = x0; x < x0 + g.cell; ++x)
          cv.Put(x, y, masked ? MaskedColorAt(x + g.grid_x, y + g.grid_y) : col);
    }
  return im;
}

// The grid: one picture on raster backends and for large grids, else one rectangle per cell.
void PaintGrid(Painter& p, const HeatmapSpec& spec, const StageView& view, const Geometry& g) {
  if (p.Raster() || int64_t{g.rows} * g.cols > kMaxVectorCells) {
    p.Picture(g.grid_x, g.grid_y, GridPicture(spec, view, g));
  } else {
    for (int r = 0; r < g.rows; ++r)
      for (int c = 0; c < g.cols; ++c) {
        const int x = g.grid_x + c * g.cell, y = g.grid_y + r * g.cell;
        if (DrawnHatched(view.masked.size() > 0 && view.masked(r, c), view.values(r, c)))
          p.Hatch(x, y, g.cell, g.cell);
        else
          p.Fill(x, y, g.cell, g.cell, CellColor(spec, view.values(r, c), r));
      }
  }
  if (g.cell >= 12 * g.s) {
    for (int r = 1; r < g.rows; ++r) p.Fill(g.grid_x, g.grid_y + r * g.cell, g.grid_w, 1, kWhite);
    for (int c = 1; c < g.cols; ++c) p.Fill(g.grid_x + c * g.cell, g.grid_y, 1, g.grid_h, kWhite);
  }
}

// Each cell's text as MapCellTexts prints it (masked cells -inf or 0); false if none fit.
bool PaintValues(Painter& p, const HeatmapSpec& spec, const StageView& view, const Geometry& g) {
  const Metrics m;
  if (!spec.values_wanted || g.cell < 8 * g.s) return false;
  const float px = std::min(m.value_px * g.s, g.cell * 0.3f);
  const MeasureText measure = [px](std::string_view t) {
    return static_cast<float>(raster::MeasureText(std::string(t), px));
  };
  std::vector<float> values;
  std::vector<uint8_t> masks;
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) {
      values.push_back(view.values(r, c));
      masks.push_back(DrawnHatched(view.masked.size() > 0 && view.masked(r, c), view.values(r, c)));
    }
  const std::vector<std::string> texts =
      MapCellTexts(spec.stage, values, masks, static_cast<float>(g.cell - 2 * g.s), measure);
  bool any = false;
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c) {
      const size_t k = static_cast<size_t>(r) * g.cols + c;
      const bool masked = masks[k] != 0;
      const float v = values[k];
      const std::string& text = texts[k];
      if (text.empty()) continue;
      const Label t = MakeLabel(text, px);
      p.Text(t, g.grid_x + c * g.cell + (g.cell - t.width()) / 2,
             g.grid_y + r * g.cell + (g.cell - t.height()) / 2,
             CellInk(masked ? kMaskedLight : CellColor(spec, v, r)));
      any = true;
    }
  return any;
}

// Row labels right-aligned; column labels below, rotated when they would overlap; axis names.
void PaintLabels(Painter& p, const Geometry& g) {
  const int s = g.s, pad = Metrics().pad * s;
  for (int r = 0; r < g.rows; r += g.row_step) {
    const Label& t = g.row_text[r];
    p.Text(t, g.grid_x - 6 * s - t.width(), g.grid_y + r * g.cell + (g.cell - t.height()) / 2,
           kInk);
  }
  for (int c = 0; c < g.cols; c += g.col_step) {
    const Label& t = g.col_text[c];
    if (g.rotate)
      p.Text(t, g.grid_x + c * g.cell + (g.cell - t.height()) / 2,
             g.grid_y + g.grid_h + 6 * s + g.col_label_w - t.width(), kInk, true);
    else
      p.Text(t, g.grid_x + c * g.cell + (g.cell - t.width()) / 2, g.grid_y + g.grid_h + 6 * s,
             kInk);
  }
  p.Text(g.row_axis, g.origin_x + pad, g.grid_y + (g.grid_h - g.row_axis.width()) / 2, kMuted,
         true);
  p.Text(g.col_axis, g.grid_x + (g.grid_w - g.col_axis.width()) / 2,
         g.grid_y + g.grid_h + 6 * s + g.col_band + pad / 2, kMuted);
}

// The colorbar, high at the top, with the spec's ticks at their values.
void PaintColorbar(Painter& p, const HeatmapSpec& spec, const Geometry& g) {
  if (g.bar_w == 0) return;
  const int s = g.s;
  Image bar{g.bar_w, g.bar_h, std::vector<uint8_t>(static_cast<size_t>(g.bar_w) * g.bar_h * 3)};
  Canvas cv(bar);
  for (int y = 0; y < g.bar_h; ++y) {
    const int idx =
        static_cast<int>(std::lround(255.0 * (g.bar_h - 1 - y) / std::max(1, g.bar_h - 1)));
    cv.Fill(0, y, g.bar_w, 1, spec.colormap->lut[idx]);
  }
  p.Picture(g.bar_x, g.grid_y, bar);
  const double lo = spec.range.lo, hi = spec.range.hi;
  for (size_t i = 0; i < spec.ticks.size(); ++i) {
    const double f = hi > lo ? (spec.ticks[i].value - lo) / (hi - lo) : 0.0;
    const int y = g.grid_y + static_cast<int>(std::lround((g.bar_h - 1) * (1.0 - f)));
    p.Fill(g.bar_x + g.bar_w, y, 4 * s, std::max(1, s), kInk);
    const Label& t = g.tick_text[i];
    const int h = t.height();
    p.Text(t, g.bar_x + g.bar_w + 6 * s,
           std::clamp(y - h / 2, g.grid_y - h / 2, g.grid_y + g.bar_h - h / 2), kInk);
  }
}

// One swatch per legend entry (under the colorbar; the mask's in its place).
void PaintLegends(Painter& p, const HeatmapSpec& spec, const Geometry& g) {
  const Metrics m;
  const int s = g.s, sw = m.swatch * s;
  int y = g.bar_h == 0 ? g.grid_y : g.grid_y + g.bar_h + 12 * s;
  for (size_t i = 0; i < spec.legends.size(); ++i) {
    const int x = g.bar_x;
    switch (spec.legends[i].kind) {
      case LegendKind::kAllowed:
        p.Fill(x, y, sw, sw, spec.colormap->lut[255]);
        break;
      case LegendKind::kMasked:
        p.Hatch(x, y, sw, sw);
        break;
      case LegendKind::kNan:
        p.Fill(x, y, sw, sw, kNanColor);
        break;
      case LegendKind::kInf:  // +inf and -inf take the scale's two ends
        p.Fill(x, y, sw / 2, sw, spec.colormap->lut[0]);
        p.Fill(x + sw / 2, y, sw - sw / 2, sw, spec.colormap->lut[255]);
        break;
      case LegendKind::kNote:  // text only, where the swatch and the text would be
        break;
    }
    const Label& t = g.legend_text[i];
    const bool note = spec.legends[i].kind == LegendKind::kNote;
    p.Text(t, note ? x : x + sw + 4 * s, y + (sw - t.height()) / 2, kInk);
    y += m.legend_line * s;
  }
}

}  // namespace

bool Draw(Painter& p, const HeatmapSpec& spec, const StageView& view, const Geometry& g) {
  const int pad = Metrics().pad * g.s;
  p.Text(g.title, g.origin_x + pad, g.origin_y + pad, kInk);
  p.Text(g.subtitle, g.origin_x + pad, g.origin_y + pad + g.title.height(), kMuted);
  PaintGrid(p, spec, view, g);
  const bool values_shown = PaintValues(p, spec, view, g);
  PaintLabels(p, g);
  PaintColorbar(p, spec, g);
  PaintLegends(p, spec, g);
  return values_shown;
}

namespace {

// Whether two heatmaps colour alike: one colormap, scaling, range and the same ticks.
bool SameScale(const HeatmapSpec& a, const HeatmapSpec& b) {
  if (a.colormap != b.colormap || a.scaling != b.scaling || a.range.lo != b.range.lo ||
      a.range.hi != b.range.hi || a.ticks.size() != b.ticks.size())
    return false;
  for (size_t i = 0; i < a.ticks.size(); ++i)
    if (a.ticks[i].text != b.ticks[i].text) return false;
  return a.scaling != ColorScaling::kPerRow || a.row_scale == b.row_scale;
}

// Puts the specs `barred` on one linear range: the union of theirs, symmetric around 0 when all
// are signed. Errors: std::invalid_argument when their colormaps differ or one is coloured per
// row or on a log scale.
void ShareRange(std::vector<HeatmapSpec>& specs, const std::vector<size_t>& barred) {
  const HeatmapSpec& first = specs[barred[0]];
  float lo = first.range.lo, hi = first.range.hi;
  bool all_signed = true;
  for (size_t i : barred) {
    const HeatmapSpec& s = specs[i];
    const std::string no = std::string("no shared colorbar: ") + StageName(s.stage);
    if (s.colormap != first.colormap)
      throw std::invalid_argument(no + " is coloured by " + s.colormap->name + ", " +
                                  StageName(first.stage) + " by " + first.colormap->name +
                                  "; choose one colormap, or a colorbar per panel");
    if (s.scaling != ColorScaling::kLinear)
      throw std::invalid_argument(
          no + " is coloured " + (s.scaling == ColorScaling::kLog ? "on a log scale" : "per row") +
          "; choose a linear range (fixed or data), or a colorbar per panel");
    lo = std::min(lo, s.range.lo), hi = std::max(hi, s.range.hi);
    all_signed = all_signed && s.diverging;
  }
  if (all_signed) hi = std::max(std::abs(lo), std::abs(hi)), lo = -hi;
  std::vector<ColorbarTick> ticks;
  for (double t : NiceTicks(lo, hi, 4)) ticks.push_back({t, FormatNumber(t, NumberStyle::kTick)});
  for (size_t i : barred) specs[i].range = {lo, hi}, specs[i].ticks = ticks;
}

// Whether the panels of `specs` share one colorbar under `mode` (ShareRange done when forced).
bool ShareColorbar(std::vector<HeatmapSpec>& specs, ColorbarMode mode) {
  std::vector<size_t> barred;  // every panel but the mask's (a legend, no colorbar)
  for (size_t i = 0; i < specs.size(); ++i)
    if (!specs[i].mask_legend) barred.push_back(i);
  if (mode == ColorbarMode::kPerPanel || barred.size() < 2) return false;
  bool same = true;
  for (size_t i : barred) same = same && SameScale(specs[barred[0]], specs[i]);
  if (!same && mode == ColorbarMode::kShared) ShareRange(specs, barred);
  return same || mode == ColorbarMode::kShared;
}

}  // namespace

Composition Compose(std::vector<StageView> views, const std::string& title,
                    const FigureOptions& options) {
  if (options.scale < 1 || options.scale > 8)
    throw std::invalid_argument("scale " + std::to_string(options.scale) + " is outside 1..8");
  if (views.empty()) throw std::invalid_argument("a figure needs at least one stage");
  const Metrics m;
  Composition c;
  c.s = options.scale;
  const int pad = m.pad * c.s;
  int top = 0;
  if (views.size() > 1) {
    c.title = MakeLabel(title, m.title_px * 1.25f * c.s);
    top = pad + c.title.height();
    c.width = 2 * pad + c.title.width();
  }
  for (const StageView& v : views) c.specs.push_back(FigureSpec(v, options));
  const bool shared = ShareColorbar(c.specs, options.colorbar);
  size_t last_bar = 0;  // a shared colorbar goes right of the last panel that has one
  for (size_t i = 0; i < c.specs.size(); ++i)
    if (!c.specs[i].mask_legend) last_bar = i;
  int x = 0, y = top, row_h = 0;
  for (size_t i = 0; i < views.size(); ++i) {
    if (i > 0 && i % kPanelsPerRow == 0) x = 0, y += row_h, row_h = 0;
    c.panels.push_back(LayOut(c.specs[i], c.s, !shared || i == last_bar));
    Geometry& g = c.panels.back();
    Shift(g, x, y);
    x += g.width;
    row_h = std::max(row_h, g.height);
    c.width = std::max(c.width, x);
    c.height = std::max(c.height, y + row_h);
  }
  c.views = std::move(views);
  return c;
}

void DrawTitle(Painter& p, const Composition& c) {
  p.Text(c.title, Metrics().pad * c.s, Metrics().pad * c.s, kInk);
}

void Draw(Painter& p, const Composition& c) {
  if (c.views.size() > 1) DrawTitle(p, c);
  for (size_t i = 0; i < c.views.size(); ++i) Draw(p, c.specs[i], c.views[i], c.panels[i]);
}

}  // namespace attnlab::figure

// ---------------------------------------------------------------------------------------------
// [SECTION] RenderFigure

namespace attnlab {

using figure::Geometry;

int64_t FigureCellSize(int64_t rows, int64_t cols, int scale) {
  const figure::Metrics m;
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
                         ScanStage(view.stage, view.values), any_masked, options);
}

// The pixels of `c`, and where each panel went.
Image RenderPanels(const figure::Composition& c, std::vector<FigureLayout>* layouts) {
  return figure::RasterDraw(c.width, c.height, [&c, layouts](figure::Painter& painter) {
    if (c.views.size() > 1) figure::DrawTitle(painter, c);
    for (size_t i = 0; i < c.views.size(); ++i) {
      const bool values_shown = figure::Draw(painter, c.specs[i], c.views[i], c.panels[i]);
      const Geometry& g = c.panels[i];
      if (layouts)
        layouts->push_back(FigureLayout{g.grid_x, g.grid_y, g.cell, g.rows, g.cols, g.bar_x,
                                        g.grid_y, g.bar_w, g.bar_h, g.row_step, g.col_step,
                                        g.rotate, values_shown});
    }
  });
}

Image RenderFigure(const StageView& view, const FigureOptions& options, FigureLayout* layout) {
  std::vector<FigureLayout> layouts;
  Image im = RenderPanels(figure::Compose({view}, "", options), &layouts);
  if (layout) *layout = layouts[0];
  return im;
}

Image RenderFigure(const std::vector<StageView>& views, const std::string& title,
                   const FigureOptions& options, std::vector<FigureLayout>* layouts) {
  return RenderPanels(figure::Compose(views, title, options), layouts);
}

const char* ColorbarModeName(ColorbarMode mode) {
  switch (mode) {
    case ColorbarMode::kAuto:
      return "auto";
    case ColorbarMode::kShared:
      return "shared";
    case ColorbarMode::kPerPanel:
      return "per-panel";
  }
  return "?";
}

std::optional<ColorbarMode> ParseColorbarMode(const std::string& name) {
  for (ColorbarMode m : {ColorbarMode::kAuto, ColorbarMode::kShared, ColorbarMode::kPerPanel})
    if (name == ColorbarModeName(m)) return m;
  return std::nullopt;
}

std::vector<Stage> PipelineStages(const Scenario& scenario) {
  std::vector<Stage> stages;
  for (Stage s : AllStages())
    if (StageInRun(s, scenario) && (s != Stage::kMask || scenario.mask.kind != MaskKind::kNone))
      stages.push_back(s);
  return stages;
}

double PrintWidthInches(int pixels, const FigureOptions& options) {
  if (options.width_inches > 0) return options.width_inches;
  return pixels / (options.dpi > 0 ? options.dpi : 96.0);
}

const char* FigureFormatName(FigureFormat format) {
  switch (format) {
    case FigureFormat::kPng:
      return "png";
    case FigureFormat::kSvg:
      return "svg";
    case FigureFormat::kPdf:
      return "pdf";
  }
  return "?";
}

std::string FigureFile(const std::vector<StageView>& views, const std::string& title,
                       const FigureOptions& options, FigureFormat format,
                       const std::string& metadata) {
  const figure::Composition c = figure::Compose(views, title, options);
  const double inches = PrintWidthInches(c.width, options);
  switch (format) {
    case FigureFormat::kPng: {
      std::string png = EncodePng(RenderPanels(c, nullptr));
      if (options.dpi > 0 || options.width_inches > 0) png = SetPngDpi(png, c.width / inches);
      return EmbedPngText(png, kFigureMetadataKey, metadata);
    }
    case FigureFormat::kSvg:
      return figure::SvgFigure(c, metadata, inches);
    case FigureFormat::kPdf:
      return figure::PdfFigure(c, metadata, inches);
  }
  throw std::invalid_argument("unknown figure format");
}

}  // namespace attnlab
