// menu_bar_panel.cpp: File, Edit, Presets and Help menus of the main window.
#include "attnlab/presets.h"
#include "gui/app_state.h"
#include "gui/export.h"
#include "gui/panels/panels.h"
#include "gui/stage_info.h"

namespace attnlab::gui {

void DrawMenuBar(AppState& state) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open scenario...", "Ctrl+O")) {
      state.dialog = DialogState{DialogKind::kOpen, true, state.scenario_path};
    }
    if (ImGui::MenuItem("Save scenario", "Ctrl+S")) {
      if (state.scenario_path.empty())
        state.dialog = DialogState{DialogKind::kSaveAs, true, "scenario.json"};
      else
        Emit(state, SaveScenario{state.scenario_path});
    }
    if (ImGui::MenuItem("Save scenario as...")) {
      state.dialog =
          DialogState{DialogKind::kSaveAs, true,
                      state.scenario_path.empty() ? "scenario.json" : state.scenario_path};
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Export weights heatmap...", "Ctrl+E")) {
      state.dialog =
          DialogState{DialogKind::kExport, true, DefaultExportName(state, Stage::kWeights),
                      StageIndex(Stage::kWeights)};
    }
    if (ImGui::MenuItem("Export all heatmaps...")) {
      state.dialog = DialogState{DialogKind::kExportAll, true, "attention-figures"};
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) Emit(state, Quit{});
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Edit")) {
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, !state.history.undo.empty())) Emit(state, Undo{});
    if (ImGui::MenuItem("Redo", "Ctrl+Y", false, !state.history.redo.empty())) Emit(state, Redo{});
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Presets")) {
    for (const PresetInfo& p : Presets()) {
      if (ImGui::MenuItem(p.id.c_str(), nullptr, p.id == state.preset_id))
        Emit(state, LoadPresetAction{p.id});
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.title.c_str());
    }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(
        "Attention Lab computes self-attention exactly as PyTorch does: the same seed as a "
        "notebook gives the same numbers.\n\n"
        "Pipeline: X -> Q, K, V = X W -> scores = Q K^T -> logits (scaled, masked) -> weights "
        "(softmax per row) -> context = weights V.\n\n"
        "Hover a heatmap cell to see how its number was made; the hovered query row is "
        "outlined in every heatmap. With a custom mask, click or drag on the heatmaps to paint "
        "it. Right-click a heatmap to export it.\n\n"
        "Keys: Ctrl+Z undo, Ctrl+Y redo, Ctrl+O open, Ctrl+S save, Ctrl+E export the heatmap "
        "under the mouse.");
    ImGui::PopTextWrapPos();
    ImGui::EndMenu();
  }
  // The undo depth on the right, as a quiet reminder that every edit can be taken back.
  char info[64];
  std::snprintf(info, sizeof info, "undo %zu  redo %zu", state.history.undo.size(),
                state.history.redo.size());
  ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(info).x - ImGui::GetFontSize());
  ImGui::TextDisabled("%s", info);
  ImGui::EndMenuBar();
}

}  // namespace attnlab::gui
