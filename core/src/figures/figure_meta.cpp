// figure_meta.cpp: see figure_meta.h; also base64 (figure_draw.h).
#include "attnlab/figures/figure_meta.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attnlab/figures/colormap.h"
#include "attnlab/figures/png.h"
#include "attnlab/figures/stage_view.h"
#include "figure_draw.h"

namespace attnlab {
namespace {

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

namespace figure {

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

std::string FigureMetadata(const Scenario& scenario, const std::vector<Stage>& stages, int64_t head,
                           int64_t batch, const FigureOptions& options) {
  nlohmann::json stage_names = nlohmann::json::array();
  for (Stage s : stages) stage_names.push_back(StageName(s));
  const nlohmann::json j = {{"format", "attention-lab-figure"},
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
  return IsPng(bytes) || bytes.substr(0, 5) == "%PDF-" || bytes.substr(0, 5) == "<?xml" ||
         bytes.substr(0, 4) == "<svg";
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
  for (const std::string* name :
       {&f.options.colormap, &f.options.sequential_colormap, &f.options.diverging_colormap})
    if (!name->empty()) FindColormap(*name);  // throws for an unknown one
}

}  // namespace

FigureSource ReadFigureScenario(const std::string& bytes) {
  const std::string_view b(bytes);
  std::optional<std::string> text;
  std::string kind;
  if (IsPng(b))
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
