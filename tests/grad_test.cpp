// grad_test.cpp: the gradients of L = -sum_{b,h} log weights[b,h,I,J] (grad.h) against
// torch.autograd (golden/grad/*.json, made by tools/make_grad_goldens.py with Debian's PyTorch),
// the softmax Jacobian and its norm against their closed forms, and the refusals.
//
// Tolerance: float32 rounding in another order than PyTorch's (the engine's forward stages
// already differ from PyTorch's in the last bits, and the backward pass multiplies them):
// |got - want| <= 1e-6 + 2e-5 |want| + 4 float32 ulps of the stage's largest magnitude (the
// largest difference measured is 1 ulp + 4e-6 relative, on a Jacobian entry of 4e-6).
// Non-finite values must match exactly (nan with nan, inf with inf of the same sign).
#include "attnlab/lessons/grad.h"

#include <sys/wait.h>

#include <algorithm>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "gqa_util.h"
#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;
using test::JsonFloat;
using test::JsonMatrix;
using test::MatrixNear;

void ExpectNear(const std::string& what, const Matrix& got, const json& want) {
  EXPECT_TRUE(test::GradNear(what, got, want));
}

// B x T x d stacks, or (B*H) x T x T stacks stored as B x H x T x T.
void ExpectStack(const std::string& what, const MatrixStack& got, const json& want, int64_t H) {
  ASSERT_EQ(got.size(), want.size() * (H > 0 ? H : 1)) << what;
  for (size_t b = 0; b < want.size(); ++b)
    for (int64_t h = 0; h < std::max<int64_t>(H, 1); ++h)
      ExpectNear(what + " b" + std::to_string(b) + (H > 0 ? " h" + std::to_string(h) : ""),
                 got[b * std::max<int64_t>(H, 1) + h], H > 0 ? want[b][h] : want[b]);
}

class GradGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GradGolden, MatchesTorchAutograd) {
  const json golden = test::LoadGolden("grad/" + GetParam() + ".json");
  const Scenario s = ParseScenario(golden["scenario"].dump());
  const Stages st = RunScenario(s);
  const int64_t I = golden["loss_row"], J = golden["loss_key"];
  const Gradients g = LossGradients(s, st, I, J);
  const json& ex = golden["expected"];
  const double loss = JsonFloat(ex["loss"]);
  if (std::isfinite(loss))
    EXPECT_NEAR(g.loss, loss, 1e-5 + 1e-5 * std::fabs(loss));
  else
    EXPECT_EQ(g.loss, loss);
  const int64_t H = st.shape.H;
  ExpectStack("grad_logits", g.grad_logits, ex["grad_logits"], H);
  ExpectStack("grad_scores", g.grad_scores, ex["grad_scores"], H);
  ExpectStack("grad_Q", g.grad_Q, ex["grad_Q"], 0);
  ExpectStack("grad_K", g.grad_K, ex["grad_K"], 0);
  ASSERT_EQ(ex.contains("grad_W_query"), !st.X.empty());
  if (!st.X.empty()) {
    ExpectNear("grad_W_query", g.grad_W_query, ex["grad_W_query"]);
    ExpectNear("grad_W_key", g.grad_W_key, ex["grad_W_key"]);
  } else {
    EXPECT_EQ(g.grad_W_query.size(), 0);
  }
  ExpectNear("jacobian_row", g.jacobian_row, ex["jacobian_row"]);
}

INSTANTIATE_TEST_SUITE_P(Goldens, GradGolden, ::testing::ValuesIn(test::GoldenNames("grad")),
                         [](const auto& info) { return test::ParamName(info.param); });

// Raschka's journey, row "journey" against key "with": the softmax gradient is w - onehot(J),
// the Jacobian diag(w) - w w^T, and a row with a masked key has a zero column there.
TEST(Grad, SoftmaxGradientIsWeightsMinusOneHot) {
  const Scenario s = LoadPreset("raschka-journey");
  const Stages st = RunScenario(s);
  const Gradients g = LossGradients(s, st, 1, 3);
  RowVector expected = st.weights[0].row(1);
  expected[3] -= 1.0f;
  EXPECT_TRUE(MatrixNear("grad_logits row 1", g.grad_logits[0].row(1), expected, 1e-7, 1e-6));
  EXPECT_TRUE(MatrixNear("other rows", g.grad_logits[0].topRows(1), Matrix::Zero(1, 6), 0, 0));
  const float w11 = st.weights[0](1, 1), w12 = st.weights[0](1, 2);
  EXPECT_FLOAT_EQ(g.jacobian_row(1, 1), w11 - w11 * w11);
  EXPECT_FLOAT_EQ(g.jacobian_row(1, 2), -w11 * w12);
  EXPECT_NEAR(g.loss, -std::log(double(st.weights[0](1, 3))), 1e-12);
}

TEST(Grad, JacobianNormClosedFormEqualsFrobenius) {
  RowVector w(5);
  w << 0.1f, 0.4f, 0.0f, 0.3f, 0.2f;
  EXPECT_NEAR(SoftmaxJacobianNorm(w), SoftmaxJacobian(w).cast<double>().norm(), 1e-7);
  RowVector uniform = RowVector::Constant(4, 0.25f);
  EXPECT_NEAR(SoftmaxJacobianNorm(uniform), std::sqrt(3.0) / 4.0, 1e-7);
  RowVector one_hot = RowVector::Zero(4);
  one_hot[2] = 1.0f;
  EXPECT_EQ(SoftmaxJacobianNorm(one_hot), 0.0);
}

// The norm collapses as the row peaks: sqrt(n - 1) / n at multiplier 0 (uniform over the n
// allowed keys), falling towards 0 as the multiplier grows; it equals the norm of the softmax.
TEST(Grad, JacobianNormCurveCollapsesAsTheRowPeaks) {
  RowVector scores(4);
  scores << 1.0f, 3.0f, -2.0f, 0.5f;
  const std::vector<uint8_t> allowed = {1, 1, 0, 1};  // n = 3
  const std::vector<double> ms = {0.0, 0.5, 1.0, 4.0, 50.0};
  const std::vector<double> norms = JacobianNormCurve(scores, allowed, CurveRules{2.0}, ms);
  ASSERT_EQ(norms.size(), ms.size());
  EXPECT_NEAR(norms[0], std::sqrt(2.0) / 3.0, 1e-12);
  for (size_t i = 1; i < norms.size(); ++i) EXPECT_LT(norms[i], norms[i - 1]);
  EXPECT_LT(norms.back(), 1e-10);
  // m = 1, scale 0.5: softmax of (0.5, 1.5, masked, 0.25).
  const double e0 = std::exp(0.5), e1 = std::exp(1.5), e3 = std::exp(0.25), S = e0 + e1 + e3;
  RowVector w(4);
  w << float(e0 / S), float(e1 / S), 0.0f, float(e3 / S);
  EXPECT_NEAR(norms[2], SoftmaxJacobianNorm(w), 1e-7);
}

TEST(Grad, RefusesRowsKeysOutOfRangeAndMaskedKeys) {
  const Scenario s = LoadPreset("karpathy-head");  // T = 8, causal
  const Stages st = RunScenario(s);
  EXPECT_THROW(LossGradients(s, st, 8, 0), GradError);
  EXPECT_THROW(LossGradients(s, st, 0, -1), GradError);
  try {
    LossGradients(s, st, 2, 5);
    FAIL() << "a masked key was accepted";
  } catch (const GradError& e) {
    EXPECT_EQ(std::string(e.what()),
              "loss key 5 is masked for query row 2 (mask.kind causal): its weight is 0 and "
              "-log 0 is infinite; pick a key the row may see");
  }
  try {
    LossGradients(s, st, 9, 0);
  } catch (const GradError& e) {
    EXPECT_EQ(std::string(e.what()), "loss row 9 is outside 0..7 (the scenario has T = 8 tokens)");
  }
}

// grad_scores = grad_logits / sqrt(d_k) * multiplier (0 where masked): karpathy-head has
// d_k = 16, so with 1/sqrt(d_k) and multiplier 2 the factor is 2 / 4 = 0.5, exactly.
TEST(Grad, ScoresGradientIsLogitsGradientThroughTheScaling) {
  Scenario s = LoadPreset("karpathy-head");
  s.scaling.sqrt_dk = true;
  s.scaling.multiplier = 2.0;
  const Stages st = RunScenario(s);
  const Gradients g = LossGradients(s, st, 6, 1);
  for (size_t m = 0; m < g.grad_scores.size(); ++m) {
    const Matrix half = g.grad_logits[m] * 0.5f;
    EXPECT_TRUE(MatrixNear("grad_scores " + std::to_string(m), g.grad_scores[m], half, 0, 0));
    EXPECT_EQ(g.grad_scores[m](6, 7), 0.0f);  // masked: key 7 is after query 6
  }
  EXPECT_GT(StackNorm(g.grad_Q), 0.0);
}

// Grouped K/V heads: repeat_interleave's backward sums the copies, so dL/dK of K/V head g is
// the sum of dL/dK over the query heads that share it in the same scenario written as plain
// multi-head attention with repeated W_key columns; dL/dQ is the same.
TEST(Grad, GroupedKeyGradientSumsTheQueryHeadsThatShareIt) {
  const Scenario g = test::GroupedKvScenario();
  const Stages a = RunScenario(g);
  const Scenario r = test::RepeatedKvHeads(g, a);
  const Stages b = RunScenario(r);
  const Gradients ga = LossGradients(g, a, 2, 1), gb = LossGradients(r, b, 2, 1);
  ASSERT_EQ(ga.grad_K[0].cols(), 4);
  ASSERT_EQ(ga.grad_W_key.cols(), 4);
  EXPECT_TRUE(MatrixNear("grad_Q", ga.grad_Q[0], gb.grad_Q[0], 1e-6, 1e-5));
  for (int kv = 0; kv < 2; ++kv) {
    const Matrix sum = gb.grad_K[0].middleCols(4 * kv, 2) + gb.grad_K[0].middleCols(4 * kv + 2, 2);
    EXPECT_TRUE(MatrixNear("grad_K head " + std::to_string(kv), ga.grad_K[0].middleCols(2 * kv, 2),
                           sum, 1e-6, 1e-5));
  }
}

}  // namespace
}  // namespace attnlab
