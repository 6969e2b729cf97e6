// positions_panel.cpp: how positions enter attention (the scenario's "positions"): none, ALiBi
// with its slopes' convention and symmetric distance, RoPE with its layout, theta and sign, or
// the sinusoidal encoding added to X; and RoPE's shift check, which moves every position by s
// and says how much the scores changed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>

#include "attnlab/base/text.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/stage_info.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {

namespace {

/// RoPE's fields: layout, theta, sign. Each edit is one undo step.
void DrawRopeFields(AppState& state, const PositionsSpec& p) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("pairs");
  const struct {
    RopeLayout layout;
    const char* label;
    const char* tip;
  } layouts[] = {
      {RopeLayout::kSplitHalves, "split halves",
       "Dimension i turns with dimension i + d_k/2: x * cos + rotate_half(x) * sin, as Hugging "
       "Face's Llama and LLMs-from-scratch write it."},
      {RopeLayout::kInterleaved, "interleaved",
       "Dimension 2i turns with 2i + 1, the pair read as one complex number times "
       "e^(i angle): Meta's original Llama code."},
  };
  for (const auto& l : layouts) {
    ImGui::SameLine();
    if (ImGui::RadioButton(l.label, p.layout == l.layout) && p.layout != l.layout) {
      const RopeLayout v = l.layout;
      Emit(state, EditScenario{"RoPE layout", [v](Scenario& x) { x.positions.layout = v; }});
    }
    Tip(l.tip);
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("\xCE\xB8 =");  // theta
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  double theta = p.theta;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
  if (ImGui::InputDouble("##rope_theta", &theta, 0.0, 0.0, "%.6g",
                         ImGuiInputTextFlags_EnterReturnsTrue) &&
      theta > 0 && std::isfinite(theta))
    Emit(state, EditScenario{"RoPE theta", [theta](Scenario& x) { x.positions.theta = theta; }});
  Tip("The base of the frequencies: pair p turns by theta^(-2p/d_k) radians per position. "
      "10000 in RoFormer and Llama 2, 500000 in Llama 3. Type a number > 0 and press Enter.");
  ImGui::SameLine();
  bool negative = p.sign < 0;
  if (ImGui::Checkbox("sign \xE2\x88\x92"
                      "1",
                      &negative))
    Emit(state, EditScenario{"RoPE sign",
                             [negative](Scenario& x) { x.positions.sign = negative ? -1 : 1; }});
  Tip("Turn every pair the other way (angle -position x frequency), as nanochat's rotation "
      "does. The scores are those of the other sign with queries and keys swapped in time.");
}

/// ALiBi's fields: the slopes' convention and the symmetric distance. Each edit is one undo
/// step. Given slopes (numbers in the scenario file) are shown, not edited here.
void DrawAlibiFields(AppState& state, const PositionsSpec& p) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("slopes");
  const struct {
    AlibiSlopeRule rule;
    const char* label;
    const char* tip;
  } rules[] = {
      {AlibiSlopeRule::kPaper, "paper",
       "The paper's reference code (get_slopes): 2^(-8h/H) for h = 1..H when H is a power of "
       "two; otherwise those of the power of two below H, then every other slope of twice it "
       "(BLOOM, MPT)."},
      {AlibiSlopeRule::kAttentionGym, "attention-gym",
       "2^(-8(h+1)/H) for heads h = 0..H-1, for any H, as attention-gym's generate_alibi_bias "
       "and flash-attention's tests. The same as the paper's when H is a power of two."},
  };
  for (const auto& r : rules) {
    ImGui::SameLine();
    if (ImGui::RadioButton(r.label, p.slope_rule == r.rule) && p.slope_rule != r.rule) {
      const AlibiSlopeRule v = r.rule;
      Emit(state, EditScenario{"ALiBi slopes", [v](Scenario& x) {
                                 x.positions.slope_rule = v;
                                 x.positions.slopes.clear();
                               }});
    }
    Tip(r.tip);
  }
  if (p.slope_rule == AlibiSlopeRule::kGiven) {
    ImGui::SameLine();
    ImGui::TextDisabled("(given in the file)");
  }
  bool symmetric = p.symmetric;
  if (ImGui::Checkbox("symmetric |i \xE2\x88\x92 j|", &symmetric))
    Emit(state, EditScenario{"ALiBi symmetric",
                             [symmetric](Scenario& x) { x.positions.symmetric = symmetric; }});
  Tip("Subtract m |i - j|, so a key after the query loses as much as one before it (ALiBi in "
      "bidirectional encoders). Under a causal mask nothing changes: every allowed key has "
      "j <= i.");
}

/// The shift check: every position moved by s, the scores recomputed, the largest change.
void DrawShiftCheck(AppState& state) {
  RopeShiftCheck& c = state.rope_shift;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("shift by s =");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  int s = static_cast<int>(c.shift);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6.0f);
  if (ImGui::InputInt("##rope_shift", &s) && s >= -1000000 && s <= 1000000) c.shift = s;
  Tip("Move every token's position by s (token i at position i + s), rotate Q and K again and "
      "recompute the scores. RoPE's score of query i and key j depends on i - j only, so "
      "nothing changes but the last bits of float rounding.");
  // Recomputed once per run of the scores (and per shift), from the stages on screen.
  const int run = state.shown_counts.scores;
  if (c.run != run || c.for_shift != c.shift) {
    if (const Stages* st = ReadableStages(state); st && HasShownRun(state)) {
      c.change = RopeShiftLargestChange(state.shown, *st, c.shift);
      c.run = run;
      c.for_shift = c.shift;
    }
  }
  if (c.run < 0) return;
  // Two short lines, so that no wrap cuts the number.
  ImGui::TextDisabled("shift by s = %lld:", static_cast<long long>(c.for_shift));
  ImGui::TextDisabled("largest score change %s",
                      FormatNumber(c.change, NumberStyle::kGeneral, 2).c_str());
  Tip("The largest |score with positions moved by s - score on screen| over every head, "
      "query and key: rounding only (about 1e-7 of the scores in float32), because a rotated "
      "q_i . k_j depends on i - j alone.");
}

}  // namespace

void DrawPositionsPanel(AppState& state) {
  const Scenario& s = state.scenario;
  const PositionsSpec& p = s.positions;
  std::string slopes;  // ALiBi's slopes of this scenario's heads, for its tooltip
  for (double m : AlibiSlopesOf(p, std::max<int64_t>(s.projections.heads, 1)))
    slopes += (slopes.empty() ? "" : ", ") + FormatNumber(m, NumberStyle::kShortest);
  const struct {
    PositionKind kind;
    const char* label;
    std::string tip;
  } kinds[] = {
      {PositionKind::kNone, "none",
       "No positions: attention sees a set of tokens, not a sequence (the notebooks' attention)."},
      {PositionKind::kAlibi, "ALiBi (linear biases)",
       "ALiBi (Press et al., BLOOM, MPT): adds -m_h (i - j) to the logits, a penalty growing "
       "with the distance from the query, one slope per head, no position embeddings. "
       "Slopes here: " +
           slopes + "."},
      {PositionKind::kRope, "RoPE (rotary)",
       "RoPE: each head's q and k turn pair by pair by an angle proportional to the position, "
       "so q_i . k_j depends on i - j only (Llama, Qwen, nanochat)."},
      {PositionKind::kSinusoidal, "sinusoidal (added to X)",
       "The original Transformer's encoding: sin on even, cos on odd dimensions of "
       "position / 10000^(2i/d_in), added to X before the projections."},
  };
  int current = 0;
  for (int i = 0; i < static_cast<int>(std::size(kinds)); ++i)
    if (kinds[i].kind == p.kind) current = i;
  if (ImGui::BeginCombo("positions", kinds[current].label)) {
    for (int i = 0; i < static_cast<int>(std::size(kinds)); ++i) {
      if (ImGui::Selectable(kinds[i].label, i == current) && i != current) {
        const PositionKind v = kinds[i].kind;
        Emit(state, EditScenario{std::string("positions ") + Name(v),
                                 [v](Scenario& x) { x.positions.kind = v; }});
      }
      Tip(kinds[i].tip.c_str());
    }
    ImGui::EndCombo();
  }
  Tip(kinds[current].tip.c_str());
  if (p.kind == PositionKind::kAlibi) DrawAlibiFields(state, p);
  if (p.kind == PositionKind::kRope) {
    DrawRopeFields(state, p);
    if (state.shown.positions.kind == PositionKind::kRope) DrawShiftCheck(state);
  }
}

}  // namespace attnlab::gui
