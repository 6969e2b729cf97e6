// float_exp_test.cpp: the row exp of the softmax (core/src/base/float_exp.h) in the underflow
// range, where Eigen's vectorised expf is not IEEE's: every x below -87 gets std::exp's value
// (subnormal or 0, exp(-inf) = 0), the normal range stays Eigen's, and a nan anywhere in the row
// neither hides a small value from the fix-up nor is changed by it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "../core/src/base/float_exp.h"

namespace attnlab {
namespace {

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

TEST(FloatExp, UnderflowRangeIsIeeeAndTheNormalRangeIsAccurate) {
  for (const float shift : {0.0f, 5.0f, -3.5f}) {
    std::vector<float> z;
    for (float v = -200.0f; v < 10.0f; v += 0.37f) z.push_back(v);
    z.push_back(-std::numeric_limits<float>::infinity());
    z.push_back(-87.01f + shift);  // just below and above the fix-up's edge
    z.push_back(-86.99f + shift);
    std::vector<float> out(z.size());
    detail::ShiftedExp(z.data(), shift, out.data(), static_cast<int64_t>(z.size()));
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
  for (const float first : {nan, -nan}) {  // either sign of nan, ahead of the small value
    std::vector<float> z = {first, -100.0f, 0.0f};
    for (int j = 0; j < 30; ++j) z.push_back(-1.0f);  // long enough for whole vectors
    z.push_back(-std::numeric_limits<float>::infinity());
    std::vector<float> out(z.size());
    detail::ShiftedExp(z.data(), 0.0f, out.data(), static_cast<int64_t>(z.size()));
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(Bits(out[1]), Bits(std::exp(-100.0f)));  // 3.7e-44, not Eigen's 2.9e-39 or 0
    EXPECT_GT(out[1], 0.0f);
    EXPECT_LT(out[1], std::numeric_limits<float>::min());
    EXPECT_EQ(out[2], 1.0f);
    EXPECT_EQ(Bits(out.back()), Bits(0.0f));
  }
}

}  // namespace
}  // namespace attnlab
