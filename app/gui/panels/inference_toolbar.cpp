// inference_toolbar.cpp: the toolbar the Decode and Tiled views share (panels.h
// DrawInferenceToolbar): their two settings, the step controls and Export step.
#include <imgui.h>

#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {

void DrawInferenceToolbar(AppState& state, const InferenceSetting (&settings)[2],
                          SetInference::Field step_field, int64_t step, int64_t count) {
  for (const InferenceSetting& s : settings) {
    int64_t value = s.value;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    if (IntInput(s.label, &value, s.lo, s.hi, s.tip)) Emit(state, SetInference{s.field, value});
    ImGui::SameLine();
  }
  ImGui::NewLine();
  bool playing = state.inference.playing;
  const int64_t before = step;
  if (StepControls(settings[0].label, &step, count, &playing)) {
    if (step != before) Emit(state, SetInference{step_field, step});
    if (playing != state.inference.playing)
      Emit(state, SetInference{SetInference::Field::kPlay, playing ? 1 : 0});
  }
  ImGui::SameLine();
  if (ImGui::Button("Export step...")) Emit(state, OpenDialog{DialogKind::kExportStep});
  Tip("The step on screen (its head and batch entry) as a figure (PNG, SVG or PDF) or its "
      "numbers (CSV, NPY), byte for byte what attention-lab decode|tiled ... --step K [--head H "
      "--batch B] -o FILE writes: drawn with the default colormaps, range and values, not the "
      "window's choices.");
}

}  // namespace attnlab::gui
