// stage_info.cpp: see stage_info.h.
#include "gui/widgets/stage_info.h"

#include <algorithm>

#include "attnlab/base/text.h"
#include "gui/gfx/script_fonts.h"

namespace attnlab::gui {

const Matrix* StageMatrix(const AppState& state, Stage stage) {
  const Stages* readable = ReadableStages(state);
  if (!HasShownRun(state) || !readable) return nullptr;
  const Stages& st = *readable;
  const int64_t b = state.batch, h = state.head;
  auto head_of = [&](const MatrixStack& stack) -> const Matrix* {
    const size_t i = static_cast<size_t>(b * st.shape.H + h);
    return i < stack.size() ? &stack[i] : nullptr;
  };
  auto projected = [&](const MatrixStack& stack, int k) -> const Matrix* {
    if (static_cast<size_t>(b) >= stack.size()) return nullptr;
    return st.shape.H == 1 ? &stack[b] : &state.head_qkv[k];
  };
  const MatrixStack* stack = StageStack(st, stage);  // the sink's is empty without scaling.sink
  if (!stack) return nullptr;                        // the mask: bytes, not floats: StageCells
  // Q, K, V, Q_rot, K_rot: consecutive from kQ, as head_qkv holds their head's columns.
  if (StageIsProjected(stage)) return projected(*stack, StageIndex(stage) - StageIndex(Stage::kQ));
  if (StageIsPerHead(stage)) return head_of(*stack);
  return static_cast<size_t>(b) < stack->size() ? &(*stack)[b] : nullptr;
}

std::string RowLabel(const AppState& state, int64_t i) {
  // The labels made for the shown run (heatmaps_panel.cpp RefreshContents); the tokens
  // themselves only when those are not made yet and no worker writes the stages.
  if (i >= 0 && static_cast<size_t>(i) < state.token_labels.size() &&
      static_cast<int64_t>(state.token_labels.size()) == ShownShape(state).T)
    return VisualOrder(state.token_labels[i]);
  const Stages* st = ReadableStages(state);
  if (!st || i < 0 || static_cast<size_t>(i) >= st->tokens.size()) return "";
  return VisualOrder(VisibleToken(st->tokens[i]));
}

std::string HeadAxisLabel(const AppState& state, int64_t i, bool key) {
  const HeatmapContent& c = state.heatmaps[StageIndex(Stage::kWeights)].content;
  const std::vector<std::string>& labels = key ? c.col_labels : c.row_labels;
  const int64_t T = ShownShape(state).T;
  if (i >= 0 && i < T && static_cast<int64_t>(labels.size()) == T && c.head == state.head)
    return VisualOrder(labels[static_cast<size_t>(i)]);
  return RowLabel(state, i);
}

void RefreshHeadSlices(AppState& state) {
  const Stages* readable = ReadableStages(state);
  if (!readable) return;
  const Stages& st = *readable;
  if (st.shape.H <= 1 || static_cast<size_t>(state.batch) >= st.Q.size()) return;
  // Q, K, V, Q_rot, K_rot: their stages are consecutive from kQ (stages.h).
  const MatrixStack* stacks[5] = {&st.Q, &st.K, &st.V, &st.Q_rot, &st.K_rot};
  for (int k = 0; k < 5; ++k) {
    // V's heads are dh_v wide (its own d_v for qkv input), Q's and K's dh.
    const int64_t w = k == 2 ? st.shape.dh_v : st.shape.dh;
    // K, V and K_rot: the K/V head this query head reads (itself unless kv_heads groups them).
    const int64_t h =
        StageColumnHead(static_cast<Stage>(StageIndex(Stage::kQ) + k), st.shape, state.head);
    if (state.heatmaps[StageIndex(Stage::kQ) + k].dirty &&
        static_cast<size_t>(state.batch) < stacks[k]->size())
      state.head_qkv[k] = (*stacks[k])[state.batch].middleCols(h * w, w);
  }
}

std::string ColumnLabel(const AppState& state, Stage stage, int64_t j) {
  // The map's own labels (which say the head when there are several), once it has them.
  const std::vector<std::string>& labels = state.heatmaps[StageIndex(stage)].content.col_labels;
  if (j >= 0 && static_cast<size_t>(j) < labels.size()) return labels[static_cast<size_t>(j)];
  if (stage == Stage::kX || stage == Stage::kContext) return "d" + std::to_string(j);
  if (StageIsProjected(stage)) {
    const Shape& sh = ShownShape(state);
    const int64_t h = StageColumnHead(stage, sh, state.head);
    return "d" + std::to_string(h * (stage == Stage::kV ? sh.dh_v : sh.dh) + j);
  }
  return RowLabel(state, j);
}

CellSource StageCells(const AppState& state, Stage stage) {
  if (stage != Stage::kMask) return {StageMatrix(state, stage), nullptr};
  const Stages* st = ReadableStages(state);
  if (!HasShownRun(state) || !st || st->mask.size() == 0) return {};
  return {nullptr, &st->mask};
}

}  // namespace attnlab::gui
