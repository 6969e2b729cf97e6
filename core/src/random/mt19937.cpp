// mt19937.cpp: the Mersenne Twister (see mt19937.h); its arithmetic is mt19937_rule.h.
#include "attnlab/random/mt19937.h"

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
