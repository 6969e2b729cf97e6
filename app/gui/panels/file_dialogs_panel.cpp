// file_dialogs_panel.cpp: Open, Save As and Export. The desktop's own dialog (zenity or
// kdialog, native_dialog.h) when there is one; else, or when it fails, small ImGui popups with a
// path field: type or paste a path, or pick a .json file of the folder. Save As asks before
// replacing a file ("Replace file?"). Export chooses the format, the stages (this one, a set,
// the whole pipeline), the printed size and the colorbars, with a preview of the figure.
#include <imgui.h>
#include <imgui_internal.h>  // ClearActiveID: a replaced path reloads its focused field
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "gui/actions/export.h"
#include "gui/actions/native_dialog.h"
#include "gui/gfx/gl.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/session.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

const char* Title(DialogKind kind) {
  switch (kind) {
    case DialogKind::kOpen:
      return "Open scenario";
    case DialogKind::kSaveAs:
      return "Save scenario as";
    case DialogKind::kExport:
      return "Export figure";
    case DialogKind::kExportAll:
      return "Export all heatmaps as PNG";
    case DialogKind::kExportCompare:
      return "Export compare heatmap as PNG";
    case DialogKind::kReplace:
      return "Replace file?";
    case DialogKind::kSaveNotebook:
      return "Save the program as a notebook (.ipynb)";
    case DialogKind::kExportStep:
      return "Export the step as a figure";
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

std::string PreviewKey(const AppState& state, Stage stage) {
  const ExportChoices& c = state.export_choices;
  const FigureOptions o = ChosenFigureOptions(state, c);
  std::string key = std::to_string(state.shown_version) + "/" + std::to_string(state.head) + "/" +
                    std::to_string(state.batch) + "/" + StageName(stage) + "/" +
                    std::to_string(static_cast<int>(c.stages)) + "/" + o.colormap + "/" +
                    o.sequential_colormap + "/" + o.diverging_colormap + "/" +
                    RangeModeName(o.range) + "/" + std::to_string(static_cast<int>(o.values)) +
                    "/" + ColorbarModeName(c.colorbar);
  for (Stage s : c.chosen) key += std::string("/") + StageName(s);
  return key;
}

void DrawPreview(AppState& state, Stage stage) {
  ExportPreviewState& preview = state.dialog.preview;
  const ExportChoices& c = state.export_choices;
  if (c.format == ExportFormat::kCsv || c.format == ExportFormat::kNpy) {
    ImGui::TextDisabled("CSV and NPY hold the numbers of one stage: no picture.");
    return;
  }
  const std::string key = PreviewKey(state, stage);
  // Not while a background run rewrites the stages: the preview follows its result.
  if (key != preview.key && HasShownRun(state) && ReadableStages(state)) {
    preview.key = key;
    preview.error.clear();
    try {
      const float width = ImGui::GetFontSize() * 30;
      const Image im = ExportPreview(state, stage, static_cast<int>(width));
      if (!preview.texture) glGenTextures(1, &preview.texture);
      glBindTexture(GL_TEXTURE_2D, preview.texture);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
      glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, im.width, im.height, 0, GL_RGB, GL_UNSIGNED_BYTE,
                   im.rgb.data());
      glBindTexture(GL_TEXTURE_2D, 0);
      preview.width = im.width, preview.height = im.height;
    } catch (const std::exception& e) {
      preview.error = e.what();
    }
  }
  if (!preview.error.empty()) {
    ImGui::TextWrapped("No figure: %s", preview.error.c_str());
  } else if (preview.texture) {
    ImGui::Image(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(preview.texture)),
                 ImVec2(static_cast<float>(preview.width), static_cast<float>(preview.height)));
    Tip("The figure as it will be exported (shrunk). SVG and PDF draw the same layout as "
        "vector text and shapes.");
  }
}

/// `path` with the extension of `format` (".png" ...).
std::string WithExtension(const std::string& path, ExportFormat format) {
  return std::filesystem::path(path).replace_extension(ExportExtension(format)).string();
}

/// The file name the export dialog proposes for these choices, without its extension: the
/// stage's DefaultExportName, "stages" or "pipeline".
std::string ProposedExportStem(const AppState& state, const ExportChoices& c, int stage) {
  if (c.stages == ExportStages::kChosen) return "stages";
  if (c.stages == ExportStages::kPipeline) return "pipeline";
  return std::filesystem::path(DefaultExportName(state, StageAt(stage))).stem().string();
}

/// A number field that reads "auto" while it is 0 (a grey hint in the empty field), which is
/// what 0 means here: not said, the figure's own. Clamped to [0, max]; true when edited.
bool AutoNumberField(const char* label, double* v, double max) {
  char buf[32] = "";
  if (*v > 0) std::snprintf(buf, sizeof buf, "%g", *v);
  if (!ImGui::InputTextWithHint(label, "auto", buf, sizeof buf, ImGuiInputTextFlags_CharsDecimal))
    return false;
  const double typed = std::strtod(buf, nullptr);
  *v = std::isfinite(typed) ? std::clamp(typed, 0.0, max) : 0.0;
  return true;
}

/// The export dialog's choices: format, stages, printed size, colorbars; and the preview.
void DrawExportChoices(AppState& state) {
  DialogState& d = state.dialog;
  ExportChoices c = state.export_choices;

  static const ExportFormat formats[] = {ExportFormat::kPng, ExportFormat::kSvg, ExportFormat::kPdf,
                                         ExportFormat::kCsv, ExportFormat::kNpy};
  const char* format_names[] = {"PNG", "SVG", "PDF", "CSV", "NPY"};
  int f = 0;
  while (formats[f] != c.format) ++f;
  if (ImGui::IsWindowAppearing()) d.path = WithExtension(d.path, c.format);
  if (ImGui::Combo("format", &f, format_names, 5)) {
    c.format = formats[f];
    d.path = WithExtension(d.path, c.format);
  }
  Tip("PNG for screens and slides; SVG and PDF stay sharp at any size, their tokens selectable "
      "text; CSV and NPY hold the numbers of one stage. Every figure carries its scenario and "
      "reopens as it.");
  int which = static_cast<int>(c.stages);
  ImGui::RadioButton("this stage", &which, 0);
  Tip("One heatmap: the stage chosen below, of the head and batch on screen.");
  ImGui::SameLine();
  ImGui::RadioButton("chosen stages", &which, 1);
  Tip("One figure with a panel per ticked stage, under one title.");
  ImGui::SameLine();
  ImGui::RadioButton("whole pipeline", &which, 2);
  Tip("X, Q, K, V, scores, mask, logits, weights and context in one figure, as a textbook "
      "prints the computation.");
  c.stages = static_cast<ExportStages>(which);
  if (c.stages == ExportStages::kThis) {
    int stage = d.stage;
    const char* names[kStageCount];
    for (int i = 0; i < kStageCount; ++i) names[i] = StageName(StageAt(i));
    if (ImGui::Combo("heatmap", &stage, names, kStageCount)) d.stage = stage;
    Tip("Which stage to export (of the head and batch on screen).");
  } else if (c.stages == ExportStages::kChosen) {
    std::vector<Stage> chosen;
    for (int i = 0; i < kStageCount; ++i) {
      const Stage s = StageAt(i);
      bool on = std::find(c.chosen.begin(), c.chosen.end(), s) != c.chosen.end();
      if (i % 5) ImGui::SameLine();
      ImGui::Checkbox(StageName(s), &on);
      if (on) chosen.push_back(s);
    }
    c.chosen = chosen;
  }
  const float field = ImGui::GetFontSize() * 5;
  ImGui::SetNextItemWidth(field);
  double dpi = c.dpi;
  if (AutoNumberField("dpi", &dpi, 100000)) c.dpi = static_cast<int>(std::lround(dpi));
  Tip("Pixels per inch when printed (empty, \"auto\": not said). PNG: its pHYs chunk; SVG and PDF: "
      "their "
      "printed size when no width is given.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(field);
  AutoNumberField("width", &c.width, 1000.0);
  Tip("The printed width of the whole figure (empty, \"auto\": its own size). The pixels stay; "
      "only the "
      "printed size changes.");
  ImGui::SameLine();
  int unit = c.width_in_cm ? 0 : 1;
  const char* units[] = {"cm", "in"};
  ImGui::SetNextItemWidth(field);
  if (ImGui::Combo("##unit", &unit, units, 2)) c.width_in_cm = unit == 0;
  int bar = static_cast<int>(c.colorbar);
  const char* bars[] = {"auto", "shared", "per panel"};
  ImGui::BeginDisabled(c.stages == ExportStages::kThis);
  ImGui::SetNextItemWidth(field * 2);
  if (ImGui::Combo("colorbars", &bar, bars, 3)) c.colorbar = static_cast<ColorbarMode>(bar);
  ImGui::EndDisabled();
  Tip("Several panels: one colorbar for all (their colours then mean the same values), one per "
      "panel, or auto: shared when the panels already have the same scale.");
  if (!(c == state.export_choices)) Emit(state, SetExportChoices{c});
  // The proposed name follows the choices (here or from a script) until the learner types a
  // name of their own.
  const std::string proposed = ProposedExportStem(state, c, d.stage);
  std::filesystem::path path(d.path);
  if (!d.proposed.empty() && proposed != d.proposed && path.stem() == d.proposed) {
    d.path = path.replace_filename(proposed + path.extension().string()).string();
    // A focused text field keeps its own copy of the text: let go of it, focus it again.
    ImGui::ClearActiveID();
    d.path_replaced = true;
  }
  d.proposed = proposed;
  DrawPreview(state, StageAt(d.stage));
}

/// The path field's callback: once, when it gets the keyboard, selects the file name without
/// its folder and extension ("weights" of "figures/weights.png"), so typing replaces it.
int SelectFileName(ImGuiInputTextCallbackData* data) {
  auto* d = static_cast<DialogState*>(data->UserData);
  if (!d->select_name) return 0;
  d->select_name = false;
  const std::string text(data->Buf, static_cast<size_t>(data->BufTextLen));
  const size_t slash = text.find_last_of('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  size_t end = text.find_last_of('.');
  if (end == std::string::npos || end <= start || d->kind == DialogKind::kExportAll)
    end = text.size();
  data->SelectionStart = static_cast<int>(start);
  data->SelectionEnd = static_cast<int>(end);
  data->CursorPos = static_cast<int>(end);
  return 0;
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
  if (d.kind == DialogKind::kExport) DrawExportChoices(state);
  if (d.kind == DialogKind::kExportCompare) {
    int map = d.stage;
    const char* names[] = {"A", "B", "A \xE2\x88\x92 B (difference)"};
    if (ImGui::Combo("heatmap", &map, names, 3)) {
      d.stage = map;
      d.path = (std::filesystem::path(d.path).parent_path() /
                DefaultCompareExportName(state, static_cast<CompareMap>(map)))
                   .string();
      d.select_name = true;
    }
    Tip("Which heatmap of the compare view to export, as it is on screen.");
  }
  const char* label = d.kind == DialogKind::kExportAll ? "folder" : "path";
  if (ImGui::IsWindowAppearing() || d.path_replaced) {
    // A focused text field keeps its own copy of the text: let go of it, focus it again.
    if (d.path_replaced) ImGui::ClearActiveID();
    ImGui::SetKeyboardFocusHere();
    d.select_name = true;
  }
  d.path_replaced = false;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("folder").x - ImGui::GetStyle().ItemSpacing.x);
  const std::string before = d.path;
  const bool enter = ImGui::InputText(
      label, &d.path, ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_CallbackAlways,
      SelectFileName, &d);
  if (d.path != before) d.error.clear();  // mended: the old reason no longer applies
  Tip("A file path, relative to the folder the app was started in, or absolute; ~/ is your "
      "home folder. Files are written atomically.");
  ImGui::TextDisabled("-> %s", AbsolutePath(ExpandPath(d.path)).c_str());
  if (!d.error.empty()) {  // the whole reason, wrapped, never cut
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(d.error.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
  }
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
      d.kind == DialogKind::kOpen
          ? "Open"
          : (d.kind == DialogKind::kSaveAs || d.kind == DialogKind::kSaveNotebook ? "Save"
                                                                                  : "Export");
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
