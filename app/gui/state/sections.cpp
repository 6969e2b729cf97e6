// sections.cpp: see sections.h.
#include "gui/state/sections.h"

#include "attnlab/model/scenario.h"

namespace attnlab::gui {

bool NeedsModernAttention(const Scenario& s) {
  const ProjectionSpec& p = s.projections;
  const ProjectionSpec plain;
  const bool basic_mask = s.mask.kind == MaskKind::kNone || s.mask.kind == MaskKind::kCausal ||
                          s.mask.kind == MaskKind::kCustom;
  return s.scaling.softcap.has_value() || !s.scaling.sink.empty() ||
         s.scaling.softmax_dtype != SoftmaxDtype::kSame || s.scaling.scale_at != ScaleAt::kScores ||
         !basic_mask || s.mask.fill != MaskFill::kNegInf ||
         s.mask.masked_rows != MaskedRows::kNan || s.positions.kind != PositionKind::kNone ||
         s.dtype != Dtype::kFloat32 || s.input.generator != Generator::kTorch ||
         p.order != plain.order || p.bias || p.out_proj || p.per_head || p.kv_heads > 0 ||
         p.head_split != HeadSplit::kTranspose || p.qk_norm;
}

}  // namespace attnlab::gui
