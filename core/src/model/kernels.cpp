// kernels.cpp: the table of the active instruction-set level (kernels.h).
#include "model/kernels.h"

namespace attnlab::kernels {

const Table& Of(CpuLevel level) {
  return *CopyForLevel(level, ATTNLAB_LEVEL_COPIES(attnlab_kernels))();
}

const Table& Active() {
  static const Table& table = Of(ActiveCpuLevel());
  return table;
}

}  // namespace attnlab::kernels
