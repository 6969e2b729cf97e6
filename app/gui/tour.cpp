// tour.cpp: see tour.h. The texts follow the seed notebooks (Raschka ch. 3, Karpathy's
// "mathematical trick", self-attention-from-scratch) and stay short: the heatmap beside each
// card does the explaining.
#include "gui/tour.h"

namespace attnlab::gui {

const std::vector<TourStep>& TourSteps() {
  static const std::vector<TourStep> steps = {
      {"Welcome to Attention Lab",
       "This tour follows the notebooks' story in six short steps: scores, scaling, softmax, "
       "why 1/\u221Ad_k, the mask and the context. Everything stays live: change anything on "
       "the left as you go. Skip it any time; Help \xE2\x96\xB8 Guided tour (F1) brings it back.",
       "raschka-journey", TourTarget::kNone},
      {"Scores: q \xC2\xB7 k",
       "Each token x is projected to a query q, a key k and a value v. Cell (i, j) is "
       "q_i \xC2\xB7 k_j: how well query i matches key j. Rows are queries, columns keys. Hover "
       "a cell to see its dot product.",
       "raschka-journey", TourTarget::kScores},
      {"Scaling by 1/\u221Ad_k",
       "Before the softmax the scores are divided by \u221Ad_k (here \u221A2 \xE2\x89\x88 1.41) "
       "and multiplied by m = 1/temperature. Drag the multiplier on the left: the logits grow "
       "or shrink, the weights sharpen or flatten.",
       "raschka-journey", TourTarget::kLogits, TourTarget::kControls},
      {"Softmax",
       "softmax makes each row of logits positive and sum to 1: the attention weights. Below, "
       "the peaking panel shows one row as bars and its entropy: how many keys the query really "
       "averages over.",
       "raschka-journey", TourTarget::kWeights, TourTarget::kPeaking},
      {"Why 1/\u221Ad_k",
       "Here d_k = 16 and the scaling is off: the logits are large and softmax is almost "
       "one-hot, each query listens to one key. Bottom right, why: var(q\xC2\xB7k) grows like d. "
       "Tick \"divide by \u221Ad_k\" on the left and watch the rows soften.",
       "scaling-demo", TourTarget::kWeights, TourTarget::kVariance},
      {"The causal mask",
       "A decoder must not see the future: the causal mask forbids the keys after each query "
       "(hatched). Their logits become \xE2\x88\x92inf, their weights 0. With equal weights each "
       "token simply averages its past: Karpathy's \"mathematical trick\".",
       "karpathy-trick", TourTarget::kMask, TourTarget::kWeights},
      {"Context = weights V",
       "Row i of the context is the average of the value vectors, weighted by row i of the "
       "weights. In a real head the weights come from q\xC2\xB7k, so each token chooses whom to "
       "listen to.",
       "karpathy-head", TourTarget::kContext, TourTarget::kWeights},
      {"Go further",
       "Trick (Ctrl+2) takes the averaging trick apart step by step, Compare (Ctrl+3) puts two "
       "settings side by side, Code (Ctrl+4) is the PyTorch program of what you see. Ctrl+Z "
       "brings back what you had before the tour.",
       nullptr, TourTarget::kViews},
  };
  return steps;
}

}  // namespace attnlab::gui
