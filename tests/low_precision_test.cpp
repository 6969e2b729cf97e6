// low_precision_test.cpp: "dtype" bfloat16 and float16 (pipeline.h, "bfloat16 and float16"),
// mask.fill and scaling.softmax_dtype: the rounding itself against values worked out by hand
// from the formats' definitions, the fields' parsing, saving and refusals, and the engine's
// stored stages against PyTorch's (the lowp-* goldens, tests/golden/scenarios, are checked
// stage by stage in pipeline_test.cpp; here what they show).
#include <cmath>
#include <limits>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"
#include "test_util.h"

namespace attnlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(StoreAs, RoundsToNearestEvenInBfloat16) {
  // bfloat16 keeps 8 significant bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7, ties to even.
  EXPECT_EQ(StoreAs(Dtype::kBfloat16, 1.0f + 0x1p-8f), 1.0f);
  EXPECT_EQ(StoreAs(Dtype::kBfloat16, 1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(StoreAs(Dtype::kBfloat16, 0.1f), 0.10009765625f);   // torch.tensor(0.1).bfloat16()
  EXPECT_EQ(StoreAs(Dtype::kBfloat16, 3e38f), 3.00405527e38f);  // float32's range (torch's value)
  EXPECT_EQ(StoreAs(Dtype::kBfloat16, -1e9f), -998244352.0f);
  EXPECT_TRUE(std::isnan(StoreAs(Dtype::kBfloat16, std::nanf(""))));
  EXPECT_EQ(StoreAs(Dtype::kBfloat16, -kInf), -kInf);
}

TEST(StoreAs, RoundsToNearestEvenAndOverflowsInFloat16) {
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 1.0f + 0x1p-11f), 1.0f);  // 11 bits: a tie, to even
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 0.1f), 0.0999755859375f);
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 65504.0f), 65504.0f);  // the largest finite half
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 65519.0f), 65504.0f);
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 65520.0f), kInf);  // halfway to 65536: overflow
  EXPECT_EQ(StoreAs(Dtype::kFloat16, -1e9f), -kInf);
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 1e-8f), 0.0f);      // below half the least subnormal
  EXPECT_EQ(StoreAs(Dtype::kFloat16, 6e-8f), 0x1p-24f);  // the least subnormal, 5.96e-8
  EXPECT_EQ(StoreAs(Dtype::kFloat32, 0.1f), 0.1f);
}

TEST(MaskFillValue, IsTheFillStoredInTheDtype) {
  EXPECT_EQ(MaskFillValue(MaskFill::kNegInf, Dtype::kFloat16), -INFINITY);
  EXPECT_EQ(MaskFillValue(MaskFill::kFinfoMin, Dtype::kFloat32), -3.4028234663852886e38);
  EXPECT_EQ(MaskFillValue(MaskFill::kFinfoMin, Dtype::kFloat64), -1.7976931348623157e308);
  EXPECT_EQ(MaskFillValue(MaskFill::kFinfoMin, Dtype::kBfloat16), -3.3895313892515355e38);
  EXPECT_EQ(MaskFillValue(MaskFill::kFinfoMin, Dtype::kFloat16), -65504.0);
  EXPECT_EQ(MaskFillValue(MaskFill::kMinus1e9, Dtype::kFloat32), -1e9);
  EXPECT_EQ(MaskFillValue(MaskFill::kMinus1e9, Dtype::kFloat16), -INFINITY);
  EXPECT_EQ(MaskFillValue(MaskFill::kMinus1e4, Dtype::kBfloat16), -9984.0);
  EXPECT_EQ(MaskFillValue(MaskFill::kMinus1e4, Dtype::kFloat16), -10000.0);
  // Gemma's -2.3819763e38 (gemma_pytorch): float32's nearest, -inf in float16 (beyond 65504).
  EXPECT_EQ(MaskFillValue(MaskFill::kGemma, Dtype::kFloat32), static_cast<double>(-2.3819763e38f));
  EXPECT_EQ(MaskFillValue(MaskFill::kGemma, Dtype::kFloat64), -2.3819763e38);
  EXPECT_EQ(MaskFillValue(MaskFill::kGemma, Dtype::kFloat16), -INFINITY);
}

const char* kLow = R"({
  "format": "attention-lab/scenario@1",
  "input": {"source": "matrix", "values": [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64]]},
  "projections": {"init": "torch_rand", "d_out": 2, "seed": 123},
  "scaling": {"softmax_dtype": "float32"},
  "mask": {"kind": "causal", "fill": "-1e9"},
  "dtype": "bfloat16"
})";

TEST(LowPrecisionScenario, ParsesSavesAndReadsBack) {
  const Scenario s = ParseScenario(kLow);
  EXPECT_EQ(s.dtype, Dtype::kBfloat16);
  EXPECT_EQ(s.mask.fill, MaskFill::kMinus1e9);
  EXPECT_EQ(s.scaling.softmax_dtype, SoftmaxDtype::kFloat32);
  const std::string saved = WriteScenario(s);
  EXPECT_NE(saved.find("\"dtype\": \"bfloat16\""), std::string::npos) << saved;
  EXPECT_NE(saved.find("\"fill\": \"-1e9\""), std::string::npos) << saved;
  EXPECT_NE(saved.find("\"softmax_dtype\": \"float32\""), std::string::npos) << saved;
  EXPECT_TRUE(ParseScenario(saved) == s);
  // Defaults are not written.
  Scenario plain = s;
  plain.mask.fill = MaskFill::kNegInf;
  plain.scaling.softmax_dtype = SoftmaxDtype::kSame;
  plain.dtype = Dtype::kFloat16;
  const std::string text = WriteScenario(plain);
  EXPECT_EQ(text.find("fill"), std::string::npos);
  EXPECT_EQ(text.find("softmax_dtype"), std::string::npos);
  EXPECT_NE(text.find("\"float16\""), std::string::npos);
}

// Every stored stage of a bfloat16 run is a bfloat16 number, and the upcast softmax keeps the
// weights in float32 (their row sums 1 to float32 rounding; bfloat16's only to its ulps).
TEST(LowPrecisionEngine, StoresEveryStageAndUpcastsTheSoftmax) {
  Scenario s = ParseScenario(kLow);
  s.scaling.softmax_dtype = SoftmaxDtype::kSame;
  Engine engine;
  const Stages& st = engine.Run(s);
  auto all_bf16 = [](const MatrixStack& stack) {
    for (const Matrix& m : stack)
      for (Eigen::Index i = 0; i < m.size(); ++i)
        if (StoreAs(Dtype::kBfloat16, m.data()[i]) != m.data()[i]) return false;
    return true;
  };
  for (const MatrixStack* stage :
       {&st.X, &st.Q, &st.K, &st.V, &st.scores, &st.weights, &st.context})
    EXPECT_TRUE(all_bf16(*stage));
  EXPECT_EQ(st.logits[0](0, 1), -998244352.0f);  // -1e9 stored in bfloat16
  const float row1 = st.weights[0](1, 0) + st.weights[0](1, 1);
  const int before = engine.counts().projections, weights = engine.counts().weights;
  s.scaling.softmax_dtype = SoftmaxDtype::kFloat32;
  const Stages& up = engine.Run(s);
  EXPECT_EQ(engine.counts().projections, before);  // only the weights on are recomputed
  EXPECT_EQ(engine.counts().weights, weights + 1);
  EXPECT_TRUE(up.weights_f32);
  EXPECT_FALSE(all_bf16(up.weights));
  EXPECT_NEAR(up.weights[0](1, 0) + up.weights[0](1, 1), 1.0f, 1.2e-7f);
  EXPECT_NEAR(row1, 1.0f, 2 * 0x1p-8f);  // each bfloat16 weight within half an ulp of its own
  EXPECT_TRUE(all_bf16(up.context));
}

// The float32 reference of a low-precision run (Stages::f32, the hover's rounding errors): the
// same scenario run in float32, made once per run; none for float32 runs.
TEST(LowPrecisionEngine, KeepsTheSameScenarioInFloat32AsTheReference) {
  const Scenario s = ParseScenario(kLow);
  Scenario f32 = s;
  f32.dtype = Dtype::kFloat32;
  f32.scaling.softmax_dtype = SoftmaxDtype::kSame;
  const Stages low = RunScenario(s), want = RunScenario(f32);
  ASSERT_NE(low.f32, nullptr);
  EXPECT_EQ(low.f32->weights[0], want.weights[0]);
  EXPECT_EQ(low.f32->context[0], want.context[0]);
  EXPECT_EQ(low.f32->logits[0](0, 1), -1e9f);  // the fill in float32
  EXPECT_NE(low.weights[0], want.weights[0]);
  EXPECT_EQ(want.f32, nullptr);
}

}  // namespace
}  // namespace attnlab
