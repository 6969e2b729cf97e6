// rng.cpp: PyTorch's CPU generator (see rng.h).
//
// Compiled with -ffp-contract=off (core/CMakeLists.txt): the FMAs PyTorch's AVX2 kernels perform
// are written out with std::fma; every other float operation rounds on its own.
//
// [SECTION] engine and uniform primitives
// [SECTION] uniform_, randint, bernoulli, dropout
// [SECTION] normal_: scalar path (§5A)
// [SECTION] normal_: block path, AVX2 Cephes log / sincos (§5B-1, box_muller_rule.h) and libm
//            variant (§5B-2)
// [SECTION] nn.Linear and nn.Embedding initialisers
#include "attnlab/random/rng.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "attnlab/base/cpu_level.h"
#include "attnlab/base/parallel.h"

// PyTorch's AVX2 normal_ blocks and uniform_'s fused scaling, one copy per instruction-set
// level (normal_isa.cpp).
extern "C" void attnlab_normal_blocks_default(float*, int64_t, float, float);
extern "C" void attnlab_fused_scale_f32_default(float*, int64_t, float, float);
extern "C" void attnlab_fused_scale_f64_default(double*, int64_t, double, double);
#ifdef ATTNLAB_CPU_DISPATCH
extern "C" void attnlab_normal_blocks_avx2(float*, int64_t, float, float);
extern "C" void attnlab_normal_blocks_avx512(float*, int64_t, float, float);
extern "C" void attnlab_fused_scale_f32_avx2(float*, int64_t, float, float);
extern "C" void attnlab_fused_scale_f32_avx512(float*, int64_t, float, float);
extern "C" void attnlab_fused_scale_f64_avx2(double*, int64_t, double, double);
extern "C" void attnlab_fused_scale_f64_avx512(double*, int64_t, double, double);
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

// v[i] = std::fma(v[i], width, lo) for i in [0, n): uniform_'s x * width + lo as PyTorch's AVX2
// kernel contracts it, at the active level (normal_isa.cpp); the same bits at every level.
void FusedScale(float* v, int64_t n, float width, float lo) {
  static const auto scale =
      CopyForLevel(ActiveCpuLevel(), ATTNLAB_LEVEL_COPIES(attnlab_fused_scale_f32));
  scale(v, n, width, lo);
}
void FusedScale(double* v, int64_t n, double width, double lo) {
  static const auto scale =
      CopyForLevel(ActiveCpuLevel(), ATTNLAB_LEVEL_COPIES(attnlab_fused_scale_f64));
  scale(v, n, width, lo);
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

// PyTorch's AVX2 normal_ blocks (normal_isa.cpp, box_muller_rule.h) at the CPU's best
// instruction-set level (ActiveCpuLevel), chosen once: the same bits at every level.
void Avx2NormalBlocks(float* d, int64_t blocks, float mean, float std_dev) {
  static const auto run =
      CopyForLevel(ActiveCpuLevel(), ATTNLAB_LEVEL_COPIES(attnlab_normal_blocks));
  run(d, blocks, mean, std_dev);
}

}  // namespace

void TorchGenerator::Block16(float* d, float mean, float std) const {
  // The generic kernel (§5B-2): element j (first half) feeds the radius, element j + 8 the
  // angle; j gets the cosine output and j + 8 the sine output, in libm.
  for (int j = 0; j < 8; ++j) {
    const float rad = std::sqrt(-2.0f * std::log(1.0f - d[j]));
    const float th = static_cast<float>(2.0 * M_PI * static_cast<double>(d[j + 8]));
    const float c = std::cos(th), s = std::sin(th);
    d[j] = (rad * c) * std + mean;
    d[j + 8] = (rad * s) * std + mean;
  }
}

void TorchGenerator::BlocksOf16(float* d, int64_t blocks, float mean, float std) const {
  if (kernel_ == NormalKernel::kAvx2) return Avx2NormalBlocks(d, blocks, mean, std);
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
