// kernels.h (internal to the core): the engine's hot loops behind one table of function
// pointers, compiled once per instruction-set level (kernels_isa.cpp, cmake/CpuDispatch.cmake)
// and chosen at run time (ActiveCpuLevel, attnlab/base/cpu_level.h): the matrix products (the
// projections, q @ k^T, weights @ v, out_proj) and the per-head stage rules of stage_rules.h
// (logits from scores, the row normalizations with their exp and sums).
//
// Each level's copy of every inline function it uses (Eigen's, the stage rules', the standard
// library's) is made local to that level's object at build time, so no other code can end up
// calling an AVX copy (tools/check_cpu_dispatch.sh checks it). The Eigen objects passed in are
// made by the baseline code: every level assumes the same alignment of them
// (EIGEN_MAX_ALIGN_BYTES=64, the top-level CMakeLists.txt).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "attnlab/base/cpu_level.h"
#include "model/stage_rules.h"

namespace attnlab::kernels {

/// A rows x cols matrix in memory: entry (i, j) at data[i * stride + j] when row_major, else
/// at data[j * stride + i] (the transpose of a row-major block).
template <typename S>
struct View {
  S* data;
  int64_t rows, cols, stride;
  bool row_major;
};

/// One level's kernels, with these and the stage rules' (stage_rules.h) signatures:
/// - product: out = a @ b by Eigen's product (out row-major, sized a.rows x b.cols, not
///   overlapping a or b).
/// - pack_right: rows [k0, k1) and columns [j0, j1) of a right operand `b` (depth b.rows x
///   b.cols) into `packed` (b.rows * b.cols entries, aligned as Eigen's matrices are) in the
///   form Eigen's product packs it (gemm_pack_lhs of b^T: Eigen computes a row-major product
///   as its transpose), so that products by it need not pack it again. Eigen packs columns in
///   panels: a column slice starts and ends on the panel that holds j0 and j1 (j1 = b.cols
///   ends at the end). Slices that tile b (in rows, in columns, or both) pack the whole, and
///   may be packed by different threads.
/// - product_packed: out = a @ b, as `product` computes it, bit for bit (the same blocking,
///   kernel and order of additions), with b's packing read from `packed`: the whole of
///   pack_right's operand B (`depth` = B.rows), of which b is the first a.cols rows. Shapes
///   Eigen does not multiply by its blocked kernel (small, vector, empty) go to `product`.
///   `out_zero`: out holds +0 in every cell already, and the blocked kernel adds into it
///   without clearing it first (Eigen's product clears its destination, then adds into it:
///   the same bits either way).
struct Table {
  void (*product_f)(View<const float> a, View<const float> b, View<float> out);
  void (*product_d)(View<const double> a, View<const double> b, View<double> out);
  void (*pack_right_f)(View<const float> b, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
                       float* packed);
  void (*pack_right_d)(View<const double> b, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
                       double* packed);
  void (*product_packed_f)(View<const float> a, View<const float> b, const float* packed,
                           int64_t depth, View<float> out, bool out_zero);
  void (*product_packed_d)(View<const double> a, View<const double> b, const double* packed,
                           int64_t depth, View<double> out, bool out_zero);
  decltype(&rules::LogitRows<float>) logit_rows_f;
  decltype(&rules::LogitRows<double>) logit_rows_d;
  decltype(&rules::WeightRows<float>) weight_rows_f;
  decltype(&rules::WeightRows<double>) weight_rows_d;
};

/// The kernels of ActiveCpuLevel(). Thread-safe.
const Table& Active();

/// The kernels of `level` (CpuLevelAvailable(level) must hold: the caller checks).
const Table& Of(CpuLevel level);

/// out = a @ b (Table::product) at the active level.
inline void Product(View<const float> a, View<const float> b, View<float> out) {
  Active().product_f(a, b, out);
}
inline void Product(View<const double> a, View<const double> b, View<double> out) {
  Active().product_d(a, b, out);
}

/// Table::pack_right at the active level.
inline void PackRight(View<const float> b, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
                      float* packed) {
  Active().pack_right_f(b, k0, k1, j0, j1, packed);
}
inline void PackRight(View<const double> b, int64_t k0, int64_t k1, int64_t j0, int64_t j1,
                      double* packed) {
  Active().pack_right_d(b, k0, k1, j0, j1, packed);
}
/// Table::product_packed at the active level.
inline void ProductPacked(View<const float> a, View<const float> b, const float* packed,
                          int64_t depth, View<float> out, bool out_zero = false) {
  Active().product_packed_f(a, b, packed, depth, out, out_zero);
}
inline void ProductPacked(View<const double> a, View<const double> b, const double* packed,
                          int64_t depth, View<double> out, bool out_zero = false) {
  Active().product_packed_d(a, b, packed, depth, out, out_zero);
}
/// rules::LogitRows at the active level.
template <typename S, typename... Args>
void LogitRows(Args&&... args) {
  if constexpr (std::is_same_v<S, float>)
    Active().logit_rows_f(std::forward<Args>(args)...);
  else
    Active().logit_rows_d(std::forward<Args>(args)...);
}

/// rules::WeightRows at the active level.
template <typename S, typename... Args>
bool WeightRows(Args&&... args) {
  if constexpr (std::is_same_v<S, float>)
    return Active().weight_rows_f(std::forward<Args>(args)...);
  else
    return Active().weight_rows_d(std::forward<Args>(args)...);
}

}  // namespace attnlab::kernels

/// The entry point of each level's object: its table (kernels_isa.cpp).
extern "C" const attnlab::kernels::Table* attnlab_kernels_default();
extern "C" const attnlab::kernels::Table* attnlab_kernels_avx2();
extern "C" const attnlab::kernels::Table* attnlab_kernels_avx512();
