// pipeline_test.cpp: the engine against PyTorch: the goldens of tools/torch_oracle.py
// (golden/scenarios/*.json), plus properties and the recompute-only-what-changed promise.
//
// Tolerances: X and W are drawn by the generator and compared exactly (bit for bit). Every
// other stage differs from PyTorch only by float32 summation order and exp's last bit:
// |a - e| <= 2e-6 + 2e-5 * |e| + 2 ulp of the matrix's largest magnitude (a dot product that
// cancels to a small value keeps the rounding error of its large terms). The largest
// difference is reported on failure.
#include "attnlab/model/pipeline.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "attnlab/model/stats.h"
#include "gqa_util.h"
#include "test_util.h"

namespace attnlab {
namespace {

using nlohmann::json;
using test::JsonMatrix;
using test::MatrixNear;

constexpr double kAtol = 2e-6, kRtol = 2e-5;

// bfloat16 and float16 goldens (tools/torch_oracle.py Precision): PyTorch and the engine both
// compute each stage in float32 from the stored operands and store the result in the dtype,
// but their float32 products sum in different orders. A float32 sum lying within its own
// rounding error of a halfway point between two dtype values is stored one dtype ulp apart,
// and that ulp carries into the later stages; so each stored value is allowed 1 ulp of the
// dtype (2^-8 relative for bfloat16, 2^-11 for float16) of its own magnitude, plus 1 ulp of
// the matrix's largest magnitude for what a carried ulp does to a cancelling sum.
double DtypeUlp(Dtype d) {
  return d == Dtype::kBfloat16 ? 0x1p-8 : d == Dtype::kFloat16 ? 0x1p-11 : 0.0;
}

double MaxFinite(const Matrix& m) {
  double mx = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (std::isfinite(m.data()[i])) mx = std::max(mx, std::fabs(double(m.data()[i])));
  return mx;
}

// kAtol plus two float32 ulps of the largest finite magnitude in `expected` (one dtype ulp of
// it for bfloat16 and float16).
double StageAtol(const Matrix& expected, Dtype d = Dtype::kFloat32) {
  if (IsLowPrecision(d)) return DtypeUlp(d) * MaxFinite(expected);
  return kAtol + 2.0 * MaxFinite(expected) * 1.1920929e-7;
}

std::vector<std::string> GoldenScenarios() {
  std::vector<std::string> names;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/scenarios"))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenScenario, EveryStageMatchesPyTorch) {
  const json golden = test::LoadGolden("scenarios/" + GetParam() + ".json");
  const json& ex = golden["expected"];
  const Scenario scenario = ParseScenario(golden["scenario"].dump());
  const Stages st = RunScenario(scenario);
  const int64_t B = st.shape.B, H = st.shape.H;
  const Dtype dtype = scenario.dtype;
  const double rtol = IsLowPrecision(dtype) ? DtypeUlp(dtype) : kRtol;

  auto stack3 = [&](const char* key, const MatrixStack& got, bool exact) {
    ASSERT_EQ(static_cast<int64_t>(ex[key].size()), B) << key;
    for (int64_t b = 0; b < B; ++b) {
      const Matrix want = JsonMatrix(ex[key][b]);
      EXPECT_TRUE(MatrixNear(std::string(key) + " batch " + std::to_string(b), got[b], want,
                             exact ? 0 : StageAtol(want, dtype), exact ? 0 : rtol));
    }
  };
  auto stack4 = [&](const char* key, const MatrixStack& got) {
    ASSERT_EQ(static_cast<int64_t>(ex[key].size()), B) << key;
    for (int64_t b = 0; b < B; ++b) {
      ASSERT_EQ(static_cast<int64_t>(ex[key][b].size()), H) << key;
      for (int64_t h = 0; h < H; ++h) {
        const Matrix want = JsonMatrix(ex[key][b][h]);
        EXPECT_TRUE(
            MatrixNear(std::string(key) + " b" + std::to_string(b) + " h" + std::to_string(h),
                       got[b * H + h], want, StageAtol(want, dtype), rtol));
      }
    }
  };
  // The sinusoidal encoding adds sin and cos to X: those may differ from PyTorch's in the last bit.
  const bool pe = golden["scenario"].contains("positions") &&
                  golden["scenario"]["positions"]["kind"] == "sinusoidal";
  stack3("X", st.X, !pe);
  EXPECT_TRUE(MatrixNear("W_query", st.W[0], JsonMatrix(ex["W_query"]), 0, 0));
  EXPECT_TRUE(MatrixNear("W_key", st.W[1], JsonMatrix(ex["W_key"]), 0, 0));
  EXPECT_TRUE(MatrixNear("W_value", st.W[2], JsonMatrix(ex["W_value"]), 0, 0));
  stack3("Q", st.Q, false);
  stack3("K", st.K, false);
  stack3("V", st.V, false);
  if (ex.contains("Q_rot")) {
    stack3("Q_rot", st.Q_rot, false);
    stack3("K_rot", st.K_rot, false);
  } else {
    EXPECT_TRUE(st.Q_rot.empty() && st.K_rot.empty());
  }
  stack4("scores", st.scores);
  stack4("logits", st.logits);
  stack4("weights", st.weights);
  if (ex.contains("weights_dropped")) {
    stack4("weights_dropped", st.weights_dropped);
  } else {
    EXPECT_TRUE(st.weights_dropped.empty());
  }
  // gpt-oss's sink: its column of each row's softmax over T + 1 (B x H x T x 1).
  if (ex.contains("sink")) {
    stack4("sink", st.sink);
  } else {
    EXPECT_TRUE(st.sink.empty());
  }
  stack3("context", st.context, false);
  EXPECT_TRUE(MatrixNear("mask", st.mask.cast<float>(), JsonMatrix(ex["mask"]), 0, 0));
  EXPECT_EQ(st.tokens, ex["tokens"].get<std::vector<std::string>>());
  if (ex.contains("vocab")) {
    EXPECT_EQ(st.vocab, ex["vocab"].get<std::vector<std::string>>());
    EXPECT_EQ(st.token_ids, ex["token_ids"].get<std::vector<int>>());
  }
  // K.var() is a float32 in PyTorch: inf when the variance exceeds float32's largest value.
  const float var_K = test::JsonFloat(ex["var_K"]);
  if (std::isfinite(var_K)) {
    EXPECT_NEAR(st.var_K, var_K, (IsLowPrecision(dtype) ? 2 * rtol : 1e-5) * std::fabs(var_K));
  } else {
    EXPECT_TRUE(std::isnan(var_K) ? std::isnan(st.var_K) : st.var_K == var_K) << st.var_K;
  }
}

INSTANTIATE_TEST_SUITE_P(Goldens, GoldenScenario, ::testing::ValuesIn(GoldenScenarios()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(GoldenScenarios, CoverEveryOptionOfTheFormat) {
  // The spread of goldens must exercise every init, mask, normalization, heads > 1, batch > 1,
  // dropout and out_proj; a golden set that lost one would let a regression through.
  std::set<std::string> seen;
  for (const std::string& name : GoldenScenarios()) {
    const Scenario s =
        ParseScenario(test::LoadGolden("scenarios/" + name + ".json")["scenario"].dump());
    seen.insert(std::string("source:") + Name(s.input.source));
    seen.insert(std::string("init:") + Name(s.projections.init));
    seen.insert(std::string("mask:") + Name(s.mask.kind));
    seen.insert(std::string("norm:") + Name(s.normalization));
    if (s.input.source == InputSource::kText)
      seen.insert(std::string("tokenizer:") + TokenizerName(s.input.tokenizer));
    if (s.projections.heads > 1) seen.insert("heads>1");
    if (GroupsKv(ValidateScenario(s)))
      seen.insert(s.projections.kv_heads == 1 ? "kv_heads:mqa" : "kv_heads:gqa");
    if (s.projections.bias) seen.insert("bias");
    if (s.projections.out_proj) seen.insert("out_proj");
    if (s.scaling.softcap) seen.insert("softcap");
    if (s.positions.kind == PositionKind::kAlibi) seen.insert("positions:alibi");
    if (s.scaling.sink.size() == 1) seen.insert("sink");
    if (s.scaling.sink.size() > 1) seen.insert("sink:per_head");
    if (s.scaling.sink_form == SinkForm::kSigmoid) seen.insert("sink_form:sigmoid");
    if (s.dropout.p > 0) seen.insert(s.dropout.seed ? "dropout:seeded" : "dropout:continued");
    if (ValidateScenario(s).B > 1) seen.insert("batch>1");
    if (s.positions.kind == PositionKind::kRope)
      seen.insert(std::string("rope:") + Name(s.positions.layout) +
                  (s.positions.sign < 0 ? "-" : "+"));
    if (s.positions.kind == PositionKind::kRope && GroupsKv(ValidateScenario(s)))
      seen.insert("rope:kv_heads");
    if (s.positions.kind == PositionKind::kSinusoidal) seen.insert("sinusoidal");
  }
  for (const char* want : {"source:matrix",
                           "source:text",
                           "source:randn",
                           "init:identity",
                           "init:torch_rand",
                           "init:randn",
                           "init:linear",
                           "init:matrix",
                           "mask:none",
                           "mask:causal",
                           "mask:custom",
                           "norm:softmax",
                           "norm:softmax_naive",
                           "norm:sum",
                           "norm:mean",
                           "norm:softmax_then_mask",
                           "norm:softmax_then_mask_no_renorm",
                           "norm:softmax_dim_query",
                           "tokenizer:words",
                           "tokenizer:words_and_spaces",
                           "tokenizer:chars",
                           "heads>1",
                           "kv_heads:gqa",
                           "kv_heads:mqa",
                           "bias",
                           "out_proj",
                           "dropout:seeded",
                           "dropout:continued",
                           "batch>1",
                           "softcap",
                           "sink",
                           "sink:per_head",
                           "sink_form:sigmoid",
                           "positions:alibi",
                           "rope:split_halves+",
                           "rope:split_halves-",
                           "rope:interleaved+",
                           "rope:interleaved-",
                           "rope:kv_heads",
                           "sinusoidal"})
    EXPECT_TRUE(seen.count(want)) << "no golden scenario covers " << want;
}

// RoPE's shift invariance: the scores depend on i - j only, so moving every position by s
// changes them by rounding only; without RoPE there is nothing to move (0).
TEST(RopeShift, ChangesNoScoreBeyondRounding) {
  const Scenario s =
      ParseScenario(test::LoadGolden("scenarios/rope-split-halves-t40.json")["scenario"].dump());
  const Stages st = RunScenario(s);
  float largest = 0;
  for (const Matrix& m : st.scores) largest = std::max(largest, m.cwiseAbs().maxCoeff());
  ASSERT_GT(largest, 1.0f);
  EXPECT_EQ(RopeShiftLargestChange(s, st, 0), 0.0);  // the same angles, the same products
  for (int64_t shift : {1, 5, 100}) {
    const double change = RopeShiftLargestChange(s, st, shift);
    EXPECT_GT(change, 0.0) << shift;  // rounding is seen: the check really recomputes
    EXPECT_LT(change, 2e-5 * largest) << shift;
  }
  // Without the rotation the same shift means nothing: 0.
  Scenario plain = s;
  plain.positions = {};
  EXPECT_EQ(RopeShiftLargestChange(plain, RunScenario(plain), 5), 0.0);
  // A float64 run checks its double stages: rounding at double's scale.
  Scenario f64 = s;
  f64.dtype = Dtype::kFloat64;
  EXPECT_LT(RopeShiftLargestChange(f64, RunScenario(f64), 5), 1e-12 * largest);
}

// The rotation is recomputed when only the positions change, and the scores follow it.
TEST(RopeShift, PositionsChangeRecomputesFromTheProjections) {
  Scenario s = ParseScenario(
      test::LoadGolden("scenarios/rope-split-halves-heads2-causal.json")["scenario"].dump());
  Engine e;
  e.Run(s);
  const Matrix rotated = e.stages().scores[0];
  s.positions.kind = PositionKind::kNone;
  e.Run(s);
  EXPECT_TRUE(e.stages().Q_rot.empty());
  const Matrix plain = e.stages().scores[0];
  const Matrix direct = e.stages().Q[0].leftCols(4) * e.stages().K[0].leftCols(4).transpose();
  EXPECT_TRUE(plain.isApprox(direct, 1e-5f));
  EXPECT_NE(plain, rotated);
  // Row 0, key 0: position 0 is not rotated, so that score is the same either way.
  EXPECT_EQ(plain(0, 0), rotated(0, 0));
}

Scenario Journey() {
  Scenario s;
  s.input.source = InputSource::kMatrix;
  Matrix x(6, 3);
  x << 0.43f, 0.15f, 0.89f, 0.55f, 0.87f, 0.66f, 0.57f, 0.85f, 0.64f, 0.22f, 0.58f, 0.33f, 0.77f,
      0.25f, 0.10f, 0.05f, 0.80f, 0.55f;
  s.input.values = {x};
  s.projections.init = ProjectionInit::kTorchRand;
  s.projections.d_out = 2;
  s.projections.seed = 123;
  return s;
}

TEST(Engine, SoftmaxRowsSumToOneAndMaskedEntriesAreZero) {
  Scenario s = Journey();
  s.mask.kind = MaskKind::kCausal;
  s.scaling.multiplier = 7.0;
  const Stages st = RunScenario(s);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(st.weights[0].row(i).sum(), 1.0f, 1e-6);
    for (int64_t j = i + 1; j < 6; ++j) {
      EXPECT_EQ(st.weights[0](i, j), 0.0f);
      EXPECT_EQ(st.logits[0](i, j), -INFINITY);
    }
  }
  EXPECT_EQ(st.weights[0](0, 0), 1.0f);  // the first token can only attend to itself
}

// T = 300 tokens (two context blocks of the causal fast path) of a randn input, identity
// projections: the causal mask against the same triangle given as a custom mask, which takes
// the full-row path. Both must hold PyTorch's values in every cell, non-finite rows included.
Scenario Causal300(Normalization norm, double multiplier) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 300;
  s.input.d_in = 4;
  s.input.seed = 5;
  s.scaling.multiplier = multiplier;
  s.normalization = norm;
  s.mask.kind = MaskKind::kCausal;
  return s;
}

void ExpectCausalEqualsTrilCustom(Scenario s, const std::string& what) {
  const Stages causal = RunScenario(s);
  s.mask.kind = MaskKind::kCustom;
  s.mask.allowed = MaskMatrix::Zero(300, 300);
  for (int i = 0; i < 300; ++i) s.mask.allowed.row(i).head(i + 1).setOnes();
  const Stages custom = RunScenario(s);
  // Non-finite cells must agree exactly; finite ones to the summation order of rows of 300
  // against rows of i + 1 (a "sum" row sum that nearly cancels amplifies it).
  EXPECT_TRUE(MatrixNear(what + " weights", causal.weights[0], custom.weights[0], 1e-6, 1e-4));
  EXPECT_TRUE(MatrixNear(what + " context", causal.context[0], custom.context[0], 1e-5, 1e-4));
}

TEST(Engine, NonFiniteRowsUnderACausalMaskMatchPyTorch) {
  // exp overflow (+inf logits: the stable softmax's inf - inf, the naive sum inf) and exp
  // underflow (a negative multiplier: every exp is 0, 0 / 0): PyTorch writes nan into the
  // masked cells of such rows too, and the context rows become nan.
  // ("sum" with +-inf logits is left out: whether its row sum is inf, -inf or nan depends on
  // where the partial sums overflow, i.e. on the summation order, in PyTorch as here.)
  for (double mult : {1e38, -1e3, 1.0})
    for (Normalization n : {Normalization::kSoftmax, Normalization::kSoftmaxNaive,
                            Normalization::kSum, Normalization::kMean})
      if (!(n == Normalization::kSum && mult == 1e38))
        ExpectCausalEqualsTrilCustom(Causal300(n, mult),
                                     std::string(Name(n)) + " x" + std::to_string(mult));
  const Stages st = RunScenario(Causal300(Normalization::kSoftmaxNaive, -1e3));
  int nan_rows = 0;
  for (int i = 0; i < 299; ++i)
    if (std::isnan(st.weights[0](i, 299))) {
      ++nan_rows;
      EXPECT_TRUE(std::isnan(st.context[0](i, 0))) << i;
    }
  EXPECT_GT(nan_rows, 0);  // the rows whose exp all underflow
}

// Dropout multiplies each weight by its mask value (0, or 1 / (1 - p) kept), as PyTorch does,
// rather than zeroing it: a dropped inf becomes nan (inf * 0), a kept one stays inf
// (golden dropout-inf-weights: "sum" rows that sum to 0 give +-inf and nan weights).
TEST(Engine, DropoutMultipliesByTheMaskSoADroppedInfIsNan) {
  const json g = test::LoadGolden("scenarios/dropout-inf-weights.json");
  const Stages st = RunScenario(ParseScenario(g["scenario"].dump()));
  const Matrix want = JsonMatrix(g["expected"]["weights_dropped"][0][0]);
  const Matrix& w = st.weights[0];
  const Matrix& d = st.weights_dropped[0];
  int dropped_inf = 0, kept_inf = 0;
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      const bool same = std::isnan(want(i, j)) ? std::isnan(d(i, j)) : d(i, j) == want(i, j);
      EXPECT_TRUE(same) << "(" << i << ", " << j << "): " << d(i, j) << ", torch " << want(i, j);
      if (std::isinf(w(i, j))) (std::isnan(d(i, j)) ? dropped_inf : kept_inf) += 1;
    }
  EXPECT_GT(dropped_inf, 0);  // inf * 0
  EXPECT_GT(kept_inf, 0);     // inf * 2
}

TEST(Engine, ValuesWithInfSpoilTheCausalFastPathAsInPyTorch) {
  // 0 * inf is nan in PyTorch's full weights @ V: a masked (0) weight meets an inf value.
  Scenario s = Causal300(Normalization::kSoftmax, 1.0);
  s.input.source = InputSource::kMatrix;
  Matrix x = Matrix::Constant(300, 2, 0.5f);
  x(299, 0) = 3e38f;
  s.input.values = {x};
  s.projections.init = ProjectionInit::kMatrix;
  s.projections.W = {Matrix::Identity(2, 2), Matrix::Identity(2, 2) * 1e-38f,
                     Matrix::Identity(2, 2) * 2.0f};
  const Stages st = RunScenario(s);
  ASSERT_TRUE(std::isinf(st.V[0](299, 0)));
  EXPECT_TRUE(std::isnan(st.context[0](0, 0)));
  EXPECT_EQ(st.context[0](0, 1), 1.0f);  // the finite column: 0 * 1 = 0
  ExpectCausalEqualsTrilCustom(s, "inf value");
}

TEST(Engine, ATemperatureDragKeepsWhatTheEngineKnowsOfAnInfValue) {
  // V is scanned for inf once, when it is made: a new input whose V holds an inf leaves the
  // causal fast path, and a temperature change after it reuses that scan.
  Scenario s = Causal300(Normalization::kSoftmax, 1.0);
  s.input.source = InputSource::kMatrix;
  Matrix x = Matrix::Constant(300, 2, 0.5f);
  s.input.values = {x};
  s.projections.init = ProjectionInit::kMatrix;
  s.projections.W = {Matrix::Identity(2, 2), Matrix::Identity(2, 2) * 1e-38f,
                     Matrix::Identity(2, 2) * 2.0f};
  Engine engine;
  engine.Run(s);
  EXPECT_EQ(engine.stages().context[0](0, 0), 1.0f);  // V's first row, 0.5 * 2
  x(299, 0) = 3e38f;
  s.input.values = {x};
  engine.Run(s);
  EXPECT_TRUE(std::isnan(engine.stages().context[0](0, 0)));  // 0 * inf, as in PyTorch
  s.scaling.multiplier = 2.0;
  engine.Run(s);
  EXPECT_EQ(engine.counts().projections, 2);
  EXPECT_TRUE(std::isnan(engine.stages().context[0](0, 0)));
}

TEST(Engine, AnInfValueSpoilsOnlyItsOwnBatchEntry) {
  // Project checks V for inf part by part (parts of 256 rows); a part of the second batch
  // entry that holds an inf spoils that entry's causal fast path, and only that one's.
  Scenario s = Causal300(Normalization::kSoftmax, 1.0);
  s.input.source = InputSource::kMatrix;
  const Matrix x = Matrix::Constant(600, 2, 0.5f);
  Matrix with_inf = x;
  with_inf(300, 0) = 3e38f;  // the second part of 256 rows
  s.input.values = {x, with_inf};
  s.projections.init = ProjectionInit::kMatrix;
  s.projections.W = {Matrix::Identity(2, 2), Matrix::Identity(2, 2) * 1e-38f,
                     Matrix::Identity(2, 2) * 2.0f};
  const Stages st = RunScenario(s);
  ASSERT_EQ(st.V.size(), 2u);
  ASSERT_TRUE(std::isinf(st.V[1](300, 0)));
  EXPECT_EQ(st.context[0](0, 0), 1.0f);  // V's first row, 0.5 * 2: no inf in this entry
  EXPECT_TRUE(st.context[0].allFinite());
  EXPECT_TRUE(std::isnan(st.context[1](0, 0)));  // 0 * inf, as in PyTorch's full product
  EXPECT_EQ(st.context[1](0, 1), 1.0f);          // the finite column
}

TEST(Engine, AFiniteRunAfterANanRowClearsTheMaskedCells) {
  // The causal fast path keeps the +0 above the diagonal between runs; a run that filled some
  // of them with nan must not leave them behind.
  Engine engine;
  Scenario s = Causal300(Normalization::kSoftmaxNaive, -1e3);
  engine.Run(s);
  s.scaling.multiplier = 1.0;
  engine.Run(s);
  const Stages fresh = RunScenario(s);
  EXPECT_TRUE(MatrixNear("weights", engine.stages().weights[0], fresh.weights[0], 0, 0));
  EXPECT_TRUE(MatrixNear("context", engine.stages().context[0], fresh.context[0], 0, 0));
  EXPECT_EQ(engine.stages().weights[0](0, 299), 0.0f);
}

TEST(Engine, TemperatureChangeRecomputesOnlyFromLogits) {
  Engine engine;
  Scenario s = Journey();
  engine.Run(s);
  const Matrix scores_before = engine.stages().scores[0];
  s.scaling.multiplier = 4.0;
  engine.Run(s);
  EXPECT_EQ(engine.counts().input, 1);
  EXPECT_EQ(engine.counts().projections, 1);
  EXPECT_EQ(engine.counts().scores, 1);
  EXPECT_EQ(engine.counts().logits, 2);
  EXPECT_EQ(engine.counts().context, 2);
  // And the result equals a fresh full run of the same scenario.
  const Stages fresh = RunScenario(s);
  EXPECT_TRUE(MatrixNear("weights", engine.stages().weights[0], fresh.weights[0], 0, 0));
  EXPECT_TRUE(MatrixNear("scores", engine.stages().scores[0], scores_before, 0, 0));
  s.normalization = Normalization::kMean;  // normalization only: logits stay
  engine.Run(s);
  EXPECT_EQ(engine.counts().logits, 2);
  EXPECT_EQ(engine.counts().weights, 3);
  s.mask.kind = MaskKind::kCausal;  // mask: from logits on
  engine.Run(s);
  EXPECT_EQ(engine.counts().scores, 1);
  EXPECT_EQ(engine.counts().logits, 3);
  EXPECT_EQ(engine.counts().context, 4);
  engine.Run(s);  // nothing changed: nothing recomputed
  EXPECT_EQ(engine.counts().context, 4);
}

TEST(Engine, SwitchingToSoftmaxThenMaskUnmasksTheLogits) {
  // softmax_then_mask leaves the logits unmasked (the mask acts on the weights): switching to
  // it and back from a causal softmax must redo the logits, and equal fresh runs bit for bit.
  Engine engine;
  Scenario s = Journey();
  s.mask.kind = MaskKind::kCausal;
  engine.Run(s);
  EXPECT_EQ(engine.stages().logits[0](0, 1), -std::numeric_limits<float>::infinity());
  for (Normalization n : {Normalization::kSoftmaxThenMask, Normalization::kSoftmax}) {
    s.normalization = n;
    engine.Run(s);
    const Stages fresh = RunScenario(s);
    EXPECT_TRUE(MatrixNear("logits", engine.stages().logits[0], fresh.logits[0], 0, 0));
    EXPECT_TRUE(MatrixNear("weights", engine.stages().weights[0], fresh.weights[0], 0, 0));
    EXPECT_TRUE(MatrixNear("context", engine.stages().context[0], fresh.context[0], 0, 0));
  }
  EXPECT_EQ(engine.counts().logits, 3);
  s.normalization = Normalization::kSoftmaxThenMask;
  const Stages then_mask = RunScenario(s);
  EXPECT_TRUE(std::isfinite(then_mask.logits[0](0, 1)));  // the future key's logit, unmasked
  EXPECT_EQ(then_mask.weights[0](0, 1), 0.0f);            // and its weight, masked after
  EXPECT_EQ(then_mask.weights[0](0, 0), 1.0f);
}

TEST(Engine, DropoutSeedChangeRedrawsOnlyTheMask) {
  Engine engine;
  Scenario s = Journey();
  s.dropout.p = 0.5;
  s.dropout.seed = 123;
  engine.Run(s);
  s.dropout.seed = 124;
  engine.Run(s);
  EXPECT_EQ(engine.counts().weights, 1);
  EXPECT_EQ(engine.counts().dropout, 2);
  const Stages fresh = RunScenario(s);
  EXPECT_TRUE(MatrixNear("weights_dropped", engine.stages().weights_dropped[0],
                         fresh.weights_dropped[0], 0, 0));
}

TEST(Engine, ContinuedSeedsAfterAPartialRecomputeEqualAFreshRun) {
  // projections.seed = null continues the generator after the input's draws; dropout.seed =
  // null continues after the projections'. A recompute from the middle must resume there.
  Engine engine;
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 5;
  s.input.d_in = 4;
  s.input.seed = 3;
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = 4;
  s.dropout.p = 0.25;
  engine.Run(s);
  s.projections.bias = true;  // redo projections (and dropout) from the saved generator
  engine.Run(s);
  const Stages fresh = RunScenario(s);
  EXPECT_EQ(engine.counts().input, 1);
  EXPECT_TRUE(MatrixNear("W_key", engine.stages().W[1], fresh.W[1], 0, 0));
  EXPECT_TRUE(MatrixNear("weights_dropped", engine.stages().weights_dropped[0],
                         fresh.weights_dropped[0], 0, 0));
}

TEST(Engine, BadEditKeepsTheLastGoodStages) {
  Engine engine;
  Scenario s = Journey();
  engine.Run(s);
  const Matrix weights = engine.stages().weights[0];
  s.projections.heads = 3;  // 3 does not divide d_out = 2
  EXPECT_THROW(engine.Run(s), ScenarioError);
  s.projections.heads = 1;
  s.input.values[0](2, 1) = NAN;
  try {
    engine.Run(s);
    FAIL() << "a non-finite cell was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.field(), "input.values[2][1]");
  }
  EXPECT_TRUE(MatrixNear("weights", engine.stages().weights[0], weights, 0, 0));
  EXPECT_EQ(engine.counts().input, 1);
}

TEST(Engine, MultiHeadSplitsColumnsAndConcatenatesContext) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 4;
  s.input.d_in = 6;
  s.input.seed = 1;
  s.projections.init = ProjectionInit::kRandn;
  s.projections.d_out = 6;
  s.projections.seed = 2;
  s.projections.heads = 3;
  const Stages st = RunScenario(s);
  ASSERT_EQ(st.scores.size(), 3u);
  // Head 1 uses columns 2..3 of Q and K, and writes columns 2..3 of the context.
  const Matrix q1 = st.Q[0].middleCols(2, 2), k1 = st.K[0].middleCols(2, 2);
  EXPECT_TRUE(MatrixNear("scores head 1", st.scores[1], q1 * k1.transpose(), 1e-6, 1e-6));
  const Matrix ctx1 = st.weights[1] * st.V[0].middleCols(2, 2);
  EXPECT_TRUE(MatrixNear("context head 1", st.context[0].middleCols(2, 2), ctx1, 1e-6, 1e-6));
}

// Grouped K/V heads against plain multi-head attention on the same numbers: W_key and W_value
// with each K/V head's columns repeated for the query heads that share it (what
// repeat_interleave does to K and V) give the same scores, weights and context exactly.
TEST(Engine, GroupedKvHeadsEqualMultiHeadWithRepeatedKeyValueColumns) {
  Scenario g = test::GroupedKvScenario();
  g.mask.kind = MaskKind::kCausal;
  const Stages a = RunScenario(g), b = RunScenario(test::RepeatedKvHeads(g, a));
  ASSERT_EQ(a.K[0].cols(), 4);  // 2 K/V heads of d_k = 2
  ASSERT_EQ(a.W[1].cols(), 4);
  EXPECT_EQ(a.shape.Kv(), 2);
  for (size_t m = 0; m < 4; ++m) {
    EXPECT_TRUE(MatrixNear("scores " + std::to_string(m), a.scores[m], b.scores[m], 0, 0));
    EXPECT_TRUE(MatrixNear("weights " + std::to_string(m), a.weights[m], b.weights[m], 0, 0));
  }
  EXPECT_TRUE(MatrixNear("context", a.context[0], b.context[0], 0, 0));
  // One head's k.var() is its K/V head's: the same as the repeated columns'.
  EXPECT_EQ(HeadVariances(a, 0, 3, VarianceKind::kTorchUnbiased).var_k,
            HeadVariances(b, 0, 3, VarianceKind::kTorchUnbiased).var_k);
  // Heads 2 and 3 read K/V head 1: columns 2..3 of K.
  const Matrix k1 = a.K[0].middleCols(2, 2);
  EXPECT_TRUE(MatrixNear("scores head 3", a.scores[3], a.Q[0].middleCols(6, 2) * k1.transpose(),
                         1e-6, 1e-6));
}

}  // namespace
}  // namespace attnlab

namespace attnlab {

// QK-norm (issue 61): a rotation keeps each head's row length, so nanochat's weightless norm
// gives the same attention before or after RoPE (to float32 rounding); a weight scales some
// dimensions more than others, so the order matters (nanochat issue 743). Both orders are
// PyTorch goldens too (tools/make_goldens.py, qk-norm-*).
TEST(Engine, QkNormOrdersAgreeWithoutAWeightAndDifferWithOne) {
  const auto weights = [](const std::string& name) {
    Engine e;
    return e.Run(ParseScenario(test::LoadGolden("scenarios/" + name + ".json")["scenario"].dump()))
        .weights;
  };
  const auto largest = [](const MatrixStack& a, const MatrixStack& b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i)
      d = std::max(d, double((a[i] - b[i]).cwiseAbs().maxCoeff()));
    return d;
  };
  const double weightless = largest(weights("qk-norm-nanochat-after-rope-gqa"),
                                    weights("qk-norm-weightless-before-rope-gqa"));
  EXPECT_GT(weightless, 0.0) << "the two orders round differently";
  EXPECT_LT(weightless, 1e-5);
  const double weighted = largest(weights("qk-norm-weight-before-rope-heads2"),
                                  weights("qk-norm-weight-after-rope-heads2"));
  EXPECT_GT(weighted, 0.01);
}

}  // namespace attnlab

namespace attnlab {
namespace {

// SDPA's scaling (scaling.scale_at "q_and_k", issue 61): with one dimension per head each score
// is one product, so the engine's scores and logits equal PyTorch's bit for bit (the golden
// follows _scaled_dot_product_attention_math: q * sqrt(s), k * sqrt(s), then the product), and
// a third of the logits are one rounding away from the scores form's q k s.
TEST(Engine, SdpaScalingMatchesPyTorchBitForBitAndDiffersFromScalingTheScores) {
  const json golden = test::LoadGolden("scenarios/sdpa-scale-q-and-k-dk1-exact.json");
  Scenario s = ParseScenario(golden["scenario"].dump());
  Engine e;
  const Stages sdpa = e.Run(s);
  const int64_t H = sdpa.shape.H;
  ASSERT_EQ(sdpa.shape.dh, 1);
  for (int64_t h = 0; h < H; ++h) {
    const Matrix scores = JsonMatrix(golden["expected"]["scores"][0][h]);
    const Matrix logits = JsonMatrix(golden["expected"]["logits"][0][h]);
    EXPECT_TRUE(MatrixNear("scores h" + std::to_string(h), sdpa.scores[h], scores, 0, 0));
    EXPECT_TRUE(MatrixNear("logits h" + std::to_string(h), sdpa.logits[h], logits, 0, 0));
  }
  s.scaling.scale_at = ScaleAt::kScores;
  const Stages plain = e.Run(s);  // a recompute from the scores on the same engine
  int differ = 0, finite = 0;
  for (int64_t h = 0; h < H; ++h)
    for (Eigen::Index i = 0; i < plain.logits[h].size(); ++i)
      if (std::isfinite(plain.logits[h].data()[i])) {
        ++finite;
        differ += plain.logits[h].data()[i] != sdpa.logits[h].data()[i];
        EXPECT_NEAR(plain.logits[h].data()[i], sdpa.logits[h].data()[i],
                    2.5e-7 * std::fabs(plain.logits[h].data()[i]));
      }
  EXPECT_EQ(finite, 63);
  EXPECT_EQ(differ, 23);  // as torch gives them (tools/torch_oracle.py, both forms)
  // And back: the engine's partial recompute gives the first run's logits again.
  s.scaling.scale_at = ScaleAt::kQAndK;
  const Stages again = e.Run(s);
  for (int64_t h = 0; h < H; ++h)
    EXPECT_TRUE(MatrixNear("again h" + std::to_string(h), again.logits[h], sdpa.logits[h], 0, 0));
}

}  // namespace
}  // namespace attnlab
