// float_exp.h (internal to the core): exp over a row of float32 logits, vectorised, with the
// same results whatever the instruction set the core is compiled for.
//
// Eigen's vectorised expf is accurate for normal results, but its SSE2 kernel (the portable
// x86-64 build) returns about 2.9e-39 for every input below -87.3, -inf included, where the
// true result is subnormal or 0; its AVX-512 kernel and std::exp give 0 for exp(-inf), as
// PyTorch does. A masked logit (-inf) must weigh exactly 0, and a row whose every exp
// underflows must sum to 0 (and give nan), so those inputs go through std::exp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace attnlab::detail {

/// Below this, exp(x) is subnormal or 0 in float32 (ln of FLT_MIN is -87.34).
inline constexpr float kExpNormalLow = -87.0f;

/// exp(-86.9f), as an int32's bits: every vectorised exp(x) with x below kExpNormalLow is
/// smaller (Eigen's kernels are within a few ulp of exp there, or far below), so an output
/// whose bits are not smaller comes from an x that needs no fix-up.
inline constexpr int32_t kExpCheckBits = std::bit_cast<int32_t>(1.8189029e-38f);

/// The largest and the least of z[0..n) in one pass, for a softmax row: the max is its shift,
/// the min tells ShiftedExp whether any exp can fall below the normal range. The max is the value
/// Eigen's maxCoeff gives when z holds no nan (-inf for n = 0; with a nan it may be nan or a
/// number, and the row's softmax is nan throughout either way). The min is the least z when
/// every z is finite (+inf for n = 0), and nan, "not known", when some z is inf or nan: the lanes
/// of a vector minimum can drop a value next to a nan, so such rows take ShiftedExp's check.
inline void RowMaxMin(const float* z, int64_t n, float& max, float& min) {
  using Packet = Eigen::internal::packet_traits<float>::type;
  using Eigen::internal::padd, Eigen::internal::pmax, Eigen::internal::pmin,
      Eigen::internal::ploadu, Eigen::internal::predux, Eigen::internal::predux_max,
      Eigen::internal::predux_min, Eigen::internal::psub;
  constexpr int64_t kSize = Eigen::internal::packet_traits<float>::size;
  max = -std::numeric_limits<float>::infinity(), min = std::numeric_limits<float>::infinity();
  float finite = 0;  // x - x: 0 for a finite x, nan for inf and nan; their sum stays nan
  int64_t j = 0;
  if (n >= kSize) {
    Packet hi = ploadu<Packet>(z), lo = hi, zero = psub(hi, hi);
    for (j = kSize; j + kSize <= n; j += kSize) {
      const Packet x = ploadu<Packet>(z + j);
      hi = pmax(hi, x), lo = pmin(lo, x);
      zero = padd(zero, psub(x, x));
    }
    max = predux_max(hi), min = predux_min(lo);
    finite = predux(zero);
  }
  for (; j < n; ++j) max = std::max(max, z[j]), min = std::min(min, z[j]), finite += z[j] - z[j];
  if (finite != 0) min = std::numeric_limits<float>::quiet_NaN();  // true for nan only
}

/// out[j] = exp(z[j] - shift) for j < n, in float32 (shift = 0 leaves z exact). IEEE results
/// in the underflow range (exp(-inf) = 0), and nan for nan, on every x86-64 build; above it,
/// Eigen's vector kernel at every j (the same x gives the same bits wherever it sits).
/// z and out must not overlap: the underflow fix-up reads z after out is written. `z_min`, when
/// the caller knows it (RowMaxMin; nan: not known), must be the least z[j] with every z[j]
/// finite: if even it stays in the normal range, no output needs the check below.
inline void ShiftedExp(const float* z, float shift, float* out, int64_t n,
                       float z_min = std::numeric_limits<float>::quiet_NaN()) {
  // Every x through Eigen's vector kernel (pexp, what ArrayXf::exp runs on whole packets),
  // the row's last partial packet too, padded with x = 0: Eigen's own loop would send the
  // ends of each row (the lanes before an aligned address and after the last whole packet)
  // to std::exp one call at a time, about 3% of a one-thread temperature drag at T = 1024.
  using Packet = Eigen::internal::packet_traits<float>::type;
  using Eigen::internal::pexp, Eigen::internal::ploadu, Eigen::internal::pset1,
      Eigen::internal::psub, Eigen::internal::pstoreu;
  constexpr int64_t kSize = Eigen::internal::packet_traits<float>::size;
  const Packet s = pset1<Packet>(shift);
  int64_t j = 0;
  for (; j + kSize <= n; j += kSize) pstoreu(out + j, pexp(psub(ploadu<Packet>(z + j), s)));
  if (j < n) {
    float last[kSize];
    std::fill_n(last, kSize, shift);
    std::copy(z + j, z + n, last);
    pstoreu(last, pexp(psub(ploadu<Packet>(last), s)));
    std::copy(last, last + (n - j), out + j);
  }
  if (z_min - shift >= kExpNormalLow) return;  // false for nan
  // The scalar fix-up is needed only when some x is below the normal range. The outputs are
  // >= 0 or nan, so their bits order as int32 as the numbers do, and an int32 minimum (one
  // instruction a packet, unlike a float minimum that must not let a nan hide a small value)
  // finds them: a positive nan is larger than any number, a negative one sends every x to the
  // loop, which leaves nans and the normal range as they are.
  int32_t low = kExpCheckBits;
  for (int64_t j = 0; j < n; ++j) {
    low = std::min(low, std::bit_cast<int32_t>(out[j]));
  }
  if (low >= kExpCheckBits) return;
  for (int64_t j = 0; j < n; ++j) {
    const float x = z[j] - shift;
    if (x < kExpNormalLow) out[j] = std::exp(x);
  }
}

}  // namespace attnlab::detail
