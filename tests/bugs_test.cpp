// bugs_test.cpp: the bug gallery (model/bugs.h): each bug preset and its fix against PyTorch's
// numbers (tests/golden/scenarios/preset-bug-*.json, the wrong code run in torch by
// tools/torch_oracle.py), BugFix against the goldens' fixes, and the two programs' differing
// lines (codegen.h DiffPrograms).
#include "attnlab/model/bugs.h"

#include <cmath>

#include "attnlab/lessons/experiments.h"
#include "attnlab/lessons/grad.h"
#include "attnlab/lessons/inference.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/codegen.h"
#include "test_util.h"

namespace attnlab {
namespace {

Scenario GoldenScenario(const std::string& name) {
  return ParseScenario(test::LoadGolden("scenarios/" + name + ".json")["scenario"].dump());
}

// Row i of batch 0, head 0 of a golden's weights (B x T x T, or B x H x T x T).
std::vector<float> GoldenWeightsRow(const std::string& name, size_t i) {
  const nlohmann::json w =
      test::LoadGolden("scenarios/" + name + ".json")["expected"]["weights"][0];
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
  EXPECT_EQ(Bugs().size(), 10u);
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
    for (int d = 0; d < 2; ++d)
      EXPECT_NEAR(bug.context[0](i, d), ctx(i, d), 1e-6f) << i << "," << d;
}

TEST(BugGallery, ADroppedCausalMaskLetsEveryWordSeeTheWordsAfterItAsPyTorchComputesIt) {
  // PyTorch's numbers on Raschka's journey (seed 789, d_out 2): without the mask, row 0
  // ("Your") spreads over all six words (0.19212602 on itself, 0.15095802 on "step"); the fix
  // gives it 1 on itself, and row 1 is the book's 0.5516780, 0.4483220.
  const BugRun r = RunBug("bug-causal-dropped");
  ExpectWeights(r, {{0, 0, 0.19212602078914642f, 1.0f},
                    {0, 5, 0.15095801651477814f, 0.0f},
                    {1, 0, 0.20412546396255493f, 0.5516780018806458f},
                    {1, 1, 0.165882870554924f, 0.44832196831703186f},
                    {1, 2, 0.16621483862400055f, 0.0f}});
  EXPECT_EQ(r.fix.weights[0],
            RunScenario(BugFix("bug-softmax-dim", LoadPreset("bug-softmax-dim"))).weights[0]);
  // As a known cause of `match`, it turns the causal journey into the unmasked one.
  const std::optional<Scenario> bug =
      ApplyBug("bug-causal-dropped", LoadPreset("raschka-3.5-causal"));
  ASSERT_TRUE(bug.has_value());
  EXPECT_EQ(bug->mask.kind, MaskKind::kNone);
  EXPECT_FALSE(ApplyBug("bug-causal-dropped", LoadPreset("raschka-3.4-v2")).has_value());
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
  ExpectWeights(
      r, {{3, 0, 0.14198879897594452f, 0.0f}, {3, 1, 0.3395311236381531f, 0.3957187235355377f}});
  const Stages& bug = r.bug;
  const Stages& fix = r.fix;
  int64_t bug_cells = 0, fix_cells = 0;
  for (int64_t i = 0; i < bug.mask.rows(); ++i)
    bug_cells += bug.mask.row(i).cast<int64_t>().sum(),
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
    const std::vector<float> want =
        GoldenWeightsRow("preset-bug-rope-pairs", static_cast<size_t>(i));
    for (int64_t j = 0; j <= i; ++j)
      EXPECT_FLOAT_EQ(r.bug.weights[0](i, j), want[j]) << i << "," << j;
  }
  // Both are rotations: q and k keep their lengths, only the pairs that turn together differ.
  for (int64_t i = 0; i < 9; ++i)
    EXPECT_NEAR(r.bug.Q_rot[0].row(i).norm(), r.fix.Q_rot[0].row(i).norm(), 1e-5f) << "row " << i;
}

// One golden stage (B x T x w, or B x H x T x T: batch 0, head `head`) as a matrix.
Matrix GoldenStage(const std::string& name, const char* stage, int64_t head = -1) {
  nlohmann::json m = test::LoadGolden("scenarios/" + name + ".json")["expected"][stage][0];
  if (head >= 0) m = m[static_cast<size_t>(head)];
  Matrix out(static_cast<Eigen::Index>(m.size()), static_cast<Eigen::Index>(m[0].size()));
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = 0; j < m[i].size(); ++j) out(i, j) = test::JsonFloat(m[i][j]);
  return out;
}

TEST(BugGallery, ViewWithoutTransposeGivesEachHeadATokenSliceAsPyTorchComputesIt) {
  // PyTorch's q.view(B, heads, T, head_size) on Raschka's journey, 2 heads of 2: head 0 reads
  // "Your journey starts" cut in halves, head 1 "with one step"; the fix splits the features.
  const BugRun r = RunBug("bug-view-no-transpose");
  const char* bug = "preset-bug-view-no-transpose";
  const char* fix = "preset-bug-view-no-transpose-fixed";
  for (int64_t h = 0; h < 2; ++h) {
    const Matrix wb = GoldenStage(bug, "weights", h), wf = GoldenStage(fix, "weights", h);
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        EXPECT_NEAR(r.bug.Head(r.bug.weights, 0, h)(i, j), wb(i, j), 1e-6f) << h << i << j;
        EXPECT_NEAR(r.fix.Head(r.fix.weights, 0, h)(i, j), wf(i, j), 1e-6f) << h << i << j;
      }
  }
  // Head 0, as PyTorch gives them: row 1 is "Your"'s second half, seeing its first half.
  ExpectWeights(r, {{1, 0, 0.5626732110977173f, 0.48386579751968384f},
                    {1, 1, 0.4373267590999603f, 0.5161342620849609f},
                    {5, 0, 0.19349612295627594f, 0.15959854423999786f}});
  EXPECT_FLOAT_EQ(r.bug.Head(r.bug.weights, 0, 1)(5, 5), 0.13335244357585907f);
  EXPECT_FLOAT_EQ(r.fix.Head(r.fix.weights, 0, 1)(5, 5), 0.15948286652565002f);
  // Q as the heads read it: head h's row r is the projection's numbers at flat (h*T + r)*dh,
  // the fix's Q (the projection itself) read by HeadSplitSource.
  const Matrix qb = GoldenStage(bug, "Q"), cb = GoldenStage(bug, "context");
  for (int64_t r0 = 0; r0 < 6; ++r0)
    for (int64_t c = 0; c < 4; ++c) {
      const StageCell from = HeadSplitSource(HeadSplit::kViewNoTranspose, 6, 4, 2, r0, c);
      EXPECT_EQ(r.bug.Q[0](r0, c), r.fix.Q[0](from.row, from.col)) << r0 << "," << c;
      EXPECT_NEAR(r.bug.Q[0](r0, c), qb(r0, c), 1e-6f) << r0 << "," << c;
      EXPECT_NEAR(r.bug.context[0](r0, c), cb(r0, c), 1e-6f) << r0 << "," << c;
    }
  // The merge without the transpose: token 3's row holds head 1's first two rows.
  EXPECT_NEAR(r.bug.context[0](3, 0), -0.03598548099398613f, 2e-7f);
  EXPECT_NEAR(r.fix.context[0](3, 0), -0.16417644917964935f, 2e-7f);
}

using RC = std::pair<int64_t, int64_t>;  // a cell's row and column

TEST(HeadSplit, ViewWithoutTransposeReadsTheHeadsRowsOutOfTheTokensRows) {
  // T = 6 tokens x 4 columns, 2 heads of 2: head 0's row 1 is token 0's columns 2..3, head 1's
  // row 0 token 3's columns 0..1; the transpose keeps every cell where it is.
  const auto src = [](int64_t r, int64_t c) {
    const StageCell s = HeadSplitSource(HeadSplit::kViewNoTranspose, 6, 4, 2, r, c);
    return std::pair{s.row, s.col};
  };
  EXPECT_EQ(src(0, 0), RC(0, 0));
  EXPECT_EQ(src(1, 0), RC(0, 2));
  EXPECT_EQ(src(1, 1), RC(0, 3));
  EXPECT_EQ(src(2, 0), RC(1, 0));
  EXPECT_EQ(src(0, 2), RC(3, 0));
  EXPECT_EQ(src(5, 3), RC(5, 3));
  const StageCell same = HeadSplitSource(HeadSplit::kTranspose, 6, 4, 2, 1, 2);
  EXPECT_EQ(std::pair(same.row, same.col), RC(1, 2));
  // T = 5 (not a multiple of the heads), 2 heads of 3: the target is the source's inverse.
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 6; ++c) {
      const StageCell s = HeadSplitSource(HeadSplit::kViewNoTranspose, 5, 6, 3, r, c);
      const StageCell t = HeadSplitTarget(HeadSplit::kViewNoTranspose, 5, 6, 3, s);
      EXPECT_EQ(std::pair(t.row, t.col), std::pair(r, c));
    }
}

TEST(HeadSplit, RoundTripsAndIsRefusedWhereNothingIsSplit) {
  const Scenario bug = LoadPreset("bug-view-no-transpose");
  const std::string text = WriteScenario(bug);
  EXPECT_NE(text.find("\"head_split\": \"view_no_transpose\""), std::string::npos);
  EXPECT_EQ(ParseScenario(text), bug);
  EXPECT_EQ(WriteScenario(BugFix("bug-view-no-transpose", bug)).find("head_split"),
            std::string::npos);  // the default is not written
  auto refused = [](const Scenario& s) {
    try {
      ValidateScenario(s);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Scenario per_head = LoadPreset("raschka-3.6-wrapper");
  per_head.projections.head_split = HeadSplit::kViewNoTranspose;
  EXPECT_EQ(refused(per_head),
            "projections.head_split: cannot be \"view_no_transpose\" with per_head (the "
            "wrapper's heads each project their own columns: nothing is split); turn per_head off");
  try {
    ParseScenario(R"({"format": "attention-lab/scenario@1", "input": {"source": "matrix",
      "values": [[1, 2]]}, "projections": {"init": "identity", "head_split": "reshape"}})");
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.field(), "projections.head_split");
  }
}

TEST(HeadSplit, TheWeightsGradientsFollowTheBugsSplitAsFiniteDifferencesDo) {
  // L = -sum_h log weights[h, 3, 1]: each W entry nudged by +-eps in double-checked float32;
  // the analytic gradient takes each cell of grad_Q and grad_K back where the view read it.
  Scenario s = LoadPreset("bug-view-no-transpose");
  const Stages st = RunScenario(s);
  const Gradients g = LossGradients(s, st, 3, 1);
  s.projections.init = ProjectionInit::kMatrix;
  s.projections.W = st.W;
  const auto loss = [&](int w, int64_t i, int64_t j, float eps) {
    Scenario x = s;
    x.projections.W[w](i, j) += eps;
    const Stages y = RunScenario(x);
    double l = 0;
    for (int64_t h = 0; h < 2; ++h) l -= std::log(double(y.Head(y.weights, 0, h)(3, 1)));
    return l;
  };
  const float eps = 1e-2f;
  for (int w : {0, 1})
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        const double numeric = (loss(w, i, j, eps) - loss(w, i, j, -eps)) / (2 * eps);
        const double analytic = w == 0 ? g.grad_W_query(i, j) : g.grad_W_key(i, j);
        EXPECT_NEAR(analytic, numeric, 2e-3 + 2e-3 * std::fabs(numeric))
            << w << ": " << i << "," << j;
      }
}

TEST(HeadSplit, DecodeAndTilesRefuseTheBugNamingTheField) {
  const Scenario s = LoadPreset("bug-view-no-transpose");
  const Stages st = RunScenario(s);
  const std::string why =
      "projections.head_split: a decode reads each token's own row of Q, K "
      "and V; \"view_no_transpose\" gives a head's row r pieces of other "
      "tokens' rows";
  try {
    RunDecode(s, st, {2, 0});
    ADD_FAILURE() << "no error";
  } catch (const InferenceError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  try {
    RunTiled(s, st, 2, 2);
    ADD_FAILURE() << "no error";
  } catch (const InferenceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("projections.head_split: FlashAttention", 0), 0u)
        << e.what();
  }
}

TEST(BugGallery,
     MinusOneBillionInFloat16IsMinusInfinityAndThePaddingRowsAreNanAsPyTorchComputesThem) {
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
    const std::vector<float> bug = GoldenWeightsRow("preset-bug-fp16-mask-fill",
                                                    static_cast<size_t>(i)),
                             fix = GoldenWeightsRow("preset-bug-fp16-mask-fill-fixed",
                                                    static_cast<size_t>(i));
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
  auto diff = [](const char* id) {
    return DiffPrograms(BugFix(id, LoadPreset(id)), LoadPreset(id));
  };
  const ProgramDiff dim = diff("bug-softmax-dim");
  EXPECT_EQ(
      dim.wrong,
      std::vector<std::string>(
          {"weights = torch.softmax(logits, dim=-2)  # over the queries (down each column)"}));
  EXPECT_EQ(dim.right, std::vector<std::string>({"weights = torch.softmax(logits, dim=-1)"}));
  const ProgramDiff mask = diff("bug-mask-after-softmax");
  EXPECT_EQ(mask.wrong,
            std::vector<std::string>(
                {"weights = weights * mask  # 0 where not allowed, and no renormalisation"}));
  EXPECT_EQ(mask.right,
            std::vector<std::string>(
                {"masked = weights * mask  # 0 where attention is not allowed",
                 "weights = masked / masked.sum(dim=-1, keepdim=True)  # rows sum to 1 again"}));
  const ProgramDiff scale = diff("bug-scale-d-model");
  EXPECT_EQ(scale.wrong,
            std::vector<std::string>(
                {"logits = scores * 32**-0.5  # 1 / sqrt(C), C = d_in the embedding width"}));
  EXPECT_EQ(
      scale.right,
      std::vector<std::string>(
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
  // The view without the transpose, for q, k and v and for the merge back.
  const ProgramDiff split = diff("bug-view-no-transpose");
  EXPECT_EQ(split.wrong,
            std::vector<std::string>(
                {"q = Q.view(B, heads, T, head_size)  # no transpose: head h's rows are pieces of "
                 "other tokens' rows",
                 "k = K.view(B, heads, T, head_size)", "v = V.view(B, heads, T, head_size)",
                 "Q, K, V = (m.transpose(1, 2).reshape(B, T, -1) for m in (q, k, v))  # what each "
                 "head reads, side by side, as the app shows them",
                 "context = (weights @ v).view(B, T, d_out)  # no transpose back either"}));
  EXPECT_EQ(split.right,
            std::vector<std::string>(
                {"q = Q.view(B, T, heads, head_size).transpose(1, 2)  # (B, heads, T, head_size)",
                 "k = K.view(B, T, heads, head_size).transpose(1, 2)",
                 "v = V.view(B, T, heads, head_size).transpose(1, 2)",
                 "context = (weights @ v).transpose(1, 2).contiguous().view(B, T, d_out)"}));
  // A decode bug: the full programs are the same, the decode loops differ in the mask's row.
  const char* top = "bug-decode-top-left";
  EXPECT_TRUE(diff(top).wrong.empty());
  const DecodeOptions p2{2, 0};
  const ProgramDiff align = DiffPrograms(BugFix(top, LoadPreset(top)), LoadPreset(top), &p2);
  ASSERT_EQ(align.wrong.size(), 1u);
  ASSERT_EQ(align.right.size(), 1u);
  EXPECT_NE(align.wrong[0].find("top = cache_pos[0]  # mask.align \"top_left\""), std::string::npos)
      << align.wrong[0];
  EXPECT_NE(align.right[0].find("top = first  # mask.align \"bottom_right\""), std::string::npos)
      << align.right[0];
  const ProgramDiff fill = diff("bug-fp16-mask-fill");
  EXPECT_EQ(fill.wrong, std::vector<std::string>({"logits = logits.masked_fill(mask == 0, -1e9)"}));
  EXPECT_EQ(fill.right, std::vector<std::string>(
                            {"logits = logits.masked_fill(mask == 0, torch.finfo(dtype).min)"}));
  const ProgramDiff sink = diff("bug-sink-sigmoid");
  EXPECT_EQ(
      sink.wrong,
      std::vector<std::string>(
          {"# gpt-oss's attention sink applied after attention (torchtitan's FlexAttention "
           "rescale): sigmoid(lse - sink_logit)",
           "lse = torch.logsumexp(logits, dim=-1, keepdim=True)  # -inf for a row that sees no key",
           "gate = torch.sigmoid(lse - sink_logit)",
           "weights = torch.softmax(logits, dim=-1) * gate  # a row that sees no key: nan * 0 = "
           "nan",
           "sink = 1 - gate  # what the sink took of each row"}));
  EXPECT_EQ(
      sink.right,
      std::vector<std::string>(
          {"# gpt-oss's attention sink: one more column with a fixed logit in every row's softmax",
           "full = torch.softmax(torch.cat([logits, sink_logit], dim=-1), dim=-1)  # T keys + the "
           "sink",
           "weights = full[..., :-1]  # the sink's column dropped: rows sum to 1 minus its share",
           "sink = full[..., -1:]  # what the sink took of each row"}));
}

TEST(BugGallery, ATopLeftDecodeStepSeesOnlyTheFirstKeyAsPyTorchDecodesIt) {
  // Raschka's journey, causal, prefill 2 then one token per step (tests/golden/decode: the loop
  // run in torch with torch.ones(L, S).tril() for the bug). The full T x T computations are the
  // same; decoded, each new token of the bug puts weight 1 on "Your".
  const char* id = "bug-decode-top-left";
  const BugRun r = RunBug(id);
  EXPECT_EQ(r.bug.weights[0], r.fix.weights[0]);
  const DecodeOptions p2{2, 0};
  const Stages bug = DecodedStages(r.bug, RunDecode(LoadPreset(id), r.bug, p2));
  const Stages fix = DecodedStages(r.fix, RunDecode(BugFix(id, LoadPreset(id)), r.fix, p2));
  const nlohmann::json golden =
      test::LoadGolden("decode/journey-top-left-p2.json")["decode"]["expected"];
  for (const auto& step : golden["steps"]) {
    const auto& keys = step["keys"];
    const auto& w = step["weights"][0][0];  // batch 0, head 0: q_len x keys
    const int64_t first = step["t"].get<int64_t>() - static_cast<int64_t>(w.size());
    for (size_t r0 = 0; r0 < w.size(); ++r0)
      for (size_t c = 0; c < keys.size(); ++c)
        EXPECT_FLOAT_EQ(bug.weights[0](first + static_cast<int64_t>(r0), keys[c].get<int64_t>()),
                        test::JsonFloat(w[r0][c]))
            << "row " << first + static_cast<int64_t>(r0) << " key " << keys[c];
  }
  for (int64_t i = 2; i < 6; ++i) {
    EXPECT_EQ(bug.weights[0](i, 0), 1.0f) << i;
    EXPECT_EQ(bug.mask.row(i).cast<int>().sum(), 1) << i;  // only "Your" allowed
    for (int64_t d = 0; d < 2; ++d)
      EXPECT_FLOAT_EQ(bug.context[0](i, d), test::JsonFloat(golden["context"][0][i][d])) << i;
  }
  // The fix decodes to the full computation's rows; its mask is the causal mask.
  EXPECT_EQ(fix.mask, r.fix.mask);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j)
      EXPECT_NEAR(fix.weights[0](i, j), r.fix.weights[0](i, j), 1e-6) << i;
  // Keys a step did not hold (later tokens) have score 0 and logit -inf.
  EXPECT_EQ(bug.scores[0](2, 3), 0.0f);
  EXPECT_EQ(bug.logits[0](2, 3), -INFINITY);
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
  EXPECT_EQ(field("bug-decode-top-left", causal),
            "mask.align: the bug-decode-top-left fix needs \"top_left\" and a mask (not \"none\")");
  EXPECT_EQ(field("bug-sink-sigmoid", LoadPreset("gpt-oss-sink")),
            "scaling.sink_form: the bug-sink-sigmoid fix needs \"sigmoid\"");
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

// One cell of a golden's B x H x T x (T or 1) stage.
float GoldenCell(const nlohmann::json& expected, const char* stage, int64_t h, int64_t i,
                 int64_t j) {
  return test::JsonFloat(
      expected[stage][0][static_cast<size_t>(h)][static_cast<size_t>(i)][static_cast<size_t>(j)]);
}

TEST(BugGallery, TheSinkAsASigmoidIsNanInThePaddingRowAndTheConcatFormWhereARowSeesAKey) {
  // "<pad> the cat sat on the mat", causal and the pad key masked: query 0 sees no key. The
  // bug (torchtitan's softmax * sigmoid(lse - sink)) is nan there, the fix (the sink as one
  // more softmax column) gives 0 weights and the sink 1; every other row is the same up to
  // rounding, and both are PyTorch's numbers.
  const BugRun r = RunBug("bug-sink-sigmoid");
  const nlohmann::json bug = test::LoadGolden("scenarios/preset-bug-sink-sigmoid.json")["expected"],
                       fix = test::LoadGolden(
                           "scenarios/preset-bug-sink-sigmoid-fixed.json")["expected"];
  const int64_t T = 7;
  for (int64_t h = 0; h < 2; ++h) {
    const Matrix wb = r.bug.Head(r.bug.weights, 0, h), wf = r.fix.Head(r.fix.weights, 0, h);
    const Matrix sb = r.bug.Head(r.bug.sink, 0, h), sf = r.fix.Head(r.fix.sink, 0, h);
    for (int64_t j = 0; j < T; ++j) {
      EXPECT_TRUE(std::isnan(wb(0, j))) << h << ": " << j;
      EXPECT_TRUE(std::isnan(GoldenCell(bug, "weights", h, 0, j))) << h << ": " << j;
      EXPECT_EQ(wf(0, j), 0.0f) << h << ": " << j;
      EXPECT_EQ(GoldenCell(fix, "weights", h, 0, j), 0.0f) << h << ": " << j;
    }
    EXPECT_EQ(sb(0, 0), 1.0f);  // 1 - sigmoid(-inf)
    EXPECT_EQ(sf(0, 0), 1.0f);  // exp(s - s) / exp(s - s)
    EXPECT_EQ(GoldenCell(bug, "sink", h, 0, 0), 1.0f);
    EXPECT_EQ(GoldenCell(fix, "sink", h, 0, 0), 1.0f);
    for (int64_t i = 1; i < T; ++i) {
      EXPECT_NEAR(sb(i, 0), GoldenCell(bug, "sink", h, i, 0), 3e-7f) << h << ": " << i;
      EXPECT_NEAR(sf(i, 0), GoldenCell(fix, "sink", h, i, 0), 3e-7f) << h << ": " << i;
      EXPECT_NEAR(sb(i, 0), sf(i, 0), 3e-7f) << h << ": " << i;
      EXPECT_GT(sb(i, 0), 0.01f) << h << ": " << i;  // the sink takes a real share
      for (int64_t j = 0; j < T; ++j) {
        EXPECT_NEAR(wb(i, j), GoldenCell(bug, "weights", h, i, j), 3e-7f)
            << h << ": " << i << "," << j;
        EXPECT_NEAR(wf(i, j), GoldenCell(fix, "weights", h, i, j), 3e-7f)
            << h << ": " << i << "," << j;
        EXPECT_NEAR(wb(i, j), wf(i, j), 3e-7f) << h << ": " << i << "," << j;
      }
    }
  }
  EXPECT_TRUE(std::isnan(r.bug.context[0](0, 0)));
  EXPECT_EQ(r.fix.context[0](0, 0), 0.0f);
  EXPECT_NEAR(r.bug.context[0](3, 1), r.fix.context[0](3, 1), 1e-6f);
}

TEST(SinkForm, RoundTripsAndNeedsASink) {
  const Scenario bug = LoadPreset("bug-sink-sigmoid");
  EXPECT_EQ(bug.scaling.sink_form, SinkForm::kSigmoid);
  const std::string text = WriteScenario(bug);
  EXPECT_NE(text.find("\"sink_form\": \"sigmoid\""), std::string::npos) << text;
  EXPECT_EQ(ParseScenario(text), bug);
  EXPECT_EQ(WriteScenario(BugFix("bug-sink-sigmoid", bug)).find("sink_form"),
            std::string::npos);  // the default is not written
  Scenario no_sink = LoadPreset("raschka-3.5-causal");
  no_sink.scaling.sink_form = SinkForm::kSigmoid;
  try {
    ValidateScenario(no_sink);
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()),
              "scaling.sink_form: \"sigmoid\" needs an attention sink (scaling.sink)");
  }
  try {
    ParseScenario(R"({"format": "attention-lab/scenario@1", "input": {"source": "matrix",
      "values": [[1, 2]]}, "projections": {"init": "identity"},
      "scaling": {"sink": 1.0, "sink_form": "exp"}})");
    ADD_FAILURE() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.field(), "scaling.sink_form");
  }
}

TEST(SinkForm, TheSigmoidFormIsTheConcatFormToRoundingWhenEveryRowSeesAKey) {
  // The golden scenario with the sigmoid form (every row causal, so every row sees a key), its
  // weights PyTorch's, and the same scenario with the concat form: the same function.
  const Scenario sigmoid = GoldenScenario("sink-sigmoid-per-head-causal");
  ASSERT_EQ(sigmoid.scaling.sink_form, SinkForm::kSigmoid);
  Scenario concat = sigmoid;
  concat.scaling.sink_form = SinkForm::kConcat;
  const Stages a = RunScenario(sigmoid), b = RunScenario(concat);
  const nlohmann::json golden =
      test::LoadGolden("scenarios/sink-sigmoid-per-head-causal.json")["expected"];
  float worst = 0;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_NEAR(a.Head(a.sink, 0, h)(i, 0), GoldenCell(golden, "sink", h, i, 0), 3e-7f);
      worst = std::max(worst, std::fabs(a.Head(a.sink, 0, h)(i, 0) - b.Head(b.sink, 0, h)(i, 0)));
      for (int64_t j = 0; j < 8; ++j) {
        EXPECT_NEAR(a.Head(a.weights, 0, h)(i, j), GoldenCell(golden, "weights", h, i, j), 3e-7f);
        worst = std::max(worst,
                         std::fabs(a.Head(a.weights, 0, h)(i, j) - b.Head(b.weights, 0, h)(i, j)));
      }
    }
  EXPECT_LT(worst, 3e-7f);
}

TEST(SinkForm, DecodeAndTilesFollowTheSigmoidForm) {
  const Scenario s = LoadPreset("bug-sink-sigmoid");
  const Stages st = RunScenario(s);
  const DecodeRun decode = RunDecode(s, st, {2, 0});
  EXPECT_LE(decode.max_abs_diff, decode.tolerance);  // nan where the full context is nan
  ASSERT_FALSE(decode.steps.empty());
  EXPECT_TRUE(std::isnan(decode.steps[0].weights[0](0, 0)));
  EXPECT_EQ(decode.steps[0].sink[0](0, 0), 1.0);
  EXPECT_TRUE(std::isnan(decode.context[0](0, 0)));
  const TiledRun tiled = RunTiled(s, st, 2, 3);
  EXPECT_LE(tiled.max_abs_diff, tiled.tolerance);
  EXPECT_TRUE(std::isnan(tiled.context[0](0, 0)));
  for (int64_t h = 0; h < 2; ++h) {
    EXPECT_EQ(tiled.sink[static_cast<size_t>(h)](0, 0), 1.0);
    for (int64_t i = 1; i < 7; ++i)
      EXPECT_NEAR(tiled.sink[static_cast<size_t>(h)](i, 0), st.Head(st.sink, 0, h)(i, 0), 1e-6)
          << h << ": " << i;
  }
  EXPECT_NEAR(tiled.context[0](4, 2), st.context[0](4, 2), 1e-6);
}

TEST(SinkForm, TheGradientsAreTheConcatFormsWhereTheRowSeesAKey) {
  // The sigmoid form is the concat form's function wherever a row sees a key, so the same
  // backward: L = -sum_h log weights[h, 4, 2] through both forms, and W_query nudged by +-eps
  // through the sigmoid form's forward (finite differences in double-checked float32).
  Scenario sigmoid = LoadPreset("bug-sink-sigmoid");
  Scenario concat = BugFix("bug-sink-sigmoid", sigmoid);
  const Stages a = RunScenario(sigmoid), b = RunScenario(concat);
  const Gradients ga = LossGradients(sigmoid, a, 4, 2), gb = LossGradients(concat, b, 4, 2);
  EXPECT_NEAR(ga.loss, gb.loss, 1e-6);
  ASSERT_EQ(ga.grad_W_query.rows(), 4);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(ga.grad_W_query(i, j), gb.grad_W_query(i, j), 1e-5) << i << "," << j;
      EXPECT_NEAR(ga.grad_W_key(i, j), gb.grad_W_key(i, j), 1e-5) << i << "," << j;
    }
  sigmoid.projections.init = ProjectionInit::kMatrix;
  sigmoid.projections.W = a.W;
  const auto loss = [&](int64_t i, int64_t j, float eps) {
    Scenario x = sigmoid;
    x.projections.W[0](i, j) += eps;
    const Stages y = RunScenario(x);
    return -std::log(double(y.Head(y.weights, 0, 0)(4, 2))) -
           std::log(double(y.Head(y.weights, 0, 1)(4, 2)));
  };
  for (int64_t i = 0; i < 4; ++i) {
    const double numeric = (loss(i, 1, 1e-2f) - loss(i, 1, -1e-2f)) / 2e-2;
    EXPECT_NEAR(ga.grad_W_query(i, 1), numeric, 2e-3 + 2e-3 * std::fabs(numeric)) << i;
  }
}

// The loop programs write the sigmoid form as the engine's loops run it (inference.cpp): a
// decode step rescales its plain softmax by sigmoid(lse - sink); the tiles keep the online
// softmax without a sink column and multiply O / l by sigmoid(m + log l - sink) after the last
// tile (tools/check_loop_codegen.py runs both against the JSON).
TEST(SinkForm, TheLoopProgramsWriteTheSigmoidForm) {
  const Scenario s = LoadPreset("bug-sink-sigmoid");
  const std::string decode = GenerateDecodeCode(s, {2, 0});
  EXPECT_NE(decode.find("    gate = torch.sigmoid(lse - sink_logits.view(1, heads, 1, 1))"),
            std::string::npos)
      << decode;
  EXPECT_NE(decode.find("    step_weights = torch.softmax(step_logits, dim=-1) * gate"),
            std::string::npos);
  EXPECT_EQ(decode.find("with_sink"), std::string::npos);  // no sink column
  const std::string tiled = GenerateTiledCode(s, 2, 2);
  EXPECT_NE(tiled.find("            gate = torch.sigmoid((m + torch.log(l)) - sink_logits[h])"),
            std::string::npos)
      << tiled;
  EXPECT_NE(tiled.find("            out = O / l[:, None] * gate[:, None]"), std::string::npos);
  EXPECT_NE(tiled.find("m = torch.full((i1 - i0,), float('-inf'))"), std::string::npos);
  // The concat form (the bug's fix) keeps the sink's column in the online softmax.
  const std::string fixed = GenerateTiledCode(BugFix("bug-sink-sigmoid", s), 2, 2);
  EXPECT_NE(fixed.find("m = sink_logits[h].repeat(i1 - i0)"), std::string::npos) << fixed;
  EXPECT_EQ(fixed.find("gate"), std::string::npos);
}

}  // namespace
}  // namespace attnlab
