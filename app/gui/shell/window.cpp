// window.cpp: see window.h. Layout for 1280 x 800 and up:
//
//   +--------------------------------------------------------------+
//   | File Edit View Presets Help  [Heatmaps|Trick|Compare|Code]   |
//   +-------------+------------------------------------------------+
//   | Attention   | toolbar: head, batch, colours, numbers, export |
//   | Input       | scores      mask        logits                 |
//   | Projections | weights     dropped     context                |
//   |  (scrolls)  +------------------------+-----------------------+
//   |             | softmax peaking        | why 1/sqrt(d_k)       |
//   +-------------+------------------------+-----------------------+
//   | status: error or last message                 sizes, recomputed|
//   +--------------------------------------------------------------+
//
// The view switch in the menu bar (or Ctrl+1..4) puts the averaging trick, the compare view or
// the PyTorch code in place of the heatmaps and the two panels under them; the controls stay, so
// every view follows the edits live. The guided tour's card floats over the grid's dropout slot.
#include "gui/shell/window.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gui/actions/apply.h"
#include "gui/actions/export.h"
#include "gui/gfx/gl.h"  // GLFW key codes (ImGui 1.86 indexes keys by the backend's codes)
#include "gui/gfx/script_fonts.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/session.h"
#include "gui/state/tour.h"
#include "gui/widgets/control_count.h"
#include "gui/widgets/stage_layout.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

bool Pressed(int glfw_key) { return ImGui::IsKeyPressed(glfw_key, false); }

/// Ctrl+Z / Ctrl+Y / Ctrl+Shift+Z, Ctrl+O, Ctrl+S, Ctrl+E, Ctrl+Q, Ctrl+1..9 (views),
/// Ctrl+Shift+C (copy the code), Ctrl+C (the map under the mouse as print() writes it), Ctrl+= /
/// Ctrl+- / Ctrl+0 (zoom), F1 (the tour), Esc (leave a focused stage). While a text field has the
/// keyboard, Ctrl+Z belongs to the field.
void HandleShortcuts(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (state.dialog.kind != DialogKind::kNone) return;
  if (Pressed(GLFW_KEY_F1)) Emit(state, TourCommand{TourCommand::kStart});
  if (Pressed(GLFW_KEY_ESCAPE) && state.focus && !io.WantTextInput && !ImGui::IsAnyItemActive())
    Emit(state, SetFocus{});
  if (!io.KeyCtrl) return;
  const bool typing = io.WantTextInput;
  for (int k = 0; k < std::min(kCentralViewCount, 9); ++k)  // Ctrl+1..9; Ctrl+0 is zoom
    if (Pressed(GLFW_KEY_1 + k)) Emit(state, SetView{static_cast<CentralView>(k)});
  if (io.KeyShift && Pressed(GLFW_KEY_C)) Emit(state, CopyCode{});
  // Ctrl+C on a map (the one under the mouse): its stage as print() writes it.
  if (!io.KeyShift && !typing && state.hover.active && Pressed(GLFW_KEY_C))
    Emit(state, CopyStagePrint{state.hover.stage});
  if (!typing && Pressed(GLFW_KEY_Z)) Emit(state, io.KeyShift ? Action{Redo{}} : Action{Undo{}});
  if (!typing && Pressed(GLFW_KEY_Y)) Emit(state, Redo{});
  if (Pressed(GLFW_KEY_O)) Emit(state, OpenDialog{DialogKind::kOpen});
  if (Pressed(GLFW_KEY_S)) Emit(state, Save{});
  if (Pressed(GLFW_KEY_E))
    Emit(state,
         OpenDialog{DialogKind::kExport, state.hover.active ? state.hover.stage : Stage::kWeights});
  if (Pressed(GLFW_KEY_Q)) Emit(state, Quit{});
  if (Pressed(GLFW_KEY_EQUAL) || Pressed(GLFW_KEY_KP_ADD)) Emit(state, SetZoom{state.zoom + 0.1f});
  if (Pressed(GLFW_KEY_MINUS) || Pressed(GLFW_KEY_KP_SUBTRACT))
    Emit(state, SetZoom{state.zoom - 0.1f});
  if (Pressed(GLFW_KEY_0)) Emit(state, SetZoom{1.0f});
}

/// A titled section of the controls column.
bool Section(const char* title, const char* tip, bool open_at_start) {
  const bool open =
      ImGui::CollapsingHeader(title, open_at_start ? ImGuiTreeNodeFlags_DefaultOpen : 0);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
  return open;
}

}  // namespace

namespace {

/// {"<key>": name, "x0".."y1", "rows", "cols"} of a slot drawn last frame, or null.
nlohmann::json SlotJson(const char* key, const std::string& name, const HeatmapSlot& slot) {
  if (!slot.gpu.has_values() || slot.image_max.x <= slot.image_min.x) return nullptr;
  return {{key, name},
          {"x0", slot.image_min.x},
          {"y0", slot.image_min.y},
          {"x1", slot.image_max.x},
          {"y1", slot.image_max.y},
          {"rows", slot.gpu.rows()},
          {"thumbnail", slot.thumbnail},
          {"scrolls", slot.scrolls},
          {"visible", slot.visible},
          {"printed", slot.printed},
          {"cols", slot.gpu.cols()},
          {"view", {slot.shown.row0, slot.shown.col0, slot.shown.rows, slot.shown.cols}},
          {"zoom", slot.zoom.factor},
          {"texels", slot.gpu.sampled_texels()},
          {"spec", slot.has_spec ? HeatmapSpecJson(slot.spec) : nlohmann::json()}};
}

/// Each axis label as drawn (VisualOrder) with the glyphs each font lacks (drawn "?"), and the
/// fallback font files merged into the atlas: the window's text read back.
nlohmann::json TokenLabelsJson(const AppState& state) {
  nlohmann::json labels = nlohmann::json::array();
  auto missing = [](const ImFont* font, const std::string& t) {
    return font ? MissingGlyphs(*font, t) : -1;
  };
  for (const std::string& t : state.token_labels)
    labels.push_back({{"text", t},
                      {"drawn", VisualOrder(t)},
                      {"missing_glyphs",
                       {{"regular", missing(state.fonts.regular, t)},
                        {"small", missing(state.fonts.small, t)},
                        {"mono", missing(state.fonts.mono, t)}}}});
  nlohmann::json files = nlohmann::json::array();
  for (const FallbackFace& f : state.fonts.fallbacks) files.push_back(f.file);
  return {{"labels", labels}, {"fallback_fonts", files}};
}

nlohmann::json RectJson(const ScreenRect& r) {
  if (!r.valid()) return nullptr;
  return {{"x0", r.min.x}, {"y0", r.min.y}, {"x1", r.max.x}, {"y1", r.max.y}};
}

/// Forgets where the heatmaps were drawn: a view that is not drawn this frame has none.
void ForgetRects(AppState& state) {
  for (HeatmapSlot& s : state.heatmaps) s.image_min = s.image_max = ImVec2(0, 0);
  for (HeatmapSlot& s : state.head_maps) s.image_min = s.image_max = ImVec2(0, 0);
  for (HeatmapSlot& s : state.trick.weight_maps) s.image_min = s.image_max = ImVec2(0, 0);
  for (HeatmapSlot& s : state.trick.result_maps) s.image_min = s.image_max = ImVec2(0, 0);
  for (HeatmapSlot& s : state.compare.maps) s.image_min = s.image_max = ImVec2(0, 0);
  if (state.gradients.maps)
    for (int k = 0; k < GradientState::kMapCount; ++k)
      state.gradients.maps[k].image_min = state.gradients.maps[k].image_max = ImVec2(0, 0);
  for (ScreenRect& r : state.heatmap_cells) r = ScreenRect{};
  state.toolbar_items.clear();
  state.peaking_rect = state.variance_rect = state.heatmap_canvas = ScreenRect{};
}

ScreenRect LastItemRect() { return ScreenRect{ImGui::GetItemRectMin(), ImGui::GetItemRectMax()}; }

}  // namespace

std::string HeatmapLayoutJson(const AppState& state) {
  nlohmann::json maps = nlohmann::json::array(), extra = nlohmann::json::array();
  for (int i = 0; i < kStageCount; ++i) {
    nlohmann::json m = SlotJson("stage", StageName(StageAt(i)), state.heatmaps[i]);
    if (!m.is_null()) maps.push_back(m);
  }
  auto add = [&](const std::string& name, const HeatmapSlot& slot) {
    nlohmann::json m = SlotJson("name", name, slot);
    if (!m.is_null()) extra.push_back(m);
  };
  for (int i = 0; i < 4; ++i) {
    add("trick_v" + std::to_string(i + 1) + "_weights", state.trick.weight_maps[i]);
    add("trick_v" + std::to_string(i + 1) + "_result", state.trick.result_maps[i]);
  }
  for (int k = 0; k < AppState::kHeadGridMax; ++k)  // the head grid's page of heads
    add("head_weights_" + std::to_string(state.head_maps_first + k), state.head_maps[k]);
  add("compare_a", state.compare.maps[0]);
  add("compare_b", state.compare.maps[1]);
  add("compare_diff", state.compare.maps[2]);
  if (state.gradients.maps)
    for (int k = 0; k < GradientState::kMapCount; ++k)
      add(GradientState::kMapIds[k], state.gradients.maps[k]);
  nlohmann::json j = {{"heatmaps", maps}, {"views", extra}};
  j["view"] = ViewRow(state.central).name;
  j["focus"] = state.focus ? nlohmann::json(StageName(*state.focus)) : nlohmann::json();
  nlohmann::json toolbar = nlohmann::json::array();
  for (const auto& [name, rect] : state.toolbar_items) {
    nlohmann::json item = RectJson(rect);
    item["name"] = name;
    toolbar.push_back(item);
  }
  j["toolbar"] = toolbar;
  j["token_labels"] = TokenLabelsJson(state);
  j["grid_decimals"] = state.grid_decimals;
  j["controls"] = ControlCount();
  j["canvas"] = RectJson(state.heatmap_canvas);  // the maps' scrolling canvas, its visible part
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  j["window"] = {{"width", display.x}, {"height", display.y}};
  // The parts of the window a learner opens and closes (remembered in the settings), the
  // plots' rectangle and the overview canvas's visible part, and the peaking panel's rows.
  j["sections"] = {{"modern", state.modern_open}, {"plots", state.plots_open}};
  j["plots"] = RectJson(state.peaking_rect);
  j["canvas"] = RectJson(state.heatmap_canvas);
  j["row"] = {{"chosen", state.row}, {"peaking", state.peaking.row}};
  j["style"] = StyleSizesJson(ImGui::GetStyle());
  j["font_size"] = ImGui::GetFontSize();
  j["dialog"] = {{"open", state.dialog.kind != DialogKind::kNone},
                 {"path", state.dialog.path},
                 {"error", state.dialog.error}};
  j["tour"] = {{"active", state.tour.active},
               {"step", state.tour.step},
               {"task_done", state.tour.task_done},
               {"card", RectJson(state.tour.card)},
               {"target", RectJson(state.tour.target)}};
  if (state.central == CentralView::kTokens && state.tokens.shown) {
    // The Tokens view's lines as drawn: screen endpoints, head, and opacity (the weight).
    const AppState::TokensViewState& tv = state.tokens;
    nlohmann::json lines = nlohmann::json::array();
    for (const TokenLine& l : tv.drawn.lines)
      lines.push_back({{"query", l.query},
                       {"key", l.key},
                       {"head", l.head},
                       {"opacity", l.opacity},
                       {"dimmed", l.dimmed},
                       {"from", {tv.origin.x + l.x0, tv.origin.y + l.y0}},
                       {"to", {tv.origin.x + l.x1, tv.origin.y + l.y1}}});
    j["tokens"] = {{"head", tv.head}, {"lines", lines}, {"groups", tv.drawn.groups}};
  }
  return j.dump(1) + "\n";
}

bool WindowIsBusy(const AppState& state) {
  return state.training.running || state.training.playing || state.background.running ||
         state.inference.playing || state.tour.active || state.dialog.native != nullptr ||
         !state.pending.empty() || state.fonts_dirty || ImGui::IsAnyMouseDown();
}

double IdleWaitSeconds(const AppState& state, int calm_frames, double now) {
  if (calm_frames < kSettleFrames || WindowIsBusy(state)) return 0.0;
  if (ImGui::GetIO().WantTextInput) return 0.5;  // the cursor blinks
  double wait = 30.0;
  if (state.shown_version != state.autosaved_version)  // an autosave will be due
    wait = std::clamp(state.autosaved_at + AutosaveIntervalSeconds() - now, 0.05, wait);
  return wait;
}

ImGuiStyle WindowStyle(float scale) {
  ImGuiStyle style;  // ImGui's default sizes: the one base every zoom starts from
  ImGui::StyleColorsDark(&style);
  style.WindowRounding = 0;
  style.ChildRounding = 4;
  style.FrameRounding = 3;
  style.PopupRounding = 4;
  style.GrabRounding = 3;
  style.FramePadding = ImVec2(6, 3);
  style.ItemSpacing = ImVec2(7, 5);
  style.WindowPadding = ImVec2(8, 6);
  style.Colors[ImGuiCol_WindowBg] = ImVec4(0.11f, 0.11f, 0.13f, 1.0f);
  style.Colors[ImGuiCol_ChildBg] = ImVec4(0.13f, 0.13f, 0.15f, 1.0f);
  // ScaleAllSizes floors most sizes: at a small scale a size of a few pixels would reach 0,
  // which ImGui asserts against (ScrollbarSize, GrabMinSize); never below a quarter.
  style.ScaleAllSizes(std::max(scale, 0.25f));
  return style;
}

void ApplyStyle(float scale) { ImGui::GetStyle() = WindowStyle(scale); }

nlohmann::json StyleSizesJson(const ImGuiStyle& s) {
  auto v = [](const ImVec2& p) { return nlohmann::json::array({p.x, p.y}); };
  return {{"window_padding", v(s.WindowPadding)},
          {"window_rounding", s.WindowRounding},
          {"window_min_size", v(s.WindowMinSize)},
          {"child_rounding", s.ChildRounding},
          {"popup_rounding", s.PopupRounding},
          {"frame_padding", v(s.FramePadding)},
          {"frame_rounding", s.FrameRounding},
          {"item_spacing", v(s.ItemSpacing)},
          {"item_inner_spacing", v(s.ItemInnerSpacing)},
          {"cell_padding", v(s.CellPadding)},
          {"touch_extra_padding", v(s.TouchExtraPadding)},
          {"indent_spacing", s.IndentSpacing},
          {"columns_min_spacing", s.ColumnsMinSpacing},
          {"scrollbar_size", s.ScrollbarSize},
          {"scrollbar_rounding", s.ScrollbarRounding},
          {"grab_min_size", s.GrabMinSize},
          {"grab_rounding", s.GrabRounding},
          {"log_slider_deadzone", s.LogSliderDeadzone},
          {"tab_rounding", s.TabRounding},
          {"tab_min_width_for_close_button", s.TabMinWidthForCloseButton},
          {"display_window_padding", v(s.DisplayWindowPadding)},
          {"display_safe_area_padding", v(s.DisplaySafeAreaPadding)},
          {"mouse_cursor_scale", s.MouseCursorScale}};
}

namespace {

// The left column: chapter 3's controls in the order the book builds attention (the input,
// the projections with their seed and init, then scaling, mask, normalization and dropout),
// then one "Modern attention" section for the rest, closed for a new user and remembered.
void DrawControlsColumn(AppState& state, float left_w, float body_h) {
  ImGui::BeginChild("controls", ImVec2(left_w, body_h), true);
  ImGui::PushItemWidth(-ImGui::GetFontSize() * 6.5f);
  if (Section("Input", "Where the token embeddings X come from: a preset, text, a matrix.", true))
    DrawInputPanel(state);
  if (Section("Projections",
              "Q = X W_query, K = X W_key, V = X W_value: their init, seed, d_out and heads.",
              true))
    DrawProjectionPanel(state);
  if (Section("Attention",
              "From scores to weights: 1/sqrt(d_k), temperature, mask, normalization, dropout.",
              true))
    DrawAttentionPanel(state);
  ImGui::SetNextItemOpen(state.modern_open, ImGuiCond_Always);
  const bool modern =
      Section("Modern attention",
              "Beyond chapter 3: soft-capping, attention sinks, sliding-window, prefix-LM and "
              "document masks, positions (RoPE, ALiBi), precision, the generator, how the "
              "projections are drawn. Opens by itself for a preset that uses them.",
              false);
  if (modern != state.modern_open) Emit(state, SetSectionOpen{SetSectionOpen::kModern, modern});
  if (modern) DrawModernAttentionPanel(state);
  ImGui::PopItemWidth();
  ImGui::EndChild();
  state.controls_rect = LastItemRect();
}

// The heatmaps with the peaking and variance plots side by side below them; with the plots
// hidden, one line that brings them back.
void DrawHeatmapsView(AppState& state, float right_w, float body_h, float bottom_h) {
  const ImGuiStyle& style = ImGui::GetStyle();
  if (!state.plots_open) bottom_h = ImGui::GetFrameHeight();
  ImGui::BeginChild("heatmaps", ImVec2(right_w, body_h - bottom_h - style.ItemSpacing.y), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawHeatmapsPanel(state);
  ImGui::EndChild();
  if (!state.plots_open) {
    if (ImGui::Button("\xE2\x96\xB4 show the plots: softmax peaking, why 1/\xE2\x88\x9A"
                      "d_k"))
      Emit(state, SetSectionOpen{SetSectionOpen::kPlots, true});
    Tip("The chosen query row's weights and entropy against the multiplier, and why the "
        "scores are divided by \xE2\x88\x9A"
        "d_k. Remembered.");
    return;
  }
  const float half = (right_w - style.ItemSpacing.x) * 0.5f;
  ImGui::BeginChild("peaking", ImVec2(half, bottom_h), true, ImGuiWindowFlags_NoScrollbar);
  DrawPeakingPanel(state);
  ImGui::EndChild();
  state.peaking_rect = LastItemRect();
  ImGui::SameLine();
  ImGui::BeginChild("variance", ImVec2(half, bottom_h), true, ImGuiWindowFlags_NoScrollbar);
  DrawVariancePanel(state);
  ImGui::EndChild();
  state.variance_rect = LastItemRect();
}

// Each central view's panel, in kCentralViews' order (state/central_views.h). Heatmaps has
// none: DrawHeatmapsView lays it out with the two plots under it.
struct ViewDraw {
  CentralView view;
  void (*draw)(AppState&);
};
constexpr ViewDraw kDrawView[] = {
    {CentralView::kHeatmaps, nullptr},
    {CentralView::kTrick, DrawTrickPanel},
    {CentralView::kCompare, DrawComparePanel},
    {CentralView::kCode, DrawCodePanel},
    {CentralView::kGradients, DrawGradientPanel},
    {CentralView::kTraining, DrawTrainPanel},
    {CentralView::kDecode, DrawDecodePanel},
    {CentralView::kTiled, DrawTiledPanel},
    {CentralView::kTokens, DrawTokensPanel},
    {CentralView::kMicrogpt, DrawMicrogptPanel},
};
constexpr bool DrawsEveryViewInOrder() {
  if (std::size(kDrawView) != static_cast<size_t>(kCentralViewCount)) return false;
  for (int k = 0; k < kCentralViewCount; ++k)
    if (static_cast<int>(kDrawView[k].view) != k) return false;
  return true;
}
static_assert(DrawsEveryViewInOrder(), "kDrawView: one panel per central view, in order");

// The right column: the central view the learner chose (View menu, Ctrl+1..9).
void DrawCentralView(AppState& state, float right_w, float body_h, float bottom_h) {
  ImGui::BeginGroup();
  if (state.central == CentralView::kHeatmaps) {
    DrawHeatmapsView(state, right_w, body_h, bottom_h);
  } else {
    ImGui::BeginChild("view", ImVec2(right_w, body_h), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    if (!state.error.empty())  // as over the heatmaps: the view shows the last run that worked
      ErrorText("This edit cannot run: " + state.error +
                "  The view shows the last settings that ran; fix the setting or undo (Ctrl+Z).");
    if (!HasShownRun(state))
      ImGui::TextDisabled("Nothing has run yet.");
    else
      kDrawView[static_cast<int>(state.central)].draw(state);
    ImGui::EndChild();
  }
  ImGui::EndGroup();
}

}  // namespace

void DrawMainWindow(AppState& state) {
  // Let go of the widget being dragged or typed in: the next edit is a new undo step.
  if (!ImGui::IsAnyItemActive() && !state.script_drag) CloseUndoStep(state);
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) state.paint.active = false;
  state.hover_next = HoverCell{};
  ForgetRects(state);
  BeginControlCount();

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_MenuBar |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse;
  ImGui::Begin("Attention Lab", nullptr, flags);
  DrawMenuBar(state);

  const ImGuiStyle& style = ImGui::GetStyle();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float status_h = ImGui::GetFrameHeight() + style.ItemSpacing.y;
  const float body_h = avail.y - status_h;
  // Pixel sizes grow with the text (zoom and monitor scale): 16 px is the unscaled font.
  const float u = ImGui::GetFontSize() / 16.0f;
  const float left_w =
      std::min(std::clamp(avail.x * 0.25f, 300.0f * u, 420.0f * u), avail.x * 0.4f);
  const float right_w = avail.x - left_w - style.ItemSpacing.x;
  // The plots get most of the height when the learner asks (the heatmaps' canvas scrolls), and
  // give the maps the room they need for every number at 4 decimals (stage_layout.h).
  const float maps_need = state.central == CentralView::kHeatmaps && !state.plots_expanded
                              ? HeatmapsPanelNeed(state, right_w) + style.ItemSpacing.y
                              : 0.0f;
  const float bottom_h = PlotsHeight(body_h, maps_need, u, state.plots_expanded);

  DrawControlsColumn(state, left_w, body_h);
  ImGui::SameLine();
  DrawCentralView(state, right_w, body_h, bottom_h);

  DrawStatusBar(state);
  DrawFileDialogs(state);
  DrawCheckOutputPanel(state);
  HandleShortcuts(state);
  ImGui::End();
  DrawTourPanel(state);

  // The hover found this frame drives next frame's highlights and, while it lasts, the
  // peaking panel's row (PeakingRow); the chosen row stays.
  state.hover = state.hover_next;
  UpdateTourTask(state);
}

}  // namespace attnlab::gui
