// numpy_rng.h: NumPy's legacy global generator (np.random.seed, np.random.rand, np.random.randn),
// bit for bit, for the draws the NumPy notebooks make.
//
// Legend: n = number of elements of the array being filled, in flat C order (last axis fastest),
// as np.random.randn(L, d) fills it.
//
// Written from the behaviour of numpy.random.RandomState (NumPy 1.17 and later; the legacy
// stream is frozen) and checked bit for bit against Debian's python3-numpy
// (tests/golden/numpy_rng.json, made by tools/make_numpy_goldens.py):
//   - np.random.seed(s), s an int in [0, 2**32 - 1]: the MT19937 state is set by the
//     reference init_genrand(s) (Mt19937::Seed, the same as std::mt19937(s)), and the cached
//     Gaussian is dropped. NumPy refuses other ints (ValueError "Seed must be between 0 and
//     2**32 - 1").
//   - np.random.rand / random_sample: one 53-bit double from two 32-bit words a, b:
//     ((a >> 5) * 2^26 + (b >> 6)) / 2^53, in [0, 1).
//   - np.random.randn / standard_normal: the polar (Marsaglia) method on two such doubles,
//     u = 2 * U - 1, v = 2 * U - 1, redrawn while r2 = u^2 + v^2 >= 1 or r2 == 0; then
//     f = sqrt(-2 log(r2) / r2), f * v is returned and f * u is cached for the next call.
//     The cache survives between calls (randn(3) then randn(1) uses it) and is cleared by seed.
// This file must be compiled with -ffp-contract=off (u*u + v*v is two roundings in NumPy).
#pragma once

#include <cstdint>
#include <vector>

#include "attnlab/random/mt19937.h"

namespace attnlab {

/// The largest seed np.random.seed accepts (2**32 - 1).
inline constexpr uint64_t kNumpyMaxSeed = 0xFFFFFFFFull;

/// NumPy's legacy global generator: numpy.random.RandomState's MT19937 plus its cached Gaussian.
/// Copyable, so the engine can keep the state between pipeline stages.
class NumpyGenerator {
 public:
  /// np.random.seed(seed). Error: std::invalid_argument when seed > 2**32 - 1, as NumPy
  /// refuses it ("np.random.seed takes 0 .. 2**32 - 1").
  explicit NumpyGenerator(uint64_t seed = 0);

  /// np.random.seed(seed): init_genrand(seed) and the cached Gaussian dropped.
  /// Error: std::invalid_argument when seed > 2**32 - 1.
  void Seed(uint64_t seed);

  /// The next 32-bit word of the MT19937 stream.
  uint32_t NextWord();

  /// One np.random.random_sample(): a 53-bit double in [0, 1) from two words.
  double RandomSample();

  /// One np.random.standard_normal() (legacy_gauss): the cached value if there is one, else a
  /// fresh polar pair whose second half is cached.
  double Gauss();

  /// np.random.rand(n) (float64, C order): n calls of RandomSample.
  std::vector<double> Rand(int64_t n);

  /// np.random.randn(n) (float64, C order): n calls of Gauss.
  std::vector<double> Randn(int64_t n);

  /// Whether a Gaussian is cached (NumPy's has_gauss), for tests.
  bool has_gauss() const { return has_gauss_; }

 private:
  Mt19937 engine_;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace attnlab
