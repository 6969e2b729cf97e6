// mt_words_isa.cpp: a batch of MT19937 words, and a step over words (mt19937.h), for one
// instruction-set level. Compiled once per level (cmake/CpuDispatch.cmake) with
// ATTNLAB_CPU_LEVEL the level's name and its -m flags; only attnlab_mt_words_<level> and
// attnlab_mt_discard_<level> stay global in the level's object. The generator is integer
// arithmetic only, so every level gives the same words; what a level changes is how many words
// one instruction refills and tempers (mt19937_rule.h's loops vectorize).
#include <cstdint>

#include "random/mt19937_rule.h"

#ifndef ATTNLAB_CPU_LEVEL
#error "mt_words_isa.cpp is compiled with -DATTNLAB_CPU_LEVEL=<level> (cmake/CpuDispatch.cmake)"
#endif
#define ATTNLAB_JOIN2(a, b) a##b
#define ATTNLAB_JOIN(a, b) ATTNLAB_JOIN2(a, b)

/// out[0..n) = the next n words of the state (state, *next), as Mt19937::Words draws them.
extern "C" void ATTNLAB_JOIN(attnlab_mt_words_, ATTNLAB_CPU_LEVEL)(uint32_t* state, int32_t* next,
                                                                   uint32_t* out, int64_t n) {
  attnlab::mt::Words(state, next, out, n);
}

/// The state (state, *next) advanced by n words, as Mt19937::Discard steps it.
extern "C" void ATTNLAB_JOIN(attnlab_mt_discard_, ATTNLAB_CPU_LEVEL)(uint32_t* state, int32_t* next,
                                                                     int64_t n) {
  attnlab::mt::Discard(state, next, n);
}
