// mt19937_rule.h (internal to the random layer): MT19937's arithmetic, the one copy that the
// generator's scalar path (mt19937.cpp) and its batch path at each instruction-set level
// (mt_words_isa.cpp) both use. From Matsumoto and Nishimura's mt19937ar.c: n = 624, m = 397,
// matrix A = 0x9908b0df, the upper bit and lower 31 bits of neighbouring words, the
// tempering shifts 11, 7, 15, 18 with masks 0x9d2c5680 and 0xefc60000.
#pragma once

#include <algorithm>
#include <cstdint>

namespace attnlab::mt {

inline constexpr int kN = 624, kM = 397;

// One word of the refill: the upper bit of `word`, the lower 31 of `next`, twisted into `far`.
inline uint32_t Twist(uint32_t word, uint32_t next, uint32_t far) {
  const uint32_t y = (word & 0x80000000u) | (next & 0x7FFFFFFFu);
  return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);
}

// The 624 words of the next state, in place. Written as three loops without branches so that
// each level's compiler vectorizes them: the words ahead (i + 1, i + m) are read before they
// are rewritten, and those behind (i + m - n) were rewritten 227 words earlier.
inline void Refill(uint32_t* x) {
  for (int i = 0; i < kN - kM; ++i) x[i] = Twist(x[i], x[i + 1], x[i + kM]);
  for (int i = kN - kM; i < kN - 1; ++i) x[i] = Twist(x[i], x[i + 1], x[i + kM - kN]);
  x[kN - 1] = Twist(x[kN - 1], x[0], x[kM - 1]);
}

inline uint32_t Temper(uint32_t y) {
  y ^= y >> 11;
  y ^= (y << 7) & 0x9D2C5680u;
  y ^= (y << 15) & 0xEFC60000u;
  return y ^ (y >> 18);
}

// init_genrand(seed).
inline void Seed(uint32_t* x, uint32_t seed) {
  x[0] = seed;
  for (int i = 1; i < kN; ++i) x[i] = 1812433253u * (x[i - 1] ^ (x[i - 1] >> 30)) + uint32_t(i);
}

// Steps state x at position *next (kN: refill first) over its next n words: run(from, count)
// for each whole run of untempered state words, a refill between them.
template <typename Run>
inline void Step(uint32_t* x, int32_t* next, int64_t n, const Run& run) {
  while (n > 0) {
    if (*next >= kN) Refill(x), *next = 0;
    const int64_t count = std::min<int64_t>(n, kN - *next);
    run(x + *next, count);
    *next += static_cast<int32_t>(count);
    n -= count;
  }
}

// out[0..n) = the next n words of state x at position *next: the tempered runs of Step.
inline void Words(uint32_t* x, int32_t* next, uint32_t* out, int64_t n) {
  Step(x, next, n, [&out](const uint32_t* from, int64_t count) {
    for (int64_t i = 0; i < count; ++i) out[i] = Temper(from[i]);
    out += count;
  });
}

// Advances state x at position *next by n words without drawing them: Step's refills only.
inline void Discard(uint32_t* x, int32_t* next, int64_t n) {
  Step(x, next, n, [](const uint32_t*, int64_t) {});
}

}  // namespace attnlab::mt
