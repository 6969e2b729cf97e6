// Tests of kernels.h's packed products: a right operand packed once (pack_right, in slices as
// several threads pack it) gives, at every instruction-set level the CPU has, the very bits of
// Eigen's own product (product), whose results the goldens check.
#include "model/kernels.h"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>

namespace attnlab {
namespace {

template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// rows x cols of normal numbers, plus some exact zeros (the causal zeros of the weights).
template <typename S>
Mat<S> Random(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Mat<S> m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = i % 7 == 3 ? S(0) : S(normal(rng));
  return m;
}

struct Shape {
  int64_t rows, inner, cols, depth;  // out rows x cols = a (rows x inner) @ B[0:inner]
  bool b_transposed;                 // B is the transpose of a row-major matrix (q @ k^T)
};

template <typename S>
void ExpectSameBits(const kernels::Table& table, const Shape& sh, std::mt19937& rng,
                    const std::string& what) {
  // a is a block of a wider matrix, as a head's columns of Q or a block of the weights.
  const Mat<S> a_full = Random<S>(sh.rows, sh.inner + 5, rng);
  const kernels::View<const S> a{a_full.data() + 2, sh.rows, sh.inner, a_full.outerStride(), true};
  // B: depth x cols, stored row-major or as the transpose of a row-major cols x depth.
  const Mat<S> b_store = sh.b_transposed ? Random<S>(sh.cols, sh.depth + 3, rng)
                                         : Random<S>(sh.depth, sh.cols + 3, rng);
  const kernels::View<const S> whole{b_store.data() + 1, sh.depth, sh.cols, b_store.outerStride(),
                                     !sh.b_transposed};
  kernels::View<const S> b = whole;
  b.rows = sh.inner;
  Eigen::Matrix<S, Eigen::Dynamic, 1> packed(sh.depth * sh.cols);
  packed.setConstant(S(-7));
  // In slices, as several tasks would pack it: three of the depth (as the engine packs V),
  // or, for the transposed B (K^T), three of the columns at cuts that are not whole panels.
  auto pack = [&](int64_t k0, int64_t k1, int64_t j0, int64_t j1) {
    if constexpr (std::is_same_v<S, float>)
      table.pack_right_f(whole, k0, k1, j0, j1, packed.data());
    else
      table.pack_right_d(whole, k0, k1, j0, j1, packed.data());
  };
  if (sh.b_transposed) {
    const int64_t cut1 = sh.cols / 3, cut2 = 2 * sh.cols / 3 + 1;
    pack(0, sh.depth, cut2, sh.cols), pack(0, sh.depth, 0, cut1), pack(0, sh.depth, cut1, cut2);
  } else {
    const int64_t cut1 = sh.depth / 3, cut2 = 2 * sh.depth / 3;
    pack(cut2, sh.depth, 0, sh.cols), pack(0, cut1, 0, sh.cols), pack(cut1, cut2, 0, sh.cols);
  }
  // Both written into rows wider than the product (a block of the stage), whose layout
  // Eigen's small and vector products depend on.
  // `added`: out_zero, the destination all +0 already (the engine's ScoresScratch).
  Mat<S> want(sh.rows, sh.cols + 4), got(sh.rows, sh.cols + 4), added(sh.rows, sh.cols + 4);
  want.setConstant(S(3));
  got.setConstant(S(5));
  added.setConstant(S(5));
  added.leftCols(sh.cols).setZero();
  const auto view_of = [&](Mat<S>& m) {
    return kernels::View<S>{m.data(), sh.rows, sh.cols, m.outerStride(), true};
  };
  if constexpr (std::is_same_v<S, float>) {
    table.product_f(a, b, view_of(want));
    table.product_packed_f(a, b, packed.data(), sh.depth, view_of(got), false);
    table.product_packed_f(a, b, packed.data(), sh.depth, view_of(added), true);
  } else {
    table.product_d(a, b, view_of(want));
    table.product_packed_d(a, b, packed.data(), sh.depth, view_of(got), false);
    table.product_packed_d(a, b, packed.data(), sh.depth, view_of(added), true);
  }
  for (int64_t i = 0; i < sh.rows; ++i) {
    ASSERT_EQ(std::memcmp(want.row(i).data(), got.row(i).data(), sizeof(S) * sh.cols), 0)
        << what << " row " << i << ": first entry " << want(i, 0) << " vs " << got(i, 0);
    ASSERT_EQ(std::memcmp(want.row(i).data(), added.row(i).data(), sizeof(S) * sh.cols), 0)
        << what << " out_zero, row " << i << ": first entry " << want(i, 0) << " vs "
        << added(i, 0);
    for (int64_t j = sh.cols; j < sh.cols + 4; ++j) {
      ASSERT_EQ(got(i, j), S(5)) << what;
      ASSERT_EQ(added(i, j), S(5)) << what;
    }
  }
}

// The engine's shapes: q @ k^T of a row block (b the transpose of K's head columns, depth
// d_k), weights @ v over the causal prefix (depth T, the first r0 + rb rows used) and over
// every row, at T = 1024, 300 and the small T of the notebooks; vectors and empty products.
const Shape kShapes[] = {
    {64, 64, 1024, 64, true},    {64, 64, 300, 64, true},      {44, 64, 300, 64, true},
    {64, 1024, 64, 1024, false}, {64, 576, 64, 1024, false},   {64, 64, 64, 1024, false},
    {44, 300, 64, 300, false},   {64, 257, 32, 300, false},    {6, 6, 6, 6, true},
    {6, 4, 2, 6, false},         {1, 64, 300, 64, true},       {64, 300, 1, 300, false},
    {2, 3, 2, 3, false},         {128, 2048, 64, 2048, false}, {128, 64, 2048, 64, true},
    {17, 8, 29, 8, true},        {64, 16, 64, 16, false},      {3, 200, 3, 200, false}};

TEST(PackedProduct, GivesEigensProductBitForBitAtEveryLevel) {
  for (CpuLevel level : {CpuLevel::kBaseline, CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (!CpuLevelAvailable(level)) continue;
    const kernels::Table& table = kernels::Of(level);
    std::mt19937 rng(7);
    for (const Shape& sh : kShapes) {
      const std::string what = std::string(Name(level)) + " " + std::to_string(sh.rows) + "x" +
                               std::to_string(sh.inner) + "x" + std::to_string(sh.cols) +
                               " depth " + std::to_string(sh.depth);
      ExpectSameBits<float>(table, sh, rng, "float " + what);
      ExpectSameBits<double>(table, sh, rng, "double " + what);
    }
  }
}

// The packing itself: every entry of B lands once, whatever the slices: of the depth (rows), of
// the columns (cut anywhere: each slice starts on its first column's panel), or of both.
TEST(PackedProduct, SlicesPackTheSameAsOnePass) {
  std::mt19937 rng(3);
  const Mat<float> b = Random<float>(300, 64, rng);
  const kernels::View<const float> view{b.data(), 300, 64, 64, true};
  // K^T as the engine packs it: d_k x T, the transpose of a row-major T x d_k.
  const Mat<float> k = Random<float>(1000, 64, rng);
  const kernels::View<const float> k_t{k.data(), 64, 1000, 64, false};
  for (CpuLevel level : {CpuLevel::kBaseline, CpuLevel::kAvx2, CpuLevel::kAvx512}) {
    if (!CpuLevelAvailable(level)) continue;
    const kernels::Table& table = kernels::Of(level);
    Eigen::VectorXf one(300 * 64), sliced(300 * 64);
    sliced.setConstant(-7.0f);
    table.pack_right_f(view, 0, 300, 0, 64, one.data());
    for (int64_t k0 = 0; k0 < 300; k0 += 37)
      table.pack_right_f(view, k0, std::min<int64_t>(k0 + 37, 300), 0, 64, sliced.data());
    EXPECT_EQ(one, sliced) << Name(level);
    Eigen::VectorXf k_one(64 * 1000), k_sliced(64 * 1000), k_both(64 * 1000);
    k_sliced.setConstant(-7.0f);
    k_both.setConstant(-7.0f);
    table.pack_right_f(k_t, 0, 64, 0, 1000, k_one.data());
    for (int64_t j0 = 0; j0 < 1000; j0 += 250)  // the engine's four slices of T
      table.pack_right_f(k_t, 0, 64, j0, j0 + 250, k_sliced.data());
    EXPECT_EQ(k_one, k_sliced) << Name(level);
    for (int64_t j0 = 0; j0 < 1000; j0 += 97)
      for (int64_t k0 = 0; k0 < 64; k0 += 20)
        table.pack_right_f(k_t, k0, std::min<int64_t>(k0 + 20, 64), j0,
                           std::min<int64_t>(j0 + 97, 1000), k_both.data());
    EXPECT_EQ(k_one, k_both) << Name(level);
    // A slice inside one panel packs nothing: its panel belongs to the slice that holds its
    // first column.
    Eigen::VectorXf untouched = Eigen::VectorXf::Constant(64 * 1000, -7.0f), before = untouched;
    table.pack_right_f(k_t, 0, 64, 1, 2, untouched.data());
    EXPECT_EQ(untouched, before) << Name(level);
  }
  const kernels::Table& table = kernels::Active();
  Eigen::VectorXf one(300 * 64);
  table.pack_right_f(view, 0, 300, 0, 64, one.data());
  Eigen::VectorXf sorted_packed = one,
                  sorted_b = Eigen::Map<const Eigen::VectorXf>(b.data(), b.size());
  std::sort(sorted_packed.data(), sorted_packed.data() + sorted_packed.size());
  std::sort(sorted_b.data(), sorted_b.data() + sorted_b.size());
  EXPECT_EQ(sorted_packed, sorted_b);
}

}  // namespace
}  // namespace attnlab
