// rng.h: PyTorch's default CPU generator, bit for bit, for the float32 and float64 calls the
// notebooks use (one MT19937 state; float64 tensors draw from it by their own rules, §9).
//
// Legend: n = number of elements of the tensor being filled, always in flat row-major order
// (element 0 first, last dimension fastest), exactly as PyTorch fills a contiguous tensor.
//
// Written from the PyTorch 1.13 sources (aten/src/ATen/core/TransformationHelper.h,
// DistributionsHelper.h, the CPU normal kernels) and checked bit for bit against Debian's
// python3-torch (tests/golden/rng.json, made by tools/make_goldens.py). The section marks (§n)
// below number the steps of those sources in the order this header describes them. This file must
// be compiled with -ffp-contract=off: every fused multiply-add PyTorch's kernels perform is written
// here as an explicit std::fma, and no other operation may be fused.
//
// §9 float64 tensors (PyTorch 1.13, checked in tests/golden/f64_kernels.json and golden/f64):
// the same MT19937 state and the same rules with 53-bit uniforms (one 64-bit word per
// element) wherever float32 takes 24-bit ones; normal_ of 16 or more elements runs the generic
// normal_fill in double with libm (there is no AVX2 float64 kernel); uniform_ fuses
// x * width + low in the AVX2 build as for float32; dropout scales by 1 / (1 - p) in double.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attnlab/random/mt19937.h"

namespace attnlab {

/// The weight and bias of a freshly built nn.Linear (TorchGenerator::LinearOf), in the tensor's
/// dtype T (float for float32, double for torch.float64).
template <typename T>
struct LinearInitOf {
  std::vector<T> weight;  ///< out_features * in_features, row-major (out, in)
  std::vector<T> bias;    ///< out_features, empty when bias == false
};

/// Which of PyTorch's CPU kernels to reproduce: its AVX2 build or its generic one. They differ in
/// normal draws of 16 or more elements (§5B) and in uniform_ with a width other than 1 (nn.Linear's
/// initialisers among them), where only the AVX2 build fuses x * width + low (§3).
enum class NormalKernel {
  kAvx2,    ///< x86-64 AVX2 kernels (§5B-1): portable and libm-free.
  kScalar,  ///< generic x86-64 kernels (§5B-2; ARM64 draws normals this way too); uses libm.
};

/// The kernel PyTorch's CPU dispatch runs on this machine, chosen at run time as PyTorch
/// chooses it: kAvx2 when the CPU reports both AVX2 and FMA (every AVX-512 CPU does too),
/// kScalar otherwise and on every other architecture. ATEN_CPU_CAPABILITY=default in the
/// environment, PyTorch's own switch to its generic kernels, gives kScalar here too. Both
/// kernels give the same bits whatever flags the binary was compiled with (explicit std::fma,
/// -ffp-contract=off), so a generic x86-64 build matches PyTorch on every machine. Decided once
/// per process.
NormalKernel DetectNormalKernel();

/// A PyTorch-compatible CPU generator: one MT19937 engine plus the cached double normal.
///
/// Matches torch.Generator (CPU) of PyTorch 1.13 and 2.x for the calls below. Copyable, so the
/// engine can keep the state between pipeline stages and redraw only what changed.
class TorchGenerator {
 public:
  /// PyTorch's default seed (libtorch's default_rng_seed_val), which a new torch.Generator()
  /// holds. Not the state of a fresh Python process: `import torch` reseeds its default
  /// generator at random, so programs pin this seed (scenario.h DefaultSeed).
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  /// A generator seeded with `seed` that reproduces `kernel`'s results (normal_ and uniform_).
  explicit TorchGenerator(uint64_t seed = kDefaultSeed, NormalKernel kernel = DetectNormalKernel());

  /// torch.manual_seed(seed): reseeds from the low 32 bits and clears the normal cache (§1).
  /// A negative Python seed is passed as its two's-complement uint64, as PyTorch does.
  void ManualSeed(uint64_t seed);

  /// The next 32-bit word of the MT19937 stream (`W()` in §1).
  uint32_t NextWord();

  /// torch.rand(n) / Tensor.uniform_(low, high) on float32 (§3), with the AVX2 build's FMA
  /// (kAvx2) or the generic build's two roundings (kScalar).
  std::vector<float> Uniform(int64_t n, double low = 0.0, double high = 1.0) {
    return UniformOf<float>(n, low, high);
  }
  /// Uniform for a tensor of dtype T: float (float32, 24-bit uniforms, bounds rounded to float)
  /// or double (torch.float64, 53-bit uniforms, §9). T is float or double.
  template <typename T>
  std::vector<T> UniformOf(int64_t n, double low = 0.0, double high = 1.0);

  /// torch.randn(n) / Tensor.normal_(mean, std) on float32 (§5): the scalar path (double
  /// Box-Muller with a one-value cache) when n < 16, the block path of 16 otherwise.
  std::vector<float> Normal(int64_t n, double mean = 0.0, double std = 1.0) {
    return NormalOf<float>(n, mean, std);
  }
  /// Normal for a tensor of dtype T: float as Normal, or double (torch.randn(n,
  /// dtype=torch.float64), §9): the same scalar path below 16 elements, from 16 on the generic
  /// blocks of 16 from 53-bit uniforms with libm log, cos and sin in double (PyTorch 1.13 has
  /// no AVX2 float64 kernel), the same tail rule. T is float or double.
  template <typename T>
  std::vector<T> NormalOf(int64_t n, double mean = 0.0, double std = 1.0);
  /// Normal(n, mean, std) written into out[0..n) instead of a new vector (same draws, same
  /// generator state after). out must hold n floats.
  void NormalInto(float* out, int64_t n, double mean = 0.0, double std = 1.0) {
    NormalIntoOf(out, n, mean, std);
  }
  /// NormalOf<T> written into out[0..n) (T float or double).
  template <typename T>
  void NormalIntoOf(T* out, int64_t n, double mean = 0.0, double std = 1.0);

  /// torch.randint(low, high, (n,)) (§4): plain modulo, one word per element when
  /// high - low < 2^32, two otherwise. Error: std::invalid_argument when high <= low.
  std::vector<int64_t> Randint(int64_t low, int64_t high, int64_t n);

  /// Tensor.bernoulli_(p) with the default (mt19937) kernel (§8): 1 when U53 < p, else 0.
  std::vector<float> Bernoulli(int64_t n, double p);

  /// nn.Dropout(p) in training mode applied in place to x[0..n-1], mt19937 mask (§8): each
  /// element is multiplied by its mask value, fl(1 / fl(1 - p)) with probability 1 - p, else 0
  /// (so a dropped inf or nan becomes nan, as in PyTorch). Several calls
  /// in a row draw exactly as one call on the concatenated data. p == 0 leaves x unchanged and
  /// draws nothing; p == 1 zeroes it. Error: std::invalid_argument when p is outside [0, 1].
  void Dropout(float* x, int64_t n, double p) { DropoutOf(x, n, p); }
  /// Dropout on a tensor of dtype T (float or double): the same U53 mask draws; the kept value
  /// is fl(1 / fl(1 - p)) rounded in T (in double for torch.float64, §9).
  template <typename T>
  void DropoutOf(T* x, int64_t n, double p);

  /// The weight (out_features x in_features, row-major) and bias of a freshly built
  /// nn.Linear(in_features, out_features, bias), as Linear.reset_parameters draws them (§7):
  /// kaiming_uniform_(a=sqrt(5)) on the weight, then uniform_(-1/sqrt(in), 1/sqrt(in)) on the bias.
  using LinearInit = LinearInitOf<float>;
  LinearInit Linear(int64_t in_features, int64_t out_features, bool bias) {
    return LinearOf<float>(in_features, out_features, bias);
  }
  /// Linear for dtype T (float, or double: nn.Linear(..., dtype=torch.float64), whose bounds
  /// are the same Python doubles and whose draws are UniformOf<double>). T is float or double.
  template <typename T>
  LinearInitOf<T> LinearOf(int64_t in_features, int64_t out_features, bool bias);

  /// nn.Embedding(num_embeddings, dim).weight (§6): normal_(0, 1) over num_embeddings * dim
  /// floats, row-major (num_embeddings, dim).
  std::vector<float> Embedding(int64_t num_embeddings, int64_t dim);

  NormalKernel kernel() const { return kernel_; }

 private:
  uint64_t NextWord64();  // W64(): (first << 32) | second
  // out[0..n) = the next n words, as n NextWord() calls give them (Mt19937::Words: at the CPU's
  // best instruction-set level, the same words).
  void NextWords(uint32_t* out, int64_t n) { engine_.Words(out, n); }
  // d[i] = UnitUniform(T{}) for i in [0, n), in order: the same draws, words taken in batches.
  template <typename T>
  void UnitUniformsInto(T* d, int64_t n);
  float U24();                  // §2: low 24 bits of one word, in [0, 1)
  double U53();                 // §2: low 53 bits of W64(), in [0, 1)
  double NormalDoubleScalar();  // §5A: one standard normal, with the sine half cached
  // The uniform in [0, 1) the block path of dtype T starts from: U24 for float, U53 for double.
  float UnitUniform(float) { return U24(); }
  double UnitUniform(double) { return U53(); }
  void Block16(float* d, float mean, float std) const;  // §5B-2: the generic kernel's block
  // `blocks` consecutive blocks of 16 in place: kernel kAvx2's at the CPU's instruction-set
  // level (box_muller_rule.h, the same bits at every level), kScalar's by Block16; for double
  // the generic kernel's blocks in libm double (§9).
  void BlocksOf16(float* d, int64_t blocks, float mean, float std) const;
  void BlocksOf16(double* d, int64_t blocks, double mean, double std) const;

  Mt19937 engine_;
  std::optional<double> cached_normal_;
  NormalKernel kernel_;
};

}  // namespace attnlab
