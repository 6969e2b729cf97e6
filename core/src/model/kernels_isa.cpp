// kernels_isa.cpp: the kernels of kernels.h for one instruction-set level. Compiled once per
// level (cmake/CpuDispatch.cmake) with ATTNLAB_CPU_LEVEL the level's name and its -m flags;
// only attnlab_kernels_<level> stays global in the level's object.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "model/kernels.h"

#ifndef ATTNLAB_CPU_LEVEL
#error "kernels_isa.cpp is compiled with -DATTNLAB_CPU_LEVEL=<level> (cmake/CpuDispatch.cmake)"
#endif
#define ATTNLAB_JOIN2(a, b) a##b
#define ATTNLAB_JOIN(a, b) ATTNLAB_JOIN2(a, b)

namespace attnlab::kernels {
namespace {

// A View as an Eigen matrix of storage order Order (const M for a read-only one).
template <typename S, int Order,
          typename M = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Order>>
using Strided = Eigen::Map<M, 0, Eigen::OuterStride<>>;
template <typename S, int Order>
using ConstStrided =
    Strided<S, Order, const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Order>>;

template <typename S, int Order>
ConstStrided<S, Order> MapOf(View<const S> v) {
  return {v.data, v.rows, v.cols, Eigen::OuterStride<>(v.stride)};
}

template <typename S, int OrderA>
void ProductWith(const ConstStrided<S, OrderA>& a, View<const S> b, View<S> out) {
  Strided<S, Eigen::RowMajor> o(out.data, out.rows, out.cols, Eigen::OuterStride<>(out.stride));
  if (b.row_major)
    o.noalias() = a * MapOf<S, Eigen::RowMajor>(b);
  else
    o.noalias() = a * MapOf<S, Eigen::ColMajor>(b);
}

template <typename S>
void Product(View<const S> a, View<const S> b, View<S> out) {
  if (a.row_major)
    ProductWith<S, Eigen::RowMajor>(MapOf<S, Eigen::RowMajor>(a), b, out);
  else
    ProductWith<S, Eigen::ColMajor>(MapOf<S, Eigen::ColMajor>(a), b, out);
}

// Eigen multiplies a row-major out = a @ b as its transpose, out^T = b^T a^T, column-major
// (general_matrix_matrix_product's RowMajor case): b^T is the left operand it packs in panels
// of Traits::mr rows (gemm_pack_lhs), a^T the right one (gemm_pack_rhs). `Order` is b^T's
// storage order: column-major for a row-major b.
template <typename S, int Order>
using LeftMapper = Eigen::internal::const_blas_data_mapper<S, Eigen::Index, Order>;

template <typename S, int Order>
void PackRightAs(View<const S> b, int64_t k0, int64_t k1, int64_t j0, int64_t j1, S* packed) {
  using Traits = Eigen::internal::gebp_traits<S, S>;
  // Eigen packs b^T's rows (b's columns) from the first in panels of Traits::mr, the largest,
  // then smaller ones at the end: a slice starting on a whole number of mr columns packs the
  // same panels as the whole. Each slice starts on the panel that holds its first column.
  const auto panel_start = [&](int64_t j) { return j >= b.cols ? b.cols : j - j % Traits::mr; };
  const int64_t p0 = panel_start(j0), p1 = panel_start(j1);
  if (p1 <= p0 || k1 <= k0) return;
  // Panel mode: each panel keeps room for every row of b (stride b.rows), this slice at k0.
  Eigen::internal::gemm_pack_lhs<S, Eigen::Index, LeftMapper<S, Order>, Traits::mr,
                                 Traits::LhsProgress, typename Traits::LhsPacket4Packing, Order,
                                 false, true>
      pack;
  const LeftMapper<S, Order> left(b.data, b.stride);
  pack(packed + p0 * b.rows, left.getSubMapper(p0, k0), k1 - k0, p1 - p0, b.rows, k0);
}

template <typename S>
void PackRight(View<const S> b, int64_t k0, int64_t k1, int64_t j0, int64_t j1, S* packed) {
  if (b.row_major)
    PackRightAs<S, Eigen::ColMajor>(b, k0, k1, j0, j1, packed);
  else
    PackRightAs<S, Eigen::RowMajor>(b, k0, k1, j0, j1, packed);
}

// Eigen's sequential blocked product (GeneralMatrixMatrix.h: generic_product_impl::evalTo,
// scaleAndAddTo, general_matrix_matrix_product::run) with the left operand's packing read from
// `packed` (strideA = depth, offsetA = k2: gebp_kernel reads a depth slice of full panels)
// instead of made again. `OrderA`: a^T's storage order (the right operand of the transpose).
template <typename S, int OrderA>
void ProductPackedAs(View<const S> a, View<const S> b, const S* packed, int64_t depth, View<S> out,
                     bool out_zero) {
  using Eigen::Index;
  using Traits = Eigen::internal::gebp_traits<S, S>;
  using RightMapper = Eigen::internal::const_blas_data_mapper<S, Index, OrderA>;
  using ResMapper =
      Eigen::internal::blas_data_mapper<S, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;
  const Index rows = out.cols, cols = out.rows, inner = a.cols;  // of the transpose
  Eigen::internal::gemm_blocking_space<Eigen::RowMajor, S, S, Eigen::Dynamic, Eigen::Dynamic,
                                       Eigen::Dynamic, 1, false>
      blocking(out.rows, out.cols, inner, 1, true);
  const Index kc = blocking.kc(), mc = std::min(rows, blocking.mc()),
              nc = std::min(cols, blocking.nc());
  // Eigen packs each block of mc rows from its first row: the whole packing has the same
  // panels only when mc is a whole number of them.
  // (Product<S>: this level's own, not kernels.h's Product, which takes the active level's.)
  if (mc < rows && mc % Traits::mr != 0) return Product<S>(a, b, out);
  if (!out_zero)  // Eigen's clearing of the destination (evalTo: dst.setZero())
    for (Index i = 0; i < out.rows; ++i) std::fill_n(out.data + i * out.stride, out.cols, S(0));
  Eigen::internal::gemm_pack_rhs<S, Index, RightMapper, Traits::nr, OrderA> pack_rhs;
  Eigen::internal::gebp_kernel<S, S, Index, ResMapper, Traits::mr, Traits::nr, false, false> gebp;
  const RightMapper right(a.data, a.stride);
  const ResMapper res(out.data, out.stride, 1);
  using namespace Eigen;  // NOLINT: Eigen's stack-buffer macro names internal:: unqualified
  ei_declare_aligned_stack_constructed_variable(S, blockB, static_cast<std::size_t>(kc * nc), 0);
  const bool pack_rhs_once = mc != rows && kc == inner && nc == cols;
  for (Index i2 = 0; i2 < rows; i2 += mc) {
    const Index actual_mc = std::min(i2 + mc, rows) - i2;
    for (Index k2 = 0; k2 < inner; k2 += kc) {
      const Index actual_kc = std::min(k2 + kc, inner) - k2;
      for (Index j2 = 0; j2 < cols; j2 += nc) {
        const Index actual_nc = std::min(j2 + nc, cols) - j2;
        if (!pack_rhs_once || i2 == 0)
          pack_rhs(blockB, right.getSubMapper(k2, j2), actual_kc, actual_nc);
        gebp(res.getSubMapper(i2, j2), packed + i2 * depth, blockB, actual_mc, actual_kc, actual_nc,
             S(1), depth, -1, k2, 0);
      }
    }
  }
}

template <typename S>
void ProductPacked(View<const S> a, View<const S> b, const S* packed, int64_t depth, View<S> out,
                   bool out_zero) {
  // Where Eigen's product does not take its blocked kernel (evalTo: the coefficient-based
  // product below EIGEN_GEMM_TO_COEFFBASED_THRESHOLD; scaleAndAddTo: empty, GEMV).
  if (a.cols + out.rows + out.cols < EIGEN_GEMM_TO_COEFFBASED_THRESHOLD || a.cols == 0 ||
      out.rows <= 1 || out.cols <= 1)
    return Product<S>(a, b, out);
  if (a.row_major)
    ProductPackedAs<S, Eigen::ColMajor>(a, b, packed, depth, out, out_zero);
  else
    ProductPackedAs<S, Eigen::RowMajor>(a, b, packed, depth, out, out_zero);
}

const Table kTable{&Product<float>,           &Product<double>,          &PackRight<float>,
                   &PackRight<double>,        &ProductPacked<float>,     &ProductPacked<double>,
                   &rules::LogitRows<float>,  &rules::LogitRows<double>, &rules::WeightRows<float>,
                   &rules::WeightRows<double>};

}  // namespace
}  // namespace attnlab::kernels

extern "C" const attnlab::kernels::Table* ATTNLAB_JOIN(attnlab_kernels_, ATTNLAB_CPU_LEVEL)() {
  return &attnlab::kernels::kTable;
}
