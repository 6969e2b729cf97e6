// status_bar_panel.cpp: one line at the bottom: the error of the current edit (the heatmaps
// keep the last good result), else the last message; on the right the sizes on screen and
// which stages the last edit recomputed.
#include "attnlab/base/text.h"
#include "attnlab/figures/heatmap_spec.h"  // FitLabel
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {

void DrawStatusBar(AppState& state) {
  const Shape& sh = ShownShape(state);
  char sizes[160];
  if (state.shown.input.source == InputSource::kQkv)  // Q, K, V given or drawn: no input width
    std::snprintf(sizes, sizeof sizes, "B=%lld T=%lld d_out=%lld heads=%lld d_k=%lld",
                  static_cast<long long>(sh.B), static_cast<long long>(sh.T),
                  static_cast<long long>(sh.d_out), static_cast<long long>(sh.H),
                  static_cast<long long>(sh.dh));
  else
    std::snprintf(sizes, sizeof sizes, "B=%lld T=%lld d_in=%lld d_out=%lld heads=%lld d_k=%lld",
                  static_cast<long long>(sh.B), static_cast<long long>(sh.T),
                  static_cast<long long>(sh.d_in), static_cast<long long>(sh.d_out),
                  static_cast<long long>(sh.H), static_cast<long long>(sh.dh));
  // The precision the stages were computed in, and whose arithmetic (dtype, input.generator).
  const Scenario& shown = state.shown;
  const std::string precision =
      std::string("   ") + Name(shown.dtype) +
      (shown.input.generator == Generator::kNumpy ? " (NumPy)" : " (PyTorch)");
  // V's own width when it differs (qkv input with d_v): its heads take dh_v columns.
  const std::string d_v = sh.d_v != sh.d_out ? " d_v=" + std::to_string(sh.d_v) : "";
  // A background run (T x T stages of millions of cells) says so until its result is shown.
  const std::string ran = state.background.running   ? "   computing\xE2\x80\xA6"
                          : state.recomputed.empty() ? ""
                                                     : "   recomputed: " + state.recomputed;
  // Grouped K/V heads (GQA): K and V have kv_heads heads.
  const std::string kv = GroupsKv(sh) ? " kv_heads=" + std::to_string(sh.Kv()) : "";
  const std::string right = std::string(sizes) + kv + d_v + precision + ran;
  const float right_w = ImGui::CalcTextSize(right.c_str()).x;
  const float x0 = ImGui::GetCursorPosX();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float room = avail - right_w - ImGui::GetFontSize();

  std::string left;
  ImVec4 color = ImGui::GetStyleColorVec4(ImGuiCol_Text);
  const ImVec4 red(1.0f, 0.45f, 0.4f, 1.0f);
  if (!state.error.empty()) {
    left = "Cannot run this edit: " + state.error;
    // The reminder only when it fits whole (the banner over the heatmaps says it too).
    const std::string more = "   (the heatmaps show the last result that ran; Ctrl+Z undoes)";
    if (ImGui::CalcTextSize((left + more).c_str()).x <= room) left += more;
    color = red;
  } else if (!state.status.empty()) {
    left = state.status;
    if (state.status_is_error) color = red;
  } else if (!state.fonts.warning.empty()) {
    left = state.fonts.warning;
  } else {
    left = "Hover a cell to see how its number was made.";
    color = ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
  }
  left = MessageText(left, 4 * kMessageQuoteChars);  // one line, whatever a file held
  ImGui::AlignTextToFramePadding();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  // Too long for the line: cut with an ellipsis, the whole message on hover.
  const MeasureText measure = [](std::string_view t) {
    return ImGui::CalcTextSize(t.data(), t.data() + t.size()).x;
  };
  const std::string fitted = FitLabel(left, std::max(room, 0.0f), measure);
  ImGui::PushClipRect(p, ImVec2(p.x + room, p.y + ImGui::GetFrameHeight()), true);
  ImGui::TextColored(color, "%s", fitted.c_str());
  ImGui::PopClipRect();
  if (fitted != left && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
    ImGui::TextUnformatted(left.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::SameLine(x0 + avail - right_w);
  ImGui::TextDisabled("%s", right.c_str());
  Tip("What is on screen, the precision it was computed in (the scenario's dtype: float32 as "
      "PyTorch's default tensors, float64 as torch.float64 or NumPy's arrays) and which stage "
      "groups the last edit recomputed: the engine redoes only the stages after the setting "
      "that changed. With millions of cells it computes beside the window "
      "(\"computing\xE2\x80\xA6\"), "
      "which keeps drawing and shows each result as it is done.");
}

}  // namespace attnlab::gui
