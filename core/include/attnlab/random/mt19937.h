// mt19937.h: the Mersenne Twister MT19937, the 32-bit word generator under PyTorch's CPU
// generator (at::mt19937) and NumPy's legacy RandomState.
//
// Written from Matsumoto and Nishimura's reference (mt19937ar.c, 1998/2002): init_genrand
// seeding, the 624-word refill and the tempering. Its words are those of std::mt19937 seeded
// with the same 32-bit value (tests/mt19937_test.cpp compares them). Ours rather than the
// standard library's because a batch of words is drawn by refilling and tempering whole
// vectors, at the CPU's best instruction-set level (mt_words_isa.cpp), several times faster
// than word-by-word calls: a T = 1024, d = 64 input is 65,536 words, drawn on one thread.
#pragma once

#include <cstdint>

namespace attnlab {

/// MT19937: 624 words of state and the position of the next word. Copyable (the engine keeps a
/// generator between its stages). Not thread-safe: one generator is drawn by one thread at a time.
class Mt19937 {
 public:
  /// The words of the state (MT19937's n).
  static constexpr int kStateWords = 624;
  /// std::mt19937's default seed (mt19937ar.c's main uses it too).
  static constexpr uint32_t kDefaultSeed = 5489u;

  /// A generator seeded with `seed` (Seed). Errors: none.
  explicit Mt19937(uint32_t seed = kDefaultSeed) { Seed(seed); }

  /// init_genrand(seed): the state made from the 32-bit seed, the next word the first of a
  /// fresh refill (as std::mt19937::seed, torch.manual_seed's low 32 bits, np.random.seed).
  void Seed(uint32_t seed);

  /// init_by_array(key, n) of mt19937ar.c: init_genrand(19650218) mixed with the n words of
  /// `key` (n >= 1), the next word the first of a fresh refill. CPython's random.seed(int)
  /// seeds this way (PythonRandom). Error: std::invalid_argument when n < 1.
  void SeedByArray(const uint32_t* key, int64_t n);

  /// The next word (genrand_int32), as std::mt19937's operator().
  uint32_t operator()();

  /// out[0..n) = the next n words, the same as n calls of operator(), drawn by the CPU's best
  /// instruction-set level (ActiveCpuLevel; integer arithmetic only: the same words at every
  /// level). n <= 0 draws nothing. Errors: none.
  void Words(uint32_t* out, int64_t n);

  /// The state advanced by n words, as n calls of operator() whose words are not used
  /// (std::mersenne_twister_engine::discard): only the refills are computed, at the CPU's best
  /// level. n <= 0 leaves the state as it is. Errors: none.
  void Discard(int64_t n);

 private:
  uint32_t state_[kStateWords];
  int32_t next_;  // the index of the next word of state_; kStateWords: refill first
};

}  // namespace attnlab
