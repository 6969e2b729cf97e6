// kernels_isa.cpp: the kernels of kernels.h for one instruction-set level. Compiled once per
// level (cmake/CpuDispatch.cmake) with ATTNLAB_CPU_LEVEL the level's name and its -m flags;
// only attnlab_kernels_<level> stays global in the level's object.
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
template <typename S, int Order, typename M = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Order>>
using Strided = Eigen::Map<M, 0, Eigen::OuterStride<>>;
template <typename S, int Order>
using ConstStrided = Strided<S, Order, const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Order>>;

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

const Table kTable{&Product<float>,           &Product<double>,
                   &rules::LogitRows<float>,  &rules::LogitRows<double>,
                   &rules::WeightRows<float>, &rules::WeightRows<double>};

}  // namespace
}  // namespace attnlab::kernels

extern "C" const attnlab::kernels::Table* ATTNLAB_JOIN(attnlab_kernels_, ATTNLAB_CPU_LEVEL)() {
  return &attnlab::kernels::kTable;
}
