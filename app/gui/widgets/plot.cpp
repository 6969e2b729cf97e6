// plot.cpp: see plot.h.
//
// [SECTION] Axes: mapping, ticks, numbers, upward text
// [SECTION] BeginPlot: frame, grid, tick labels, axis labels
// [SECTION] Series: lines, points, reference lines, bars, histograms, legends
#include "gui/widgets/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnlab/base/text.h"
#include "attnlab/figures/heatmap_spec.h"

namespace attnlab::gui {

bool RoomForPlot(float height) { return height >= ImGui::GetFontSize() * 6.5f; }

void NoRoomForPlot() { ImGui::TextDisabled("No room for the plots here: \xE2\x96\xB4 larger"); }

namespace {

double Forward(double v, bool log) { return log ? std::log10(std::max(v, 1e-300)) : v; }

ImU32 TextColor() { return ImGui::GetColorU32(ImGuiCol_Text); }
ImU32 DimColor() { return ImGui::GetColorU32(ImGuiCol_TextDisabled); }
ImU32 GridColor() { return IM_COL32(255, 255, 255, 28); }

/// Ticks of a log axis: the powers of 10 inside (or of 2 when there are too few).
std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> ticks;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= std::ceil(std::log10(hi)); ++e) {
    const double v = std::pow(10.0, e);
    if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push_back(v);
  }
  if (ticks.size() < 3) {
    ticks.clear();
    for (int e = static_cast<int>(std::floor(std::log2(lo))); e <= std::ceil(std::log2(hi)); ++e) {
      const double v = std::pow(2.0, e);
      if (v >= lo * 0.999 && v <= hi * 1.001) ticks.push_back(v);
    }
    while (ticks.size() > 6) {  // every other one
      std::vector<double> half;
      for (size_t i = 0; i < ticks.size(); i += 2) half.push_back(ticks[i]);
      ticks = half;
    }
  }
  return ticks;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Axes: mapping, ticks, numbers, upward text

ImVec2 PlotAxes::ToScreen(double x, double y) const {
  const double fx =
      (Forward(x, log_x) - Forward(x0, log_x)) / (Forward(x1, log_x) - Forward(x0, log_x));
  const double fy =
      (Forward(y, log_y) - Forward(y0, log_y)) / (Forward(y1, log_y) - Forward(y0, log_y));
  return ImVec2(static_cast<float>(min.x + fx * (max.x - min.x)),
                static_cast<float>(max.y - fy * (max.y - min.y)));
}

double PlotAxes::XAt(float sx) const {
  const double f = (sx - min.x) / std::max(1.0f, max.x - min.x);
  const double a = Forward(x0, log_x), b = Forward(x1, log_x);
  const double v = a + f * (b - a);
  return log_x ? std::pow(10.0, v) : v;
}

void AddUpwardText(ImDrawList* dl, ImFont* font, float size, ImVec2 start, ImU32 color,
                   const char* text) {
  if (!font) {
    font = ImGui::GetFont();
    size = ImGui::GetFontSize();
  }
  // Made at (0, 0) under a full-screen clip rect (ImGui drops glyphs outside the clip rect
  // before we get to rotate them), then turned about the origin and moved to `start`.
  // The turned glyphs are then clipped as everything else is: the command they went into gets
  // the clip rect of the caller (else a label of a map scrolled out of its canvas would show
  // over the panels around it).
  const ImVec4 clip = dl->_CmdHeader.ClipRect;
  dl->PushClipRectFullScreen();
  const int first = dl->VtxBuffer.Size;
  dl->AddText(font, size, ImVec2(0, 0), color, text);
  for (int k = first; k < dl->VtxBuffer.Size; ++k) {
    ImDrawVert& v = dl->VtxBuffer[k];
    v.pos = ImVec2(start.x + v.pos.y - size * 0.5f, start.y - v.pos.x);
  }
  dl->CmdBuffer.back().ClipRect = clip;
  dl->PopClipRect();
}

std::string ShortNumber(double v) { return FormatNumber(v, NumberStyle::kTick); }

// ---------------------------------------------------------------------------------------------
// [SECTION] BeginPlot: frame, grid, tick labels, axis labels

PlotAxes BeginPlot(const PlotSpec& spec) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImVec2 size = spec.size;
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  if (size.y <= 0) size.y = ImGui::GetContentRegionAvail().y;
  const float line = ImGui::GetTextLineHeight();

  PlotAxes axes;
  axes.x0 = spec.x0;
  axes.x1 = spec.x1;
  axes.y0 = spec.y0;
  axes.y1 = spec.y1;
  axes.log_x = spec.log_x;
  axes.log_y = spec.log_y;

  std::vector<double> yticks =
      spec.log_y ? LogTicks(spec.y0, spec.y1) : NiceTicks(spec.y0, spec.y1, 4);
  float ytick_w = 0;
  for (double t : yticks)
    ytick_w = std::max(ytick_w, ImGui::CalcTextSize(ShortNumber(t).c_str()).x);
  const float left = line + 4 + ytick_w + 6;  // rotated y label, tick labels
  const float bottom = line * 2 + 4;          // tick labels, x label
  axes.legend_above = spec.legend_above;
  axes.min = ImVec2(origin.x + left, origin.y + (spec.legend_above ? line + 4 : line * 0.5f));
  axes.max = ImVec2(origin.x + size.x - 8, origin.y + size.y - bottom);

  ImGui::InvisibleButton(spec.id, size);
  axes.hovered = ImGui::IsItemHovered() && ImGui::IsMouseHoveringRect(axes.min, axes.max);

  dl->AddRectFilled(axes.min, axes.max, IM_COL32(0, 0, 0, 60));
  dl->AddRect(axes.min, axes.max, ImGui::GetColorU32(ImGuiCol_Border));
  // y ticks and grid
  for (double t : yticks) {
    const float y = axes.ToScreen(spec.x0, t).y;
    if (y < axes.min.y - 1 || y > axes.max.y + 1) continue;
    dl->AddLine(ImVec2(axes.min.x, y), ImVec2(axes.max.x, y), GridColor());
    const std::string s = ShortNumber(t);
    const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
    dl->AddText(ImVec2(axes.min.x - 4 - ts.x, y - ts.y * 0.5f), DimColor(), s.c_str());
  }
  // x ticks and grid
  if (!spec.x_tick_labels.empty()) {
    const int n = static_cast<int>(spec.x_tick_labels.size());
    float max_w = 0;
    for (const std::string& s : spec.x_tick_labels)
      max_w = std::max(max_w, ImGui::CalcTextSize(s.c_str()).x);
    const float slot = (axes.max.x - axes.min.x) / std::max(n, 1);
    const int every = std::max(1, static_cast<int>(std::ceil((max_w + 6) / std::max(slot, 1.0f))));
    for (int i = 0; i < n; i += every) {
      const float x = axes.ToScreen(i, 0).x;
      const ImVec2 ts = ImGui::CalcTextSize(spec.x_tick_labels[i].c_str());
      dl->AddText(ImVec2(x - ts.x * 0.5f, axes.max.y + 2), DimColor(),
                  spec.x_tick_labels[i].c_str());
    }
  } else {
    const int room = std::clamp(static_cast<int>((axes.max.x - axes.min.x) / (line * 3.5f)), 3, 6);
    const std::vector<double> xticks =
        spec.log_x ? LogTicks(spec.x0, spec.x1) : NiceTicks(spec.x0, spec.x1, room);
    for (double t : xticks) {
      const float x = axes.ToScreen(t, spec.y0).x;
      if (x < axes.min.x - 1 || x > axes.max.x + 1) continue;
      dl->AddLine(ImVec2(x, axes.min.y), ImVec2(x, axes.max.y), GridColor());
      const std::string s = ShortNumber(t);
      const ImVec2 ts = ImGui::CalcTextSize(s.c_str());
      dl->AddText(ImVec2(x - ts.x * 0.5f, axes.max.y + 2), DimColor(), s.c_str());
    }
  }
  // axis labels: x centred below (whole: from the plot's left edge when wider than the data
  // area), y written upwards along the left edge
  const char* x_label = spec.x_label_short && ImGui::CalcTextSize(spec.x_label).x > size.x
                            ? spec.x_label_short
                            : spec.x_label;
  const ImVec2 xl = ImGui::CalcTextSize(x_label);
  const float xl_x = std::max(
      origin.x, std::min((axes.min.x + axes.max.x - xl.x) * 0.5f, origin.x + size.x - xl.x));
  dl->AddText(ImVec2(xl_x, axes.max.y + line + 3), TextColor(), x_label);
  if (*spec.y_label) {
    const float w = ImGui::CalcTextSize(spec.y_label).x;
    AddUpwardText(dl, nullptr, 0,
                  ImVec2(origin.x + line * 0.5f + 1, (axes.min.y + axes.max.y + w) * 0.5f),
                  TextColor(), spec.y_label);
  }
  return axes;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Series: lines, points, reference lines, bars, histograms, legends

void PlotLine(const PlotAxes& axes, const std::vector<double>& x, const std::vector<double>& y,
              ImU32 color, float thickness, float dash) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(axes.min, axes.max, true);
  const size_t n = std::min(x.size(), y.size());
  std::vector<ImVec2> pts;
  for (size_t i = 0; i < n; ++i)
    if (std::isfinite(x[i]) && std::isfinite(y[i]) && (!axes.log_y || y[i] > 0))
      pts.push_back(axes.ToScreen(x[i], y[i]));
  if (dash <= 0) {
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), color, 0, thickness);
  } else {
    float carry = 0;  // distance into the current dash period
    for (size_t i = 1; i < pts.size(); ++i) {
      const ImVec2 a = pts[i - 1], b = pts[i];
      const float len = std::hypot(b.x - a.x, b.y - a.y);
      for (float s = 0; s < len;) {
        const float phase = std::fmod(carry + s, 2 * dash);
        const float seg = std::min(len - s, (phase < dash ? dash : 2 * dash) - phase);
        if (phase < dash) {
          const float t0 = s / len, t1 = (s + seg) / len;
          dl->AddLine(ImVec2(a.x + (b.x - a.x) * t0, a.y + (b.y - a.y) * t0),
                      ImVec2(a.x + (b.x - a.x) * t1, a.y + (b.y - a.y) * t1), color, thickness);
        }
        s += std::max(seg, 0.5f);
      }
      carry += len;
    }
  }
  dl->PopClipRect();
}

void PlotPoint(const PlotAxes& axes, double x, double y, ImU32 color, float radius) {
  if (!std::isfinite(x) || !std::isfinite(y)) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = axes.ToScreen(x, y);
  dl->AddCircleFilled(p, radius, color);
  dl->AddCircle(p, radius + 1.5f, IM_COL32(255, 255, 255, 230), 0, 1.5f);
}

namespace {

/// A plot's line label on a plate of the window's colour, so the lines and bars under it do
/// not cross the text; kept inside the data area.
void AddLabel(const PlotAxes& axes, ImVec2 pos, ImU32 color, const char* label) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 ts = ImGui::CalcTextSize(label);
  pos.x = std::max(axes.min.x + 2, std::min(pos.x, axes.max.x - ts.x - 2));
  pos.y = std::max(axes.min.y + 1, std::min(pos.y, axes.max.y - ts.y - 1));
  ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_ChildBg);
  bg.w = 1.0f;  // opaque: no line crosses the text
  dl->AddRectFilled(ImVec2(pos.x - 2, pos.y), ImVec2(pos.x + ts.x + 2, pos.y + ts.y),
                    ImGui::GetColorU32(bg), 3.0f);
  dl->AddText(pos, color, label);
}

}  // namespace

void PlotVLine(const PlotAxes& axes, double x, ImU32 color, const char* label,
               bool label_at_bottom) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float sx = axes.ToScreen(x, axes.y0).x;
  if (sx < axes.min.x || sx > axes.max.x) return;
  dl->AddLine(ImVec2(sx, axes.min.y), ImVec2(sx, axes.max.y), color, 1.5f);
  if (label) {
    const ImVec2 ts = ImGui::CalcTextSize(label);
    const float tx = sx + 4 + ts.x > axes.max.x ? sx - 4 - ts.x : sx + 4;
    AddLabel(axes, ImVec2(tx, label_at_bottom ? axes.max.y - ts.y - 2 : axes.min.y + 2), color,
             label);
  }
}

void PlotHLine(const PlotAxes& axes, double y, ImU32 color, const char* label, bool label_left) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float sy = axes.ToScreen(axes.x0, y).y;
  if (sy < axes.min.y || sy > axes.max.y) return;
  const float dash = 5;
  for (float x = axes.min.x; x < axes.max.x; x += 2 * dash)
    dl->AddLine(ImVec2(x, sy), ImVec2(std::min(x + dash, axes.max.x), sy), color, 1.0f);
  if (label) {
    const ImVec2 ts = ImGui::CalcTextSize(label);
    AddLabel(axes, ImVec2(label_left ? axes.min.x + 3 : axes.max.x - ts.x - 3, sy - ts.y - 1),
             color, label);
  }
}

void PlotBars(const PlotAxes& axes, const std::vector<double>& y, ImU32 color, int highlight,
              ImU32 highlight_color) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(axes.min, axes.max, true);
  const int n = static_cast<int>(y.size());
  const float width = axes.max.x - axes.min.x;
  const float slot = width / std::max(n, 1);
  const float base = axes.ToScreen(0, std::max(axes.y0, 0.0)).y;
  if (slot >= 1.0f) {
    const float gap = slot > 6 ? slot * 0.15f : 0.0f;
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(y[i])) continue;
      const float x0 = axes.min.x + slot * i + gap, x1 = axes.min.x + slot * (i + 1) - gap;
      const float top = axes.ToScreen(0, y[i]).y;
      dl->AddRectFilled(ImVec2(x0, std::min(top, base)),
                        ImVec2(std::max(x1, x0 + 1), std::max(top, base)),
                        i == highlight && highlight_color ? highlight_color : color);
    }
  } else {
    // More bars than pixels (T = 2048): one bar per pixel column, as tall as its tallest.
    const int columns = std::max(1, static_cast<int>(width));
    for (int c = 0; c < columns; ++c) {
      const int i0 = static_cast<int>(static_cast<int64_t>(c) * n / columns);
      const int i1 = std::max(i0 + 1, static_cast<int>(static_cast<int64_t>(c + 1) * n / columns));
      double v = -INFINITY, lo = INFINITY;
      for (int i = i0; i < i1 && i < n; ++i)
        if (std::isfinite(y[i])) {
          v = std::max(v, y[i]);
          lo = std::min(lo, y[i]);
        }
      if (!std::isfinite(v)) continue;
      if (v < 0) v = lo;  // a column of negative weights hangs below the axis
      const float top = axes.ToScreen(0, v).y;
      const bool hit = highlight >= i0 && highlight < i1 && highlight_color;
      dl->AddRectFilled(ImVec2(axes.min.x + c, std::min(top, base)),
                        ImVec2(axes.min.x + c + 1, std::max(top, base)),
                        hit ? highlight_color : color);
    }
  }
  dl->PopClipRect();
}

void PlotHistogram(const PlotAxes& axes, const std::vector<double>& edges,
                   const std::vector<double>& counts, ImU32 fill, ImU32 outline) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(axes.min, axes.max, true);
  for (size_t i = 0; i + 1 < edges.size() && i < counts.size(); ++i) {
    if (counts[i] <= 0) continue;
    const ImVec2 a = axes.ToScreen(edges[i], counts[i]);
    const ImVec2 b = axes.ToScreen(edges[i + 1], 0);
    dl->AddRectFilled(a, b, fill);
    dl->AddRect(a, b, outline);
  }
  dl->PopClipRect();
}

void PlotLegend(const PlotAxes& axes, const std::vector<std::pair<std::string, ImU32>>& items,
                bool right) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  float w = 0;
  for (const auto& [name, color] : items) w = std::max(w, ImGui::CalcTextSize(name.c_str()).x);
  if (axes.legend_above) {  // one line over the data, right-aligned, if it fits
    float total = 0;
    for (const auto& [name, color] : items) total += ImGui::CalcTextSize(name.c_str()).x + 34;
    if (total <= axes.max.x - axes.min.x) {
      float x = axes.max.x - total;
      const float y = axes.min.y - line - 2;
      for (const auto& [name, color] : items) {
        dl->AddLine(ImVec2(x + 4, y + line * 0.5f), ImVec2(x + 20, y + line * 0.5f), color, 3);
        dl->AddText(ImVec2(x + 24, y), TextColor(), name.c_str());
        x += ImGui::CalcTextSize(name.c_str()).x + 34;
      }
    }
    return;  // too narrow for it: no legend rather than one over the data (tooltips explain)
  }
  const float box_w = w + 30, box_h = line * items.size() + 6;
  const ImVec2 p = right ? ImVec2(axes.max.x - box_w - 4, axes.min.y + 4)
                         : ImVec2(axes.min.x + 4, axes.min.y + 4);
  dl->AddRectFilled(p, ImVec2(p.x + box_w, p.y + box_h), IM_COL32(20, 20, 24, 210), 3);
  for (size_t i = 0; i < items.size(); ++i) {
    const float y = p.y + 3 + line * i + line * 0.5f;
    dl->AddLine(ImVec2(p.x + 5, y), ImVec2(p.x + 21, y), items[i].second, 3);
    dl->AddText(ImVec2(p.x + 26, y - line * 0.5f), TextColor(), items[i].first.c_str());
  }
}

void ThinCurve(const std::vector<float>& loss, int columns, std::vector<double>* x,
               std::vector<double>* y) {
  const size_t n = loss.size(), per = std::max<size_t>(1, n / std::max(1, columns));
  for (size_t s = 0; s < n; s += per) {
    const size_t end = std::min(n, s + per);
    const auto [lo, hi] = std::minmax_element(loss.begin() + s, loss.begin() + end);
    const auto first = std::min(lo, hi), second = std::max(lo, hi);
    x->push_back(static_cast<double>(first - loss.begin()));
    y->push_back(*first);
    if (second == first) continue;
    x->push_back(static_cast<double>(second - loss.begin()));
    y->push_back(*second);
  }
}

}  // namespace attnlab::gui
