// modern_panel.cpp: the "Modern attention" section of the controls: everything beyond chapter
// 3 of the notebooks (soft-capping, sinks, today's masks, positions, precision, the generator,
// how the projections are drawn), collapsed for a new user.
#include <imgui.h>

#include "attnlab/model/scenario.h"
#include "gui/app_state.h"
#include "gui/panels/panels.h"

namespace attnlab::gui {
namespace {

/// A small grey heading between the parts of the section.
void Heading(const char* text) {
  ImGui::Spacing();
  ImGui::TextDisabled("%s", text);
}

}  // namespace

bool NeedsModernAttention(const Scenario& s) {
  const ProjectionSpec& p = s.projections;
  const ProjectionSpec plain;
  const bool basic_mask = s.mask.kind == MaskKind::kNone || s.mask.kind == MaskKind::kCausal ||
                          s.mask.kind == MaskKind::kCustom;
  return s.scaling.softcap.has_value() || !s.scaling.sink.empty() ||
         s.scaling.softmax_dtype != SoftmaxDtype::kSame || !basic_mask ||
         s.mask.fill != MaskFill::kNegInf || s.mask.masked_rows != MaskedRows::kNan ||
         s.positions.kind != PositionKind::kNone || s.dtype != Dtype::kFloat32 ||
         s.input.generator != Generator::kTorch || p.order != plain.order || p.bias || p.out_proj ||
         p.per_head || p.kv_heads > 0 || p.head_split != HeadSplit::kTranspose || p.qk_norm;
}

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
