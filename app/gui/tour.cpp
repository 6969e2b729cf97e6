// tour.cpp: see tour.h. The texts follow the seed notebooks (Raschka ch. 3, Karpathy's
// "mathematical trick", self-attention-from-scratch) and stay short: the heatmap beside each
// card does the explaining.
#include "gui/tour.h"

#include <algorithm>
#include <cmath>

#include "gui/app_state.h"

namespace attnlab::gui {
namespace {

// -- the checks of the "your turn" tasks, on what the window shows

/// The shown head's attention weights of query row `i` (batch and head on screen), or nullptr.
const Matrix* ShownWeights(const AppState& state) {
  const Stages* readable = ReadableStages(state);  // a background run: no check this frame
  if (!readable || readable->weights.empty() || !state.error.empty()) return nullptr;
  const Stages& st = *readable;
  const int64_t b = std::clamp<int64_t>(state.batch, 0, st.shape.B - 1);
  const int64_t h = std::clamp<int64_t>(state.head, 0, st.shape.H - 1);
  return &st.Head(st.weights, b, h);
}

bool HoveredJourneyStarts(const AppState& state) {
  return state.hover.active && state.hover.stage == Stage::kScores && state.hover.row == 1 &&
         state.hover.col == 2;
}

bool MultiplierAtLeast3(const AppState& state) {
  return state.error.empty() && state.shown.scaling.multiplier >= 3.0;
}

/// The peaking row's entropy at most half the uniform row's, log n (n allowed keys).
bool EntropyHalved(const AppState& state) {
  const Matrix* w = ShownWeights(state);
  if (!w || state.row < 0 || state.row >= w->rows()) return false;
  double entropy = 0, total = 0;
  int allowed = 0;
  for (Eigen::Index j = 0; j < w->cols(); ++j) {
    const double p = (*w)(state.row, j);
    if (!(p >= 0)) return false;  // not a distribution (nan): no entropy
    total += p;
    if (p > 0) entropy -= p * std::log(p);
    const MaskMatrix& mask = ReadableStages(state)->mask;  // ShownWeights: readable
    if (mask.size() == 0 || mask(state.row, j)) ++allowed;
  }
  return allowed > 1 && std::abs(total - 1.0) < 1e-3 && entropy <= 0.5 * std::log(allowed);
}

bool ScaledBySqrtDk(const AppState& state) {
  return state.error.empty() && state.shown.scaling.sqrt_dk;
}

bool MaskOff(const AppState& state) {
  return state.error.empty() && state.shown.mask.kind == MaskKind::kNone;
}

/// Query row 3 gives one key more than 0.9 of its attention.
bool Row3Peaked(const AppState& state) {
  const Matrix* w = ShownWeights(state);
  return w && w->rows() > 3 && w->row(3).maxCoeff() > 0.9f;
}

}  // namespace

const std::vector<TourStep>& TourSteps() {
  static const std::vector<TourStep> steps = {
      {"Welcome to Attention Lab",
       "This tour follows the notebooks' story in seven short steps: scores, scaling, "
       "softmax, why 1/\u221Ad_k, the mask, the context and why scaling helps learning. "
       "Everything stays live: change anything on "
       "the left as you go; some steps ask you to try something and tick it off when you "
       "have. Skip it any time; Help \xE2\x96\xB8 Guided tour (F1) brings it back.",
       "raschka-journey", TourTarget::kNone},
      {"Scores: q \xC2\xB7 k",
       "Each token x is projected to a query q, a key k and a value v. Cell (i, j) is "
       "q_i \xC2\xB7 k_j: how well query i matches key j. Rows are queries, columns keys. Hover "
       "a cell to see its dot product.",
       "raschka-journey", TourTarget::kScores, TourTarget::kNone,
       "hover the cell where query \"journey\" meets key \"starts\" (row 1, column 2).",
       HoveredJourneyStarts},
      {"Scaling by 1/\u221Ad_k",
       "Before the softmax the scores are divided by \u221Ad_k (here \u221A2 \xE2\x89\x88 1.41) "
       "and multiplied by m = 1/temperature. Drag the multiplier on the left: the logits grow "
       "or shrink, the weights sharpen or flatten.",
       "raschka-journey", TourTarget::kLogits, TourTarget::kControls,
       "drag the multiplier to 3 or more.", MultiplierAtLeast3},
      {"Softmax",
       "softmax makes each row of logits positive and sum to 1: the attention weights. Below, "
       "the peaking panel shows one row as bars and its entropy: how many keys the query really "
       "averages over.",
       "raschka-journey", TourTarget::kWeights, TourTarget::kPeaking,
       "find the multiplier where the peaking row's entropy falls to half of the uniform "
       "row's (log n, the dashed line).",
       EntropyHalved},
      {"Why 1/\u221Ad_k",
       "Here d_k = 16 and the scaling is off: the logits are large and softmax is almost "
       "one-hot, each query listens to one key. Bottom right, why: var(q\xC2\xB7k) grows like d. "
       "Tick \"divide by \u221Ad_k\" on the left and watch the rows soften.",
       "scaling-demo", TourTarget::kWeights, TourTarget::kVariance,
       "tick \"divide by \u221Ad_k\".", ScaledBySqrtDk},
      {"The causal mask",
       "A decoder must not see the future: the causal mask forbids the keys after each query "
       "(hatched). Their logits become \xE2\x88\x92inf, their weights 0. With equal weights each "
       "token simply averages its past: Karpathy's \"mathematical trick\".",
       "karpathy-trick", TourTarget::kMask, TourTarget::kWeights,
       "set the mask to none: every row now averages all 8 tokens, the future too.", MaskOff},
      {"Context = weights V",
       "Row i of the context is the average of the value vectors, weighted by row i of the "
       "weights. In a real head the weights come from q\xC2\xB7k, so each token chooses whom to "
       "listen to.",
       "karpathy-head", TourTarget::kContext, TourTarget::kWeights,
       "make row 3 attend mostly to one key: raise the multiplier until one of its weights "
       "passes 0.9.",
       Row3Peaked},
      {"Why 1/\u221Ad_k matters for learning",
       "This preset's head is unscaled. Open View \xE2\x96\xB8 Training (Ctrl+6), keep d_k = 256 and "
       "associative recall, and press Run: the same head is trained from the same seed with "
       "1/\u221Ad_k and without. Unscaled, every softmax row is almost one-hot from the first "
       "step, its gradient diag(w) \xE2\x88\x92 w w\xE1\xB5\x80 is almost zero and the loss stays near "
       "log 16; scaled, the head finds the matching key. Gradients (Ctrl+5) shows that Jacobian "
       "for one row.",
       "train-scaling", TourTarget::kViews},
      {"Go further",
       "Trick (Ctrl+2) takes the averaging trick apart step by step, Compare (Ctrl+3) puts two "
       "settings side by side, Code (Ctrl+4) is the PyTorch program of what you see. Ctrl+Z "
       "brings back what you had before the tour.",
       nullptr, TourTarget::kViews},
  };
  return steps;
}

}  // namespace attnlab::gui

namespace attnlab::gui {

void UpdateTourTask(AppState& state) {
  TourState& t = state.tour;
  if (!t.active || t.task_done) return;
  const std::vector<TourStep>& steps = TourSteps();
  if (t.step < 0 || t.step >= static_cast<int>(steps.size())) return;
  const TourStep& step = steps[static_cast<size_t>(t.step)];
  if (step.task_done && step.task_done(state)) t.task_done = true;
}

}  // namespace attnlab::gui
