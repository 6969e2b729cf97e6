// code_panel.cpp: the PyTorch (or NumPy) program behind what is on screen (codegen.h
// GeneratePyTorchCode, the same text as `attention-lab code`), read-only in a monospace,
// scrollable text area: select part of it with the mouse, Copy it all, or save it as a
// Jupyter notebook (through the file dialog, asking before replacing a file). It is made again only
// when the scenario on screen changes (views.h RefreshCode). "Training loop" shows instead the
// Adam loop of the Training view's settings (codegen.h GenerateTrainingCode, the same text as
// `attention-lab code --train --task T --steps N --d-k D`), scaled or unscaled; "Decode loop"
// and "Tiled loop" the scenario's program followed by the Decode or Tiled view's loop with its
// settings (GenerateDecodeCode / GenerateTiledCode, as `attention-lab code --loop`).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <string>

#include "attnlab/lessons/train.h"
#include "gui/actions/training.h"
#include "gui/actions/views.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {

namespace {

// One choice of program: a radio button that selects the training loop (`training`) or the
// loop `loop` ("" for the scenario's own program), with its tip.
void ProgramRadio(CodeState& code, const char* label, bool training, const char* loop,
                  const char* tip) {
  if (ImGui::RadioButton(label, code.training == training && code.loop == loop)) {
    code.training = training;
    code.loop = loop;
  }
  Tip(tip);
}

// Which program: the scenario's, the Training view's loop (scaled or not), or the Decode or
// Tiled view's loop, and its settings.
void DrawProgramChoice(AppState& state) {
  CodeState& code = state.code;
  ImGui::AlignTextToFramePadding();
  ProgramRadio(code, "Scenario", false, "",
               "The program computes exactly what the heatmaps show: the same seeds draw the same "
               "numbers, operation for operation (X, Q, K, V, scores, logits, weights, context).");
  ImGui::SameLine();
  ProgramRadio(code, "Training loop", true, "",
               "The Adam loop the Training view (Ctrl+6) runs, as `attention-lab code --train` "
               "writes it: the head drawn from this scenario's seed, the task's batches, the same "
               "loss per step (left in `losses`).");
  ImGui::SameLine();
  ProgramRadio(code, "Decode loop", false, "decode",
               "The scenario's program, then the KV-cache decode the Decode view (Ctrl+7) steps, "
               "with its prefill and chunk: a cache per K/V head, one token per step, the sliding "
               "window's ring buffer; it prints the largest difference from the full computation "
               "(`attention-lab code --loop decode`).");
  ImGui::SameLine();
  ProgramRadio(code, "Tiled loop", false, "tiled",
               "The scenario's program, then FlashAttention's online softmax the Tiled view "
               "(Ctrl+8) steps, with its Br x Bc tiles: m, l, the rescale exp(m_old - m_new) and "
               "O / l; it prints the largest difference from the full computation "
               "(`attention-lab code --loop tiled`).");
  if (code.loop == "decode") {
    ImGui::SameLine(0, ImGui::GetFontSize());
    ImGui::TextDisabled("prefill %lld, chunk %lld (set in the Decode view)",
                        static_cast<long long>(state.inference.prefill),
                        static_cast<long long>(state.inference.chunk));
  } else if (code.loop == "tiled") {
    ImGui::SameLine(0, ImGui::GetFontSize());
    ImGui::TextDisabled("Br %lld, Bc %lld (set in the Tiled view)",
                        static_cast<long long>(state.inference.block_q),
                        static_cast<long long>(state.inference.block_k));
  }
  if (!code.training) return;
  ImGui::SameLine(0, ImGui::GetFontSize());
  ImGui::Checkbox("with 1/\u221Ad_k", &code.training_scaled);
  Tip("The Training view trains both ways: this picks which of the two loops is shown.");
  const TrainOptions o = TrainViewOptions(state, code.training_scaled);
  ImGui::SameLine(0, ImGui::GetFontSize());
  ImGui::TextDisabled("task %s, %lld steps, d_k %lld (set in the Training view)", Name(o.task),
                      static_cast<long long>(o.steps), static_cast<long long>(o.d_k));
}

// While the compare view's B is a bug of the gallery (model/bugs.h): the two lines of PyTorch
// that make it, the bug's and the fix's (codegen.h DiffPrograms of the two scenarios).
void DrawBugDiff(const AppState& state) {
  const CompareState& c = state.compare;
  if (state.code.training || c.mode != CompareMode::kPinned || c.bug_id.empty()) return;
  ImGui::TextUnformatted(
      ("The bug (" + c.bug_id + ", the compare view's B) against its fix (A):").c_str());
  if (state.fonts.mono) ImGui::PushFont(state.fonts.mono);
  for (const std::string& line : c.bug_diff.wrong)
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.45f, 1.0f), "- %s", line.c_str());
  for (const std::string& line : c.bug_diff.right)
    ImGui::TextColored(ImVec4(0.45f, 0.9f, 0.45f, 1.0f), "+ %s", line.c_str());
  if (state.fonts.mono) ImGui::PopFont();
  ImGui::Separator();
}

}  // namespace

void DrawCodePanel(AppState& state) {
  CodeState& code = state.code;

  DrawProgramChoice(state);
  RefreshCode(state);  // the choice may have changed this frame
  ImGui::AlignTextToFramePadding();
  const bool numpy = code.text.find("import numpy as np") != std::string::npos;
  ImGui::TextUnformatted(code.training ? "PyTorch training loop"
                         : numpy       ? "NumPy code"
                                       : "PyTorch code");
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
  // Wrapped beside the buttons: at 1280 px the line ran past the window's edge.
  const std::string count = " (" + std::to_string(lines) + "\xC2\xA0lines)";  // one word
  const std::string note =
      code.training ? "Run with PyTorch, its `losses` follow the Training view's curve." + count
                    : std::string("Pasted into Python with ") + (numpy ? "NumPy" : "PyTorch") +
                          " installed, it prints the numbers the app shows." + count;
  const ImVec4 dim = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
  ImGui::BeginGroup();
  TextWrappedAtSpaces(note.c_str(), &dim);
  ImGui::EndGroup();
  if (code.training)
    Tip("Step 0's loss is the same to every digit. PyTorch sums the matrix products in another "
        "order, so float32 rounding differs by about 1e-7 and Adam carries it on: the losses "
        "agree to about 6 digits for the first tens of steps, then drift apart slowly (fastest "
        "unscaled, where the saturated softmax amplifies it); the curves keep their shape.");

  if (!code.error.empty()) {
    ErrorText("No program: " + code.error);
    return;
  }
  DrawBugDiff(state);

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
