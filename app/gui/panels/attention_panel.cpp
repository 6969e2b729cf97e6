// attention_panel.cpp: the knobs between the scores and the weights: 1/sqrt(d_k), the
// multiplier (1/temperature), soft-capping and the attention sink, the mask, the normalization
// and dropout.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/base/text.h"
#include "gui/actions/apply.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {

namespace {

/// Where the scale goes (scaling.scale_at): the product, as the notebooks, or q and k, as
/// PyTorch's scaled_dot_product_attention (the Modern attention section).
void DrawScaleAt(AppState& state, const Scenario& s) {
  const char* at[] = {"scale the scores", "scale q and k (SDPA)"};
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11.0f);
  if (ImGui::BeginCombo("##scale at", at[static_cast<int>(s.scaling.scale_at)])) {
    for (const EnumName<ScaleAt>& e : kScaleAts) {
      const ScaleAt where = e.value;
      if (ImGui::Selectable(at[static_cast<int>(where)], where == s.scaling.scale_at))
        Emit(state, EditScenario{"scale at", [where](Scenario& x) { x.scaling.scale_at = where; }});
    }
    ImGui::EndCombo();
  }
  Tip("scaling.scale_at. \"scale the scores\": logits = (q . k) x m / sqrt(d_k), as the "
      "notebooks write it. \"scale q and k\": q and k each times sqrt(m / sqrt(d_k)) before the "
      "product, as PyTorch's scaled_dot_product_attention computes it: the same logits up to "
      "rounding (the last bit in float32, a step in bfloat16).");
}

/// The divide-by-sqrt(d_k) checkbox and the multiplier's log slider with its reset button.
void DrawScaling(AppState& state, const Scenario& s, const Shape& sh) {
  bool sqrt_dk = s.scaling.sqrt_dk;
  char label[64];
  std::snprintf(label, sizeof label, "divide by \u221Ad_k  (\u221A%lld = %.3g)",
                static_cast<long long>(sh.dh), std::sqrt(static_cast<double>(sh.dh)));
  if (ImGui::Checkbox(label, &sqrt_dk)) Emit(state, SetSqrtDk{sqrt_dk});
  Tip("Scaled dot-product attention divides the scores by sqrt(d_k). Without it, large d_k "
      "makes the logits large and softmax almost one-hot (see the peaking and variance panels).");
  // -- multiplier on a log scale: the slider has no text of its own (its handle would cover
  // it); the value is an editable field under it, beside the reset button and the temperature
  float m = static_cast<float>(s.scaling.multiplier);
  const bool dragged =
      ImGui::SliderFloat("##multiplier", &m, 0.01f, 100.0f, "", ImGuiSliderFlags_Logarithmic);
  if (dragged && m > 0) Emit(state, SetMultiplier{m}, "scaling.multiplier");
  Tip("The multiplier m = 1/temperature: logits = scores x m (/ sqrt(d_k)). Drag right to "
      "sharpen (cold), left to flatten (hot). Log scale from 0.01 to 100. A whole drag is one "
      "undo step.");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::TextUnformatted("multiplier");
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("m =");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  double typed = s.scaling.multiplier;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.5f);
  if (ImGui::InputDouble("##multiplier_value", &typed, 0.0, 0.0, "%.4g",
                         ImGuiInputTextFlags_EnterReturnsTrue) &&
      typed > 0 && std::isfinite(typed))
    Emit(state, SetMultiplier{typed});
  Tip("Type a multiplier (> 0) and press Enter.");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::BeginDisabled(s.scaling.multiplier == 1.0);
  if (ImGui::Button("reset")) Emit(state, SetMultiplier{1.0});
  ImGui::EndDisabled();
  Tip("Back to multiplier 1 (temperature 1).");
  ImGui::SameLine();
  ImGui::TextDisabled("temperature %.3g", 1.0 / s.scaling.multiplier);
  Tip("temperature = 1/m: hot (large) flattens the weights, cold (small) sharpens them.");
}

/// How the sink acts (scaling.sink_form): one more softmax column, or torchtitan's sigmoid
/// rescale (the bug gallery's bug-sink-sigmoid). One undo step per change.
void DrawSinkForm(AppState& state, const Scenario& s) {
  const char* shown[] = {"concat + softmax (HF)",
                         "\xCF\x83(lse \xE2\x88\x92 s) rescale (FlexAttention)"};
  ImGui::TextUnformatted("sink form");  // above: the FlexAttention choice needs the width
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x);
  if (ImGui::BeginCombo("##sink form", shown[static_cast<int>(s.scaling.sink_form)])) {
    for (const EnumName<SinkForm>& e : kSinkForms) {
      const SinkForm form = e.value;
      if (ImGui::Selectable(shown[static_cast<int>(form)], form == s.scaling.sink_form))
        Emit(state, EditScenario{"sink form", [form](Scenario& x) { x.scaling.sink_form = form; }});
    }
    ImGui::EndCombo();
  }
  Tip("scaling.sink_form. \"concat + softmax\" (Hugging Face, gpt-oss): the sink is one more "
      "column of each row's softmax, dropped before weights @ V. \"sigmoid rescale\" (torchtitan "
      "with FlexAttention, PR #2211): the plain softmax times sigmoid(lse - s), lse the row's "
      "logsumexp. That factor is exactly the keys' share of the concat softmax, so every row "
      "that "
      "sees a key is the same up to rounding; a row that sees no key is NaN (0/0 times 0) "
      "instead of going to the sink (bug-sink-sigmoid).");
}

/// The score modifiers of today's models: soft-capping (Gemma 2) and gpt-oss's attention sink,
/// each a checkbox with its value under it; every edit is one undo step (a drag too).
void DrawScoreModifiers(AppState& state, const Scenario& s, const Shape& sh) {
  bool capped = s.scaling.softcap.has_value();
  if (ImGui::Checkbox("soft-cap the logits", &capped))
    Emit(state,
         EditScenario{capped ? "soft-capping on" : "soft-capping off", [capped](Scenario& x) {
                        x.scaling.softcap = capped ? std::optional<double>(5.0) : std::nullopt;
                      }});
  Tip("Gemma 2's soft-capping: logits = c tanh(logits / c) after the scaling, before the mask. "
      "Every logit lands within (-c, c), so no key can take a whole row however sharp the "
      "scores. Gemma 2 uses c = 50.");
  if (s.scaling.softcap) {
    float c = static_cast<float>(*s.scaling.softcap);
    ImGui::SetNextItemWidth(
        std::min(ImGui::GetFontSize() * 12.0f, ImGui::GetContentRegionAvail().x));
    if (ImGui::DragFloat("c##softcap", &c, 0.05f, 0.1f, 100.0f, "c = %.3g",
                         ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp) &&
        c > 0)
      Emit(state, EditScenario{"soft-cap c", [c](Scenario& x) { x.scaling.softcap = c; }},
           "scaling.softcap");
    Tip("The cap c: drag sideways (0.1 .. 100), or double-click to type. Small c flattens the "
        "weights; "
        "large c changes nothing. A whole drag is one undo step.");
  }
  const bool softmax = s.normalization == Normalization::kSoftmax;
  bool sink = !s.scaling.sink.empty();
  ImGui::BeginDisabled(!softmax && !sink);
  if (ImGui::Checkbox("attention sink", &sink))
    Emit(state, EditScenario{sink ? "sink on" : "sink off", [sink](Scenario& x) {
                               x.scaling.sink =
                                   sink ? std::vector<double>{1.0} : std::vector<double>{};
                               if (!sink) x.scaling.sink_form = SinkForm::kConcat;  // needs a sink
                             }});
  ImGui::EndDisabled();
  Tip(softmax || sink
          ? "gpt-oss's attention sink: each row's softmax gets one more column with a fixed "
            "logit, "
            "dropped before weights @ V. What the sink takes no key gets: the rows sum below 1 "
            "(hover a weight to read the sink's share); a fully masked row gives 0, not NaN "
            "(with "
            "the \"concat + softmax\" form below)."
          : "The sink is one more column of a softmax: choose the softmax normalization first.");
  if (sink) {
    const bool per_head = s.scaling.sink.size() > 1;
    for (size_t h = 0; h < s.scaling.sink.size(); ++h) {
      float v = static_cast<float>(s.scaling.sink[h]);
      const std::string label = per_head
                                    ? "head " + std::to_string(h) + "##sink" + std::to_string(h)
                                    : "sink logit##sink";
      ImGui::SetNextItemWidth(
          std::min(ImGui::GetFontSize() * 12.0f, ImGui::GetContentRegionAvail().x));
      if (ImGui::DragFloat(label.c_str(), &v, 0.05f, -20.0f, 20.0f, "s = %.3g",
                           ImGuiSliderFlags_AlwaysClamp))
        Emit(state, EditScenario{"sink logit", [h, v](Scenario& x) { x.scaling.sink[h] = v; }},
             "scaling.sink" + std::to_string(h));
      Tip("The sink's logit (drag sideways, or double-click to type): compared with the row's "
          "logits, the higher it is the more the sink takes. gpt-oss learns one per head. A "
          "whole drag is one undo step.");
    }
    if (sh.H > 1) {
      if (ImGui::SmallButton(per_head ? "one for all heads" : "one per head")) {
        const int64_t H = sh.H;
        Emit(state, EditScenario{"sink per head", [per_head, H](Scenario& x) {
                                   x.scaling.sink = per_head
                                                        ? std::vector<double>{x.scaling.sink[0]}
                                                        : std::vector<double>(H, x.scaling.sink[0]);
                                 }});
      }
      Tip("One sink logit shared by every head, or one per head as gpt-oss has.");
    }
    DrawSinkForm(state, s);
  }
}

/// The part of `m` at `path` (indices into `of`, outermost first).
MaskSpec& MaskPart(MaskSpec& m, const std::vector<size_t>& path) {
  MaskSpec* part = &m;
  for (size_t k : path) part = &part->of[k];
  return *part;
}

/// The fields of mask `m` (at `path` inside the scenario's mask): W, P, the document ids, each
/// part of an and / or, with the legend of each; edits are undoable scenario edits.
// mask.fill: the value masked logits get (masked_fill's value), stored in the dtype.
void DrawMaskFill(AppState& state) {
  const Scenario& s = state.scenario;
  int current = static_cast<int>(s.mask.fill);
  const char* names[std::size(kMaskFills)];
  for (size_t i = 0; i < std::size(kMaskFills); ++i) names[i] = kMaskFills[i].name;
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("-2.3819763e38").x + ImGui::GetFrameHeight() * 2);
  if (ImGui::Combo("masked logits", &current, names, static_cast<int>(std::size(names))))
    Emit(state, EditScenario{"mask fill",
                             [current](Scenario& x) { x.mask.fill = kMaskFills[current].value; }});
  const double v = MaskFillValue(s.mask.fill, s.dtype);
  char value[32];
  std::snprintf(value, sizeof value, "%.8g", v);
  Tip(("The value masked_fill writes into masked logits, stored in " + std::string(Name(s.dtype)) +
       ": here " + value +
       ". -inf: a row with no allowed key is nan. A finite value gives it 1/T everywhere, and "
       "-1e4 leaks weight into masked keys when the logits come near it. -1e9 is -inf in "
       "float16 (beyond 65504): the nan is back. -2.3819763e38 is Gemma's value (0.7 x the "
       "largest float32), -inf in float16 too.")
          .c_str());
}

void DrawMaskFields(AppState& state, const MaskSpec& m, const std::vector<size_t>& path, int64_t T);
const char* MaskLabel(MaskKind kind);

/// The parts of the and / or mask `m` (at `path`; `id` its widgets' suffix): each part's kind
/// combo, its remove button (not the last part) and its fields, then "+ mask"; every change
/// an undoable scenario edit.
void DrawMaskParts(AppState& state, const MaskSpec& m, const std::vector<size_t>& path,
                   const std::string& id, int64_t T) {
  ImGui::Indent();
  // Each part: its kind (a combo), a button that removes it (not the last one), its fields.
  // A part is one of the kinds without a painted matrix or parts of its own; a custom or
  // nested part from a file is shown by name and can be removed or switched.
  static constexpr MaskKind kPartKinds[] = {MaskKind::kCausal, MaskKind::kSlidingWindow,
                                            MaskKind::kPrefixLm, MaskKind::kDocument,
                                            MaskKind::kNone};
  for (size_t k = 0; k < m.of.size(); ++k) {
    std::vector<size_t> inner = path;
    inner.push_back(k);
    const std::string pid = id + "_part" + std::to_string(k);
    ImGui::PushID(pid.c_str());
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("sliding window").x + ImGui::GetFrameHeight() * 2);
    if (ImGui::BeginCombo("##kind", MaskLabel(m.of[k].kind))) {
      for (MaskKind kind : kPartKinds)
        if (ImGui::Selectable(MaskLabel(kind), kind == m.of[k].kind) && kind != m.of[k].kind)
          Emit(state, EditScenario{"mask part kind", [inner, kind, T](Scenario& x) {
                                     StartMaskKind(MaskPart(x.mask, inner), kind,
                                                   std::max<int64_t>(T, 1));
                                   }});
      ImGui::EndCombo();
    }
    Tip(("Part " + std::to_string(k) + " of the " + MaskLabel(m.kind) + ": " + MaskName(m.of[k]) +
         ". Choose another kind; it starts from a setting of its own.")
            .c_str());
    ImGui::SameLine();
    ImGui::BeginDisabled(m.of.size() < 2);
    if (ImGui::SmallButton("\xC3\x97"))  // the multiplication sign: remove
      Emit(state, EditScenario{"remove mask part", [path, k](Scenario& x) {
                                 std::vector<MaskSpec>& of = MaskPart(x.mask, path).of;
                                 if (k < of.size() && of.size() > 1)
                                   of.erase(of.begin() + static_cast<std::ptrdiff_t>(k));
                               }});
    ImGui::EndDisabled();
    Tip(m.of.size() < 2 ? "The last part stays: an and / or needs at least one mask."
                        : "Remove this part (Ctrl+Z brings it back).");
    if (m.of[k].kind == MaskKind::kSlidingWindow || m.of[k].kind == MaskKind::kPrefixLm ||
        m.of[k].kind == MaskKind::kDocument || m.of[k].kind == MaskKind::kAnd ||
        m.of[k].kind == MaskKind::kOr) {
      ImGui::Indent();  // the part's fields under its kind
      DrawMaskFields(state, m.of[k], inner, T);
      ImGui::Unindent();
    }
    ImGui::PopID();
  }
  if (ImGui::SmallButton(("+ mask" + id + "add").c_str()))
    Emit(state, EditScenario{"add mask part", [path](Scenario& x) {
                               MaskSpec causal;
                               causal.kind = MaskKind::kCausal;
                               MaskPart(x.mask, path).of.push_back(causal);
                             }});
  Tip(m.kind == MaskKind::kAnd
          ? "Add a part (causal; choose its kind after): a key must be allowed by every part."
          : "Add a part (causal; choose its kind after): a key is allowed when any part "
            "allows it.");
  ImGui::Unindent();
}

void DrawMaskFields(AppState& state, const MaskSpec& m, const std::vector<size_t>& path,
                    int64_t T) {
  const std::string id = "##mask" + std::to_string(path.size()) + "_" +
                         (path.empty() ? std::string() : std::to_string(path.back()));
  auto legend = [&] {  // on a line of its own, wrapped at the panel's edge
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", MaskLegend(m).c_str());
    ImGui::PopTextWrapPos();
  };
  if (m.kind == MaskKind::kSlidingWindow || m.kind == MaskKind::kPrefixLm) {
    const bool window = m.kind == MaskKind::kSlidingWindow;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(window ? "W =" : "P =");
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    int v = static_cast<int>(window ? m.window : m.prefix);
    ImGui::SetNextItemWidth(
        std::min(ImGui::GetFontSize() * 6.0f, ImGui::GetContentRegionAvail().x));
    if (ImGui::InputInt((id + (window ? "w" : "p")).c_str(), &v) && v >= (window ? 1 : 0) &&
        v <= std::max<int64_t>(T, 1) + 1)
      Emit(state,
           EditScenario{window ? "mask window" : "mask prefix", [path, window, v](Scenario& x) {
                          MaskSpec& part = MaskPart(x.mask, path);
                          (window ? part.window : part.prefix) = v;
                        }});
    Tip(window ? "W: how many keys each query sees, its own included (1 .. T)."
               : "P: how many leading keys every query sees (0 .. T).");
    legend();
  } else if (m.kind == MaskKind::kDocument) {
    std::string text;
    for (size_t k = 0; k < m.doc_ids.size(); ++k)
      text += (k ? " " : "") + std::to_string(m.doc_ids[k]);
    char buf[1024];
    std::snprintf(buf, sizeof buf, "%s", text.c_str());
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("document ids");
    ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::SetNextItemWidth(
        std::min(ImGui::GetFontSize() * 14.0f, ImGui::GetContentRegionAvail().x));
    if (ImGui::InputText((id + "d").c_str(), buf, sizeof buf,
                         ImGuiInputTextFlags_EnterReturnsTrue)) {
      std::vector<int64_t> ids;
      std::istringstream in(buf);
      for (long long v; in >> v;) ids.push_back(v);
      if (in.eof() && static_cast<int64_t>(ids.size()) == T)
        Emit(state, EditScenario{"document ids", [path, ids](Scenario& x) {
                                   MaskPart(x.mask, path).doc_ids = ids;
                                 }});
    }
    Tip(("One document id per token (" + std::to_string(T) +
         " integers, spaces between), then Enter.")
            .c_str());
    legend();
  } else if (m.kind == MaskKind::kAnd || m.kind == MaskKind::kOr) {
    legend();
    DrawMaskParts(state, m, path, id, T);
  }
}

/// Every mask kind: its label in words and what it does. Chapter 3's three kinds come first
/// (the basic controls); the others are today's (the "Modern attention" section).
struct MaskChoice {
  MaskKind kind;
  const char* label;
  const char* tip;
};
constexpr MaskChoice kMaskChoices[] = {
    {MaskKind::kNone, "none", "Every query attends to every key (an encoder)."},
    {MaskKind::kCausal, "causal",
     "Query i sees keys 0..i only (a decoder/GPT): torch.tril, masked_fill(-inf)."},
    {MaskKind::kCustom, "custom",
     "Your own mask: click or drag on the mask (or logits, weights) heatmap to forbid or "
     "allow cells. Starts from the mask on screen."},
    {MaskKind::kSlidingWindow, "sliding window",
     "Query i sees keys i-W+1..i: W keys, this one included (gpt-oss, Mistral, mlx-lm)."},
    {MaskKind::kPrefixLm, "prefix-LM",
     "Keys 0..P-1 (the prompt) are seen by every query, causal after (T5, PaliGemma)."},
    {MaskKind::kDocument, "documents",
     "Packed documents: causal within a document, nothing across (one id per token)."},
    {MaskKind::kAnd, "and",
     "Allowed where every mask of the list allows (attention-gym's and_masks)."},
    {MaskKind::kOr, "or", "Allowed where any mask of the list allows (attention-gym's or_masks)."},
};
constexpr size_t kBasicMaskChoices = 3;  // none, causal, custom: chapter 3

const char* MaskLabel(MaskKind kind) {
  for (const MaskChoice& c : kMaskChoices)
    if (c.kind == kind) return c.label;
  return Name(kind);
}

bool IsBasicMask(MaskKind kind) {
  return kind == MaskKind::kNone || kind == MaskKind::kCausal || kind == MaskKind::kCustom;
}

/// Radio buttons for kMaskChoices[first, last), wrapping onto the next line when the panel is
/// narrow; a click is one undo step.
void DrawMaskRadios(AppState& state, const Scenario& s, size_t first, size_t last) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  for (size_t i = first; i < last; ++i) {
    const MaskChoice& mk = kMaskChoices[i];
    const float width =
        ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(mk.label).x;
    if (ImGui::GetItemRectMax().x + style.ItemSpacing.x + width < right) ImGui::SameLine();
    if (ImGui::RadioButton(mk.label, s.mask.kind == mk.kind) && s.mask.kind != mk.kind)
      Emit(state, SetMaskKind{mk.kind});
    Tip(mk.tip);
  }
}

/// Chapter 3's mask row (none, causal, custom) and, for a custom mask, its allow-all and
/// causal buttons. Today's kinds are in DrawModernMask.
void DrawMask(AppState& state, const Scenario& s, const Shape& sh) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("mask");
  DrawMaskRadios(state, s, 0, kBasicMaskChoices);
  if (!IsBasicMask(s.mask.kind)) {
    ImGui::TextDisabled("now: %s (under Modern attention)", MaskLabel(s.mask.kind));
    Tip(MaskLegend(s.mask).c_str());
  }
  if (s.mask.kind == MaskKind::kCustom) {
    const int64_t T = sh.T;
    if (ImGui::SmallButton("allow all"))
      Emit(state, EditScenario{"allow all",
                               [T](Scenario& x) { x.mask.allowed = MaskMatrix::Ones(T, T); }});
    Tip("Every cell allowed.");
    ImGui::SameLine();
    if (ImGui::SmallButton("causal")) {
      Emit(state, EditScenario{"causal pattern", [T](Scenario& x) {
                                 x.mask.allowed =
                                     MaskMatrix::Ones(T, T).triangularView<Eigen::Lower>();
                               }});
    }
    Tip("Start again from the causal triangle.");
    ImGui::SameLine();
    ImGui::TextDisabled("paint on the heatmaps");
  }
}

/// Today's mask kinds (sliding window, prefix-LM, documents, and / or) with their fields, and
/// for any mask what a row with no allowed key gives and the value masked logits get.
void DrawModernMask(AppState& state, const Scenario& s, const Shape& sh) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("more masks");
  DrawMaskRadios(state, s, kBasicMaskChoices, std::size(kMaskChoices));
  DrawMaskFields(state, s.mask, {}, sh.T);
  if (s.mask.kind != MaskKind::kNone) {
    bool zero = s.mask.masked_rows == MaskedRows::kZero;
    if (ImGui::Checkbox("rows with no allowed key give 0", &zero))
      Emit(state, EditScenario{"masked rows", [zero](Scenario& x) {
                                 x.mask.masked_rows = zero ? MaskedRows::kZero : MaskedRows::kNan;
                               }});
    Tip(("A row whose every key is masked gives " + MaskedRowsLegend(MaskedRows::kNan) +
         " when off, and " + MaskedRowsLegend(MaskedRows::kZero) + " when on.")
            .c_str());
    DrawMaskFill(state);
  }
}

/// The normalization combo: stable softmax, naive exp / sum, divide by sum, mean.
void DrawNormalization(AppState& state, const Scenario& s) {
  const struct {
    Normalization value;
    const char* label;
    const char* tip;
  } norms[] = {
      {Normalization::kSoftmax, "softmax (stable)",
       "exp(z - max) / sum exp(z - max): what torch.softmax does. Never overflows."},
      {Normalization::kSoftmaxNaive, "naive exp / sum",
       "exp(z) / sum exp(z) as first written in the notebooks: with large logits exp overflows "
       "to inf and the weights become NaN (magenta). Try multiplier 100."},
      {Normalization::kSum, "divide by sum",
       "z / sum(z) over the allowed keys: the notebooks' first \"normalize so they sum to 1\". "
       "Weights can be negative or blow up."},
      {Normalization::kMean, "mean (uniform)",
       "1 / n over the allowed keys: every key weighs the same (Karpathy's averaging with "
       "tril)."},
      {Normalization::kSoftmaxThenMask, "softmax, then mask",
       "softmax over every key, then the weights times the mask and each row divided by its "
       "new sum: Raschka's section 3.5.1 first way (masked_simple_norm). The logits stay "
       "unmasked; the weights equal those of -inf before the softmax."},
      {Normalization::kSoftmaxDimQuery, "softmax over queries (dim=-2)",
       "torch.softmax(logits, dim=-2): each key's column normalised over the queries instead "
       "of each query's row over the keys, the classic mistake (bug-softmax-dim). Columns sum "
       "to 1, rows do not."},
      {Normalization::kSoftmaxThenMaskNoRenorm, "softmax, then mask (no renorm)",
       "softmax over every key, then the weights times the mask, and no division: the classic "
       "mistake (bug-mask-after-softmax). Rows sum to less than 1."},
  };
  int current = 0;
  for (int i = 0; i < static_cast<int>(std::size(norms)); ++i)
    if (norms[i].value == s.normalization) current = i;
  if (ImGui::BeginCombo("normalize", norms[current].label)) {
    for (int i = 0; i < static_cast<int>(std::size(norms)); ++i) {
      if (ImGui::Selectable(norms[i].label, i == current) && i != current)
        Emit(state, SetNormalization{norms[i].value});
      Tip(norms[i].tip);
    }
    ImGui::EndCombo();
  }
  Tip(norms[current].tip);
}

/// The dropout slider and, when dropout is on, its seed.
void DrawDropout(AppState& state, const Scenario& s) {
  float p = static_cast<float>(s.dropout.p);
  if (ImGui::SliderFloat("dropout p", &p, 0.0f, 0.9f, "%.2f"))
    Emit(state, SetDropout{std::round(p * 100.0) / 100.0}, "dropout.p");
  Tip("nn.Dropout(p) in training mode on the weights: each is multiplied by its mask value, 0 "
      "with probability p, else 1 / (1 - p) (so a dropped inf or nan weight becomes nan). 0 "
      "turns it off.");
  if (s.dropout.p > 0) {
    std::optional<uint64_t> seed = s.dropout.seed;
    const bool unseeded = FirstUnseededDraw(s) == UnseededDraw::kDropout;
    if (OptionalSeedInput("dropout seed", &seed,
                          "torch.manual_seed(seed) before the dropout mask is drawn.",
                          unseeded ? UnseededText(s.input.generator) : nullptr))
      Emit(state, EditScenario{"dropout seed", [seed](Scenario& x) { x.dropout.seed = seed; }},
           "dropout.seed");
  }
}

}  // namespace

void DrawAttentionPanel(AppState& state) {
  const Scenario& s = state.scenario;
  const Shape& sh = ShownShape(state);
  DrawScaling(state, s, sh);
  DrawMask(state, s, sh);
  DrawNormalization(state, s);
  DrawDropout(state, s);
}

void DrawAttentionModern(AppState& state) {
  const Scenario& s = state.scenario;
  const Shape& sh = ShownShape(state);
  DrawScaleAt(state, s);
  DrawScoreModifiers(state, s, sh);
  DrawModernMask(state, s, sh);
}

}  // namespace attnlab::gui
