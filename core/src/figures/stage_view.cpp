// stage_view.cpp: see stage_view.h.
#include "attnlab/figures/stage_view.h"

#include <cmath>

#include "attnlab/base/text.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

std::pair<int64_t, int64_t> StageSize(Stage stage, const Shape& sh) {
  switch (stage) {
    case Stage::kX:
      return {sh.T, sh.d_in};
    case Stage::kQ:
    case Stage::kK:
    case Stage::kQRot:
    case Stage::kKRot:
      return {sh.T, sh.dh};
    case Stage::kV:
      return {sh.T, sh.dh_v};
    case Stage::kContext:
      return {sh.T, sh.d_v};
    case Stage::kSink:
      return {sh.T, 1};
    default:
      return {sh.T, sh.T};
  }
}

namespace {

// The cells of `stage` for (head, batch) in a float64 run (or the float32 reference of a
// low-precision one), as ExtractStage takes them from the float32 stages; empty for the mask
// (0/1 bytes) and for a stage the run does not have.
template <typename S>
MatrixOf<S> CellsOf(const StageTensors<S>& f, Stage stage, const Shape& sh, int64_t head,
                    int64_t batch) {
  using MatrixS = MatrixOf<S>;
  using StackS = MatrixStackOf<S>;
  const size_t m = static_cast<size_t>(batch * sh.H + head), b = static_cast<size_t>(batch);
  auto at = [](const StackS& stack, size_t i) { return i < stack.size() ? stack[i] : MatrixS(); };
  const StackS* stack = StageStack(f, stage);
  if (!stack) return MatrixS();   // the mask: 0/1 bytes
  if (StageIsProjected(stage)) {  // a head's columns; the key side's K/V head (StageColumnHead)
    const int64_t w = StageSize(stage, sh).second;
    return b < stack->size()
               ? MatrixS((*stack)[b].middleCols(StageColumnHead(stage, sh, head) * w, w))
               : MatrixS();
  }
  return at(*stack, StageIsPerHead(stage) ? m : b);
}

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
  // A stage the run did not make (X of a qkv input, Q_rot without RoPE, weights_dropped
  // without dropout, sink without scaling.sink): the row says why.
  if (const char* absent = RowOf(stage).absent; *absent && StageStack(st, stage)->empty())
    throw std::invalid_argument(std::string(StageName(stage)) + absent);

  StageView v;
  if (stage == Stage::kMask)
    v.values = st.mask.cast<float>();
  else if (StageIsProjected(stage))  // V: its own dh_v columns
    // K and V: the K/V head query head `head` reads (itself unless kv_heads groups them).
    v.values = (*StageStack(st, stage))[batch].middleCols(
        StageColumnHead(stage, sh, head) * StageSize(stage, sh).second,
        StageSize(stage, sh).second);
  else if (StageIsPerHead(stage))
    v.values = st.Head(*StageStack(st, stage), batch, head);
  else
    v.values = (*StageStack(st, stage))[batch];
  if (st.f64) v.values64 = CellsOf(*st.f64, stage, sh, head, batch);
  const ValueScan scan = ScanStage(stage, v.values);
  static_cast<HeatmapContent&>(v) =
      StageContent(st, sc, stage, head, batch, TokenLabels(st.tokens), scan);
  if (v.hatch_masked) v.masked = (st.mask.array() == 0).cast<uint8_t>();
  return v;
}

Matrix ReferenceCells(const Stages& st, Stage stage, int64_t head, int64_t batch) {
  if (!st.f32 || batch < 0 || batch >= st.shape.B || head < 0 || head >= st.shape.H) return {};
  return CellsOf(*st.f32, stage, st.shape, head, batch);
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
  if (a.values64.size() > 0 && b.values64.size() > 0)
    d.values64 = a.values64 - b.values64;
  else
    d.values64.resize(0, 0);
  d.diverging = true;
  if (a.masked.size() > 0 && b.masked.size() > 0) {
    d.masked = a.masked.cwiseMax(b.masked);
  } else if (b.masked.size() > 0) {
    d.masked = b.masked;
  }
  // -inf - -inf is nan; a masked cell is drawn hatched whatever its value.
  d.title = std::string(StageName(a.stage)) + ": " + name_a + " \u2212 " + name_b;
  d.subtitle = name_a + " \u2212 " + name_b + ", cell by cell";
  return d;
}

ComparedViews CompareViews(StageView a, StageView b, const std::string& name_a,
                           const std::string& name_b) {
  ComparedViews out;
  out.diff = DifferenceView(a, b, name_a, name_b);
  out.diff.help =
      "A \u2212 B cell by cell, white where they agree; hatched where either is masked.";
  auto retitle = [](StageView& v, const std::string& who, const char* help) {
    v.subtitle = v.title + (v.subtitle.empty() ? "" : ", " + v.subtitle);
    v.title = who;
    v.help = help;
  };
  retitle(a, "A: " + name_a + " (current)", "A: the current state, as the heatmaps view shows it.");
  retitle(b, "B: " + name_b,
          "B: A with one thing changed (or the pinned snapshot), run in its own engine.");
  out.a = std::move(a);
  out.b = std::move(b);
  return out;
}

}  // namespace attnlab
