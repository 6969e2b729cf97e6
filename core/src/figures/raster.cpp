// raster.cpp: see raster.h (and font.h's MissingGlyphs). One pango context per thread (pango's
// default font map is per thread), with fixed font options, so the same text measures the same
// on every backend.
#include "raster.h"

#include <fontconfig/fontconfig.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_map>

namespace attnlab::raster {
namespace {

// The figure font: its family, and em pixels per pixel of height (ascent + descent).
struct FigureFont {
  std::string family, error;
  double em_per_px = 1;
};

// The family of the font file at `path`, made known to fontconfig (and so to pango), or "".
std::string AddFontFile(const std::string& path) {
  const auto* file = reinterpret_cast<const FcChar8*>(path.c_str());
  if (!FcConfigAppFontAddFile(FcConfigGetCurrent(), file)) return "";
  int count = 0;
  FcPattern* p = FcFreeTypeQuery(file, 0, nullptr, &count);
  FcChar8* name = nullptr;
  std::string family;
  if (p && FcPatternGetString(p, FC_FAMILY, 0, &name) == FcResultMatch && name)
    family = reinterpret_cast<const char*>(name);
  if (p) FcPatternDestroy(p);
  return family;
}

// Whether fontconfig has a font of exactly `family`.
bool HasFamily(const std::string& family) {
  FcPattern* want = FcNameParse(reinterpret_cast<const FcChar8*>(family.c_str()));
  FcConfigSubstitute(nullptr, want, FcMatchPattern);
  FcDefaultSubstitute(want);
  FcResult result;
  FcPattern* got = FcFontMatch(nullptr, want, &result);
  FcChar8* name = nullptr;
  const bool same = got && FcPatternGetString(got, FC_FAMILY, 0, &name) == FcResultMatch &&
                    family == reinterpret_cast<const char*>(name);
  if (got) FcPatternDestroy(got);
  FcPatternDestroy(want);
  return same;
}

FigureFont FindFont() {
  FigureFont f;
  const char* env = std::getenv("ATTNLAB_FONT");
  if (env && *env) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(env, ec))
      f.error = std::string("ATTNLAB_FONT names ") + env + ", which is not a font file";
    else if ((f.family = AddFontFile(env)).empty())
      f.error = std::string("ATTNLAB_FONT names ") + env + ", which fontconfig cannot read";
  } else if (HasFamily("DejaVu Sans")) {
    f.family = "DejaVu Sans";
  } else {
    f.error =
        "no DejaVu Sans font for figure text; install Debian's fonts-dejavu-core or set "
        "ATTNLAB_FONT to a .ttf file";
  }
  if (!f.error.empty()) return f;
  // Pixel height = ascent + descent (as the figures were designed with stb_truetype).
  PangoContext* context = pango_font_map_create_context(pango_cairo_font_map_get_default());
  PangoFontDescription* font = pango_font_description_from_string(f.family.c_str());
  pango_font_description_set_absolute_size(font, 1000.0 * PANGO_SCALE);
  PangoFontMetrics* m = pango_context_get_metrics(context, font, nullptr);
  const double height =
      double(pango_font_metrics_get_ascent(m) + pango_font_metrics_get_descent(m)) / PANGO_SCALE;
  if (height > 0) f.em_per_px = 1000.0 / height;
  pango_font_metrics_unref(m);
  pango_font_description_free(font);
  g_object_unref(context);
  return f;
}

const FigureFont& Font() {
  static const FigureFont font = FindFont();
  if (!font.error.empty()) throw FontError(font.error);
  return font;
}

// This thread's pango context, layout and font, and the boxes measured so far.
class Shaper {
 public:
  Shaper() {
    context_ = pango_font_map_create_context(pango_cairo_font_map_get_default());
    cairo_font_options_t* o = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_SLIGHT);
    cairo_font_options_set_antialias(o, CAIRO_ANTIALIAS_GRAY);
    pango_cairo_context_set_font_options(context_, o);
    cairo_font_options_destroy(o);
    pango_context_set_round_glyph_positions(context_, FALSE);
    layout_ = pango_layout_new(context_);
    font_ = pango_font_description_from_string(Font().family.c_str());
  }
  ~Shaper() {
    pango_font_description_free(font_);
    g_object_unref(layout_);
    g_object_unref(context_);
  }
  Shaper(const Shaper&) = delete;
  Shaper& operator=(const Shaper&) = delete;

  static Shaper& ThisThread() {
    Font();  // throws FontError before any pango object is made
    thread_local Shaper shaper;
    return shaper;
  }

  PangoLayout* Layout(const std::string& text, float px) {
    if (px != px_) {
      px_ = px;
      pango_font_description_set_absolute_size(font_, EmPixels(px) * PANGO_SCALE);
      pango_layout_set_font_description(layout_, font_);
    }
    pango_layout_set_text(layout_, text.data(), static_cast<int>(text.size()));
    return layout_;
  }

  TextBox Measure(const std::string& text, float px) {
    std::string key(sizeof px, '\0');
    std::memcpy(key.data(), &px, sizeof px);
    key += text;
    if (const auto it = boxes_.find(key); it != boxes_.end()) return it->second;
    PangoLayout* l = Layout(text, px);
    PangoRectangle logical;
    pango_layout_get_extents(l, nullptr, &logical);
    const double base = double(pango_layout_get_baseline(l)) / PANGO_SCALE;
    TextBox box;
    box.baseline = static_cast<int>(std::ceil(base));
    box.height =
        box.baseline + static_cast<int>(std::ceil(double(logical.height) / PANGO_SCALE - base)) + 1;
    box.width = static_cast<int>(std::ceil(double(logical.width) / PANGO_SCALE)) + 2;
    if (boxes_.size() > 100000) boxes_.clear();
    boxes_.emplace(std::move(key), box);
    return box;
  }

 private:
  PangoContext* context_ = nullptr;
  PangoLayout* layout_ = nullptr;
  PangoFontDescription* font_ = nullptr;
  float px_ = -1;
  std::unordered_map<std::string, TextBox> boxes_;
};

}  // namespace

TextBox MeasureLine(const std::string& text, float px) {
  return Shaper::ThisThread().Measure(text, px);
}

int MeasureText(const std::string& text, float px) { return MeasureLine(text, px).width; }

float EmPixels(float px) { return static_cast<float>(px * Font().em_per_px); }

std::string FontFamily() { return Font().family; }

PangoLayout* ShapedLayout(const std::string& text, float px) {
  return Shaper::ThisThread().Layout(text, px);
}

int UnknownGlyphs(const std::string& text) {
  PangoLayoutIter* it = pango_layout_get_iter(ShapedLayout(text, 12));
  int unknown = 0;
  do {
    const PangoLayoutRun* run = pango_layout_iter_get_run_readonly(it);
    for (int i = 0; run && i < run->glyphs->num_glyphs; ++i)
      unknown += (run->glyphs->glyphs[i].glyph & PANGO_GLYPH_UNKNOWN_FLAG) != 0;
  } while (pango_layout_iter_next_run(it));
  pango_layout_iter_free(it);
  return unknown;
}

}  // namespace attnlab::raster

namespace attnlab {

int MissingGlyphs(const std::string& text) { return raster::UnknownGlyphs(text); }

}  // namespace attnlab
