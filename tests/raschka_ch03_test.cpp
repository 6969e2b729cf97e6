// raschka_ch03_test.cpp: every tensor printed in sections 3.3-3.6 of Raschka's chapter 3
// notebook (LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb), reproduced by the
// raschka-* presets. The values below are copied from the notebook's outputs; each comment
// names the cell by its execution count ("[13]"). The notebook prints 4 decimals, so each
// engine value must round to the printed one: |ours - printed| <= 5e-5.
#include <cmath>
#include <limits>

#include "attnlab/base/cpu_level.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

constexpr double kPrinted = 5.0001e-5;
const float kInf = std::numeric_limits<float>::infinity();

using Rows = std::initializer_list<std::initializer_list<float>>;

Matrix FromRows(Rows rows) {
  Matrix m(rows.size(), rows.begin()->size());
  int r = 0;
  for (const auto& row : rows) {
    int c = 0;
    for (float v : row) m(r, c++) = v;
    ++r;
  }
  return m;
}

::testing::AssertionResult Printed(const std::string& what, const Matrix& got, Rows rows) {
  return test::MatrixNear(what, got, FromRows(rows), kPrinted, 0.0);
}

/// The book's `masked` (cell [29]): the scores with -inf where the mask hides a key, before
/// any scaling. Made of the engine's scores and the cells its logits mask.
Matrix ScoresMasked(const Stages& st, size_t m) {
  Matrix out = st.scores[m];
  for (Eigen::Index i = 0; i < out.rows(); ++i)
    for (Eigen::Index j = 0; j < out.cols(); ++j)
      if (st.logits[m](i, j) == -kInf) out(i, j) = -kInf;
  return out;
}

// 3.3.1 and 3.3.2: attention without trainable weights (Q = K = V = inputs, no 1/sqrt(d_k)).
TEST(RaschkaCh03, Section33SimpleAttention) {
  const Stages st = RunScenario(LoadPreset("raschka-3.3-simple"));
  // [3] attn_scores_2 (the query x(2) is the app's row 1), [4] its first dot product
  EXPECT_TRUE(Printed("[3] attn_scores_2", st.scores[0].row(1),
                      {{0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865}}));
  EXPECT_NEAR(st.scores[0](1, 0), 0.9544, kPrinted);
  // [6], [7] softmax of attn_scores_2
  EXPECT_TRUE(Printed("[7] attn_weights_2", st.weights[0].row(1),
                      {{0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581}}));
  // [8] and [14] context_vec_2, z(2)
  EXPECT_TRUE(Printed("[8] context_vec_2", st.context[0].row(1), {{0.4419, 0.6515, 0.5683}}));
  // [9], [10] attn_scores = inputs @ inputs.T
  EXPECT_TRUE(Printed("[10] attn_scores", st.scores[0],
                      {{0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310},
                       {0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865},
                       {0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605},
                       {0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565},
                       {0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935},
                       {0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450}}));
  // [11] attn_weights = torch.softmax(attn_scores, dim=-1)
  EXPECT_TRUE(Printed("[11] attn_weights", st.weights[0],
                      {{0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452},
                       {0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581},
                       {0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565},
                       {0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720},
                       {0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295},
                       {0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896}}));
  // [13] all_context_vecs = attn_weights @ inputs
  EXPECT_TRUE(Printed("[13] all_context_vecs", st.context[0],
                      {{0.4421, 0.5931, 0.5790},
                       {0.4419, 0.6515, 0.5683},
                       {0.4431, 0.6496, 0.5671},
                       {0.4304, 0.6298, 0.5510},
                       {0.4671, 0.5910, 0.5266},
                       {0.4177, 0.6503, 0.5645}}));
}

// 3.3.1 [5]: attn_scores_2 / attn_scores_2.sum(), the same preset normalised by the row sum.
TEST(RaschkaCh03, Section33NormalisedBySum) {
  Scenario s = LoadPreset("raschka-3.3-simple");
  s.normalization = Normalization::kSum;
  const Stages st = RunScenario(s);
  EXPECT_TRUE(Printed("[5] attn_weights_2_tmp", st.weights[0].row(1),
                      {{0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656}}));
}

// 3.4.1: the step-by-step cells use SelfAttention_v1's weights (torch.rand, seed 123), which
// raschka-journey reproduces.
TEST(RaschkaCh03, Section341StepByStep) {
  const Stages st = RunScenario(LoadPreset("raschka-journey"));
  EXPECT_TRUE(Printed("[17] query_2", st.Q[0].row(1), {{0.4306, 1.4551}}));
  EXPECT_NEAR(st.scores[0](1, 1), 1.8524, kPrinted);  // [19] attn_score_22
  EXPECT_TRUE(Printed("[20] attn_scores_2", st.scores[0].row(1),
                      {{1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440}}));
  EXPECT_TRUE(Printed("[21] attn_weights_2", st.weights[0].row(1),
                      {{0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820}}));
  EXPECT_TRUE(Printed("[22] context_vec_2", st.context[0].row(1), {{0.3061, 0.8210}}));
}

// 3.4.2 [24]: SelfAttention_v2, nn.Linear after torch.manual_seed(789).
TEST(RaschkaCh03, Section342SelfAttentionV2) {
  const Stages st = RunScenario(LoadPreset("raschka-3.4-v2"));
  EXPECT_TRUE(Printed("[24] sa_v2(inputs)", st.context[0],
                      {{-0.0739, 0.0713},
                       {-0.0748, 0.0703},
                       {-0.0749, 0.0702},
                       {-0.0760, 0.0685},
                       {-0.0763, 0.0679},
                       {-0.0754, 0.0693}}));
  // [25] the same weights, which section 3.5.1 starts from (no mask yet)
  EXPECT_TRUE(Printed("[25] attn_weights", st.weights[0],
                      {{0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510},
                       {0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477},
                       {0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480},
                       {0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564},
                       {0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585},
                       {0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529}}));
}

// 3.3.1, before softmax: attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum() ([5]).
TEST(RaschkaCh03, Section331WeightsNormalisedByTheirSum) {
  const Stages st = RunScenario(LoadPreset("raschka-3.3-sum"));
  EXPECT_TRUE(Printed("[3] attn_scores_2", st.scores[0].row(1),
                      {{0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865}}));
  // [5] "Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])"
  EXPECT_TRUE(Printed("[5] attn_weights_2_tmp", st.weights[0].row(1),
                      {{0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656}}));
  // "Sum: tensor(1.0000)"
  EXPECT_NEAR(st.weights[0].row(1).sum(), 1.0, kPrinted);
}

// 3.5.1's [29] masked as a stage of its own: the logits of raschka-3.5-masked-scores (the
// scores masked with -inf, scaling off).
TEST(RaschkaCh03, Section351MaskedScoresBeforeScaling) {
  const Stages st = RunScenario(LoadPreset("raschka-3.5-masked-scores"));
  EXPECT_TRUE(Printed("[29] masked", st.logits[0],
                      {{0.2899, -kInf, -kInf, -kInf, -kInf, -kInf},
                       {0.4656, 0.1723, -kInf, -kInf, -kInf, -kInf},
                       {0.4594, 0.1703, 0.1731, -kInf, -kInf, -kInf},
                       {0.2642, 0.1024, 0.1036, 0.0186, -kInf, -kInf},
                       {0.2183, 0.0874, 0.0882, 0.0177, 0.0786, -kInf},
                       {0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078}}));
}

// 3.5.1: the causal mask on SelfAttention_v2's scores.
TEST(RaschkaCh03, Section351CausalMask) {
  const Stages st = RunScenario(LoadPreset("raschka-3.5-causal"));
  // [26] mask_simple = torch.tril(torch.ones(6, 6))
  EXPECT_TRUE(Printed("[26] mask_simple", st.mask.cast<float>(),
                      {{1, 0, 0, 0, 0, 0},
                       {1, 1, 0, 0, 0, 0},
                       {1, 1, 1, 0, 0, 0},
                       {1, 1, 1, 1, 0, 0},
                       {1, 1, 1, 1, 1, 0},
                       {1, 1, 1, 1, 1, 1}}));
  // [29] masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
  EXPECT_TRUE(Printed("[29] masked", ScoresMasked(st, 0),
                      {{0.2899, -kInf, -kInf, -kInf, -kInf, -kInf},
                       {0.4656, 0.1723, -kInf, -kInf, -kInf, -kInf},
                       {0.4594, 0.1703, 0.1731, -kInf, -kInf, -kInf},
                       {0.2642, 0.1024, 0.1036, 0.0186, -kInf, -kInf},
                       {0.2183, 0.0874, 0.0882, 0.0177, 0.0786, -kInf},
                       {0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078}}));
  // [30] attn_weights = torch.softmax(masked / keys.shape[-1]**0.5, dim=-1); the renormalised
  // masked_simple_norm of [28] prints the same digits.
  const Rows causal = {{1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000},
                       {0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000},
                       {0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000},
                       {0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000},
                       {0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000},
                       {0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529}};
  EXPECT_TRUE(Printed("[30] attn_weights", st.weights[0], causal));
  // [28] masked_simple_norm = masked_simple / row_sums: the first way, softmax then mask, is
  // its own preset (normalization softmax_then_mask), its logits unmasked.
  const Stages then_mask = RunScenario(LoadPreset("raschka-3.5-masked-simple"));
  EXPECT_TRUE(Printed("[28] masked_simple_norm", then_mask.weights[0], causal));
  EXPECT_TRUE(std::isfinite(then_mask.logits[0](0, 5)));
  // [27] masked_simple = attn_weights * mask_simple: the unmasked weights of [25] where the
  // mask allows a key, 0 elsewhere.
  const Stages v2 = RunScenario(LoadPreset("raschka-3.4-v2"));
  const Matrix masked_simple = v2.weights[0].cwiseProduct(st.mask.cast<float>());
  EXPECT_TRUE(Printed("[27] masked_simple", masked_simple,
                      {{0.1921, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000},
                       {0.2041, 0.1659, 0.0000, 0.0000, 0.0000, 0.0000},
                       {0.2036, 0.1659, 0.1662, 0.0000, 0.0000, 0.0000},
                       {0.1869, 0.1667, 0.1668, 0.1571, 0.0000, 0.0000},
                       {0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.0000},
                       {0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529}}));
}

// 3.5.2: dropout 0.5 on the causal weights after torch.manual_seed(123).
TEST(RaschkaCh03, Section352Dropout) {
  const Stages st = RunScenario(LoadPreset("raschka-3.5-dropout"));
  // [32] dropout(attn_weights)
  EXPECT_TRUE(Printed("[32] dropout(attn_weights)", st.weights_dropped[0],
                      {{2.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000},
                       {0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000},
                       {0.7599, 0.6194, 0.6206, 0.0000, 0.0000, 0.0000},
                       {0.0000, 0.4921, 0.4925, 0.0000, 0.0000, 0.0000},
                       {0.0000, 0.3966, 0.0000, 0.3775, 0.0000, 0.0000},
                       {0.0000, 0.3327, 0.3331, 0.3084, 0.3331, 0.0000}}));
  // [31] dropout(torch.ones(6, 6)) after the same seed: the mask itself (0 or 1 / (1 - p) = 2).
  // Every allowed weight is positive, so below the diagonal dropped / weight shows it exactly.
  const Matrix ones_dropped = FromRows({{2., 2., 0., 2., 2., 0.},
                                        {0., 0., 0., 2., 0., 2.},
                                        {2., 2., 2., 2., 0., 2.},
                                        {0., 2., 2., 0., 0., 2.},
                                        {0., 2., 0., 2., 0., 2.},
                                        {0., 2., 2., 2., 2., 0.}});
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j <= i; ++j)
      EXPECT_EQ(st.weights_dropped[0](i, j), ones_dropped(i, j) * st.weights[0](i, j))
          << "[31] row " << i << ", key " << j;
}

// 3.5.3 [34]: CausalAttention(d_in, d_out, 6, 0.0) on the batch of two, seed 123.
TEST(RaschkaCh03, Section353CausalAttentionBatch) {
  const Stages st = RunScenario(LoadPreset("raschka-3.5-causal-batch"));
  ASSERT_EQ(st.context.size(), 2u);  // context_vecs.shape: torch.Size([2, 6, 2])
  for (size_t b = 0; b < 2; ++b)
    EXPECT_TRUE(Printed("[34] context_vecs[" + std::to_string(b) + "]", st.context[b],
                        {{-0.4519, 0.2216},
                         {-0.5874, 0.0058},
                         {-0.6300, -0.0632},
                         {-0.5675, -0.0843},
                         {-0.5526, -0.0981},
                         {-0.5299, -0.1081}}));
}

// 3.6.1 [35]: MultiHeadAttentionWrapper(d_in, 2, 6, 0.0, num_heads=2), seed 123: two
// CausalAttention modules, each drawing its own weights (projections.per_head).
TEST(RaschkaCh03, Section361MultiHeadAttentionWrapper) {
  const Stages st = RunScenario(LoadPreset("raschka-3.6-wrapper"));
  ASSERT_EQ(st.context.size(), 2u);  // context_vecs.shape: torch.Size([2, 6, 4])
  for (size_t b = 0; b < 2; ++b)
    EXPECT_TRUE(Printed("[35] context_vecs[" + std::to_string(b) + "]", st.context[b],
                        {{-0.4519, 0.2216, 0.4772, 0.1063},
                         {-0.5874, 0.0058, 0.5891, 0.3257},
                         {-0.6300, -0.0632, 0.6202, 0.3860},
                         {-0.5675, -0.0843, 0.5478, 0.3589},
                         {-0.5526, -0.0981, 0.5321, 0.3428},
                         {-0.5299, -0.1081, 0.5077, 0.3493}}));
  // Head 0 is the CausalAttention of [34] (same seed, drawn first): its columns are [34]'s,
  // bit for bit at the baseline level; with FMA (cpu_level.h) Eigen's small products round
  // the last bit by the operands' layout (head 0's columns of a wider V, or all of V).
  const Stages one = RunScenario(LoadPreset("raschka-3.5-causal-batch"));
  // Sums of terms near 0.5 that cancel: a few ulp of the terms, not of the (small) result.
  const double atol = ActiveCpuLevel() == CpuLevel::kBaseline ? 0.0 : 4 * 1.1920929e-7;
  EXPECT_TRUE(test::MatrixNear("head 0", st.context[0].leftCols(2), one.context[0], atol, 0.0));
  // Without per_head the same seed draws other weights: the wrapper's numbers need the rule.
  Scenario split = LoadPreset("raschka-3.6-wrapper");
  split.projections.per_head = false;
  EXPECT_FALSE(test::MatrixNear("split", RunScenario(split).context[0], st.context[0], 1e-3, 0));
}

// 3.6.2 [36]: MultiHeadAttention(d_in, 2, 6, 0.0, num_heads=2) with out_proj, seed 123.
TEST(RaschkaCh03, Section362MultiHeadAttention) {
  const Stages st = RunScenario(LoadPreset("raschka-3.6-mha"));
  ASSERT_EQ(st.context.size(), 2u);  // torch.Size([2, 6, 2])
  for (size_t b = 0; b < 2; ++b)
    EXPECT_TRUE(Printed("[36] context_vecs[" + std::to_string(b) + "]", st.context[b],
                        {{0.3190, 0.4858},
                         {0.2943, 0.3897},
                         {0.2856, 0.3593},
                         {0.2693, 0.3873},
                         {0.2639, 0.3928},
                         {0.2575, 0.4028}}));
}

// 3.6.2 [37], [38]: a @ a.transpose(2, 3) for a (1, 2, 3, 4) tensor: given Q = K = V with the
// two heads side by side (head h's columns 4h .. 4h + 3), the scores of each head.
TEST(RaschkaCh03, Section362ScoresPerHead) {
  Scenario s = ParseScenario(R"({"format": "attention-lab/scenario@1",
    "input": {"source": "qkv", "heads": 2,
      "Q": [[0.2745, 0.6584, 0.2775, 0.8573, 0.0772, 0.3565, 0.1479, 0.5331],
            [0.8993, 0.0390, 0.9268, 0.7388, 0.4066, 0.2318, 0.4545, 0.9737],
            [0.7179, 0.7058, 0.9156, 0.4340, 0.4606, 0.5159, 0.4220, 0.5786]],
      "K": [[0.2745, 0.6584, 0.2775, 0.8573, 0.0772, 0.3565, 0.1479, 0.5331],
            [0.8993, 0.0390, 0.9268, 0.7388, 0.4066, 0.2318, 0.4545, 0.9737],
            [0.7179, 0.7058, 0.9156, 0.4340, 0.4606, 0.5159, 0.4220, 0.5786]],
      "V": [[1, 0], [0, 1], [1, 1]]}})");
  const Stages st = RunScenario(s);
  ASSERT_EQ(st.scores.size(), 2u);
  EXPECT_TRUE(
      Printed("[38] First head", st.scores[0],
              {{1.3208, 1.1631, 1.2879}, {1.1631, 2.2150, 1.8424}, {1.2879, 1.8424, 2.0402}}));
  EXPECT_TRUE(
      Printed("[38] Second head", st.scores[1],
              {{0.4391, 0.7003, 0.5903}, {0.7003, 1.3737, 1.0620}, {0.5903, 1.0620, 0.9912}}));
}

}  // namespace
}  // namespace attnlab
