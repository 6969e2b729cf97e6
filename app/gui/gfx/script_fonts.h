// script_fonts.h: text in every script in the window. Dear ImGui 1.86 as Debian builds it (16-bit
// ImWchar, stb_truetype, no shaping) draws only the glyphs baked into its font atlas and draws
// them left to right. So the tokens' letters that DejaVu Sans lacks (CJK, emoji, ...) come from
// fallback fonts found through fontconfig, as pango finds them for the figures, merged into the
// atlas for exactly the code points the shown tokens use; right-to-left runs are put in visual
// order. Letters beyond the Basic Multilingual Plane (most emoji) cannot be drawn by this ImGui
// and stay "?", as does a letter no installed font has.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace attnlab::gui {

/// The window's own glyph ranges (pairs, 0-terminated, as ImFontConfig::GlyphRanges): Latin,
/// Greek, Cyrillic, the labels' arrows, math signs and shapes; DejaVu Sans draws them.
const ImWchar* BaseGlyphRanges();

/// At most this many extra code points are baked (the atlas stays small): a scenario of
/// thousands of distinct CJK tokens shows the first ones and "?" for the rest.
inline constexpr size_t kMaxFallbackCodepoints = 2048;

/// The code points of the UTF-8 `texts` outside BaseGlyphRanges() and inside the Basic
/// Multilingual Plane (what ImWchar holds), sorted and unique, at most kMaxFallbackCodepoints;
/// invalid UTF-8 (U+FFFD) is left out.
std::vector<ImWchar> CodepointsBeyondBase(const std::vector<std::string>& texts);

/// One fallback font face and the code points it gives to the atlas.
struct FallbackFace {
  std::string file;             ///< a TrueType or OpenType file (.ttf, .otf, .ttc)
  int index = 0;                ///< the face inside a collection (.ttc), FC_INDEX
  std::vector<ImWchar> ranges;  ///< pairs, 0-terminated: the ImFontConfig::GlyphRanges to merge
};

/// For each code point the first font of fontconfig's sans-serif fallback list (FcFontSort, as
/// pango's fallback) whose charset has it, grouped by face. Colour-only fonts (FC_COLOR, bitmap
/// emoji that stb_truetype cannot draw) and files that are not TrueType or OpenType are skipped.
/// Code points no usable font has are left out (drawn "?"). No fontconfig config: empty.
std::vector<FallbackFace> FindFallbackFaces(const std::vector<ImWchar>& codepoints);

/// `text` (UTF-8) in visual order for a left-to-right renderer: each run of right-to-left letters
/// (Hebrew, Arabic, Syriac, Thaana, N'Ko and their presentation forms) reversed, the rest kept.
/// Unshaped: Arabic letters show in their isolated forms. Invalid bytes become U+FFFD.
std::string VisualOrder(const std::string& text);

/// How many code points of the UTF-8 `text` `font` has no glyph for (drawn as its fallback "?").
int MissingGlyphs(const ImFont& font, const std::string& text);

}  // namespace attnlab::gui
