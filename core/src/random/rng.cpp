// rng.cpp: PyTorch's CPU generator (see rng.h).
//
// Compiled with -ffp-contract=off (core/CMakeLists.txt): the FMAs PyTorch's AVX2 kernels perform
// are written out with std::fma; every other float operation rounds on its own.
//
// [SECTION] engine and uniform primitives
// [SECTION] uniform_, randint, bernoulli, dropout
// [SECTION] normal_: scalar path (§5A)
// [SECTION] normal_: block path, AVX2 Cephes log / sincos (§5B-1) and libm variant (§5B-2)
// [SECTION] nn.Linear and nn.Embedding initialisers
#include "attnlab/random/rng.h"

#include "attnlab/base/parallel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#define ATTNLAB_HAVE_AVX2_PATH 1  // code compiled for AVX2 + FMA, run where the CPU has them
#include <immintrin.h>
#endif

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] engine and uniform primitives
// ---------------------------------------------------------------------------------------------

namespace {

/// PyTorch's AVX2 dispatch level needs both AVX2 and FMA (cpuinfo's x86 flags).
bool CpuHasAvx2AndFma() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

#ifdef ATTNLAB_HAVE_AVX2_PATH
// Whether this CPU can run the AVX2 + FMA code below (kernel kAvx2 on another CPU, in the
// tests, runs the portable loops instead). Asked once.
bool CpuRunsAvx2Code() {
  static const bool runs = CpuHasAvx2AndFma();
  return runs;
}

// v[i] = std::fma(v[i], width, lo) for i in [0, n) compiled for AVX2 and FMA, where the compiler
// makes it 8 or 4 lanes per instruction, each lane the one rounding of std::fma (the baseline
// build has no FMA instruction: it called libm's fma for every value). Only called when the
// CPU has AVX2 and FMA.
template <typename T>
__attribute__((target("avx2,fma"))) void FusedScaleAvx2(T* v, int64_t n, T width, T lo) {
  for (int64_t i = 0; i < n; ++i) v[i] = std::fma(v[i], width, lo);
}
#endif

// v[i] = std::fma(v[i], width, lo) for i in [0, n): uniform_'s x * width + lo as PyTorch's AVX2
// kernel contracts it.
template <typename T>
void FusedScale(T* v, int64_t n, T width, T lo) {
#ifdef ATTNLAB_HAVE_AVX2_PATH
  if (CpuRunsAvx2Code()) return FusedScaleAvx2(v, n, width, lo);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = std::fma(v[i], width, lo);
}

NormalKernel ChooseNormalKernel() {
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  if (capability != nullptr && std::string_view(capability) == "default")
    return NormalKernel::kScalar;
  return CpuHasAvx2AndFma() ? NormalKernel::kAvx2 : NormalKernel::kScalar;
}

}  // namespace

NormalKernel DetectNormalKernel() {
  static const NormalKernel kernel = ChooseNormalKernel();
  return kernel;
}

TorchGenerator::TorchGenerator(uint64_t seed, NormalKernel kernel) : kernel_(kernel) {
  ManualSeed(seed);
}

void TorchGenerator::ManualSeed(uint64_t seed) {
  // Only the low 32 bits seed the engine; its seeding is init_genrand, as at::mt19937's.
  engine_.Seed(static_cast<uint32_t>(seed & 0xFFFFFFFFu));
  cached_normal_.reset();
}

uint32_t TorchGenerator::NextWord() { return engine_(); }

uint64_t TorchGenerator::NextWord64() {
  const uint64_t hi = NextWord();
  const uint64_t lo = NextWord();
  return (hi << 32) | lo;
}

namespace {
// The low 24 bits of one word, scaled by 2^-24: exact in float32.
float U24Of(uint32_t word) { return static_cast<float>(word & 0xFFFFFFu) * (1.0f / 16777216.0f); }
// The low 53 bits of W64() = (first << 32) | second, scaled by 2^-53: exact in double.
double U53Of(uint32_t first, uint32_t second) {
  constexpr uint64_t kMask53 = (uint64_t{1} << 53) - 1;
  const uint64_t w = (uint64_t{first} << 32) | second;
  return static_cast<double>(w & kMask53) * (1.0 / 9007199254740992.0);
}

// d[i] = the unit uniform of dtype T (U24 for float, U53 for double) of engine's next words,
// for i in [0, n), in order; the words taken in batches (Mt19937::Words).
template <typename T>
void UnitUniformsFrom(Mt19937& engine, T* d, int64_t n) {
  constexpr int64_t kWords = 2048;  // words per batch (8 KiB on the stack)
  constexpr int64_t kPer = std::is_same_v<T, float> ? 1 : 2;
  uint32_t words[kWords];
  for (int64_t i = 0; i < n;) {
    const int64_t m = std::min(kWords / kPer, n - i);
    engine.Words(words, m * kPer);
    for (int64_t k = 0; k < m; ++k) {
      if constexpr (std::is_same_v<T, float>)
        d[i + k] = U24Of(words[k]);
      else
        d[i + k] = U53Of(words[2 * k], words[2 * k + 1]);
    }
    i += m;
  }
}
}  // namespace

float TorchGenerator::U24() { return U24Of(NextWord()); }

double TorchGenerator::U53() {
  const uint32_t first = NextWord();
  return U53Of(first, NextWord());
}

template <typename T>
void TorchGenerator::UnitUniformsInto(T* d, int64_t n) {
  UnitUniformsFrom(engine_, d, n);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] uniform_, randint, bernoulli, dropout
// ---------------------------------------------------------------------------------------------

template <typename T>
std::vector<T> TorchGenerator::UniformOf(int64_t n, double low, double high) {
  // The double bounds become T first; PyTorch's AVX2 kernels are compiled with FMA, which
  // contracts x * width + lo into one fused operation; its generic kernels round twice.
  const T lo = static_cast<T>(low);
  const T hi = static_cast<T>(high);
  const T width = hi - lo;
  std::vector<T> out(static_cast<size_t>(n));
  UnitUniformsInto(out.data(), n);
  if (kernel_ == NormalKernel::kAvx2) {
    FusedScale(out.data(), n, width, lo);
  } else {
    for (T& v : out) v = v * width + lo;  // not fused: -ffp-contract=off
  }
  return out;
}
template std::vector<float> TorchGenerator::UniformOf<float>(int64_t, double, double);
template std::vector<double> TorchGenerator::UniformOf<double>(int64_t, double, double);

std::vector<int64_t> TorchGenerator::Randint(int64_t low, int64_t high, int64_t n) {
  if (high <= low) throw std::invalid_argument("randint: high must be greater than low");
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t& v : out) {
    const uint64_t word = range < (uint64_t{1} << 32) ? NextWord() : NextWord64();
    v = static_cast<int64_t>(word % range + static_cast<uint64_t>(low));
  }
  return out;
}

std::vector<float> TorchGenerator::Bernoulli(int64_t n, double p) {
  std::vector<float> out(static_cast<size_t>(n));
  for (float& v : out) v = U53() < p ? 1.0f : 0.0f;
  return out;
}

template <typename T>
void TorchGenerator::DropoutOf(T* x, int64_t n, double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("dropout: p must be in [0, 1]");
  if (p == 0.0) return;
  if (p == 1.0) {
    for (int64_t i = 0; i < n; ++i) x[i] *= T{0};  // x * 0 keeps nan, as PyTorch does
    return;
  }
  // bernoulli_(1 - p) in flat order, then mask / fl(1 - p): the kept value is fl(1 / fl(1 - p)).
  const double keep = 1.0 - p;
  const T keep_t = static_cast<T>(keep);
  for (int64_t i = 0; i < n; ++i) {
    const T m = U53() < keep ? T{1} : T{0};
    x[i] = x[i] * (m / keep_t);
  }
}
template void TorchGenerator::DropoutOf<float>(float*, int64_t, double);
template void TorchGenerator::DropoutOf<double>(double*, int64_t, double);

// ---------------------------------------------------------------------------------------------
// [SECTION] normal_: scalar path (§5A)
// ---------------------------------------------------------------------------------------------

double TorchGenerator::NormalDoubleScalar() {
  if (cached_normal_) {
    const double z = *cached_normal_;
    cached_normal_.reset();
    return z;
  }
  const double u1 = U53();  // the angle
  const double u2 = U53();  // the radius
  // 1.13 writes log(1 - u2), 2.x log1p(-u2); no float32 output differs between them (§10).
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * M_PI * u1;
  cached_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] normal_: block path (§5B)
// ---------------------------------------------------------------------------------------------
namespace {

// The AVX2 kernel works on 8 lanes at once; these loops over the 8 lanes are written without
// branches so that the compiler turns each into vector instructions, as PyTorch's kernel is.

// Cephes-style natural logarithm of avx_mathfun.h on 8 lanes, with the FMAs GCC 12 contracts.
void AvxLog8(const float* in, float* out) {
  static constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                  -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                  2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  for (int l = 0; l < 8; ++l) {
    const uint32_t xb = std::bit_cast<uint32_t>(std::max(in[l], std::bit_cast<float>(0x00800000u)));
    const int k = static_cast<int>(xb >> 23) - 127;
    const float m = std::bit_cast<float>((xb & 0x807FFFFFu) | 0x3F000000u);  // in [0.5, 1)
    const bool small = m < std::bit_cast<float>(0x3F3504F3u);                // sqrt(1/2)
    const float e = static_cast<float>(k) + 1.0f - (small ? 1.0f : 0.0f);
    const float x = (m - 1.0f) + (small ? m : 0.0f);
    const float z = x * x;
    float y = kP[0];
    for (int i = 1; i < 9; ++i) y = std::fma(y, x, kP[i]);
    y = y * x;
    y = std::fma(y, z, e * -2.12194440e-4f);
    y = y - z * 0.5f;
    out[l] = (x + y) + e * 0.693359375f;
  }
}

// Cephes sin/cos pair of avx_mathfun.h on 8 lanes (inputs >= 0), with GCC 12's FMAs.
void AvxSinCos8(const float* in, float* sin_out, float* cos_out) {
  for (int l = 0; l < 8; ++l) {
    int j = static_cast<int>(in[l] * 1.27323954473516f);  // 4/pi, truncated as cvttps
    j = (j + 1) & ~1;
    const float y = static_cast<float>(j);
    float r = std::fma(y, -0.78515625f, in[l]);
    r = std::fma(y, -2.4187564849853515625e-4f, r);
    r = std::fma(y, -3.77489497744594108e-8f, r);
    const float z = r * r;

    float c = std::fma(2.443315711809948E-5f, z, -1.388731625493765E-3f);
    c = std::fma(c, z, 4.166664568298827E-2f);
    c = c * z;
    c = std::fma(c, z, -(z * 0.5f));
    c = c + 1.0f;

    float q = std::fma(-1.9515295891E-4f, z, 8.3321608736E-3f);
    q = std::fma(q, z, -1.6666654611E-1f);
    q = q * z;
    q = std::fma(q, r, r);

    // Octants with (j & 2) take the sine from the cosine polynomial and vice versa.
    const bool swap = (j & 2) != 0;
    const uint32_t s_bits =
        std::bit_cast<uint32_t>(swap ? c : q) ^ (static_cast<uint32_t>(j & 4) << 29);
    const uint32_t c_bits =
        std::bit_cast<uint32_t>(swap ? q : c) ^ (static_cast<uint32_t>(~(j - 2) & 4) << 29);
    sin_out[l] = std::bit_cast<float>(s_bits);
    cos_out[l] = std::bit_cast<float>(c_bits);
  }
}

#ifdef ATTNLAB_HAVE_AVX2_PATH
// The same arithmetic as AvxLog8, AvxSinCos8 and the kAvx2 branch of Block16, written with
// AVX2 intrinsics (the loops above do not vectorise: GCC keeps their selects and conversions
// scalar). Every operation is the one the scalar code performs, in the same order, so the
// results are bit-identical; only called when the CPU has AVX2 and FMA (kernel kAvx2).
__attribute__((target("avx2,fma"))) void Block16Avx2(float* d, int64_t blocks, float mean,
                                                     float std_dev) {
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  const __m256 min_norm = _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000));
  const __m256 sqrt_half = _mm256_castsi256_ps(_mm256_set1_epi32(0x3F3504F3));
  const __m256i mant_mask = _mm256_set1_epi32(static_cast<int>(0x807FFFFFu));
  const __m256i half_bits = _mm256_set1_epi32(0x3F000000);
  const __m256 mean_v = _mm256_set1_ps(mean), std_v = _mm256_set1_ps(std_dev);
  static constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                  -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                  2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  for (int64_t blk = 0; blk < blocks; ++blk, d += 16) {
    // log(1 - u) of the first half (AvxLog8).
    const __m256 a = _mm256_max_ps(_mm256_sub_ps(one, _mm256_loadu_ps(d)), min_norm);
    const __m256i xb = _mm256_castps_si256(a);
    const __m256i k = _mm256_sub_epi32(_mm256_srli_epi32(xb, 23), _mm256_set1_epi32(127));
    const __m256 m =
        _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(xb, mant_mask), half_bits));
    const __m256 small = _mm256_cmp_ps(m, sqrt_half, _CMP_LT_OQ);
    const __m256 e =
        _mm256_sub_ps(_mm256_add_ps(_mm256_cvtepi32_ps(k), one), _mm256_and_ps(small, one));
    const __m256 x = _mm256_add_ps(_mm256_sub_ps(m, one), _mm256_and_ps(small, m));
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 y = _mm256_set1_ps(kP[0]);
    for (int i = 1; i < 9; ++i) y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(kP[i]));
    y = _mm256_mul_ps(y, x);
    y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, _mm256_set1_ps(-2.12194440e-4f)));
    y = _mm256_sub_ps(y, _mm256_mul_ps(z, half));
    const __m256 lg = _mm256_add_ps(_mm256_add_ps(x, y),
                                    _mm256_mul_ps(e, _mm256_set1_ps(0.693359375f)));
    // sin and cos of 2 pi u of the second half (AvxSinCos8).
    const __m256 th = _mm256_mul_ps(_mm256_set1_ps(6.2831855f), _mm256_loadu_ps(d + 8));
    __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(th, _mm256_set1_ps(1.27323954473516f)));
    j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
    const __m256 yj = _mm256_cvtepi32_ps(j);
    __m256 r = _mm256_fmadd_ps(yj, _mm256_set1_ps(-0.78515625f), th);
    r = _mm256_fmadd_ps(yj, _mm256_set1_ps(-2.4187564849853515625e-4f), r);
    r = _mm256_fmadd_ps(yj, _mm256_set1_ps(-3.77489497744594108e-8f), r);
    const __m256 zz = _mm256_mul_ps(r, r);
    __m256 c = _mm256_fmadd_ps(_mm256_set1_ps(2.443315711809948E-5f), zz,
                               _mm256_set1_ps(-1.388731625493765E-3f));
    c = _mm256_fmadd_ps(c, zz, _mm256_set1_ps(4.166664568298827E-2f));
    c = _mm256_mul_ps(c, zz);
    c = _mm256_fmadd_ps(c, zz, _mm256_xor_ps(_mm256_mul_ps(zz, half), _mm256_set1_ps(-0.0f)));
    c = _mm256_add_ps(c, one);
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(-1.9515295891E-4f), zz,
                               _mm256_set1_ps(8.3321608736E-3f));
    q = _mm256_fmadd_ps(q, zz, _mm256_set1_ps(-1.6666654611E-1f));
    q = _mm256_mul_ps(q, zz);
    q = _mm256_fmadd_ps(q, r, r);
    const __m256 swap = _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(2)));
    const __m256 sin_sign = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29));
    const __m256 cos_sign = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_andnot_si256(_mm256_sub_epi32(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)),
        29));
    const __m256 sn = _mm256_xor_ps(_mm256_blendv_ps(q, c, swap), sin_sign);
    const __m256 cs = _mm256_xor_ps(_mm256_blendv_ps(c, q, swap), cos_sign);
    // The radius and the two outputs (Block16).
    const __m256 rad = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f), lg));
    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(rad, cs), std_v, mean_v));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(rad, sn), std_v, mean_v));
  }
}
#endif

}  // namespace

void TorchGenerator::Block16(float* d, float mean, float std) const {
  // Element j (first half) feeds the radius, element j + 8 the angle; j gets the cosine output
  // and j + 8 the sine output.
  if (kernel_ == NormalKernel::kAvx2) {
    float a[8], th[8], lg[8], s[8], c[8];
    for (int j = 0; j < 8; ++j) {
      a[j] = 1.0f - d[j];
      th[j] = 6.2831855f * d[j + 8];  // fl(2*pi) * b, in float
    }
    AvxLog8(a, lg);
    AvxSinCos8(th, s, c);
    for (int j = 0; j < 8; ++j) {
      const float rad = std::sqrt(-2.0f * lg[j]);
      d[j] = std::fma(rad * c[j], std, mean);
      d[j + 8] = std::fma(rad * s[j], std, mean);
    }
    return;
  }
  for (int j = 0; j < 8; ++j) {
    const float rad = std::sqrt(-2.0f * std::log(1.0f - d[j]));
    const float th = static_cast<float>(2.0 * M_PI * static_cast<double>(d[j + 8]));
    const float c = std::cos(th), s = std::sin(th);
    d[j] = (rad * c) * std + mean;
    d[j + 8] = (rad * s) * std + mean;
  }
}

void TorchGenerator::BlocksOf16(float* d, int64_t blocks, float mean, float std) const {
#ifdef ATTNLAB_HAVE_AVX2_PATH
  if (kernel_ == NormalKernel::kAvx2 && CpuRunsAvx2Code()) return Block16Avx2(d, blocks, mean, std);
#endif
  for (int64_t k = 0; k < blocks; ++k) Block16(d + 16 * k, mean, std);
}

void TorchGenerator::BlocksOf16(double* d, int64_t blocks, double mean, double std) const {
  // normal_fill_16<double>: element j the radius, j + 8 the angle, libm in double (§9).
  for (int64_t k = 0; k < blocks; ++k, d += 16)
    for (int j = 0; j < 8; ++j) {
      const double radius = std::sqrt(-2.0 * std::log(1.0 - d[j]));
      const double theta = 2.0 * M_PI * d[j + 8];
      d[j] = radius * std::cos(theta) * std + mean;
      d[j + 8] = radius * std::sin(theta) * std + mean;
    }
}

template <typename T>
std::vector<T> TorchGenerator::NormalOf(int64_t n, double mean, double std) {
  std::vector<T> d(static_cast<size_t>(n));
  NormalIntoOf(d.data(), n, mean, std);
  return d;
}
template std::vector<float> TorchGenerator::NormalOf<float>(int64_t, double, double);
template std::vector<double> TorchGenerator::NormalOf<double>(int64_t, double, double);

template <typename T>
void TorchGenerator::NormalIntoOf(T* d, int64_t n, double mean, double std) {
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(NormalDoubleScalar() * std + mean);
    return;
  }
  const T mean_t = static_cast<T>(mean), std_t = static_cast<T>(std);
  const int64_t blocks = n / 16;
  if constexpr (std::is_same_v<T, float>) {
    // Every block of 16 is transformed on its own: large draws use all threads. Each task also
    // draws its blocks' uniforms, from a copy of the generator stepped to its first word
    // (Mt19937::Discard: the refills only), so the words are made, converted and transformed
    // by the thread that writes them; one thread drawing all n for the others made them read
    // half of the draw from its cache (70 µs instead of 46 for T x d = 1024 x 64 on two
    // threads). The last task draws to n: the tail below overwrites what is past its blocks.
    // On one thread the copies would only cost their refills: the draws stay in order there.
    const int64_t chunk = blocks < 4096 ? blocks : 1024;  // blocks per task: one below 4096
    const int64_t tasks = (blocks + chunk - 1) / chunk;
    if (tasks == 1 || ThreadCount() == 1) {
      UnitUniformsFrom(engine_, d, n);
      BlocksOf16(d, blocks, mean_t, std_t);
    } else {
      std::vector<Mt19937> from;  // the generator at each task's first word
      for (int64_t task = 0; task < tasks; ++task) {
        if (task > 0) engine_.Discard(chunk * 16);
        from.push_back(engine_);
      }
      ParallelFor(tasks, [&](int64_t task) {
        const int64_t b0 = task * chunk;
        UnitUniformsFrom(from[static_cast<size_t>(task)], d + b0 * 16,
                         task + 1 < tasks ? chunk * 16 : n - b0 * 16);
        BlocksOf16(d + b0 * 16, std::min(chunk, blocks - b0), mean_t, std_t);
      });
      engine_ = from.back();  // the last task's copy has drawn up to n
    }
  } else {
    UnitUniformsInto(d, n);
    BlocksOf16(d, blocks, mean_t, std_t);
  }
  if (n % 16 != 0) {
    // The tail: 16 fresh uniforms overwrite the last 16 elements, then one more block.
    T* tail = d + (n - 16);
    for (int i = 0; i < 16; ++i) tail[i] = UnitUniform(T{});
    BlocksOf16(tail, 1, mean_t, std_t);
  }
}
template void TorchGenerator::NormalIntoOf<float>(float*, int64_t, double, double);
template void TorchGenerator::NormalIntoOf<double>(double*, int64_t, double, double);

// ---------------------------------------------------------------------------------------------
// [SECTION] nn.Linear and nn.Embedding initialisers
// ---------------------------------------------------------------------------------------------

template <typename T>
LinearInitOf<T> TorchGenerator::LinearOf(int64_t in_features, int64_t out_features, bool bias) {
  // kaiming_uniform_(a=sqrt(5)) in Python doubles, step by step: the last bit of `bound` can
  // differ from 1/sqrt(in) computed directly.
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double std_dev = gain / std::sqrt(static_cast<double>(in_features));
  const double bound = std::sqrt(3.0) * std_dev;
  LinearInitOf<T> init;
  init.weight = UniformOf<T>(out_features * in_features, -bound, bound);
  if (bias) {
    const double bb = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init.bias = UniformOf<T>(out_features, -bb, bb);
  }
  return init;
}
template LinearInitOf<float> TorchGenerator::LinearOf<float>(int64_t, int64_t, bool);
template LinearInitOf<double> TorchGenerator::LinearOf<double>(int64_t, int64_t, bool);

std::vector<float> TorchGenerator::Embedding(int64_t num_embeddings, int64_t dim) {
  return Normal(num_embeddings * dim, 0.0, 1.0);
}

}  // namespace attnlab
