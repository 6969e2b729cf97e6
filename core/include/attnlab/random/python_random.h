// python_random.h: CPython's `random` module (random.Random, 3.11), bit for bit, for the draws
// Karpathy's microgpt.py makes: seed, random, getrandbits, shuffle, gauss and choices.
//
// Legend: n = length of the list shuffled or of the population chosen from; k = number of bits.
//
// Written from CPython 3.11's Lib/random.py and Modules/_randommodule.c (the methods named
// below) and checked bit for bit against Debian's python3.11 (tests/golden/python_random.json,
// made by tools/make_python_random_goldens.py, standard library only):
//   - random.seed(a), a an int: the MT19937 state from init_by_array (Mt19937::SeedByArray) on
//     the 32-bit words of |a|, least significant first, at least one word (seed 0 is the key
//     [0]; -5 seeds as 5; 2**64 + 5 is the key [5, 0, 1]). NumPy and PyTorch use init_genrand
//     instead, so the same seed gives other numbers there. The cached Gaussian is dropped.
//   - random(): genrand_res53, ((a >> 5) * 2^26 + (b >> 6)) / 2^53 from two words a, b.
//   - getrandbits(k): k <= 32: one word >> (32 - k); more: 32-bit words least significant first,
//     the last one shifted right to keep its bits.
//   - _randbelow(n) (_randbelow_with_getrandbits): getrandbits(n.bit_length()) redrawn until < n.
//   - shuffle(x): for i = n-1 down to 1, swap x[i] with x[_randbelow(i + 1)].
//   - gauss(mu, sigma): Box-Muller on two random() values, the sine half cached for the next
//     call: x2pi = random() * tau, g2rad = sqrt(-2 log(1 - random())), z = cos(x2pi) * g2rad,
//     cached sin(x2pi) * g2rad; returns mu + z * sigma.
//   - choices(population, weights) (k = 1): the cumulative sums of the weights left to right,
//     then bisect_right(cum, random() * total, 0, n - 1).
// The .cpp is compiled with -ffp-contract=off (mu + z * sigma is two roundings in Python), and
// sin, cos, log and sqrt are the C library's, as Python's math module calls them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/random/mt19937.h"

namespace attnlab {

/// The 32-bit words of |value|, least significant first, at least one (CPython's random_seed
/// key). Errors: none.
std::vector<uint32_t> PythonSeedKey(int64_t value);

/// The same for a decimal integer written as text, any size, an optional sign ("-7",
/// "18446744073709551621"). Error: std::invalid_argument naming the text when it is not an
/// integer (digits after an optional + or -).
std::vector<uint32_t> PythonSeedKey(const std::string& decimal);

/// CPython's random.Random: an MT19937 plus the cached second Gaussian. Copyable.
class PythonRandom {
 public:
  /// random.Random(seed).
  explicit PythonRandom(int64_t seed = 0) { Seed(seed); }

  /// random.seed(seed) for an int seed (negative seeds use |seed|, as CPython).
  void Seed(int64_t seed) { SeedKey(PythonSeedKey(seed)); }
  /// random.seed(a) for the int whose key (PythonSeedKey) is `key`. Error:
  /// std::invalid_argument when key is empty.
  void SeedKey(const std::vector<uint32_t>& key);

  /// The next 32-bit word (genrand_uint32).
  uint32_t NextWord() { return mt_(); }
  /// random.random(): a 53-bit double in [0, 1).
  double Random();
  /// random.getrandbits(k), k in [0, 64] (Python allows more; the app needs no more).
  /// Error: std::invalid_argument when k is out of range.
  uint64_t GetRandBits(int k);
  /// random._randbelow(n), n >= 1: uniform in [0, n) by rejection. Error:
  /// std::invalid_argument when n < 1.
  uint64_t RandBelow(uint64_t n);
  /// random.gauss(mu, sigma).
  double Gauss(double mu, double sigma);
  /// random.choices(range(n), weights)[0]: the index drawn, n = weights.size().
  /// Errors: std::invalid_argument when weights is empty ("population is empty"), or their
  /// total is not > 0 or not finite (Python's ValueError messages).
  int64_t ChooseIndex(const std::vector<double>& weights);

  /// random.shuffle(x), in place.
  template <typename T>
  void Shuffle(std::vector<T>& x) {
    for (size_t i = x.size() > 0 ? x.size() - 1 : 0; i >= 1; --i) {
      const size_t j = static_cast<size_t>(RandBelow(i + 1));
      std::swap(x[i], x[j]);
    }
  }

 private:
  Mt19937 mt_;
  bool has_gauss_next_ = false;
  double gauss_next_ = 0.0;
};

}  // namespace attnlab
