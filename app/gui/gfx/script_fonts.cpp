// script_fonts.cpp: fallback fonts through fontconfig and right-to-left runs in visual order for
// the window (see script_fonts.h).
#include "gui/gfx/script_fonts.h"

#include <fontconfig/fontconfig.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "attnlab/base/text.h"

namespace attnlab::gui {

const ImWchar* BaseGlyphRanges() {
  static const ImWchar ranges[] = {0x0020, 0x024F,  // Latin, Latin-1, Latin Extended
                                   0x0370, 0x03FF,  // Greek (Sigma)
                                   0x0400, 0x04FF,  // Cyrillic (tokens of any text)
                                   0x1D00, 0x1DBF,  // phonetic extensions (superscript T)
                                   0x2000, 0x22FF,  // punctuation, arrows, math operators
                                   0x2400, 0x243F,  // control pictures (the visible space)
                                   0x25A0, 0x25FF,  // geometric shapes (the tour's triangles)
                                   0x2713, 0x2714,  // check marks (the tour's tasks)
                                   0};
  return ranges;
}

namespace {

bool InBase(char32_t cp) {
  for (const ImWchar* r = BaseGlyphRanges(); r[0]; r += 2)
    if (cp >= r[0] && cp <= r[1]) return true;
  return false;
}

/// stb_truetype reads TrueType and OpenType files (and collections), not bitmap formats.
bool IsOutlineFile(const std::string& file) {
  const size_t dot = file.rfind('.');
  if (dot == std::string::npos) return false;
  std::string ext = file.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "ttf" || ext == "otf" || ext == "ttc";
}

/// Pairs of consecutive code points, 0-terminated.
std::vector<ImWchar> RangesOf(const std::vector<ImWchar>& sorted) {
  std::vector<ImWchar> ranges;
  for (ImWchar cp : sorted) {
    if (!ranges.empty() && ranges.back() + 1 == cp)
      ranges.back() = cp;
    else
      ranges.insert(ranges.end(), {cp, cp});
  }
  ranges.push_back(0);
  return ranges;
}

/// fontconfig's sans-serif fallback list (trimmed to fonts adding coverage); nullptr on failure.
FcFontSet* SansSerifFallbacks() {
  if (!FcInit()) return nullptr;
  FcPattern* pattern = FcNameParse(reinterpret_cast<const FcChar8*>("sans-serif"));
  if (!pattern) return nullptr;
  FcConfigSubstitute(nullptr, pattern, FcMatchPattern);
  FcDefaultSubstitute(pattern);
  FcResult result = FcResultNoMatch;
  FcFontSet* set = FcFontSort(nullptr, pattern, FcTrue, nullptr, &result);
  FcPatternDestroy(pattern);
  return set;
}

bool IsRightToLeft(char32_t cp) {
  return (cp >= 0x0590 && cp <= 0x08FF) ||  // Hebrew, Arabic, Syriac, Thaana, N'Ko, ...
         (cp >= 0xFB1D && cp <= 0xFDFF) ||  // Hebrew and Arabic presentation forms A
         (cp >= 0xFE70 && cp <= 0xFEFE);    // Arabic presentation forms B
}

}  // namespace

std::vector<ImWchar> CodepointsBeyondBase(const std::vector<std::string>& texts) {
  std::vector<ImWchar> cps;
  for (const std::string& t : texts)
    for (char32_t cp : DecodeUtf8(t))
      if (cp <= 0xFFFF && cp != 0xFFFD && !InBase(cp)) cps.push_back(static_cast<ImWchar>(cp));
  std::sort(cps.begin(), cps.end());
  cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
  if (cps.size() > kMaxFallbackCodepoints) cps.resize(kMaxFallbackCodepoints);
  return cps;
}

std::vector<FallbackFace> FindFallbackFaces(const std::vector<ImWchar>& codepoints) {
  if (codepoints.empty()) return {};
  FcFontSet* set = SansSerifFallbacks();
  if (!set) return {};
  std::map<std::pair<std::string, int>, std::vector<ImWchar>> by_face;  // sorted: stable order
  std::vector<std::pair<std::string, int>> order;                       // fontconfig's order
  for (ImWchar cp : codepoints) {
    for (int i = 0; i < set->nfont; ++i) {
      FcPattern* font = set->fonts[i];
      FcCharSet* charset = nullptr;
      FcChar8* file = nullptr;
      FcBool color = FcFalse;
      int index = 0;
      if (FcPatternGetCharSet(font, FC_CHARSET, 0, &charset) != FcResultMatch ||
          !FcCharSetHasChar(charset, cp) ||
          FcPatternGetString(font, FC_FILE, 0, &file) != FcResultMatch || !file ||
          !IsOutlineFile(reinterpret_cast<const char*>(file)))
        continue;
      if (FcPatternGetBool(font, FC_COLOR, 0, &color) == FcResultMatch && color) continue;
      FcPatternGetInteger(font, FC_INDEX, 0, &index);
      const std::pair<std::string, int> key(reinterpret_cast<const char*>(file), index);
      auto [it, fresh] = by_face.try_emplace(key);
      if (fresh) order.push_back(key);
      it->second.push_back(cp);
      break;
    }
  }
  FcFontSetDestroy(set);
  std::vector<FallbackFace> faces;
  for (const auto& key : order)
    faces.push_back(FallbackFace{key.first, key.second, RangesOf(by_face[key])});
  return faces;
}

std::string VisualOrder(const std::string& text) {
  const std::vector<char32_t> cps = DecodeUtf8(text);
  if (std::none_of(cps.begin(), cps.end(), IsRightToLeft)) return text;
  std::string out;
  for (size_t i = 0; i < cps.size();) {
    size_t end = i;
    while (end < cps.size() && IsRightToLeft(cps[end])) ++end;
    if (end == i) {
      out += EncodeUtf8(cps[i++]);
      continue;
    }
    for (size_t k = end; k > i; --k) out += EncodeUtf8(cps[k - 1]);
    i = end;
  }
  return out;
}

int MissingGlyphs(const ImFont& font, const std::string& text) {
  int missing = 0;
  for (char32_t cp : DecodeUtf8(text))
    missing += cp > 0xFFFF || !font.FindGlyphNoFallback(static_cast<ImWchar>(cp));
  return missing;
}

}  // namespace attnlab::gui
