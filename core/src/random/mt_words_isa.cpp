// mt_words_isa.cpp: the Mersenne Twister's words (std::mt19937, PyTorch's CPU generator) for
// one instruction-set level. Compiled once per level (cmake/CpuDispatch.cmake) with
// ATTNLAB_CPU_LEVEL the level's name and its -m flags; only attnlab_mt_words_<level> stays
// global in the level's object. The generator's state update is integer arithmetic only, so
// every level gives the same words; what a level changes is how many state words one
// instruction updates (the compiler vectorizes the 624-word refill).
#include <cstdint>
#include <random>

#ifndef ATTNLAB_CPU_LEVEL
#error "mt_words_isa.cpp is compiled with -DATTNLAB_CPU_LEVEL=<level> (cmake/CpuDispatch.cmake)"
#endif
#define ATTNLAB_JOIN2(a, b) a##b
#define ATTNLAB_JOIN(a, b) ATTNLAB_JOIN2(a, b)

/// out[0..n) = the engine's next n words, as n calls of (*engine)() give them.
extern "C" void ATTNLAB_JOIN(attnlab_mt_words_, ATTNLAB_CPU_LEVEL)(std::mt19937* engine,
                                                                    uint32_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint32_t>((*engine)());
}
