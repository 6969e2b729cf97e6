// grad.h: gradients of attention, for the learner's loss "query row I should attend to key J".
//
// The Transformer paper scales the logits by 1/sqrt(d_k) because large dot products "push the
// softmax into regions where it has extremely small gradients". This header computes those
// gradients from the stages of a run (pipeline.h), as torch.autograd computes them for the same
// scenario (the goldens in tests/golden/grad, made by tools/make_grad_goldens.py with Debian's
// PyTorch; float32 arithmetic, equal up to float32 rounding).
//
// Legend: B batch, H heads, T tokens, d_in input width, d_out projection width, dh = d_out / H
// (d_k). The loss, for a query row I and a key J (0-based, as the dump's arrays):
//
//   L = -sum_{b,h} log weights[b, h, I, J]
//
// i.e. the cross-entropy of row I of every head against key J. Its chain, backwards:
//   grad_logits[b,h] (T x T)  only row I is non-zero: the normalization's backward
//   grad_scores[b,h]          grad_logits / sqrt(dh) (if scaled) * multiplier; 0 where masked
//                             (scaling.softcap c: first * c * (1 - tanh(x / c)^2) / c, x the
//                             scaled score with ALiBi's bias; ALiBi adds a constant, so it
//                             changes nothing else; scaling.sink: the softmax backward is
//                             unchanged, the sink's column has no gradient of its own; sink_form
//                             "sigmoid" is the same function wherever the row sees a key,
//                             so the same backward, nan in a row that sees none)
//   grad_Q[b], grad_K[b]      (T x d_out) head slices: grad_scores_h K_h and grad_scores_h^T Q_h
//   grad_W_query, grad_W_key  (d_in x d_out, x @ W): sum_b X_b^T grad_Q[b] (and grad_K[b]);
//                             with projections.head_split "view_no_transpose" grad_Q and grad_K
//                             are laid out as the heads read Q and K, and each cell is taken
//                             back to the projection's cell it came from (HeadSplitSource)
//                             projections.qk_norm: grad_Q and grad_K are with respect to the
//                             stages Q and K as shown (normalized when the norm comes before
//                             RoPE or without it; with "after_rope" the norm's backward runs
//                             before the rotation's), and W's gradient goes back through the
//                             norm (QkNormBackward, in double from the stored rows)
// Dropout does not enter (the loss is on the weights, before dropout), nor do V and out_proj.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/lessons/experiments.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"

namespace attnlab {

/// A loss that cannot be formed: a row or key outside 0..T-1, or a key the mask forbids for the
/// row (its weight is 0 and -log 0 is infinite). what() is one line naming the culprit.
class GradError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The gradients of L = -sum_{b,h} log weights[b, h, row, key] with respect to each stage.
struct Gradients {
  int64_t row = 0;          ///< I, the query row of the loss
  int64_t key = 0;          ///< J, the key it should attend to
  double loss = 0.0;        ///< L itself (the float32 weights' logs summed in double)
  MatrixStack grad_logits;  ///< (B*H) x T x T, index b * H + h; zero outside row I and
                            ///< where masked (weight 0), unless the row's gradient is nan
  MatrixStack grad_scores;  ///< (B*H) x T x T; zero outside row I and where masked
  MatrixStack grad_Q;       ///< B x T x d_out; zero outside row I
  MatrixStack grad_K;       ///< B x T x KV * dh (d_out unless kv_heads groups K)
  Matrix grad_W_query;      ///< d_in x d_out; 0 x 0 for input.source "qkv" (no W)
  Matrix grad_W_key;        ///< d_in x KV * dh; 0 x 0 for input.source "qkv"
  Matrix jacobian_row;      ///< T x T: d weights[0,0,I,:] / d logits[0,0,I,:]
};

/// The gradients of the loss for query row `row` and key `key` of a run of `scenario` (the
/// scenario whose `stages` these are: its scaling, mask and normalization are read from it).
/// float32 arithmetic in the order torch.autograd takes: log's backward -1 / w_J, then the
/// normalization's backward, then / float32(sqrt(dh)) and * float32(multiplier).
///   softmax, softmax_naive (the same function): grad_z = w * (g - g_J w_J), g = -1/w_J at J
///     (= w - onehot(J)); a weight that underflowed to 0 at J gives nan, as in PyTorch.
///   sum: w = z / S over the allowed keys: grad_z = 1/S - [k = J]/z_J on allowed keys.
///   mean: the weights do not depend on the logits: every gradient is 0.
/// Errors: GradError for a row or key outside 0..T-1, a key masked for the row (the message
/// names the mask kind), or scaling.scale_at "q_and_k" (worked out for the scores form). Cost: O(B
/// H T dh + B T d_in d_out), memory two (B*H) x T x T stacks.
Gradients LossGradients(const Scenario& scenario, const Stages& stages, int64_t row, int64_t key);

/// The Jacobian d weights[b,h,row,:] / d logits[b,h,row,:] (T x T, entry (k, m) = d w_k / d z_m)
/// of the scenario's normalization: softmax and softmax_naive diag(w) - w w^T; sum
/// (delta_km - w_k) / S on allowed columns m (S the row's sum over allowed logits), 0 on masked
/// ones; mean 0. A masked key has weight 0, so its row and column are 0. Errors: GradError for
/// b, h or row out of range.
Matrix RowJacobian(const Scenario& scenario, const Stages& stages, int64_t b, int64_t h,
                   int64_t row);

/// The softmax Jacobian diag(w) - w w^T of one row of weights (1 x T), T x T, float32.
Matrix SoftmaxJacobian(const RowVector& weights);

/// Frobenius norm of diag(w) - w w^T from the weights alone, in double:
/// sqrt(sum w^2 - 2 sum w^3 + (sum w^2)^2). 0 for a one-hot row, sqrt(n - 1) / n for a uniform
/// row over n keys: how much gradient the softmax lets through. nan if a weight is nan.
double SoftmaxJacobianNorm(const RowVector& weights);

/// The softmax Jacobian's Frobenius norm (d w / d logits, over the keys) of one row of scores
/// (1 x T, before scaling) at each multiplier m: w = SoftmaxRowAt(scores, allowed, rules, m)
/// (experiments.h: the scenario's scaling, ALiBi, soft-cap and sink) over the keys where
/// `allowed` is non-zero (1 x T of 0/1, or empty for all); computed in double, as PeakingCurve
/// computes the entropy, so the two curves share their x axis. With a sink the keys' block of
/// the Jacobian is still diag(w) - w w^T (the sink's logit is a constant).
std::vector<double> JacobianNormCurve(const RowVector& scores, const std::vector<uint8_t>& allowed,
                                      const CurveRules& rules,
                                      const std::vector<double>& multipliers);

/// Frobenius norm of a stack of matrices (all entries), in double; nan if any entry is nan.
double StackNorm(const MatrixStack& stack);

}  // namespace attnlab
