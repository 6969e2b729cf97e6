// trick_panel.cpp: the averaging trick, step by step (karpathy-mathematical-trick,
// self-attention-from-scratch): four ways for token t to average tokens 0..t, one row each:
// the notebook's lines, the T x T weights they amount to, what they compute (T x C), and the
// verdict torch.allclose gives against v1. v1, v2 and v3 are the same average written three
// ways; v4, a real head, is not: it weights the past by q.k and averages V, not X. Everything
// comes from experiments.h AveragingTrick (views.h RefreshTrick); this file only draws.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "attnlab/base/text.h"
#include "gui/actions/views.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

/// What step i's weights (T x T) or result (T x C, v4: T x d_k) heatmap shows.
HeatmapContent TrickContent(const AppState& state, int i, bool weights) {
  HeatmapContent c;
  c.row_labels = state.token_labels;  // TokenLabels of the shown run's tokens
  if (weights) {
    c.stage = Stage::kWeights;
    c.title = "weights (T \u00D7 T)";
    c.help =
        "Row t: how much token t takes from each token 0..t. v1, v2 and v3 give every "
        "earlier token the same share 1/(t+1); v4 lets q\u00B7k decide.";
    c.col_labels = c.row_labels;
    return c;
  }
  c.stage = Stage::kContext;
  c.title = std::string(TrickResultName(i)) + (i == 3 ? " (T \u00D7 d_k)" : " (T \u00D7 C)");
  c.help = i == 3 ? "out = wei @ v: row t is the weighted average of the value vectors."
                  : "Row t: the average of x over tokens 0..t (C channels).";
  const Matrix& r = state.trick.steps[static_cast<size_t>(i)].result;
  for (int64_t j = 0; j < r.cols(); ++j)
    c.col_labels.push_back((i == 3 ? "d" : "c") + std::to_string(j));
  c.col_axis = "dimension";
  c.diverging = true;
  return c;
}

const ImVec4 kTrue(0.35f, 0.80f, 0.45f, 1.0f);
const ImVec4 kFalse(1.0f, 0.62f, 0.25f, 1.0f);
const ImVec4 kRounding(0.95f, 0.85f, 0.35f, 1.0f);  ///< False only by float32 rounding
const ImVec4 kTitle(0.55f, 0.75f, 1.0f, 1.0f);

/// A verdict as a coloured badge: one item (so SameLine works after it), a rounded box.
void Badge(const std::string& text, ImVec4 color) {
  const ImVec2 pad(6, 2);
  const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 q(p.x + ts.x + 2 * pad.x, p.y + ts.y + 2 * pad.y);
  ImGui::Dummy(ImVec2(q.x - p.x, q.y - p.y));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec4 fill(color.x * 0.22f, color.y * 0.22f, color.z * 0.22f, 1.0f);
  dl->AddRectFilled(p, q, ImGui::GetColorU32(fill), 4.0f);
  dl->AddRect(p, q, ImGui::GetColorU32(color), 4.0f);
  dl->AddText(ImVec2(p.x + pad.x, p.y + pad.y), ImGui::GetColorU32(color), text.c_str());
}

constexpr float kCodePadX = 6, kCodePadY = 4;  ///< CodeBox's padding around its lines

/// The notebook's lines in the mono font on a dark box.
void CodeBox(const AppState& state, const std::string& code, float width) {
  ImFont* mono = state.fonts.mono ? state.fonts.mono : ImGui::GetFont();
  ImGui::PushFont(mono);
  const ImVec2 ts = ImGui::CalcTextSize(code.c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 pad(kCodePadX, kCodePadY);
  ImGui::GetWindowDrawList()->AddRectFilled(
      p, ImVec2(p.x + std::max(width, ts.x + 2 * pad.x), p.y + ts.y + 2 * pad.y),
      IM_COL32(16, 16, 20, 255), 4.0f);
  ImGui::SetCursorScreenPos(ImVec2(p.x + pad.x, p.y + pad.y));
  ImGui::TextUnformatted(code.c_str());
  ImGui::SetCursorScreenPos(ImVec2(p.x, p.y + ts.y + 2 * pad.y + ImGui::GetStyle().ItemSpacing.y));
  ImGui::Dummy(ImVec2(0, 0));
  ImGui::PopFont();
}

/// The text column's least width: the widest step's code box (CodeBox) and the gap after it.
float CodeColumnWidth(const AppState& state) {
  ImGui::PushFont(state.fonts.mono ? state.fonts.mono : ImGui::GetFont());
  float w = 0;
  for (const TrickStep& step : state.trick.steps)
    w = std::max(w, ImGui::CalcTextSize(step.code.c_str()).x);
  ImGui::PopFont();
  return w + 2 * kCodePadX + ImGui::GetFontSize();
}

/// How the steps share the view. Side by side (text left, maps right): the text column's
/// width, the weights map's width, each step's height. When the maps are notebook-sized (at
/// most 12 x 12) they get the width their numbers need, with 4 decimals (the notebooks' print:
/// 0.1250) when the code still fits beside them, else 2. When even 2 decimals leave the code no
/// room (a narrow window), `stacked`: the maps go under each step's text, as wide as their
/// numbers need, `maps_h` tall, and the canvas scrolls. Otherwise (maps beyond 12 x 12, or no
/// room even stacked) the halves and quarters of the view.
struct TrickLayout {
  float text_w = 0, weights_w = 0, row_h = 0;
  bool stacked = false;
  float result_w = 0, maps_h = 0;  ///< stacked: the result map's width, the maps' height
};

/// The widths the trick's weights and result maps need for their numbers (4 decimals, or 2)
/// and the height of the taller; none when a map is beyond 12 x 12.
struct TrickMapsSize {
  float weights = 0, result = 0, height = 0;
};
std::optional<TrickMapsSize> MeasureTrickMaps(AppState& state, bool four) {
  TrickState& t = state.trick;
  TrickMapsSize out;
  for (int i = 0; i < 4; ++i) {
    const TrickStep& step = t.steps[static_cast<size_t>(i)];
    const Matrix* maps[2] = {&step.weights, &step.result};
    for (int k = 0; k < 2; ++k) {
      const Matrix& m = *maps[k];
      if (m.rows() > 12 || m.cols() > 12) return std::nullopt;
      const Stage stage = k == 0 ? Stage::kWeights : Stage::kContext;
      const NumberCells nc = NumberCellWidths(state, stage, CellSource{&m, nullptr}, nullptr);
      const float cell = four ? nc.max : nc.min;
      HeatmapViewSpec probe;
      probe.id = "trick";
      probe.labels_key = static_cast<int64_t>(t.version);
      HeatmapSlot& slot = k == 0 ? t.weight_maps[i] : t.result_maps[i];
      const HeatmapFrame f = MeasureHeatmapFrame(state, slot, probe, static_cast<int>(m.rows()),
                                                 static_cast<int>(m.cols()), cell);
      float& w = k == 0 ? out.weights : out.result;
      w = std::max(w, f.left + f.right + m.cols() * cell);
      out.height = std::max(out.height, f.top + std::max(m.rows() * f.cell_h, f.min_image_h) + 8);
    }
  }
  return out;
}

TrickLayout LayOutTrick(AppState& state, ImVec2 avail) {
  const float gap = 6;
  TrickLayout out;
  out.text_w = std::floor((avail.x - 12) * 0.5f);
  // The canvas ends one pixel below the last step (DrawTrickPanel): four quarters and that
  // pixel fit the view, so no scroll bar takes the maps' width.
  out.row_h = std::floor((avail.y - 3 * gap - 1) / 4);
  out.weights_w = 0;  // DrawStep's default share
  if (state.view.values == ValuesMode::kOff) return out;
  const float least_text = std::max(CodeColumnWidth(state), (avail.x - 12) * 0.36f);
  const float map_gap = ImGui::GetFontSize() * 0.5f;
  // Measured once for each number of decimals: side by side first, then stacked.
  const std::optional<TrickMapsSize> sizes[2] = {MeasureTrickMaps(state, true),
                                                 MeasureTrickMaps(state, false)};
  if (!sizes[0]) return out;  // a map beyond 12 x 12 (the same for both)
  for (const std::optional<TrickMapsSize>& m : sizes) {
    const float text_w = avail.x - 12 - (m->weights + m->result + map_gap);
    if (text_w < least_text) continue;  // no room at this width: fewer decimals, or stacked
    out.text_w = std::floor(text_w);
    out.weights_w = std::ceil(m->weights);
    out.row_h = std::max(out.row_h, m->height + 8);
    return out;
  }
  for (const std::optional<TrickMapsSize>& m : sizes) {
    if (m->weights + m->result + map_gap > avail.x - 12) continue;
    out.stacked = true;
    out.text_w = avail.x - 12;
    out.weights_w = std::ceil(m->weights);
    out.result_w = std::ceil(m->result);
    out.maps_h = m->height;
    return out;
  }
  return out;
}

/// Step i's text in a column `text_w` wide at `origin`: title and verdict, the notebook's code,
/// how far it is from v1 (and for v4, why). Returns the text's bottom (screen y).
float DrawStepText(AppState& state, int i, ImVec2 origin, float text_w) {
  const TrickStep& step = state.trick.steps[static_cast<size_t>(i)];
  const float gap = ImGui::GetFontSize();
  ImGui::SetCursorScreenPos(origin);
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + text_w - gap);
  bool shapes_differ = false;
  const std::string verdict = TrickVerdict(step, i, &shapes_differ);
  ImGui::AlignTextToFramePadding();
  ImGui::TextColored(kTitle, "%s", step.name.c_str());
  // The badge beside the name when it fits the text column, else under it (never under the
  // maps' headings).
  const float badge_w = ImGui::CalcTextSize(verdict.c_str()).x + 12;
  if (ImGui::GetItemRectMax().x + gap + badge_w <= origin.x + text_w - gap) ImGui::SameLine(0, gap);
  if (i == 0)
    ImGui::TextDisabled("%s", verdict.c_str());
  else
    Badge(verdict, step.allclose_to_v1                  ? kTrue
                   : TrickRoundingNote(step, i).empty() ? kFalse
                                                        : kRounding);
  if (i > 0)
    Tip("torch.allclose(a, b): every |a - b| <= 1e-8 + 1e-5 |b| (rtol 1e-5, atol 1e-8), as "
        "the notebook checks it.");
  CodeBox(state, step.code, text_w - gap);
  if (i == 3) {
    // With identity projections V is x itself: then only the weighting differs.
    const bool v_is_x = state.shown.projections.init == ProjectionInit::kIdentity;
    ImGui::TextWrapped("%s: a head weights the past by q\xC2\xB7k instead of equally%s",
                       TrickMaxDiff(state, step, i).c_str(),
                       v_is_x ? " (the projections are the identity here, so V = x)."
                              : ", and averages V = x W_value, not x.");
  } else if (i > 0) {
    ImGui::TextDisabled("%s", TrickMaxDiff(state, step, i).c_str());
    const std::string note = TrickRoundingNote(step, i);
    if (!note.empty()) {
      ImGui::SameLine(0, gap * 0.5f);
      ImGui::TextColored(kRounding, "only float32 rounding (?)");
      Tip(note.c_str());
    }
  }
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();

  return ImGui::GetItemRectMax().y;
}

/// One step: text on the left, its weights and its result on the right (stacked: under the
/// text, `size.y` unused). Returns the bottom of what it drew (screen y), the text's if it is
/// taller than `size`.
float DrawStep(AppState& state, int i, ImVec2 origin, ImVec2 size, const TrickLayout& lay) {
  TrickState& t = state.trick;
  const TrickStep& step = t.steps[static_cast<size_t>(i)];
  const float text_w = lay.text_w;
  const float gap = ImGui::GetFontSize();
  const float text_bottom = DrawStepText(state, i, origin, text_w);
  // -- right (stacked: below): the weights (T x T) and the result (T x C)
  const Matrix& w = step.weights;
  const Matrix& r = step.result;
  const float maps_x = lay.stacked ? origin.x : origin.x + text_w;
  const float maps_w = lay.stacked ? lay.weights_w + lay.result_w + gap * 0.5f : size.x - text_w;
  if (lay.stacked) {
    origin.y = text_bottom + 4;
    size.y = lay.maps_h;
  }
  const float weights_w = lay.weights_w > 0
                              ? lay.weights_w
                              : std::min(maps_w * 0.45f, size.y + ImGui::GetFontSize() * 4.0f);
  const int64_t labels_key = static_cast<int64_t>(t.version);

  HeatmapViewSpec ws;
  const std::string wid = "trick_w" + std::to_string(i);
  ws.id = wid.c_str();
  ws.values = &w;
  ws.labels_key = labels_key;
  ws.wheel_zoom_with_ctrl = true;  // the wheel scrolls the steps
  const HeatmapViewHoverCell& hv = t.hover;
  if (hv.active) {
    ws.highlight_row = hv.row;
    if (hv.on_weights) ws.highlight_col = hv.col;
  }
  HeatmapSlot& wslot = t.weight_maps[static_cast<size_t>(i)];
  const HeatmapViewHover wh =
      DrawHeatmapView(state, wslot, ws, ImVec2(maps_x, origin.y), ImVec2(weights_w, size.y));
  if (wh.active) {
    t.hover_next = HeatmapViewHoverCell{true, wh.row, wh.col, true};
    ImGui::SetTooltip("%s\ntoken %lld \"%s\" takes %s of token %lld \"%s\"", step.name.c_str(),
                      static_cast<long long>(wh.row), RowLabel(state, wh.row).c_str(),
                      FormatNumber(w(wh.row, wh.col), NumberStyle::kShortest).c_str(),
                      static_cast<long long>(wh.col), RowLabel(state, wh.col).c_str());
  }

  HeatmapViewSpec rs;
  const std::string rid = "trick_r" + std::to_string(i);
  rs.id = rid.c_str();
  rs.values = &r;
  rs.labels_key = labels_key;
  rs.wheel_zoom_with_ctrl = true;
  if (hv.active) rs.highlight_row = hv.row;
  HeatmapSlot& rslot = t.result_maps[static_cast<size_t>(i)];
  const float rx = maps_x + weights_w + gap * 0.5f;
  const HeatmapViewHover rh =
      DrawHeatmapView(state, rslot, rs, ImVec2(rx, origin.y), ImVec2(maps_x + maps_w - rx, size.y));
  if (rh.active) {
    t.hover_next = HeatmapViewHoverCell{true, rh.row, rh.col, false};
    ImGui::SetTooltip("%s[%lld, %lld] = %s", TrickResultName(i), static_cast<long long>(rh.row),
                      static_cast<long long>(rh.col),
                      FormatNumber(r(rh.row, rh.col), NumberStyle::kShortest).c_str());
  }
  return std::max(text_bottom, origin.y + size.y);
}

}  // namespace

void DrawTrickPanel(AppState& state) {
  TrickState& t = state.trick;
  t.hover_next = HeatmapViewHoverCell{};
  const Shape& sh = ShownShape(state);

  ImGui::TextUnformatted("The averaging trick: token t becomes the average of tokens 0..t");
  Tip("From Karpathy's \"mathematical trick in self-attention\": a loop of running means (v1) "
      "is a matrix product with a normalised lower triangle (v2), which is a softmax over a "
      "masked matrix of zeros (v3). Replace the zeros by q\xC2\xB7k and you have a head (v4).");
  ImGui::SameLine(0, ImGui::GetFontSize());
  // Wrapped beside the title: at 1024 px it ran past the window's edge.
  const std::string x_is = "x = batch " + std::to_string(std::min<int64_t>(state.batch, sh.B - 1)) +
                           " of the input: T\xC2\xA0=\xC2\xA0" + std::to_string(sh.T) +
                           ", C\xC2\xA0=\xC2\xA0" + std::to_string(sh.d_in);  // no break in "T = 8"
  const ImVec4 dim = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
  ImGui::BeginGroup();
  TextWrappedAtSpaces(x_is.c_str(), &dim);
  ImGui::EndGroup();
  Tip("v1 to v3 average the input x itself. v4 is head 0 of the current projections, with "
      "their scaling and multiplier and a causal mask. The batch selector of the heatmaps view "
      "picks the sequence.");
  if (!t.error.empty()) {
    ErrorText(t.error);
    return;
  }
  if (t.steps.size() != 4) return;

  // Upload what changed (once per run of the scenario).
  for (int i = 0; i < 4; ++i) {
    if (t.weight_maps[i].dirty)
      UploadMatrix(t.weight_maps[i], t.steps[i].weights, TrickContent(state, i, true));
    if (t.result_maps[i].dirty)
      UploadMatrix(t.result_maps[i], t.steps[i].result, TrickContent(state, i, false));
  }

  // The steps on a canvas that scrolls when their numbers need more height than the view has.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = 6;
  TrickLayout lay = LayOutTrick(state, avail);
  // The canvas scrolls (stacked steps always do): room for its scroll bar.
  if (lay.stacked || 4 * lay.row_h + 3 * gap + 1 > avail.y)
    lay = LayOutTrick(state, ImVec2(avail.x - ImGui::GetStyle().ScrollbarSize, avail.y));
  ImGui::BeginChild("trick_canvas", avail, false, ImGuiWindowFlags_NoBackground);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Each step's band behind it, drawn once its height is known (channel 0, under the step).
  ImDrawListSplitter layers;
  layers.Split(dl, 2);
  float y = origin.y;
  for (int i = 0; i < 4; ++i) {
    layers.SetCurrentChannel(dl, 1);
    const float bottom =
        DrawStep(state, i, ImVec2(origin.x + 6, y + 4), ImVec2(width - 12, lay.row_h - 8), lay);
    // A text taller than its band (a narrow text column) makes the band taller.
    const float h = std::max(lay.stacked ? 0.0f : lay.row_h, bottom + 4 - y);
    layers.SetCurrentChannel(dl, 0);
    dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(origin.x + width, y + h),
                      IM_COL32(255, 255, 255, i % 2 ? 6 : 12), 4.0f);
    y += h + (i < 3 ? gap : 0);
  }
  layers.Merge(dl);
  ImGui::SetCursorScreenPos(ImVec2(origin.x, y));
  ImGui::Dummy(ImVec2(1, 1));
  ImGui::EndChild();
  t.hover = t.hover_next;
}

}  // namespace attnlab::gui
