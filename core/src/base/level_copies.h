// level_copies.h: choosing one of a function's per-level copies (cmake/CpuDispatch.cmake
// compiles a source once per instruction-set level, each copy named <name>_<level>).
#pragma once

#include "attnlab/base/cpu_level.h"

namespace attnlab {

/// The copy of `level`: `avx512`, `avx2` or `baseline`. A build without ATTNLAB_CPU_DISPATCH has
/// the baseline copy only (ATTNLAB_LEVEL_COPIES passes it three times). Errors: none.
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
