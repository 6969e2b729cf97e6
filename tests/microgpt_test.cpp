// microgpt_test.cpp: Microgpt (microgpt.h) bit for bit against the project's standard-library
// reference (tools/microgpt_reference.py: golden/microgpt/one-step.json, short-run.json) and
// against the printed output of Karpathy's microgpt.py itself (golden/microgpt/
// expected-default.log). Tolerance: none; doubles are compared as their 64-bit patterns.
#include "attnlab/lessons/microgpt.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;

std::string Bits(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(u));
  return buf;
}

std::string ReadGoldenText(const std::string& relative) {
  std::ifstream f(std::string(ATTNLAB_GOLDEN_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(f.good()) << relative;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The first index where two lists of bit patterns differ, or -1.
template <typename Got>
int64_t FirstDifference(const Got& got, const json& want) {
  if (got.size() != want.size()) return static_cast<int64_t>(std::min(got.size(), want.size()));
  for (size_t i = 0; i < got.size(); ++i)
    if (Bits(got[i]) != want[i].get<std::string>()) return static_cast<int64_t>(i);
  return -1;
}

TEST(Microgpt, OneStepInitGradientsAndAdamMatchTheReferenceBitForBit) {
  const json g = test::LoadGolden("microgpt/one-step.json");
  Microgpt run(MicrogptDocuments(MicrogptNamesText()), MicrogptSettings{});
  ASSERT_EQ(run.NumParams(), g["num_params"].get<int64_t>());
  EXPECT_EQ(MicrogptUtf8(run.Documents()[0]), g["document"].get<std::string>());
  EXPECT_EQ(FirstDifference(run.Params(), g["init_params_bits"]), -1) << "gauss init";
  const MicrogptStep s = run.Step();
  EXPECT_EQ(Bits(s.loss), g["loss_bits"].get<std::string>()) << s.loss;
  EXPECT_EQ(FirstDifference(s.position_loss, g["position_loss_bits"]), -1);
  const int64_t grad = FirstDifference(run.LastGrads(), g["grads_bits"]);
  EXPECT_EQ(grad, -1) << "first gradient differing: param " << grad;
  const int64_t after = FirstDifference(run.Params(), g["params_after_bits"]);
  EXPECT_EQ(after, -1) << "first parameter differing after Adam: param " << after;
  // a real step: most gradients are non-zero and every one of those parameters moved
  int64_t moved = 0;
  for (size_t i = 0; i < run.LastGrads().size(); ++i) moved += run.LastGrads()[i] != 0.0;
  EXPECT_GT(moved, 2000);
}

TEST(Microgpt, ShortRunOnASmallInputMatchesTheReferenceBitForBit) {
  const json g = test::LoadGolden("microgpt/short-run.json");
  MicrogptSettings s;
  s.seed_text = std::to_string(g["seed"].get<int64_t>());
  s.seed_key = PythonSeedKey(s.seed_text);
  s.steps = g["steps"];
  s.temperature = g["temperature"];
  s.samples = g["samples"].size();
  Microgpt run(MicrogptDocuments(ReadGoldenText("microgpt/" + g["input"].get<std::string>())), s);
  ASSERT_EQ(run.Documents().size(), g["docs"].size());
  for (size_t i = 0; i < run.Documents().size(); ++i)
    EXPECT_EQ(MicrogptUtf8(run.Documents()[i]), g["docs"][i].get<std::string>()) << i;
  for (int64_t i = 0; i < s.steps; ++i) {
    const double loss = run.Step().loss;
    EXPECT_EQ(Bits(loss), g["losses_bits"][i].get<std::string>()) << "step " << i + 1;
    EXPECT_EQ(PythonFloatHex(loss), g["losses_hex"][i].get<std::string>());
  }
  EXPECT_EQ(FirstDifference(run.Params(), g["final_params_bits"]), -1);
  for (const json& want : g["samples"])
    EXPECT_EQ(MicrogptUtf8(run.Sample()), want.get<std::string>());
}

TEST(Microgpt, DefaultRunPrintsExactlyWhatMicrogptPyPrinted) {
  // 1000 steps and 20 samples: about 2 s in Release (the reason the ASan build skips it).
  Microgpt run(MicrogptDocuments(MicrogptNamesText()), MicrogptSettings{});
  std::string out;
  RunMicrogpt(run, false, [&](const std::string& line) { out += line + "\n"; });
  const std::string want = ReadGoldenText("microgpt/expected-default.log");
  if (out != want) {
    std::istringstream a(out), b(want);
    std::string la, lb;
    for (int n = 1; std::getline(b, lb); ++n) {
      if (!std::getline(a, la)) la = "(nothing)";
      ASSERT_EQ(la, lb) << "line " << n;
    }
    FAIL() << "more lines than microgpt.py printed";
  }
}

TEST(Microgpt, ReadsTheInputAsPythonDoes) {
  const auto docs =
      MicrogptDocuments("  a b \r\n\r\nc\rzo\xc3\xab\n\xe3\x80\x80\x1c\n\xc2\xa0x\xc2\xa0");
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0], U"a b");
  EXPECT_EQ(docs[1], U"c");
  EXPECT_EQ(docs[2], U"zo\u00eb");
  EXPECT_EQ(docs[3], U"x");
  EXPECT_TRUE(MicrogptDocuments("").empty());
  EXPECT_TRUE(MicrogptDocuments(" \n\t\n").empty());
  EXPECT_THROW(MicrogptDocuments("ab\xff"), std::invalid_argument);
  EXPECT_THROW(MicrogptDocuments("\xc0\x80"), std::invalid_argument);      // overlong
  EXPECT_THROW(MicrogptDocuments("\xed\xa0\x80"), std::invalid_argument);  // a surrogate
  EXPECT_THROW(MicrogptDocuments("\xe2\x82"), std::invalid_argument);      // cut short
  EXPECT_EQ(MicrogptNamesText().size(), 228145u);
}

TEST(Microgpt, RefusesWhatTheScriptCannotRunAndRunsOneDocument) {
  EXPECT_THROW(Microgpt({}, MicrogptSettings{}), std::invalid_argument);
  MicrogptSettings zero_t;
  zero_t.temperature = 0.0;
  EXPECT_THROW(Microgpt({U"ab"}, zero_t), std::invalid_argument);
  // one document longer than the block: the script trains on its first 16 positions
  MicrogptSettings s;
  s.steps = 3;
  s.samples = 2;
  Microgpt run({U"abcdefghijklmnopqrstuvwxyz"}, s);
  EXPECT_EQ(run.VocabSize(), 27);
  for (int i = 0; i < 3; ++i) {
    const MicrogptStep step = run.Step();
    EXPECT_EQ(step.position_loss.size(), 16u);
    EXPECT_TRUE(std::isfinite(step.loss));
  }
  EXPECT_LE(run.Sample().size(), 16u);
}

TEST(Microgpt, PrintsLossesAsPythonFormatsThem) {
  EXPECT_EQ(PythonFloatHex(1.0), "0x1.0000000000000p+0");
  EXPECT_EQ(PythonFloatHex(-0.0), "-0x0.0p+0");
  EXPECT_EQ(PythonFloatHex(3.3660), "0x1.aed916872b021p+1");
  EXPECT_EQ(PythonFloatHex(5e-324), "0x0.0000000000001p-1022");
  EXPECT_EQ(PythonFloatHex(0.1), "0x1.999999999999ap-4");
  EXPECT_EQ(PythonFloatHex(NAN), "nan");
  EXPECT_EQ(MicrogptStepLine(1, 1000, 3.36604, false), "step    1 / 1000 | loss 3.3660");
  EXPECT_EQ(MicrogptStepLine(12, 12345, 0.5, true),
            "step   12 / 12345 | loss 0x1.0000000000000p-1");
  EXPECT_EQ(MicrogptSampleLine(3, U"zo\u00eb"), "sample  3: zo\xc3\xab");
}

}  // namespace
}  // namespace attnlab
