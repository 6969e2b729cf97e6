// bugs_test.cpp: the bug gallery (model/bugs.h): each bug preset and its fix against PyTorch's
// numbers (tests/golden/scenarios/preset-bug-*.json, the wrong code run in torch by
// tools/torch_oracle.py), BugFix against the goldens' fixes, and the two programs' differing
// lines (codegen.h DiffPrograms).
#include "attnlab/model/bugs.h"

#include <cmath>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/lessons/experiments.h"
#include "attnlab/lessons/inference.h"
#include "attnlab/python/codegen.h"
#include "test_util.h"

namespace attnlab {
namespace {

Scenario GoldenScenario(const std::string& name) {
  return ParseScenario(test::LoadGolden("scenarios/" + name + ".json")["scenario"].dump());
}

// Row i of batch 0, head 0 of a golden's weights (B x T x T, or B x H x T x T).
std::vector<float> GoldenWeightsRow(const std::string& name, size_t i) {
  const nlohmann::json w = test::LoadGolden("scenarios/" + name + ".json")["expected"]["weights"][0];
  const nlohmann::json& m = w[0][0].is_array() ? w[0] : w;
  std::vector<float> row;
  for (const auto& v : m[i]) row.push_back(test::JsonFloat(v));
  return row;
}

float RowSum(const std::vector<float>& r) {
  float s = 0;
  for (float v : r) s += v;
  return s;
}

// A bug preset's stages and its fix's.
struct BugRun {
  Stages bug, fix;
};
BugRun RunBug(const char* id) {
  return {RunScenario(LoadPreset(id)), RunScenario(BugFix(id, LoadPreset(id)))};
}

// One weight of batch 0, head 0, in the bug and in the fix, as PyTorch computes them.
struct WeightCell {
  int64_t i, j;
  float bug, fix;
};
void ExpectWeights(const BugRun& r, std::initializer_list<WeightCell> cells) {
  for (const WeightCell& c : cells) {
    EXPECT_FLOAT_EQ(r.bug.weights[0](c.i, c.j), c.bug) << "bug (" << c.i << ", " << c.j << ")";
    EXPECT_FLOAT_EQ(r.fix.weights[0](c.i, c.j), c.fix) << "fix (" << c.i << ", " << c.j << ")";
  }
}

TEST(BugGallery, EveryBugIsAPresetWhoseIdStartsWithBugAndEveryBugPresetIsInTheGallery) {
  for (const BugInfo& b : Bugs()) {
    EXPECT_TRUE(IsPreset(b.id)) << b.id;
    EXPECT_EQ(std::string(b.id).rfind("bug-", 0), 0u) << b.id;
    EXPECT_GT(std::string(b.diagnosis).size(), 40u) << b.id;
    EXPECT_EQ(FindBug(b.id), &b);
  }
  for (const PresetInfo& p : Presets())
    if (p.id.rfind("bug-", 0) == 0) {
      EXPECT_NE(FindBug(p.id), nullptr) << p.id;
    }
  EXPECT_EQ(FindBug("raschka-3.5-causal"), nullptr);
  EXPECT_EQ(Bugs().size(), 6u);
}

TEST(BugGallery, TheFixIsTheGoldensFixedScenarioWithOneSettingPutRight) {
  for (const BugInfo& b : Bugs()) {
    const Scenario bug = LoadPreset(b.id);
    EXPECT_EQ(bug, GoldenScenario(std::string("preset-") + b.id)) << b.id;
    Scenario fix = BugFix(b.id, bug);
    EXPECT_EQ(fix.title, std::string("The fix of ") + b.id + ": " + b.fix) << fix.title;
    EXPECT_EQ(bug.title.substr(0, 5), "Bug: ") << bug.title;
    EXPECT_EQ(bug.title.substr(bug.title.size() - 10), " (the bug)") << bug.title;
    // The golden's fix is `attention-lab presets --bug-fixes`' (tools/make_goldens.py).
    EXPECT_EQ(fix, GoldenScenario(std::string("preset-") + b.id + "-fixed")) << b.id;
    EXPECT_FALSE(fix == bug) << b.id;
  }
  EXPECT_EQ(BugFix("bug-scale-d-model", LoadPreset("bug-scale-d-model")).scaling.multiplier, 0.25);
  EXPECT_EQ(BugFix("bug-window-off-by-one", LoadPreset("bug-window-off-by-one")).mask.window, 3);
  EXPECT_EQ(BugFix("bug-rope-pairs", LoadPreset("bug-rope-pairs")).positions.layout,
            RopeLayout::kInterleaved);
}

TEST(BugGallery, SoftmaxOverTheQueriesMakesTheColumnsSumToOneAsPyTorchComputesIt) {
  // torch.softmax(logits, dim=-2) on Raschka's causal journey: row 1 is 0.18178475, 0.20573257
  // (the fix: 0.5516780, 0.4483220), and key 5 ("step"), seen by query 5 alone, gets 1.
  const BugRun r = RunBug("bug-softmax-dim");
  ExpectWeights(r, {{0, 0, 0.16054286062717438f, 1.0f},
                    {1, 0, 0.1817847490310669f, 0.5516780018806458f},
                    {1, 1, 0.2057325690984726f, 0.44832196831703186f},
                    {4, 4, 0.49109095335006714f, 0.19705283641815186f},
                    {5, 4, 0.5089091062545776f, 0.1665608286857605f},
                    {5, 5, 1.0f, 0.152879536151886f},
                    {0, 1, 0.0f, 0.0f}});
  const Stages& bug = r.bug;
  const Stages& fix = r.fix;
  const Matrix& w = bug.weights[0];
  const float row_sums[] = {0.1605429f, 0.3875173f, 0.6452945f, 0.9332308f, 1.4143205f, 2.4590942f};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(w.col(i).sum(), 1.0f, 2e-7f) << "column " << i;
    EXPECT_NEAR(w.row(i).sum(), row_sums[i], 4e-7f) << "row " << i;
    EXPECT_NEAR(fix.weights[0].row(i).sum(), 1.0f, 2e-7f) << "row " << i;
  }
  // The context is those weights times V, as torch's weights @ V.
  const Matrix ctx = w * bug.V[0];
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < 2; ++d) EXPECT_NEAR(bug.context[0](i, d), ctx(i, d), 1e-6f) << i << "," << d;
}

TEST(BugGallery, MaskAfterSoftmaxLosesTheMaskedShareAsPyTorchComputesIt) {
  // PyTorch's numbers (torch.softmax(logits, dim=-1) * mask), row 1 of Raschka's journey:
  // 0.20412546 + 0.16588287 = 0.3700083, against the fix's 0.5516780, 0.4483220 (sum 1).
  const BugRun r = RunBug("bug-mask-after-softmax");
  ExpectWeights(r, {{1, 0, 0.20412546396255493f, 0.5516780018806458f},
                    {1, 1, 0.165882870554924f, 0.44832196831703186f},
                    {1, 2, 0.0f, 0.0f}});
  const float want[] = {0.192126f, 0.3700083f, 0.5357345f, 0.6775163f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(r.bug.weights[0].row(i).sum(), want[i], 2e-7f) << "row " << i;
    EXPECT_NEAR(r.bug.weights[0].row(i).sum(),
                RowSum(GoldenWeightsRow("preset-bug-mask-after-softmax", i)), 2e-7f);
    EXPECT_NEAR(r.fix.weights[0].row(i).sum(), 1.0f, 2e-7f);
  }
  EXPECT_NEAR(r.bug.weights[0].row(5).sum(), 1.0f, 2e-7f);  // the last row masks nothing
}

TEST(BugGallery, ScalingByTheEmbeddingWidthFlattensEveryRow) {
  // C**-0.5 = 32**-0.5 instead of head_size**-0.5 = 0.25: PyTorch's row 1 of batch 0 is
  // 0.42638746, 0.57361257 (the bug) against 0.39664507, 0.60335493 (the fix).
  const BugRun r = RunBug("bug-scale-d-model");
  ExpectWeights(r, {{1, 0, 0.4263874590396881f, 0.39664506912231445f},
                    {1, 1, 0.5736125707626343f, 0.6033549308776855f},
                    {3, 0, 0.300735205411911f, 0.3232770264148712f}});
  // Flatter: every row after the first has a higher entropy in the bug (smaller logits).
  const std::vector<PeakStats> eb = RowsPeakStats(r.bug.weights[0]),
                               ef = RowsPeakStats(r.fix.weights[0]);
  for (size_t i = 1; i < eb.size(); ++i) EXPECT_GT(eb[i].entropy, ef[i].entropy) << "row " << i;
}

TEST(BugGallery, TheWindowOffByOneLetsEachQuerySeeOneKeyTooMany) {
  // Row 3 ("on"): the bug gives key 0 ("the") 0.14198880; the fix masks it (W = 3: keys 1..3).
  const BugRun r = RunBug("bug-window-off-by-one");
  ExpectWeights(r, {{3, 0, 0.14198879897594452f, 0.0f},
                    {3, 1, 0.3395311236381531f, 0.3957187235355377f}});
  const Stages& bug = r.bug;
  const Stages& fix = r.fix;
  int64_t bug_cells = 0, fix_cells = 0;
  for (int64_t i = 0; i < bug.mask.rows(); ++i) bug_cells += bug.mask.row(i).cast<int64_t>().sum(),
                                                 fix_cells += fix.mask.row(i).cast<int64_t>().sum();
  // T = 8 tokens: 1 + 2 + 6 * 3 = 21 cells for W = 3, 1 + 2 + 3 + 5 * 4 = 26 for W = 4.
  EXPECT_EQ(fix_cells, 21);
  EXPECT_EQ(bug_cells, 26);
}

TEST(BugGallery, RopeOnTheWrongPairsChangesEveryRowAsPyTorchComputesIt) {
  // PyTorch's rotate_half pairs (p, p + 4) against the interleaved pairs (2p, 2p + 1), dh = 8:
  // row 3 ("on") gives "the" 0.34218165 in the bug and 0.24130888 in the fix.
  const BugRun r = RunBug("bug-rope-pairs");
  ExpectWeights(r, {{1, 0, 0.21348409354686737f, 0.23470467329025269f},
                    {3, 0, 0.34218165278434753f, 0.24130888283252716f},
                    {3, 2, 0.23118019104003906f, 0.28915584087371826f},
                    {8, 8, 0.1119677722454071f, 0.10393000394105911f}});
  for (int64_t i = 0; i < 9; ++i) {
    const std::vector<float> want = GoldenWeightsRow("preset-bug-rope-pairs", static_cast<size_t>(i));
    for (int64_t j = 0; j <= i; ++j) EXPECT_FLOAT_EQ(r.bug.weights[0](i, j), want[j]) << i << "," << j;
  }
  // Both are rotations: q and k keep their lengths, only the pairs that turn together differ.
  for (int64_t i = 0; i < 9; ++i)
    EXPECT_NEAR(r.bug.Q_rot[0].row(i).norm(), r.fix.Q_rot[0].row(i).norm(), 1e-5f) << "row " << i;
}

TEST(BugGallery, MinusOneBillionInFloat16IsMinusInfinityAndThePaddingRowsAreNanAsPyTorchComputesThem) {
  // A left-padded sentence: queries 0 and 1 (<pad>) see no key. In float16 -1e9 is stored as
  // -inf, so their rows are 0 / 0 = nan; finfo(float16).min (-65504) gives each key 1 / 8.
  const BugRun r = RunBug("bug-fp16-mask-fill");
  EXPECT_EQ(r.bug.dtype, Dtype::kFloat16);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(r.bug.logits[0](i, j), -INFINITY) << i << "," << j;
      EXPECT_TRUE(std::isnan(r.bug.weights[0](i, j))) << i << "," << j;
      EXPECT_EQ(r.fix.logits[0](i, j), -65504.0f) << i << "," << j;
      EXPECT_EQ(r.fix.weights[0](i, j), 0.125f) << i << "," << j;
    }
  EXPECT_TRUE(std::isnan(r.bug.context[0](0, 0)));
  EXPECT_TRUE(std::isfinite(r.fix.context[0](0, 0)));
  // The rows that see a key: the same numbers in the bug and the fix, PyTorch's.
  for (int64_t i = 2; i < 8; ++i) {
    const std::vector<float> bug = GoldenWeightsRow("preset-bug-fp16-mask-fill", static_cast<size_t>(i)),
                             fix = GoldenWeightsRow("preset-bug-fp16-mask-fill-fixed", static_cast<size_t>(i));
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(r.bug.weights[0](i, j), bug[j]) << i << "," << j;
      EXPECT_EQ(r.fix.weights[0](i, j), fix[j]) << i << "," << j;
      EXPECT_EQ(r.bug.weights[0](i, j), r.fix.weights[0](i, j)) << i << "," << j;
    }
  }
  EXPECT_TRUE(std::isnan(GoldenWeightsRow("preset-bug-fp16-mask-fill", 0)[0]));
  EXPECT_EQ(GoldenWeightsRow("preset-bug-fp16-mask-fill-fixed", 1)[3], 0.125f);
}

TEST(BugGallery, TheProgramsDifferInTheWrongLineAndTheRightLine) {
  auto diff = [](const char* id) { return DiffPrograms(BugFix(id, LoadPreset(id)), LoadPreset(id)); };
  const ProgramDiff dim = diff("bug-softmax-dim");
  EXPECT_EQ(dim.wrong, std::vector<std::string>(
                           {"weights = torch.softmax(logits, dim=-2)  # over the queries (down each column)"}));
  EXPECT_EQ(dim.right, std::vector<std::string>({"weights = torch.softmax(logits, dim=-1)"}));
  const ProgramDiff mask = diff("bug-mask-after-softmax");
  EXPECT_EQ(mask.wrong, std::vector<std::string>(
                            {"weights = weights * mask  # 0 where not allowed, and no renormalisation"}));
  EXPECT_EQ(mask.right, std::vector<std::string>(
                            {"masked = weights * mask  # 0 where attention is not allowed",
                             "weights = masked / masked.sum(dim=-1, keepdim=True)  # rows sum to 1 again"}));
  const ProgramDiff scale = diff("bug-scale-d-model");
  EXPECT_EQ(scale.wrong, std::vector<std::string>(
                             {"logits = scores * 32**-0.5  # 1 / sqrt(C), C = d_in the embedding width"}));
  EXPECT_EQ(scale.right, std::vector<std::string>(
                             {"logits = scores * 16**-0.5  # 1 / sqrt(head_size): q.k keeps a variance near 1"}));
  const ProgramDiff window = diff("bug-window-off-by-one");
  ASSERT_EQ(window.wrong.size(), window.right.size());
  ASSERT_FALSE(window.wrong.empty());
  EXPECT_NE(window.wrong[0].find("< 4"), std::string::npos) << window.wrong[0];
  EXPECT_NE(window.right[0].find("< 3"), std::string::npos) << window.right[0];
  const ProgramDiff rope = diff("bug-rope-pairs");
  ASSERT_FALSE(rope.wrong.empty());
  ASSERT_FALSE(rope.right.empty());
  // rotate_half's halves in the bug; the complex pairs (2i, 2i + 1) in the fix.
  EXPECT_EQ(rope.wrong[3], "    x1, x2 = x[..., : head_size // 2], x[..., head_size // 2 :]");
  EXPECT_EQ(rope.right.back(), "    return torch.view_as_real(pairs * freqs_cis).flatten(-2)");
  EXPECT_EQ(rope.wrong.size(), 5u);
  EXPECT_EQ(rope.right.size(), 4u);
  const ProgramDiff fill = diff("bug-fp16-mask-fill");
  EXPECT_EQ(fill.wrong, std::vector<std::string>({"logits = logits.masked_fill(mask == 0, -1e9)"}));
  EXPECT_EQ(fill.right, std::vector<std::string>(
                            {"logits = logits.masked_fill(mask == 0, torch.finfo(dtype).min)"}));
}

TEST(BugGallery, AFixOfTheWrongScenarioNamesTheField) {
  auto field = [](const std::string& id, const Scenario& s) {
    try {
      BugFix(id, s);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const Scenario causal = LoadPreset("raschka-3.5-causal");
  EXPECT_EQ(field("bug-softmax-dim", causal),
            "normalization: the bug-softmax-dim fix needs \"softmax_dim_query\"");
  EXPECT_EQ(field("bug-window-off-by-one", causal),
            "mask.window: the bug-window-off-by-one fix needs a sliding window of at least 2 keys");
  EXPECT_EQ(field("bug-mask-after-softmax", causal),
            "normalization: the bug-mask-after-softmax fix needs \"softmax_then_mask_no_renorm\"");
  EXPECT_EQ(field("bug-scale-d-model", causal),
            "scaling.sqrt_dk: the bug-scale-d-model fix needs false (the scale is the multiplier)");
  EXPECT_EQ(field("bug-rope-pairs", causal),
            "positions.layout: the bug-rope-pairs fix needs RoPE with \"split_halves\" and a head "
            "size of at least 4");
  EXPECT_EQ(field("bug-fp16-mask-fill", causal),
            "mask.fill: the bug-fp16-mask-fill fix needs \"-1e9\" in a float16 scenario");
  EXPECT_EQ(field("bug-nope", causal), "bug: no bug \"bug-nope\" in the gallery");
}

TEST(BugGallery, ADecodeStepRefusesTheSoftmaxOverQueriesNamingTheField) {
  const Scenario s = LoadPreset("bug-softmax-dim");
  try {
    RunDecode(s, RunScenario(s), {2, 0});
    ADD_FAILURE() << "no error";
  } catch (const InferenceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "normalization: a decode step normalises each new query's row; \"softmax_dim_query\" "
              "normalises over queries that do not exist yet");
  }
}

TEST(BugGallery, TheNoRenormNormalizationRoundTripsThroughTheFileFormat) {
  const Scenario bug = LoadPreset("bug-mask-after-softmax");
  EXPECT_EQ(bug.normalization, Normalization::kSoftmaxThenMaskNoRenorm);
  const std::string text = WriteScenario(bug);
  EXPECT_NE(text.find("\"normalization\": \"softmax_then_mask_no_renorm\""), std::string::npos);
  EXPECT_EQ(ParseScenario(text), bug);
  EXPECT_FALSE(MaskAppliesToLogits(bug.normalization));
  EXPECT_FALSE(IsSoftmaxOverAllowedKeys(bug.normalization));
}

}  // namespace
}  // namespace attnlab
