// stats.cpp: see stats.h.
#include "attnlab/stats.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "attnlab/experiments.h"

namespace attnlab {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The mean, then the squared deviations from it summed in double. torch: the mean is
// torch.mean of the float32 tensor (its float32 sum / n, as std_var_all_cpu takes it), NumPy:
// the double sum / n.
template <typename Blocks>
double Variance(const Blocks& blocks, VarianceKind kind) {
  double sum = 0.0, n = 0.0;
  std::vector<float> flat;
  for (const auto& m : blocks) {
    if (kind == VarianceKind::kTorchUnbiased) {
      const Matrix copy = m;  // row-major, contiguous: the tensor's flat order
      flat.insert(flat.end(), copy.data(), copy.data() + copy.size());
    } else {
      sum += m.template cast<double>().sum();
    }
    n += static_cast<double>(m.size());
  }
  if (n == 0) return kNan;
  const double mean =
      kind == VarianceKind::kTorchUnbiased
          ? static_cast<double>(TorchContiguousSum(flat.data(), static_cast<int64_t>(flat.size())) /
                                static_cast<float>(n))
          : sum / n;
  double sq = 0.0;
  for (const auto& m : blocks) sq += (m.template cast<double>().array() - mean).square().sum();
  if (kind == VarianceKind::kNumpy) return sq / n;
  if (n < 2) return kNan;
  return static_cast<float>(sq / (n - 1));  // torch returns a float32 tensor
}

}  // namespace

double StackVariance(const MatrixStack& stack, VarianceKind kind) {
  return Variance(stack, kind);
}

StageVariances WholeVariances(const Stages& st, VarianceKind kind) {
  return {StackVariance(st.Q, kind), StackVariance(st.K, kind), StackVariance(st.scores, kind),
          StackVariance(st.logits, kind), StackVariance(st.weights, kind)};
}

StageVariances HeadVariances(const Stages& st, int64_t b, int64_t h, VarianceKind kind) {
  const Shape& sh = st.shape;
  if (b < 0 || b >= sh.B || h < 0 || h >= sh.H || st.Q.size() != static_cast<size_t>(sh.B))
    throw std::out_of_range("HeadVariances: batch " + std::to_string(b) + ", head " +
                            std::to_string(h) + " outside the stages");
  using Block = Eigen::Block<const Matrix>;
  const auto cols = [&](const MatrixStack& s) {
    return std::vector<Block>{s[b].block(0, h * sh.dh, sh.T, sh.dh)};
  };
  const auto one = [&](const MatrixStack& s) { return std::vector<Matrix>{st.Head(s, b, h)}; };
  return {Variance(cols(st.Q), kind), Variance(cols(st.K), kind), Variance(one(st.scores), kind),
          Variance(one(st.logits), kind), Variance(one(st.weights), kind)};
}

VarianceKind VarianceKindOf(Generator generator) {
  return generator == Generator::kNumpy ? VarianceKind::kNumpy : VarianceKind::kTorchUnbiased;
}

}  // namespace attnlab
