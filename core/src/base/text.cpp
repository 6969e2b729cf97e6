// text.cpp: see text.h.
#include "attnlab/base/text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace attnlab {

Utf8Char DecodeUtf8At(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return {c, 1};
  size_t len = 0;
  char32_t cp = 0, min = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return {0xFFFD, 1};
  }
  if (i + len > s.size()) return {0xFFFD, 1};
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0xFFFD, 1};
  return {cp, len};
}

std::vector<char32_t> DecodeUtf8(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const Utf8Char c = DecodeUtf8At(s, i);
    out.push_back(c.cp);
    i += c.len;
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += kDigits[v >> 18 & 63];
    out += kDigits[v >> 12 & 63];
    out += i + 1 < bytes.size() ? kDigits[v >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

std::string EncodeUtf8(char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += DecodeUtf8At(s, i).len) ++n;
  return n;
}

std::string Utf8Prefix(std::string_view s, size_t max_chars) {
  size_t i = 0, n = 0;
  while (i < s.size() && n < max_chars) {
    i += DecodeUtf8At(s, i).len;
    ++n;
  }
  return std::string(s.substr(0, i));
}

bool IsPythonSpace(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::string MessageText(std::string_view text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    if (chars + 1 == max_chars && DecodeUtf8At(text, i).len < text.size() - i) {
      out += "\u2026";  // "…": more follows than fits
      break;
    }
    const Utf8Char c = DecodeUtf8At(text, i);
    i += c.len;
    ++chars;
    if (c.cp == '\n') {
      out += "\\n";
    } else if (c.cp == '\t') {
      out += "\\t";
    } else if (c.cp == '\r') {
      out += "\\r";
    } else if (c.cp < 0x20 || (c.cp >= 0x7F && c.cp <= 0x9F) || c.cp == 0x2028 || c.cp == 0x2029) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c.cp));
      out += esc;
    } else {
      out += EncodeUtf8(c.cp);
    }
  }
  return out;
}

std::string VisibleToken(std::string_view token) {
  if (token.empty()) return "\"\"";
  std::string out;
  for (size_t i = 0; i < token.size();) {
    const Utf8Char c = DecodeUtf8At(token, i);
    if (c.cp == '\n')
      out += "\u2424";
    else if (c.cp == '\t')
      out += "\u2409";
    else if (c.cp == '\r')
      out += "\u240D";
    else if (IsPythonSpace(c.cp))
      out += "\u2423";
    else if (c.cp < 0x20 || c.cp == 0x7F || (c.cp >= 0x80 && c.cp < 0xA0))
      out += "\uFFFD";  // other controls: never sent raw to a terminal or a font
    else
      out.append(token.substr(i, c.len));
    i += c.len;
  }
  return out;
}

std::string FormatNumber(double v, NumberStyle style, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  switch (style) {
    case NumberStyle::kFixed:
      if (std::fabs(v) >= 1e6) return FormatNumber(v, NumberStyle::kGeneral, digits);
      std::snprintf(buf, sizeof buf, "%.*f", digits, v);
      return buf;
    case NumberStyle::kGeneral:
      std::snprintf(buf, sizeof buf, "%.*g", digits, v == 0 ? 0.0 : v);
      return buf;
    case NumberStyle::kShortest:
      return ShortestFloat(static_cast<float>(v));
    case NumberStyle::kTick:
      if (v == std::round(v) && std::fabs(v) < 1e5) {
        std::snprintf(buf, sizeof buf, "%.0f", v == 0 ? 0.0 : v);
        return buf;
      }
      if (std::fabs(v) < 1e-12) return "0";
      std::snprintf(buf, sizeof buf, std::fabs(v) >= 1e4 || std::fabs(v) < 1e-3 ? "%.2g" : "%.3g",
                    v);
      return buf;
    case NumberStyle::kFixedAll:  // glibc and Python both round the exact binary value
      std::snprintf(buf, sizeof buf, "%.*f", digits, v);
      return buf;
    case NumberStyle::kExponent:
      std::snprintf(buf, sizeof buf, "%.*e", digits, v);
      return buf;
  }
  return "";
}

namespace {

// The shortest text of v that std::from_chars reads back as v; "nan", "inf", "-inf" otherwise.
template <typename Real>
std::string Shortest(Real v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

}  // namespace

std::string ShortestFloat(float v) { return Shortest(v); }

std::string ShortestDouble(double v) { return Shortest(v); }

}  // namespace attnlab
