// heatmap_view.cpp: see heatmap_view.h. Every presentation rule (title, labels, colours, ticks,
// legends, value text and its ink) comes from the slot's HeatmapSpec (core heatmap_spec.h), the
// same one the figures are drawn from; this file only lays it out in ImGui and reports hovers.
//
// [SECTION] Helpers: label font, swatches
// [SECTION] Uploads and specs
// [SECTION] Layout
// [SECTION] Painting: heading, image, values, labels, colorbar, legends, highlights
// [SECTION] DrawHeatmapView
#include "gui/widgets/heatmap_view.h"

#include <imgui_internal.h>  // SetItemUsingMouseWheel: the wheel zooms a map, not the window

#include <algorithm>
#include <cmath>

#include "attnlab/base/text.h"
#include "gui/gfx/script_fonts.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Helpers: label font, swatches

struct LabelFont {
  ImFont* font;
  float size;
  ImVec2 Measure(std::string_view s) const {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.data(), s.data() + s.size());
  }
  MeasureText Measurer() const {
    return [f = *this](std::string_view s) { return f.Measure(s).x; };
  }
};

ImU32 ToU32(Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); }

/// The hatch swatch of masked cells, for legends.
void AddMaskedSwatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  dl->AddRectFilled(a, b, ToU32(kMaskedLight));
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += kMaskedPeriod)
    dl->AddLine(ImVec2(x, b.y), ImVec2(x + (b.y - a.y), a.y), ToU32(kMaskedStripe), 2.0f);
  dl->PopClipRect();
}

/// A legend entry's swatch: the colours the cells it explains have.
void AddLegendSwatch(ImDrawList* dl, const HeatmapSpec& spec, LegendKind kind, ImVec2 a, ImVec2 b) {
  switch (kind) {
    case LegendKind::kAllowed:
      dl->AddRectFilled(a, b, ToU32(spec.colormap->lut[255]));
      break;
    case LegendKind::kMasked:
      AddMaskedSwatch(dl, a, b);
      break;
    case LegendKind::kNan:
      dl->AddRectFilled(a, b, ToU32(kNanColor));
      break;
    case LegendKind::kNote:  // text only
      break;
    case LegendKind::kInf: {  // +inf and -inf take the scale's two ends
      const float mid = std::floor((a.x + b.x) * 0.5f);
      dl->AddRectFilled(a, ImVec2(mid, b.y), ToU32(spec.colormap->lut[0]));
      dl->AddRectFilled(ImVec2(mid, a.y), b, ToU32(spec.colormap->lut[255]));
      break;
    }
  }
}

int ColormapIndex(const Colormap* cm) {
  const auto& all = Colormaps();
  for (size_t i = 0; i < all.size(); ++i)
    if (&all[i] == cm) return static_cast<int>(i);
  return 0;
}

/// Label i as drawn (right-to-left runs in visual order, VisualOrder), "" out of range.
std::string LabelAt(const std::vector<std::string>& labels, int64_t i) {
  return i >= 0 && static_cast<size_t>(i) < labels.size() ? VisualOrder(labels[i]) : "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Uploads and specs

PresentationOptions ScreenPresentation(const AppState& state) {
  PresentationOptions o;
  o.sequential_colormap = Colormaps()[state.view.sequential_colormap].name;
  o.diverging_colormap = Colormaps()[state.view.diverging_colormap].name;
  o.range = state.view.weights_range;
  o.values = state.view.values;
  return o;
}

void EnsureSpec(HeatmapSlot& slot, const PresentationOptions& options) {
  if (slot.has_spec && slot.spec_options == options) return;
  const int64_t rows = slot.gpu.has_values() ? slot.gpu.rows() : 0;
  const int64_t cols = slot.gpu.has_values() ? slot.gpu.cols() : 0;
  slot.spec = MakeHeatmapSpec(slot.content, rows, cols, slot.scan, slot.any_masked, options);
  if (slot.spec.scaling == ColorScaling::kPerRow && slot.gpu.has_values())
    slot.gpu.UploadRowScale(slot.spec.row_scale);
  slot.spec_options = options;
  slot.has_spec = true;
}

void UploadMatrix(HeatmapSlot& slot, const Matrix& m, const HeatmapContent& content,
                  const MaskMatrix& masked) {
  slot.dirty = false;
  slot.has_spec = false;
  if (m.rows() != slot.gpu.rows() || m.cols() != slot.gpu.cols()) slot.zoom = MapZoom();
  if (m.size() == 0) {
    slot.gpu.Release();
    return;
  }
  slot.scan = ScanStage(content.stage, m);
  slot.gpu.UploadValues(m);
  // The shader reads 1 where allowed; a view marks 1 where masked.
  slot.gpu.UploadOwnMask(masked.size() ? MaskMatrix((masked.array() == 0).cast<uint8_t>())
                                       : MaskMatrix());
  slot.any_masked = masked.size() > 0 && masked.any();
  slot.content = content;
}

void UploadView(HeatmapSlot& slot, const StageView& view) {
  UploadMatrix(slot, view.values, view, view.masked);
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Layout

/// Where everything of one heatmap goes this frame.
struct ViewLayout {
  int rows = 0, cols = 0;  // the whole matrix
  CellWindow win;          // the cells drawn: all of them, or the zoomed part
  float row_label_w = 0, col_label_h = 0, bar_h = 0;
  bool rotate = false;
  float cw = 0, ch = 0;  // a drawn cell's width and height
  ImVec2 p0, p1;         // the image
  float avail_h = 0;
};

/// The colorbar's width and its gap from the image: 12 and 6 pixels at the small font's 13,
/// growing with the zoom and the monitor's scale as the text does.
float BarWidth(const LabelFont& small) { return std::round(small.size * 12.0f / 13.0f); }
float BarGap(const LabelFont& small) { return std::round(small.size * 6.0f / 13.0f); }

/// The first multiple of step at or after `from`.
int FirstMultiple(int from, int step) { return (from + step - 1) / step * step; }

/// How many rows (or columns) of n a zoom factor shows.
int ZoomedCount(int n, float factor) {
  return std::clamp(static_cast<int>(std::lround(n / factor)), 1, std::max(n, 1));
}

/// The cells a zoom shows of a rows x cols matrix, after bringing the zoom back inside it.
CellWindow VisibleCells(MapZoom& z, int rows, int cols) {
  z.factor = std::clamp(z.factor, 1.0f, static_cast<float>(std::max({rows, cols, 1})));
  CellWindow w;
  w.rows = ZoomedCount(rows, z.factor);
  w.cols = ZoomedCount(cols, z.factor);
  z.row0 = std::clamp(z.row0, 0.0f, static_cast<float>(rows - w.rows));
  z.col0 = std::clamp(z.col0, 0.0f, static_cast<float>(cols - w.cols));
  w.row0 = std::clamp(static_cast<int>(std::lround(z.row0)), 0, rows - w.rows);
  w.col0 = std::clamp(static_cast<int>(std::lround(z.col0)), 0, cols - w.cols);
  return w;
}

/// Label widths from up to ~256 labels spread over the whole range (T may be 2048), measured
/// again only when the labels change.
void MeasureLabels(HeatmapSlot& slot, const HeatmapViewSpec& view, const LabelFont& small, int rows,
                   int cols) {
  if (slot.labels_input_run == view.labels_key && slot.labels_rows == rows &&
      slot.labels_cols == cols && slot.labels_font_size == small.size)
    return;
  const HeatmapSpec& spec = slot.spec;
  slot.row_label_w = slot.col_label_w = 0;
  for (int i = 0; i < rows; i += std::max(1, rows / 256))
    slot.row_label_w = std::max(slot.row_label_w, small.Measure(LabelAt(spec.row_labels, i)).x);
  for (int j = 0; j < cols; j += std::max(1, cols / 256))
    slot.col_label_w = std::max(slot.col_label_w, small.Measure(LabelAt(spec.col_labels, j)).x);
  slot.labels_input_run = static_cast<int>(view.labels_key);
  slot.labels_rows = rows;
  slot.labels_cols = cols;
  slot.labels_font_size = small.size;
}

/// The row labels' width (8 pixels of margin when the map left of it shows them).
float RowLabelWidth(const HeatmapSlot& slot, const HeatmapViewSpec& view, const LabelFont& small) {
  return view.row_labels ? std::clamp(slot.row_label_w, small.size, small.size * 6.0f) + 10 : 8;
}

/// The spec whose colorbar and legends are drawn right of the image (HeatmapViewSpec::colorbar,
/// colorbar_of), or null for none.
const HeatmapSpec* BarSpec(const HeatmapSlot& slot, const HeatmapViewSpec& view) {
  if (!view.colorbar) return nullptr;
  return view.colorbar_of ? view.colorbar_of : &slot.spec;
}

/// The "masked" legend of a map whose masked cells are hatched: its room is kept whether or not
/// a cell is masked, so that turning the mask on moves nothing (stage_layout.h).
constexpr const char* kMaskedLegend = "masked";

/// Whether the stage's map can hatch masked cells (the logits only under some normalizations):
/// its room for the "masked" legend is kept under every one.
bool MayHatch(Stage stage) { return RowOf(stage).hatches_masked; }

/// Whether `spec` keeps a line for the "masked" legend it does not have now (only in a view
/// that keeps that room, HeatmapViewSpec::keep_masked_room).
bool KeepsMaskedLine(const HeatmapSpec& spec, bool keep) {
  if (!keep || !MayHatch(spec.stage) || spec.mask_legend) return false;
  for (const LegendEntry& e : spec.legends)
    if (e.kind == LegendKind::kMasked) return false;
  return true;
}

/// The height of `bar`'s legends under its colorbar (0 without a colorbar); `keep`: with the
/// room of a "masked" legend it does not have now.
float LegendHeight(const HeatmapSpec* bar, const LabelFont& small, bool keep) {
  if (!bar) return 0;
  const size_t lines = bar->legends.size() + (KeepsMaskedLine(*bar, keep) ? 1 : 0);
  if (lines == 0) return 0;
  return lines * (small.size + 2) + 4;
}

/// Right of the image: the colorbar and its ticks, or the legends when they are wider; a small
/// gap when the map draws none (`spec` null). `keep`: as wide as a "masked" legend too.
float RightWidth(const HeatmapSpec* spec_or_null, const LabelFont& small, bool keep) {
  if (!spec_or_null) return 4;
  const HeatmapSpec& spec = *spec_or_null;
  float side_w = small.Measure("-0.000").x + 4;
  for (const LegendEntry& e : spec.legends) side_w = std::max(side_w, small.Measure(e.text).x + 4);
  if (keep && MayHatch(spec.stage)) side_w = std::max(side_w, small.Measure(kMaskedLegend).x + 4);
  return BarGap(small) + BarWidth(small) + 4 + side_w;
}

/// The column labels' height: one line, or rotated labels up to five lines' length.
float ColumnLabelHeight(const HeatmapSlot& slot, const LabelFont& small, bool rotate) {
  return rotate ? std::min(slot.col_label_w, small.size * 5.0f) + 8 : small.size + 4;
}

/// Row labels | image | colorbar and legends; column labels above the image. False when the
/// rectangle is too small for an image.
bool LayOutView(const HeatmapSlot& slot, const HeatmapViewSpec& view, const LabelFont& small,
                ImVec2 origin, ImVec2 size, float top, ViewLayout& L) {
  L.row_label_w = RowLabelWidth(slot, view, small);
  const HeatmapSpec* bar = BarSpec(slot, view);
  const float avail_w = size.x - L.row_label_w - RightWidth(bar, small, view.keep_masked_room);
  // Column labels: horizontal when they fit the cells, else rotated (and then taller).
  L.rotate = RotateColumnLabels(slot.col_label_w, 4.0f, avail_w / L.win.cols);
  L.col_label_h = ColumnLabelHeight(slot, small, L.rotate);
  L.avail_h = size.y - (top - origin.y) - L.col_label_h - 2;
  // A one-column map (the sink's column) may be as narrow as its cells.
  if (avail_w < std::min(20.0f, 6.0f * L.win.cols) || L.avail_h < 20) return false;
  // Square cells when they fit; otherwise cells up to 4:1 wide (a number with 4 decimals in a
  // line of text) or 3:1 tall, and a very tall or wide matrix (the context, T x d_out) still
  // gets at least 60% of the room along its short side.
  float cw = avail_w / L.cols, ch = L.avail_h / L.rows;
  const float c = std::min(cw, ch);
  cw = std::min(cw, std::max(4 * c, 0.6f * avail_w / L.cols));
  ch = std::min(ch, std::max(3 * c, 0.6f * L.avail_h / L.rows));
  const int img_w = std::max(1, static_cast<int>(std::floor(cw * L.cols)));
  const int img_h = std::max(1, static_cast<int>(std::floor(ch * L.rows)));
  L.cw = static_cast<float>(img_w) / L.win.cols;
  L.ch = static_cast<float>(img_h) / L.win.rows;
  L.p0 = ImVec2(std::floor(origin.x + L.row_label_w), std::floor(top + L.col_label_h));
  L.p1 = ImVec2(L.p0.x + img_w, L.p0.y + img_h);
  const float legend_h = LegendHeight(bar, small, view.keep_masked_room);
  L.bar_h =
      std::max(std::min<float>(img_h, L.avail_h - legend_h), std::min(60.0f, L.avail_h - legend_h));
  return true;
}

/// The layout of the slot's map drawn in (origin, size) under its one-line heading: the cells
/// shown (the zoom), the labels measured, then LayOutView. A frozen view keeps the texture's
/// shape. False when there is no room for the image. DrawHeatmapView and HeatmapPrintsValues.
bool LayOutSlot(HeatmapSlot& slot, const HeatmapViewSpec& view, const CellSource& m,
                const LabelFont& small, ImVec2 origin, ImVec2 size, ViewLayout& L) {
  L.rows = static_cast<int>(view.frozen ? slot.gpu.rows() : m.rows());
  L.cols = static_cast<int>(view.frozen ? slot.gpu.cols() : m.cols());
  L.win = VisibleCells(slot.zoom, L.rows, L.cols);
  MeasureLabels(slot, view, small, L.rows, L.cols);
  return LayOutView(slot, view, small, origin, size, origin.y + ImGui::GetTextLineHeight() + 4, L);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Painting: heading, image, values, labels, colorbar, legends, highlights

/// The title, then the subtitle dimmed, clipped to the heatmap's width. True when the title was
/// clicked (only when `view.title_tip` makes it clickable).
bool PaintHeading(const HeatmapSpec& spec, const HeatmapViewSpec& view, ImVec2 origin, ImVec2 size,
                  float line) {
  ImGui::SetCursorScreenPos(origin);
  ImGui::PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + line + 2), true);
  // The whole title, else its name before " = " (the formula is in the tooltip), else the
  // name cut with an ellipsis: never a title cut mid-word.
  const MeasureText measure = [](std::string_view t) {
    return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x;
  };
  // note_first: the note keeps its room and the title fits in what is left.
  const float note_room = view.note_first && !view.heading_note.empty() && !view.thumbnail
                              ? measure(view.heading_note) + ImGui::GetStyle().ItemSpacing.x
                              : 0.0f;
  const float title_room = std::max(size.x - note_room, size.x * 0.3f);
  std::string title = spec.title;
  if (measure(title) > title_room) {
    const size_t eq = title.find(" = ");
    if (eq != std::string::npos) title = title.substr(0, eq);
    title = FitLabel(title, title_room, measure);
  }
  ImGui::TextUnformatted(title.c_str());
  bool clicked = false;
  const bool title_hovered = view.title_tip && ImGui::IsItemHovered();
  if (title_hovered) {
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddLine(ImVec2(a.x, b.y), b, ImGui::GetColorU32(ImGuiCol_Text));
    clicked = ImGui::IsMouseClicked(ImGuiMouseButton_Left);
  }
  const std::string note =
      view.heading_note.empty()
          ? spec.subtitle
          : view.heading_note + (spec.subtitle.empty() ? "" : "; ") + spec.subtitle;
  // The subtitle only when it fits whole (the tooltip always has it): a clipped "d_k =" says
  // less than nothing.
  const float left =
      origin.x + size.x - ImGui::GetItemRectMax().x - ImGui::GetStyle().ItemSpacing.x;
  // note_first: heading_note alone when the whole note does not fit.
  const std::string shown_note = ImGui::CalcTextSize(note.c_str()).x <= left ? note
                                 : view.note_first                           ? view.heading_note
                                                                             : std::string();
  if (!shown_note.empty() && !view.thumbnail && ImGui::CalcTextSize(shown_note.c_str()).x <= left) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", shown_note.c_str());
  }
  ImGui::PopClipRect();
  const std::string whole = title == spec.title ? "" : spec.title + "\n\n";
  if (title_hovered) {
    Tip((whole + view.title_tip + "\n\n" + spec.help + (note.empty() ? "" : "\n\n" + note))
            .c_str());
  } else if (!spec.help.empty()) {
    Tip((whole + spec.help + (note.empty() ? "" : "\n\n" + note)).c_str());
  }
  return clicked;
}

HeatmapLook LookOf(const HeatmapSlot& slot, const ViewLayout& L) {
  HeatmapLook look;
  look.use_mask = slot.spec.hatch_masked;
  look.range = slot.spec.range;
  look.scaling = static_cast<int>(slot.spec.scaling);
  look.row_scale_version = slot.gpu.row_scale_version();
  look.colormap = ColormapIndex(slot.spec.colormap);
  look.width = static_cast<int>(L.p1.x - L.p0.x);
  look.height = static_cast<int>(L.p1.y - L.p0.y);
  look.view_col0 = L.win.col0;
  look.view_row0 = L.win.row0;
  look.view_cols = L.win.cols;
  look.view_rows = L.win.rows;
  return look;
}

void PaintImage(const AppState& state, HeatmapSlot& slot, const HeatmapViewSpec& view,
                const ViewLayout& L) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (state.renderer && !view.frozen)
    state.renderer->Render(slot.gpu, LookOf(slot, L), view.cells(), view.allowed);
  // The FBO's first row is the image's bottom: flip v.
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(slot.gpu.image())), L.p0, L.p1,
               ImVec2(0, 1), ImVec2(1, 0));
  dl->AddRect(ImVec2(L.p0.x - 1, L.p0.y - 1), ImVec2(L.p1.x + 1, L.p1.y + 1),
              IM_COL32(110, 110, 120, 255));
  if (view.col_group > 0)  // e.g. each head's columns of the context, set apart
    for (int64_t c = FirstMultiple(L.win.col0 + 1, static_cast<int>(view.col_group));
         c < L.win.col0 + L.win.cols; c += view.col_group) {
      const float x = std::round(L.p0.x + L.cw * (c - L.win.col0));
      dl->AddLine(ImVec2(x, L.p0.y - 4), ImVec2(x, L.p1.y + 4), IM_COL32(20, 20, 26, 255), 3.0f);
      dl->AddLine(ImVec2(x, L.p0.y - 4), ImVec2(x, L.p1.y + 4), IM_COL32(255, 200, 60, 255), 1.0f);
    }
}

/// Each cell's text as MapCellTexts prints it (masked logits -inf, masked weights 0, "…" where
/// not even 2 decimals fit), row by row, into `printed`; `masks` each cell's hatching. False
/// (and `printed` empty) when the spec wants values but the cells are too small for any.
bool CellTexts(const HeatmapSpec& spec, const HeatmapViewSpec& view, const CellSource& m,
               const LabelFont& small, const ViewLayout& L, std::vector<std::string>& printed,
               std::vector<uint8_t>& masks) {
  printed.clear();
  masks.clear();
  if (!spec.values_wanted) return true;
  const CellWindow& w = L.win;
  if (L.ch < small.size || w.rows * w.cols > 4096) return false;
  const MeasureText measure = small.Measurer();
  // The texts first: a map whose cells all come out "…" prints none (its note says how to
  // see them), an ellipsis is for the odd value that does not fit among numbers that do.
  const std::string ellipsis = "…";
  const MaskMatrix* allowed = view.allowed;
  const bool check_mask =
      spec.hatch_masked && allowed && allowed->rows() == L.rows && allowed->cols() == L.cols;
  const MaskMatrix* own = view.masked;
  const bool check_own =
      spec.hatch_masked && !check_mask && own && own->rows() == L.rows && own->cols() == L.cols;
  std::vector<float> values(static_cast<size_t>(w.rows) * w.cols);
  masks.assign(values.size(), 0);
  for (int i = 0; i < w.rows; ++i)
    for (int j = 0; j < w.cols; ++j) {
      const int r = w.row0 + i, c = w.col0 + j;
      const size_t k = static_cast<size_t>(i) * w.cols + j;
      values[k] = m.at(r, c);
      masks[k] =
          DrawnHatched((check_mask && !(*allowed)(r, c)) || (check_own && (*own)(r, c)), values[k]);
    }
  printed = MapCellTexts(spec.stage, values, masks, L.cw - 2, measure);
  bool any = false;
  for (size_t k = 0; k < printed.size(); ++k)  // a number, not -inf or 0
    any = any || (!masks[k] && !printed[k].empty() && printed[k] != ellipsis);
  if (!any) printed.clear();
  return any;
}

/// Each cell's text (CellTexts) in its ink colour. False when the spec wants values but the
/// cells are too small for any. `printed`: each cell's text, row by row, or empty when nothing
/// is printed (for --layout).
bool PaintValues(const HeatmapSpec& spec, const HeatmapViewSpec& view, const CellSource& m,
                 const LabelFont& small, const ViewLayout& L, std::vector<std::string>& printed) {
  std::vector<uint8_t> masks;
  if (!CellTexts(spec, view, m, small, L, printed, masks)) return false;
  if (printed.empty()) return true;  // the spec wants no values
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const CellWindow& w = L.win;
  for (int i = 0; i < w.rows; ++i)
    for (int j = 0; j < w.cols; ++j) {
      const size_t k = static_cast<size_t>(i) * w.cols + j;
      const std::string& t = printed[k];
      if (t.empty()) continue;
      const int r = w.row0 + i;
      const float v = m.at(r, w.col0 + j);
      const ImVec2 ts = small.Measure(t);
      dl->AddText(small.font, small.size,
                  ImVec2(L.p0.x + L.cw * (j + 0.5f) - ts.x * 0.5f,
                         L.p0.y + L.ch * (i + 0.5f) - ts.y * 0.5f),
                  ToU32(CellInk(masks[k] ? kMaskedLight : CellColor(spec, v, r))), t.c_str());
    }
  return true;
}

/// Row labels (queries) and column labels (keys or dimensions), thinned so they never overlap;
/// the marked row stands out.
void PaintLabels(const HeatmapSpec& spec, const HeatmapViewSpec& view, const LabelFont& small,
                 const ViewLayout& L, float col_label_w) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text_color = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim_color = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const MeasureText measure = small.Measurer();
  const CellWindow& w = L.win;
  // Labels on multiples of the step, so that they stay put while the map is dragged.
  const int row_step = LabelStep(small.size, L.ch);
  for (int r = FirstMultiple(w.row0, row_step); view.row_labels && r < w.row0 + w.rows;
       r += row_step) {
    const std::string t = FitLabel(LabelAt(spec.row_labels, r), L.row_label_w - 9, measure);
    const ImVec2 ts = small.Measure(t);
    dl->AddText(small.font, small.size,
                ImVec2(L.p0.x - 6 - ts.x, L.p0.y + L.ch * (r - w.row0 + 0.5f) - ts.y * 0.5f),
                r == view.marked_row ? text_color : dim_color, t.c_str());
  }
  const int64_t marked = view.marked_row - w.row0;
  if (view.marked_row >= 0 && marked >= 0 && marked < w.rows) {  // a triangle at the marked row
    const float y = L.p0.y + L.ch * (marked + 0.5f);
    dl->AddTriangleFilled(ImVec2(L.p0.x - 5, y - 3), ImVec2(L.p0.x - 5, y + 3),
                          ImVec2(L.p0.x - 1, y), IM_COL32(255, 200, 60, 255));
  }
  const int col_step = LabelStep(L.rotate ? small.size * 1.3f : col_label_w + 6, L.cw);
  for (int c = FirstMultiple(w.col0, col_step); c < w.col0 + w.cols; c += col_step) {
    const float x = L.p0.x + L.cw * (c - w.col0 + 0.5f);
    if (L.rotate) {
      const std::string t = FitLabel(LabelAt(spec.col_labels, c), L.col_label_h - 5, measure);
      AddUpwardText(dl, small.font, small.size, ImVec2(x, L.p0.y - 4), dim_color, t.c_str());
    } else {
      const std::string t = LabelAt(spec.col_labels, c);
      const ImVec2 ts = small.Measure(t);
      dl->AddText(small.font, small.size, ImVec2(x - ts.x * 0.5f, L.p0.y - ts.y - 3), dim_color,
                  t.c_str());
    }
  }
}

/// The colorbar with the spec's ticks (every other one when they would crowd), then the legend
/// entries under it; the mask's two-entry legend takes the colorbar's place.
void PaintColorbarAndLegends(const AppState& state, const HeatmapSpec& spec, const LabelFont& small,
                             const ViewLayout& L) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 dim_color = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float bar_w = BarWidth(small), bx = L.p1.x + BarGap(small);
  float ly = L.p0.y;
  if (!spec.mask_legend) {
    const ImVec2 b0(bx, L.p0.y), b1(bx + bar_w, L.p0.y + L.bar_h);
    const int cm = ColormapIndex(spec.colormap);
    const ImTextureID lut =
        state.renderer
            ? reinterpret_cast<ImTextureID>(static_cast<intptr_t>(state.renderer->LutTexture(cm)))
            : nullptr;
    // The 256 x 1 lookup texture stood upright: u = 1 (high values) at the top.
    dl->AddImageQuad(lut, b0, ImVec2(b1.x, b0.y), b1, ImVec2(b0.x, b1.y), ImVec2(1, 0.5f),
                     ImVec2(1, 0.5f), ImVec2(0, 0.5f), ImVec2(0, 0.5f));
    dl->AddRect(b0, b1, IM_COL32(110, 110, 120, 255));
    const ValueRange r = spec.range;
    const int n = static_cast<int>(spec.ticks.size());
    const int step = n > 1 && L.bar_h / (n - 1) < small.size * 1.2f ? 2 : 1;
    for (int k = 0; k < n; k += step) {
      const ColorbarTick& t = spec.ticks[k];
      const float y = b1.y - static_cast<float>((t.value - r.lo) / (r.hi - r.lo)) * L.bar_h;
      if (y < b0.y - 0.5f || y > b1.y + 0.5f) continue;
      dl->AddLine(ImVec2(b1.x, y), ImVec2(b1.x + 3, y), dim_color);
      dl->AddText(small.font, small.size, ImVec2(b1.x + 5, y - small.size * 0.5f), dim_color,
                  t.text.c_str());
    }
    ly = b1.y + 6;
  }
  const float sw = spec.mask_legend ? bar_w : small.size - 2;
  for (const LegendEntry& e : spec.legends) {
    AddLegendSwatch(dl, spec, e.kind, ImVec2(bx, ly), ImVec2(bx + bar_w, ly + sw));
    const float tx = e.kind == LegendKind::kNote ? bx : bx + bar_w + 4;
    dl->AddText(small.font, small.size, ImVec2(tx, ly + (sw - small.size) * 0.5f), dim_color,
                e.text.c_str());
    ly += std::max(sw, small.size) + (spec.mask_legend ? 6 : 2);
  }
}

/// Last frame's hovered row, column and cell, outlined.
void PaintHighlights(const HeatmapViewSpec& view, const ViewLayout& L) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = L.p0, p1 = L.p1;
  const int64_t row = view.highlight_row - L.win.row0, col = view.highlight_col - L.win.col0;
  const bool has_row = view.highlight_row >= 0 && row >= 0 && row < L.win.rows;
  const bool has_col = view.highlight_col >= 0 && col >= 0 && col < L.win.cols;
  const float y0 = p0.y + L.ch * row, y1 = y0 + L.ch;
  const float x0 = p0.x + L.cw * col, x1 = x0 + L.cw;
  if (has_row) {
    dl->AddRect(ImVec2(p0.x - 2, y0 - 1), ImVec2(p1.x + 2, y1 + 1), IM_COL32(0, 0, 0, 200), 0, 0,
                3.0f);
    dl->AddRect(ImVec2(p0.x - 2, y0 - 1), ImVec2(p1.x + 2, y1 + 1), IM_COL32(255, 255, 255, 255), 0,
                0, 1.5f);
  }
  if (has_col)
    dl->AddRect(ImVec2(x0 - 1, p0.y - 1), ImVec2(x1 + 1, p1.y + 1),
                has_row ? IM_COL32(255, 255, 255, 110) : IM_COL32(255, 255, 255, 220), 0, 0,
                has_row ? 1.0f : 1.5f);
  if (has_row && has_col)
    dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), IM_COL32(255, 200, 60, 255), 0, 0,
                2.0f);
}

/// A strip item: the title over the image, which fills the rest; clicking either reports
/// title_clicked.
HeatmapViewHover DrawThumbnail(const AppState& state, HeatmapSlot& slot,
                               const HeatmapViewSpec& view, ImVec2 origin, ImVec2 size,
                               float line) {
  HeatmapViewHover out;
  out.title_clicked = PaintHeading(slot.spec, view, origin, size, line);
  const float top = origin.y + line + 2;
  const CellSource cells = view.cells();
  if ((cells.empty() && !view.frozen) || !slot.gpu.has_values() || size.y - (top - origin.y) < 8) {
    slot.image_min = slot.image_max = ImVec2(0, 0);
    return out;
  }
  const float avail_h = size.y - (top - origin.y), avail_w = size.x - 4;
  const float rows = static_cast<float>(view.frozen ? slot.gpu.rows() : cells.rows());
  const float cols = static_cast<float>(view.frozen ? slot.gpu.cols() : cells.cols());
  const float scale = std::min(avail_w / cols, avail_h / rows);
  const float w = std::max(4.0f, std::floor(std::min(avail_w, std::max(cols * scale, avail_h))));
  const float h = std::max(4.0f, std::floor(std::min(avail_h, rows * scale)));
  ViewLayout L;
  L.p0 = ImVec2(std::floor(origin.x + 2), std::floor(top));
  L.p1 = ImVec2(L.p0.x + w, L.p0.y + h);
  slot.image_min = L.p0;
  slot.image_max = L.p1;
  slot.visible = true;
  slot.shown = CellWindow{0, 0, static_cast<int>(rows), static_cast<int>(cols)};
  PaintImage(state, slot, view, L);
  ImGui::SetCursorScreenPos(L.p0);
  ImGui::PushID(view.id);
  if (ImGui::InvisibleButton("##thumb", ImVec2(w, h))) out.title_clicked = true;
  ImGui::PopID();
  if (ImGui::IsItemHovered()) {
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    Tip(view.title_tip ? view.title_tip : slot.spec.help.c_str());
  }
  return out;
}

/// Where a zoomed map's minimap goes: the image's bottom-right corner, the whole matrix at most
/// 140 pixels (or a third of the image) on its long side. Empty when not zoomed.
ImRect MinimapRect(const MapZoom& z, const ViewLayout& L) {
  if (z.factor <= 1.0f) return ImRect();
  const float box_w = L.p1.x - L.p0.x, box_h = L.p1.y - L.p0.y;
  const float side = std::min(140.0f, 0.34f * std::min(box_w, box_h));
  const float scale = side / static_cast<float>(std::max(L.rows, L.cols));
  const float w = std::floor(std::max(10.0f, L.cols * scale));
  const float h = std::floor(std::max(10.0f, L.rows * scale));
  if (w + 12 > box_w || h + 12 > box_h) return ImRect();
  const ImVec2 b(L.p1.x - 6, L.p1.y - 6);
  return ImRect(ImVec2(b.x - w, b.y - h), b);
}

/// The minimap: the whole matrix, the part shown outlined.
void PaintMinimap(const AppState& state, HeatmapSlot& slot, const HeatmapViewSpec& view,
                  const ViewLayout& L, const ImRect& r) {
  if (r.GetWidth() <= 0 || !state.renderer) return;
  ViewLayout whole = L;
  whole.win = CellWindow{0, 0, L.rows, L.cols};
  whole.p0 = r.Min;
  whole.p1 = r.Max;
  if (!view.frozen)
    state.renderer->Render(slot.gpu, LookOf(slot, whole), view.cells(), view.allowed, true);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(r.Min.x - 3, r.Min.y - 3), ImVec2(r.Max.x + 3, r.Max.y + 3),
                    IM_COL32(20, 20, 26, 230));
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(slot.gpu.overview_image())),
               r.Min, r.Max, ImVec2(0, 1), ImVec2(1, 0));
  const float sx = r.GetWidth() / L.cols, sy = r.GetHeight() / L.rows;
  const ImVec2 a(r.Min.x + sx * L.win.col0, r.Min.y + sy * L.win.row0);
  const ImVec2 b(a.x + std::max(2.0f, sx * L.win.cols), a.y + std::max(2.0f, sy * L.win.rows));
  dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 220), 0, 0, 3);
  dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
}

/// The wheel zooms around the cell under the mouse; dragging with the middle button (or the
/// left one on a zoomed map that is not painted on) pans; the minimap recentres; a double
/// click shows the whole map again. Call with the cells' button as the last item.
void ZoomAndPan(HeatmapSlot& slot, const HeatmapViewSpec& view, const ViewLayout& L,
                const ImRect& minimap) {
  const ImGuiIO& io = ImGui::GetIO();
  MapZoom& z = slot.zoom;
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mp = io.MousePos;
  const float box_w = L.p1.x - L.p0.x, box_h = L.p1.y - L.p0.y;
  if (hovered && io.MouseWheel != 0.0f && (!view.wheel_zoom_with_ctrl || io.KeyCtrl)) {
    ImGui::SetItemUsingMouseWheel();
    const float fx = (mp.x - L.p0.x) / box_w, fy = (mp.y - L.p0.y) / box_h;
    const float col = z.col0 + fx * L.win.cols, row = z.row0 + fy * L.win.rows;
    z.factor *= std::pow(1.25f, io.MouseWheel);
    MapZoom next = z;
    const CellWindow w = VisibleCells(next, L.rows, L.cols);
    z.factor = next.factor;
    z.col0 = col - fx * w.cols;
    z.row0 = row - fy * w.rows;
  }
  if (minimap.GetWidth() > 0 && ImGui::IsItemActive() && ImGui::IsMouseDown(0) &&
      minimap.Contains(io.MouseClickedPos[0])) {  // recentre where the minimap is pressed
    z.col0 = (mp.x - minimap.Min.x) / minimap.GetWidth() * L.cols - L.win.cols * 0.5f;
    z.row0 = (mp.y - minimap.Min.y) / minimap.GetHeight() * L.rows - L.win.rows * 0.5f;
  } else if (ImGui::IsItemActive() &&
             (ImGui::IsMouseDragging(ImGuiMouseButton_Middle) ||
              (view.pan_with_left && z.factor > 1.0f && ImGui::IsMouseDragging(0)))) {
    z.col0 -= io.MouseDelta.x / L.cw;
    z.row0 -= io.MouseDelta.y / L.ch;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(0) && !minimap.Contains(mp)) z = MapZoom();
  VisibleCells(z, L.rows, L.cols);
}

/// Under the image, in small dim text: how to see numbers when none fit, or the zoom and how to
/// leave it. Only when it fits below the image.
void PaintZoomNote(const HeatmapSlot& slot, const HeatmapViewSpec& view, const LabelFont& small,
                   const ViewLayout& L, bool printed, float right, float bottom) {
  char text[96];
  if (slot.zoom.factor > 1.0f)
    std::snprintf(text, sizeof text,
                  "zoom \xC3\x97%.1f \xC2\xB7 drag to pan \xC2\xB7 double-click: all",
                  slot.zoom.factor);
  else if (!printed && view.title_tip && !view.force_values)
    std::snprintf(text, sizeof text, "numbers: click the title, or zoom in (wheel)");
  else
    return;
  if (bottom - L.p1.y < small.size + 2) return;
  const float w = small.Measure(text).x;
  if (w > right - L.p0.x) {
    if (slot.zoom.factor <= 1.0f) return;
    std::snprintf(text, sizeof text, "zoom \xC3\x97%.1f", slot.zoom.factor);
  }
  ImGui::GetWindowDrawList()->AddText(small.font, small.size, ImVec2(L.p0.x, L.p1.y + 2),
                                      ImGui::GetColorU32(ImGuiCol_TextDisabled), text);
}

/// The cells as one button: the cell under the mouse, if any.
HeatmapViewHover TrackHover(const HeatmapViewSpec& view, const ViewLayout& L) {
  HeatmapViewHover hover;
  ImGui::SetCursorScreenPos(L.p0);
  ImGui::PushID(view.id);
  ImGui::InvisibleButton("##cells", ImVec2(L.p1.x - L.p0.x, L.p1.y - L.p0.y),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  ImGui::PopID();
  if (ImGui::IsItemHovered() || (view.track_outside && ImGui::IsMouseHoveringRect(L.p0, L.p1))) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    hover.active = true;
    hover.col =
        L.win.col0 + std::clamp(static_cast<int>((mp.x - L.p0.x) / L.cw), 0, L.win.cols - 1);
    hover.row =
        L.win.row0 + std::clamp(static_cast<int>((mp.y - L.p0.y) / L.ch), 0, L.win.rows - 1);
  }
  return hover;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] DrawHeatmapView

namespace {

LabelFont SmallFont(const AppState& state) {
  return {state.fonts.small ? state.fonts.small : ImGui::GetFont(),
          state.fonts.small ? state.fonts.small->FontSize : ImGui::GetFontSize()};
}

/// The screen's presentation options for this view: focused or zoomed in, the values print
/// wherever they fit.
PresentationOptions ViewPresentation(const AppState& state, const HeatmapSlot& slot,
                                     const HeatmapViewSpec& view) {
  PresentationOptions options = ScreenPresentation(state);
  const bool zoomed = !view.thumbnail && slot.zoom.factor > 1.0f;
  if ((view.force_values || zoomed) && options.values == ValuesMode::kAuto)
    options.values = ValuesMode::kOn;
  return options;
}

}  // namespace

float CellTextWidth(const AppState& state, std::string_view text) {
  return SmallFont(state).Measure(text).x;
}

NumberCells NumberCellWidths(const AppState& state, Stage stage, const CellSource& m,
                             const std::function<bool(int64_t, int64_t)>& masked) {
  const LabelFont small = SmallFont(state);
  float two = small.Measure("0.00").x, four = 0;
  for (int64_t i = 0; i < m.rows(); ++i)
    for (int64_t j = 0; j < m.cols(); ++j) {
      const bool is_masked = masked && masked(i, j);
      const float v = m.at(i, j);
      two = std::max(two, small.Measure(ShortestCellText(stage, v, is_masked)).x);
      if (!is_masked && stage != Stage::kMask)
        four = std::max(four, small.Measure(FormatNumber(v, NumberStyle::kFixed, 4)).x);
    }
  // PaintValues leaves a pixel each side; a little more keeps neighbours apart.
  return {std::ceil(two + 8), std::ceil(std::max(two, four) + 12)};
}

bool HeatmapPrintsValues(const AppState& state, HeatmapSlot& slot, const HeatmapViewSpec& view,
                         ImVec2 size) {
  EnsureSpec(slot, ViewPresentation(state, slot, view));
  const CellSource m = view.cells();
  if (m.empty() || !slot.spec.values_wanted) return false;
  const LabelFont small = SmallFont(state);
  ViewLayout L;
  if (!LayOutSlot(slot, view, m, small, ImVec2(0, 0), size, L)) return false;
  std::vector<std::string> printed;
  std::vector<uint8_t> masks;
  return CellTexts(slot.spec, view, m, small, L, printed, masks);
}

HeatmapFrame MeasureHeatmapFrame(const AppState& state, HeatmapSlot& slot,
                                 const HeatmapViewSpec& view, int rows, int cols, float cell_w) {
  EnsureSpec(slot, ViewPresentation(state, slot, view));
  const LabelFont small = SmallFont(state);
  MeasureLabels(slot, view, small, rows, cols);
  HeatmapFrame f;
  f.left = RowLabelWidth(slot, view, small);
  f.right = RightWidth(BarSpec(slot, view), small, view.keep_masked_room);
  f.top = ImGui::GetTextLineHeight() + 4 +
          ColumnLabelHeight(slot, small, slot.col_label_w + 4 > cell_w) + 2;
  f.cell_h = small.size + 4;
  const float legend_h = LegendHeight(BarSpec(slot, view), small, view.keep_masked_room);
  // The legends under a colorbar at least 60 pixels tall must fit beside the image.
  const HeatmapSpec* bar = BarSpec(slot, view);
  f.min_image_h = !bar               ? 0.0f
                  : bar->mask_legend ? legend_h
                                     : std::min(60.0f, rows * f.cell_h) + legend_h;
  return f;
}

HeatmapViewHover DrawHeatmapView(const AppState& state, HeatmapSlot& slot,
                                 const HeatmapViewSpec& view, ImVec2 origin, ImVec2 size) {
  EnsureSpec(slot, ViewPresentation(state, slot, view));
  slot.thumbnail = view.thumbnail;
  slot.scrolls = ImGui::GetScrollMaxY() > 0;
  if (!view.frozen) slot.printed.clear();  // frozen: the last printed values stay on record
  const float line = ImGui::GetTextLineHeight();
  if (view.thumbnail) return DrawThumbnail(state, slot, view, origin, size, line);
  const LabelFont small = SmallFont(state);
  HeatmapViewHover hover;
  hover.title_clicked = PaintHeading(slot.spec, view, origin, size, line);
  const CellSource m = view.cells();
  if ((m.empty() && !view.frozen) || !slot.gpu.has_values()) {
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + line * 2));
    ImGui::TextDisabled("%s", view.empty_text);
    slot.image_min = slot.image_max = ImVec2(0, 0);
    return hover;
  }
  ViewLayout L;
  if (!LayOutSlot(slot, view, m, small, origin, size, L)) {
    slot.image_min = slot.image_max = ImVec2(0, 0);
    return hover;
  }
  slot.image_min = L.p0;
  slot.image_max = L.p1;
  slot.shown = L.win;
  const ImVec2 clip0 = ImGui::GetWindowDrawList()->GetClipRectMin();
  const ImVec2 clip1 = ImGui::GetWindowDrawList()->GetClipRectMax();
  slot.visible = L.p0.x >= clip0.x && L.p0.y >= clip0.y && L.p1.x <= clip1.x && L.p1.y <= clip1.y;
  PaintImage(state, slot, view, L);
  // Frozen: no values (the matrix is being rewritten); they print again once the run is shown.
  const bool printed = view.frozen || PaintValues(slot.spec, view, m, small, L, slot.printed);
  PaintZoomNote(slot, view, small, L, printed, origin.x + size.x, origin.y + size.y);
  PaintLabels(slot.spec, view, small, L, slot.col_label_w);
  if (const HeatmapSpec* bar = BarSpec(slot, view)) PaintColorbarAndLegends(state, *bar, small, L);
  const ImRect minimap = MinimapRect(slot.zoom, L);
  const HeatmapViewHover cells = TrackHover(view, L);
  ZoomAndPan(slot, view, L, minimap);
  const bool on_minimap = minimap.Contains(ImGui::GetIO().MousePos);
  hover.active = cells.active && !on_minimap;
  hover.row = cells.row;
  hover.col = cells.col;
  PaintHighlights(view, L);
  PaintMinimap(state, slot, view, L, minimap);
  if (on_minimap && ImGui::IsItemHovered())
    Tip("The whole map; the outlined part is shown. Click or drag here to move there.");
  return hover;
}

}  // namespace attnlab::gui
