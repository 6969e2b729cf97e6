// code_panel.cpp: the PyTorch (or NumPy) program behind what is on screen (codegen.h
// GeneratePyTorchCode, the same text as `attention-lab code`), read-only in a monospace,
// scrollable text area: select part of it with the mouse, Copy it all, or save it as a
// Jupyter notebook (through the file dialog, asking before replacing a file). It is made again only
// when the scenario on screen changes (views.h RefreshCode).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

#include "gui/app_state.h"
#include "gui/panels/panels.h"
#include "gui/views.h"
#include "gui/widgets.h"

namespace attnlab::gui {

void DrawCodePanel(AppState& state) {
  CodeState& code = state.code;

  ImGui::AlignTextToFramePadding();
  const bool numpy = code.text.find("import numpy as np") != std::string::npos;
  ImGui::TextUnformatted(numpy ? "NumPy code" : "PyTorch code");
  Tip("The program computes exactly what the heatmaps show: the same seeds draw the same "
      "numbers, operation for operation (X, Q, K, V, scores, logits, weights, context).");
  ImGui::SameLine(0, ImGui::GetFontSize());
  ImGui::BeginDisabled(code.text.empty());
  if (ImGui::Button("Copy")) Emit(state, CopyCode{});
  ImGui::EndDisabled();
  Tip("Copy the whole program to the clipboard (Ctrl+Shift+C). To copy a part, select it with "
      "the mouse and press Ctrl+C.");
  ImGui::SameLine();
  ImGui::BeginDisabled(code.text.empty());
  if (ImGui::Button("Save as notebook...")) Emit(state, OpenDialog{DialogKind::kSaveNotebook});
  ImGui::EndDisabled();
  Tip("Write the same program as a Jupyter notebook (.ipynb, one cell per step) to open beside "
      "the course's notebook. Asks before replacing a file.");
  ImGui::SameLine(0, ImGui::GetFontSize());
  const auto lines = std::count(code.text.begin(), code.text.end(), '\n');
  ImGui::TextDisabled(
      "Pasted into Python with %s installed, it prints the numbers the app shows.  (%lld lines)",
      numpy ? "NumPy" : "PyTorch", static_cast<long long>(lines));

  if (!code.error.empty()) {
    ErrorText("No program: " + code.error);
    return;
  }

  // Read-only: the text can be selected and scrolled, not changed. The mono font makes the
  // indentation and the aligned tensors read as in an editor.
  if (state.fonts.mono) ImGui::PushFont(state.fonts.mono);
  ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0.07f, 0.07f, 0.09f, 1.0f));
  ImGui::InputTextMultiline("##code", &code.text, ImGui::GetContentRegionAvail(),
                            ImGuiInputTextFlags_ReadOnly);
  ImGui::PopStyleColor();
  if (state.fonts.mono) ImGui::PopFont();
}

}  // namespace attnlab::gui
