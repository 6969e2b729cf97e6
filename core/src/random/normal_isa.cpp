// normal_isa.cpp: PyTorch's AVX2 normal_ blocks (box_muller_rule.h) for one instruction-set
// level. Compiled once per level (cmake/CpuDispatch.cmake) with ATTNLAB_CPU_LEVEL the level's
// name and its -m flags; only attnlab_normal_blocks_<level> stays global in the level's object.
// Every level gives the same bits (each operation rounds once); what a level changes is how
// many lanes one instruction computes.
#include <cstdint>

#include "random/box_muller_rule.h"

#ifndef ATTNLAB_CPU_LEVEL
#error "normal_isa.cpp is compiled with -DATTNLAB_CPU_LEVEL=<level> (cmake/CpuDispatch.cmake)"
#endif
#define ATTNLAB_JOIN2(a, b) a##b
#define ATTNLAB_JOIN(a, b) ATTNLAB_JOIN2(a, b)

/// d[0 .. 16 blocks) of uniforms, in place, into normals of `mean` and `std_dev`.
extern "C" void ATTNLAB_JOIN(attnlab_normal_blocks_, ATTNLAB_CPU_LEVEL)(float* d, int64_t blocks,
                                                                        float mean, float std_dev) {
  attnlab::box_muller::Blocks16(d, blocks, mean, std_dev);
}
