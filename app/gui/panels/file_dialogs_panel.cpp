// file_dialogs_panel.cpp: Open, Save As and Export. The desktop's own dialog (zenity or
// kdialog, native_dialog.h) when there is one; else, or when it fails, small ImGui popups with a
// path field: type or paste a path, or pick a .json file of the folder. Save As asks before
// replacing a file ("Replace file?").
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>

#include "gui/app_state.h"
#include "gui/export.h"
#include "gui/native_dialog.h"
#include "gui/panels/panels.h"
#include "gui/session.h"
#include "gui/stage_info.h"
#include "gui/widgets.h"

namespace attnlab::gui {
namespace {

const char* Title(DialogKind kind) {
  switch (kind) {
    case DialogKind::kOpen:
      return "Open scenario";
    case DialogKind::kSaveAs:
      return "Save scenario as";
    case DialogKind::kExport:
      return "Export heatmap as PNG";
    case DialogKind::kExportAll:
      return "Export all heatmaps as PNG";
    case DialogKind::kExportCompare:
      return "Export compare heatmap as PNG";
    case DialogKind::kReplace:
      return "Replace file?";
    case DialogKind::kSaveNotebook:
      return "Save the program as a notebook (.ipynb)";
    case DialogKind::kNone:
      break;
  }
  return "";
}

/// The .json files in the folder of `path` (or the working folder), for the Open dialog.
std::vector<std::string> JsonFilesNear(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(ExpandPath(path)).parent_path();
  if (dir.empty()) dir = ".";
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".json")
      files.push_back(it->path().lexically_normal().string());
  std::sort(files.begin(), files.end());
  if (files.size() > 200) files.resize(200);
  return files;
}

/// "PATH already exists. Replace it?" before Save As writes over a file.
void DrawReplaceQuestion(AppState& state, bool open) {
  ImGui::TextWrapped("%s already exists.", AbsolutePath(ExpandPath(state.dialog.path)).c_str());
  ImGui::TextUnformatted(state.dialog.replacing == DialogKind::kSaveNotebook
                             ? "Replace it with the program as a notebook?"
                             : "Replace it with the scenario on screen?");
  const float width = ImGui::GetFontSize() * 6;
  const bool replace = ImGui::Button("Replace", ImVec2(width, 0));
  ImGui::SameLine();
  const bool keep = ImGui::Button("Cancel", ImVec2(width, 0)) || !open;
  if (replace || keep) {
    Emit(state, ConfirmReplace{replace});
    state.dialog.kind = DialogKind::kNone;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace

void DrawFileDialogs(AppState& state) {
  PollNativeDialog(state);
  DialogState& d = state.dialog;
  if (d.kind == DialogKind::kNone || d.native) return;  // the desktop's dialog is up
  const char* title = Title(d.kind);
  if (d.just_opened) {
    ImGui::OpenPopup(title);
    d.just_opened = false;
  }
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34, 0), ImGuiCond_Appearing);
  bool open = true;
  if (!ImGui::BeginPopupModal(title, &open, ImGuiWindowFlags_NoSavedSettings)) {
    d.kind = DialogKind::kNone;  // closed with Escape or the x
    return;
  }
  if (d.kind == DialogKind::kReplace) return DrawReplaceQuestion(state, open);
  if (d.kind == DialogKind::kExport) {
    int stage = d.stage;
    const char* names[kStageCount];
    for (int i = 0; i < kStageCount; ++i) names[i] = StageName(StageAt(i));
    if (ImGui::Combo("heatmap", &stage, names, kStageCount)) d.stage = stage;
    Tip("Which stage to export (of the head and batch on screen).");
  }
  if (d.kind == DialogKind::kExportCompare) {
    int map = d.stage;
    const char* names[] = {"A", "B", "A \xE2\x88\x92 B (difference)"};
    if (ImGui::Combo("heatmap", &map, names, 3)) {
      d.stage = map;
      d.path = DefaultCompareExportName(state, static_cast<CompareMap>(map));
    }
    Tip("Which heatmap of the compare view to export, as it is on screen.");
  }
  const char* label = d.kind == DialogKind::kExportAll ? "folder" : "path";
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("folder").x - ImGui::GetStyle().ItemSpacing.x);
  const bool enter = ImGui::InputText(label, &d.path, ImGuiInputTextFlags_EnterReturnsTrue);
  Tip("A file path, relative to the folder the app was started in, or absolute; ~/ is your "
      "home folder. Files are written atomically.");
  ImGui::TextDisabled("-> %s", AbsolutePath(ExpandPath(d.path)).c_str());
  if (d.kind == DialogKind::kOpen) {
    const std::vector<std::string> files = JsonFilesNear(d.path);
    if (!files.empty() &&
        ImGui::BeginListBox("##files",
                            ImVec2(-FLT_MIN, ImGui::GetTextLineHeightWithSpacing() * 6))) {
      for (const std::string& f : files)
        if (ImGui::Selectable(f.c_str(), f == d.path)) d.path = f;
      ImGui::EndListBox();
    }
  }
  const char* verb =
      d.kind == DialogKind::kOpen ? "Open" : (d.kind == DialogKind::kSaveAs || d.kind == DialogKind::kSaveNotebook ? "Save" : "Export");
  const bool confirm = ImGui::Button(verb, ImVec2(ImGui::GetFontSize() * 6, 0)) || enter;
  ImGui::SameLine();
  const bool cancel = ImGui::Button("Cancel", ImVec2(ImGui::GetFontSize() * 6, 0)) || !open;
  if (confirm && !d.path.empty()) Emit(state, ChooseFile{d.kind, d.path, d.stage});
  if ((confirm && !d.path.empty()) || cancel) {
    d.kind = DialogKind::kNone;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace attnlab::gui
