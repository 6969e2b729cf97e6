// scan.cpp: ScanValues (colormap.h). GCC/Clang vector extensions: 8 floats per step where AVX is
// on, else 4 (SSE2 on every x86-64, NEON on ARM64); the tail runs one value at a time.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnlab/colormap.h"

namespace attnlab {
namespace {

#ifdef __AVX__
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Floats __attribute__((vector_size(kLanes * 4)));
typedef int Ints __attribute__((vector_size(kLanes * 4)));

}  // namespace

ValueScan ScanValues(const Matrix& m) {
  const float* d = m.data();
  const Eigen::Index n = m.size();
  Floats lo, hi, infinity;
  Ints nan = {}, inf = {}, neg = {}, abs_mask;
  for (int i = 0; i < kLanes; ++i) {
    lo[i] = infinity[i] = INFINITY;
    hi[i] = -INFINITY;
    abs_mask[i] = 0x7fffffff;  // clears the sign bit: |v|
  }
  const Floats zero = {};
  Eigen::Index k = 0;
  for (; k + kLanes <= n; k += kLanes) {
    Floats v, a;
    std::memcpy(&v, d + k, sizeof v);
    Ints bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= abs_mask;
    std::memcpy(&a, &bits, sizeof a);
    const Ints is_nan = v != v;
    const Ints is_inf = a == infinity;
    const Ints bad = is_nan | is_inf;
    lo = bad ? lo : (v < lo ? v : lo);
    hi = bad ? hi : (v > hi ? v : hi);
    nan |= is_nan;
    inf |= is_inf;
    neg |= (v < zero) & ~bad;
  }
  ValueScan s;
  float l = INFINITY, h = -INFINITY;
  for (int i = 0; i < kLanes; ++i) {
    l = std::min(l, lo[i]);
    h = std::max(h, hi[i]);
    s.has_nan |= nan[i] != 0;
    s.has_inf |= inf[i] != 0;
    s.has_negative |= neg[i] != 0;
  }
  for (; k < n; ++k) {
    const float v = d[k];
    if (std::isnan(v)) {
      s.has_nan = true;
    } else if (std::isinf(v)) {
      s.has_inf = true;
    } else {
      l = std::min(l, v);
      h = std::max(h, v);
      s.has_negative |= v < 0;
    }
  }
  s.any_finite = l <= h;
  if (s.any_finite) s.lo = l, s.hi = h;
  return s;
}

}  // namespace attnlab
