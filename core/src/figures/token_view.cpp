// token_view.cpp: see token_view.h.
//
// [SECTION] The geometry (pure: no text measured, no drawing)
// [SECTION] The figure (text measured by pango, drawn by the figure painters)
#include "attnlab/figures/token_view.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/figures/heatmap_spec.h"
#include "figure_draw.h"

namespace attnlab {

Rgb TokenHeadColor(int64_t h) {
  // Ten hues far apart on a white page (blue, orange, green, red, purple, brown, pink, grey,
  // olive, cyan), dark enough for a thin line at low opacity to stay visible.
  static const Rgb kHues[10] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127},
                                {188, 189, 34},  {23, 190, 207}};
  return kHues[static_cast<size_t>(((h % 10) + 10) % 10)];
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The geometry (pure: no text measured, no drawing)

namespace {

/// The heads shown: options.head, or 0..H-1. Errors: std::invalid_argument naming the head.
std::vector<int64_t> ShownHeads(const Shape& sh, int64_t head) {
  if (head >= sh.H || head < -1)
    throw std::invalid_argument(
        "head " + std::to_string(head) + " is out of range: the scenario has " +
        std::to_string(sh.H) +
        (sh.H == 1 ? " head (0)" : " heads (0.." + std::to_string(sh.H - 1) + ")"));
  std::vector<int64_t> heads;
  for (int64_t h = 0; h < sh.H; ++h)
    if (head < 0 || h == head) heads.push_back(h);
  return heads;
}

/// "heads 0, 1 share key head 0; heads 2, 3 share key head 1" for grouped K/V heads, else "".
std::string Groups(const Shape& sh) {
  if (sh.Kv() >= sh.H) return "";
  std::string out;
  for (int64_t g = 0; g < sh.Kv(); ++g) {
    std::string heads;
    for (int64_t h = 0; h < sh.H; ++h)
      if (sh.KvHead(h) == g) heads += (heads.empty() ? "" : ", ") + std::to_string(h);
    out += (out.empty() ? "" : "; ") +
           std::string(heads.find(',') == std::string::npos ? "head " : "heads ") + heads +
           " share key head " + std::to_string(g);
  }
  return out;
}

}  // namespace

TokenViewGeometry TokenViewLayout(const Stages& st, const Scenario& scenario,
                                  const TokenViewOptions& o) {
  (void)scenario;  // the run carries everything drawn; kept for the figure's callers' symmetry
  const Shape& sh = st.shape;
  const int64_t T = sh.T;
  if (st.weights.empty()) throw std::invalid_argument("the run has no attention weights");
  if (o.batch < 0 || o.batch >= sh.B)
    throw std::invalid_argument("batch " + std::to_string(o.batch) +
                                " is out of range: the scenario has a batch of " +
                                std::to_string(sh.B) + " (0.." + std::to_string(sh.B - 1) + ")");
  const std::vector<int64_t> heads = ShownHeads(sh, o.head);
  const bool sink = !st.sink.empty();
  const float first_row = o.top + o.margin + (sink ? o.row_height : 0);
  const float key_x = o.margin + o.label_width + o.gap;
  const std::vector<std::string> labels = TokenLabels(st.tokens);

  TokenViewGeometry g;
  g.width = key_x + o.label_width + o.margin;
  g.height = first_row + static_cast<float>(T) * o.row_height + o.margin;
  g.groups = Groups(sh);
  for (int64_t i = 0; i < T; ++i) {
    const float y = first_row + static_cast<float>(i) * o.row_height;
    const std::string text = i < static_cast<int64_t>(labels.size()) ? labels[i] : "";
    g.queries.push_back({text, i, o.margin, y, o.label_width, o.row_height,
                         o.margin + o.label_width, y + o.row_height / 2});
    g.keys.push_back({text, i, key_x, y, o.label_width, o.row_height, key_x, y + o.row_height / 2});
  }
  if (sink) {
    const float y = o.top + o.margin;
    g.keys.push_back(
        {"sink", T, key_x, y, o.label_width, o.row_height, key_x, y + o.row_height / 2});
  }

  using Side = TokenSelection::Side;
  const TokenSelection& sel = o.selection;
  const bool query_sel = sel.side == Side::kQuery && sel.index >= 0 && sel.index < T;
  const bool key_sel = sel.side == Side::kKey && sel.index >= 0 && sel.index < T + (sink ? 1 : 0);
  const float per_head = 1.0f / static_cast<float>(heads.size());
  if (query_sel) g.queries[static_cast<size_t>(sel.index)].selected = true;
  if (key_sel) g.keys[static_cast<size_t>(sel.index)].selected = true;

  for (int64_t h : heads) {
    g.legend.push_back(
        {h, sh.KvHead(h), TokenHeadColor(h),
         "head " + std::to_string(h) +
             (g.groups.empty() ? "" : " (key head " + std::to_string(sh.KvHead(h)) + ")")});
    const Matrix& w = st.Head(st.weights, o.batch, h);
    const Matrix* s = sink ? &st.Head(st.sink, o.batch, h) : nullptr;
    for (int64_t i = 0; i < T; ++i) {
      const TokenPlace& q = g.queries[static_cast<size_t>(i)];
      for (int64_t j = 0; j <= T; ++j) {
        if (j == T && !s) break;
        if (j < T && st.mask(i, j) == 0) continue;  // masked: no line
        const float weight = j < T ? w(i, j) : (*s)(i, 0);
        const TokenPlace& k = g.keys[static_cast<size_t>(j)];
        TokenLine line{i,          j,          h,          sh.KvHead(h), q.anchor_x,
                       q.anchor_y, k.anchor_x, k.anchor_y, weight,       TokenHeadColor(h)};
        if (query_sel || key_sel) line.dimmed = query_sel ? i != sel.index : j != sel.index;
        if (query_sel && i == sel.index) g.keys[static_cast<size_t>(j)].share += weight * per_head;
        if (key_sel && j == sel.index) g.queries[static_cast<size_t>(i)].share += weight * per_head;
        g.lines.push_back(line);
      }
    }
  }
  return g;
}

std::string TokenViewTitle(const Stages& st, const TokenViewOptions& o) {
  const int64_t H = st.shape.H;
  std::string t = "attention between tokens";
  if (H > 1)
    t += o.head < 0 ? " \u00B7 " + std::to_string(H) + " heads"
                    : " \u00B7 head " + std::to_string(o.head) + " of " + std::to_string(H);
  if (st.shape.B > 1) t += " \u00B7 batch " + std::to_string(o.batch);
  return t;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The figure (text measured by pango, drawn by the figure painters)

namespace {

constexpr Rgb kInk{30, 30, 30};
constexpr Rgb kMuted{90, 90, 90};

/// White mixed towards `c` by t (0..1): the selection's share behind a token.
Rgb Tint(Rgb c, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  auto mix = [t](uint8_t v) { return static_cast<uint8_t>(255 + (v - 255) * t + 0.5f); };
  return {mix(c.r), mix(c.g), mix(c.b)};
}

struct TokenFigure {
  TokenViewGeometry g;
  figure::Label title, subtitle, groups;
  std::vector<figure::Label> query_text, key_text, legend_text;
  float legend_y = 0, swatch = 0;
  int s = 1, width = 0, height = 0;
};

TokenFigure LayOutTokenFigure(const Stages& st, const Scenario& scenario, TokenViewOptions o,
                              const FigureOptions& options, const std::string& subtitle) {
  if (options.scale < 1 || options.scale > 8)
    throw std::invalid_argument("scale " + std::to_string(options.scale) + " is outside 1..8");
  TokenFigure f;
  f.s = options.scale;
  const float s = static_cast<float>(f.s);
  const float px = 13 * s;
  float label_w = 0;
  for (const std::string& t : TokenLabels(st.tokens))
    label_w = std::max(label_w, static_cast<float>(figure::MakeLabel(t, px).width()));
  label_w = std::max(label_w, static_cast<float>(figure::MakeLabel("sink", px).width()));
  f.title = figure::MakeLabel(TokenViewTitle(st, o), 17 * s);
  f.subtitle = figure::MakeLabel(subtitle, 13 * s);
  const float pad = 16 * s;
  o.label_width = label_w + 8 * s;
  o.row_height = std::max(22 * s, static_cast<float>(figure::MakeLabel("Ag", px).height() + 6 * s));
  o.gap = 240 * s;
  o.margin = pad;
  o.top = static_cast<float>(f.title.height() + f.subtitle.height()) + 8 * s;
  f.g = TokenViewLayout(st, scenario, o);
  for (const TokenPlace& q : f.g.queries) f.query_text.push_back(figure::MakeLabel(q.text, px));
  for (const TokenPlace& k : f.g.keys) f.key_text.push_back(figure::MakeLabel(k.text, px));
  f.legend_y = f.g.height;
  f.swatch = 12 * s;
  float legend_w = 0;
  for (const TokenLegend& l : f.g.legend) {
    f.legend_text.push_back(figure::MakeLabel(l.text, 12 * s));
    legend_w += f.swatch + 6 * s + static_cast<float>(f.legend_text.back().width()) + 14 * s;
  }
  f.groups = figure::MakeLabel(f.g.groups, 12 * s);
  const float legend_h = static_cast<float>(f.legend_text.empty() ? 0 : f.legend_text[0].height()) +
                         (f.g.groups.empty() ? 0 : static_cast<float>(f.groups.height()) + 4 * s) +
                         pad;
  f.width = static_cast<int>(
      std::max({f.g.width, legend_w + 2 * pad, static_cast<float>(f.title.width()) + 2 * pad,
                static_cast<float>(f.subtitle.width()) + 2 * pad,
                static_cast<float>(f.groups.width()) + 2 * pad}) +
      0.5f);
  f.height = static_cast<int>(f.legend_y + legend_h + 0.5f);
  return f;
}

void DrawTokenFigure(figure::Painter& p, const TokenFigure& f) {
  const int s = f.s;
  const int pad = 16 * s;
  p.Text(f.title, pad, pad, kInk);
  p.Text(f.subtitle, pad, pad + f.title.height() + 2 * s, kMuted);
  const TokenViewGeometry& g = f.g;
  // The selection's shares behind the tokens, then the lines, then the text over both.
  const Rgb tint = g.legend.size() == 1 ? g.legend[0].color : Rgb{31, 119, 180};
  auto shade = [&](const TokenPlace& t) {
    if (t.share > 0 || t.selected)
      p.Fill(static_cast<int>(t.x), static_cast<int>(t.y) + 1, static_cast<int>(t.w),
             static_cast<int>(t.h) - 2, t.selected ? Rgb{255, 230, 150} : Tint(tint, t.share));
  };
  for (const TokenPlace& t : g.queries) shade(t);
  for (const TokenPlace& t : g.keys) shade(t);
  for (const TokenLine& l : g.lines)
    p.Line(l.x0 + 2 * s, l.y0, l.x1 - 2 * s, l.y1, 1.5f * s, l.color,
           l.dimmed ? l.opacity * 0.15f : l.opacity);
  for (size_t i = 0; i < g.queries.size(); ++i) {
    const TokenPlace& t = g.queries[i];
    const figure::Label& lab = f.query_text[i];
    p.Text(lab, static_cast<int>(t.anchor_x) - 4 * s - lab.width(),
           static_cast<int>(t.anchor_y) - lab.height() / 2, kInk);
  }
  for (size_t i = 0; i < g.keys.size(); ++i) {
    const TokenPlace& t = g.keys[i];
    const figure::Label& lab = f.key_text[i];
    p.Text(lab, static_cast<int>(t.anchor_x) + 4 * s,
           static_cast<int>(t.anchor_y) - lab.height() / 2,
           t.position == static_cast<int64_t>(g.queries.size()) ? kMuted : kInk);
  }
  int x = pad;
  const int y = static_cast<int>(f.legend_y);
  for (size_t i = 0; i < g.legend.size(); ++i) {
    const figure::Label& lab = f.legend_text[i];
    const int sw = static_cast<int>(f.swatch);
    p.Fill(x, y + (lab.height() - sw) / 2, sw, sw, g.legend[i].color);
    x += sw + 6 * s;
    p.Text(lab, x, y, kInk);
    x += lab.width() + 14 * s;
  }
  if (!g.groups.empty())
    p.Text(f.groups, pad, y + (f.legend_text.empty() ? 0 : f.legend_text[0].height()) + 4 * s,
           kMuted);
}

}  // namespace

std::string TokenFigureFile(const Stages& st, const Scenario& scenario,
                            const TokenViewOptions& view, const FigureOptions& options,
                            FigureFormat format, const std::string& metadata) {
  std::string subtitle = "line opacity = attention weight";
  if (scenario.mask.kind != MaskKind::kNone) subtitle += "; masked pairs have no line";
  if (!st.sink.empty()) subtitle += "; \u201Csink\u201D: the sink's share";
  // A picture of more lines than this is no longer read line by line (and grows large): the
  // weights' heatmap is the figure for it.
  constexpr int64_t kMaxLines = int64_t{1} << 18;
  const int64_t heads = view.head < 0 ? st.shape.H : 1;
  if (st.shape.T > 1024 || heads * st.shape.T * st.shape.T > kMaxLines)
    throw std::invalid_argument(
        "the token view draws at most 1024 tokens and 262144 lines (here T = " +
        std::to_string(st.shape.T) + ", " + std::to_string(heads) +
        (heads == 1 ? " head" : " heads") + "); export --stage weights instead");
  const TokenFigure f = LayOutTokenFigure(st, scenario, view, options, subtitle);
  const double inches = PrintWidthInches(f.width, options);
  const auto draw = [&f](figure::Painter& p) { DrawTokenFigure(p, f); };
  switch (format) {
    case FigureFormat::kPng: {
      std::string png = EncodePng(figure::RasterDraw(f.width, f.height, draw));
      if (options.dpi > 0 || options.width_inches > 0) png = SetPngDpi(png, f.width / inches);
      return EmbedPngText(png, kFigureMetadataKey, metadata);
    }
    case FigureFormat::kSvg:
      return figure::SvgDocument(f.width, f.height, metadata, inches, draw);
    case FigureFormat::kPdf:
      return figure::PdfDocument(f.width, f.height, f.title.text, metadata, inches, draw);
  }
  throw std::invalid_argument("unknown figure format");
}

}  // namespace attnlab
