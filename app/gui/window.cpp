// window.cpp: see window.h. Layout for 1280 x 800 and up:
//
//   +--------------------------------------------------------------+
//   | File Edit Presets Help                                       |
//   +-------------+------------------------------------------------+
//   | Input       | toolbar: head, batch, colours, numbers, export |
//   | Projections | scores      mask        logits                 |
//   | Attention   | weights     dropped     context                |
//   |  (scrolls)  +------------------------+-----------------------+
//   |             | softmax peaking        | why 1/sqrt(d_k)       |
//   +-------------+------------------------+-----------------------+
//   | status: error or last message                 sizes, recomputed|
//   +--------------------------------------------------------------+
#include "gui/window.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gui/app_state.h"
#include "gui/export.h"
#include "gui/gfx/gl.h"  // GLFW key codes (ImGui 1.86 indexes keys by the backend's codes)
#include "gui/panels/panels.h"

namespace attnlab::gui {
namespace {

bool Pressed(int glfw_key) { return ImGui::IsKeyPressed(glfw_key, false); }

/// Ctrl+Z / Ctrl+Y / Ctrl+Shift+Z, Ctrl+O, Ctrl+S, Ctrl+E, Ctrl+Q. While a text field has the
/// keyboard, Ctrl+Z belongs to the field.
void HandleShortcuts(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl || state.dialog.kind != DialogKind::kNone) return;
  const bool typing = io.WantTextInput;
  if (!typing && Pressed(GLFW_KEY_Z)) Emit(state, io.KeyShift ? Action{Redo{}} : Action{Undo{}});
  if (!typing && Pressed(GLFW_KEY_Y)) Emit(state, Redo{});
  if (Pressed(GLFW_KEY_O)) state.dialog = DialogState{DialogKind::kOpen, true, state.scenario_path};
  if (Pressed(GLFW_KEY_S)) {
    if (state.scenario_path.empty())
      state.dialog = DialogState{DialogKind::kSaveAs, true, "scenario.json"};
    else
      Emit(state, SaveScenario{state.scenario_path});
  }
  if (Pressed(GLFW_KEY_E)) {
    const Stage stage = state.hover.active ? state.hover.stage : Stage::kWeights;
    state.dialog =
        DialogState{DialogKind::kExport, true, DefaultExportName(state, stage), StageIndex(stage)};
  }
  if (Pressed(GLFW_KEY_Q)) Emit(state, Quit{});
}

/// A titled section of the controls column.
bool Section(const char* title, const char* tip, bool open_at_start) {
  const bool open =
      ImGui::CollapsingHeader(title, open_at_start ? ImGuiTreeNodeFlags_DefaultOpen : 0);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
  return open;
}

}  // namespace

std::string HeatmapLayoutJson(const AppState& state) {
  nlohmann::json maps = nlohmann::json::array();
  for (int i = 0; i < kStageCount; ++i) {
    const HeatmapSlot& slot = state.heatmaps[i];
    if (!slot.gpu.has_values() || slot.image_max.x <= slot.image_min.x) continue;
    maps.push_back({{"stage", StageName(StageAt(i))},
                    {"x0", slot.image_min.x},
                    {"y0", slot.image_min.y},
                    {"x1", slot.image_max.x},
                    {"y1", slot.image_max.y},
                    {"rows", slot.gpu.rows()},
                    {"cols", slot.gpu.cols()}});
  }
  return nlohmann::json{{"heatmaps", maps}}.dump(1) + "\n";
}

void ApplyStyle() {
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
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
}

void DrawMainWindow(AppState& state) {
  // Let go of the widget being dragged or typed in: the next edit is a new undo step.
  if (!ImGui::IsAnyItemActive() && !state.script_drag) CloseUndoStep(state);
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) state.paint.active = false;
  state.hover_next = HoverCell{};

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
  const float left_w = std::clamp(avail.x * 0.25f, 300.0f, 420.0f);
  const float right_w = avail.x - left_w - style.ItemSpacing.x;
  const float bottom_h = std::clamp(body_h * 0.31f, 200.0f, 340.0f);

  // -- left: the controls
  ImGui::BeginChild("controls", ImVec2(left_w, body_h), true);
  ImGui::PushItemWidth(-ImGui::GetFontSize() * 6.5f);
  // Attention first: its multiplier, mask and normalization are what a learner plays with most.
  if (Section("Attention",
              "From scores to weights: scaling, temperature, mask, normalization, dropout.", true))
    DrawAttentionPanel(state);
  if (Section("Input", "Where the token embeddings X come from.", true)) DrawInputPanel(state);
  if (Section("Projections", "Q = X W_query, K = X W_key, V = X W_value.", false))
    DrawProjectionPanel(state);
  ImGui::PopItemWidth();
  ImGui::EndChild();

  // -- right: heatmaps, then peaking and variance side by side
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::BeginChild("heatmaps", ImVec2(right_w, body_h - bottom_h - style.ItemSpacing.y), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawHeatmapsPanel(state);
  ImGui::EndChild();
  const float half = (right_w - style.ItemSpacing.x) * 0.5f;
  ImGui::BeginChild("peaking", ImVec2(half, bottom_h), true, ImGuiWindowFlags_NoScrollbar);
  DrawPeakingPanel(state);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("variance", ImVec2(half, bottom_h), true, ImGuiWindowFlags_NoScrollbar);
  DrawVariancePanel(state);
  ImGui::EndChild();
  ImGui::EndGroup();

  DrawStatusBar(state);
  DrawFileDialogs(state);
  HandleShortcuts(state);
  ImGui::End();

  // The hover found this frame drives next frame's highlights; the peaking row follows it.
  state.hover = state.hover_next;
  if (state.hover.active && state.hover.row != state.row) Emit(state, SelectRow{state.hover.row});
}

}  // namespace attnlab::gui
