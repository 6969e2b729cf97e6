// inference_views.cpp: see inference_views.h.
#include "attnlab/figures/inference_views.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/base/text.h"

namespace attnlab {
namespace {

/// Refuses `i` outside 0..n-1, naming `what` and the run ("step 9 is out of range: the decode
/// has 5 steps (0..4)").
void CheckIndex(const char* what, int64_t i, int64_t n, const std::string& of) {
  if (i < 0 || i >= n)
    throw std::invalid_argument(std::string(what) + " " + std::to_string(i) +
                                " is out of range: " + of + " has " + std::to_string(n) + " " +
                                what + (n == 1 ? "" : "s") +
                                (n > 0 ? " (0.." + std::to_string(n - 1) + ")" : ""));
}

/// The label of position p: its token as the heatmaps show it and the position, "starts 2".
std::string PositionLabel(const std::vector<std::string>& labels, int64_t p) {
  const std::string tok = p < static_cast<int64_t>(labels.size()) ? labels[p] : "";
  return tok.empty() ? std::to_string(p) : tok + " " + std::to_string(p);
}

/// "2 4 5" of positions, "none" for none.
std::string Positions(const std::vector<int64_t>& pos) {
  std::string out;
  for (int64_t p : pos) out += (out.empty() ? "" : " ") + std::to_string(p);
  return out.empty() ? "none" : out;
}

/// `parts` joined by " · ".
std::string Dotted(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " \u00B7 ") + p;
  return out;
}

/// The matrix drawn (float32) and, for a float64 run, its doubles.
void SetValues(StageView& v, const MatrixD& cells, const Scenario& s) {
  v.values = cells.cast<float>();
  if (s.dtype == Dtype::kFloat64) v.values64 = cells;
}

}  // namespace

FigureOptions StepFigureOptions() { return FigureOptions{}; }

StageView DecodeStepView(const Stages& st, const Scenario& s, const DecodeRun& run, int64_t step,
                         int64_t head, int64_t batch) {
  const Shape& sh = st.shape;
  CheckIndex("step", step, static_cast<int64_t>(run.steps.size()), "the decode");
  CheckIndex("head", head, sh.H, "the scenario");
  CheckIndex("batch", batch, sh.B, "the scenario");
  const DecodeStep& d = run.steps[static_cast<size_t>(step)];
  const size_t bh = static_cast<size_t>(batch * sh.H + head);
  const MatrixD& w = d.weights[bh];
  const bool sink = !d.sink.empty();
  MatrixD cells(w.rows(), w.cols() + (sink ? 1 : 0));
  cells.leftCols(w.cols()) = w;
  if (sink) cells.rightCols(1) = d.sink[bh];

  StageView v;
  v.stage = Stage::kWeights;
  v.head = head;
  v.batch = batch;
  SetValues(v, cells, s);
  const std::vector<std::string> labels = TokenLabels(st.tokens);
  for (int64_t p = d.first; p < d.t; ++p) v.row_labels.push_back(PositionLabel(labels, p));
  for (int64_t p : d.keys) v.col_labels.push_back(PositionLabel(labels, p));
  if (sink) v.col_labels.push_back("sink");
  v.row_axis = "new token";
  v.col_axis = sink ? "cached key (and the sink)" : "cached key";
  v.hatch_masked = true;
  v.masked = MaskMatrix::Zero(cells.rows(), cells.cols());
  v.masked.leftCols(w.cols()) = (d.allowed.array() == 0).cast<uint8_t>();
  v.title = "decode step " + std::to_string(step + 1) + " of " + std::to_string(run.steps.size()) +
            ": weights over the cache";
  std::vector<std::string> parts;
  if (sh.H > 1) parts.push_back("head " + std::to_string(head));
  if (sh.B > 1) parts.push_back("batch " + std::to_string(batch));
  parts.push_back("t = " + std::to_string(d.t) + ", cache " + std::to_string(d.cache_len) +
                  " keys, evicted " + Positions(d.evicted));
  parts.push_back("max |decoded \u2212 full| " +
                  FormatNumber(d.max_abs_diff, NumberStyle::kGeneral, 3));
  if (s.dtype != Dtype::kFloat32)
    parts.push_back(s.scaling.softmax_dtype == SoftmaxDtype::kFloat32
                        ? std::string(Name(s.dtype)) + ", weights float32"
                        : std::string(Name(s.dtype)));
  v.subtitle = Dotted(parts);
  v.help =
      "The step's queries against the keys the cache holds: each row is the same row of the "
      "full computation's weights, restricted to the kept keys.";
  return v;
}

StageView TileStateView(const Stages& st, const Scenario& s, const TiledRun& run, int64_t step) {
  CheckIndex("step", step, static_cast<int64_t>(run.steps.size()), "the tiled run");
  const TileStep& t = run.steps[static_cast<size_t>(step)];
  MatrixD cells(t.rows, 3 + t.O.cols());
  for (int64_t r = 0; r < t.rows; ++r) {
    const size_t ri = static_cast<size_t>(r);
    cells(r, 0) = t.m[ri];
    cells(r, 1) = t.l[ri];
    cells(r, 2) = t.rescale[ri];
    cells.row(r).tail(t.O.cols()) = t.O.row(r);
  }
  StageView v;
  v.stage = Stage::kContext;
  v.head = t.head;
  v.batch = t.batch;
  SetValues(v, cells, s);
  const std::vector<std::string> labels = TokenLabels(st.tokens);
  for (int64_t p = t.row0; p < t.row0 + t.rows; ++p)
    v.row_labels.push_back(PositionLabel(labels, p));
  v.col_labels = {"m", "l", "rescale"};
  for (int64_t d = 0; d < t.O.cols(); ++d) v.col_labels.push_back("O" + std::to_string(d));
  v.row_axis = "query";
  v.col_axis = "state after the tile";
  v.diverging = true;
  v.title = "tile " + std::to_string(step + 1) + " of " + std::to_string(run.steps.size()) +
            ": the online softmax's state per row";
  std::vector<std::string> parts;
  if (st.shape.B > 1) parts.push_back("batch " + std::to_string(t.batch));
  if (st.shape.H > 1) parts.push_back("head " + std::to_string(t.head));
  parts.push_back("rows " + std::to_string(t.row0) + ".." + std::to_string(t.row0 + t.rows - 1) +
                  " \u00D7 keys " + std::to_string(t.key0) + ".." +
                  std::to_string(t.key0 + t.keys - 1) +
                  (t.skipped ? " (skipped: all masked)" : ""));
  parts.push_back(std::to_string(run.block_q) + " \u00D7 " + std::to_string(run.block_k) +
                  " tiles, " + std::to_string(run.skipped_tiles) + " of " +
                  std::to_string(run.steps.size()) + " skipped");
  // bfloat16 / float16: Q, K, V in the dtype, the state (m, l, O) in float32 (FlashAttention-2).
  if (IsLowPrecision(s.dtype))
    parts.push_back(std::string(Name(s.dtype)) + " Q, K, V, P; float32 state");
  else if (s.dtype == Dtype::kFloat64)
    parts.push_back(Name(Dtype::kFloat64));
  v.subtitle = Dotted(parts);
  v.help =
      "m: the running maximum of each row's logits; l: the running sum of exp(logit \u2212 m); "
      "rescale: exp(m_old \u2212 m_new), which multiplied l and O; O: the unnormalised output.";
  return v;
}

}  // namespace attnlab
