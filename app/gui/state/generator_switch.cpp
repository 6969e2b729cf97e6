// generator_switch.cpp: see generator_switch.h.
#include "gui/state/generator_switch.h"

#include "attnlab/random/numpy_rng.h"

namespace attnlab::gui {

std::function<void(Scenario&)> SwitchGenerator(const Stages& shown, Generator to) {
  const MatrixStack X = shown.X;
  const std::vector<std::string> tokens = shown.tokens;
  const std::array<Matrix, 3> W = shown.W;
  return [X, tokens, W, to](Scenario& s) {
    s.input.generator = to;
    if (to != Generator::kNumpy) return;
    s.input.seed &= kNumpyMaxSeed;
    if (s.projections.seed) *s.projections.seed &= kNumpyMaxSeed;
    if (s.input.source == InputSource::kText && !X.empty()) {
      s.input.source = InputSource::kMatrix;  // the embeddings as numbers: no nn.Embedding
      s.input.values = X;
      s.input.tokens = tokens;
    }
    if (s.projections.init == ProjectionInit::kLinear) {
      const int64_t heads = s.projections.heads;
      s.projections = ProjectionSpec{};
      if (W[0].size() > 0) {  // nn.Linear's draws, kept as the matrices they made
        s.projections.init = ProjectionInit::kMatrix;
        s.projections.W = W;
        s.projections.d_out = W[0].cols();
        s.projections.heads = heads;
      }
    }
    s.dropout.p = 0.0;  // bfloat16 and float16 stay: the NumPy program stores each stage too
  };
}

}  // namespace attnlab::gui
