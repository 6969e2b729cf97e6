// check_output_panel.cpp: Edit > Check against my output. A window with a text box for what a
// learner's notebook printed, a Check button, the verdict of `match` (match.h) in words, and
// the pasted numbers laid out as read, each cell green where it equals the stage to its printed
// digits and red where it differs. Computes nothing: CheckOutput (actions/apply.cpp) reads and
// matches; this panel shows state.check_output.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "gui/panels/panels.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {
namespace {

/// The verdict as a heading a learner reads.
const char* VerdictHeading(MatchVerdict v) {
  switch (v) {
    case MatchVerdict::kMatch:
      return "It matches";
    case MatchVerdict::kClose:
      return "It is close";
    case MatchVerdict::kExplained:
      return "A known mistake explains it";
    case MatchVerdict::kNone:
      return "Nothing fits";
  }
  return "";
}

/// The pasted numbers as a grid of their last two dimensions (the first matrix when there are
/// more), each cell green (equal to its printed digits) or red (differs). At most 32 x 32.
void DrawCells(const PastedTensor& t, const MatchResult& r) {
  if (t.values.empty() || r.differs.size() != t.values.size()) return;
  const int64_t cols = t.shape.empty() ? 1 : t.shape.back();
  const int64_t rows = t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : 1;  // 1-D: one row
  const int64_t shown_rows = std::min<int64_t>(rows, 32), shown_cols = std::min<int64_t>(cols, 32);
  if (!ImGui::BeginTable("cells", static_cast<int>(shown_cols),
                         ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit))
    return;
  for (int64_t i = 0; i < shown_rows; ++i) {
    ImGui::TableNextRow();
    for (int64_t j = 0; j < shown_cols; ++j) {
      ImGui::TableNextColumn();
      const size_t k = static_cast<size_t>(i * cols + j);
      const bool differs = r.differs[k] != 0;
      ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg,
                             differs ? IM_COL32(150, 40, 40, 255) : IM_COL32(40, 110, 60, 255));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4g", t.values[k]);
      ImGui::TextUnformatted(buf);
    }
  }
  ImGui::EndTable();
  if (rows > shown_rows || cols > shown_cols || t.shape.size() > 2)
    ImGui::TextDisabled("(the first %lld x %lld numbers of the pasted tensor)",
                        static_cast<long long>(shown_rows), static_cast<long long>(shown_cols));
}

}  // namespace

void DrawCheckOutputPanel(AppState& state) {
  CheckOutputState& c = state.check_output;
  if (!c.open) return;
  ImGui::SetNextWindowSize(ImVec2(620, 560), ImGuiCond_FirstUseEver);
  bool open = true;
  if (ImGui::Begin("Check against my output", &open)) {
    ImGui::TextWrapped(
        "Paste what your notebook printed: tensor([...]) (grad_fn and dtype are fine), "
        "NumPy's array([...]) or print(array). The app finds the stage it is, or the known "
        "mistake that gives it.");
    ImGui::InputTextMultiline("##pasted", &c.text,
                              ImVec2(-1.0f, ImGui::GetTextLineHeight() * 10.0f));
    if (ImGui::Button("Check")) Emit(state, CheckOutput{CheckOutput::kCheck});
    ImGui::Separator();
    if (!c.error.empty()) {
      ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "Cannot read it:");
      ImGui::TextWrapped("%s", c.error.c_str());
    } else if (c.result) {
      const MatchResult& r = *c.result;
      ImGui::TextUnformatted(VerdictHeading(r.verdict));
      ImGui::TextWrapped("%s", r.cause_text.c_str());
      if (!r.stage.empty()) {
        ImGui::Text("Largest difference from %s: %.3g", r.stage.c_str(), r.max_abs_diff);
        if (c.read) DrawCells(*c.read, r);
      }
    }
  }
  ImGui::End();
  if (!open) Emit(state, CheckOutput{CheckOutput::kClose});
}

}  // namespace attnlab::gui
