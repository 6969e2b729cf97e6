// figure_meta.cpp: see figure_meta.h; also the PNG text chunks (export.h) and base64
// (figure_draw.h).
#include "attnlab/figure_meta.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attnlab/colormap.h"
#include "attnlab/export.h"
#include "attnlab/stage_view.h"
#include "figure_draw.h"

namespace attnlab {
namespace {

// CRC-32 as PNG defines it (ISO 3309 polynomial, reflected, initial and final all ones).
uint32_t Crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

// A PNG chunk: length, type, data, CRC-32 of type and data.
std::string Chunk(std::string_view type, const std::string& data) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type) + data;
  out += body;
  PutU32(out, Crc32(body));
  return out;
}

uint32_t GetU32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(b[at + i]);
  return v;
}

constexpr std::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);
constexpr std::string_view kSvgKey = "attnlab:figure";

std::string XmlUnescape(std::string_view s) {
  static const std::array<std::pair<std::string_view, char>, 5> entities{
      {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}}};
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    bool done = false;
    if (s[i] == '&')
      for (const auto& [name, c] : entities)
        if (s.substr(i, name.size()) == name) {
          out += c, i += name.size() - 1, done = true;
          break;
        }
    if (!done) out += s[i];
  }
  return out;
}

// The metadata text of an SVG figure, or nullopt.
std::optional<std::string> SvgText(std::string_view svg) {
  const size_t open = svg.find("<" + std::string(kSvgKey));
  if (open == std::string_view::npos) return std::nullopt;
  const size_t start = svg.find('>', open);
  const size_t end = svg.find("</" + std::string(kSvgKey) + ">", open);
  if (start == std::string_view::npos || end == std::string_view::npos || end < start)
    return std::nullopt;
  return XmlUnescape(svg.substr(start + 1, end - start - 1));
}

// The metadata text of a PDF figure: the base64 after kPdfMetadataPrefix in a literal string
// (the Keywords of the document information), up to its closing parenthesis.
std::optional<std::string> PdfText(std::string_view pdf) {
  const std::string key = "(" + std::string(figure::kPdfMetadataPrefix);
  const size_t at = pdf.rfind(key);
  if (at == std::string_view::npos) return std::nullopt;
  const size_t close = pdf.find(')', at);
  if (close == std::string_view::npos) return std::nullopt;
  return figure::Base64Decode(pdf.substr(at + key.size(), close - at - key.size()));
}

[[noreturn]] void Refuse(const std::string& message) { throw ScenarioError("", message); }

}  // namespace

std::string EmbedPngText(const std::string& png, const std::string& keyword,
                         const std::string& text) {
  if (text.empty()) return png;
  if (keyword.empty() || keyword.size() > 79 || keyword.find('\0') != std::string::npos)
    throw std::invalid_argument("PNG text keyword must be 1..79 bytes");
  const std::string_view iend("\0\0\0\0IEND\xae\x42\x60\x82", 12);
  if (png.size() < 20 || std::string_view(png).substr(png.size() - 12) != iend)
    throw std::invalid_argument("PNG: no IEND chunk at the end");
  std::string data = keyword;
  data += std::string("\0\0\0\0\0", 5);  // keyword end, no compression, method, no language
  data += text;                          // (and no translated keyword)
  return png.substr(0, png.size() - 12) + Chunk("iTXt", data) + std::string(iend);
}

std::string SetPngDpi(const std::string& png, double dpi) {
  const std::string_view b(png);
  if (b.substr(0, 8) != kPngSignature || b.size() < 33 || b.substr(12, 4) != "IHDR")
    throw std::invalid_argument("PNG: no IHDR chunk at the start");
  if (!(dpi > 0 && dpi < 1e6)) throw std::invalid_argument("PNG: dpi must be in (0, 1e6)");
  const uint32_t per_metre = static_cast<uint32_t>(std::lround(dpi / 0.0254));
  std::string data;
  PutU32(data, per_metre);
  PutU32(data, per_metre);
  data += '\x01';  // unit: the metre
  return png.substr(0, 33) + Chunk("pHYs", data) + png.substr(33);
}

std::optional<std::string> PngText(const std::string& png, const std::string& keyword) {
  const std::string_view b(png);
  if (b.substr(0, 8) != kPngSignature) return std::nullopt;
  for (size_t at = 8; at + 12 <= b.size();) {
    const size_t len = GetU32(b, at);
    if (len > b.size() - at - 12) return std::nullopt;  // truncated
    const std::string_view type = b.substr(at + 4, 4), data = b.substr(at + 8, len);
    if (type == "IEND") return std::nullopt;
    if (type == "iTXt" && data.size() > keyword.size() + 2 &&
        data.substr(0, keyword.size() + 1) == std::string_view(keyword.c_str(), keyword.size() + 1)) {
      std::string_view rest = data.substr(keyword.size() + 1);
      if (rest[0] != 0) return std::nullopt;  // compressed: never written by Attention Lab
      rest.remove_prefix(2);
      for (int field = 0; field < 2; ++field) {  // language tag, translated keyword
        const size_t z = rest.find('\0');
        if (z == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(z + 1);
      }
      return std::string(rest);
    }
    at += len + 12;
  }
  return std::nullopt;
}

namespace figure {

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

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pads = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int d = k >= 4u - pads ? 0 : digit(text[i + k]);
      if (d < 0) return std::nullopt;
      v = v << 6 | static_cast<uint32_t>(d);
    }
    out += static_cast<char>(v >> 16 & 0xFF);
    if (pads < 2) out += static_cast<char>(v >> 8 & 0xFF);
    if (pads < 1) out += static_cast<char>(v & 0xFF);
  }
  return out;
}

}  // namespace figure

std::string FigureMetadata(const Scenario& scenario, const std::vector<Stage>& stages,
                           int64_t head, int64_t batch, const FigureOptions& options) {
  nlohmann::json stage_names = nlohmann::json::array();
  for (Stage s : stages) stage_names.push_back(StageName(s));
  const nlohmann::json j = {
      {"format", "attention-lab-figure"},
      {"version", 1},
      {"stages", stage_names},
      {"head", head},
      {"batch", batch},
      {"colormap", options.colormap},
      {"sequential_colormap", options.sequential_colormap},
      {"diverging_colormap", options.diverging_colormap},
      {"range", RangeModeName(options.range)},
      {"values", Name(options.values)},
      {"scale", options.scale},
      {"width_inches", options.width_inches},
      {"dpi", options.dpi},
      {"scenario", WriteScenario(scenario)}};
  return j.dump(1);
}

bool LooksLikeFigure(std::string_view bytes) {
  return bytes.substr(0, 8) == kPngSignature || bytes.substr(0, 5) == "%PDF-" ||
         bytes.substr(0, 5) == "<?xml" || bytes.substr(0, 4) == "<svg";
}

namespace {

// The view options of a figure's metadata JSON. Errors: nlohmann's or std::invalid_argument.
void ReadViewOptions(const nlohmann::json& j, FigureSource& f) {
  for (const auto& name : j.at("stages")) {
    const std::optional<Stage> s = ParseStage(name.get<std::string>());
    if (!s) throw std::invalid_argument("unknown stage " + name.dump());
    f.stages.push_back(*s);
  }
  f.head = j.at("head").get<int64_t>();
  f.batch = j.at("batch").get<int64_t>();
  f.options.colormap = j.at("colormap").get<std::string>();
  f.options.sequential_colormap = j.at("sequential_colormap").get<std::string>();
  f.options.diverging_colormap = j.at("diverging_colormap").get<std::string>();
  const std::optional<RangeMode> range = ParseRangeMode(j.at("range").get<std::string>());
  if (!range) throw std::invalid_argument("unknown range " + j.at("range").dump());
  f.options.range = *range;
  f.options.values =
      ParseName<ValuesMode>(j.at("values").get<std::string>()).value_or(ValuesMode::kAuto);
  f.options.scale = std::clamp(j.at("scale").get<int>(), 1, 8);
  f.options.width_inches = std::clamp(j.value("width_inches", 0.0), 0.0, 1000.0);
  f.options.dpi = std::clamp(j.value("dpi", 0.0), 0.0, 100000.0);
  for (const std::string* name : {&f.options.colormap, &f.options.sequential_colormap,
                                  &f.options.diverging_colormap})
    if (!name->empty()) FindColormap(*name);  // throws for an unknown one
}

}  // namespace

FigureSource ReadFigureScenario(const std::string& bytes) {
  const std::string_view b(bytes);
  std::optional<std::string> text;
  std::string kind;
  if (b.substr(0, 8) == kPngSignature)
    kind = "PNG", text = PngText(bytes, kFigureMetadataKey);
  else if (b.substr(0, 5) == "%PDF-")
    kind = "PDF", text = PdfText(b);
  else if (LooksLikeFigure(b))
    kind = "SVG", text = SvgText(b);
  else
    Refuse("not a PNG, SVG or PDF figure");
  if (!text)
    Refuse("this " + kind +
           " carries no Attention Lab scenario (only figures exported by Attention Lab do)");
  FigureSource f;
  try {
    CheckJsonLimits(*text);  // deep nesting would overflow the stack of the copies below
    const nlohmann::json j = nlohmann::json::parse(*text);
    if (j.at("format") != "attention-lab-figure" || j.at("version") != 1)
      throw std::invalid_argument("not format attention-lab-figure version 1");
    ReadViewOptions(j, f);
    f.scenario_text = j.at("scenario").get<std::string>();
  } catch (const std::exception& e) {
    Refuse("the " + kind + "'s embedded scenario is damaged (" + e.what() + ")");
  }
  try {
    f.scenario = ParseScenario(f.scenario_text);
  } catch (const ScenarioError& e) {
    throw ScenarioError("", std::string("the embedded scenario: ") + e.what());
  }
  return f;
}

Scenario ScenarioFromFileBytes(const std::string& bytes) {
  return LooksLikeFigure(bytes) ? ReadFigureScenario(bytes).scenario : ParseScenario(bytes);
}

}  // namespace attnlab
