// gradient_panel.cpp: why the scaling matters for learning. For the query row of the peaking
// panel: the softmax Jacobian d weights / d logits = diag(w) - w w^T as a heatmap and its norm
// against the multiplier beside the entropy curve (both collapse as the row peaks); clicking a
// key picks J of the loss L = -sum_{b,h} log weights[b,h,i,J] ("row i should attend to key J"),
// whose gradients through logits, scores, Q and K are heatmaps with the chain explained on
// hover. Numbers from grad.h (equal to torch.autograd's); this file caches and draws.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "attnlab/base/text.h"
#include "gui/actions/views.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/gradient_state.h"
#include "gui/widgets/heatmap_view.h"
#include "gui/widgets/plot.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

constexpr double kLowMultiplier = 0.01, kHighMultiplier = 100.0;  // as the peaking panel
enum Map { kJacobian, kGradLogits, kGradScores, kGradQ, kGradK, kMapCount };
static_assert(kMapCount == GradientState::kMapCount);

int64_t ShownRow(const AppState& state) {
  return std::clamp<int64_t>(state.row, 0, ShownShape(state).T - 1);
}

std::string Num(double v) { return FormatNumber(v, NumberStyle::kShortest); }

/// The text of one gradient map: title, what a cell is, labels.
HeatmapContent MapContent(const AppState& state, int k) {
  const Stages& st = ShownStages(state);
  const GradientState& g = state.gradients;
  HeatmapContent c;
  c.row_labels = TokenLabels(st.tokens);
  c.col_labels = c.row_labels;
  c.diverging = true;
  c.head = state.head;
  c.batch = state.batch;
  const std::string i = c.row_labels[ShownRow(state)], j = c.row_labels[g.key];
  if (k != kJacobian) c.subtitle = "loss: \"" + i + "\" \xE2\x86\x92 \"" + j + "\"";
  switch (k) {
    case kJacobian:
      c.title =
          "\xE2\x88\x82w/\xE2\x88\x82z of row \"" + i + "\" = diag(w) \xE2\x88\x92 w w\xE1\xB5\x80";
      c.help = "How each weight of the row (down) moves when one logit (across) moves.";
      c.row_axis = "weight";
      c.col_axis = "logit";
      break;
    case kGradLogits:
      c.title = "\xE2\x88\x82L/\xE2\x88\x82logits";
      c.help = "Only row i gets a gradient: w \xE2\x88\x92 onehot(j) with softmax.";
      break;
    case kGradScores:
      c.title = "\xE2\x88\x82L/\xE2\x88\x82scores";
      c.help =
          "\xE2\x88\x82L/\xE2\x88\x82logits \xC3\x97 multiplier / \xE2\x88\x9A"
          "d_k; 0 where masked.";
      break;
    default: {
      const bool q = k == kGradQ;
      c.title = q ? "\xE2\x88\x82L/\xE2\x88\x82Q" : "\xE2\x88\x82L/\xE2\x88\x82K";
      c.help = q ? "\xE2\x88\x82L/\xE2\x88\x82scores \xC2\xB7 K: only query i's row moves."
                 : "\xE2\x88\x82L/\xE2\x88\x82scores\xE1\xB5\x80 \xC2\xB7 Q: every key row i sees "
                   "moves.";
      c.col_labels.clear();
      // dL/dK is KV * d_k wide with grouped K/V heads: each K/V head sums its query heads'.
      const int64_t width = q ? st.shape.d_out : st.shape.KWidth();
      for (int64_t d = 0; d < width; ++d) c.col_labels.push_back("d" + std::to_string(d));
      if (!q && GroupsKv(st.shape))
        c.help +=
            " Grouped K/V heads: each K/V head's columns sum the gradients of the query "
            "heads that share it.";
      c.col_axis = "dimension";
      c.row_axis = "token";
    }
  }
  return c;
}

/// The matrix map k shows (nullptr when there is none).
const Matrix* MapValues(const AppState& state, int k) {
  const GradientState& g = state.gradients;
  if (k == kJacobian) return g.jacobian.size() ? &g.jacobian : nullptr;
  if (!g.grads) return nullptr;
  const Stages& st = ShownStages(state);
  const size_t hb = static_cast<size_t>(state.batch * st.shape.H + state.head);
  switch (k) {
    case kGradLogits:
      return &g.grads->grad_logits[hb];
    case kGradScores:
      return &g.grads->grad_scores[hb];
    case kGradQ:
      return &g.grads->grad_Q[state.batch];
    default:
      return &g.grads->grad_K[state.batch];
  }
}

/// The hover text of cell (r, c) of map k: its value and where it comes from.
void CellTip(const AppState& state, int k, int64_t r, int64_t c) {
  const Matrix* m = MapValues(state, k);
  if (!m || r >= m->rows() || c >= m->cols()) return;
  const Stages& st = ShownStages(state);
  const int64_t i = ShownRow(state), J = state.gradients.key;
  const RowVector w = st.Head(st.weights, state.batch, state.head).row(i);
  ImGui::BeginTooltip();
  ImGui::Text("%s", Num((*m)(r, c)).c_str());
  switch (k) {
    case kJacobian:
      ImGui::Text("\xE2\x88\x82w[%lld]/\xE2\x88\x82z[%lld] = %s", static_cast<long long>(r),
                  static_cast<long long>(c),
                  r == c ? "w(1 \xE2\x88\x92 w): large only while w is neither 0 nor 1"
                         : "\xE2\x88\x92w_k w_m: raising one logit takes weight from the others");
      ImGui::TextDisabled("click: make key %lld the loss key j", static_cast<long long>(c));
      break;
    case kGradLogits:
      if (r == i)
        ImGui::Text("w[%lld] %s = %s %s", static_cast<long long>(c), c == J ? "\xE2\x88\x92 1" : "",
                    Num(w[c]).c_str(), c == J ? "(raise the logit of j)" : "(lower the others)");
      else
        ImGui::TextUnformatted("0: the loss reads row i only");
      ImGui::TextDisabled("click: make key %lld the loss key j", static_cast<long long>(c));
      break;
    case kGradScores:
      ImGui::TextUnformatted(
          st.mask.rows() == st.shape.T && !st.mask(r, c)
              ? "masked: the gradient stops here"
              : "\xE2\x88\x82L/\xE2\x88\x82logits \xC3\x97 multiplier / \xE2\x88\x9A"
                "d_k");
      break;
    default:
      ImGui::TextUnformatted(k == kGradQ
                                 ? "row i: \xCE\xA3_k \xE2\x88\x82L/\xE2\x88\x82score[i,k] K[k]"
                                 : "\xE2\x88\x82L/\xE2\x88\x82score[i,k] Q[i] for key k");
  }
  ImGui::EndTooltip();
}

/// Whether the normalization is a softmax (stable or naive, any sink form): then the Jacobian is
/// diag(w) - w w^T and d L / d logits is w - onehot(j) (grad.h).
bool IsSoftmaxRow(const AppState& state) {
  const Normalization n = state.shown.normalization;
  return IsSoftmaxOverAllowedKeys(n) || n == Normalization::kSoftmaxNaive;
}

/// The loss row's numbers, for when the T x T maps under the Jacobian are too narrow to print
/// theirs (karpathy-head's 8 x 8 maps at 1280 px): row i of the weights, of d L / d logits and
/// of d L / d scores for the shown batch and head, a column per key (up to kLossRowMaxKeys).
/// With softmax the second row is the first minus the one-hot of key j, digit by digit.
constexpr int64_t kLossRowMaxKeys = 32;
struct LossRow {
  std::vector<std::string> rows, keys;
  MatrixD values;                ///< 3 x T: w, d L / d logits, d L / d scores of row i
  std::vector<uint8_t> allowed;  ///< the mask's row i (masked keys print a dot)
};
std::optional<LossRow> LossRowOf(const AppState& state) {
  const GradientState& g = state.gradients;
  const Stages& st = ShownStages(state);
  const int64_t T = st.shape.T;
  if (!g.grads || T > kLossRowMaxKeys) return std::nullopt;
  const int64_t i = ShownRow(state);
  const int64_t b = std::min(state.batch, st.shape.B - 1), h = std::min(state.head, st.shape.H - 1);
  LossRow r;
  r.keys = TokenLabels(st.tokens);
  r.rows = {"w[\"" + r.keys[static_cast<size_t>(i)] + "\"]",
            IsSoftmaxRow(state) ? "\xE2\x88\x82L/\xE2\x88\x82logits = w \xE2\x88\x92 onehot(j)"
                                : "\xE2\x88\x82L/\xE2\x88\x82logits",
            "\xE2\x88\x82L/\xE2\x88\x82scores"};
  const size_t hb = static_cast<size_t>(b * st.shape.H + h);
  r.values.resize(3, T);
  r.values.row(0) = st.Head(st.weights, b, h).row(i).cast<double>();
  r.values.row(1) = g.grads->grad_logits[hb].row(i).cast<double>();
  r.values.row(2) = g.grads->grad_scores[hb].row(i).cast<double>();
  r.allowed.assign(static_cast<size_t>(T), 1);
  if (st.mask.rows() == T)
    for (int64_t k = 0; k < T; ++k) r.allowed[static_cast<size_t>(k)] = st.mask(i, k);
  return r;
}

/// The height the loss row's table takes: a line of title, the header and three rows (and a
/// scroll bar when it is wider than `width`).
float LossRowHeight(const LossRow& r, float width) {
  return ImGui::GetTextLineHeightWithSpacing() +
         ValuesTableHeight(r.rows, r.values.rows(), r.values.cols(), width) +
         2 * ImGui::GetStyle().ItemSpacing.y;
}

/// The loss row's table at the cursor; masked keys print a dot, the loss key's column is named.
void DrawLossRow(AppState& state, const LossRow& r) {
  const int64_t i = ShownRow(state), J = state.gradients.key;
  ImGui::TextDisabled(
      "row \"%s\" of the maps above, printed (they are too small for numbers); "
      "the loss key j = \"%s\"",
      r.keys[static_cast<size_t>(i)].c_str(), r.keys[static_cast<size_t>(J)].c_str());
  std::vector<std::string> cols = r.keys;
  cols[static_cast<size_t>(J)] += " (j)";
  ValuesTable(
      "loss_row", r.rows, cols, r.values,
      [&](int64_t, int64_t c) { return r.allowed[static_cast<size_t>(c)] != 0; }, 1);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "The loss's row of d L / d logits and d L / d scores (only row i is not 0). "
        "With softmax, d L / d logits = w \xE2\x88\x92 onehot(j): every key gives "
        "back its weight, key j gains 1 \xE2\x88\x92 w_j. d L / d scores is that "
        "times multiplier / \xE2\x88\x9A"
        "d_k when scaled.");
  state.gradients.loss_row_y1 = ImGui::GetItemRectMax().y;
}

/// The Jacobian's norm and the entropy of the row against the multiplier, the current one marked.
void DrawNormCurves(AppState& state, ImVec2 size) {
  const GradientState& g = state.gradients;
  const double m = std::clamp(state.shown.scaling.multiplier, kLowMultiplier, kHighMultiplier);
  const float gap = ImGui::GetFontSize();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float note_h = ImGui::GetTextLineHeightWithSpacing() * 3;  // the sentence under the plots
  const ImVec2 half((size.x - gap) * 0.5f, size.y - note_h);
  double top = 0.05;
  for (double v : g.norms)
    if (std::isfinite(v)) top = std::max(top, v);
  PlotSpec spec;
  spec.id = "jacobian_norm";
  spec.size = half;
  spec.x0 = kLowMultiplier;
  spec.x1 = kHighMultiplier;
  spec.log_x = true;
  spec.y0 = 0;
  spec.y1 = top * 1.15;
  spec.x_label = "multiplier = 1/temperature";
  spec.y_label = "\xE2\x80\x96\xE2\x88\x82w/\xE2\x88\x82z\xE2\x80\x96 (Frobenius)";
  const PlotAxes axes = BeginPlot(spec);
  PlotLine(axes, g.multipliers, g.norms, IM_COL32(240, 130, 80, 255), 2.0f);
  const bool softmax = IsSoftmaxRow(state);
  if (softmax) PlotPoint(axes, m, g.jacobian.cast<double>().norm(), IM_COL32(255, 200, 60, 255));
  PlotVLine(axes, m, IM_COL32(255, 200, 60, 160), softmax ? "now" : "now (not softmax)", true);
  if (axes.hovered) {
    const double at = axes.XAt(ImGui::GetIO().MousePos.x);
    ImGui::SetTooltip(
        "multiplier %.3g\nThe softmax passes back at most this much gradient: it "
        "falls to 0 as the row becomes one-hot.",
        at);
  }
  ImGui::SameLine(0, gap);
  std::vector<double> xs, ys;
  for (const PeakingPoint& p : state.peaking.curve) {
    xs.push_back(p.multiplier);
    ys.push_back(p.stats.entropy);
  }
  double top_h = 0.1;
  for (double v : ys)
    if (std::isfinite(v)) top_h = std::max(top_h, v);
  spec.id = "jacobian_entropy";
  spec.y1 = top_h * 1.15;
  spec.y_label = "entropy (nats)";
  const PlotAxes eaxes = BeginPlot(spec);
  PlotLine(eaxes, xs, ys, IM_COL32(90, 150, 230, 255), 2.0f);
  PlotVLine(eaxes, m, IM_COL32(255, 200, 60, 160), "now", true);
  if (eaxes.hovered)
    ImGui::SetTooltip(
        "The same row's entropy (the peaking panel's curve): where it reaches 0 the "
        "Jacobian's norm does too.");
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + half.y + 2));
  ImGui::PushTextWrapPos(origin.x + size.x - ImGui::GetWindowPos().x);  // window coordinates
  ImGui::TextDisabled(
      "Why the norm rises before it collapses: at uniform weights every w is "
      "small, and so is every w(1\u2212w); as the row concentrates on a few keys "
      "their w(1\u2212w) grow towards 1/4, until the row turns one-hot and all "
      "fall to 0.");
  ImGui::PopTextWrapPos();
}

/// Heatmap k into the rectangle (origin, size); clicking a key of the Jacobian or of
/// d L / d logits makes it the loss key.
/// How map k is drawn (DrawHeatmapView's spec); `row_labels` false: the map left of it in the
/// same row shows the same tokens.
HeatmapViewSpec MapSpec(const AppState& state, int k, bool row_labels = true) {
  HeatmapViewSpec spec;
  spec.id = GradientState::kMapIds[k];
  spec.values = MapValues(state, k);
  spec.empty_text = state.gradients.error.empty() ? "(no gradient)" : "(no loss: see above)";
  spec.labels_key = static_cast<int64_t>(state.shown_version);
  spec.marked_row = k <= kGradScores || k == kGradQ ? ShownRow(state) : -1;
  if (k == kJacobian || k == kGradLogits) spec.heading_note = "click a key";
  spec.row_labels = row_labels;
  return spec;
}

/// The bottom maps (d L / d logits, scores, Q, K) side by side in `width`: their widths, the
/// gap between them, and whether the maps right of the first drop their row labels (the same
/// tokens). When every map fits with its numbers printed (2 decimals at least,
/// NumberCellWidths) beside the first one's labels, half a `gap` apart, each gets that width and
/// the rest is shared out in proportion; otherwise (large T, numbers off, no gradient) equal
/// shares, each labelled, `gap` apart, as before. At T = 6 the T x T maps get the room the
/// narrow T x d_k maps do not need.
struct BottomLayout {
  std::array<float, kMapCount> w{};
  float gap = 0;
  bool shared_labels = false;
  /// Whether map k labels its rows: the first always, the others unless the labels are shared.
  bool RowLabels(int k) const { return k == kGradLogits || !shared_labels; }
};

BottomLayout BottomWidths(AppState& state, float width, float gap) {
  BottomLayout layout;
  constexpr int kMaps = kMapCount - kGradLogits;
  const float free = width - (kMaps - 1) * gap / 2;
  float need_sum = 0;
  bool numbered = state.view.values != ValuesMode::kOff;
  for (int k = kGradLogits; k < kMapCount && numbered; ++k) {
    const Matrix* m = MapValues(state, k);
    numbered = m && AutoPrintsValues(m->rows(), m->cols());  // else no numbers there
    if (!numbered) break;
    const float cell = NumberCellWidths(state, Stage::kScores, CellSource{m}, nullptr).min;
    const int rows = static_cast<int>(m->rows()), cols = static_cast<int>(m->cols());
    const HeatmapFrame f = MeasureHeatmapFrame(
        state, state.gradients.maps[k], MapSpec(state, k, k == kGradLogits), rows, cols, cell);
    layout.w[k] = f.left + f.right + cols * cell;
    need_sum += layout.w[k];
  }
  layout.shared_labels = numbered && need_sum <= free;
  layout.gap = layout.shared_labels ? gap / 2 : gap;
  for (int k = kGradLogits; k < kMapCount; ++k)
    layout.w[k] =
        layout.shared_labels ? layout.w[k] * free / need_sum : (width - (kMaps - 1) * gap) / kMaps;
  return layout;
}

void DrawMap(AppState& state, int k, ImVec2 origin, ImVec2 size, bool row_labels = true) {
  GradientState& g = state.gradients;
  const HeatmapViewSpec spec = MapSpec(state, k, row_labels);
  const HeatmapViewHover h = DrawHeatmapView(state, g.maps[k], spec, origin, size);
  if (!h.active) return;
  CellTip(state, k, h.row, h.col);
  if ((k == kJacobian || k == kGradLogits) && ImGui::IsItemClicked())
    Emit(state, SetLossKey{h.col});
}

}  // namespace

void RefreshGradients(AppState& state) {
  const Stages* readable = ReadableStages(state);
  if (!HasShownRun(state) || !readable) return;  // a background run: the caches stay
  GradientState& g = state.gradients;
  const Stages& st = *readable;
  g.key = std::clamp<int64_t>(g.key, 0, st.shape.T - 1);
  const int64_t i = ShownRow(state);
  const std::string key = std::to_string(state.shown_version) + "/" + std::to_string(state.batch) +
                          "/" + std::to_string(state.head) + "/" + std::to_string(i) + "/" +
                          std::to_string(g.key);
  if (key == g.made_for) return;
  g.made_for = key;
  g.upload = true;
  if (!g.maps) g.maps = std::make_unique<HeatmapSlot[]>(kMapCount);
  g.grads.reset();
  g.error.clear();
  try {
    g.grads = LossGradients(state.shown, st, i, g.key);
  } catch (const std::exception& e) {
    g.error = e.what();
  }
  const int64_t b = std::min(state.batch, st.shape.B - 1), h = std::min(state.head, st.shape.H - 1);
  g.jacobian = RowJacobian(state.shown, st, b, h, i);
  std::vector<uint8_t> allowed(st.shape.T, 1);
  for (int64_t k = 0; k < st.shape.T; ++k)
    allowed[k] = st.mask.rows() == st.shape.T ? st.mask(i, k) : 1;
  g.multipliers = LogSpace(kLowMultiplier, kHighMultiplier, 121);
  g.norms = JacobianNormCurve(st.Head(st.scores, b, h).row(i), allowed,
                              CurveRulesOf(state.shown, st.shape, h, i), g.multipliers);
}

std::string GradientsJson(AppState& state) {
  RefreshGradients(state);
  const GradientState& g = state.gradients;
  nlohmann::json j = {{"row", state.row}, {"key", g.key}, {"error", g.error}};
  if (g.grads) {
    j["loss"] = g.grads->loss;
    j["norm_W_query"] = g.grads->grad_W_query.size() ? g.grads->grad_W_query.norm() : 0.0;
    j["norm_Q"] = StackNorm(g.grads->grad_Q);
  }
  j["jacobian_norm"] = g.jacobian.size() ? g.jacobian.cast<double>().norm() : 0.0;
  nlohmann::json row = {{"shown", g.loss_row_shown}, {"y1", g.loss_row_y1}};
  // The table's text reads the weights: not while a background run rewrites them.
  if (const std::optional<LossRow> r = ReadableStages(state) ? LossRowOf(state) : std::nullopt) {
    const char* names[] = {"weights", "grad_logits", "grad_scores"};
    for (int k = 0; k < 3; ++k) {
      std::vector<std::string> text;
      for (Eigen::Index c = 0; c < r->values.cols(); ++c)
        text.push_back(r->allowed[static_cast<size_t>(c)] ? ValuesTableCell(r->values(k, c))
                                                          : kValuesTableHidden);
      row[names[k]] = text;
    }
  }
  j["loss_row"] = row;
  j["compare_norm_a"] = g.norm_a;
  j["compare_norm_b"] = g.norm_b;
  return j.dump();
}

}  // namespace attnlab::gui

namespace attnlab::gui {

void DrawGradientPanel(AppState& state) {
  if (!ReadableStages(state)) {
    // The maps and tooltips read the stages, which a background run is rewriting.
    ImGui::TextDisabled("computing\xE2\x80\xA6 the gradients show when the run ends");
    return;
  }
  RefreshGradients(state);
  GradientState& g = state.gradients;
  const Stages& st = ShownStages(state);
  const int64_t i = ShownRow(state);
  const std::vector<std::string> labels = TokenLabels(st.tokens);
  ImGui::Text(
      "Loss: query \"%s\" (row %lld) should attend to key \"%s\" (%lld):  L = "
      "\xE2\x88\x92\xCE\xA3 log w[b, h, i, j]",
      labels[i].c_str(), static_cast<long long>(i), labels[g.key].c_str(),
      static_cast<long long>(g.key));
  Tip("Cross-entropy of row i of every head against key j, as a training step would use it. "
      "Pick the row in the peaking panel's picker (or hover a heatmap), the key by clicking "
      "the Jacobian or \xE2\x88\x82L/\xE2\x88\x82logits. Same numbers as torch.autograd.");
  if (!g.error.empty()) {
    ErrorText(g.error);
  } else if (g.grads) {
    ImGui::Text(
        "L = %s   gradient reaching W_query: \xE2\x80\x96\xE2\x88\x82L/\xE2\x88\x82W_q\xE2\x80\x96 "
        "= %s",
        Num(g.grads->loss).c_str(),
        g.grads->grad_W_query.size() ? Num(g.grads->grad_W_query.norm()).c_str()
                                     : "(qkv input: no W)");
  }
  if (g.upload) {
    for (int k = 0; k < kMapCount; ++k)
      if (const Matrix* m = MapValues(state, k)) UploadMatrix(g.maps[k], *m, MapContent(state, k));
    g.upload = false;
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = ImGui::GetFontSize();
  const float top_h = avail.y * 0.45f;
  const BottomLayout bottom = BottomWidths(state, avail.x, gap);
  // d L / d logits or d L / d scores print no numbers (too narrow): the loss row's table goes
  // under the maps, which then leave it its height (less height prints no more numbers).
  const float full_h = avail.y - top_h - gap;
  const auto prints = [&](int k) {
    const float w = bottom.w[static_cast<size_t>(k)];
    return HeatmapPrintsValues(state, g.maps[k], MapSpec(state, k, bottom.RowLabels(k)),
                               ImVec2(w, std::min(full_h, w)));
  };
  std::optional<LossRow> loss_row;
  if (state.view.values != ValuesMode::kOff && !(prints(kGradLogits) && prints(kGradScores)))
    loss_row = LossRowOf(state);
  const float bottom_h = full_h - (loss_row ? LossRowHeight(*loss_row, avail.x) : 0);
  const float jac_w = std::min(avail.x * 0.4f, top_h * 1.3f);
  DrawMap(state, kJacobian, origin, ImVec2(jac_w, top_h));
  ImGui::SetCursorScreenPos(ImVec2(origin.x + jac_w + gap, origin.y));
  DrawNormCurves(state, ImVec2(avail.x - jac_w - 2 * gap, top_h));
  float x = origin.x;
  for (int k = kGradLogits; k < kMapCount; ++k) {
    // The T x T maps as tall as they are wide (square cells: the labels above take about what
    // the colorbar takes at the side); Q and K (T x d_out) keep the whole height.
    const float w = bottom.w[k];
    const float h = k <= kGradScores ? std::min(bottom_h, w) : bottom_h;
    DrawMap(state, k, ImVec2(x, origin.y + top_h + gap), ImVec2(w, h), bottom.RowLabels(k));
    x += w + bottom.gap;
  }
  g.loss_row_shown = loss_row.has_value();
  if (loss_row) {
    ImGui::SetCursorScreenPos(
        ImVec2(origin.x, origin.y + top_h + gap + bottom_h + ImGui::GetStyle().ItemSpacing.y));
    DrawLossRow(state, *loss_row);
  }
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + avail.y));
  ImGui::Dummy(ImVec2(0, 0));
}

void DrawCompareGradientReadout(AppState& state) {
  GradientState& g = state.gradients;
  const CompareState& c = state.compare;
  if (!HasShownRun(state) || !ReadableStages(state) || !c.engine_b.has_result()) return;
  const Stages& a = ShownStages(state);
  const Stages& b = c.engine_b.stages();
  const int64_t i = ShownRow(state);
  int64_t j = std::clamp<int64_t>(g.key, 0, a.shape.T - 1);
  // A key the mask forbids for row i has no loss (log 0): A's most attended allowed key
  // stands in for it (a left-padded sentence forbids key 0 to every row).
  const int64_t picked = j;
  if (i < a.mask.rows() && !a.mask(i, j)) {
    const Matrix& w = a.Head(a.weights, std::min(state.batch, a.shape.B - 1),
                             std::min(state.head, a.shape.H - 1));
    for (int64_t k = 0; k < a.shape.T; ++k)
      if (a.mask(i, k) && (j == picked || w(i, k) > w(i, j))) j = k;
  }
  const bool heads = c.mode == CompareMode::kHeads && a.shape.H > 1;
  const std::string key = c.key + "/" + std::to_string(i) + "/" + std::to_string(j) + "/" +
                          std::to_string(heads) + std::to_string(c.head_a) + "/" +
                          std::to_string(c.head_b);
  if (key != g.compare_for) {
    g.compare_for = key;
    g.compare_error.clear();
    try {
      if (i < a.mask.rows() && !a.mask.row(i).any())
        throw std::invalid_argument("query row " + std::to_string(i) +
                                    " sees no key (the mask forbids every one), so no loss "
                                    "-log w[i, j] is defined; select another row");
      if (heads) {
        // L sums over the heads, so its gradient is the same run's for A and B; what reaches
        // each head is its own d_k columns of W_query (they feed no other head's weights).
        const Matrix gq = LossGradients(state.shown, a, i, j).grad_W_query;
        const int64_t dh = a.shape.dh, H = a.shape.H;
        g.norm_a = gq.middleCols(std::clamp<int64_t>(c.head_a, 0, H - 1) * dh, dh).norm();
        g.norm_b = gq.middleCols(std::clamp<int64_t>(c.head_b, 0, H - 1) * dh, dh).norm();
      } else {
        g.norm_a = LossGradients(state.shown, a, i, j).grad_W_query.norm();
        g.norm_b = LossGradients(c.b, b, i, j).grad_W_query.norm();
      }
    } catch (const std::exception& e) {
      g.compare_error = e.what();
    }
  }
  if (a.X.empty()) {
    ImGui::TextDisabled("gradient reaching W_query: none (qkv input has no W)");
    return;
  }
  if (!g.compare_error.empty()) {
    // Wrapped: the error names the row, the key and what to do, wider than the maps.
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("gradient reaching W_query: %s", g.compare_error.c_str());
    ImGui::PopStyleColor();
    return;
  }
  // In parts that wrap whole: at 1024 pixels the line does not hold B's number.
  char instead[96] = "";
  if (j != picked)
    std::snprintf(instead, sizeof instead,
                  " (key %lld is masked for this row: its most attended key)",
                  static_cast<long long>(picked));
  char head[260];
  std::snprintf(
      head, sizeof head,
      "gradient reaching W_query%s, \xE2\x80\x96\xE2\x88\x82L/\xE2\x88\x82W_q\xE2\x80\x96 "
      "for row %lld \xE2\x86\x92 key %lld%s:",
      heads ? " (each head's own d_k columns)" : "", static_cast<long long>(i),
      static_cast<long long>(j), instead);
  WrappedParts({head, "A " + Num(g.norm_a), "B " + Num(g.norm_b)});
  Tip("L = \xE2\x88\x92\xCE\xA3 log w[b, h, i, j] (the Gradients view; click a key there to pick "
      "j). "
      "Without 1/\xE2\x88\x9A"
      "d_k the logits are larger, rows peak, and the softmax passes "
      "back less gradient: or, when the row peaks on the wrong key, much more.");
}

void ReleaseGradientTextures(AppState& state) {
  if (!state.gradients.maps) return;
  for (int i = 0; i < kMapCount; ++i) state.gradients.maps[i].gpu.Release();
}

}  // namespace attnlab::gui
