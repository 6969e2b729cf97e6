// box_muller_rule.h (internal to the core): PyTorch's AVX2 normal_ kernel (normal_fill_16_AVX2,
// §5B-1 of docs/generator.md) on blocks of 16 uniforms: element j (first half) gives the radius
// sqrt(-2 log(1 - u)), element j + 8 the angle 2 pi u; j gets the cosine output, j + 8 the sine,
// each times std plus mean. The log and the sin/cos pair are the Cephes-style ones of
// avx_mathfun.h, with the FMAs GCC 12 contracts in PyTorch's build.
//
// The one copy of this arithmetic, written with GCC's vector extensions (8 float lanes) and
// compiled once per instruction-set level (normal_isa.cpp): at AVX2 and AVX-512 each operation
// is one instruction; at the baseline the same operations lane by lane, the fused ones by
// std::fma. Every operation rounds once, as IEEE says, so every level gives the same bits:
// PyTorch's on an AVX2 machine.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace attnlab::box_muller {

using F8 = float __attribute__((vector_size(32)));
using I8 = int32_t __attribute__((vector_size(32)));
using U8 = uint32_t __attribute__((vector_size(32)));

/// a * b + c with one rounding in each lane (vfmadd at a level with FMA, std::fma otherwise).
inline F8 Fma(F8 a, F8 b, F8 c) {
#if defined(__FMA__)
  return _mm256_fmadd_ps(a, b, c);
#else
  F8 r;
  for (int l = 0; l < 8; ++l) r[l] = std::fma(a[l], b[l], c[l]);
  return r;
#endif
}

inline F8 Sqrt(F8 x) {
#if defined(__AVX__)
  return _mm256_sqrt_ps(x);
#else
  F8 r;
  for (int l = 0; l < 8; ++l) r[l] = std::sqrt(x[l]);
  return r;
#endif
}

inline F8 Splat(float v) { return F8{} + v; }
inline F8 Bits(I8 i) { return reinterpret_cast<F8>(i); }  // the same 32 bits, as floats
inline I8 Bits(F8 f) { return reinterpret_cast<I8>(f); }

inline F8 Load(const float* p) {
  F8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(float* p, F8 v) { std::memcpy(p, &v, sizeof v); }

/// log(a) of avx_mathfun.h's log256_ps, for a >= FLT_MIN (the caller clamps).
inline F8 Log(F8 a) {
  static constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                  -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                  2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  const I8 xb = Bits(a);
  const I8 k = reinterpret_cast<I8>(reinterpret_cast<U8>(xb) >> 23) - 127;
  const F8 m = Bits((xb & static_cast<int32_t>(0x807FFFFFu)) | 0x3F000000);  // in [0.5, 1)
  const I8 small = m < Bits(I8{} + 0x3F3504F3);                              // sqrt(1/2)
  const F8 one = Splat(1.0f);
  const F8 e = (__builtin_convertvector(k, F8) + one) - Bits(small & Bits(one));
  const F8 x = (m - one) + Bits(small & Bits(m));
  const F8 z = x * x;
  F8 y = Splat(kP[0]);
  for (int i = 1; i < 9; ++i) y = Fma(y, x, Splat(kP[i]));
  y = y * x;
  y = Fma(y, z, e * -2.12194440e-4f);
  y = y - z * 0.5f;
  return (x + y) + e * 0.693359375f;
}

/// sin(t) and cos(t) of avx_mathfun.h's sincos256_ps, for t >= 0.
inline void SinCos(F8 t, F8& sin_out, F8& cos_out) {
  I8 j = __builtin_convertvector(t * 1.27323954473516f, I8);  // 4/pi, truncated as cvttps
  j = (j + 1) & ~1;
  const F8 y = __builtin_convertvector(j, F8);
  F8 r = Fma(y, Splat(-0.78515625f), t);
  r = Fma(y, Splat(-2.4187564849853515625e-4f), r);
  r = Fma(y, Splat(-3.77489497744594108e-8f), r);
  const F8 z = r * r;

  F8 c = Fma(Splat(2.443315711809948E-5f), z, Splat(-1.388731625493765E-3f));
  c = Fma(c, z, Splat(4.166664568298827E-2f));
  c = c * z;
  c = Fma(c, z, -(z * 0.5f));
  c = c + 1.0f;

  F8 q = Fma(Splat(-1.9515295891E-4f), z, Splat(8.3321608736E-3f));
  q = Fma(q, z, Splat(-1.6666654611E-1f));
  q = q * z;
  q = Fma(q, r, r);

  // Octants with (j & 2) take the sine from the cosine polynomial and vice versa.
  const I8 swap = (j & 2) == 2;
  const I8 sin_sign = reinterpret_cast<I8>(reinterpret_cast<U8>(j & 4) << 29);
  const I8 cos_sign = reinterpret_cast<I8>(reinterpret_cast<U8>(~(j - 2) & 4) << 29);
  sin_out = Bits((swap ? Bits(c) : Bits(q)) ^ sin_sign);
  cos_out = Bits((swap ? Bits(q) : Bits(c)) ^ cos_sign);
}

/// d[16 b .. 16 b + 16) of `blocks` blocks of uniforms in [0, 1), in place, into normals of
/// `mean` and `std_dev` (units of the caller's mean). Errors: none.
inline void Blocks16(float* d, int64_t blocks, float mean, float std_dev) {
  for (int64_t b = 0; b < blocks; ++b, d += 16) {
    // 1 - u, at least FLT_MIN (avx_mathfun's clamp; max_ps: u is never nan).
    const F8 a = Splat(1.0f) - Load(d);
    const F8 min_norm = Bits(I8{} + 0x00800000);
    const F8 lg = Log(a > min_norm ? a : min_norm);
    F8 s, c;
    SinCos(6.2831855f * Load(d + 8), s, c);  // fl(2 pi) * u, in float
    const F8 rad = Sqrt(-2.0f * lg);
    Store(d, Fma(rad * c, Splat(std_dev), Splat(mean)));
    Store(d + 8, Fma(rad * s, Splat(std_dev), Splat(mean)));
  }
}

}  // namespace attnlab::box_muller
