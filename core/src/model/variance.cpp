// variance.cpp: see variance.h.
#include "attnlab/model/variance.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/torch_sum.h"

namespace attnlab {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The sum of (x[i] - mean)^2 over x[0..n) in double, in eight interleaved partial sums: a loop
// the compiler vectorizes (Eigen's sum of the cast expression adds one element at a time).
double SquaredDeviations(const float* x, int64_t n, double mean) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const double d = static_cast<double>(x[i + j]) - mean;
      part[j] += d * d;
    }
  double sq = 0.0;
  for (; i < n; ++i) sq += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
  for (double p : part) sq += p;
  return sq;
}

// The mean, then the squared deviations from it summed in double. torch: the mean is
// torch.mean of the float32 tensor (its float32 sum / n, as std_var_all_cpu takes it), NumPy:
// the double sum / n.
template <typename Blocks>
double Variance(const Blocks& blocks, VarianceKind kind) {
  using Block = std::decay_t<decltype(blocks[0])>;
  // A Matrix or a Map of one is row-major and contiguous: its data is the tensor's flat order.
  constexpr bool kContiguous = !std::is_same_v<Block, Eigen::Block<const Matrix>>;
  double sum = 0.0, n = 0.0;
  for (const auto& m : blocks) {
    if (kind != VarianceKind::kTorchUnbiased) sum += m.template cast<double>().sum();
    n += static_cast<double>(m.size());
  }
  if (n == 0) return kNan;
  double mean = sum / n;
  if (kind == VarianceKind::kTorchUnbiased) {
    // torch.mean's float32 sum in its order. One contiguous matrix (a T x T stage of one head)
    // is summed where it is: no copy of up to T^2 floats (484 MB at T = 11000).
    std::vector<float> flat;
    const float* data = nullptr;
    if (blocks.size() == 1 && kContiguous) {
      data = blocks[0].data();
    } else {
      for (const auto& m : blocks) {
        if constexpr (kContiguous) {
          flat.insert(flat.end(), m.data(), m.data() + m.size());
        } else {
          const Matrix copy = m;  // columns of a head: made contiguous, row by row
          flat.insert(flat.end(), copy.data(), copy.data() + copy.size());
        }
      }
      data = flat.data();
    }
    mean = static_cast<double>(TorchContiguousSum(data, static_cast<int64_t>(n)) /
                               static_cast<float>(n));
  }
  double sq = 0.0;
  for (const auto& m : blocks) {
    if constexpr (kContiguous)
      sq += SquaredDeviations(m.data(), m.size(), mean);
    else
      sq += (m.template cast<double>().array() - mean).square().sum();
  }
  if (kind == VarianceKind::kNumpy) return sq / n;
  if (n < 2) return kNan;
  return static_cast<float>(sq / (n - 1));  // torch returns a float32 tensor
}

// numpy's pairwise_sum (numpy/core/src/umath/loops_utils.h.src) of a[0..n-1]: below 8 elements
// in order, up to 128 in eight interleaved partial sums, above that the two halves (cut at a
// multiple of 8) summed separately.
double PairwiseSum(const double* a, int64_t n) {
  if (n < 8) {
    double res = 0.0;  // numpy starts from -0.0 in newer versions; 0.0 + x == x but for -0
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

template <typename Blocks>
double VarianceF64(const Blocks& blocks, VarianceKind kind) {
  std::vector<double> flat;
  for (const auto& m : blocks) {
    const MatrixD copy = m;  // row-major: the array's flat order
    flat.insert(flat.end(), copy.data(), copy.data() + copy.size());
  }
  const int64_t n = static_cast<int64_t>(flat.size());
  if (n == 0) return kNan;
  if (kind == VarianceKind::kNumpy) {  // _var: mean, x = a - mean, x * x, sum / n
    const double mean = (0.0 + PairwiseSum(flat.data(), n)) / static_cast<double>(n);
    for (double& v : flat) v = (v - mean) * (v - mean);
    return (0.0 + PairwiseSum(flat.data(), n)) / static_cast<double>(n);
  }
  if (n < 2) return kNan;
  double sum = 0.0;
  for (double v : flat) sum += v;
  const double mean = sum / static_cast<double>(n);
  double sq = 0.0;
  for (double v : flat) sq += (v - mean) * (v - mean);
  return sq / static_cast<double>(n - 1);
}

}  // namespace

double ScaledVariance(const Matrix& m, float multiply, float divide, VarianceKind kind) {
  const auto scaled = [multiply, divide](float x) {
    const float y = x * multiply;
    return divide != 1.0f ? y / divide : y;
  };
  const int64_t n = m.size();
  if (n == 0) return kNan;
  const float* data = m.data();
  double mean = 0.0;
  if (kind == VarianceKind::kTorchUnbiased) {
    const float sum = detail::TorchSum(n, [&](int64_t i) { return scaled(data[i]); });
    mean = static_cast<double>(sum / static_cast<float>(n));
  } else {
    mean = m.unaryExpr(scaled).cast<double>().sum() / static_cast<double>(n);
  }
  const double sq = (m.unaryExpr(scaled).cast<double>().array() - mean).square().sum();
  if (kind == VarianceKind::kNumpy) return sq / static_cast<double>(n);
  if (n < 2) return kNan;
  return static_cast<float>(sq / static_cast<double>(n - 1));  // a float32 tensor's var()
}

double StackVarianceF64(const MatrixStackD& stack, VarianceKind kind) {
  return VarianceF64(stack, kind);
}

double StackVariance(const MatrixStack& stack, VarianceKind kind) { return Variance(stack, kind); }

double MatrixVariance(const Matrix& m, VarianceKind kind) {
  using View = Eigen::Map<const Matrix>;
  return Variance(std::vector<View>{View(m.data(), m.rows(), m.cols())}, kind);
}

double ColumnsVariance(const Matrix& m, int64_t col, int64_t n, VarianceKind kind) {
  using Block = Eigen::Block<const Matrix>;
  return Variance(std::vector<Block>{m.block(0, col, m.rows(), n)}, kind);
}

double MatrixVarianceF64(const MatrixD& m, VarianceKind kind) {
  return VarianceF64(std::vector<MatrixD>{m}, kind);
}

double ColumnsVarianceF64(const MatrixD& m, int64_t col, int64_t n, VarianceKind kind) {
  using BlockD = Eigen::Block<const MatrixD>;
  return VarianceF64(std::vector<BlockD>{m.block(0, col, m.rows(), n)}, kind);
}

VarianceKind VarianceKindOf(Generator generator) {
  return generator == Generator::kNumpy ? VarianceKind::kNumpy : VarianceKind::kTorchUnbiased;
}

}  // namespace attnlab
