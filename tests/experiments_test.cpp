// experiments_test.cpp: the variance experiment against PyTorch (golden/variance.json, relative
// tolerance 1e-5: float32 dot products summed in a different order) and the peaking statistics.
#include "attnlab/lessons/experiments.h"

#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

TEST(VarianceExperiment, MatchesPyTorch) {
  const nlohmann::json golden = test::LoadGolden("variance.json");
  for (const auto& c : golden["cases"]) {
    const auto got = VarianceExperiment(c["dims"].get<std::vector<int64_t>>(), c["trials"],
                                        c["seed"].get<uint64_t>());
    ASSERT_EQ(got.size(), c["expected"].size());
    for (size_t i = 0; i < got.size(); ++i) {
      const double vu = c["expected"][i]["var_unscaled"], vs = c["expected"][i]["var_scaled"];
      EXPECT_NEAR(got[i].var_unscaled, vu, 1e-5 * vu) << "d = " << got[i].d;
      EXPECT_NEAR(got[i].var_scaled, vs, 1e-5 * vs) << "d = " << got[i].d;
    }
  }
}

TEST(VarianceExperiment, UnscaledGrowsLikeDScaledStaysNearOne) {
  const auto got = VarianceExperiment({5, 100}, 20000, 0, true);
  EXPECT_NEAR(got[0].var_unscaled / 5, 1.0, 0.05);
  EXPECT_NEAR(got[1].var_unscaled / 100, 1.0, 0.05);
  EXPECT_NEAR(got[1].var_scaled, 1.0, 0.05);
  EXPECT_EQ(got[1].dots.size(), 20000u);
}

TEST(VarianceExperiment, RefusesBadArgumentsNamingThem) {
  auto message = [](std::vector<int64_t> dims, int64_t trials) {
    try {
      VarianceExperiment(dims, trials, 0);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message({}, 10), "dims: give at least one dimension");
  EXPECT_EQ(message({0}, 10), "dims: 0 is not a dimension (must be at least 1)");
  EXPECT_EQ(message({5}, 1), "trials: must be at least 2, got 1");
  EXPECT_EQ(message({100000}, 1000),
            "trials x dims: 1000 x 100000 is more than the limit of 5e7 numbers");
}

TEST(PeakStats, OneHotAndUniformRows) {
  RowVector one_hot(4);
  one_hot << 0, 1, 0, 0;
  const PeakStats a = RowPeakStats(one_hot);
  EXPECT_EQ(a.max_weight, 1.0);
  EXPECT_EQ(a.argmax, 1);
  EXPECT_EQ(a.entropy, 0.0);
  EXPECT_EQ(a.effective_tokens, 1.0);
  const PeakStats u = RowPeakStats(RowVector::Constant(4, 0.25f));
  EXPECT_NEAR(u.entropy, std::log(4.0), 1e-7);
  EXPECT_NEAR(u.effective_tokens, 4.0, 1e-6);
  EXPECT_EQ(u.sum, 1.0);
  // A row that keeps only part of its softmax (a mask after it, no renormalisation) is not a
  // distribution; a nan row (no allowed key) does not decide it.
  RowVector part(3);
  part << 0.25f, 0.25f, 0.f;
  const RowVector nan_row = RowVector::Constant(3, NAN);
  EXPECT_EQ(RowPeakStats(part).sum, 0.5);
  EXPECT_TRUE(std::isnan(RowPeakStats(nan_row).sum));
  EXPECT_TRUE(RowsAreDistributions({a, u, RowPeakStats(nan_row)}, 1e-3));
  EXPECT_FALSE(RowsAreDistributions({a, RowPeakStats(part)}, 1e-3));
  // z / sum(z) of signed logits sums to 1 but is no distribution.
  RowVector signed_row(3);
  signed_row << 1.5f, -0.75f, 0.25f;
  EXPECT_EQ(RowPeakStats(signed_row).sum, 1.0);
  EXPECT_EQ(RowPeakStats(signed_row).min_weight, -0.75);
  EXPECT_FALSE(IsDistribution(RowPeakStats(signed_row), 1e-3));
  EXPECT_FALSE(IsDistribution(RowPeakStats(nan_row), 1e-3));
}

// A softmax row stored in bfloat16 sums to 1 only within the dtype's rounding: the alibi
// preset's last query row of head 0 sums to 1 - 0.0012 (each of its ten weights rounded to 8
// significant bits). The window's peaking panel said "not a distribution" of it; at the
// dtype's tolerance it is one, and at float32's it is not.
TEST(PeakStats, ABfloat16SoftmaxRowIsADistributionAtItsDtypesTolerance) {
  Scenario s = LoadPreset("alibi");
  s.dtype = Dtype::kBfloat16;
  const Stages st = RunScenario(s);
  const Matrix w = st.Head(st.weights, 0, 0);
  const PeakStats row = RowPeakStats(w.row(w.rows() - 1));
  EXPECT_GT(std::fabs(row.sum - 1.0), 1e-3);
  EXPECT_FALSE(IsDistribution(row, DistributionTolerance(Dtype::kFloat32)));
  EXPECT_TRUE(IsDistribution(row, DistributionTolerance(Dtype::kBfloat16)));
  EXPECT_EQ(DistributionTolerance(Dtype::kBfloat16), 0x1p-7);
  EXPECT_EQ(DistributionTolerance(Dtype::kFloat16), 0x1p-10);
  EXPECT_TRUE(RowsAreDistributions(RowsPeakStats(w), DistributionTolerance(Dtype::kBfloat16)));
}

TEST(PeakingCurve, SoftmaxPeaksAsTheMultiplierGrows) {
  // scaling-demo's row, in miniature: entropy falls and the max weight rises with m.
  RowVector scores(4);
  scores << 1.0f, 3.0f, 2.5f, -1.0f;
  const auto curve = PeakingCurve(scores, {}, CurveRules{2.0}, LogSpace(0.1, 100, 25));
  for (size_t i = 1; i < curve.size(); ++i) {
    EXPECT_LE(curve[i].stats.entropy, curve[i - 1].stats.entropy + 1e-12);
    EXPECT_GE(curve[i].stats.max_weight, curve[i - 1].stats.max_weight - 1e-7);
  }
  EXPECT_NEAR(curve.front().stats.effective_tokens, 4.0, 0.1);  // m = 0.1: nearly uniform
  EXPECT_NEAR(curve.back().stats.max_weight, 1.0, 1e-6);        // m = 100: one-hot on key 1
  EXPECT_EQ(curve.back().stats.argmax, 1);
  // Masked entries take no weight at all.
  const auto masked = PeakingCurve(scores, {1, 0, 1, 1}, CurveRules{2.0}, {1000.0});
  EXPECT_EQ(masked[0].stats.argmax, 2);
}

// The curves' softmax applies the scenario's logit rules: soft-capping, ALiBi and the sink
// change the row (goldens: NumPy float64, c tanh(x / c) after x = scores / 2 - slope (3 - j),
// then softmax over the row and the sink's logit 0.7).
TEST(SoftmaxRowAt, AppliesSoftcapAlibiAndTheSink) {
  RowVector scores(4);
  scores << 1.0f, 3.0f, 2.5f, -1.0f;
  auto expect = [](const RowVectorD& got, std::vector<double> want, const char* what) {
    ASSERT_EQ(got.size(), 4) << what;
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(got[j], want[j], 1e-15) << what << " key " << j;
  };
  CurveRules r{2.0};
  expect(SoftmaxRowAt(scores, {}, r, 1.0),
         {0.1612081249955106, 0.4382091167752508, 0.341277603293594, 0.05930515493564445},
         "scaled only");
  r.softcap = 1.0;  // Gemma 2's cap: the row flattens
  expect(SoftmaxRowAt(scores, {}, r, 1.0),
         {0.2259588015542026, 0.35191292929127915, 0.3324598734115406, 0.08966839574297769},
         "soft-capped at 1");
  r.softcap = 2.0, r.alibi_slope = 0.5, r.query = 3;  // far keys lose 0.5 a step
  expect(SoftmaxRowAt(scores, {}, r, 1.0),
         {0.084625544019212, 0.34803665306466264, 0.4366732793756601, 0.13066452354046523},
         "ALiBi, capped at 2");
  r.sink = 0.7;
  double sink = -1;
  expect(SoftmaxRowAt(scores, {}, r, 1.0, &sink),
         {0.05920209166990623, 0.24347846832800032, 0.3054866212680109, 0.09140990690578102},
         "ALiBi, cap and sink");
  EXPECT_NEAR(sink, 0.30042291182830144, 1e-15);
  // The peaking curve's statistics follow: the capped row is flatter than the plain one.
  const double plain = PeakingCurve(scores, {}, CurveRules{2.0}, {1.0})[0].stats.max_weight;
  CurveRules capped{2.0};
  capped.softcap = 1.0;
  EXPECT_NEAR(PeakingCurve(scores, {}, capped, {1.0})[0].stats.max_weight, 0.35191292929127915,
              1e-7);
  EXPECT_NEAR(plain, 0.4382091167752508, 1e-7);
}

// One source: at the scenario's own multiplier the curve's row is the engine's weights row
// (float32 against double: 1e-6), for the presets that soft-cap, use ALiBi and a sink; the
// rules come from the pipeline's (CurveRulesOf).
TEST(SoftmaxRowAt, AtTheScenariosMultiplierIsTheEnginesRow) {
  for (const char* id : {"softcap", "alibi", "gpt-oss-sink"}) {
    const Scenario s = LoadPreset(id);
    const Stages st = RunScenario(s);
    const Shape& sh = st.shape;
    for (int64_t h = 0; h < sh.H; ++h)
      for (int64_t i = 0; i < sh.T; ++i) {
        std::vector<uint8_t> allowed(static_cast<size_t>(sh.T));
        for (int64_t k = 0; k < sh.T; ++k) allowed[static_cast<size_t>(k)] = st.mask(i, k);
        double sink = 0;
        const RowVectorD w = SoftmaxRowAt(st.Head(st.scores, 0, h).row(i), allowed,
                                          CurveRulesOf(s, sh, h, i), s.scaling.multiplier, &sink);
        for (int64_t k = 0; k < sh.T; ++k)
          EXPECT_NEAR(w[k], st.Head(st.weights, 0, h)(i, k), 1e-6)
              << id << " head " << h << " row " << i << " key " << k;
        if (!st.sink.empty()) {
          EXPECT_NEAR(sink, st.Head(st.sink, 0, h)(i, 0), 1e-6) << id;
        }
      }
  }
  const Scenario s = LoadPreset("softcap");
  const CurveRules r = CurveRulesOf(s, RunScenario(s).shape, 0, 2);
  ASSERT_TRUE(r.softcap.has_value());
  EXPECT_EQ(*r.softcap, *s.scaling.softcap);
  EXPECT_EQ(r.query, 2);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

TEST(AveragingTrick, V1V2V3AreEqualAndV4Differs) {
  // karpathy-mathematical-trick: torch.allclose(xbow, xbow2) is True for batch 0 (for batch 1
  // PyTorch 1.13 says False: see MatchesPyTorchOnTheKarpathyPresets), and v3 gives the same.
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.batch = 4;
  s.input.length = 8;
  s.input.d_in = 2;
  s.input.seed = 1337;
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = 16;
  const Stages st = RunScenario(s);
  const std::vector<TrickStep> steps = AveragingTrick(st, s, 0);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_TRUE(steps[1].allclose_to_v1);
  EXPECT_TRUE(steps[2].allclose_to_v1);
  EXPECT_LT(steps[2].max_diff_from_v1, 1e-6);
  EXPECT_FALSE(steps[3].allclose_to_v1);  // a real head averages V, not x, by q.k weights
  // v3's weights are the printed wei of self-attention-from-scratch V3.
  EXPECT_NEAR(steps[2].weights(2, 0), 0.3333, 5e-5);
  EXPECT_EQ(steps[2].weights(2, 3), 0.0f);
  EXPECT_NEAR(steps[2].weights(7, 7), 0.1250, 5e-5);
  // The first token can only attend to itself in every version.
  for (const TrickStep& step : steps) EXPECT_EQ(step.weights(0, 0), 1.0f) << step.name;
  EXPECT_THROW(AveragingTrick(st, s, 4), std::invalid_argument);
}

// v1, v2, v3 bit for bit as the notebook's cells run in PyTorch 1.13 (tests/golden/trick.json,
// tools/make_trick_goldens.py), so the verdicts are PyTorch's: False for karpathy-trick batch 1
// and karpathy-head batch 3, where float32 rounding crosses allclose's tolerance.
// v4's code is the code of the current state: no "* multiplier / d_k**0.5" when they are off.
TEST(AveragingTrick, V4CodeFollowsTheScaling) {
  Scenario s = LoadPreset("karpathy-head");
  auto first_line = [&] {
    const std::string code = AveragingTrick(RunScenario(s), s, 0)[3].code;
    return code.substr(0, code.find('\n'));
  };
  s.scaling.sqrt_dk = true;
  EXPECT_EQ(first_line(), "wei = q @ k.transpose(-2, -1) * 16**-0.5");
  s.scaling.multiplier = 2.5;
  EXPECT_EQ(first_line(), "wei = q @ k.transpose(-2, -1) * 2.5 * 16**-0.5");
  s.scaling.sqrt_dk = false;
  s.scaling.multiplier = 1.0;
  EXPECT_EQ(first_line(), "wei = q @ k.transpose(-2, -1)");
}

TEST(AveragingTrick, MatchesPyTorchOnTheKarpathyPresets) {
  const nlohmann::json golden = test::LoadGolden("trick.json");
  for (const char* id : {"karpathy-trick", "karpathy-head"}) {
    const Scenario s = LoadPreset(id);
    const Stages st = RunScenario(s);
    const nlohmann::json& g = golden[id];
    ASSERT_EQ(st.shape.d_in, g["C"].get<int64_t>());
    for (int64_t b = 0; b < 4; ++b) {
      const nlohmann::json& gb = g["batches"][b];
      const std::vector<TrickStep> steps = AveragingTrick(st, s, b);
      const std::string where = std::string(id) + " batch " + std::to_string(b);
      EXPECT_TRUE(
          test::MatrixNear(where + " xbow", steps[0].result, test::JsonMatrix(gb["xbow"]), 0, 0));
      EXPECT_TRUE(
          test::MatrixNear(where + " xbow2", steps[1].result, test::JsonMatrix(gb["xbow2"]), 0, 0));
      EXPECT_TRUE(
          test::MatrixNear(where + " xbow3", steps[2].result, test::JsonMatrix(gb["xbow3"]), 0, 0));
      EXPECT_EQ(steps[1].allclose_to_v1, gb["allclose2"].get<bool>()) << where;
      EXPECT_EQ(steps[2].allclose_to_v1, gb["allclose3"].get<bool>()) << where;
      EXPECT_EQ(steps[1].max_diff_from_v1, gb["max_diff2"].get<double>()) << where;
      EXPECT_EQ(steps[2].max_diff_from_v1, gb["max_diff3"].get<double>()) << where;
      EXPECT_TRUE(steps[0].allclose_to_v1);
      EXPECT_FALSE(steps[0].near_tolerance);
      EXPECT_FALSE(steps[3].allclose_to_v1) << where;
      EXPECT_FALSE(steps[3].near_tolerance) << where;
      // A False verdict here is one of rounding, and says so.
      if (!steps[1].allclose_to_v1) {
        EXPECT_TRUE(steps[1].near_tolerance) << where;
      }
    }
  }
}

TEST(AveragingTrick, ExplainsTheVerdictOfKarpathyTrickBatch1) {
  const Scenario s = LoadPreset("karpathy-trick");
  const std::vector<TrickStep> steps = AveragingTrick(RunScenario(s), s, 1);
  EXPECT_FALSE(steps[1].allclose_to_v1);
  EXPECT_NEAR(steps[1].worst_diff, 3.236e-8, 1e-11);
  EXPECT_NEAR(steps[1].worst_tolerance, 3.02e-8, 1e-10);
  EXPECT_GT(steps[1].worst_diff, steps[1].worst_tolerance);
  EXPECT_TRUE(steps[1].near_tolerance);
  const std::vector<TrickStep> b0 = AveragingTrick(RunScenario(s), s, 0);
  EXPECT_TRUE(b0[1].allclose_to_v1);
  EXPECT_LE(b0[1].worst_diff, b0[1].worst_tolerance);
  EXPECT_FALSE(b0[1].near_tolerance);  // a wide margin (3.5e-7): no rounding could flip it
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

TEST(RowsPeakStats, OnePerRow) {
  Matrix w(2, 2);
  w << 1, 0, 0.5f, 0.5f;
  const auto stats = RowsPeakStats(w);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].entropy, 0.0);
  EXPECT_NEAR(stats[1].entropy, std::log(2.0), 1e-7);
}

}  // namespace
}  // namespace attnlab
