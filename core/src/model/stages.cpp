// stages.cpp: see stages.h.
#include "attnlab/model/stages.h"

#include <algorithm>

#include "attnlab/model/scenario.h"

namespace attnlab {

namespace {

// Every stage sorted by the row's field `place`.
std::vector<Stage> SortedBy(int StageRow::*place) {
  std::vector<Stage> out;
  for (const StageRow& row : kStageTable) out.push_back(row.stage);
  std::sort(out.begin(), out.end(),
            [place](Stage a, Stage b) { return RowOf(a).*place < RowOf(b).*place; });
  return out;
}

}  // namespace

const std::vector<Stage>& AllStages() {
  static const std::vector<Stage> all = SortedBy(&StageRow::pipeline_place);
  return all;
}

const std::vector<Stage>& ShowStages() {
  static const std::vector<Stage> all = SortedBy(&StageRow::show_place);
  return all;
}

std::optional<Stage> ParseStage(std::string_view name) {
  for (const StageRow& row : kStageTable)
    if (name == row.name) return row.stage;
  return std::nullopt;
}

bool StageInRun(Stage stage, const Scenario& s) {
  switch (stage) {
    case Stage::kX:
      return s.input.source != InputSource::kQkv;  // qkv: Q, K, V given or drawn, no X
    case Stage::kQRot:
    case Stage::kKRot:
      return s.positions.kind == PositionKind::kRope;
    case Stage::kWeightsDropped:
      return s.dropout.p > 0;
    case Stage::kSink:
      return !s.scaling.sink.empty();
    default:
      return true;
  }
}

std::string StageNameList(const std::vector<Stage>& stages, const char* last_separator) {
  std::string out;
  for (size_t i = 0; i < stages.size(); ++i)
    out += std::string(i == 0                   ? ""
                       : i + 1 == stages.size() ? last_separator
                                                : ", ") +
           StageName(stages[i]);
  return out;
}

}  // namespace attnlab
