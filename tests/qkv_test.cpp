// qkv_test.cpp: input.source "qkv" and input.generator "numpy" against real PyTorch and NumPy
// (golden/qkv/*.json, made by tools/make_qkv_goldens.py), the variance "stats" against
// torch.Tensor.var() and numpy.ndarray.var(), and the refusals of what NumPy cannot express.
//
// Tolerances: the draws (Q, K, V of qkv input, X and W) are compared bit for bit; the other
// stages to float32 summation order (2e-6 + 2e-5 |e| + 2 ulp of the largest magnitude); torch's
// variances bit for bit as float32, NumPy's to 1e-12 relative (pairwise vs sequential sums).
#include <algorithm>
#include <filesystem>

#include "attnlab/figures/stage_view.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/stats.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/stages_json.h"
#include "attnlab/python/torch_print.h"
#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;
using test::JsonMatrix;
using test::MatrixNear;

std::vector<std::string> QkvGoldens() {
  std::vector<std::string> names;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/qkv"))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

double Atol(const Matrix& expected) {
  double mx = 0;
  for (Eigen::Index i = 0; i < expected.size(); ++i)
    if (std::isfinite(expected.data()[i])) mx = std::max(mx, std::fabs(double(expected.data()[i])));
  return 2e-6 + 2.0 * mx * 1.1920929e-7;
}

// A golden value: a number, or "nan" / "inf" / "-inf".
double JsonDouble(const json& j) {
  if (j.is_string()) return j == "nan" ? NAN : j == "inf" ? INFINITY : -INFINITY;
  return j.get<double>();
}

// exact: the variance of the golden's own stage (bit for bit as float32 for torch, 1e-12 for
// NumPy); otherwise of the app's stage, which differs from PyTorch's in the last bits.
void ExpectVariance(const char* key, double got, const json& want, VarianceKind kind, bool exact) {
  const double w = JsonDouble(want);
  if (std::isnan(w)) {
    EXPECT_TRUE(std::isnan(got)) << key << " = " << got << ", expected nan";
  } else if (!exact) {
    EXPECT_NEAR(got, w, 1e-5 * std::fabs(w) + 1e-12) << key;
  } else if (kind == VarianceKind::kTorchUnbiased) {
    EXPECT_EQ(static_cast<float>(got), static_cast<float>(w)) << key;  // float32, bit for bit
  } else {
    EXPECT_NEAR(got, w, 1e-12 * std::fabs(w)) << key;
  }
}

// A golden stage as a stack: B matrices (per token) or B*H (per head).
MatrixStack GoldenStack(const json& j, bool per_head) {
  MatrixStack out;
  for (const json& b : j) {
    if (!per_head) {
      out.push_back(JsonMatrix(b));
      continue;
    }
    for (const json& h : b) out.push_back(JsonMatrix(h));
  }
  return out;
}

class QkvGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(QkvGolden, EveryStageMatchesPyTorchAndNumpy) {
  const json golden = test::LoadGolden("qkv/" + GetParam() + ".json");
  const json& ex = golden["expected"];
  const Scenario s = ParseScenario(golden["scenario"].dump());
  const Stages st = RunScenario(s);
  const int64_t B = st.shape.B, H = st.shape.H;
  auto per_token = [&](const char* key, const MatrixStack& got, bool exact) {
    ASSERT_EQ(got.size(), ex[key].size()) << key;
    for (int64_t b = 0; b < B; ++b) {
      const Matrix want = JsonMatrix(ex[key][b]);
      EXPECT_TRUE(MatrixNear(std::string(key) + " batch " + std::to_string(b), got[b], want,
                             exact ? 0 : Atol(want), exact ? 0 : 2e-5));
    }
  };
  auto per_head = [&](const char* key, const MatrixStack& got) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const Matrix want = JsonMatrix(ex[key][b][h]);
        EXPECT_TRUE(
            MatrixNear(std::string(key) + " b" + std::to_string(b) + " h" + std::to_string(h),
                       got[b * H + h], want, Atol(want), 2e-5));
      }
  };
  const bool qkv = s.input.source == InputSource::kQkv;
  per_token("Q", st.Q, qkv);  // drawn or given: the generator's values exactly
  per_token("K", st.K, qkv);
  per_token("V", st.V, qkv);
  if (qkv) {
    EXPECT_TRUE(st.X.empty());
    for (const Matrix& w : st.W) EXPECT_EQ(w.size(), 0);
  } else {
    per_token("X", st.X, true);
    EXPECT_TRUE(MatrixNear("W_query", st.W[0], JsonMatrix(ex["W_query"]), 0, 0));
    EXPECT_TRUE(MatrixNear("W_key", st.W[1], JsonMatrix(ex["W_key"]), 0, 0));
    EXPECT_TRUE(MatrixNear("W_value", st.W[2], JsonMatrix(ex["W_value"]), 0, 0));
  }
  per_head("scores", st.scores);
  per_head("logits", st.logits);
  per_head("weights", st.weights);
  per_token("context", st.context, false);
  EXPECT_EQ(st.tokens, ex["tokens"].get<std::vector<std::string>>());

  // The variance itself, on the golden's own stages: PyTorch's / NumPy's .var() exactly.
  const VarianceKind kind = VarianceKindOf(s.input.generator);
  const std::pair<const char*, const char*> stage_of[] = {{"var_q", "Q"},
                                                          {"var_k", "K"},
                                                          {"var_scores", "scores"},
                                                          {"var_logits", "logits"},
                                                          {"var_weights", "weights"}};
  for (const auto& [key, stage] : stage_of) {
    const bool per_head = std::string(stage) != "Q" && std::string(stage) != "K";
    ExpectVariance(key, StackVariance(GoldenStack(ex[stage], per_head), kind), ex["stats"][key],
                   kind, true);
  }
  // ... and on the app's stages, in the dump: no X or W for qkv; the file round-trips.
  const json dump = StagesToJson(st);
  for (const auto& [key, stage] : stage_of) {
    const bool drawn = qkv && (std::string(stage) == "Q" || std::string(stage) == "K");
    ExpectVariance(key, JsonDouble(dump["stats"][key]), ex["stats"][key], kind, drawn);
  }
  // var_K is K.var() as the scenario's library computes it: NumPy's own default (ddof = 0)
  // for numpy scenarios, torch's unbiased one otherwise (tools/make_qkv_goldens.py, var_K).
  ExpectVariance("var_K", st.var_K, ex["var_K"], kind, qkv);
  ExpectVariance("dump var_K", JsonDouble(dump["var_K"]), ex["var_K"], kind, qkv);
  EXPECT_EQ(dump.contains("X"), !qkv);
  EXPECT_EQ(dump.contains("W_query"), !qkv);
  EXPECT_TRUE(ParseScenario(WriteScenario(s)) == s) << WriteScenario(s);
  // show prints no X or W for qkv (and never crashes on them).
  for (const char* name : {"X", "W_query", "W_key", "W_value"})
    EXPECT_EQ(PrintStage(st, name)->present, !qkv) << name;
  // A numpy scenario in float32 prints NumPy's repr of float32 arrays, as NumPy itself does
  // (the drawn Q, K, V are exact, so their text must be NumPy's to the character).
  if (s.input.generator == Generator::kNumpy) {
    EXPECT_NE(PrintStage(st, "weights")->text.find("dtype=float32)"), std::string::npos);
    for (const char* name : {"Q", "K", "V"}) {
      if (qkv) {
        EXPECT_EQ(PrintStage(st, name)->text, ex["show"][name].get<std::string>()) << name;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Goldens, QkvGolden, ::testing::ValuesIn(QkvGoldens()),
                         [](const auto& info) { return test::ParamName(info.param); });

TEST(QkvGoldens, CoverBothGeneratorsGivenAndDrawnAndHeads) {
  std::set<std::string> seen;
  for (const std::string& name : QkvGoldens()) {
    const Scenario s = ParseScenario(test::LoadGolden("qkv/" + name + ".json")["scenario"].dump());
    seen.insert(std::string(Name(s.input.source)) + ":" + Name(s.input.generator));
    if (s.input.QkvGiven()) seen.insert("given");
    if (s.projections.heads > 1) seen.insert("heads>1");
    if (s.input.order[0] != Projection::kQuery) seen.insert("order");
    const Shape sh = ValidateScenario(s);
    if (sh.d_v != sh.d_out) seen.insert(std::string("d_v:") + Name(s.input.generator));
  }
  for (const char* want : {"qkv:torch", "qkv:numpy", "randn:numpy", "matrix:numpy", "given",
                           "heads>1", "order", "d_v:torch", "d_v:numpy"})
    EXPECT_TRUE(seen.count(want)) << want;
}

// Given Q, K, V with input.generator "numpy": nothing is drawn, but the program is NumPy's and
// show prints NumPy's arrays; the file round-trips (the window's generator switch writes it).
TEST(QkvScenario, GivenMatricesTakeTheNumpyGenerator) {
  const Scenario s = ParseScenario(
      R"({"format": "attention-lab/scenario@1", "input": {"source": "qkv", "generator": "numpy",
          "Q": [[1, 0.5], [0.25, 2]], "K": [[1, 2], [3, 4]], "V": [[1], [0.5]]}})");
  EXPECT_EQ(s.input.generator, Generator::kNumpy);
  EXPECT_TRUE(ParseScenario(WriteScenario(s)) == s) << WriteScenario(s);
  const std::string py = GeneratePyTorchCode(s);
  EXPECT_NE(py.find("V = np.array([[1.0],"), std::string::npos) << py;
  EXPECT_EQ(py.find("torch"), std::string::npos) << py;
  const Stages st = RunScenario(s);
  EXPECT_EQ(st.shape.d_v, 1);
  EXPECT_EQ(PrintStage(st, "V")->text, "array([[1. ],\n       [0.5]], dtype=float32)");
}

// d_v != d_k: the dump's V and context are d_v wide and hold PyTorch's numbers; each head takes
// d_v / H columns of V (golden torch-qkv-dv-heads: B = 2, T = 4, d_k = 6, d_v = 4, 2 heads).
TEST(ValueWidth, DumpViewsAndCodeUseDvNotDk) {
  const json golden = test::LoadGolden("qkv/torch-qkv-dv-heads.json");
  const json& ex = golden["expected"];
  const Scenario s = ParseScenario(golden["scenario"].dump());
  const Stages st = RunScenario(s);
  EXPECT_EQ(st.shape.d_out, 6);
  EXPECT_EQ(st.shape.dh, 3);
  EXPECT_EQ(st.shape.d_v, 4);
  EXPECT_EQ(st.shape.dh_v, 2);
  const json dump = StagesToJson(st);
  EXPECT_EQ(dump["shape"]["d_v"], 4);
  EXPECT_EQ(dump["shape"]["d_k"], 3);
  for (int b = 0; b < 2; ++b) {
    EXPECT_TRUE(MatrixNear("dump V", JsonMatrix(dump["V"][b]), JsonMatrix(ex["V"][b]), 0, 0));
    const Matrix want = JsonMatrix(ex["context"][b]);
    EXPECT_EQ(want.cols(), 4);
    EXPECT_TRUE(MatrixNear("dump context", JsonMatrix(dump["context"][b]), want, Atol(want), 2e-5));
  }
  // The V map of head 1 is columns 2..3 of V, labelled so; the context map all 4 columns.
  const StageView v = ExtractStage(st, s, Stage::kV, 1, 1);
  EXPECT_TRUE(MatrixNear("V head 1", v.values, JsonMatrix(ex["V"][1]).middleCols(2, 2), 0, 0));
  EXPECT_EQ(v.col_labels, (std::vector<std::string>{"h1\u00B7d2", "h1\u00B7d3"}));
  EXPECT_NE(v.subtitle.find("d_v = 2 columns (2..3)"), std::string::npos) << v.subtitle;
  EXPECT_EQ(ExtractStage(st, s, Stage::kContext, 0, 0).values.cols(), 4);
  EXPECT_EQ(StageSize(Stage::kV, st.shape), (std::pair<int64_t, int64_t>{4, 2}));
  EXPECT_EQ(StageSize(Stage::kQ, st.shape), (std::pair<int64_t, int64_t>{4, 3}));
  // show prints V and the context with their own width.
  EXPECT_EQ(PrintStage(st, "V")->shape, (std::vector<int64_t>{2, 4, 4}));
  EXPECT_EQ(PrintStage(st, "context")->shape, (std::vector<int64_t>{2, 4, 4}));
  const std::string py = GeneratePyTorchCode(s);
  for (const char* line : {"v = torch.randn(2, 4, 4)\n", "d_v = 4  # the width of V",
                           "v = V.view(B, T, heads, d_v // heads).transpose(1, 2)\n",
                           ".contiguous().view(B, T, d_v)\n"})
    EXPECT_NE(py.find(line), std::string::npos) << line << "\n" << py;
}

TEST(HeadVariances, OneBatchAndHeadAsTorchComputesIt) {
  const Scenario s =
      ParseScenario(test::LoadGolden("qkv/torch-qkv-kqv-heads.json")["scenario"].dump());
  const Stages st = RunScenario(s);
  const StageVariances v = HeadVariances(st, 1, 1, VarianceKind::kTorchUnbiased);
  // Q of batch 1, head 1: columns 4..7 of a 5 x 8 matrix, 20 values.
  const Eigen::MatrixXd q = st.Q[1].middleCols(4, 4).cast<double>();
  const double mean = q.mean();
  const double var = (q.array() - mean).square().sum() / 19.0;
  EXPECT_EQ(static_cast<float>(v.var_q), static_cast<float>(var));
  EXPECT_TRUE(std::isnan(v.var_logits));  // causal: -inf above the diagonal
  EXPECT_THROW(HeadVariances(st, 2, 0, VarianceKind::kTorchUnbiased), std::out_of_range);
  const StageVariances whole = WholeVariances(st, VarianceKind::kNumpy);
  EXPECT_LT(whole.var_weights, StackVariance(st.weights, VarianceKind::kTorchUnbiased));
}

TEST(QkvScenario, ProgramsNeverMentionXForQkvAndUseNumpyForNumpy) {
  const Scenario s =
      ParseScenario(test::LoadGolden("qkv/numpy-masked-seed0.json")["scenario"].dump());
  const std::string py = GeneratePyTorchCode(s);
  EXPECT_NE(py.find("np.random.seed(0)\nq = np.random.randn(4, 8)\nk = np.random.randn(4, 8)\n"
                    "v = np.random.randn(4, 8)\n"),
            std::string::npos)
      << py;
  EXPECT_EQ(py.find("torch"), std::string::npos) << py;
  EXPECT_EQ(py.find("X ="), std::string::npos) << py;
}

}  // namespace
}  // namespace attnlab
