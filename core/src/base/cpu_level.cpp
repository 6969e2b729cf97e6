// cpu_level.cpp: which instruction-set level the kernels run at (see cpu_level.h).
#include "attnlab/base/cpu_level.h"

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace attnlab {

namespace {

// What the CPU runs, whatever this build compiled. __builtin_cpu_supports reads CPUID and
// checks that the operating system saves the wider registers (XGETBV) for AVX and AVX-512.
bool CpuRuns(CpuLevel level) {
#if defined(__x86_64__) || defined(__i386__)
  switch (level) {
    case CpuLevel::kBaseline:
      return true;
    case CpuLevel::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CpuLevel::kAvx512:
      return CpuRuns(CpuLevel::kAvx2) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl");
  }
  return false;
#else
  return level == CpuLevel::kBaseline;
#endif
}

}  // namespace

bool CpuLevelAvailable(CpuLevel level) {
#ifndef ATTNLAB_CPU_DISPATCH
  if (level != CpuLevel::kBaseline) return false;  // the variants were not compiled
#endif
  return CpuRuns(level);
}

CpuLevel BestCpuLevel() {
  for (CpuLevel l : {CpuLevel::kAvx512, CpuLevel::kAvx2})
    if (CpuLevelAvailable(l)) return l;
  return CpuLevel::kBaseline;
}

CpuLevel ActiveCpuLevel() {
  static const CpuLevel active = [] {
    const CpuLevel best = BestCpuLevel();
    const char* env = std::getenv("ATTNLAB_CPU_CAPABILITY");
    if (env == nullptr || *env == '\0') return best;
    const std::string_view text = env;
    const std::optional<CpuLevel> parsed =
        text == "sse2" || text == "baseline" ? CpuLevel::kBaseline : ParseName<CpuLevel>(text);
    if (!parsed) {
      std::fprintf(stderr,
                   "attention-lab: ATTNLAB_CPU_CAPABILITY=%s is not one of %s, sse2; using %s\n",
                   env, NameList<CpuLevel>().c_str(), Name(best));
      return best;
    }
    const CpuLevel asked = *parsed;
    CpuLevel level = asked;
    while (level != CpuLevel::kBaseline && !CpuLevelAvailable(level))
      level = static_cast<CpuLevel>(static_cast<int>(level) - 1);
    if (level != asked)
      std::fprintf(stderr, "attention-lab: ATTNLAB_CPU_CAPABILITY=%s: %s; using %s\n", env,
                   CpuRuns(asked) ? "this build has no kernels for it" : "this CPU lacks it",
                   Name(level));
    return level;
  }();
  return active;
}

}  // namespace attnlab
