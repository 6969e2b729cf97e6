// tour.cpp: see tour.h. The steps follow Raschka's chapter 3 (sections 3.3 to 3.6, one
// raschka-* preset each, quoting the numbers the book prints), with the why-1/sqrt(d_k)
// detours of the other notebooks; the texts stay short: the heatmap beside each card does the
// explaining. Rows are 0-based as the panels label them: the book's x(2) is row 1.
#include "gui/state/tour.h"

#include <algorithm>
#include <cmath>

#include "gui/state/app_state.h"

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

/// The hovered cell is (row, col) of the scores (0-based, as the panels label them).
bool HoveredScore(const AppState& state, int64_t row, int64_t col) {
  return state.hover.active && state.hover.stage == Stage::kScores && state.hover.row == row &&
         state.hover.col == col;
}

bool HoveredJourneyStarts(const AppState& state) { return HoveredScore(state, 1, 2); }

bool HoveredJourneyJourney(const AppState& state) { return HoveredScore(state, 1, 1); }

/// The chosen peaking row's entropy within 10% of half the uniform row's, log n (n allowed
/// keys): what step 4 asks.
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
  const double half = 0.5 * std::log(allowed);
  return allowed > 1 && std::abs(total - 1.0) < 1e-3 && std::abs(entropy - half) <= 0.1 * half;
}

bool ScaledBySqrtDk(const AppState& state) {
  return state.error.empty() && state.shown.scaling.sqrt_dk;
}

bool MaskOff(const AppState& state) {
  return state.error.empty() && state.shown.mask.kind == MaskKind::kNone;
}

bool DropoutOff(const AppState& state) {
  return state.error.empty() && state.shown.dropout.p == 0.0;
}

/// The heads' selector shows head 1.
bool ShowsHead1(const AppState& state) { return state.error.empty() && state.head == 1; }

}  // namespace

std::optional<Stage> TargetStage(TourTarget target) {
  switch (target) {
    case TourTarget::kScores:
      return Stage::kScores;
    case TourTarget::kMask:
      return Stage::kMask;
    case TourTarget::kLogits:
      return Stage::kLogits;
    case TourTarget::kWeights:
      return Stage::kWeights;
    case TourTarget::kWeightsDropped:
      return Stage::kWeightsDropped;
    case TourTarget::kContext:
      return Stage::kContext;
    case TourTarget::kNone:
    case TourTarget::kPeaking:
    case TourTarget::kVariance:
    case TourTarget::kControls:
    case TourTarget::kViews:
      return std::nullopt;
  }
  return std::nullopt;
}

const std::vector<TourStep>& TourSteps() {
  static const std::vector<TourStep> steps = {
      {"Welcome to Attention Lab",
       "This tour follows chapter 3 of Raschka's \"Build a Large Language Model (From "
       "Scratch)\": attention without weights, trainable weights, scaling, the causal mask, "
       "dropout, then several heads, each on a preset that prints the book's numbers. Rows and "
       "columns count from 0, as the panels label them: the book's x(2), \"journey\", is row "
       "1 here, and row i is the book's x(i+1) throughout. Everything stays live; some steps "
       "ask you to try something. Skip any time; Help \xE2\x96\xB8 Guided tour (F1) brings it "
       "back.",
       "raschka-3.3-simple", TourTarget::kNone},
      {"3.3 Attention without trainable weights",
       "raschka-3.3-simple: q = k = v = x, no weights, no scaling. Cell (i, j) of the scores "
       "is x_i \xC2\xB7 x_j; row 1 (\"journey\") is the book's attn_scores_2, 0.9544 1.4950 "
       "1.4754 \xE2\x80\xA6. Softmax turns each row into weights that sum to 1 (row 1: 0.1385 "
       "0.2379 \xE2\x80\xA6), and row 1 of the context is z(2) = [0.4419, 0.6515, 0.5683].",
       "raschka-3.3-simple", TourTarget::kScores, TourTarget::kContext,
       "hover the cell where query \"journey\" meets key \"starts\" (row 1, column 2): "
       "1.4754.",
       HoveredJourneyStarts},
      {"3.4 Trainable weights: q, k, v",
       "raschka-journey is SelfAttention_v1: W_query, W_key, W_value = torch.rand(3, 2) after "
       "torch.manual_seed(123) (Projections, left). Each token x is projected to a query, a key "
       "and a value; row 1 of Q is the book's query_2 = [0.4306, 1.4551], and scores row 1 its "
       "attn_scores_2 = 1.2705 1.8524 \xE2\x80\xA6. raschka-3.4-v2 draws the weights with "
       "nn.Linear instead (seed 789).",
       "raschka-journey", TourTarget::kScores, TourTarget::kControls,
       "hover the cell where query \"journey\" meets key \"journey\" (row 1, column 1): the "
       "book's attn_score_22, 1.8524.",
       HoveredJourneyJourney},
      {"3.4 Scaling by 1/\u221Ad_k",
       "Before the softmax the scores are divided by \u221Ad_k (here \u221A2 \xE2\x89\x88 1.41): "
       "row 1 of the weights is the book's attn_weights_2, 0.1500 0.2264 0.2199 \xE2\x80\xA6, "
       "and row 1 of the context its context_vec_2, [0.3061, 0.8210]. The multiplier "
       "m = 1/temperature (left) scales the logits too; the peaking panel below shows one row "
       "as bars and its entropy.",
       "raschka-journey", TourTarget::kLogits, TourTarget::kPeaking,
       "find the multiplier where the peaking row's entropy is half of the uniform row's "
       "(log n, the dashed line), within 10%.",
       EntropyHalved},
      {"Why 1/\u221Ad_k",
       "Here d_k = 16 and the scaling is off: the logits are large and softmax is almost "
       "one-hot, each query listens to one key. Bottom right, why: var(q\xC2\xB7k) grows like d. "
       "Tick \"divide by \u221Ad_k\" on the left and watch the rows soften.",
       "scaling-demo", TourTarget::kWeights, TourTarget::kVariance, "tick \"divide by \u221Ad_k\".",
       ScaledBySqrtDk},
      {"3.5.1 The causal mask",
       "raschka-3.5-causal: SelfAttention_v2 (nn.Linear, seed 789) with a causal mask. A "
       "decoder must not see the future: the keys after each query are hatched, their logits "
       "are \xE2\x88\x92inf and their weights 0. Row 1 keeps keys 0 and 1: 0.5517 and 0.4483, as "
       "the "
       "book prints. Its first try, softmax, then zeroing, then dividing by the row sums, "
       "gives the same numbers.",
       "raschka-3.5-causal", TourTarget::kLogits, TourTarget::kWeights,
       "set the mask to none: the weights are 3.4's again, every row over all 6 tokens.", MaskOff},
      {"3.5.2 Dropout",
       "raschka-3.5-dropout: nn.Dropout(0.5) after torch.manual_seed(123), as the book. Each "
       "weight is dropped (0) or kept and doubled (1/(1 \xE2\x88\x92 p)): row 0 is 2.0, row 1 "
       "lost both of its weights, row 2 reads 0.7599 0.6194 0.6206. The context uses these "
       "weights; dropout acts only while training.",
       "raschka-3.5-dropout", TourTarget::kWeightsDropped, TourTarget::kWeights,
       "set dropout p to 0 (left): the weights after dropout are the weights again.", DropoutOff},
      {"3.6.1 Heads: one module per head",
       "raschka-3.6-wrapper is MultiHeadAttentionWrapper: two CausalAttention heads on a batch "
       "of two, each head drawing its own weights (\"one module per head\", Projections). "
       "Context columns 0\xE2\x80\x93"
       "1 are head 0, which is 3.5.3's CausalAttention "
       "(-0.4519, 0.2216 in row 0), columns 2\xE2\x80\x93"
       "3 head 1 (0.4772, 0.1063).",
       "raschka-3.6-wrapper", TourTarget::kContext, TourTarget::kControls,
       "show head 1 (the head selector above the maps): its weights differ from head 0's.",
       ShowsHead1},
      {"3.6.2 MultiHeadAttention",
       "raschka-3.6-mha draws each W whole (d_in \xC3\x97 d_out = 3 \xC3\x97 2) and splits it "
       "into 2 heads of d_k = 1; out_proj, a last nn.Linear, mixes the heads' columns. Row 0 of "
       "the context is the book's 0.3190, 0.4858.",
       "raschka-3.6-mha", TourTarget::kContext, TourTarget::kWeights},
      {"Why 1/\u221Ad_k matters for learning",
       "This preset's head is unscaled. Open View \xE2\x96\xB8 Training (Ctrl+6), keep d_k = 256 "
       "and "
       "associative recall, and press Run: the same head is trained from the same seed with "
       "1/\u221Ad_k and without. Unscaled, every softmax row is almost one-hot from the first "
       "step, its gradient diag(w) \xE2\x88\x92 w w\xE1\xB5\x80 is almost zero and the loss stays "
       "near "
       "log 16; scaled, the head finds the matching key. Gradients (Ctrl+5) shows that Jacobian "
       "for one row.",
       "train-scaling", TourTarget::kViews},
      {"Go further",
       "Trick (Ctrl+2) takes Karpathy's averaging trick apart step by step, Compare (Ctrl+3) "
       "puts two settings side by side, Code (Ctrl+4) is the PyTorch program of what you see. "
       "Finish (or Skip, at any step) brings back what you had before the tour, as one undo "
       "step: Ctrl+Z then returns to the tour's last example.",
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
