// stages_test.cpp: model/stages.h, the one table of the stages. Every Stage value has its row
// (kStageTable's size is also checked at compile time), at its index, with a unique name that
// reads back; the two orders (pipeline, show) hold every stage once.
#include "attnlab/model/stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "attnlab/model/scenario.h"

namespace attnlab {
namespace {

TEST(StageTable, EveryStageHasItsRowAtItsIndex) {
  ASSERT_EQ(kStageCount, static_cast<int>(Stage::kSink) + 1);
  std::set<std::string> names;
  for (int i = 0; i < kStageCount; ++i) {
    const StageRow& row = kStageTable[i];
    EXPECT_EQ(static_cast<int>(row.stage), i) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << "two stages are called " << row.name;
    ASSERT_TRUE(ParseStage(row.name).has_value()) << row.name;
    EXPECT_EQ(*ParseStage(row.name), row.stage) << row.name;
    EXPECT_STRNE(row.help, "") << row.name;
    EXPECT_STRNE(row.print_what, "") << row.name;
    // A stage a run may lack says why, in both places.
    EXPECT_EQ(*row.absent == '\0', *row.absent_note == '\0') << row.name;
    // Projected stages have heads; key-side ones are projected.
    if (row.projected) {
      EXPECT_TRUE(row.per_head) << row.name;
    }
    if (row.key_side) {
      EXPECT_TRUE(row.projected) << row.name;
    }
  }
  EXPECT_FALSE(ParseStage("Weights").has_value());
  EXPECT_FALSE(ParseStage("").has_value());
}

TEST(StageTable, OrdersHoldEveryStageOnce) {
  for (const std::vector<Stage>* order : {&AllStages(), &ShowStages()}) {
    ASSERT_EQ(static_cast<int>(order->size()), kStageCount);
    std::set<Stage> seen(order->begin(), order->end());
    EXPECT_EQ(static_cast<int>(seen.size()), kStageCount);
  }
  EXPECT_EQ(StageNameList(AllStages(), " or "),
            "X, Q, K, V, Q_rot, K_rot, scores, mask, logits, weights, sink, weights_dropped or "
            "context");
  EXPECT_EQ(StageNameList(ShowStages()),
            "X, Q, K, V, Q_rot, K_rot, scores, logits, mask, weights, weights_dropped, sink, "
            "context");
}

TEST(StageTable, FactsOfNamedStages) {
  EXPECT_STREQ(StageName(Stage::kWeightsDropped), "weights_dropped");
  EXPECT_TRUE(StageIsPerHead(Stage::kSink));
  EXPECT_FALSE(StageIsPerHead(Stage::kContext));
  EXPECT_TRUE(StageIsKeySide(Stage::kKRot));
  EXPECT_FALSE(StageIsKeySide(Stage::kQRot));
  EXPECT_TRUE(StageIsWeights(Stage::kWeightsDropped));
  EXPECT_FALSE(StageIsWeights(Stage::kSink));
  EXPECT_FALSE(RowOf(Stage::kMask).batched);
}

TEST(StageTable, StageInRunFollowsTheScenario) {
  Scenario s;
  EXPECT_TRUE(StageInRun(Stage::kX, s));
  EXPECT_FALSE(StageInRun(Stage::kQRot, s));
  EXPECT_FALSE(StageInRun(Stage::kWeightsDropped, s));
  EXPECT_FALSE(StageInRun(Stage::kSink, s));
  EXPECT_TRUE(StageInRun(Stage::kMask, s));
  s.positions.kind = PositionKind::kRope;
  s.dropout.p = 0.5;
  s.scaling.sink = {0.5};
  s.input.source = InputSource::kQkv;
  EXPECT_FALSE(StageInRun(Stage::kX, s));
  EXPECT_TRUE(StageInRun(Stage::kKRot, s));
  EXPECT_TRUE(StageInRun(Stage::kWeightsDropped, s));
  EXPECT_TRUE(StageInRun(Stage::kSink, s));
}

}  // namespace
}  // namespace attnlab
