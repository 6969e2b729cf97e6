// normal_isa.cpp: PyTorch's AVX2 normal_ blocks (box_muller_rule.h) and uniform_'s fused
// scaling for one instruction-set level. Compiled once per level (cmake/CpuDispatch.cmake) with
// ATTNLAB_CPU_LEVEL the level's name and its -m flags; only attnlab_normal_blocks_<level> and
// attnlab_fused_scale_{f32,f64}_<level> stay global in the level's object. Every level gives the
// same bits (each operation rounds once); what a level changes is how many lanes one
// instruction computes (the baseline has no FMA instruction: its std::fma is libm's).
#include <cmath>
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

namespace {
// v[i] = std::fma(v[i], width, lo) for i in [0, n): uniform_'s x * width + lo as PyTorch's AVX2
// kernel contracts it (one rounding per value).
template <typename T>
void FusedScale(T* v, int64_t n, T width, T lo) {
  for (int64_t i = 0; i < n; ++i) v[i] = std::fma(v[i], width, lo);
}
}  // namespace

/// FusedScale in float.
extern "C" void ATTNLAB_JOIN(attnlab_fused_scale_f32_, ATTNLAB_CPU_LEVEL)(float* v, int64_t n,
                                                                          float width, float lo) {
  FusedScale(v, n, width, lo);
}

/// FusedScale in double.
extern "C" void ATTNLAB_JOIN(attnlab_fused_scale_f64_, ATTNLAB_CPU_LEVEL)(double* v, int64_t n,
                                                                          double width, double lo) {
  FusedScale(v, n, width, lo);
}
