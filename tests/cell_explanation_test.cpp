// cell_explanation_test.cpp: the tooltip's text (cell_explanation.h) with a small scenario's
// real numbers: X = [[1, 0], [0, 1], [1, 1]] (tokens a, b, c), identity projections, so
// Q = K = V = X and scores = X X^T = [[1, 0, 1], [0, 1, 1], [1, 1, 2]]; d_k = 2.
#include "attnlab/figures/cell_explanation.h"

#include <gtest/gtest.h>

#include "attnlab/base/text.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"

namespace attnlab {
namespace {

Scenario Small(const std::string& rest) {
  return ParseScenario(R"({"format": "attention-lab/scenario@1",
    "input": {"source": "matrix", "values": [[1, 0], [0, 1], [1, 1]], "tokens": ["a", "b", "c"]},
    "projections": {"init": "identity"})" +
                       rest + "}");
}

const char* const kTokens[] = {"a", "b", "c"};

// Cell (i, j) of `stage`, labelled as the window labels it.
CellExplanation Explain(const Scenario& s, Stage stage, int64_t i, int64_t j) {
  const Stages st = RunScenario(s);
  const MatrixStack* m = stage == Stage::kWeights   ? &st.weights
                         : stage == Stage::kLogits  ? &st.logits
                         : stage == Stage::kQ       ? &st.Q
                         : stage == Stage::kContext ? &st.context
                                                    : &st.weights_dropped;
  const double value = stage == Stage::kMask ? st.mask(i, j) : (*m)[0](i, j);
  const std::string col = StageIsTokenByToken(stage) ? kTokens[j] : "d" + std::to_string(j);
  return ExplainCell(st, s, CellRef{stage, 0, 0, i, j, value, kTokens[i], col});
}

std::vector<std::string> Texts(const CellExplanation& e) {
  std::vector<std::string> out;
  for (const ExplanationLine& l : e.lines) out.push_back((l.note ? "(note) " : "") + l.text);
  return out;
}

TEST(ExplainCell, SoftmaxWeightShowsScoreLogitAndNormaliser) {
  // Row 2's logits: 1/√2, 1/√2, 2/√2; max 1.4142135, Σ = 2 exp(-1/√2) + 1 = 1.98614.
  const CellExplanation e = Explain(Small(""), Stage::kWeights, 2, 0);
  EXPECT_EQ(e.heading, "query 2 (\"c\")  \u2192  key 0 (\"a\")");
  EXPECT_EQ(Texts(e), (std::vector<std::string>{
                          "score = q_2 \u00B7 k_0 = 1",
                          "(note) dot product over d_k = 2 dims (columns 0..1 of Q and K)",
                          "logit = 1 / \u221A2 = 0.70710677", "weight = exp(z - max) / \u03A3",
                          "       = exp(0.70710677 - 1.4142135) / 1.9861374 = 0.24825509",
                          "(note) max = the row's largest logit; \u03A3 = sum of exp(z - max) "
                          "over the 3 allowed keys"}));
  EXPECT_EQ(e.value, "value: 0.24825509");
  EXPECT_EQ(e.note,
            "Rows and columns count from 0, as PyTorch indexes them; the labels are the tokens.");
}

// bfloat16: the stored value, the same cell in float32 and the rounding error. The logits
// 1/sqrt(2) and sqrt(2) are stored as 0.70703125 and 1.4140625, the weight as 0.248046875;
// float32 gives 0.24825509.
TEST(ExplainCell, LowPrecisionShowsTheFloat32ValueAndTheRoundingError) {
  const CellExplanation e = Explain(Small(R"(, "dtype": "bfloat16")"), Stage::kWeights, 2, 0);
  EXPECT_EQ(e.value,
            "value: 0.24804688 (bfloat16);  float32: 0.24825509,  rounding error "
            "-0.00020821393");
  const CellExplanation logit = Explain(Small(R"(, "dtype": "float16")"), Stage::kLogits, 2, 2);
  EXPECT_EQ(logit.value.rfind(
                "value: 1.4140625 (float16);  float32: 1.4142135,  rounding error -0.000", 0),
            0u)
      << logit.value;
  EXPECT_EQ(Explain(Small(""), Stage::kWeights, 2, 0).value, "value: 0.24825509");
}

// Soft-capping and the sink (issue 26), with the numbers PyTorch gives: x = 1/sqrt(2) =
// 0.70710677, 0.5 * torch.tanh(x / 0.5) = 0.44419277; with a sink of logit 0 row 2's
// sum = 2 exp(1/sqrt(2) - sqrt(2)) + 1 + exp(-sqrt(2)) = 2.2292541 (float32 2.2292542), the
// sink's share 0.10905744 (float32 0.10905743), its weight 0.22118102 (float32 0.221181).
TEST(ExplainCell, SoftcapAndSinkShowTheirTerms) {
  const std::vector<std::string> capped =
      Texts(Explain(Small(R"(, "scaling": {"softcap": 0.5})"), Stage::kLogits, 2, 0));
  ASSERT_EQ(capped.size(), 5u);
  EXPECT_EQ(capped[2], "x = 1 / \u221A2 = 0.70710677");
  EXPECT_EQ(capped[3], "logit = 0.5 \u00B7 tanh(x / 0.5) = 0.44419277");
  EXPECT_EQ(capped[4], "(note) soft-capping (Gemma 2): every logit within (-0.5, 0.5)");
  const std::vector<std::string> sunk =
      Texts(Explain(Small(R"(, "scaling": {"sink": 0})"), Stage::kWeights, 2, 0));
  ASSERT_EQ(sunk.size(), 7u);
  EXPECT_EQ(sunk[4], "       = exp(0.70710677 - 1.4142135) / 2.2292542 = 0.221181");
  EXPECT_EQ(sunk[5],
            "(note) \u03A3 = sum of exp(z - max) over the 3 allowed keys and the sink "
            "(logit 0); max includes the sink");
  EXPECT_EQ(sunk[6], "(note) the sink took 0.10905743 of this row: its weights sum to 0.8909426");
}

// The sink as torchtitan's sigmoid rescale (scaling.sink_form): the same weight as the concat
// form above (to float32 rounding), written as softmax times sigmoid(lse - s); a row that sees
// no key is nan, and says why.
TEST(ExplainCell, TheSigmoidSinkFormShowsItsGate) {
  const std::vector<std::string> gated = Texts(
      Explain(Small(R"(, "scaling": {"sink": 0, "sink_form": "sigmoid"})"), Stage::kWeights, 2, 0));
  ASSERT_EQ(gated.size(), 7u);
  EXPECT_EQ(gated[3], "weight = exp(z - max) / \u03A3 \u00B7 \u03C3(lse \u2212 s)");
  // The concat form's 0.221181 and 0.10905743 (SoftcapAndSinkShowTheirTerms), to rounding.
  EXPECT_EQ(gated[4],
            "       = exp(0.70710677 - 1.4142135) / 1.9861374 \u00B7 0.8909425 = 0.22118102");
  EXPECT_EQ(
      gated[5].rfind("(note) \u03C3(lse \u2212 s) = \u03C3(2.1004052 \u2212 0) = 0.8909426: ", 0),
      0u)
      << gated[5];
  EXPECT_EQ(gated[6], "(note) the sink took 0.109057486 of this row: its weights sum to 0.8909425");
  const std::vector<std::string> empty = Texts(
      Explain(Small(R"(, "scaling": {"sink": 0, "sink_form": "sigmoid"}, "mask": {"kind": "custom",
            "allowed": [[1, 0, 0], [0, 0, 0], [1, 1, 1]]})"),
              Stage::kWeights, 1, 0));
  ASSERT_EQ(empty.size(), 5u);
  EXPECT_EQ(empty[3], "weight = softmax \u00B7 \u03C3(lse \u2212 s) = nan \u00B7 0 = nan");
  EXPECT_EQ(empty[4],
            "(note) row 1 sees no key: its softmax is 0 / 0 = nan and lse = \u2212inf, so "
            "\u03C3(\u2212inf) = 0 cannot undo it (the concat form gives 0 and the sink 1)");
}

TEST(ExplainCell, MaskedCellsSayWhy) {
  const Scenario causal = Small(R"(, "mask": {"kind": "causal"})");
  EXPECT_EQ(
      Texts(Explain(causal, Stage::kWeights, 0, 2)),
      (std::vector<std::string>{"score = q_0 \u00B7 k_2 = 1",
                                "(note) dot product over d_k = 2 dims (columns 0..1 of Q and K)",
                                "logit = -inf (masked)", "weight = 0 (masked: exp(-inf) = 0)"}));
  EXPECT_EQ(Texts(Explain(causal, Stage::kMask, 0, 2)),
            (std::vector<std::string>{"masked: this key comes after the query (the future)"}));
  EXPECT_EQ(Texts(Explain(causal, Stage::kMask, 2, 0)),
            (std::vector<std::string>{"allowed: the query may attend to this key"}));
}

// The mask composer's cells say which rule masks them (issue 26).
TEST(ExplainCell, MaskKindsSayWhyByTheirRule) {
  const Scenario window = Small(R"(, "mask": {"kind": "sliding_window", "window": 2})");
  EXPECT_EQ(Texts(Explain(window, Stage::kMask, 2, 0)),
            (std::vector<std::string>{
                "masked: key 0 is 2 back, outside the window of 2 keys, this one included",
                "(note) mask: sliding window W = 2: 2 keys, this one included"}));
  EXPECT_EQ(Texts(Explain(window, Stage::kMask, 2, 1))[0],
            "allowed: key 1 is 1 back, inside the window of 2 keys, this one included");
  EXPECT_EQ(Texts(Explain(window, Stage::kMask, 1, 2))[0],
            "masked: this key comes after the query (the future)");
  const Scenario prefix = Small(R"(, "mask": {"kind": "prefix_lm", "prefix": 2})");
  EXPECT_EQ(Texts(Explain(prefix, Stage::kMask, 0, 1))[0],
            "allowed: key 1 is in the prefix, which every query sees");
  EXPECT_EQ(Texts(Explain(prefix, Stage::kMask, 0, 2))[0],
            "masked: this key comes after the query (the future)");
  const Scenario docs = Small(R"(, "mask": {"kind": "document", "doc_ids": [7, 7, 8]})");
  EXPECT_EQ(Texts(Explain(docs, Stage::kMask, 2, 0))[0],
            "masked: key 0 is in document 7, the query in document 8: nothing across");
  const Scenario empty = Small(R"(, "mask": {"kind": "custom", "allowed": [[1, 0, 0], [0, 0, 0],
      [1, 1, 1]], "masked_rows": "zero"})");
  EXPECT_EQ(
      Texts(Explain(empty, Stage::kMask, 1, 0)),
      (std::vector<std::string>{"masked: the logit becomes -inf, the weight 0",
                                "(note) no key allowed in this row: 0 weights (PyTorch >= 2.5's "
                                "scaled_dot_product_attention)",
                                "(note) click to toggle, drag to paint"}));
  EXPECT_EQ(RunScenario(empty).weights[0](1, 0), 0.0f);
}

TEST(ExplainCell, MultiplierWithoutSqrtAndTheSumNormalization) {
  const Scenario s =
      Small(R"(, "scaling": {"sqrt_dk": false, "multiplier": 2}, "normalization": "sum")");
  // Row 1's logits: 0, 2, 2 (scores times 2); weight 2 / 4.
  EXPECT_EQ(
      Texts(Explain(s, Stage::kWeights, 1, 2)),
      (std::vector<std::string>{"score = q_1 \u00B7 k_2 = 1",
                                "(note) dot product over d_k = 2 dims (columns 0..1 of Q and K)",
                                "logit = 1 \u00D7 2 = 2", "weight = z / \u03A3 z = 2 / 4 = 0.5"}));
  const Scenario plain = Small(R"(, "scaling": {"sqrt_dk": false}, "normalization": "mean")");
  EXPECT_EQ(Texts(Explain(plain, Stage::kLogits, 0, 1))[2], "logit = 0 (no scaling) = 0");
  EXPECT_EQ(Texts(Explain(plain, Stage::kWeights, 0, 1))[3], "weight = 1 / n = 1 / 3 = 0.33333334");
}

TEST(ExplainCell, ProjectionAndContextCellsSayWhereTheyComeFrom) {
  const CellExplanation q = Explain(Small(""), Stage::kQ, 1, 0);
  EXPECT_EQ(q.heading, "Q[1, d0]  (token \"b\")");
  EXPECT_EQ(Texts(q), (std::vector<std::string>{
                          "q_1[d0] = x_1 \u00B7 W_query[:, 0] = \u03A3_c x_1[c] W_query[c, 0]",
                          "(note) over d_in = 2 input dimensions"}));
  EXPECT_EQ(q.value, "value: 0");
  EXPECT_EQ(Texts(Explain(Small(""), Stage::kContext, 1, 1)),
            (std::vector<std::string>{"= \u03A3_k weight[1, k] \u00B7 v_k[d1]  (head 0)"}));
}

TEST(ExplainCell, DropoutSaysKeptOrDropped) {
  const Scenario s = Small(R"(, "dropout": {"p": 0.5, "seed": 1})");
  const Stages st = RunScenario(s);
  int kept = 0, dropped = 0;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const std::vector<std::string> lines = Texts(Explain(s, Stage::kWeightsDropped, i, j));
      const std::string& last = lines.back();
      const std::string w = FormatNumber(st.weights[0](i, j), NumberStyle::kShortest);
      const std::string v = FormatNumber(st.weights_dropped[0](i, j), NumberStyle::kShortest);
      if (st.weights_dropped[0](i, j) == 0) {
        EXPECT_EQ(last, "dropped: " + w + " x 0 = 0 (p = 0.5)");
        ++dropped;
      } else {
        EXPECT_EQ(last, "kept: " + w + " / (1 - 0.5) = " + v);
        ++kept;
      }
    }
  EXPECT_GT(kept, 0);
  EXPECT_GT(dropped, 0);
}

}  // namespace
}  // namespace attnlab
