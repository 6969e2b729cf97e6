// text.h: the one UTF-8 helper and the one number formatter of the project. Every label, cell
// value, tick, tooltip number and title goes through these, so the screen, the figures and the
// command line write a number or a token the same way.
//
// Nothing here allocates more than the returned string; no locale is consulted (numbers always
// use '.' as the decimal point).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// UTF-8

/// The code point starting at s[i] and its length in bytes. Invalid or truncated sequences,
/// overlong forms, surrogates and values above U+10FFFF decode as U+FFFD with length 1, as
/// Python's `bytes.decode("utf-8", "replace")` resynchronises (one replacement per bad byte).
struct Utf8Char {
  char32_t cp = 0;
  size_t len = 1;
};
Utf8Char DecodeUtf8At(std::string_view s, size_t i);

/// Every code point of s (see DecodeUtf8At for invalid bytes).
std::vector<char32_t> DecodeUtf8(std::string_view s);

/// Base64 (RFC 4648, with "=" padding) of `bytes`: the encoding of PNG data in SVG data URIs,
/// PDF metadata and Jupyter notebooks' image/png outputs.
std::string Base64Encode(std::string_view bytes);

/// The UTF-8 bytes of one code point (U+FFFD for a surrogate or a value above U+10FFFF).
std::string EncodeUtf8(char32_t cp);

/// Number of code points in s.
size_t Utf8Length(std::string_view s);

/// The first `max_chars` code points of s (never splits a code point).
std::string Utf8Prefix(std::string_view s, size_t max_chars);

/// Python's str.isspace() (and `\s` of a str regex): ASCII 0x09-0x0D, 0x1C-0x1F, 0x20, and the
/// Unicode spaces U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F,
/// U+3000. Source: CPython's _PyUnicode_IsWhitespace table (Unicode 14, Python 3.11).
bool IsPythonSpace(char32_t cp);

/// A token as a label people can see: each whitespace character shown by its visible symbol
/// (space and the other Unicode spaces U+2423 "␣", newline U+2424 "␤", tab U+2409 "␉", carriage
/// return U+240D "␍", other controls U+FFFD), the empty token as `""`; other tokens unchanged.
/// Used by the screen's axes and tooltips and by the figures.
std::string VisibleToken(std::string_view token);

/// The most code points of a user's text a message quotes (MessageText's default).
inline constexpr size_t kMessageQuoteChars = 60;

/// Text taken from a file or an argument, fit to be quoted in a one-line message: every control
/// character (U+0000-U+001F, U+007F-U+009F, U+2028, U+2029) written as its escape (\n, \t,
/// \r, else \u001b), invalid UTF-8 bytes as U+FFFD, and, when it has more than `max_chars`
/// code points, cut to its first max_chars - 1 followed by "…" (U+2026). The one function for
/// it: scenario errors, the command line's and the window's messages all go through it.
/// `max_chars` = std::string_view::npos: escape only, never cut.
std::string MessageText(std::string_view text, size_t max_chars = kMessageQuoteChars);

// ---------------------------------------------------------------------------------------------
// Numbers

/// How FormatNumber writes a value.
enum class NumberStyle {
  kFixed,     ///< `digits` decimals: 0.4300 (digits = 4), the notebooks' print
  kGeneral,   ///< `digits` significant digits, %g style, no trailing zeros: 0.43, 1e-05
  kShortest,  ///< the shortest text that reads back to the same float32: 0.43, 1.8111e-05
  kTick,  ///< a tick: integers below 1e5 plain, else 3 significant digits (2 beyond [1e-3, 1e4))
  kFixedAll,  ///< `digits` decimals at any magnitude, no fallback (Python's '{:.4f}')
  kExponent,  ///< `digits` decimals, e-notation, 2+ exponent digits: 3.4023e-04
};

/// v as text. Non-finite values are "nan", "inf", "-inf" in every style; -0 is "0" except in
/// kFixed, kFixedAll, kExponent (torch prints -0.0000). kFixed falls back to kGeneral with `digits`
/// significant digits when |v| >= 1e6 (a fixed form would be unreadably long).
std::string FormatNumber(double v, NumberStyle style, int digits = 4);

/// The shortest decimal text of a float32 that parses back to exactly v (std::to_chars). JSON
/// writers (scenario files, dump) use it, so 0.43f is written "0.43", not 0.4300000071525574.
std::string ShortestFloat(float v);

/// The shortest decimal text of a double that parses back to exactly v (float64 stages' CSV).
std::string ShortestDouble(double v);

}  // namespace attnlab
