// variance.h: the variance of a tensor's entries, as torch.Tensor.var() or numpy.ndarray.var()
// computes it, of float32 and float64 stacks, one matrix, or one head's columns. The pipeline
// keeps K.var() with its stages (pipeline.h); stats.h takes the variances of whole stages.
//
// Legend: B batch, H heads, T tokens, d_k the head size. A stack is B or B*H row-major
// matrices (tensor.h); every variance is over all its elements, as `tensor.var()` with no dim.
#pragma once

#include <cstdint>

#include "attnlab/base/tensor.h"
#include "attnlab/model/scenario.h"

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

/// The variance of all entries of one matrix, as StackVariance(MatrixStack{m}, kind) gives it
/// but without a copy of m (a T x T stage of one head). nan for an empty matrix.
double MatrixVariance(const Matrix& m, VarianceKind kind);

/// The variance of columns [col, col + n) of m (one head's d_k columns of Q or K), as
/// StackVariance of that block copied out. Precondition: 0 <= col, col + n <= m.cols().
double ColumnsVariance(const Matrix& m, int64_t col, int64_t n, VarianceKind kind);

/// MatrixVariance of a float64 matrix, as StackVarianceF64(MatrixStackD{m}, kind).
double MatrixVarianceF64(const MatrixD& m, VarianceKind kind);

/// ColumnsVariance of a float64 matrix, as StackVarianceF64 of that block copied out.
/// Precondition: 0 <= col, col + n <= m.cols().
double ColumnsVarianceF64(const MatrixD& m, int64_t col, int64_t n, VarianceKind kind);

/// kNumpy for the numpy generator, kTorchUnbiased otherwise.
VarianceKind VarianceKindOf(Generator generator);

}  // namespace attnlab
