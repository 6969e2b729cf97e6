// scan_stage_test.cpp: ScanStage's per-row largest weight and smallest positive weight (the
// weights' colour ranges), on finite weights (the vectorised path) and with nan and inf.
#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/heatmap_spec.h"
#include "attnlab/pipeline.h"
#include "attnlab/presets.h"

namespace attnlab {
namespace {

void ExpectRowMaxAndMinPositive(const Matrix& m) {
  const ValueScan scan = ScanStage(Stage::kWeights, m);
  ASSERT_EQ(scan.row_max.size(), static_cast<size_t>(m.rows()));
  float small = INFINITY;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    float top = -INFINITY;
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const float v = m(i, j);
      if (!std::isfinite(v)) continue;
      top = std::max(top, v);
      if (v > 0) small = std::min(small, v);
    }
    EXPECT_EQ(scan.row_max[static_cast<size_t>(i)], top) << "row " << i;
  }
  EXPECT_EQ(scan.min_positive, small);
}

TEST(ScanStage, RowMaxAndMinPositiveOfCausalWeights) {
  const Stages st = RunScenario(LoadPreset("karpathy-head"));
  for (const Matrix& w : st.weights) ExpectRowMaxAndMinPositive(w);  // zeros above the diagonal
  EXPECT_EQ(ScanStage(Stage::kWeights, st.weights[0]).row_max[0], 1.0f);  // row 0: one key
}

TEST(ScanStage, NanAndInfAreLeftOut) {
  Matrix m(3, 4);
  m << 0.5f, NAN, 0.25f, 0.0f,  //
      INFINITY, 0.1f, -INFINITY, 0.2f,  //
      NAN, NAN, NAN, NAN;
  ExpectRowMaxAndMinPositive(m);
  const ValueScan scan = ScanStage(Stage::kWeights, m);
  EXPECT_EQ(scan.row_max[2], -INFINITY);  // a row without a finite value
  EXPECT_EQ(scan.min_positive, 0.1f);
  EXPECT_TRUE(ScanStage(Stage::kScores, m).row_max.empty());  // only the weights have them
}

}  // namespace
}  // namespace attnlab
