// stages_json_test.cpp: the dump format: spec keys and shapes, exact float round trip, and
// non-finite values as strings.
#include "attnlab/python/stages_json.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "attnlab/model/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

TEST(StagesToJson, HasTheSpecKeysAndShapes) {
  const Stages st = RunScenario(LoadPreset("karpathy-head"));
  const nlohmann::json j = StagesToJson(st);
  for (const char* key : {"X", "W_query", "W_key", "W_value", "Q", "K", "V", "scores", "logits",
                          "mask", "weights", "context", "tokens"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_FALSE(j.contains("weights_dropped"));  // only when dropout p > 0
  EXPECT_EQ(j["X"].size(), 4u);                 // B x T x d_in = 4 x 8 x 32
  EXPECT_EQ(j["X"][0].size(), 8u);
  EXPECT_EQ(j["X"][0][0].size(), 32u);
  EXPECT_EQ(j["W_query"].size(), 32u);  // d_in x d_out
  EXPECT_EQ(j["W_query"][0].size(), 16u);
  EXPECT_EQ(j["scores"].size(), 4u);  // B x H x T x T
  EXPECT_EQ(j["scores"][0].size(), 1u);
  EXPECT_EQ(j["scores"][0][0].size(), 8u);
  EXPECT_EQ(j["logits"][0][0][0][1], "-inf");  // causal: above the diagonal
  EXPECT_EQ(j["mask"][0][1], 0);
  EXPECT_EQ(j["context"][0][0].size(), 16u);
}

TEST(StagesToJson, FloatsRoundTripExactlyAndNonFiniteAreStrings) {
  Scenario s = LoadPreset("raschka-journey");
  s.scaling.multiplier = 1e6;
  s.normalization = Normalization::kSoftmaxNaive;  // overflows: inf / inf = nan
  const Stages st = RunScenario(s);
  const nlohmann::json j = nlohmann::json::parse(DumpStages(st));
  EXPECT_EQ(j["weights"][0][0][1][1], "nan");
  const float w = st.W[0](1, 0);
  EXPECT_EQ(static_cast<float>(j["W_query"][1][0].get<double>()), w);
  EXPECT_EQ(j["W_query"][0][0].dump(), "0.29611194");  // shortest text, not 17 digits
}

TEST(StagesToJson, VarKAboveFloat32sLargestIsInfAsInPyTorch) {
  // K.var() of values near 1e19 is about 1e39: inf in float32, as the oracle prints it (the
  // dump wrote the double 2.1e39, then "nan" for any non-finite value).
  const nlohmann::json golden = test::LoadGolden("scenarios/nonfinite-big-values-mean-none.json");
  ASSERT_EQ(golden["expected"]["var_K"], "inf");
  const Stages st = RunScenario(ParseScenario(golden["scenario"].dump()));
  EXPECT_EQ(StagesToJson(st)["var_K"], "inf");
}

TEST(WriteStagesJson, StreamsTheSameTextWithWholeFloatsAsFloats) {
  Scenario s;
  Matrix x(2, 2);
  x << 1.0f, -2.0f, 0.5f, 1e-5f;
  s.input.values = {x};
  const Stages st = RunScenario(s);
  std::ostringstream os;
  WriteStagesJson(os, st);
  const std::string text = os.str();
  EXPECT_EQ(text, DumpStages(st));
  EXPECT_NE(text.find("\"X\":[[[1.0,-2.0],[0.5,1e-05]]]"), std::string::npos) << text;
  EXPECT_NE(text.find("\"mask\":[[1,1],[1,1]]"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace attnlab
