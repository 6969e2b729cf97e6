// dense_floor.cpp: BM_DenseFloor's work, compiled once per instruction-set level
// (attnlab_cpu_variants, cmake/CpuDispatch.cmake) so that the floor is the machine's (the
// benchmark takes BestCpuLevel()), not the build's.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>

#ifndef ATTNLAB_CPU_LEVEL
#error "dense_floor.cpp is compiled with -DATTNLAB_CPU_LEVEL=<level> (cmake/CpuDispatch.cmake)"
#endif
#define ATTNLAB_JOIN2(a, b) a##b
#define ATTNLAB_JOIN(a, b) ATTNLAB_JOIN2(a, b)

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
}  // namespace

// Dense attention on rows [r0, r0 + rows) of T x d row-major Q, K, V: S = Q K^T (T x T), the
// stable softmax row by row (scaled by 1 / sqrt(d)), C = S V (T x d).
extern "C" void ATTNLAB_JOIN(attnlab_dense_rows_,
                             ATTNLAB_CPU_LEVEL)(const float* q, const float* k, const float* v,
                                                int64_t T, int64_t d, int64_t r0, int64_t rows,
                                                float* s_out, float* c_out) {
  const ConstMap Q(q, T, d), K(k, T, d), V(v, T, d);
  Map S(s_out, T, T), C(c_out, T, d);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  auto s = S.middleRows(r0, rows);
  s.noalias() = Q.middleRows(r0, rows) * K.transpose();
  for (int64_t i = 0; i < rows; ++i) {
    auto row = s.row(i).array();
    const float mx = row.maxCoeff();
    row = ((row - mx) * scale).exp();
    row *= 1.0f / row.sum();
  }
  C.middleRows(r0, rows).noalias() = s * V;
}
