// menu_bar_panel.cpp: File (with Open Recent), Edit, View, Presets and Help (with About) menus of
// the main window, and the view switch (Heatmaps | Trick | Compare | Code) over the central area,
// as a workspace bar.
#include <algorithm>
#include <filesystem>

#include "attnlab/base/cpu_level.h"
#include "attnlab/model/presets.h"
#include "gui/actions/export.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

/// The view switch: tabs over the central column, the current one lit.
void DrawViewSwitch(AppState& state) {
  const ScreenRect& controls = state.controls_rect;
  const float x = controls.valid()
                      ? controls.max.x + ImGui::GetStyle().ItemSpacing.x - ImGui::GetWindowPos().x
                      : ImGui::GetCursorPosX() + ImGui::GetFontSize();
  ImGui::SameLine(std::max(x, ImGui::GetCursorPosX() + ImGui::GetFontSize()));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ScreenRect all;
  // The tabs' padding shrinks (to 0.3 em a side) so that all of them fit left of the undo/redo
  // counts on a narrow window or at a large zoom.
  float texts = 0;
  for (const CentralViewRow& v : kCentralViews) texts += ImGui::CalcTextSize(v.tab).x + 2;
  const float room = ImGui::GetWindowWidth() - ImGui::GetCursorPosX() -
                     ImGui::CalcTextSize("undo 999  redo 999").x - ImGui::GetFontSize();
  const float pad = std::clamp((room - texts) / kCentralViewCount, ImGui::GetFontSize() * 0.6f,
                               ImGui::GetFontSize() * 1.6f);
  for (int k = 0; k < kCentralViewCount; ++k) {
    const CentralViewRow& v = kCentralViews[k];
    const std::string keys = ViewKeys(v.view);
    const bool selected = state.central == v.view;
    const ImVec2 text = ImGui::CalcTextSize(v.tab);
    const ImVec2 size(text.x + pad, ImGui::GetFrameHeight());
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::PushID(k);
    const bool clicked = ImGui::InvisibleButton("##view", size);
    const bool hovered = ImGui::IsItemHovered();
    ImGui::PopID();
    const ImVec2 q(p.x + size.x, p.y + size.y);
    if (selected)
      dl->AddRectFilled(p, q, ImGui::GetColorU32(ImGuiCol_TabActive), 4.0f,
                        ImDrawFlags_RoundCornersTop);
    else if (hovered)
      dl->AddRectFilled(p, q, ImGui::GetColorU32(ImGuiCol_TabHovered, 0.5f), 4.0f,
                        ImDrawFlags_RoundCornersTop);
    if (selected)
      dl->AddLine(ImVec2(p.x + 2, q.y - 1), ImVec2(q.x - 2, q.y - 1), IM_COL32(255, 170, 60, 255),
                  2.0f);
    dl->AddText(ImVec2(p.x + (size.x - text.x) * 0.5f, p.y + (size.y - text.y) * 0.5f),
                ImGui::GetColorU32(selected ? ImGuiCol_Text : ImGuiCol_TextDisabled), v.tab);
    if (hovered) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26.0f);
      if (!keys.empty())
        ImGui::Text("%s  (%s)", v.menu, keys.c_str());
      else
        ImGui::TextUnformatted(v.menu);
      ImGui::TextDisabled("%s", v.tip);
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    if (clicked && !selected) Emit(state, SetView{v.view});
    if (k == 0) all.min = p;
    all.max = q;
    ImGui::SameLine(0, 2);
  }
  state.views_rect = all;
}

/// File > Open Recent: the last files opened or saved, newest first, and Clear.
void DrawRecentMenu(AppState& state) {
  if (!ImGui::BeginMenu("Open recent", !state.recent_files.empty())) return;
  for (size_t i = 0; i < state.recent_files.size(); ++i) {
    const std::string& path = state.recent_files[i];
    const std::string name = std::filesystem::path(path).filename().string();
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::MenuItem(name.c_str())) Emit(state, OpenScenario{path});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
    ImGui::PopID();
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Clear the list")) Emit(state, ClearRecentFiles{});
  ImGui::EndMenu();
}

void DrawFileMenu(AppState& state) {
  if (!ImGui::BeginMenu("File")) return;
  if (ImGui::MenuItem("Open scenario...", "Ctrl+O")) Emit(state, OpenDialog{DialogKind::kOpen});
  DrawRecentMenu(state);
  if (ImGui::MenuItem("Save scenario", "Ctrl+S")) Emit(state, Save{});
  if (ImGui::MenuItem("Save scenario as...")) Emit(state, OpenDialog{DialogKind::kSaveAs});
  ImGui::Separator();
  if (ImGui::MenuItem("Export weights heatmap...", "Ctrl+E"))
    Emit(state, OpenDialog{DialogKind::kExport, Stage::kWeights});
  if (ImGui::MenuItem("Export all heatmaps...")) Emit(state, OpenDialog{DialogKind::kExportAll});
  ImGui::Separator();
  if (ImGui::MenuItem("Quit", "Ctrl+Q")) Emit(state, Quit{});
  ImGui::EndMenu();
}

/// Help > About: the version (the CMake project's), the kernels' instruction-set level and the
/// license.
void DrawAboutMenu() {
  if (!ImGui::BeginMenu("About Attention Lab")) return;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 26.0f);
  ImGui::TextUnformatted("Attention Lab " ATTNLAB_VERSION);
  // What is exact, said as docs/exactness.md says it: the draws bit for bit, the stages to the
  // printed digits (the last float32 bit may differ where a sum runs in another order).
  ImGui::TextDisabled(
      "Self-attention you can play with: PyTorch's random draws bit for bit, every stage to "
      "the digits PyTorch prints.");
  ImGui::TextDisabled("Kernels: %s (the best this CPU runs: %s)", Name(ActiveCpuLevel()),
                      Name(BestCpuLevel()));
  ImGui::Separator();
  ImGui::TextUnformatted(
      "Copyright (c) 2026 Attention Lab contributors. Released under the MIT License: free to "
      "use, copy, modify and share, with the copyright and license notice kept; provided "
      "\"as is\", without warranty of any kind. The full text is in LICENSE (in a package: "
      "/usr/share/doc/attention-lab/copyright).");
  ImGui::Separator();
  ImGui::TextDisabled(
      "The guide, the scenario format and the generator notes: docs/ "
      "(/usr/share/doc/attention-lab/ when installed).");
  ImGui::PopTextWrapPos();
  ImGui::EndMenu();
}

}  // namespace

void DrawMenuBar(AppState& state) {
  if (!ImGui::BeginMenuBar()) return;
  DrawFileMenu(state);
  if (ImGui::BeginMenu("Edit")) {
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, !state.history.undo.empty())) Emit(state, Undo{});
    if (ImGui::MenuItem("Redo", "Ctrl+Y", false, !state.history.redo.empty())) Emit(state, Redo{});
    ImGui::Separator();
    if (ImGui::MenuItem("Check against my output...")) Emit(state, CheckOutput{CheckOutput::kOpen});
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (const CentralViewRow& v : kCentralViews) {
      if (ImGui::MenuItem(v.menu, ViewKeys(v.view).c_str(), state.central == v.view))
        Emit(state, SetView{v.view});
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.tip);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Zoom in", "Ctrl+=")) Emit(state, SetZoom{state.zoom + 0.1f});
    if (ImGui::MenuItem("Zoom out", "Ctrl+-")) Emit(state, SetZoom{state.zoom - 0.1f});
    if (ImGui::MenuItem("Actual size", "Ctrl+0", state.zoom == 1.0f)) Emit(state, SetZoom{1.0f});
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Zoom %d%%: fonts and spacing for a projector or a small screen; "
          "remembered.",
          static_cast<int>(state.zoom * 100 + 0.5f));
    ImGui::Separator();
    if (ImGui::MenuItem("Copy PyTorch code", "Ctrl+Shift+C")) Emit(state, CopyCode{});
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Presets")) {
    DrawPresetItems(state, true);
    ImGui::Separator();
    if (ImGui::BeginMenu(PresetGroupTitle(PresetGroup::kBugGallery))) {
      DrawBugGalleryItems(state);
      ImGui::EndMenu();
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Classic attention mistakes, each beside its fix (the Compare view).");
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Guided tour", "F1", state.tour.active))
      Emit(state, TourCommand{state.tour.active ? TourCommand::kSkip : TourCommand::kStart});
    DrawAboutMenu();
    ImGui::Separator();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
    ImGui::TextUnformatted(
        "Attention Lab draws PyTorch's random numbers bit for bit and computes every stage as "
        "PyTorch does: the same seed as a notebook gives the same printed numbers. Where a sum "
        "runs in another order than PyTorch's (a BLAS, FMA), a value can differ in its last "
        "float32 bit (docs/exactness.md).\n\n"
        "Pipeline: X -> Q, K, V = X W -> scores = Q K^T -> logits (scaled, masked) -> weights "
        "(softmax per row) -> context = weights V.\n\n"
        "Hover a heatmap cell to see how its number was made; the hovered query row is "
        "outlined in every heatmap. With a custom mask, click or drag on the heatmaps to paint "
        "it. Right-click a heatmap to export it.\n\n"
        "Keys: Ctrl+Z undo, Ctrl+Y redo, Ctrl+O open, Ctrl+S save, Ctrl+E export the heatmap "
        "under the mouse, Ctrl+1..9 the views, Ctrl+Shift+C copy the PyTorch code, Ctrl+= / "
        "Ctrl+- zoom, Esc leaves a focused stage, F1 the guided tour. Tab and the arrow keys "
        "move between controls, Space or Enter uses one.");
    ImGui::PopTextWrapPos();
    ImGui::EndMenu();
  }
  DrawViewSwitch(state);
  // The undo depth on the right, as a quiet reminder that every edit can be taken back.
  char info[64];
  std::snprintf(info, sizeof info, "undo %zu  redo %zu", state.history.undo.size(),
                state.history.redo.size());
  const float x = ImGui::GetWindowWidth() - ImGui::CalcTextSize(info).x - ImGui::GetFontSize();
  // Only where the view tabs leave room (Edit > Undo says the same on a crowded bar).
  if (!state.views_rect.valid() ||
      state.views_rect.max.x + ImGui::GetFontSize() <= ImGui::GetWindowPos().x + x) {
    ImGui::SameLine(x);
    ImGui::TextDisabled("%s", info);
  }
  ImGui::EndMenuBar();
}

}  // namespace attnlab::gui
