// stage_info.cpp: see stage_info.h.
#include "gui/stage_info.h"

#include <algorithm>

namespace attnlab::gui {

std::string StageHeading(const AppState& state, Stage stage) {
  const Scenario& s = state.shown;
  switch (stage) {
    case Stage::kScores:
      return "scores = Q K\xE1\xB5\x80";  // Q K^T
    case Stage::kMask:
      return s.mask.kind == MaskKind::kNone     ? "mask: none (all allowed)"
             : s.mask.kind == MaskKind::kCausal ? "mask: causal"
                                                : "mask: custom (click to paint)";
    case Stage::kLogits: {
      std::string h = "logits = scores";
      if (s.scaling.multiplier != 1.0) h += " \xC3\x97 m";  // times
      if (s.scaling.sqrt_dk) h += " / \u221Ad_k";           // sqrt
      return h;
    }
    case Stage::kWeights:
      switch (s.normalization) {
        case Normalization::kSoftmax:
          return "weights = softmax(logits)";
        case Normalization::kSoftmaxNaive:
          return "weights = exp(z) / \xCE\xA3 exp(z)";
        case Normalization::kSum:
          return "weights = z / \xCE\xA3 z";
        case Normalization::kMean:
          return "weights = 1 / n (mean)";
      }
      return "weights";
    case Stage::kWeightsDropped: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "after dropout (p = %.2g)", s.dropout.p);
      return s.dropout.p > 0 ? buf : "after dropout (off: p = 0)";
    }
    case Stage::kContext:
      return s.projections.out_proj ? "context = out_proj(weights V)" : "context = weights V";
  }
  return "?";
}

const char* StageHelp(Stage stage) {
  switch (stage) {
    case Stage::kScores:
      return "Attention scores: the dot product of query i with key j, before any scaling. "
             "Rows are queries (the token that looks), columns are keys (the tokens looked at).";
    case Stage::kMask:
      return "Which keys each query may look at. Causal: only itself and earlier tokens. "
             "Masked cells (hatched) get a logit of -inf, so their weight is 0.";
    case Stage::kLogits:
      return "The scores times the multiplier (1/temperature), divided by sqrt(d_k) when "
             "scaling is on, with -inf where the mask forbids. Softmax sees these numbers.";
    case Stage::kWeights:
      return "Attention weights: each row is normalised (softmax by default) so it sums to 1. "
             "A peaked row means the query attends to almost one key.";
    case Stage::kWeightsDropped:
      return "nn.Dropout in training mode: each weight is zeroed with probability p and the "
             "survivors are divided by 1 - p.";
    case Stage::kContext:
      return "Context vectors: row i is the weighted average of the value vectors, using row i "
             "of the weights (heads side by side, then out_proj if any).";
  }
  return "";
}

bool StageIsDiverging(const AppState& state, Stage stage) {
  if (stage == Stage::kWeights || stage == Stage::kWeightsDropped)
    return state.heatmaps[StageIndex(stage)].diverging;
  return stage == Stage::kScores || stage == Stage::kLogits || stage == Stage::kContext;
}

bool StageHatchesMask(Stage stage) {
  return stage == Stage::kMask || stage == Stage::kLogits || stage == Stage::kWeights ||
         stage == Stage::kWeightsDropped;
}

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
  const std::string& t = tokens[i];
  if (t.find_first_not_of(" \t\r\n") != std::string::npos) return t;
  std::string shown;  // one sign per whitespace character: " " -> U+2423, "\n" -> U+2424
  for (char c : t) shown += c == '\n' ? "\xE2\x90\xA4" : "\xE2\x90\xA3";
  return shown.empty() ? "\"\"" : shown;
}

std::string ColumnLabel(const AppState& state, Stage stage, int64_t j) {
  if (stage == Stage::kContext) return "d" + std::to_string(j);
  return RowLabel(state, j);
}

int StageColormap(const AppState& state, Stage stage) {
  return StageIsDiverging(state, stage) ? state.view.diverging_colormap
                                        : state.view.sequential_colormap;
}

}  // namespace attnlab::gui
