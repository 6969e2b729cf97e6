// torch_sum.h: PyTorch's float32 sum over a row, in its order of additions. Sums of finite
// numbers that overflow (3e38 + 3e38 = inf) or cancel (3e38 - 3e38 = 0) before the end depend on
// that order, and so do the roundings of every other sum: reproducing it makes a row's sum (the
// "sum" normalization's z / sum(z), the naive softmax's exp(z) / sum(exp(z))) PyTorch's to the
// bit, inf and nan included.
//
// The order of additions follows ATen's SumKernel.cpp (cascade_sum -> vectorized_inner_sum /
// scalar_inner_sum -> row_sum -> multi_row_sum) as PyTorch 1.13 builds it; the values are
// checked against Debian's torch in tests/golden/torch_sum.json (tools/make_sum_goldens.py).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace attnlab::detail {

inline constexpr int kLanes = 8;       // Vectorized<float>::size() of the AVX2 and default kernels
inline constexpr int kInterleave = 4;  // row_sum's ilp_factor: partial sums kept side by side
inline constexpr int kLevels = 4;      // multi_row_sum's cascade levels
using Lanes = std::array<float, kLanes>;

inline void Add(float& a, float b) { a += b; }
inline void Add(Lanes& a, const Lanes& b) {
  for (int l = 0; l < kLanes; ++l) a[l] += b[l];
}

/// ceil(log2(x)) for x > 2, and 1 for x <= 2 (ATen's CeilLog2).
inline int64_t CeilLog2(int64_t x) {
  if (x <= 2) return 1;
  return 64 - __builtin_clzll(static_cast<unsigned long long>(x - 1));
}

/// K sums side by side (kInterleave for row_sum, 1 for one column of an outer reduction) over
/// `size` groups, group i's entry k being load(i, k): each sum runs over chunks of 2^power
/// entries whose sums are added one level up, four levels deep, so that only numbers of a
/// similar size meet (ATen's multi_row_sum).
template <typename Acc, int K = kInterleave, typename Load>
std::array<Acc, K> CascadeSums(int64_t size, const Load& load) {
  const int64_t power = std::max<int64_t>(4, CeilLog2(size) / kLevels);
  const int64_t step = int64_t{1} << power, mask = step - 1;
  std::array<std::array<Acc, K>, kLevels> acc{};
  int64_t i = 0;
  while (i + step <= size) {
    for (int64_t j = 0; j < step; ++j, ++i)
      for (int k = 0; k < K; ++k) Add(acc[0][k], load(i, k));
    for (int j = 1; j < kLevels; ++j) {
      for (int k = 0; k < K; ++k) {
        Add(acc[j][k], acc[j - 1][k]);
        acc[j - 1][k] = Acc{};
      }
      if ((i & (mask << (j * power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int k = 0; k < K; ++k) Add(acc[0][k], load(i, k));
  for (int j = 1; j < kLevels; ++j)
    for (int k = 0; k < K; ++k) Add(acc[0][k], acc[j][k]);
  return acc[0];
}

/// The sum of load(0..size): kInterleave cascaded sums over the whole groups, the rest added
/// to the first, then the other three added to it (ATen's row_sum).
template <typename Acc, typename Load>
Acc InterleavedSum(int64_t size, const Load& load) {
  const int64_t groups = size / kInterleave;
  std::array<Acc, kInterleave> partial =
      CascadeSums<Acc>(groups, [&](int64_t i, int k) { return load(i * kInterleave + k); });
  for (int64_t i = groups * kInterleave; i < size; ++i) Add(partial[0], load(i));
  for (int k = 1; k < kInterleave; ++k) Add(partial[0], partial[k]);
  return partial[0];
}

/// The float32 sum of at(0), ..., at(n - 1) in the order TorchRowSum describes (the same
/// order for any entries: `at` computes each one, so a scaled or masked row needs no copy).
template <typename At>
float TorchSum(int64_t n, const At& at) {
  float total = 0.0f;
  if (n >= kLanes) {
    const int64_t vectors = n / kLanes;
    const Lanes lanes = InterleavedSum<Lanes>(vectors, [&](int64_t v) {
      Lanes l;
      for (int k = 0; k < kLanes; ++k) l[k] = at(v * kLanes + k);
      return l;
    });
    for (int64_t j = vectors * kLanes; j < n; ++j) total += at(j);
    for (int k = 0; k < kLanes; ++k) total += lanes[k];
  } else {
    total = InterleavedSum<float>(n, at);
  }
  return 0.0f + total;
}

/// x.sum(dim=-1) of one contiguous float32 row of n entries, of which the first `len` are
/// x[0..len) and the rest 0 (the masked tail of a causal row), added in the order of ATen 1.13's
/// cascade_sum on a CPU whose kernels use 8-lane float vectors (its AVX2 and default builds,
/// which Debian's torch uses even on AVX-512 machines): lane k of 8 sums the entries
/// k, k + 8, k + 16, ... with 4 interleaved partial sums and a cascade of 4 levels, the
/// entries after the last whole vector are summed left to right, then the 8 lanes are added to
/// that left to right; rows shorter than 8 take the scalar path (4 interleaved sums). The result
/// is added to +0, as the output starts at 0 (so a sum of -0 entries is +0).
/// Units: those of x. Errors: none (inf and nan propagate as in PyTorch).
inline float TorchRowSum(const float* x, int64_t len, int64_t n) {
  // A whole row is loaded as it is: the test of every index kept the compiler from loading
  // whole vectors (a sum of 65536 floats took 58 µs instead of 4).
  if (len >= n) return TorchSum(n, [&](int64_t j) { return x[j]; });
  return TorchSum(n, [&](int64_t j) { return j < len ? x[j] : 0.0f; });
}

}  // namespace attnlab::detail

namespace attnlab {

/// torch.sum of a contiguous float32 tensor of n elements on the CPU (PyTorch 1.13's
/// cascade_sum with 8-float vectors, as the AVX2 and default kernels: 8 lanes summed in
/// blocks of 16 carried up 4 levels, the tail from zero, then the lanes in order), bit for bit
/// below 32768 elements (above, PyTorch splits the sum between threads). 0 for n <= 0.
inline float TorchContiguousSum(const float* p, int64_t n) {
  if (n <= 0) return 0.0f;
  return detail::TorchRowSum(p, n, n);  // a whole tensor is summed as one row
}

}  // namespace attnlab
