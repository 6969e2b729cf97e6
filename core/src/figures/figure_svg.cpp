// figure_svg.cpp: the SVG backend of the figure drawing (figure_draw.h). Written as XML here
// rather than through cairo's SVG surface, which draws every glyph as an outline: here the
// tokens, titles and values are <text> elements (selectable, searchable, editable in a vector
// editor) in the figure's font, placed on the raster layout's baselines.
#include <cstdio>

#include "attnlab/figures/png.h"
#include "figure_draw.h"

namespace attnlab::figure {
namespace {

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:  // XML 1.0 has no other control characters than tab and newlines
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  return out;
}

std::string Hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

class SvgPainter : public Painter {
 public:
  explicit SvgPainter(std::string& out) : out_(out), family_(XmlEscape(raster::FontFamily())) {}

  void Fill(int x, int y, int w, int h, Rgb c) override { Rect(x, y, w, h, Hex(c)); }
  void Hatch(int x, int y, int w, int h) override { Rect(x, y, w, h, "url(#masked)"); }
  void Picture(int x, int y, const Image& image) override {
    out_ += "<image x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
            std::to_string(image.width) + "\" height=\"" + std::to_string(image.height) +
            "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" "
            "xlink:href=\"data:image/png;base64," +
            Base64Encode(EncodePng(image)) + "\"/>\n";
  }
  void Text(const Label& t, int x, int y, Rgb c, bool vertical) override {
    if (t.text.empty()) return;
    char size[32];
    std::snprintf(size, sizeof size, "%.3f", raster::EmPixels(t.px));
    const std::string base = std::to_string(t.baseline);
    out_ += "<text font-size=\"" + std::string(size) + "\" fill=\"" + Hex(c) + "\" ";
    if (vertical)
      out_ += "transform=\"translate(" + std::to_string(x) + " " + std::to_string(y + t.width()) +
              ") rotate(-90)\" x=\"1\" y=\"" + base + "\"";
    else
      out_ += "x=\"" + std::to_string(x + 1) + "\" y=\"" + std::to_string(y + t.baseline) + "\"";
    out_ += ">" + XmlEscape(t.text) + "</text>\n";
  }
  void Line(float x0, float y0, float x1, float y1, float width, Rgb c, float alpha) override {
    char buf[256];  // %.9g: the float opacity exactly (a test reads the weights back)
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                  "stroke-width=\"%.2f\" stroke-opacity=\"%.9g\" "
                  "shape-rendering=\"geometricPrecision\"/>\n",
                  x0, y0, x1, y1, Hex(c).c_str(), width, static_cast<double>(alpha));
    out_ += buf;
  }
  const std::string& family() const { return family_; }

 private:
  void Rect(int x, int y, int w, int h, const std::string& fill) {
    out_ += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
            std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" fill=\"" + fill + "\"/>\n";
  }
  std::string& out_;
  std::string family_;
};

// The masked cells' stripes as a pattern in figure pixels: (x + y) mod 8 < 3 is the stripe.
std::string MaskedPattern() {
  const std::string stripe = Hex(MaskedColorAt(0, 0)),
                    light = Hex(MaskedColorAt(kMaskedPeriod / 2, 0));
  const std::string p = std::to_string(kMaskedPeriod), w = std::to_string(kMaskedStripeWidth);
  const std::string q = std::to_string(kMaskedPeriod - kMaskedStripeWidth);
  return "<pattern id=\"masked\" patternUnits=\"userSpaceOnUse\" width=\"" + p + "\" height=\"" +
         p + "\"><rect width=\"" + p + "\" height=\"" + p + "\" fill=\"" + light +
         "\"/><path d=\"M0 0H" + w + "L0 " + w + "Z M" + p + " 0V" + w + "L" + w + " " + p + "H0L" +
         p + " 0Z\" fill=\"" + stripe + "\"/></pattern>\n";
}

}  // namespace

std::string SvgDocument(int width, int height, const std::string& metadata, double inches,
                        const std::function<void(Painter&)>& draw) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  char size[96];  // the printed size; the drawing stays in figure pixels (viewBox)
  std::snprintf(size, sizeof size, "width=\"%.4fin\" height=\"%.4fin\"", inches,
                inches * height / width);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out +=
      "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
      "version=\"1.1\" " +
      std::string(size) + " viewBox=\"0 0 " + w + " " + h + "\">\n";
  if (!metadata.empty())
    out += "<metadata><attnlab:figure xmlns:attnlab=\"https://attention-lab.invalid/figure\">" +
           XmlEscape(metadata) + "</attnlab:figure></metadata>\n";
  out += "<defs>" + MaskedPattern() + "</defs>\n";
  SvgPainter painter(out);
  out += "<g font-family=\"" + painter.family() +
         ", sans-serif\" shape-rendering=\"crispEdges\" xml:space=\"preserve\">\n";
  out += "<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
  draw(painter);
  out += "</g>\n</svg>\n";
  return out;
}

std::string SvgFigure(const Composition& c, const std::string& metadata, double inches) {
  return SvgDocument(c.width, c.height, metadata, inches, [&c](Painter& p) { Draw(p, c); });
}

}  // namespace attnlab::figure
