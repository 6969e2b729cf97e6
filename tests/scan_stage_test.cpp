// scan_stage_test.cpp: ScanStage's per-row largest weight and smallest positive weight (the
// weights' colour ranges), on finite weights (the vectorised path) and with nan and inf.
#include <gtest/gtest.h>

#include <cmath>

#include "attnlab/base/parallel.h"
#include "attnlab/figures/heatmap_spec.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"

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
  m << 0.5f, NAN, 0.25f, 0.0f,          //
      INFINITY, 0.1f, -INFINITY, 0.2f,  //
      NAN, NAN, NAN, NAN;
  ExpectRowMaxAndMinPositive(m);
  const ValueScan scan = ScanStage(Stage::kWeights, m);
  EXPECT_EQ(scan.row_max[2], -INFINITY);  // a row without a finite value
  EXPECT_EQ(scan.min_positive, 0.1f);
  EXPECT_TRUE(ScanStage(Stage::kScores, m).row_max.empty());  // only the weights have them
}

// A matrix of many row blocks (scanned on every core, parallel.h): the merged scan is the
// naive one, and equal at 1 and 2 threads.
TEST(ScanStage, RowBlocksMergeToTheWholeMatrixScan) {
  Matrix m(300, 40);
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      m(i, j) = 0.001f * static_cast<float>((i * 7 + j * 13) % 97);
  m(5, 3) = -2.5f;    // the minimum, in the first block
  m(290, 39) = 9.0f;  // the maximum, in the last
  m(250, 1) = NAN;
  m(10, 0) = -INFINITY;
  m(150, 2) = 0.0f;
  ExpectRowMaxAndMinPositive(m);
  for (int threads : {1, 2}) {
    SetThreadCount(threads);
    const ValueScan scan = ScanStage(Stage::kWeights, m);
    EXPECT_EQ(scan.lo, -2.5f);
    EXPECT_EQ(scan.hi, 9.0f);
    EXPECT_TRUE(scan.any_finite && scan.has_nan && scan.has_inf && scan.has_negative);
    EXPECT_EQ(scan.min_positive, 0.001f);
    EXPECT_EQ(scan.row_max[290], 9.0f);
    const ValueScan plain = ScanValues(m);
    EXPECT_TRUE(plain.row_max.empty());
    EXPECT_EQ(plain.lo, -2.5f);
  }
  SetThreadCount(0);
}

}  // namespace
}  // namespace attnlab
