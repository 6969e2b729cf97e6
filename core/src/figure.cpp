// figure.cpp: heatmap figures on the CPU (see figure.h).
//
// [SECTION] stages: names and ExtractStage
// [SECTION] text: the TrueType font (stb_truetype) and drawing into an Image
// [SECTION] layout and RenderFigure
// [SECTION] data formats: PNG, CSV, NPY, and the exports
#include "attnlab/figure.h"

#include <stb_image_write.h>
#include <stb_truetype.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "attnlab/file_io.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] stages
// ---------------------------------------------------------------------------------------------

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kScores:
      return "scores";
    case Stage::kMask:
      return "mask";
    case Stage::kLogits:
      return "logits";
    case Stage::kWeights:
      return "weights";
    case Stage::kWeightsDropped:
      return "weights_dropped";
    case Stage::kContext:
      return "context";
  }
  return "";
}

const std::vector<Stage>& AllStages() {
  static const std::vector<Stage> all = {Stage::kScores,  Stage::kMask,           Stage::kLogits,
                                         Stage::kWeights, Stage::kWeightsDropped, Stage::kContext};
  return all;
}

std::optional<Stage> ParseStage(const std::string& name) {
  for (Stage s : AllStages())
    if (name == StageName(s)) return s;
  return std::nullopt;
}

namespace {

bool PerHead(Stage s) {
  return s == Stage::kScores || s == Stage::kLogits || s == Stage::kWeights ||
         s == Stage::kWeightsDropped;
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

StageView ExtractStage(const Stages& st, const Scenario& sc, Stage stage, int64_t head,
                       int64_t batch) {
  const Shape& sh = st.shape;
  if (batch < 0 || batch >= sh.B)
    throw std::invalid_argument("batch " + std::to_string(batch) +
                                " is out of range: the scenario has a batch of " +
                                std::to_string(sh.B) + " (0.." + std::to_string(sh.B - 1) + ")");
  if (head < 0 || head >= sh.H)
    throw std::invalid_argument(
        "head " + std::to_string(head) + " is out of range: the scenario has " +
        std::to_string(sh.H) +
        (sh.H == 1 ? " head (0)" : " heads (0.." + std::to_string(sh.H - 1) + ")"));
  if (!PerHead(stage) && head != 0)
    throw std::invalid_argument(std::string(StageName(stage)) + " has no heads (use head 0)");
  if (stage == Stage::kWeightsDropped && st.weights_dropped.empty())
    throw std::invalid_argument("weights_dropped needs dropout p > 0 (this scenario has none)");

  StageView v;
  v.stage = stage;
  v.head = head;
  v.batch = batch;
  v.row_labels = st.tokens;
  v.col_labels = st.tokens;
  v.row_axis = "query";
  v.col_axis = "key";
  const MaskMatrix hidden = (st.mask.array() == 0).cast<uint8_t>();
  switch (stage) {
    case Stage::kScores:
      v.values = st.Head(st.scores, batch, head);
      v.diverging = true;
      break;
    case Stage::kLogits:
      v.values = st.Head(st.logits, batch, head);
      v.masked = hidden;
      v.diverging = true;
      break;
    case Stage::kWeights:
    case Stage::kWeightsDropped: {
      v.values = st.Head(stage == Stage::kWeights ? st.weights : st.weights_dropped, batch, head);
      v.masked = hidden;
      // Weights in [0, 1] use a sequential map; "sum" normalisation can leave that range.
      const Matrix& w = v.values;
      bool in_unit = true;
      for (Eigen::Index i = 0; i < w.size(); ++i)
        if (std::isfinite(w.data()[i]) && w.data()[i] < 0) in_unit = false;
      v.diverging = !in_unit;
      break;
    }
    case Stage::kMask:
      v.values = st.mask.cast<float>();
      v.masked = hidden;
      break;
    case Stage::kContext:
      v.values = st.context[batch];
      v.diverging = true;
      v.col_labels.clear();
      for (int64_t c = 0; c < v.values.cols(); ++c) v.col_labels.push_back("d" + std::to_string(c));
      v.col_axis = "dimension";
      break;
  }
  std::string t = StageName(stage);
  if (PerHead(stage) && sh.H > 1) t += ", head " + std::to_string(head);
  if (stage != Stage::kMask && sh.B > 1) t += ", batch " + std::to_string(batch);
  if (stage == Stage::kMask) {
    t += std::string(" (") + Name(sc.mask.kind) + ")";
  } else if (stage != Stage::kScores) {
    t += std::string(" (") + (sc.scaling.sqrt_dk ? "scaled by 1/\u221Ad_k" : "unscaled") +
         ", multiplier " + FormatNumber(sc.scaling.multiplier);
    if (stage == Stage::kWeights || stage == Stage::kWeightsDropped)
      t += std::string(", ") + Name(sc.normalization);
    if (stage == Stage::kWeightsDropped) t += ", dropout p " + FormatNumber(sc.dropout.p);
    t += ")";
  } else {
    t += " (q\u00B7k, before scaling)";
  }
  v.title = t;
  return v;
}

StageView DifferenceView(const StageView& a, const StageView& b, const std::string& name_a,
                         const std::string& name_b) {
  if (a.values.rows() != b.values.rows() || a.values.cols() != b.values.cols())
    throw std::invalid_argument("cannot compare a " + std::to_string(a.values.rows()) + " x " +
                                std::to_string(a.values.cols()) + " " + StageName(a.stage) +
                                " with a " + std::to_string(b.values.rows()) + " x " +
                                std::to_string(b.values.cols()) + " one");
  StageView d = a;
  d.values = a.values - b.values;
  d.diverging = true;
  if (a.masked.size() > 0 && b.masked.size() > 0) {
    d.masked = a.masked.cwiseMax(b.masked);
  } else if (b.masked.size() > 0) {
    d.masked = b.masked;
  }
  // -inf - -inf is nan; a masked cell is drawn hatched whatever its value.
  d.title = std::string(StageName(a.stage)) + ": " + name_a + " \u2212 " + name_b;
  return d;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] text
// ---------------------------------------------------------------------------------------------
namespace {

// One TrueType font file, loaded once per process.
class Font {
 public:
  static const Font& Get() {
    static std::once_flag once;
    static std::unique_ptr<Font> font;
    static std::string error;
    std::call_once(once, [] {
      std::vector<std::string> tried;
      std::vector<std::string> candidates;
      if (const char* env = std::getenv("ATTNLAB_FONT"); env && *env) candidates.push_back(env);
      for (const char* p :
           {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/local/share/fonts/DejaVuSans.ttf"})
        candidates.push_back(p);
      for (const std::string& path : candidates) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
          tried.push_back(path);
          continue;
        }
        auto f = std::make_unique<Font>();
        f->data_ = ReadFile(path);
        const auto* bytes = reinterpret_cast<const unsigned char*>(f->data_.data());
        if (stbtt_InitFont(&f->info_, bytes, stbtt_GetFontOffsetForIndex(bytes, 0))) {
          font = std::move(f);
          return;
        }
        tried.push_back(path + " (not a TrueType font)");
      }
      error = "no TrueType font found for figure text (looked at $ATTNLAB_FONT";
      for (const std::string& t : tried) error += ", " + t;
      error += "); install Debian's fonts-dejavu-core or set ATTNLAB_FONT to a .ttf file";
    });
    if (!font) throw FontError(error);
    return *font;
  }

  const stbtt_fontinfo& info() const { return info_; }

 private:
  std::string data_;
  stbtt_fontinfo info_{};
};

// Decodes UTF-8 into code points (invalid bytes become U+FFFD).
std::vector<int> CodePoints(const std::string& s) {
  std::vector<int> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    int cp = 0xFFFD, len = 1;
    if (c < 0x80)
      cp = c;
    else if ((c >> 5) == 6 && i + 1 < s.size())
      cp = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F), len = 2;
    else if ((c >> 4) == 14 && i + 2 < s.size())
      cp = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F), len = 3;
    else if ((c >> 3) == 30 && i + 3 < s.size())
      cp = ((c & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) |
           (s[i + 3] & 0x3F),
      len = 4;
    out.push_back(cp);
    i += len;
  }
  return out;
}

// An 8-bit coverage bitmap of a line of text; the baseline is at `ascent`.
struct TextBitmap {
  int width = 0, height = 0;
  std::vector<uint8_t> alpha;
};

TextBitmap RenderText(const std::string& text, float px) {
  const stbtt_fontinfo& info = Font::Get().info();
  const float scale = stbtt_ScaleForPixelHeight(&info, px);
  int ascent, descent, gap;
  stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
  const int base = static_cast<int>(std::ceil(ascent * scale));
  const std::vector<int> cps = CodePoints(text);
  // Pass 1: width.
  float x = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    int adv, lsb;
    stbtt_GetCodepointHMetrics(&info, cps[i], &adv, &lsb);
    x += adv * scale;
    if (i + 1 < cps.size()) x += scale * stbtt_GetCodepointKernAdvance(&info, cps[i], cps[i + 1]);
  }
  TextBitmap bm;
  bm.width = static_cast<int>(std::ceil(x)) + 2;
  bm.height = base + static_cast<int>(std::ceil(-descent * scale)) + 1;
  bm.alpha.assign(static_cast<size_t>(bm.width) * bm.height, 0);
  // Pass 2: glyphs, each rasterised on its own and added (saturating) into the line.
  x = 0;
  std::vector<uint8_t> glyph;
  for (size_t i = 0; i < cps.size(); ++i) {
    int adv, lsb, x0, y0, x1, y1;
    stbtt_GetCodepointHMetrics(&info, cps[i], &adv, &lsb);
    stbtt_GetCodepointBitmapBox(&info, cps[i], scale, scale, &x0, &y0, &x1, &y1);
    const int gw = x1 - x0, gh = y1 - y0;
    if (gw > 0 && gh > 0) {
      glyph.assign(static_cast<size_t>(gw) * gh, 0);
      stbtt_MakeCodepointBitmap(&info, glyph.data(), gw, gh, gw, scale, scale, cps[i]);
      const int ox = static_cast<int>(std::lround(x)) + x0, oy = base + y0;
      for (int gy = 0; gy < gh; ++gy)
        for (int gx = 0; gx < gw; ++gx) {
          const int px_x = ox + gx, px_y = oy + gy;
          if (px_x < 0 || px_y < 0 || px_x >= bm.width || px_y >= bm.height) continue;
          uint8_t& a = bm.alpha[static_cast<size_t>(px_y) * bm.width + px_x];
          a = static_cast<uint8_t>(std::min(255, a + glyph[static_cast<size_t>(gy) * gw + gx]));
        }
    }
    x += adv * scale;
    if (i + 1 < cps.size()) x += scale * stbtt_GetCodepointKernAdvance(&info, cps[i], cps[i + 1]);
  }
  return bm;
}

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
  if (CodePoints(out).size() > max_chars) {
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
  const Extremes e = FiniteExtremes(view.values);
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

// ---------------------------------------------------------------------------------------------
// [SECTION] data formats and exports
// ---------------------------------------------------------------------------------------------
namespace {

void AppendBytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
}

std::string FloatText(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r ") == std::string::npos && !s.empty()) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string EncodePng(const Image& image) {
  std::string out;
  // Level 4: stb's deflate is slow at high levels; a T = 2048 figure must export in < 2 s.
  stbi_write_png_compression_level = 4;
  stbi_write_png_to_func(AppendBytes, &out, image.width, image.height, 3, image.rgb.data(),
                         image.width * 3);
  return out;
}

std::string StageCsv(const StageView& v) {
  std::string out = v.row_axis;
  for (const std::string& c : v.col_labels) out += "," + CsvField(c);
  out += "\n";
  for (Eigen::Index r = 0; r < v.values.rows(); ++r) {
    out += CsvField(r < static_cast<Eigen::Index>(v.row_labels.size()) ? v.row_labels[r] : "");
    for (Eigen::Index c = 0; c < v.values.cols(); ++c) out += "," + FloatText(v.values(r, c));
    out += "\n";
  }
  return out;
}

std::string StageNpy(const StageView& v) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(v.values.rows()) + ", " + std::to_string(v.values.cols()) +
                       "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64 and
  // ended by a newline (format version 1.0).
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const Matrix& m = v.values;  // row-major float32: already C order
  static_assert(sizeof(float) == 4);
  out.append(reinterpret_cast<const char*>(m.data()), m.size() * sizeof(float));
  return out;
}

void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path) {
  std::string bytes;
  switch (format) {
    case ExportFormat::kPng:
      bytes = EncodePng(RenderFigure(view, options));
      break;
    case ExportFormat::kCsv:
      bytes = StageCsv(view);
      break;
    case ExportFormat::kNpy:
      bytes = StageNpy(view);
      break;
  }
  WriteFileAtomic(path, bytes);
}

std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw FileError(dir + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
  const char* ext = format == ExportFormat::kPng   ? ".png"
                    : format == ExportFormat::kCsv ? ".csv"
                                                   : ".npy";
  const Shape& sh = stages.shape;
  std::vector<std::string> written;
  for (Stage stage : AllStages()) {
    if (stage == Stage::kWeightsDropped && stages.weights_dropped.empty()) continue;
    const int64_t heads = PerHead(stage) ? sh.H : 1;
    const int64_t batches = stage == Stage::kMask ? 1 : sh.B;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        std::string name = StageName(stage);
        if (heads > 1) name += "_h" + std::to_string(h);
        if (batches > 1) name += "_b" + std::to_string(b);
        const std::string path = (std::filesystem::path(dir) / (name + ext)).string();
        ExportView(ExtractStage(stages, scenario, stage, h, b), options, format, path);
        written.push_back(path);
      }
  }
  return written;
}

}  // namespace attnlab
