// circuits.h: watch an induction head form. A two-layer attention-only transformer trained with
// AdamW on repeated random sequences, exactly as the same model written in PyTorch trains it, and
// the scores that find its circuit (Olsson et al., "In-context learning and induction heads",
// 2022): a previous-token head in layer 0, a prefix-matching head in layer 1 that copies.
//
// Legend: B batch (sequences per step), T tokens (kCircuitT = 31), D d_model, H heads per layer,
// dh = D / H the head size, V = kCircuitVocab symbols (V + 1 embedding rows: the symbols, then
// BOS), L = 2 layers. Weights are x @ W as in pipeline.h (nn.Linear.weight is the transpose).
//
// The model (no MLP, no LayerNorm, no biases; 11,008 parameters at D 32):
//   x0      = W_E[ids] + W_pos                                          (B*T) x D
//   layer l: Q, K, V = x W_Q, x W_K, x W_V, split into H heads of dh columns
//            A_h     = softmax(causal(Q_h K_h^T / sqrt(dh)))              T x T per sequence
//            z       = [A_1 V_1, ..., A_H V_H]                            (B*T) x D
//            x_{l+1} = x_l + z W_O                                        the residual stream
//   logits  = x_L W_U                                                   (B*T) x V
//   loss    = cross_entropy(logits[:, :-1], ids[:, 1:])  (mean over B * (T - 1) predictions)
//
// Draws, all from PyTorch's CPU generator (random/rng.h), in this order:
//   torch.manual_seed(seed); then the modules as built in order: nn.Embedding(V + 1, D) (W_E),
//   nn.Embedding(T, D) (W_pos), for each layer nn.Linear(D, D, bias=False) for q, k, v, o, then
//   nn.Linear(D, V, bias=False) (W_U). Then each training step draws its batch (below) from the
//   same generator. The evaluation set (kCircuitEvalSize sequences) is drawn first, from a
//   second generator seeded with seed + 1 (torch.Generator().manual_seed(seed + 1)).
// A batch of n sequences (every task: ids = randint(0, V, (n, T)) first, ids[:, 0] = BOS last):
//   variable: N = randint(4, 16, (n,)) (the period), start = 1 + randint(0, 2^24, (n,)) %
//             (T - 2N); from start + N on every token repeats the one N before it: random
//             filler, then a random sequence of N tokens repeated to the end (two copies or
//             more; with one copy only, a layer-0 head that attends to the duplicate token and a
//             layer-1 head that matches positions solve it without any previous-token head).
//   fixed:    N = (T - 1) / 2 = 15, start = 1 (no draws): BOS + r + r. The labelled trap: a layer-1
//             head solves it from positions alone (the offset diagonal), no previous-token head.
//   planted:  p = randint(1, 14, (n,)), q = randint(15, 30, (n,)) (for T 31), then
//             ids[q] = ids[p], ids[q + 1] = ids[p + 1]: one [A][B] ... [A] pair whose answer is B.
// The first copy's targets are the positions [start + 1, start + N) (planted: p + 1), the second
// copy's [start + N + 1, start + 2N) (planted: q + 1; later copies are trained on, not scored): the
// tokens an induction head can predict (the second copy's first token cannot be). A target position
// t is predicted at row t - 1.
//
// tools/make_circuits_goldens.py is the same model in PyTorch (the step-1 goldens in
// tests/golden/circuits/); GenerateCircuitsCode (python/codegen_circuits.h) prints the
// program of a whole run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab {

class TorchGenerator;

/// Number of symbols ("A".."Z", ".", ","); the BOS token is id kCircuitVocab.
inline constexpr int64_t kCircuitVocab = 28;
/// The BOS token's id (position 0 of every sequence; never a target).
inline constexpr int64_t kCircuitBos = kCircuitVocab;
/// Tokens per sequence (BOS + 15 + 15 in the fixed task).
inline constexpr int64_t kCircuitT = 31;
/// Sequences in the evaluation set the losses and scores are measured on.
inline constexpr int64_t kCircuitEvalSize = 64;

/// The training tasks (see the header comment).
enum class CircuitTask { kVariable, kFixed, kPlanted };

/// A task's command-line name ("variable", "fixed", "planted") and a one-line description.
struct CircuitTaskInfo {
  CircuitTask task;
  const char* name;
  const char* description;
};
/// Every task, in the order above.
const std::vector<CircuitTaskInfo>& CircuitTasks();
/// The task named `name`, or nullopt.
std::optional<CircuitTask> ParseCircuitTask(const std::string& name);
/// The task's name, e.g. "planted".
const char* Name(CircuitTask task);
/// A token's label: "A".."Z", ".", "," for the symbols, "<bos>" for kCircuitBos.
std::string CircuitTokenName(int64_t id);

/// What to train. Limits (CheckCircuitOptions, std::invalid_argument naming the option): steps
/// 1..100000, heads 1..8, d_model 4..256 and a multiple of heads, batch 1..256, lr in (0, 10],
/// weight_decay in [0, 1), eval_every >= 1.
struct CircuitOptions {
  CircuitTask task = CircuitTask::kVariable;
  int64_t steps = 3000;
  uint64_t seed = 0;
  int64_t heads = 2;
  int64_t d_model = 32;
  int64_t batch = 16;
  double lr = 1e-2;            ///< AdamW's learning rate
  double weight_decay = 0.01;  ///< AdamW's decoupled weight decay
  int64_t eval_every = 100;    ///< steps between evaluations (and checkpoints)
};

/// Throws std::invalid_argument naming the option ("--heads", ...) when `o` is out of limits.
void CheckCircuitOptions(const CircuitOptions& o);

/// One attention-only layer: D x D each, x @ W; head h owns columns [h dh, (h + 1) dh) of W_Q,
/// W_K, W_V and rows [h dh, (h + 1) dh) of W_O.
struct CircuitLayer {
  Matrix W_Q, W_K, W_V, W_O;
};

/// Every parameter, in the order PyTorch draws (and AdamW updates) them.
struct CircuitParams {
  Matrix W_E;                        ///< (V + 1) x D token embeddings (row kCircuitBos: BOS)
  Matrix W_pos;                      ///< T x D learned position embeddings
  std::vector<CircuitLayer> layers;  ///< 2
  Matrix W_U;                        ///< D x V unembedding
  /// Every tensor in the order above (layers: W_Q, W_K, W_V, W_O); 4L + 3 pointers.
  std::vector<Matrix*> Tensors();
  std::vector<const Matrix*> Tensors() const;
};

/// The initial weights of a model of width D (2 layers, D a multiple of its heads), drawn from
/// `gen` in the modules' order (see the header comment): nn.Embedding draws normal_(0, 1),
/// nn.Linear kaiming_uniform_(a = sqrt(5)) (TorchGenerator::Linear), stored transposed. The
/// training batches continue from `gen`'s state after.
CircuitParams DrawCircuitParams(TorchGenerator& gen, int64_t D);

/// DrawCircuitParams from a generator after torch.manual_seed(options.seed).
/// Errors: as CheckCircuitOptions.
CircuitParams InitCircuitParams(const CircuitOptions& options);

/// n sequences of T tokens, what each one scores, drawn as the header comment says.
struct CircuitBatch {
  int64_t n = 0;
  std::vector<int64_t> ids;                  ///< n * T token ids, sequence after sequence
  std::vector<std::vector<int64_t>> first;   ///< per sequence: the first copy's target positions
  std::vector<std::vector<int64_t>> second;  ///< per sequence: the second copy's targets
  /// per sequence: (query q, previous occurrence p) pairs: the token at q also stands at p < q,
  /// and the token after p (at p + 1) is the one q must predict.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pairs;
};

/// Draws the next batch of n sequences of `task` from `gen` (its state advances).
CircuitBatch DrawCircuitBatch(CircuitTask task, int64_t n, TorchGenerator& gen);

/// A head taken out of the model: its z columns (A_h V_h) replaced by zeros (kZero) or by their
/// mean over the batch's sequences at the same position (kMean), before W_O.
struct HeadAblation {
  enum class Kind { kNone, kZero, kMean };
  Kind kind = Kind::kNone;
  int64_t layer = 0, head = 0;
};

/// Every stage of a forward pass over n sequences.
struct CircuitForward {
  int64_t n = 0, heads = 0;
  std::vector<Matrix> x;  ///< L + 1 residual streams, (n*T) x D: x[0] embeddings, x[L] final
  std::vector<Matrix> Q, K, V, z;  ///< per layer, (n*T) x D (heads side by side)
  std::vector<MatrixStack> A;      ///< per layer, n*H patterns T x T (sequence e, head h: e*H+h)
  Matrix logits;                   ///< (n*T) x V
  /// The pattern of `head` in `layer` for sequence e.
  const Matrix& Pattern(int64_t layer, int64_t e, int64_t head) const {
    return A[layer][e * heads + head];
  }
};

/// Runs the model on `ids` (n sequences of T, n = ids.size() / T) with `heads` heads per layer,
/// keeping every stage in `f` (its buffers are reused). Errors: std::invalid_argument when ids
/// is not a whole number of sequences or holds an id outside [0, V].
void CircuitRunForward(const CircuitParams& p, const std::vector<int64_t>& ids, int64_t heads,
                       CircuitForward& f, const HeadAblation& ablation = {});

/// The step's loss (the header comment's) and d loss / d every parameter, from autograd's
/// rules written out (softmax, causal mask, the residual adds, the embedding scatter).
/// `f` holds the forward pass of batch.ids with p (CircuitRunForward). Returns the loss.
float CircuitBackward(const CircuitParams& p, const CircuitBatch& batch, CircuitForward& f,
                      CircuitParams& grad);

/// torch.optim.AdamW (PyTorch 1.13 single-tensor step: betas 0.9, 0.999, eps 1e-8;
/// param *= 1 - lr * weight_decay first), state for every tensor of CircuitParams.
class CircuitAdamW {
 public:
  CircuitAdamW(const CircuitParams& p, double lr, double weight_decay);
  /// One step of every tensor with its gradient.
  void Step(CircuitParams& p, const CircuitParams& grad);

 private:
  CircuitParams m_, v_;
  int64_t step_ = 0;
  double lr_, weight_decay_;
};

// ---------------------------------------------------------------------------------------------
// The scores. Index convention: A[q, k] is the weight query (row) q gives key (column) k, rows
// and columns 0..T-1 as positions in the sequence.
// ---------------------------------------------------------------------------------------------

/// Previous-token score of one pattern: the mean over queries q = 1..T-1 of A[q, q - 1] (how
/// much each token attends to the one just before it). A perfect previous-token head scores 1;
/// a uniform pattern (every entry 1/T) scores 1/T.
double PreviousTokenScore(const Matrix& A);

/// Prefix-matching score of one pattern on its (q, p) pairs: the mean of A[q, p + 1], the key
/// being the token AFTER the previous occurrence p of q's token (for a repeat of period N,
/// query q in the second copy attends to q - N + 1). That is where an induction head looks: the
/// token that followed last time, which it copies. `duplicate_metric` takes A[q, p] instead
/// (q - N): the published mistake, which finds duplicate-token heads, not induction heads.
/// 0 when there are no pairs.
double PrefixMatchScore(const Matrix& A, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                        bool duplicate_metric = false);

/// The full OV circuit of `head` in `layer`: W_E[:V] W_V^h W_O^h W_U, V x V: row t is what the
/// head adds to the logits when it attends to (the embedding of) token t.
Matrix OvCircuit(const CircuitParams& p, int64_t heads, int64_t layer, int64_t head);

/// Copying score of a head: the fraction of the V tokens t whose own logit is the largest in
/// row t of OvCircuit (attending to t raises t's logit most: the head copies). A head that
/// copies every token scores 1; a random one about 1/V.
double CopyingScore(const CircuitParams& p, int64_t heads, int64_t layer, int64_t head);

/// One evaluation: losses and scores on the evaluation set with the weights after `step` steps.
struct CircuitEval {
  int64_t step = 0;
  double loss_first = 0, loss_second = 0;  ///< mean cross-entropy on each copy's targets
  std::vector<double> prev_token;          ///< per layer-0 head (PreviousTokenScore, averaged)
  std::vector<double> prefix_match;        ///< per layer-1 head (PrefixMatchScore, averaged)
  std::vector<double> duplicate_token;     ///< per layer-1 head (the q - N metric, the trap)
  std::vector<double> copying;             ///< per layer-1 head (CopyingScore)
};

/// Losses and scores of `p` on `evalset` (the scores averaged over every sequence and pair),
/// with `ablation` applied. `f` is scratch (holds the forward pass after).
CircuitEval EvaluateCircuits(const CircuitParams& p, const CircuitBatch& evalset, int64_t heads,
                             const HeadAblation& ablation, CircuitForward& f);

/// The line `circuits` (and the generated PyTorch program) prints for an evaluation:
/// "step   100  loss first 3.3012 second 3.2874  prev-token 0.071 0.052  prefix-match ...
/// copying ..." (four decimals for losses, three for scores).
std::string CircuitLine(const CircuitEval& e);

/// One training run.
struct CircuitRun {
  CircuitOptions options;
  CircuitBatch evalset;
  CircuitParams initial, trained;
  std::vector<float> loss;                 ///< training loss, one per step done
  std::vector<CircuitEval> evals;          ///< at step 0, every eval_every, and the last step done
  std::vector<CircuitParams> checkpoints;  ///< the weights of each evaluation (same order)
  bool cancelled = false;
};

/// Called after each evaluation with the run so far; return false to stop (cancel).
using CircuitObserver = std::function<bool(const CircuitRun& so_far)>;

/// Trains the model (see the header comment): evaluations at step 0, every eval_every steps
/// and after the last step. Errors: as CheckCircuitOptions. Cost: about 50 MFLOP per step at
/// the defaults (bench BM_Circuits3000).
CircuitRun TrainCircuits(const CircuitOptions& options, const CircuitObserver& observe = {});

/// The run as JSON: {"format": "attention-lab/circuits@1", "task", "seed", "heads", "d_model",
/// "batch", "lr", "weight_decay", "cancelled", "steps": [evaluated steps], "loss_first",
/// "loss_second" (one per evaluation), "prev_token" (per evaluation, one per layer-0 head),
/// "prefix_match", "duplicate_token", "copying" (per evaluation, one per layer-1 head),
/// "seconds" (the caller's measured training time)}.
std::string CircuitRunJson(const CircuitRun& run, double seconds);

}  // namespace attnlab
