// heatmap_view.cpp: see heatmap_view.h.
//
// [SECTION] Helpers: label fonts, fitting, swatches, cell text
// [SECTION] Uploads
// [SECTION] DrawHeatmapView: layout, image, values, labels, colorbar, hover, highlights
#include "gui/heatmap_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/plot.h"
#include "gui/widgets.h"

namespace attnlab::gui {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Helpers: label fonts, fitting, swatches, cell text

struct LabelFont {
  ImFont* font;
  float size;
  ImVec2 Measure(const std::string& s) const {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.c_str());
  }
};

/// A label cut to max_w pixels with an ellipsis.
std::string Fit(const LabelFont& f, std::string s, float max_w) {
  if (f.Measure(s).x <= max_w) return s;
  while (!s.empty() && f.Measure(s + "\xE2\x80\xA6").x > max_w) {
    s.pop_back();
    while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  }
  return s + "\xE2\x80\xA6";
}

ImU32 ToU32(Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); }

/// The hatch swatch of masked cells, for legends.
void AddMaskedSwatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  dl->AddRectFilled(a, b, ToU32(kMaskedLight));
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += kMaskedPeriod)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + (b.y - a.y), a.y), ToU32(kMaskedStripe), 2.0f);
  dl->PopClipRect();
}

std::string CellText(float v) {
  char buf[16];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const float a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a < 10 ? "%.2f" : (a < 100 ? "%.1f" : "%.0f"), v);
  return buf;
}

}  // namespace

std::string CellNumber(double v) {
  char buf[32];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Uploads

void UploadMatrix(HeatmapSlot& slot, const Matrix& m, Stage stage) {
  if (m.size() == 0) {
    slot.gpu.Release();
    return;
  }
  const ValueScan scan = ScanValues(m);
  slot.gpu.UploadValues(m);
  slot.has_nan = scan.has_nan;
  slot.has_inf = scan.has_inf && stage != Stage::kLogits;
  slot.diverging = stage == Stage::kWeights || stage == Stage::kWeightsDropped
                       ? scan.has_negative
                       : stage != Stage::kMask;
  slot.range = StageRange(stage, slot.diverging, scan.lo, scan.hi, scan.any_finite);
  slot.dirty = false;
}

void UploadView(HeatmapSlot& slot, const StageView& view) {
  if (view.values.size() == 0) {
    slot.gpu.Release();
    return;
  }
  const ValueScan scan = ScanValues(view.values);
  slot.gpu.UploadValues(view.values);
  // The shader reads 1 where allowed; a view marks 1 where masked.
  slot.gpu.UploadOwnMask(view.masked.size() ? MaskMatrix((view.masked.array() == 0).cast<uint8_t>())
                                            : MaskMatrix());
  slot.has_nan = scan.has_nan;
  slot.has_inf = scan.has_inf && view.stage != Stage::kLogits;
  slot.diverging = view.diverging;
  slot.range = FigureRange(view);
  slot.dirty = false;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] DrawHeatmapView: layout, image, values, labels, colorbar, hover, highlights

HeatmapViewHover DrawHeatmapView(const AppState& state, HeatmapSlot& slot,
                                 const HeatmapViewSpec& spec, ImVec2 origin, ImVec2 size) {
  HeatmapViewHover hover;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const LabelFont small{state.fonts.small ? state.fonts.small : ImGui::GetFont(),
                        state.fonts.small ? state.fonts.small->FontSize : ImGui::GetFontSize()};
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text_color = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim_color = ImGui::GetColorU32(ImGuiCol_TextDisabled);

  // -- heading
  ImGui::SetCursorScreenPos(origin);
  ImGui::PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + line + 2), true);
  ImGui::TextUnformatted(spec.heading.c_str());
  ImGui::PopClipRect();
  if (spec.help) Tip(spec.help);
  const Matrix* m = spec.values;
  if (!m || m->size() == 0 || !slot.gpu.has_values()) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + line * 2));
    ImGui::TextDisabled("%s", spec.empty_text);
    slot.image_min = slot.image_max = ImVec2(0, 0);
    return hover;
  }
  const int rows = static_cast<int>(m->rows()), cols = static_cast<int>(m->cols());

  // -- layout: row labels | image | colorbar; column labels above the image
  // Label widths from up to ~256 labels spread over the whole range (T may be 2048), measured
  // again only when the labels change.
  if (slot.labels_input_run != spec.labels_key || slot.labels_rows != rows ||
      slot.labels_cols != cols) {
    slot.row_label_w = slot.col_label_w = 0;
    for (int i = 0; i < rows; i += std::max(1, rows / 256))
      slot.row_label_w = std::max(slot.row_label_w, small.Measure(spec.row_label(i)).x);
    for (int j = 0; j < cols; j += std::max(1, cols / 256))
      slot.col_label_w = std::max(slot.col_label_w, small.Measure(spec.col_label(j)).x);
    slot.labels_input_run = static_cast<int>(spec.labels_key);
    slot.labels_rows = rows;
    slot.labels_cols = cols;
  }
  const float row_label_w = std::clamp(slot.row_label_w, small.size, small.size * 6.0f) + 10;
  const float col_label_w = slot.col_label_w;
  const float bar_w = 12, bar_gap = 6;
  // Right of the image: the colorbar and its ticks, or the legends when they are wider.
  const bool legend_masked = !spec.mask_legend && spec.hatch && spec.any_masked;
  float tick_w = small.Measure("-0.000").x + 4;
  if (spec.mask_legend) tick_w = std::max(tick_w, small.Measure("1 allowed").x + 3);
  if (legend_masked) tick_w = std::max(tick_w, small.Measure("masked").x + 4);
  const float right_w = bar_gap + bar_w + 4 + tick_w;
  const float top = origin.y + line + 4;
  const float avail_w = size.x - row_label_w - right_w;
  // Column labels: horizontal when they fit the cells, else rotated (and then taller).
  const float first_guess_cw = avail_w / cols;
  const bool rotate = col_label_w + 4 > first_guess_cw;
  const float col_label_h = rotate ? std::min(col_label_w, small.size * 5.0f) + 8 : small.size + 4;
  const float avail_h = size.y - (top - origin.y) - col_label_h - 2;
  if (avail_w < 20 || avail_h < 20) return hover;
  // Square cells when they fit; otherwise cells up to 3:1, and a very tall or wide matrix (the
  // context, T x d_out) still gets at least 60% of the room along its short side.
  float cw = avail_w / cols, ch = avail_h / rows;
  const float c = std::min(cw, ch);
  cw = std::min(cw, std::max(3 * c, 0.6f * avail_w / cols));
  ch = std::min(ch, std::max(3 * c, 0.6f * avail_h / rows));
  const int img_w = std::max(1, static_cast<int>(std::floor(cw * cols)));
  const int img_h = std::max(1, static_cast<int>(std::floor(ch * rows)));
  cw = static_cast<float>(img_w) / cols;
  ch = static_cast<float>(img_h) / rows;
  const ImVec2 p0(std::floor(origin.x + row_label_w), std::floor(top + col_label_h));
  const ImVec2 p1(p0.x + img_w, p0.y + img_h);
  slot.image_min = p0;
  slot.image_max = p1;

  // -- the image, coloured on the GPU at exactly this size
  HeatmapLook look;
  look.use_mask = spec.hatch;
  look.range = slot.range;
  look.colormap = spec.colormap;
  look.width = img_w;
  look.height = img_h;
  if (state.renderer) state.renderer->Render(slot.gpu, look);
  // The FBO's first row is the image's bottom: flip v.
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(slot.gpu.image())), p0, p1,
               ImVec2(0, 1), ImVec2(1, 0));
  dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), IM_COL32(110, 110, 120, 255));

  // -- cell values
  const bool auto_values = rows <= 12 && cols <= 12;
  const bool want_values = state.view.values == ValuesMode::kOn ||
                           (state.view.values == ValuesMode::kAuto && auto_values);
  if (want_values && !spec.mask_legend && ch >= small.size && cw >= small.Measure("-0.00").x + 2 &&
      rows * cols <= 4096) {
    const Colormap& cm = Colormaps()[look.colormap];
    const MaskMatrix* allowed = spec.allowed;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const float v = (*m)(i, j);
        const bool masked = look.use_mask && allowed && allowed->rows() == rows &&
                            allowed->cols() == cols && !(*allowed)(i, j);
        if (masked) continue;
        const std::string t = CellText(v);
        const ImVec2 ts = small.Measure(t);
        if (ts.x > cw - 2) continue;
        Rgb bg = std::isnan(v) ? kNanColor : cm.lut[LutIndex(v, slot.range)];
        const float lum = 0.299f * bg.r + 0.587f * bg.g + 0.114f * bg.b;
        dl->AddText(
            small.font, small.size,
            ImVec2(p0.x + cw * (j + 0.5f) - ts.x * 0.5f, p0.y + ch * (i + 0.5f) - ts.y * 0.5f),
            lum > 140 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), t.c_str());
      }
  }

  // -- row labels (queries), thinned so they never overlap; the marked row stands out
  const int row_step = std::max(1, static_cast<int>(std::ceil(small.size / ch)));
  for (int i = 0; i < rows; i += row_step) {
    const std::string t = Fit(small, spec.row_label(i), row_label_w - 9);
    const ImVec2 ts = small.Measure(t);
    const bool selected = i == spec.marked_row;
    dl->AddText(small.font, small.size,
                ImVec2(p0.x - 6 - ts.x, p0.y + ch * (i + 0.5f) - ts.y * 0.5f),
                selected ? text_color : dim_color, t.c_str());
  }
  if (spec.marked_row >= 0 && spec.marked_row < rows) {  // a small triangle at the marked row
    const float y = p0.y + ch * (spec.marked_row + 0.5f);
    dl->AddTriangleFilled(ImVec2(p0.x - 5, y - 3), ImVec2(p0.x - 5, y + 3), ImVec2(p0.x - 1, y),
                          IM_COL32(255, 200, 60, 255));
  }
  // -- column labels (keys, or dimensions)
  const float col_slot = rotate ? small.size * 1.3f : col_label_w + 6;
  const int col_step = std::max(1, static_cast<int>(std::ceil(col_slot / cw)));
  for (int j = 0; j < cols; j += col_step) {
    const float x = p0.x + cw * (j + 0.5f);
    if (rotate) {
      const std::string t = Fit(small, spec.col_label(j), col_label_h - 5);
      AddUpwardText(dl, small.font, small.size, ImVec2(x, p0.y - 4), dim_color, t.c_str());
    } else {
      const std::string t = spec.col_label(j);
      const ImVec2 ts = small.Measure(t);
      dl->AddText(small.font, small.size, ImVec2(x - ts.x * 0.5f, p0.y - ts.y - 3), dim_color,
                  t.c_str());
    }
  }

  // -- colorbar with ticks (a mask gets a two-entry legend instead), legends under it
  const int legends = legend_masked + slot.has_nan + slot.has_inf;
  const float legend_h = legends * (small.size + 2) + (legends ? 4 : 0);
  const float bx = p1.x + bar_gap;
  const float bar_h =
      std::max(std::min<float>(img_h, avail_h - legend_h), std::min(60.0f, avail_h - legend_h));
  const ImVec2 b0(bx, p0.y), b1(bx + bar_w, p0.y + bar_h);
  if (spec.mask_legend) {
    const Colormap& cm = Colormaps()[look.colormap];
    const float sw = bar_w;
    dl->AddRectFilled(b0, ImVec2(b0.x + sw, b0.y + sw), ToU32(cm.lut[255]));
    dl->AddText(small.font, small.size, ImVec2(b0.x + sw + 3, b0.y - 1), dim_color, "1 allowed");
    AddMaskedSwatch(dl, ImVec2(b0.x, b0.y + sw + 6), ImVec2(b0.x + sw, b0.y + 2 * sw + 6));
    dl->AddText(small.font, small.size, ImVec2(b0.x + sw + 3, b0.y + sw + 5), dim_color,
                "0 masked");
  } else {
    const ImTextureID lut = state.renderer ? reinterpret_cast<ImTextureID>(static_cast<intptr_t>(
                                                 state.renderer->LutTexture(look.colormap)))
                                           : nullptr;
    // The 256 x 1 lookup texture stood upright: u = 1 (high values) at the top.
    dl->AddImageQuad(lut, b0, ImVec2(b1.x, b0.y), b1, ImVec2(b0.x, b1.y), ImVec2(1, 0.5f),
                     ImVec2(1, 0.5f), ImVec2(0, 0.5f), ImVec2(0, 0.5f));
    dl->AddRect(b0, b1, IM_COL32(110, 110, 120, 255));
    const ValueRange r = slot.range;
    const int target = std::clamp(static_cast<int>(bar_h / (small.size * 2.2f)), 2, 6);
    for (double t : NiceTicks(r.lo, r.hi, target)) {
      const float y = b1.y - static_cast<float>((t - r.lo) / (r.hi - r.lo)) * bar_h;
      if (y < b0.y - 0.5f || y > b1.y + 0.5f) continue;
      dl->AddLine(ImVec2(b1.x, y), ImVec2(b1.x + 3, y), dim_color);
      const std::string s = ShortNumber(t);
      dl->AddText(small.font, small.size, ImVec2(b1.x + 5, y - small.size * 0.5f), dim_color,
                  s.c_str());
    }
  }
  // Legend entries under the bar: masked hatch, NaN, inf.
  float ly = b1.y + 6;
  auto legend = [&](auto swatch, const char* text) {
    swatch(ImVec2(bx, ly), ImVec2(bx + bar_w, ly + small.size - 2));
    dl->AddText(small.font, small.size, ImVec2(bx + bar_w + 4, ly - 1), dim_color, text);
    ly += small.size + 2;
  };
  if (legend_masked) legend([&](ImVec2 a, ImVec2 b) { AddMaskedSwatch(dl, a, b); }, "masked");
  if (slot.has_nan)
    legend([&](ImVec2 a, ImVec2 b) { dl->AddRectFilled(a, b, ToU32(kNanColor)); }, "NaN");
  if (slot.has_inf)
    legend([&](ImVec2 a, ImVec2 b) { dl->AddRectFilled(a, b, IM_COL32(255, 255, 255, 255)); },
           "\xC2\xB1inf");

  // -- the cells as one button: hover reports the cell under the mouse
  ImGui::SetCursorScreenPos(p0);
  ImGui::PushID(spec.id);
  ImGui::InvisibleButton("##cells", ImVec2(static_cast<float>(img_w), static_cast<float>(img_h)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  ImGui::PopID();
  if (ImGui::IsItemHovered() || (spec.track_outside && ImGui::IsMouseHoveringRect(p0, p1))) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    hover.active = true;
    hover.col = std::clamp(static_cast<int>((mp.x - p0.x) / cw), 0, cols - 1);
    hover.row = std::clamp(static_cast<int>((mp.y - p0.y) / ch), 0, rows - 1);
  }

  // -- highlights from the last frame's hover: the row, the column and the cell
  if (spec.highlight_row >= 0 && spec.highlight_row < rows) {
    const float y0 = p0.y + ch * spec.highlight_row, y1 = y0 + ch;
    dl->AddRect(ImVec2(p0.x - 2, y0 - 1), ImVec2(p1.x + 2, y1 + 1), IM_COL32(0, 0, 0, 200), 0, 0,
                3.0f);
    dl->AddRect(ImVec2(p0.x - 2, y0 - 1), ImVec2(p1.x + 2, y1 + 1), IM_COL32(255, 255, 255, 255), 0,
                0, 1.5f);
    if (spec.highlight_col >= 0 && spec.highlight_col < cols) {
      const float x0 = p0.x + cw * spec.highlight_col, x1 = x0 + cw;
      dl->AddRect(ImVec2(x0 - 1, p0.y - 1), ImVec2(x1 + 1, p1.y + 1), IM_COL32(255, 255, 255, 110),
                  0, 0, 1.0f);
      dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), IM_COL32(255, 200, 60, 255), 0, 0,
                  2.0f);
    }
  }
  return hover;
}

}  // namespace attnlab::gui
