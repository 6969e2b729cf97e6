// raster.cpp: see raster.h.
#include "raster.h"

#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "attnlab/file_io.h"
#include "attnlab/text.h"

namespace attnlab::raster {
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

}  // namespace

namespace {

// The advance width of a line of code points at `scale`, kerning included.
float Advance(const stbtt_fontinfo& info, const std::vector<char32_t>& cps, float scale) {
  float x = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    int adv, lsb;
    stbtt_GetCodepointHMetrics(&info, cps[i], &adv, &lsb);
    x += adv * scale;
    if (i + 1 < cps.size()) x += scale * stbtt_GetCodepointKernAdvance(&info, cps[i], cps[i + 1]);
  }
  return x;
}

}  // namespace

int MeasureText(const std::string& text, float px) {
  const stbtt_fontinfo& info = Font::Get().info();
  return static_cast<int>(
             std::ceil(Advance(info, DecodeUtf8(text), stbtt_ScaleForPixelHeight(&info, px)))) +
         2;
}

float EmPixels(float px) {
  const stbtt_fontinfo& info = Font::Get().info();
  return stbtt_ScaleForPixelHeight(&info, px) / stbtt_ScaleForMappingEmToPixels(&info, 1.0f);
}

std::string FontFamily() {
  const stbtt_fontinfo& info = Font::Get().info();
  int length = 0;  // family name (ID 1), Windows Unicode English: UTF-16BE
  const char* name = stbtt_GetFontNameString(&info, &length, STBTT_PLATFORM_ID_MICROSOFT,
                                             STBTT_MS_EID_UNICODE_BMP, STBTT_MS_LANG_ENGLISH, 1);
  std::string family;
  for (int i = 0; name && i + 1 < length; i += 2)
    if (name[i] == 0 && name[i + 1] > 0x1F && name[i + 1] < 0x7F) family += name[i + 1];
  return family.empty() ? "DejaVu Sans" : family;
}

TextBitmap RenderText(const std::string& text, float px) {
  const stbtt_fontinfo& info = Font::Get().info();
  const float scale = stbtt_ScaleForPixelHeight(&info, px);
  int ascent, descent, gap;
  stbtt_GetFontVMetrics(&info, &ascent, &descent, &gap);
  const int base = static_cast<int>(std::ceil(ascent * scale));
  const std::vector<char32_t> cps = DecodeUtf8(text);
  float x = Advance(info, cps, scale);
  TextBitmap bm;
  bm.width = static_cast<int>(std::ceil(x)) + 2;
  bm.height = base + static_cast<int>(std::ceil(-descent * scale)) + 1;
  bm.baseline = base;
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

}  // namespace attnlab::raster
