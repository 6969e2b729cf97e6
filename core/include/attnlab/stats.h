// stats.h: the variances the notebooks print, q.var(), k.var(), wei.var(), ... over whole stages.
//
// Legend: B batch, H heads, T tokens, d_out = d_k * H. Q and K are B x T x d_out, scores,
// logits and weights (B*H) x T x T (pipeline.h). Every variance is over all elements of the
// stage (or of one batch and head), as `tensor.var()` with no dim computes it.
#pragma once

#include <cstdint>

#include "attnlab/pipeline.h"
#include "attnlab/pipeline_f64.h"

namespace attnlab {

/// Whose `.var()` to reproduce.
enum class VarianceKind {
  /// torch.Tensor.var() on float32 (PyTorch 1.13, CPU, all dims: std_var_all_cpu): the mean
  /// is torch.mean's float32 value (TorchContiguousSum / n), the squared deviations from it
  /// are summed in double, divided by n - 1 (unbiased) and rounded to float32 (inf above
  /// FLT_MAX). nan when n < 2 or any element is inf or nan (masked logits: -inf). Bit for bit
  /// below 32768 elements (tests/golden/qkv); above, PyTorch's threads split the sums.
  kTorchUnbiased,
  /// numpy.ndarray.var() (ddof = 0): mean and squared deviations in double, divided by n.
  /// nan when any element is inf or nan. Of a float32 scenario: NumPy's var of the float32
  /// stage widened to float64; of a float64 one (StackVarianceF64): NumPy's own pairwise sums
  /// (numpy's pairwise_sum over the flat array), bit for bit for the drawn q and k.
  kNumpy,
};

/// The variance of all elements of `stack` (B or B*H matrices), as `kind` computes it.
/// Returns nan for an empty stack.
double StackVariance(const MatrixStack& stack, VarianceKind kind);

/// The variance of every entry of one matrix scaled in float32 as PyTorch scales a tensor by a
/// number: m * multiply, then / divide unless divide is 1 (Karpathy's
/// `(q @ k.transpose(-2, -1) * head_size**-0.5).var()`, the window's "scaled" variance), as
/// StackVariance(MatrixStack{scaled}, kind) gives it but without a copy of m: at T = 11000 a
/// copy is 484 MB. nan for an empty matrix.
double ScaledVariance(const Matrix& m, float multiply, float divide, VarianceKind kind);

/// The same over a float64 stack (dtype float64): kTorchUnbiased is torch.Tensor.var() of a
/// float64 tensor (double mean, squared deviations summed in double, / (n - 1), no rounding to
/// float32), kNumpy ndarray.var() of a float64 array with NumPy's pairwise summation.
double StackVarianceF64(const MatrixStackD& stack, VarianceKind kind);

/// The notebooks' variance prints of one run. Each is a double holding the value the notebook
/// prints (a float32 value for kTorchUnbiased).
struct StageVariances {
  double var_q = 0, var_k = 0;  ///< Q.var(), K.var() (B x T x d_out)
  double var_scores = 0;        ///< (Q @ K^T).var(), (B*H) x T x T
  double var_logits = 0;        ///< the scaled, masked logits: nan when a cell is -inf
  double var_weights = 0;       ///< the attention weights (before dropout)
};

/// The variances over the whole tensors: what `dump` writes as "stats". A float64 run
/// (st.f64 set) is measured in float64 (StackVarianceF64). `kind` defaults to the
/// scenario's generator: torch -> kTorchUnbiased, numpy -> kNumpy (VarianceKindOf).
StageVariances WholeVariances(const Stages& st, VarianceKind kind);

/// The same for batch b and head h only: Q and K restricted to head h's d_k columns of
/// batch b, scores, logits and weights the T x T matrix of (b, h). Error: std::out_of_range
/// when b or h is outside the stages.
StageVariances HeadVariances(const Stages& st, int64_t b, int64_t h, VarianceKind kind);

/// kNumpy for the numpy generator, kTorchUnbiased otherwise.
VarianceKind VarianceKindOf(Generator generator);

}  // namespace attnlab
