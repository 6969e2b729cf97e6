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
#include <cmath>
#include <cstdint>

namespace attnlab::detail {

/// Below this, exp(x) is subnormal or 0 in float32 (ln of FLT_MIN is -87.34).
inline constexpr float kExpNormalLow = -87.0f;

/// out[j] = exp(z[j] - shift) for j < n, in float32 (shift = 0 leaves z exact). IEEE results
/// in the underflow range (exp(-inf) = 0), and nan for nan, on every x86-64 build.
/// z and out must not overlap: the underflow fix-up reads z after out is written.
inline void ShiftedExp(const float* z, float shift, float* out, int64_t n) {
  const Eigen::Map<const Eigen::ArrayXf> in(z, n);
  Eigen::Map<Eigen::ArrayXf> result(out, n);
  result = (in - shift).exp();
  // The scalar fix-up is needed only when some x is below the normal range, or nan (a nan
  // makes the vectorised minimum nan, and the loop then leaves it to std::exp as before).
  if (n == 0 || (in - shift).minCoeff<Eigen::PropagateNaN>() >= kExpNormalLow) return;
  for (int64_t j = 0; j < n; ++j) {
    const float x = z[j] - shift;
    if (x < kExpNormalLow) out[j] = std::exp(x);
  }
}

}  // namespace attnlab::detail
