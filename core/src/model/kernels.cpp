// kernels.cpp: the table of the active instruction-set level (kernels.h).
#include "model/kernels.h"

namespace attnlab::kernels {

const Table& Of(CpuLevel level) {
#ifdef ATTNLAB_CPU_DISPATCH
  if (level == CpuLevel::kAvx512) return *attnlab_kernels_avx512();
  if (level == CpuLevel::kAvx2) return *attnlab_kernels_avx2();
#endif
  (void)level;
  return *attnlab_kernels_default();
}

const Table& Active() {
  static const Table& table = Of(ActiveCpuLevel());
  return table;
}

}  // namespace attnlab::kernels
