// notebook_test.cpp: the numbers printed in the course notebooks, reproduced
// from the shipped presets. Printed to 4 decimals, so each value must lie within half a unit
// of the last printed digit: |ours - printed| <= 5e-5.
#include <numeric>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/model/stats.h"
#include "attnlab/python/torch_print.h"
#include "attnlab/random/rng.h"
#include "test_util.h"

namespace attnlab {
namespace {

constexpr double kPrinted = 5.0001e-5;

::testing::AssertionResult Printed(const std::string& what, const Matrix& got,
                                   std::initializer_list<std::initializer_list<float>> rows) {
  Matrix want(rows.size(), rows.begin()->size());
  int r = 0;
  for (const auto& row : rows) {
    int c = 0;
    for (float v : row) want(r, c++) = v;
    ++r;
  }
  return test::MatrixNear(what, got, want, kPrinted, 0.0);
}

double VarUnbiased(const MatrixStack& stack) {
  double sum = 0, n = 0;
  for (const Matrix& m : stack) sum += m.cast<double>().sum(), n += m.size();
  double ss = 0;
  for (const Matrix& m : stack) ss += (m.cast<double>().array() - sum / n).square().sum();
  return ss / (n - 1);
}

// raschka-ch03-self-attention.txt
TEST(Notebook, RaschkaJourneyScoresWeightsAndContext) {
  const Stages st = RunScenario(LoadPreset("raschka-journey"));
  EXPECT_TRUE(Printed("attn_scores_2", st.scores[0].row(1),
                      {{1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440}}));
  EXPECT_TRUE(Printed("attn_scores", st.scores[0],
                      {{0.9231, 1.3545, 1.3241, 0.7910, 0.4032, 1.1330},
                       {1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440},
                       {1.2544, 1.8284, 1.7877, 1.0654, 0.5508, 1.5238},
                       {0.6973, 1.0167, 0.9941, 0.5925, 0.3061, 0.8475},
                       {0.6114, 0.8819, 0.8626, 0.5121, 0.2707, 0.7307},
                       {0.8995, 1.3165, 1.2871, 0.7682, 0.3937, 1.0996}}));
  EXPECT_TRUE(Printed("attn_weights_2", st.weights[0].row(1),
                      {{0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820}}));
  EXPECT_TRUE(Printed("SelfAttention_v1", st.context[0],
                      {{0.2996, 0.8053},
                       {0.3061, 0.8210},
                       {0.3058, 0.8203},
                       {0.2948, 0.7939},
                       {0.2927, 0.7891},
                       {0.2990, 0.8040}}));
}

TEST(Notebook, RaschkaSelfAttentionV2WithLinear) {
  Scenario s = LoadPreset("raschka-journey");
  s.projections.init = ProjectionInit::kLinear;  // nn.Linear(d_in, d_out, bias=False) x 3
  const Stages st = RunScenario(s);
  EXPECT_TRUE(Printed("SelfAttention_v2", st.context[0],
                      {{-0.5337, -0.1051},
                       {-0.5323, -0.1080},
                       {-0.5323, -0.1079},
                       {-0.5297, -0.1076},
                       {-0.5311, -0.1066},
                       {-0.5299, -0.1081}}));
}

// dog-attacks-cat-self-attention.txt
TEST(Notebook, DogAttacksCatTokensAndEmbeddings) {
  const Stages st = RunScenario(LoadPreset("dog-attacks-cat"));
  EXPECT_EQ(st.tokens, (std::vector<std::string>{"The", " ", "dog", " ", "attacks", " ", "the", " ",
                                                 "wild", " ", "cat"}));
  EXPECT_EQ(st.token_ids, (std::vector<int>{1, 0, 4, 0, 2, 0, 5, 0, 6, 0, 3}));
  EXPECT_EQ(st.vocab.size(), 9u);  // 7 words and spaces + 2 special tokens
  EXPECT_TRUE(Printed("embeddings", st.X[0],
                      {{1.2221, 1.0395, 0.9608},
                       {-0.5300, -1.3035, 0.4438},
                       {0.6370, 1.3158, -0.4287},
                       {-0.5300, -1.3035, 0.4438},
                       {0.4214, 0.7452, -1.8389},
                       {-0.5300, -1.3035, 0.4438},
                       {1.9435, -0.8080, -0.8735},
                       {-0.5300, -1.3035, 0.4438},
                       {0.9367, -0.3077, -1.4196},
                       {-0.5300, -1.3035, 0.4438},
                       {-1.2497, -0.2485, -1.0530}}));
}

TEST(Notebook, DogAttacksCatTrainableWeights) {
  const Stages st = RunScenario(LoadPreset("dog-attacks-cat"));
  EXPECT_TRUE(Printed("W_query", st.W[0], {{0.8398, 0.8042}, {0.1213, 0.5309}, {0.6646, 0.4077}}));
  EXPECT_TRUE(Printed("W_key", st.W[1], {{0.0888, 0.2429}, {0.7053, 0.6216}, {0.9188, 0.0185}}));
  EXPECT_TRUE(Printed("W_value", st.W[2], {{0.8741, 0.0560}, {0.9659, 0.0073}, {0.3628, 0.4197}}));
  EXPECT_TRUE(Printed("query_1", st.Q[0].row(1), {{-0.3083, -0.9373}}));
  EXPECT_TRUE(Printed("attn_scores_1_all", st.scores[0].row(1),
                      {{-1.4323, 1.0447, -1.0864, 1.0447, -0.1510, 1.0447, 0.4134, 1.0447, 0.4340,
                        1.0447, 0.8340}}));
  EXPECT_TRUE(Printed("scaled_attn_scores_1_all", st.logits[0].row(1),
                      {{-1.0128, 0.7387, -0.7682, 0.7387, -0.1067, 0.7387, 0.2923, 0.7387, 0.3069,
                        0.7387, 0.5897}}));
  EXPECT_TRUE(Printed(
      "attn_weights_1_all", st.weights[0].row(1),
      {{0.0218, 0.1254, 0.0278, 0.1254, 0.0538, 0.1254, 0.0802, 0.1254, 0.0814, 0.1254, 0.1080}}));
  EXPECT_TRUE(Printed("context_vectors_P", st.context[0],
                      {{2.1652, 0.33566},
                       {-0.99352, -0.062155},
                       {0.81129, 0.00034023},
                       {-0.99352, -0.062155},
                       {-0.63151, -0.18909},
                       {-0.99352, -0.062155},
                       {1.1980, 0.13611},
                       {-0.99352, -0.062155},
                       {-0.48231, -0.11911},
                       {-0.99352, -0.062155},
                       {-1.0848, -0.12670}}));
}

TEST(Notebook, DogAttacksCatLinearVersion) {
  Scenario s = LoadPreset("dog-attacks-cat");
  s.projections.init = ProjectionInit::kLinear;
  const Stages st = RunScenario(s);
  // self_attention_L.W_key.weight is W_key transposed.
  EXPECT_TRUE(Printed("W_key.weight", st.W[1].transpose(),
                      {{-0.4748, -0.2969, 0.2371}, {0.1405, 0.4836, -0.5560}}));
  EXPECT_TRUE(Printed("self_attention_L", st.context[0],
                      {{0.1785, 0.1088},
                       {0.1216, -0.1495},
                       {0.1985, 0.1906},
                       {0.1216, -0.1495},
                       {0.2426, 0.2571},
                       {0.1216, -0.1495},
                       {0.2941, 0.2379},
                       {0.1216, -0.1495},
                       {0.2602, 0.2216},
                       {0.1216, -0.1495},
                       {0.1258, -0.0132}}));
}

TEST(Notebook, DogAttacksCatSimplifiedAttention) {
  // Simplified self-attention: no projections (identity), no scaling.
  Scenario s = LoadPreset("dog-attacks-cat");
  s.projections.init = ProjectionInit::kIdentity;
  s.scaling.sqrt_dk = false;
  const Stages st = RunScenario(s);
  EXPECT_TRUE(Printed("attention_scores[0]", st.scores[0].row(0),
                      {{3.4975, -1.5764, 1.7344, -1.5764, -0.4773, -1.5764, 0.6959, -1.5764,
                        -0.5391, -1.5764, -2.7973}}));
  EXPECT_TRUE(Printed(
      "attention_weights[0]", st.weights[0].row(0),
      {{0.7682, 0.0048, 0.1318, 0.0048, 0.0144, 0.0048, 0.0466, 0.0048, 0.0136, 0.0048, 0.0014}}));
  EXPECT_TRUE(Printed("context_vectors", st.context[0],
                      {{1.1176, 0.9091, 0.6043},
                       {-0.4914, -1.2268, 0.3463},
                       {0.7425, 0.7750, -0.6312},
                       {-0.4914, -1.2268, 0.3463},
                       {0.5625, 0.4664, -1.5314},
                       {-0.4914, -1.2268, 0.3463},
                       {1.7167, -0.6763, -0.9275},
                       {-0.4914, -1.2268, 0.3463},
                       {1.1076, -0.2321, -1.1786},
                       {-0.4914, -1.2268, 0.3463},
                       {-0.6744, -0.4126, -0.7193}}));
  s.normalization = Normalization::kSum;  // "normalize so they sum to 1": atscs0 / sum(atscs0)
  const Stages sum = RunScenario(s);
  EXPECT_TRUE(Printed("atwts0", sum.weights[0].row(0),
                      {{-0.6064, 0.2733, -0.3007, 0.2733, 0.0828, 0.2733, -0.1207, 0.2733, 0.0935,
                        0.2733, 0.4850}}));
}

// karpathy-mathematical-trick.txt and self-attention-from-scratch-v1-v4.txt
TEST(Notebook, KarpathyTrickIsTheRunningMean) {
  const Stages st = RunScenario(LoadPreset("karpathy-trick"));
  ASSERT_EQ(st.X.size(), 4u);
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 8; ++t) {
      // version 1: xbow[b, t] = mean of x[b, :t+1]
      const RowVector mean = st.X[b].topRows(t + 1).colwise().mean();
      EXPECT_TRUE(test::MatrixNear("xbow", st.context[b].row(t), mean, 1e-6, 1e-6));
    }
  // self-attention-from-scratch V3 prints wei: row t is 1/(t+1) on the first t+1 entries.
  EXPECT_TRUE(Printed("wei", st.weights[0].topLeftCorner(3, 3),
                      {{1.0, 0, 0}, {0.5, 0.5, 0}, {0.3333, 0.3333, 0.3333}}));
  EXPECT_NEAR(st.weights[0](7, 0), 0.1250, kPrinted);
  EXPECT_NEAR(st.weights[0](6, 6), 0.1429, kPrinted);
  EXPECT_NEAR(VarUnbiased({st.weights[0]}), 0.0273, kPrinted);  // wei.var()
}

TEST(Notebook, KarpathyHeadKeyVariance) {
  const Stages st = RunScenario(LoadPreset("karpathy-head"));
  EXPECT_EQ(st.context.size(), 4u);  // out.shape == (4, 8, 16)
  EXPECT_EQ(st.context[0].rows(), 8);
  EXPECT_EQ(st.context[0].cols(), 16);
  EXPECT_NEAR(st.var_K, 0.3164, kPrinted);  // k.var()
}

TEST(Notebook, ScalingDemoIsAlmostOneHot) {
  const Scenario s = LoadPreset("scaling-demo");
  EXPECT_EQ(s.input.source, InputSource::kQkv);  // the notebook's q and k, no X or W
  const Stages st = RunScenario(s);
  EXPECT_TRUE(st.X.empty());
  EXPECT_NEAR(VarUnbiased(st.scores), 15.6977, kPrinted);  // wei.var()
  EXPECT_NEAR(st.var_K, 1.0069, kPrinted);                 // k.var()
  EXPECT_NEAR(VarUnbiased(st.Q), 0.9302, kPrinted);        // q.var()
  EXPECT_TRUE(Printed("softmax(wei)[0][0]", st.weights[0].row(0),
                      {{0.0000, 0.8555, 0.1444, 0.0000, 0.0000, 0.0000, 0.0000, 0.0001}}));
  // The same prints as the dump's stats (torch's .var()): k.var(), q.var(), wei.var().
  const StageVariances v = WholeVariances(st, VarianceKindOf(s.input.generator));
  EXPECT_NEAR(v.var_k, 1.0069, kPrinted);
  EXPECT_NEAR(v.var_q, 0.9302, kPrinted);
  EXPECT_NEAR(v.var_scores, 15.6977, kPrinted);
  EXPECT_NEAR(v.var_logits, 15.6977, kPrinted);  // unscaled: the logits are the scores
}

// self-attention-from-scratch's wei2 = q2 @ k2.T * head_size**-0.5 (the draws after q and k).
TEST(Notebook, ScalingDemoScaledStaysDiffuse) {
  const Scenario s = LoadPreset("scaling-demo-scaled");
  const Stages st = RunScenario(s);
  const StageVariances v = WholeVariances(st, VarianceKindOf(s.input.generator));
  EXPECT_NEAR(v.var_k, 0.9967, kPrinted);       // k2.var()
  EXPECT_NEAR(v.var_q, 0.8952, kPrinted);       // q2.var()
  EXPECT_NEAR(v.var_logits, 1.0194, kPrinted);  // wei2.var()
  EXPECT_TRUE(Printed("softmax(wei2)[0][0]", st.weights[0].row(0),
                      {{0.2348, 0.0406, 0.1533, 0.0552, 0.0287, 0.3193, 0.0635, 0.1047}}));
}

// numpy-scaled-masked-attention.txt ran unseeded: the preset seeds np.random.seed(0), and its
// numbers are those of the notebook's own cells run after that seed by real NumPy in float64
// (golden/notebooks/numpy-masked.json): its 0/-inf mask added to the scaled scores and its
// softmax without the max subtracted give the app's causal mask and stable softmax. The preset
// is float64, as the notebook: the float stages are its values rounded to float32, st.f64 the
// double ones.
TEST(Notebook, NumpyMaskedIsTheNotebookAfterSeedZero) {
  const nlohmann::json nb = test::LoadGolden("notebooks/numpy-masked.json")["cells"];
  const Scenario s = LoadPreset("numpy-masked");
  EXPECT_EQ(s.input.seed, nb["seed"].get<uint64_t>());
  const Stages st = RunScenario(s);
  auto f64 = [](const nlohmann::json& j) {
    Eigen::MatrixXd m(j.size(), j[0].size());
    for (size_t r = 0; r < j.size(); ++r)
      for (size_t c = 0; c < j[r].size(); ++c) m(r, c) = j[r][c].get<double>();
    return m;
  };
  // The draws: NumPy's float64 values rounded to float32, exactly.
  EXPECT_TRUE(test::MatrixNear("q", st.Q[0], f64(nb["q"]).cast<float>(), 0, 0));
  EXPECT_TRUE(test::MatrixNear("k", st.K[0], f64(nb["k"]).cast<float>(), 0, 0));
  EXPECT_TRUE(test::MatrixNear("v", st.V[0], f64(nb["v"]).cast<float>(), 0, 0));
  EXPECT_TRUE(test::MatrixNear("np.matmul(q, k.T)", st.scores[0], f64(nb["scores"]).cast<float>(),
                               1e-5, 1e-5));
  EXPECT_TRUE(
      test::MatrixNear("attention", st.weights[0], f64(nb["attention"]).cast<float>(), 1e-6, 1e-5));
  EXPECT_TRUE(test::MatrixNear("new_v", st.context[0], f64(nb["new_v"]).cast<float>(), 1e-5, 1e-5));
  const Eigen::MatrixXd scaled = f64(nb["scaled"]);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (j > i) {
        EXPECT_EQ(st.logits[0](i, j), -INFINITY);  // scaled + mask
      } else {
        EXPECT_NEAR(st.logits[0](i, j), scaled(i, j), 1e-5) << i << "," << j;
      }
    }
  // q.var(), k.var(), np.matmul(q, k.T).var(): NumPy's ddof = 0 in float64, every digit the
  // notebook prints (q and k are NumPy's exact draws; the scores np.matmul's own sums).
  const StageVariances v = WholeVariances(st, VarianceKindOf(s.input.generator));
  EXPECT_EQ(v.var_q, nb["q.var()"].get<double>());
  EXPECT_EQ(v.var_k, nb["k.var()"].get<double>());
  EXPECT_EQ(v.var_scores, nb["np.matmul(q, k.T).var()"].get<double>());
  ASSERT_TRUE(st.f64);
  EXPECT_TRUE(st.f64->scores[0] == f64(nb["scores"])) << st.f64->scores[0] - f64(nb["scores"]);
  EXPECT_NEAR(st.f64->context[0](3, 7), nb["new_v"][3][7].get<double>(), 1e-14);
  EXPECT_TRUE(std::isnan(v.var_logits));  // the masked logits hold -inf
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// karpathy-mathematical-trick.txt, cell 12: after torch.manual_seed(42), b = torch.randint(0, 10,
// (3, 2)).float(); a = the row-normalised tril; c = a @ b. The karpathy-a-at-b preset writes b
// as its input (the generator's Randint gives it), a is its weights and c its context, printed
// exactly as the notebook prints a, b and c.
TEST(Notebook, KarpathyAAtBPrintsTheNotebooksABAndC) {
  TorchGenerator g(42);
  const std::vector<int64_t> b = g.Randint(0, 10, 6);
  const Scenario s = LoadPreset("karpathy-a-at-b");
  ASSERT_EQ(s.input.values.size(), 1u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(s.input.values[0](i / 2, i % 2), float(b[i])) << i;
  const Stages st = RunScenario(s);
  EXPECT_EQ(PrintStage(st, "X")->text, "tensor([[2., 7.],\n        [6., 4.],\n        [6., 5.]])");
  EXPECT_EQ(PrintStage(st, "weights")->text,
            "tensor([[1.0000, 0.0000, 0.0000],\n        [0.5000, 0.5000, 0.0000],\n"
            "        [0.3333, 0.3333, 0.3333]])");
  EXPECT_EQ(PrintStage(st, "context")->text,
            "tensor([[2.0000, 7.0000],\n        [4.0000, 5.5000],\n        [4.6667, 5.3333]])");
}

}  // namespace
}  // namespace attnlab
