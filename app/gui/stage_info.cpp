// stage_info.cpp: see stage_info.h.
#include "gui/stage_info.h"

#include <algorithm>

#include "attnlab/text.h"

namespace attnlab::gui {

const Matrix* StageMatrix(const AppState& state, Stage stage) {
  if (!state.engine.has_result()) return nullptr;
  const Stages& st = ShownStages(state);
  const int64_t b = state.batch, h = state.head;
  auto head_of = [&](const MatrixStack& stack) -> const Matrix* {
    const size_t i = static_cast<size_t>(b * st.shape.H + h);
    return i < stack.size() ? &stack[i] : nullptr;
  };
  switch (stage) {
    case Stage::kScores:
      return head_of(st.scores);
    case Stage::kMask:
      return state.mask_values.size() ? &state.mask_values : nullptr;
    case Stage::kLogits:
      return head_of(st.logits);
    case Stage::kWeights:
      return head_of(st.weights);
    case Stage::kWeightsDropped:
      return head_of(st.weights_dropped);
    case Stage::kContext:
      return static_cast<size_t>(b) < st.context.size() ? &st.context[b] : nullptr;
  }
  return nullptr;
}

std::string RowLabel(const AppState& state, int64_t i) {
  const auto& tokens = ShownStages(state).tokens;
  if (i < 0 || static_cast<size_t>(i) >= tokens.size()) return "";
  if (state.token_labels.size() == tokens.size()) return state.token_labels[i];
  return VisibleToken(tokens[i]);
}

std::string ColumnLabel(const AppState& state, Stage stage, int64_t j) {
  if (stage == Stage::kContext) return "d" + std::to_string(j);
  return RowLabel(state, j);
}

}  // namespace attnlab::gui
