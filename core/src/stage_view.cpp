// stage_view.cpp: see stage_view.h.
#include "attnlab/stage_view.h"

#include <cmath>

#include "attnlab/text.h"

namespace attnlab {

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kScores:
      return "scores";
    case Stage::kMask:
      return "mask";
    case Stage::kLogits:
      return "logits";
    case Stage::kWeights:
      return "weights";
    case Stage::kWeightsDropped:
      return "weights_dropped";
    case Stage::kContext:
      return "context";
  }
  return "";
}

const std::vector<Stage>& AllStages() {
  static const std::vector<Stage> all = {Stage::kScores,  Stage::kMask,           Stage::kLogits,
                                         Stage::kWeights, Stage::kWeightsDropped, Stage::kContext};
  return all;
}

std::optional<Stage> ParseStage(const std::string& name) {
  for (Stage s : AllStages())
    if (name == StageName(s)) return s;
  return std::nullopt;
}

bool StageIsPerHead(Stage s) {
  return s == Stage::kScores || s == Stage::kLogits || s == Stage::kWeights ||
         s == Stage::kWeightsDropped;
}

namespace {

std::string Num(double v) { return FormatNumber(v, NumberStyle::kGeneral, 6); }

}  // namespace

StageView ExtractStage(const Stages& st, const Scenario& sc, Stage stage, int64_t head,
                       int64_t batch) {
  const Shape& sh = st.shape;
  if (batch < 0 || batch >= sh.B)
    throw std::invalid_argument("batch " + std::to_string(batch) +
                                " is out of range: the scenario has a batch of " +
                                std::to_string(sh.B) + " (0.." + std::to_string(sh.B - 1) + ")");
  if (head < 0 || head >= sh.H)
    throw std::invalid_argument(
        "head " + std::to_string(head) + " is out of range: the scenario has " +
        std::to_string(sh.H) +
        (sh.H == 1 ? " head (0)" : " heads (0.." + std::to_string(sh.H - 1) + ")"));
  if (!StageIsPerHead(stage) && head != 0)
    throw std::invalid_argument(std::string(StageName(stage)) + " has no heads (use head 0)");
  if (stage == Stage::kWeightsDropped && st.weights_dropped.empty())
    throw std::invalid_argument("weights_dropped needs dropout p > 0 (this scenario has none)");

  StageView v;
  v.stage = stage;
  v.head = head;
  v.batch = batch;
  v.row_labels = st.tokens;
  v.col_labels = st.tokens;
  v.row_axis = "query";
  v.col_axis = "key";
  const MaskMatrix hidden = (st.mask.array() == 0).cast<uint8_t>();
  switch (stage) {
    case Stage::kScores:
      v.values = st.Head(st.scores, batch, head);
      v.diverging = true;
      break;
    case Stage::kLogits:
      v.values = st.Head(st.logits, batch, head);
      v.masked = hidden;
      v.diverging = true;
      break;
    case Stage::kWeights:
    case Stage::kWeightsDropped: {
      v.values = st.Head(stage == Stage::kWeights ? st.weights : st.weights_dropped, batch, head);
      v.masked = hidden;
      // Weights in [0, 1] use a sequential map; "sum" normalisation can leave that range.
      const Matrix& w = v.values;
      bool in_unit = true;
      for (Eigen::Index i = 0; i < w.size(); ++i)
        if (std::isfinite(w.data()[i]) && w.data()[i] < 0) in_unit = false;
      v.diverging = !in_unit;
      break;
    }
    case Stage::kMask:
      v.values = st.mask.cast<float>();
      v.masked = hidden;
      break;
    case Stage::kContext:
      v.values = st.context[batch];
      v.diverging = true;
      v.col_labels.clear();
      for (int64_t c = 0; c < v.values.cols(); ++c) v.col_labels.push_back("d" + std::to_string(c));
      v.col_axis = "dimension";
      break;
  }
  std::string t = StageName(stage);
  if (StageIsPerHead(stage) && sh.H > 1) t += ", head " + std::to_string(head);
  if (stage != Stage::kMask && sh.B > 1) t += ", batch " + std::to_string(batch);
  if (stage == Stage::kMask) {
    t += std::string(" (") + Name(sc.mask.kind) + ")";
  } else if (stage != Stage::kScores) {
    t += std::string(" (") + (sc.scaling.sqrt_dk ? "scaled by 1/\u221Ad_k" : "unscaled") +
         ", multiplier " + Num(sc.scaling.multiplier);
    if (stage == Stage::kWeights || stage == Stage::kWeightsDropped)
      t += std::string(", ") + Name(sc.normalization);
    if (stage == Stage::kWeightsDropped) t += ", dropout p " + Num(sc.dropout.p);
    t += ")";
  } else {
    t += " (q\u00B7k, before scaling)";
  }
  v.title = t;
  return v;
}

StageView DifferenceView(const StageView& a, const StageView& b, const std::string& name_a,
                         const std::string& name_b) {
  if (a.values.rows() != b.values.rows() || a.values.cols() != b.values.cols())
    throw std::invalid_argument("cannot compare a " + std::to_string(a.values.rows()) + " x " +
                                std::to_string(a.values.cols()) + " " + StageName(a.stage) +
                                " with a " + std::to_string(b.values.rows()) + " x " +
                                std::to_string(b.values.cols()) + " one");
  StageView d = a;
  d.values = a.values - b.values;
  d.diverging = true;
  if (a.masked.size() > 0 && b.masked.size() > 0) {
    d.masked = a.masked.cwiseMax(b.masked);
  } else if (b.masked.size() > 0) {
    d.masked = b.masked;
  }
  // -inf - -inf is nan; a masked cell is drawn hatched whatever its value.
  d.title = std::string(StageName(a.stage)) + ": " + name_a + " \u2212 " + name_b;
  return d;
}

}  // namespace attnlab
