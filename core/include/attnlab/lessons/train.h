// train.h: train one attention head with Adam on a synthetic task whose right answer is known,
// with 1/sqrt(d_k) or without, exactly as the same loop written in PyTorch trains it.
//
// Legend: B batch (examples per step), T tokens (the scenario's), d_in the scenario's input
// width, d_k the head size (the scenario's d_out, or the override), vocab = kTrainVocab symbols.
//
// The head: W_query, W_key, W_value (d_in x d_k, x @ W as in pipeline.h; nn.Linear.weight is
// the transpose) and their biases when projections.bias is set, drawn as the engine draws them
// for the scenario (Engine::Run with d_out = d_k and one head). The task's fixed parts come
// next, after torch.manual_seed(data_seed): symbol embeddings E = randn(vocab, d_in), then
// position embeddings P = randn(T, d_in) (previous-token, copy-first) or key embeddings
// Kemb = randn(T - 1, d_in) (associative-recall), then the readout R = randn(d_k, vocab) /
// sqrt(d_k). Each step draws a batch (below), runs the head
//
//   Q, K, V = X W_query (+b), X W_key (+b), X W_value (+b)          (B x T x d_k)
//   weights = softmax(Q K^T / sqrt(d_k))   (no division with no-scale; no mask)   (B x T x T)
//   context = weights V;  out = context R                               (B x T x vocab)
//   loss    = cross_entropy(out[rows], target)  (mean over the rows the task scores)
//
// and takes one torch.optim.Adam step (betas 0.9, 0.999, eps 1e-8, no weight decay; the
// single-tensor update of PyTorch 1.13, bias corrections in double as Python computes them).
// The tasks (batch draws in this order from the same generator):
//   previous-token:     ids = randint(0, vocab, (B, T)); X = E[ids] + P; row i >= 1 must
//                       predict ids[i - 1] (attend to the previous token).
//   copy-first:         ids as above; every row must predict ids[0] (attend to token 0).
//   associative-recall: keys = argsort(rand(B, T - 1), stable) (a permutation of the T - 1 key
//                       symbols), values = randint(0, vocab, (B, T - 1)), which = randint(0,
//                       T - 1, (B,)); X[t] = Kemb[keys[t]] + E[values[t]] for t < T - 1 and
//                       X[T - 1] = Kemb[keys[which]]; the last row must predict values[which]
//                       (attend to the pair whose key matches the query's).
// tools/make_train_goldens.py writes the same loop in PyTorch (and GenerateTrainingCode
// prints it); tests/train_test.cpp compares loss and weights with its goldens.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/scenario.h"

namespace attnlab {

/// Number of symbols of every task (the readout's width): "A".."P".
inline constexpr int64_t kTrainVocab = 16;

/// The synthetic tasks (see the header comment for what each one asks of attention).
enum class TrainTask { kPreviousToken, kCopyFirst, kAssociativeRecall };

/// A task's command-line name ("previous-token", "copy-first", "associative-recall") and a
/// one-line description for --help and the window.
struct TrainTaskInfo {
  TrainTask task;
  const char* name;
  const char* description;
};
/// Every task, in the order above.
const std::vector<TrainTaskInfo>& TrainTasks();
/// The task named `name`, or nullopt.
std::optional<TrainTask> ParseTrainTask(const std::string& name);
/// The task's name, e.g. "copy-first".
const char* Name(TrainTask task);

/// What to train. Limits (checked by TrainAttentionHead, std::invalid_argument naming the
/// option): steps 1..100000, batch 1..256, d_k 0 (the scenario's d_out) or 1..1024,
/// lr in (0, 10], example in [0, batch).
struct TrainOptions {
  TrainTask task = TrainTask::kPreviousToken;
  int64_t steps = 100;
  bool scale = true;           ///< divide the scores by sqrt(d_k) (false: --no-scale)
  int64_t d_k = 0;             ///< 0: the scenario's d_out
  double lr = 0.01;            ///< Adam's learning rate
  int64_t batch = 16;          ///< examples per step
  uint64_t data_seed = 0;      ///< torch.manual_seed before the task's tables and batches
  int64_t example = 0;         ///< which example of the first batch the snapshots show
  int64_t snapshot_every = 0;  ///< 0: about 200 snapshots over the run
};

/// The trainable parameters in the engine's convention: W are d_in x d_k (x @ W), biases
/// 1 x d_k (empty without bias).
struct HeadParams {
  std::array<Matrix, 3> W;     ///< indexed by Projection: query, key, value
  std::array<RowVector, 3> b;  ///< empty when the scenario has no bias
};

/// The attention weights (T x T) of the chosen example with the parameters the loss of
/// `step` was computed with (step == steps: the trained head).
struct TrainSnapshot {
  int64_t step = 0;
  Matrix weights;
};

/// One training run.
struct TrainRun {
  TrainOptions options;
  int64_t T = 0, d_in = 0, d_k = 0;
  std::vector<float> loss;                  ///< one per step done (fewer than steps when cancelled)
  HeadParams initial, trained;              ///< before the first step, after the last one done
  std::vector<TrainSnapshot> snapshots;     ///< in step order; the last is the trained head's
  Matrix example_X;                         ///< T x d_in: the chosen example's input
  std::vector<std::string> example_tokens;  ///< its T labels ("C", or "k2:F" and "k2?")
  bool cancelled = false;
};

/// Called after each step with the number of steps done; return false to stop (cancel).
using TrainProgress = std::function<bool(int64_t steps_done)>;

/// Bytes a training run of a T-token, d_in-wide scenario holds besides its scenario's stages
/// (for CheckCommandMemory): the batch's X (B*T x d_in), about a dozen (B*T) x d_k buffers of
/// the forward and backward passes, the B x T x T weights, six copies of the three d_in x d_k
/// weights (initial, current, gradient, Adam's two moments, trained), the task's tables and 201
/// snapshots of T x T, each counted generously. Measured: T 128, B 256, d_in = d_k = 1024:
/// 1.55 GB peak, estimated 1.9 GiB.
double EstimateTrainBytes(int64_t T, int64_t d_in, const TrainOptions& options, int64_t d_k);

/// Trains the head of `scenario` on `options.task` (see the header comment).
/// Errors: ScenarioError (invalid scenario; qkv input, which has no projections; init matrix
/// or identity with a d_k override other than its d_out; T < 3 or T > 128);
/// std::invalid_argument naming the option ("--steps", "--d-k", ...), or a run whose memory
/// (EstimateTrainBytes) would pass kMaxStageBytes (CheckCommandMemory's message).
/// Cost: about 10 * B * T * d_in * d_k flops per step (500 steps of B 16, T 16, d 64: see
/// bench BM_TrainHead).
TrainRun TrainAttentionHead(const Scenario& scenario, const TrainOptions& options,
                            const TrainProgress& progress = {});

/// The experiment the Training view runs: `options` trained with 1/sqrt(d_k), then without
/// (options.scale is ignored), from the same seed. `progress` (may be empty) gets the steps done
/// over both runs (0 .. 2 * steps); when it returns false the run stops there, the unscaled run
/// is not started, and the result's `cancelled` says so. Errors as TrainAttentionHead.
std::array<TrainRun, 2> TrainScaledAndUnscaled(const Scenario& scenario, TrainOptions options,
                                               const TrainProgress& progress = {});

/// Called after each step with the run so far: loss (one per step done), the snapshots taken
/// so far (the trained head's last one comes only with the result), example_X and
/// example_tokens (set at step 0). Return false to stop (cancel). The Training view copies
/// what is new under its own lock, so the curves grow while the run goes on.
using TrainObserver = std::function<bool(const TrainRun& so_far)>;

/// TrainAttentionHead, calling `observe` (may be empty) after each step. Same result and errors.
TrainRun TrainAttentionHeadObserved(const Scenario& scenario, const TrainOptions& options,
                                    const TrainObserver& observe);

/// The run as JSON: {"format": "attention-lab/train@1", "task", "steps", "scale", "d_k", "lr",
/// "batch", "data_seed", "T", "d_in", "loss": [one per step], "W_query", "W_key", "W_value"
/// (d_in x d_k, trained, as dump writes W), "b_query", ... (when biased), "cancelled"}.
std::string TrainRunJson(const TrainRun& run);

/// Loss curves as CSV: "step,<name 1>,<name 2>,..." then one line per step (shorter runs leave
/// their cells empty). Values printed with 9 significant digits (float32 round trip).
std::string LossCurvesCsv(const std::vector<const TrainRun*>& runs,
                          const std::vector<std::string>& names);

/// A scenario that opens the trained head in the window: input = the chosen example's X
/// (matrix, its tokens), projections init "matrix" with the trained W (biases folded in as an
/// extra input column of ones, named "1"), scaling as trained, no mask, softmax, no dropout.
Scenario TrainedHeadScenario(const TrainRun& run);

}  // namespace attnlab
