// modern_panel.cpp: the "Modern attention" section of the controls: everything beyond chapter
// 3 of the notebooks (soft-capping, sinks, today's masks, positions, precision, the generator,
// how the projections are drawn), collapsed for a new user.
#include <imgui.h>

#include "attnlab/model/scenario.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/sections.h"

namespace attnlab::gui {
namespace {

/// A small grey heading between the parts of the section.
void Heading(const char* text) {
  ImGui::Spacing();
  ImGui::TextDisabled("%s", text);
}

}  // namespace

void DrawModernAttentionPanel(AppState& state) {
  Heading("Scores and mask");
  DrawAttentionModern(state);
  Heading("Positions");
  DrawPositionsPanel(state);
  Heading("Precision and generator");
  DrawInputModern(state);
  if (state.scenario.input.source != InputSource::kQkv) {
    Heading("How the projections are drawn");
    DrawProjectionModern(state);
  }
}

}  // namespace attnlab::gui
