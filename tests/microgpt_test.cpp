// microgpt_test.cpp: Microgpt (microgpt.h) bit for bit against the project's standard-library
// reference (tools/microgpt_reference.py: golden/microgpt/one-step.json, short-run.json) and
// against the printed output of Karpathy's microgpt.py itself (golden/microgpt/
// expected-default.log). Tolerance: none; doubles are compared as their 64-bit patterns.
#include "attnlab/lessons/microgpt.h"

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "attnlab/model/pipeline.h"
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

namespace attnlab {
namespace {

// Units in the last place between two doubles of the same sign (0 when equal).
int64_t UlpsApart(double a, double b) {
  if (a == b) return 0;
  int64_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  return ia > ib ? ia - ib : ib - ia;
}

// The window's checkpoints: 20 steps of the default run, the parameters after each.
struct ShortRun {
  std::unique_ptr<Microgpt> run;
  MicrogptRecord record;
};
ShortRun TrainShort(int64_t steps) {
  MicrogptSettings s;
  s.steps = steps;
  ShortRun r;
  r.run = std::make_unique<Microgpt>(MicrogptDocuments(MicrogptNamesText()), s);
  r.record.params.emplace_back(0, r.run->Params());
  while (r.run->StepsDone() < steps) {
    const MicrogptStep st = r.run->Step();
    r.record.losses.push_back(st.loss);
    r.record.documents.push_back(r.run->Documents()[st.document]);
    r.record.params.emplace_back(r.run->StepsDone(), r.run->Params());
  }
  return r;
}

TEST(MicrogptAttention, RowsAreCausalSoftmaxesAndTheTokenLoopIsOneCode) {
  const ShortRun r = TrainShort(20);
  const std::u32string& doc = r.record.documents.back();  // step 20's document
  const MicrogptAttention a =
      MicrogptAttentionOf(r.run->Characters(), r.record.params.back().second, doc);
  const int64_t T = std::min<int64_t>(kMicrogptBlockSize, doc.size() + 1);
  ASSERT_EQ(a.q.rows(), T);
  ASSERT_EQ(a.weights.size(), size_t(kMicrogptHeads));
  EXPECT_EQ(a.tokens.front(), r.run->VocabSize() - 1);  // BOS first
  for (const MatrixD& w : a.weights)
    for (int64_t i = 0; i < T; ++i) {
      EXPECT_NEAR(w.row(i).sum(), 1.0, 1e-15) << "row " << i;
      for (int64_t j = i + 1; j < T; ++j) EXPECT_EQ(w(i, j), 0.0);
    }
  // MicrogptCausalAttention on the recorded q, k, v runs the same Attend code: equal bits.
  const std::vector<MatrixD> again = MicrogptCausalAttention(a.q, a.k, a.v);
  for (int h = 0; h < kMicrogptHeads; ++h) EXPECT_TRUE(again[h] == a.weights[h]) << "head " << h;
  // Different parameters, different heads: step 1's are not step 20's.
  const MicrogptAttention first =
      MicrogptAttentionOf(r.run->Characters(), r.record.params[1].second, doc);
  EXPECT_FALSE(first.weights[0] == a.weights[0]);
  EXPECT_THROW(MicrogptAttentionOf(r.run->Characters(), {1.0, 2.0}, doc), std::invalid_argument);
  EXPECT_THROW(MicrogptAttentionOf(r.run->Characters(), r.record.params[1].second, U"A!"),
               std::invalid_argument);
}

// The token loop (one query at a time over the growing cache) against the engine's masked
// matrix attention (RunScenario: Q K^T / sqrt(d_k), -inf above the diagonal, softmax row by
// row) in float64 on the same q, k, v. The engine takes given Q, K, V as float32 numbers read
// as the double of their text (WrittenAsDouble), so both sides get q, k, v rounded that way.
// Why they agree to the bit or within one ulp: the masked cells are exp(-inf) = 0 exactly on
// both sides; the logits are a 4-term dot product (the token loop sums left to right from 0,
// and 0 + a = a exactly; the engine sums the same 4 products in the same order: NumPy's order
// by rule, torch's through Eigen's product, which for 4 terms measured the same) times 1/2,
// exact on both sides; exp is the same libm exp of the same difference from the row max; the
// normaliser is summed left to right on both sides. The one place they may part is the last
// rounding: the token loop multiplies each exp by sum**-1 (libm pow(sum, -1.0)), torch's order
// multiplies by 1 / sum (the same reciprocal here), NumPy's divides e / sum: one rounding of
// e * (1/sum) against one of e / sum, at most one ulp apart. Measured on step 20's document
// (T = 7, 196 cells): torch order 0 cells differ; NumPy order 27 cells differ, by 1 ulp.
TEST(MicrogptAttention, TokenLoopEqualsTheEngineMaskedMatrixAttention) {
  const ShortRun r = TrainShort(20);
  const std::u32string& doc = r.record.documents.back();
  const MicrogptAttention a =
      MicrogptAttentionOf(r.run->Characters(), r.record.params.back().second, doc);
  const int64_t T = a.q.rows(), d = kMicrogptEmbd;
  Matrix qf = a.q.cast<float>(), kf = a.k.cast<float>(), vf = a.v.cast<float>();
  MatrixD q(T, d), k(T, d), v(T, d);
  for (int64_t i = 0; i < T * d; ++i) {
    q.data()[i] = WrittenAsDouble(qf.data()[i]);
    k.data()[i] = WrittenAsDouble(kf.data()[i]);
    v.data()[i] = WrittenAsDouble(vf.data()[i]);
  }
  const std::vector<MatrixD> loop = MicrogptCausalAttention(q, k, v);
  for (const Generator gen : {Generator::kNumpy, Generator::kTorch}) {
    Scenario s;
    s.input.source = InputSource::kQkv;
    s.input.generator = gen;
    s.input.Q = {qf}, s.input.K = {kf}, s.input.V = {vf};
    s.projections.heads = kMicrogptHeads;
    s.mask.kind = MaskKind::kCausal;
    s.dtype = Dtype::kFloat64;
    const Stages st = RunScenario(s);
    ASSERT_TRUE(st.f64);
    int64_t worst = 0, nonzero = 0;
    for (int h = 0; h < kMicrogptHeads; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
          const double e = st.f64->weights[h](i, j), l = loop[h](i, j);
          if (j > i) {
            EXPECT_EQ(e, 0.0);
            EXPECT_EQ(l, 0.0);
          }
          const int64_t u = UlpsApart(e, l);
          worst = std::max(worst, u);
          nonzero += u != 0;
        }
    std::printf(
        "engine (%s order) vs token loop: largest difference %lld ulp, %lld of %lld "
        "cells differ\n",
        gen == Generator::kNumpy ? "NumPy" : "torch", static_cast<long long>(worst),
        static_cast<long long>(nonzero), static_cast<long long>(4 * T * T));
    EXPECT_LE(worst, 1) << "largest difference in ulps";
  }
}

TEST(MicrogptAttention, SavedRunReadsBackToTheBit) {
  const ShortRun r = TrainShort(3);
  const MicrogptSavedRun back = ReadMicrogptRunJson(MicrogptRunJson(*r.run, r.record));
  EXPECT_EQ(back.chars, r.run->Characters());
  EXPECT_EQ(back.num_docs, static_cast<int64_t>(r.run->Documents().size()));
  EXPECT_EQ(back.settings.steps, 3);
  ASSERT_EQ(back.record.losses.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Bits(back.record.losses[i]), Bits(r.record.losses[i]));
  ASSERT_EQ(back.record.params.size(), 4u);
  EXPECT_TRUE(back.record.params[3].second == r.record.params[3].second);
  EXPECT_EQ(back.record.documents, r.record.documents);
  EXPECT_THROW(ReadMicrogptRunJson("{\"format\": \"x\"}"), std::invalid_argument);
  EXPECT_THROW(ReadMicrogptRunJson("not json"), std::invalid_argument);
}

}  // namespace
}  // namespace attnlab
