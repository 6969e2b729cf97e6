// decode_panel.cpp: the Decode view. The scenario's tokens fed as a model generates them: a
// prefill of P tokens (in chunks of C), then one token per step; each step's queries attend
// over the K and V rows cached by the earlier steps plus their own (core lessons/inference.h,
// run by inference_view.cpp). Per step: which keys it attends, the cache of the shown head,
// the step's weights with its mask, and its context rows beside the full computation's.
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

/// "Your journey starts" for positions, "—" for none.
std::string Tokens(const std::vector<std::string>& labels, const std::vector<int64_t>& pos) {
  std::string out;
  for (int64_t p : pos)
    out += (out.empty() ? "" : " ") +
           (p < static_cast<int64_t>(labels.size()) ? labels[p] : std::to_string(p)) + "(" +
           std::to_string(p) + ")";
  return out.empty() ? "\u2014" : out;
}

std::vector<std::string> Labels(const std::vector<std::string>& labels,
                                const std::vector<int64_t>& pos) {
  std::vector<std::string> out;
  for (int64_t p : pos)
    out.push_back(p < static_cast<int64_t>(labels.size()) ? labels[p] : std::to_string(p));
  return out;
}

/// The cache of the shown head: the K and V rows step `s` attends over (its own rows last); with
/// grouped K/V heads, the shared K/V head that query head `h` reads.
void DrawCacheTables(const Stages& st, const DecodeStep& s, int64_t b, int64_t h,
                     const std::vector<std::string>& labels) {
  const Shape& sh = st.shape;
  ImGui::Spacing();
  MatrixD kc(static_cast<Eigen::Index>(s.keys.size()), sh.dh),
      vc(static_cast<Eigen::Index>(s.keys.size()), sh.dh_v);
  const bool f64 = st.f64 != nullptr;
  const int64_t g = sh.KvHead(h);  // the K/V head query head h reads (h unless grouped)
  for (size_t k = 0; k < s.keys.size(); ++k) {
    for (int64_t d = 0; d < sh.dh; ++d)
      kc(k, d) = f64 ? st.f64->K[b](s.keys[k], g * sh.dh + d) : st.K[b](s.keys[k], g * sh.dh + d);
    for (int64_t d = 0; d < sh.dh_v; ++d)
      vc(k, d) =
          f64 ? st.f64->V[b](s.keys[k], g * sh.dh_v + d) : st.V[b](s.keys[k], g * sh.dh_v + d);
  }
  const std::vector<std::string> key_labels = Labels(labels, s.keys);
  ImGui::BeginGroup();
  if (!GroupsKv(sh))
    ImGui::Text("K cache (head %lld)", static_cast<long long>(h));
  else  // grouped K/V heads: the cache is the shared K/V head's, read by query head h (head 0
        // of the GQA preset reads K/V head 0 too, and that cache is shared all the same)
    ImGui::Text("K cache (K/V head %lld of %lld, read by query head %lld)",
                static_cast<long long>(g), static_cast<long long>(sh.Kv()),
                static_cast<long long>(h));
  ValuesTable("kcache", key_labels, NumberedLabels("k", sh.dh), kc, nullptr,
              static_cast<int64_t>(s.keys.size()) - 1);
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::Text("V cache");
  ValuesTable("vcache", key_labels, NumberedLabels("v", sh.dh_v), vc, nullptr,
              static_cast<int64_t>(s.keys.size()) - 1);
  ImGui::EndGroup();
}

/// Step `s`'s context rows next to the full computation's, with their largest difference.
void DrawRowComparison(const AppState& state, const Stages& st, const DecodeRun& run,
                       const DecodeStep& s, int64_t b) {
  const Shape& sh = st.shape;
  const std::vector<std::string>& labels = state.token_labels;
  const int64_t q = s.t - s.first;
  const bool f64 = st.f64 != nullptr;
  ImGui::Spacing();
  ImGui::Text("context rows: decoded, then the full computation's");
  MatrixD both(2 * q, sh.d_v);
  std::vector<std::string> row_labels;
  const MatrixD& mine = s.context[b];
  for (int64_t r = 0; r < q; ++r) {
    both.row(2 * r) = mine.row(r);
    for (int64_t d = 0; d < sh.d_v; ++d)
      both(2 * r + 1, d) = f64 ? st.f64->context[b](s.first + r, d) : st.context[b](s.first + r, d);
    const std::string tok =
        labels.size() > static_cast<size_t>(s.first + r) ? labels[s.first + r] : "";
    row_labels.push_back(tok + " decoded");
    row_labels.push_back(tok + " full");
  }
  ValuesTable("context", row_labels, NumberedLabels("d", sh.d_v), both);
  char buf[128];
  bool equal = false;
  const std::string verdict =
      AgreementText(state.shown, s.max_abs_diff, run.tolerance, false, &equal);
  std::snprintf(buf, sizeof buf, "max |decoded \u2212 full| = %.3g this step, %.3g over the run",
                s.max_abs_diff, run.max_abs_diff);
  TextWrappedAtSpaces((buf + verdict).c_str(), equal ? &kEqual : &kDiffer);
  if (!equal && state.shown.mask.align == MaskAlign::kTopLeft)
    TextWrappedAtSpaces(
        "top_left alignment: the step's one query is masked as if it were the "
        "first token, so it sees only the first key (the classic KV-cache bug). "
        "Untick top-left alignment (mask.align bottom_right) to fix it.",
        &kDiffer);
}

/// Step `s`'s weights of head `bh` (b * H + h): q_len x keys, masked cells as dots; with a
/// sink (gpt-oss) one more column, what the sink took of each row (the row's keys share the
/// rest; `form` says how it took it: one more softmax column, or the sigmoid rescale).
void DrawStepWeights(const DecodeStep& s, int64_t bh, const std::vector<std::string>& rows,
                     std::vector<std::string> cols, SinkForm form) {
  const MatrixD& w = s.weights[static_cast<size_t>(bh)];
  const bool sink = !s.sink.empty();
  const bool sigmoid = sink && form == SinkForm::kSigmoid;
  ImGui::Spacing();
  ImGui::Text("weights (%lld \u00D7 %zu): softmax of q\u00B7k over the cached keys%s",
              static_cast<long long>(w.rows()), s.keys.size(),
              sigmoid ? ", times \u03C3(lse \u2212 sink)"
              : sink  ? " and the sink"
                      : "");
  MatrixD shown(w.rows(), w.cols() + (sink ? 1 : 0));
  shown.leftCols(w.cols()) = w;
  if (sink) {
    shown.rightCols(1) = s.sink[static_cast<size_t>(bh)];
    cols.push_back("sink");
  }
  const MaskMatrix& allowed = s.allowed;
  ValuesTable("weights", rows, cols, shown,
              [&](int64_t r, int64_t c) { return c >= allowed.cols() || allowed(r, c) != 0; });
  if (sink)
    TextWrappedAtSpaces(
        "sink: the share of each new row the sink's logit took (gpt-oss); the "
        "cached keys' weights sum to 1 minus it and only they multiply V.");
}

}  // namespace

void DrawDecodePanel(AppState& state) {
  InferenceViewState& v = state.inference;
  const Stages* st = ReadableStages(state);
  if (st == nullptr) return;
  const Shape& sh = st->shape;
  const std::vector<std::string>& labels = state.token_labels;

  const int64_t count = v.decode ? static_cast<int64_t>(v.decode->steps.size()) : 0;
  DrawInferenceToolbar(state,
                       {{"prefill P", SetInference::Field::kPrefill, v.prefill, 0, sh.T,
                         "Tokens run at once before decoding (0..T)."},
                        {"chunk C", SetInference::Field::kChunk, v.chunk, 0, sh.T,
                         "The prefill in chunks of C tokens (0: one chunk)."}},
                       SetInference::Field::kDecodeStep, v.decode_step, count);
  bool top_left = state.shown.mask.align == MaskAlign::kTopLeft;
  if (ImGui::Checkbox("top-left alignment", &top_left))
    Emit(state, EditScenario{"mask align", [top_left](Scenario& x) {
                               x.mask.align =
                                   top_left ? MaskAlign::kTopLeft : MaskAlign::kBottomRight;
                             }});
  ImGui::SameLine();
  ImGui::TextDisabled("mask: %s", MaskName(state.shown.mask).c_str());
  HelpMarker(
      "mask.align in the scenario: bottom_right puts a step's last query at its last key "
      "(what decoding needs); top_left is PyTorch's is_causal (torch.ones(L, S).tril()): "
      "a decoded token then sees only the first key.");

  if (!v.decode) {
    ErrorText("No decode: " + v.decode_error);
    return;
  }
  const DecodeRun& run = *v.decode;
  const int64_t step = v.decode_step;
  if (run.steps.empty()) return;
  const DecodeStep& s =
      run.steps[static_cast<size_t>(std::min<int64_t>(step, run.steps.size() - 1))];
  const int64_t b = std::clamp<int64_t>(state.batch, 0, sh.B - 1);
  const int64_t h = std::clamp<int64_t>(state.head, 0, sh.H - 1);

  std::vector<int64_t> news;
  for (int64_t p = s.first; p < s.t; ++p) news.push_back(p);
  ImGui::Text("%s: %s", s.first < v.prefill ? "prefill" : "decoded token",
              Tokens(labels, news).c_str());
  ImGui::Text("t = %lld tokens so far; attends over %zu keys: %s", static_cast<long long>(s.t),
              s.keys.size(), Tokens(labels, s.keys).c_str());
  // Wrapped: with grouped K/V heads, or a long eviction list, the line outgrows 1024 px.
  const std::string cache =
      "cache after the step: " + std::to_string(s.cache_len) +
      (GroupsKv(sh)  // the lesson of grouped K/V heads: fewer caches than query heads
           ? " keys per K/V head, " + std::to_string(sh.Kv()) + " K/V heads for " +
                 std::to_string(sh.H) + " query heads (" + std::to_string(sh.H / sh.Kv()) +
                 "\xC3\x97 smaller)"
           : std::string(" keys per head")) +
      "; evicted: " + Tokens(labels, s.evicted);
  TextWrappedAtSpaces(cache.c_str());
  const std::string note = DtypeNote(state.shown, false);
  if (!note.empty()) TextWrappedAtSpaces(note.c_str());

  DrawCacheTables(*st, s, b, h, labels);

  DrawStepWeights(s, b * sh.H + h, Labels(labels, news), Labels(labels, s.keys),
                  state.shown.scaling.sink_form);

  DrawRowComparison(state, *st, run, s, b);
  if (run.unreachable_cells > 0)
    TextWrappedAtSpaces(
        "This mask lets queries see later keys, which a decode does not hold yet: "
        "it cannot equal the full computation.",
        &kDiffer);
}

}  // namespace attnlab::gui
