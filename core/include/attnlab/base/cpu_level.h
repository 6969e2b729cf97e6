// cpu_level.h: the instruction-set level the engine's hot kernels run at, chosen at run time.
//
// The build compiles the kernels once per level (cmake/CpuDispatch.cmake, as PyTorch compiles
// its CPU kernels per ATEN_CPU_CAPABILITY): the portable baseline (x86-64: SSE2), AVX2 with FMA,
// and AVX-512 (F, DQ, BW, VL). The best level the CPU runs is taken, unless the environment
// variable ATTNLAB_CPU_CAPABILITY names one ("default" or "sse2", "avx2", "avx512"); a level the
// CPU (or this build) lacks falls back to the best one below it, with a message on stderr.
#pragma once

#include "attnlab/base/enum_names.h"

namespace attnlab {

/// An instruction-set level of the kernels, lowest first.
enum class CpuLevel {
  kBaseline,  ///< the build's own flags (portable x86-64: SSE2, no FMA)
  kAvx2,      ///< AVX2 + FMA (x86-64-v3's vector units)
  kAvx512,    ///< AVX-512 F, DQ, BW, VL (x86-64-v4's vector units)
};

/// The levels' names as ATTNLAB_CPU_CAPABILITY spells them (Name(level), enum_names.h); "sse2"
/// and "baseline" are read as "default" too.
inline constexpr EnumName<CpuLevel> kCpuLevels[] = {
    {CpuLevel::kBaseline, "default"}, {CpuLevel::kAvx2, "avx2"}, {CpuLevel::kAvx512, "avx512"}};
constexpr const auto& AllNames(CpuLevel) { return kCpuLevels; }

/// True when this CPU (and its operating system) runs `level` and this build compiled the
/// kernels for it (a build with ATTNLAB_CPU_DISPATCH off has the baseline only). Errors: none.
bool CpuLevelAvailable(CpuLevel level);

/// The highest available level (CpuLevelAvailable). Errors: none.
CpuLevel BestCpuLevel();

/// The level the kernels run at in this process, decided on first call and fixed after: the
/// level ATTNLAB_CPU_CAPABILITY names ("default" / "sse2" / "baseline", "avx2", "avx512",
/// case-sensitive), or BestCpuLevel() when it is unset or empty. A level that is not available
/// gives the best available one below it, and an unknown name gives BestCpuLevel(); both print
/// one line saying so on stderr. Thread-safe.
CpuLevel ActiveCpuLevel();

/// The copy of `level` among a function's per-level copies (cmake/CpuDispatch.cmake compiles a
/// source once per level, each copy named <name>_<level>): `avx512`, `avx2` or `baseline`. A
/// build without ATTNLAB_CPU_DISPATCH has the baseline copy only (ATTNLAB_LEVEL_COPIES passes
/// it three times). Errors: none.
template <typename Fn>
constexpr Fn CopyForLevel(CpuLevel level, Fn baseline, [[maybe_unused]] Fn avx2,
                          [[maybe_unused]] Fn avx512) {
#ifdef ATTNLAB_CPU_DISPATCH
  if (level == CpuLevel::kAvx512) return avx512;
  if (level == CpuLevel::kAvx2) return avx2;
#endif
  (void)level;
  return baseline;
}

}  // namespace attnlab

/// The three copies of `name` (name_default, name_avx2, name_avx512) as CopyForLevel takes them.
#ifdef ATTNLAB_CPU_DISPATCH
#define ATTNLAB_LEVEL_COPIES(name) &name##_default, &name##_avx2, &name##_avx512
#else
#define ATTNLAB_LEVEL_COPIES(name) &name##_default, &name##_default, &name##_default
#endif
