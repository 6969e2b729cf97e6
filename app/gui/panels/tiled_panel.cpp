// tiled_panel.cpp: the Tiled view. FlashAttention's forward loop on the scenario's own Q, K, V
// (core lessons/inference.h, run by inference_view.cpp): the T x T grid cut into Br x Bc
// tiles (done, current, skipped by the mask, to come), and per query row of the current tile
// the running maximum m, the running sum l, the rescale exp(m_old - m_new) and the unnormalised
// output O; after the last tile, O / l beside ordinary attention.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/inference_view.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

const ImVec4 kEqual(0.35f, 0.80f, 0.45f, 1.0f);
const ImVec4 kDiffer(1.0f, 0.62f, 0.25f, 1.0f);

/// The T x T grid of batch b, head h with its tiles: those before `current` done (green),
/// the current one outlined, skipped ones grey and crossed, masked cells darker.
void DrawTileGrid(const Stages& st, const TiledRun& run, size_t current, float side) {
  const TileStep& cur = run.steps[current];
  const int64_t T = st.shape.T;
  const float cell = side / static_cast<float>(T);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      const bool allowed = st.mask.rows() != T || st.mask(i, j) != 0;
      const ImVec2 a(o.x + j * cell, o.y + i * cell), z(a.x + cell - 1, a.y + cell - 1);
      dl->AddRectFilled(a, z, allowed ? IM_COL32(70, 80, 100, 255) : IM_COL32(35, 35, 40, 255));
    }
  for (size_t k = 0; k < run.steps.size(); ++k) {
    const TileStep& t = run.steps[k];
    if (t.batch != cur.batch || t.head != cur.head) continue;
    const ImVec2 a(o.x + t.key0 * cell, o.y + t.row0 * cell);
    const ImVec2 z(a.x + t.keys * cell - 1, a.y + t.rows * cell - 1);
    if (t.skipped) {
      dl->AddRect(a, z, IM_COL32(120, 120, 120, 255));
      dl->AddLine(a, z, IM_COL32(120, 120, 120, 255));
    } else if (k < current) {
      dl->AddRectFilled(a, z, IM_COL32(60, 160, 90, 110));
    }
    if (k == current) dl->AddRect(a, z, IM_COL32(255, 215, 90, 255), 0, 0, 3.0f);
  }
  ImGui::Dummy(ImVec2(side, side));
}

/// The current tile's state per row (m, l, rescale, O) beside the grid; returns the rows'
/// labels (the tokens).
std::vector<std::string> DrawTileState(const TileStep& t, const std::vector<std::string>& labels) {
  ImGui::BeginGroup();
  ImGui::TextDisabled("per row after the tile: m = running max of the logits, l = running sum");
  ImGui::TextDisabled("of exp(logit \u2212 m); O and l were multiplied by exp(m_old \u2212 m_new)");
  MatrixD table(t.rows, 3 + t.O.cols());
  std::vector<std::string> rows, cols = {"m", "l", "rescale"};
  for (int64_t d = 0; d < t.O.cols(); ++d) cols.push_back("O" + std::to_string(d));
  for (int64_t r = 0; r < t.rows; ++r) {
    table(r, 0) = t.m[r];
    table(r, 1) = t.l[r];
    table(r, 2) = t.rescale[r];
    table.row(r).tail(t.O.cols()) = t.O.row(r);
    const int64_t p = t.row0 + r;
    rows.push_back(p < static_cast<int64_t>(labels.size()) ? labels[p] : std::to_string(p));
  }
  ValuesTable("tile", rows, cols, table);
  ImGui::EndGroup();
  return rows;
}

/// A finished row block (`t` its last tile): O / l (times the sigmoid sink's gate g) beside the
/// full computation's context, with a sink also each row's share the sink took beside the full
/// computation's, and what that share is.
void DrawFinishedRows(const AppState& state, const Stages& st, const TiledRun& run,
                      const TileStep& t, const std::vector<std::string>& rows) {
  const Shape& sh = st.shape;
  const bool sink = !run.sink.empty();
  const bool sigmoid = sink && state.shown.scaling.SigmoidSink();
  const size_t bh = static_cast<size_t>(t.batch * sh.H + t.head);
  const char* done = sigmoid ? "O / l \u00B7 g" : "O / l";
  ImGui::Text("rows done: %s beside ordinary attention (head %lld's columns%s)", done,
              static_cast<long long>(t.head), sink ? ", then the sink's share" : "");
  MatrixD both(2 * t.rows, sh.dh_v + (sink ? 1 : 0));
  std::vector<std::string> rl, dl = NumberedLabels("d", sh.dh_v);
  if (sink) dl.push_back("sink");
  const bool f64 = st.f64 != nullptr;
  const MatrixD output = TileBlockOutput(state.shown, run, t, sh.H);  // O / l (times g)
  for (int64_t r = 0; r < t.rows; ++r) {
    const int64_t i = t.row0 + r;
    for (int64_t d = 0; d < sh.dh_v; ++d) {
      both(2 * r, d) = output(r, d);
      const int64_t col = t.head * sh.dh_v + d;
      both(2 * r + 1, d) = f64 ? st.f64->context[t.batch](i, col) : st.context[t.batch](i, col);
    }
    if (sink) {
      both(2 * r, sh.dh_v) = run.sink[bh](i, 0);
      both(2 * r + 1, sh.dh_v) = f64 ? st.f64->sink[bh](i, 0) : st.sink[bh](i, 0);
    }
    rl.push_back(rows[r] + " " + done);
    rl.push_back(rows[r] + " full");
  }
  if (state.shown.projections.out_proj)
    ImGui::TextDisabled("(the full context is after out_proj: compare the run's max below)");
  ValuesTable("done", rl, dl, both);
  if (sigmoid)
    TextWrappedAtSpaces(
        "sink (sigmoid form): the online softmax ran without it; after the last "
        "tile, g = \u03C3(m + log l \u2212 sink) is the keys' share of each row "
        "(m + log l = log \u03A3 exp(logits), the row's lse), O / l is multiplied "
        "by g, and the sink takes 1 \u2212 g.");
  else if (sink)
    TextWrappedAtSpaces(
        "sink: the share of each row the sink's logit took, exp(sink \u2212 m) / l: "
        "the sink started each row at m = sink, l = 1 and was rescaled with the "
        "keys, never multiplied with V.");
}

}  // namespace

void DrawTiledPanel(AppState& state) {
  InferenceViewState& v = state.inference;
  const Stages* st = ReadableStages(state);
  if (st == nullptr) return;
  const Shape& sh = st->shape;
  const std::vector<std::string>& labels = state.token_labels;

  const int64_t count = v.tiled ? static_cast<int64_t>(v.tiled->steps.size()) : 0;
  DrawInferenceToolbar(
      state,
      {{"Br rows", SetInference::Field::kBlockQ, v.block_q, 1, sh.T, "Query rows per tile."},
       {"Bc keys", SetInference::Field::kBlockK, v.block_k, 1, sh.T, "Keys per tile."}},
      SetInference::Field::kTileStep, v.tile_step, count);
  if (!v.tiled) {
    ErrorText("No tiled run: " + v.tiled_error);
    return;
  }
  const TiledRun& run = *v.tiled;
  const int64_t step = v.tile_step;
  if (run.steps.empty()) return;
  const size_t current = static_cast<size_t>(std::min<int64_t>(step, run.steps.size() - 1));
  const TileStep& t = run.steps[current];

  ImGui::Text("batch %lld, head %lld: rows %lld..%lld against keys %lld..%lld%s",
              static_cast<long long>(t.batch), static_cast<long long>(t.head),
              static_cast<long long>(t.row0), static_cast<long long>(t.row0 + t.rows - 1),
              static_cast<long long>(t.key0), static_cast<long long>(t.key0 + t.keys - 1),
              t.skipped ? ": skipped, the mask forbids every cell" : "");
  const float side = std::min(ImGui::GetFontSize() * 14, ImGui::GetContentRegionAvail().x * 0.3f);
  DrawTileGrid(*st, run, current, side);
  ImGui::SameLine();
  const std::vector<std::string> rows = DrawTileState(t, labels);

  char buf[256];
  std::snprintf(buf, sizeof buf, "%lld of %zu tiles skipped by the mask.",
                static_cast<long long>(run.skipped_tiles), run.steps.size());
  ImGui::TextUnformatted(buf);
  const std::string note = DtypeNote(state.shown, true);
  if (!note.empty()) TextWrappedAtSpaces(note.c_str());
  // The row block is done: O / l (times g) is its context.
  if (t.key0 + t.keys >= sh.T) DrawFinishedRows(state, *st, run, t, rows);
  bool equal = false;
  const std::string verdict =
      AgreementText(state.shown, run.max_abs_diff, run.tolerance, true, &equal);
  const bool gated = !run.sink.empty() && state.shown.scaling.SigmoidSink();
  std::snprintf(buf, sizeof buf, "whole run: max |O / l%s \u2212 the full context| = %.3g",
                gated ? " \u00B7 g" : "", run.max_abs_diff);
  TextWrappedAtSpaces((buf + verdict).c_str(), equal ? &kEqual : &kDiffer);
}

}  // namespace attnlab::gui
