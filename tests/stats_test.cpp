// stats_test.cpp: ScaledVariance (stats.h) gives the variance of a scaled copy, without the copy.
#include "attnlab/model/stats.h"

#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/random/rng.h"

namespace attnlab {
namespace {

Matrix Scaled(const Matrix& m, float multiply, float divide) {
  Matrix out = m * multiply;
  if (divide != 1.0f) out /= divide;
  return out;
}

// The from-scratch notebook's wei = q @ k.T (scaling-demo): its 1/4 = head_size**-0.5 scaling
// gives the same variance as the scaled copy the window used to make, bit for bit in float32.
TEST(ScaledVariance, EqualsTheVarianceOfAScaledCopy) {
  const Stages st = RunScenario(LoadPreset("scaling-demo"));
  ASSERT_FALSE(st.scores.empty());
  for (const Matrix& scores : st.scores) {
    for (float divide : {1.0f, 4.0f, 3.0f}) {
      const Matrix copy = Scaled(scores, 1.0f, divide);
      EXPECT_EQ(ScaledVariance(scores, 1.0f, divide, VarianceKind::kTorchUnbiased),
                StackVariance(MatrixStack{copy}, VarianceKind::kTorchUnbiased));
      const double numpy = StackVariance(MatrixStack{copy}, VarianceKind::kNumpy);
      EXPECT_NEAR(ScaledVariance(scores, 1.0f, divide, VarianceKind::kNumpy), numpy, 1e-12 * numpy);
    }
  }
}

// Above 32768 entries (the cascade's deeper levels) and with both a multiplier and 1/sqrt(d_k).
TEST(ScaledVariance, LargeMatricesAndBothFactors) {
  TorchGenerator gen(7);
  Matrix m(300, 257);
  const std::vector<float> draws = gen.Normal(m.size());
  std::copy(draws.begin(), draws.end(), m.data());
  const Matrix copy = Scaled(m, 2.5f, std::sqrt(64.0f));
  const double want = StackVariance(MatrixStack{copy}, VarianceKind::kTorchUnbiased);
  EXPECT_EQ(ScaledVariance(m, 2.5f, 8.0f, VarianceKind::kTorchUnbiased), want);
  EXPECT_NEAR(want, 2.5 * 2.5 / 64.0, 0.01);  // randn has variance 1
  EXPECT_TRUE(std::isnan(ScaledVariance(Matrix(0, 0), 1.0f, 1.0f, VarianceKind::kNumpy)));
  EXPECT_TRUE(
      std::isnan(ScaledVariance(Matrix::Ones(1, 1), 1.0f, 1.0f, VarianceKind::kTorchUnbiased)));
}

}  // namespace
}  // namespace attnlab
