// torch_sum_test.cpp: a row's sum in PyTorch's order of additions, bit for bit against Debian's
// torch (tests/golden/torch_sum.json, made by tools/make_sum_goldens.py): rows whose partial
// sums overflow to inf or cancel, signed zeros, infinities, NaN, at every length around the
// 8-lane vectors, the 4 interleaved sums and the cascade's chunks.
#include "../core/src/base/torch_sum.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "attnlab/model/pipeline.h"
#include "test_util.h"

namespace attnlab {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST(TorchRowSum, EqualsTorchBitForBit) {
  const nlohmann::json golden = test::LoadGolden("torch_sum.json");
  int rows = 0, order_matters = 0;
  for (const nlohmann::json& row : golden["rows"]) {
    std::vector<float> x;
    for (const nlohmann::json& b : row["x"]) x.push_back(FromBits(b.get<uint32_t>()));
    const int64_t n = static_cast<int64_t>(x.size());
    const uint32_t want = row["sum"].get<uint32_t>();
    const float got = detail::TorchRowSum(x.data(), n, n);
    // NaN payloads may differ: any NaN for a NaN.
    if (std::isnan(FromBits(want)))
      EXPECT_TRUE(std::isnan(got)) << "n = " << n << " row " << rows;
    else
      EXPECT_EQ(Bits(got), want) << "n = " << n << " row " << rows << ": " << got << " vs "
                                 << FromBits(want);
    // A plain left-to-right sum would get many of these wrong: the golden set tells orders apart.
    float plain = 0.0f;
    for (float v : x) plain += v;
    order_matters += Bits(plain) != want && !(std::isnan(plain) && std::isnan(FromBits(want)));
    ++rows;
  }
  EXPECT_EQ(rows, 3 * 57);
  EXPECT_GT(order_matters, 60);
}

// A causal row's masked tail counts as zeros where PyTorch's row has them.
TEST(TorchRowSum, ATailOfZerosIsTheRowWithItsZeros) {
  std::vector<float> full(37, 0.0f);
  const float head[] = {3e38f, 3e38f, -3e38f, 1.0f, -2e38f, 2e38f, 3e38f, -3e38f, 2e38f};
  for (int j = 0; j < 9; ++j) full[j] = head[j];
  for (int64_t n : {9, 16, 37})
    EXPECT_EQ(Bits(detail::TorchRowSum(head, 9, n)), Bits(detail::TorchRowSum(full.data(), n, n)))
        << n;
}

// The engine's "sum" normalization divides by that sum. X = [1, 3e38, 3e38, 0, ..., -3e38 (9th),
// ...] with identity projections: row 0's logits are X itself. Left to right, 1 + 3e38 + 3e38
// is inf and every weight 0; in PyTorch's order lane 1 cancels (3e38 - 3e38) and the sum is
// 3e38, so the weights are 1, 1 and -1 where X is 3e38, 3e38 and -3e38.
TEST(TorchRowSum, TheSumNormalizationUsesIt) {
  std::string values = "[1], [3e38], [3e38]";
  for (int t = 3; t < 16; ++t) values += t == 9 ? ", [-3e38]" : ", [0]";
  const Scenario s = ParseScenario(
      R"({"format": "attention-lab/scenario@1", "input": {"source": "matrix", "values": [)" +
      values + R"(]}, "projections": {"init": "identity", "d_out": 1},
          "scaling": {"sqrt_dk": false, "multiplier": 1}, "normalization": "sum"})");
  const Stages st = RunScenario(s);
  const Matrix& w = st.Head(st.weights, 0, 0);
  EXPECT_EQ(w(0, 1), 1.0f);
  EXPECT_EQ(w(0, 2), 1.0f);
  EXPECT_EQ(w(0, 9), -1.0f);
  EXPECT_EQ(w(0, 0), 1.0f / 3e38f);
}

}  // namespace
}  // namespace attnlab
