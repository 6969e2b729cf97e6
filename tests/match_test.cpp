// match_test.cpp: MatchPasted against what real PyTorch 1.13 prints for the book's chapter 3
// programs, run as written and with each known mistake (tests/golden/match/cases.json, made by
// tools/make_match_goldens.py), and the one list of causes holding the whole bug gallery.
#include "attnlab/python/match.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "attnlab/model/bugs.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/torch_print.h"
#include "test_util.h"

namespace attnlab {
namespace {

TEST(Match, GoldenPrintsOfTheBookAndItsMistakes) {
  for (const auto& c : test::LoadGolden("match/cases.json")) {
    const std::string name = c["name"];
    Scenario s = LoadPreset(c["preset"]);
    if (c.contains("d_out")) s.projections.d_out = c["d_out"];
    const MatchResult r = MatchPasted(s, ParseTensorText(c["text"].get<std::string>()));
    EXPECT_EQ(Name(r.verdict), c["verdict"].get<std::string>()) << name << ": " << r.cause_text;
    if (!c["stage"].is_null()) {
      EXPECT_EQ(r.stage, c["stage"].get<std::string>()) << name;
    }
    EXPECT_EQ(r.cause, c["cause"].is_null() ? "" : c["cause"].get<std::string>())
        << name << ": " << r.cause_text;
    if (r.verdict == MatchVerdict::kMatch || r.verdict == MatchVerdict::kExplained) {
      EXPECT_EQ(r.differing, 0) << name;
      EXPECT_LE(r.max_abs_diff, 5e-5) << name;  // half a unit of the 4th decimal
    }
  }
}

// Where it matched: the row a learner printed (weights[1]), the batch entry of a batch.
TEST(Match, NamesTheRowsBatchAndHead) {
  const Scenario journey = LoadPreset("raschka-journey");
  const MatchResult row = MatchPasted(
      journey, ParseTensorText("tensor([0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820])"));
  EXPECT_EQ(row.verdict, MatchVerdict::kMatch);
  EXPECT_EQ(row.stage, "weights");
  EXPECT_EQ(row.row_begin, 1);
  EXPECT_EQ(row.row_end, 2);
  const Scenario mha = LoadPreset("raschka-3.6-mha");
  const Stages st = RunScenario(mha);
  // Batch 1, head 1's weights, as weights[1, 1] prints them.
  const Matrix& w = st.Head(st.weights, 1, 1);
  const std::vector<float> v(w.data(), w.data() + w.size());
  const std::vector<int64_t> shape = {w.rows(), w.cols()};
  const MatchResult head = MatchPasted(mha, ParseTensorText(TorchTensorString(v, shape)));
  EXPECT_EQ(head.verdict, MatchVerdict::kMatch);
  EXPECT_EQ(head.stage, "weights");
  // Both batch entries hold the same input: the first that equals it is batch 0, head 1.
  EXPECT_EQ(head.batch, 0);
  EXPECT_EQ(head.head, 1);
}

// Close: the book's weights with three cells off in the last digit or two (a GPU's rounding):
// the differing cells are marked, the largest difference given.
TEST(Match, CloseMarksTheDifferingCells) {
  const MatchResult r =
      MatchPasted(LoadPreset("raschka-journey"),
                  ParseTensorText("tensor([[0.1551, 0.2104, 0.2059, 0.1413, 0.1074, 0.1799],\n"
                                  "        [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820],\n"
                                  "        [0.1503, 0.2256, 0.2192, 0.1315, 0.0914, 0.1819],\n"
                                  "        [0.1591, 0.1994, 0.1962, 0.1477, 0.1206, 0.1769],\n"
                                  "        [0.1610, 0.1949, 0.1923, 0.1501, 0.1265, 0.1752],\n"
                                  "        [0.1557, 0.2092, 0.2048, 0.1419, 0.1089, 0.1796]])"));
  EXPECT_EQ(r.verdict, MatchVerdict::kClose) << r.cause_text;
  EXPECT_EQ(r.stage, "weights");
  EXPECT_EQ(r.differing, 1);
  ASSERT_EQ(r.differs.size(), 36u);
  EXPECT_EQ(r.differs[35], 1);
  EXPECT_EQ(r.differs[34], 0);
  EXPECT_NEAR(r.max_abs_diff, 0.0002, 2e-5);
}

TEST(Match, NoStageOfThatShape) {
  const MatchResult r =
      MatchPasted(LoadPreset("raschka-journey"), ParseTensorText("[[1, 2, 3, 4, 5, 6, 7]]"));
  EXPECT_EQ(r.verdict, MatchVerdict::kNone);
  EXPECT_EQ(r.stage, "");
  EXPECT_EQ(r.cause_text, "no stage of the scenario has the shape (1, 7)");
}

// One list: every bug of the gallery is a cause, and its variant undone by BugFix gives back
// the scenario's numbers (ApplyBug is BugFix's inverse) on a scenario where it applies.
TEST(Match, KnownCausesHoldTheWholeGallery) {
  std::set<std::string> ids;
  for (const KnownCause& c : KnownCauses()) {
    EXPECT_TRUE(ids.insert(c.id).second) << "twice: " << c.id;
    EXPECT_FALSE(c.text.empty()) << c.id;
  }
  for (const BugInfo& b : Bugs()) {
    EXPECT_EQ(ids.count(b.id), 1u) << b.id;
    const Scenario fix = BugFix(b.id, LoadPreset(b.id));
    const std::optional<Scenario> bug = ApplyBug(b.id, fix);
    ASSERT_TRUE(bug.has_value()) << b.id;
    const Stages want = RunScenario(LoadPreset(b.id)), got = RunScenario(*bug);
    EXPECT_EQ(PrintStage(got, "weights")->text, PrintStage(want, "weights")->text) << b.id;
  }
}

}  // namespace
}  // namespace attnlab
