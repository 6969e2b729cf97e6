// pipeline_f64.h: the pipeline in float64, for scenarios with "dtype": "float64".
//
// Legend as pipeline.h: B batch, H heads, T tokens, d_in, d_out, dh = d_out / H, d_v (the width
// of V and the context), dh_v = d_v / H. Every stage has the shape it has in Stages, in double.
// The float32 engine still runs first (the window and the figures read its Stages);
// ComputeFloat64 then recomputes every stage in double from scratch, keeps the double values in
// Stages::f64 and overwrites the float fields with them rounded to float32, so that what is
// drawn is the float64 result.
//
// What float64 means, per generator:
//   - torch: every tensor is torch.float64 (torch.randn(..., dtype=torch.float64), nn.Linear and
//     nn.Embedding with dtype=torch.float64). PyTorch 1.13 draws float64 normals differently
//     from float32 ones: below 16 elements the same double Box-Muller with its cached sine half
//     (normal_distribution<double>), from 16 on normal_fill's generic blocks of 16 from 53-bit
//     uniforms, with libm log, cos and sin in double (there is no AVX2 float64 kernel).
//     torch.rand and uniform_ draw 53-bit uniforms (one 64-bit word per element), the AVX2 build
//     fusing x * width + low as for float32. Dropout keeps with U53 < 1 - p and scales by
//     1 / (1 - p) in double.
//   - numpy: NumPy's float64 draws as they are (np.random.randn, np.random.rand), no rounding;
//     the products (X @ W, q @ k.T, weights @ v) summed as np.matmul sums them with Debian's
//     reference BLAS: each element left to right over the inner index, so the scores and their
//     variance are NumPy's to the last bit.
// Numbers written in the scenario (matrix input, Q/K/V given, W matrices) are read as the
// double of their text as the scenario file and the generated program write it (the shortest
// float32 text: "0.43" is the double 0.43, not float32(0.43) widened), which is what
// torch.tensor(..., dtype=torch.float64) and np.array(...) make of the program's literals.
// Checked against real PyTorch and NumPy in tests/golden/f64 (tools/make_qkv_goldens.py): the
// draws bit for bit, the arithmetic to float64 rounding (torch's summation orders differ; the
// NumPy notebook's np.matmul(q, k.T) is matched exactly, tests/notebook_test.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "attnlab/numpy_rng.h"
#include "attnlab/pipeline.h"
#include "attnlab/rng.h"

namespace attnlab {

/// A float64 matrix in row-major storage (the tensor's flat order).
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// A float64 row vector.
using RowVectorD = Eigen::Matrix<double, 1, Eigen::Dynamic, Eigen::RowMajor>;
/// B x rows x cols, or (B*H) x T x T, as MatrixStack.
using MatrixStackD = std::vector<MatrixD>;

/// Every stage of a float64 run, shaped as the float fields of Stages (pipeline.h).
struct StagesF64 {
  MatrixStackD X;                     ///< B x T x d_in; empty for qkv input
  std::array<MatrixD, 3> W;           ///< d_in x d_out each (x @ W); 0 x 0 for qkv input
  std::array<RowVectorD, 3> bias;     ///< 1 x d_out, empty without bias
  MatrixD out_proj_W;                 ///< d_out x d_out, empty without out_proj
  RowVectorD out_proj_bias;           ///< 1 x d_out, empty without out_proj
  MatrixStackD Q, K;                  ///< B x T x d_out
  MatrixStackD V;                     ///< B x T x d_v
  MatrixStackD scores, logits;        ///< (B*H) x T x T
  MatrixStackD weights;               ///< (B*H) x T x T
  MatrixStackD weights_dropped;       ///< (B*H) x T x T, empty when dropout p == 0
  MatrixStackD context;               ///< B x T x d_v
};

/// PyTorch's CPU generator for float64 tensors (PyTorch 1.13; see the file comment). Copyable.
class TorchGeneratorF64 {
 public:
  explicit TorchGeneratorF64(NormalKernel kernel = DetectNormalKernel());
  /// torch.manual_seed(seed): the low 32 bits seed MT19937, the cached normal is dropped.
  void Seed(uint64_t seed);
  /// torch.randn(n, dtype=torch.float64), C order.
  std::vector<double> Normal(int64_t n);
  /// torch.rand(n, dtype=torch.float64) / uniform_(low, high) on a float64 tensor.
  std::vector<double> Uniform(int64_t n, double low = 0.0, double high = 1.0);
  /// nn.Linear(in_features, out_features, bias, dtype=torch.float64): weight (out x in,
  /// row-major) then bias, as reset_parameters draws them.
  struct LinearInit {
    std::vector<double> weight, bias;
  };
  LinearInit Linear(int64_t in_features, int64_t out_features, bool bias);
  /// nn.Dropout(p) in training mode on float64 data, in place; p in [0, 1).
  void Dropout(double* x, int64_t n, double p);

 private:
  double U53();
  double NormalScalar();
  std::mt19937 engine_;
  std::optional<double> cached_normal_;
  NormalKernel kernel_;
};

/// The double a number written in a scenario stands for: the double of its shortest float32
/// text (ShortestFloat), e.g. 0.43f -> 0.43. Non-finite values stay as they are.
double WrittenAsDouble(float v);

/// Runs `scenario` in float64 (scenario.dtype is not consulted) with the shape and the mask of
/// `stages` (a float32 run of the same scenario). Errors: std::bad_alloc.
StagesF64 RunFloat64(const Scenario& scenario, const Stages& stages);

}  // namespace attnlab
