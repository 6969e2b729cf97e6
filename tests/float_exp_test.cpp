// float_exp_test.cpp: the row exp of the softmax (core/src/base/float_exp.h) in the underflow
// range, where Eigen's vectorised expf is not IEEE's: every x below -87 gets std::exp's value
// (subnormal or 0, exp(-inf) = 0), the normal range stays Eigen's, and a nan anywhere in the row
// neither hides a small value from the fix-up nor is changed by it; with the row's least value
// known (RowMaxMin, one pass with the max) the check is skipped only where nothing can underflow;
// and each x gets the same value wherever it sits in a row.
#include "../core/src/base/float_exp.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace attnlab {
namespace {

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

TEST(FloatExp, UnderflowRangeIsIeeeAndTheNormalRangeIsAccurate) {
  for (const bool min_known : {false, true})
    for (const float shift : {0.0f, 5.0f, -3.5f}) {
      SCOPED_TRACE(min_known ? "the row's min given" : "no min");
      std::vector<float> z;
      for (float v = -200.0f; v < 10.0f; v += 0.37f) z.push_back(v);
      z.push_back(-std::numeric_limits<float>::infinity());
      z.push_back(-87.01f + shift);  // just below and above the fix-up's edge
      z.push_back(-86.99f + shift);
      std::vector<float> out(z.size());
      const int64_t n = static_cast<int64_t>(z.size());
      float max = 0, min = std::numeric_limits<float>::quiet_NaN();
      if (min_known) detail::RowMaxMin(z.data(), n, max, min);
      detail::ShiftedExp(z.data(), shift, out.data(), n, min);
      int fixed = 0;
      for (size_t j = 0; j < z.size(); ++j) {
        const float x = z[j] - shift;
        const float want = std::exp(x);
        if (x < detail::kExpNormalLow) {
          EXPECT_EQ(Bits(out[j]), Bits(want)) << "exp(" << x << ")";
          fixed += want < 1e-38f;
        } else {
          EXPECT_NEAR(out[j], want, 2e-7f * want) << "exp(" << x << ")";
        }
      }
      EXPECT_GT(fixed, 100);  // the rows above do reach the subnormal range and 0
    }
}

TEST(FloatExp, NanDoesNotHideAnUnderflow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const bool min_known : {false, true})
    for (const float first : {nan, -nan}) {  // either sign of nan, ahead of the small value
      SCOPED_TRACE(min_known ? "the row's min given" : "no min");
      std::vector<float> z = {first, -100.0f, 0.0f};
      for (int j = 0; j < 30; ++j) z.push_back(-1.0f);  // long enough for whole vectors
      z.push_back(-std::numeric_limits<float>::infinity());
      std::vector<float> out(z.size());
      const int64_t n = static_cast<int64_t>(z.size());
      float max = 0, min = nan;
      if (min_known) detail::RowMaxMin(z.data(), n, max, min);
      EXPECT_TRUE(std::isnan(min)) << "a row with a nan has no known min";
      detail::ShiftedExp(z.data(), 0.0f, out.data(), n, min);
      EXPECT_TRUE(std::isnan(out[0]));
      EXPECT_EQ(Bits(out[1]), Bits(std::exp(-100.0f)));  // 3.7e-44, not Eigen's 2.9e-39 or 0
      EXPECT_GT(out[1], 0.0f);
      EXPECT_LT(out[1], std::numeric_limits<float>::min());
      EXPECT_EQ(out[2], 1.0f);
      EXPECT_EQ(Bits(out.back()), Bits(0.0f));
    }
}

// A row that stays in the normal range: with its min given, the check pass is skipped and the
// values are those of the checked path, bit for bit; a row whose min is 0.01 below the range's
// edge is still fixed up.
TEST(FloatExp, KnownMinSkipsTheCheckOnlyWhereNothingUnderflows) {
  for (const float low : {-86.99f, -87.01f}) {
    std::vector<float> z;
    for (int j = 0; j < 37; ++j) z.push_back(-0.5f * static_cast<float>(j));
    z[20] = low;
    const int64_t n = static_cast<int64_t>(z.size());
    float max, min;
    detail::RowMaxMin(z.data(), n, max, min);
    EXPECT_EQ(max, 0.0f);
    EXPECT_EQ(min, low);
    std::vector<float> checked(z.size()), skipped(z.size());
    detail::ShiftedExp(z.data(), max, checked.data(), n);
    detail::ShiftedExp(z.data(), max, skipped.data(), n, min);
    for (size_t j = 0; j < z.size(); ++j) EXPECT_EQ(Bits(skipped[j]), Bits(checked[j])) << j;
    EXPECT_EQ(Bits(skipped[20]), Bits(std::exp(low))) << "the cell at the edge";
  }
}

// Every x of a row gets the vector kernel's value wherever it sits: in a whole packet, in the
// row's last partial packet, at any alignment. Eigen's own loop sent the ends of a row (before
// an aligned address, after the last whole packet) to std::exp, whose value differs from the
// kernel's in the last bit for some x, so a softmax weight depended on its column and on T.
TEST(FloatExp, EveryPositionOfARowGetsTheKernelsValue) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> logits(-20.0f, 3.0f);
  std::vector<float> z(4096);
  for (float& v : z) v = logits(gen);
  const float shift = 1.5f;
  std::vector<float> whole(z.size());  // one long row: whole packets
  detail::ShiftedExp(z.data(), shift, whole.data(), static_cast<int64_t>(z.size()));
  int libm_differs = 0;
  for (size_t j = 0; j < z.size(); ++j)
    libm_differs += Bits(whole[j]) != Bits(std::exp(z[j] - shift));
  EXPECT_GT(libm_differs, 0) << "no x tells the kernel from std::exp: the test would not fail";
  std::vector<float> out(64);
  for (int64_t offset = 0; offset < 17; ++offset)
    for (int64_t n = 1; n <= 40; ++n) {
      std::fill(out.begin(), out.end(), -1.0f);
      detail::ShiftedExp(z.data() + offset * 41, shift, out.data() + offset % 5, n);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(Bits(out[offset % 5 + j]), Bits(whole[offset * 41 + j]))
            << "length " << n << ", offset " << offset << ", column " << j;
      EXPECT_EQ(out[offset % 5 + n], -1.0f) << "written past the row";
    }
}

// RowMaxMin's max is Eigen's maxCoeff for every length around the vector width (whole vectors,
// a tail, shorter than one vector), with infinities in the row; its min is minCoeff when the
// row is finite and nan ("not known") when an inf or a nan is anywhere in it, the tail too; an
// empty row gives -inf and +inf.
TEST(FloatExp, RowMaxMinIsEigensMaxAndMinAtEveryLength) {
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 30.0f);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n = 1; n <= 70; ++n) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<float> z(static_cast<size_t>(n));
      for (float& v : z) v = normal(gen);
      if (trial == 1) z[static_cast<size_t>(n - 1)] = -inf;  // last: in the scalar tail
      if (trial == 2) z[0] = inf;
      if (trial == 3) std::fill(z.begin(), z.end(), -inf);  // a fully masked row
      const Eigen::Map<const Eigen::ArrayXf> row(z.data(), n);
      float max, min;
      detail::RowMaxMin(z.data(), n, max, min);
      EXPECT_EQ(Bits(max), Bits(row.maxCoeff())) << "n = " << n << ", trial " << trial;
      if (trial == 0)
        EXPECT_EQ(Bits(min), Bits(row.minCoeff())) << "n = " << n;
      else
        EXPECT_TRUE(std::isnan(min)) << "n = " << n << ", trial " << trial;
      z[static_cast<size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
      detail::RowMaxMin(z.data(), n, max, min);
      EXPECT_TRUE(std::isnan(min)) << "with a nan, n = " << n << ", trial " << trial;
    }
  }
  float max, min;
  detail::RowMaxMin(nullptr, 0, max, min);
  EXPECT_EQ(max, -inf);
  EXPECT_EQ(min, inf);
}

}  // namespace
}  // namespace attnlab
