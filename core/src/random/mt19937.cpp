// mt19937.cpp: the Mersenne Twister (see mt19937.h); its arithmetic is mt19937_rule.h.
#include "attnlab/random/mt19937.h"

#include <algorithm>
#include <stdexcept>

#include "attnlab/base/cpu_level.h"
#include "random/mt19937_rule.h"

// The batch path of mt_words_isa.cpp, one copy per instruction-set level.
extern "C" void attnlab_mt_words_default(uint32_t*, int32_t*, uint32_t*, int64_t);
extern "C" void attnlab_mt_discard_default(uint32_t*, int32_t*, int64_t);
#ifdef ATTNLAB_CPU_DISPATCH
extern "C" void attnlab_mt_words_avx2(uint32_t*, int32_t*, uint32_t*, int64_t);
extern "C" void attnlab_mt_words_avx512(uint32_t*, int32_t*, uint32_t*, int64_t);
extern "C" void attnlab_mt_discard_avx2(uint32_t*, int32_t*, int64_t);
extern "C" void attnlab_mt_discard_avx512(uint32_t*, int32_t*, int64_t);
#endif

namespace attnlab {

static_assert(Mt19937::kStateWords == mt::kN);

void Mt19937::Seed(uint32_t seed) {
  mt::Seed(state_, seed);
  next_ = mt::kN;
}

void Mt19937::SeedByArray(const uint32_t* key, int64_t n) {
  if (n < 1) throw std::invalid_argument("Mt19937::SeedByArray needs at least one key word");
  // mt19937ar.c's init_by_array: two passes over the state after init_genrand(19650218), the
  // first adding the key words (and their index), the second subtracting the word's index;
  // each wraps from the last word to word 1, copying the last into word 0.
  mt::Seed(state_, 19650218u);
  uint32_t* x = state_;
  int i = 1;
  int64_t j = 0;
  for (int64_t k = std::max<int64_t>(mt::kN, n); k > 0; --k) {
    x[i] = (x[i] ^ ((x[i - 1] ^ (x[i - 1] >> 30)) * 1664525u)) + key[j] + uint32_t(j);
    ++i, ++j;
    if (i >= mt::kN) x[0] = x[mt::kN - 1], i = 1;
    if (j >= n) j = 0;
  }
  for (int k = mt::kN - 1; k > 0; --k) {
    x[i] = (x[i] ^ ((x[i - 1] ^ (x[i - 1] >> 30)) * 1566083941u)) - uint32_t(i);
    ++i;
    if (i >= mt::kN) x[0] = x[mt::kN - 1], i = 1;
  }
  x[0] = 0x80000000u;  // the state is never all zero
  next_ = mt::kN;
}

uint32_t Mt19937::operator()() {
  if (next_ >= mt::kN) mt::Refill(state_), next_ = 0;
  return mt::Temper(state_[next_++]);
}

namespace {

// The batch paths of the CPU's best instruction-set level (ActiveCpuLevel), chosen once.
struct LevelKernels {
  void (*words)(uint32_t*, int32_t*, uint32_t*, int64_t);
  void (*discard)(uint32_t*, int32_t*, int64_t);
};

const LevelKernels& Kernels() {
  static const LevelKernels kernels{
      CopyForLevel(ActiveCpuLevel(), ATTNLAB_LEVEL_COPIES(attnlab_mt_words)),
      CopyForLevel(ActiveCpuLevel(), ATTNLAB_LEVEL_COPIES(attnlab_mt_discard))};
  return kernels;
}

}  // namespace

void Mt19937::Words(uint32_t* out, int64_t n) {
  if (n > 0) Kernels().words(state_, &next_, out, n);
}

void Mt19937::Discard(int64_t n) {
  if (n > 0) Kernels().discard(state_, &next_, n);
}

}  // namespace attnlab
