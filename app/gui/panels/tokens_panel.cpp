// tokens_panel.cpp: the Tokens view. The sentence as text, the queries on the left and the keys
// on the right, a line per allowed query-key pair as opaque as its weight, one colour per head.
// Every position and opacity comes from the core's TokenViewLayout (figures/token_view.h), the
// same geometry `attention-lab export --stage tokens` draws; this file only measures the tokens,
// puts the geometry on ImGui's draw list and turns the mouse into a selection: hovering a query
// shades the keys by its row of weights, hovering a key shades the queries that attend to it; a
// click locks the selection, a second click on it or Escape releases it. Beyond about 30 tokens
// the canvas scrolls.
#include <algorithm>
#include <string>

#include "attnlab/figures/token_view.h"
#include "gui/gfx/script_fonts.h"
#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

ImU32 Color(Rgb c, float alpha) {
  return IM_COL32(c.r, c.g, c.b, static_cast<int>(std::clamp(alpha, 0.0f, 1.0f) * 255 + 0.5f));
}

/// The token under `mouse` (canvas coordinates) in `g`, or none.
TokenSelection Hit(const TokenViewGeometry& g, ImVec2 mouse) {
  auto inside = [&](const TokenPlace& t) {
    return mouse.x >= t.x && mouse.x < t.x + t.w && mouse.y >= t.y && mouse.y < t.y + t.h;
  };
  for (const TokenPlace& t : g.queries)
    if (inside(t)) return {TokenSelection::Side::kQuery, t.position};
  for (const TokenPlace& t : g.keys)
    if (inside(t)) return {TokenSelection::Side::kKey, t.position};
  return {};
}

/// The head chooser: "All heads" or one head (with several heads).
void HeadChooser(AppState::TokensViewState& tv, int64_t H) {
  if (H <= 1) {
    tv.head = -1;
    return;
  }
  tv.head = std::clamp<int64_t>(tv.head, -1, H - 1);
  const std::string now = tv.head < 0 ? "All heads" : "Head " + std::to_string(tv.head);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::BeginCombo("##tokens_head", now.c_str())) {
    if (ImGui::Selectable("All heads", tv.head < 0)) tv.head = -1;
    for (int64_t h = 0; h < H; ++h)
      if (ImGui::Selectable(("Head " + std::to_string(h)).c_str(), tv.head == h)) tv.head = h;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
}

/// The legend: each head's colour (and its key head when K/V heads are grouped).
void Legend(const TokenViewGeometry& g) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float sw = ImGui::GetFontSize() * 0.8f;
  for (const TokenLegend& l : g.legend) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + sw, p.y + 3 + sw), Color(l.color, 1));
    ImGui::Dummy(ImVec2(sw, sw));
    ImGui::SameLine();
    ImGui::TextUnformatted(l.text.c_str());
    ImGui::SameLine(0, ImGui::GetFontSize());
  }
  ImGui::NewLine();
  if (!g.groups.empty()) ImGui::TextDisabled("%s", g.groups.c_str());
}

}  // namespace

void DrawTokensPanel(AppState& state) {
  AppState::TokensViewState& tv = state.tokens;
  tv.shown = true;
  const Stages* st = ReadableStages(state);
  if (!st) {
    ImGui::TextDisabled("Running...");
    return;
  }
  HeadChooser(tv, st->shape.H);
  ImGui::TextDisabled(
      "Line opacity = attention weight. Hover a token; click to lock, Esc to release.");
  if (st->shape.T > 256) {
    ImGui::TextWrapped("%lld tokens are too many lines to read; the heatmaps show these weights.",
                       static_cast<long long>(st->shape.T));
    return;
  }

  TokenViewOptions o;
  o.head = tv.head;
  o.batch = std::clamp<int64_t>(state.batch, 0, st->shape.B - 1);
  float label_w = ImGui::CalcTextSize("sink").x;
  for (const std::string& t : state.token_labels)
    label_w = std::max(label_w, ImGui::CalcTextSize(VisualOrder(t).c_str()).x);
  o.label_width = label_w + ImGui::GetFontSize();
  o.row_height = ImGui::GetTextLineHeightWithSpacing() + 4;
  const float avail = ImGui::GetContentRegionAvail().x;
  o.gap = std::clamp(avail - 2 * o.label_width - 40, ImGui::GetFontSize() * 8,
                     ImGui::GetFontSize() * 30);
  o.margin = 8;

  // The selection: a locked one, else the token under the mouse in last frame's geometry.
  if (tv.locked.side != TokenSelection::Side::kNone &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
    tv.locked = {};
  o.selection = tv.locked.side != TokenSelection::Side::kNone ? tv.locked : tv.hovered;
  TokenViewGeometry g;
  try {
    g = TokenViewLayout(*st, state.shown, o);
  } catch (const std::exception& e) {
    ErrorText(e.what());
    return;
  }
  Legend(g);

  ImGui::BeginChild("tokens_canvas", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const Rgb tint = g.legend.size() == 1 ? g.legend[0].color : Rgb{31, 119, 180};
  auto at = [&](float x, float y) { return ImVec2(origin.x + x, origin.y + y); };
  auto shade = [&](const TokenPlace& t) {
    if (t.selected)
      dl->AddRect(at(t.x, t.y + 1), at(t.x + t.w, t.y + t.h - 1), IM_COL32(255, 215, 90, 255), 3, 0,
                  2);
    if (t.share > 0)
      dl->AddRectFilled(at(t.x, t.y + 1), at(t.x + t.w, t.y + t.h - 1), Color(tint, t.share), 3);
  };
  for (const TokenPlace& t : g.queries) shade(t);
  for (const TokenPlace& t : g.keys) shade(t);
  for (const TokenLine& l : g.lines)
    dl->AddLine(at(l.x0 + 2, l.y0), at(l.x1 - 2, l.y1),
                Color(l.color, l.dimmed ? l.opacity * 0.15f : l.opacity), 1.5f);
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float pad = ImGui::GetFontSize() * 0.3f;
  const int64_t T = st->shape.T;
  for (const TokenPlace& t : g.queries) {
    const std::string text = VisualOrder(t.text);
    const float w = ImGui::CalcTextSize(text.c_str()).x;
    dl->AddText(at(t.anchor_x - pad - w, t.anchor_y - ImGui::GetFontSize() / 2), ink, text.c_str());
  }
  for (const TokenPlace& t : g.keys)
    dl->AddText(at(t.anchor_x + pad, t.anchor_y - ImGui::GetFontSize() / 2),
                t.position == T ? muted : ink, VisualOrder(t.text).c_str());
  ImGui::Dummy(ImVec2(g.width, g.height));

  // The mouse: hover follows it, a click locks (or releases) what it is on.
  tv.hovered = {};
  if (ImGui::IsWindowHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    tv.hovered = Hit(g, ImVec2(m.x - origin.x, m.y - origin.y));
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left))
      tv.locked = tv.locked == tv.hovered ? TokenSelection{} : tv.hovered;
  }
  ImGui::EndChild();
  tv.origin = origin;
  tv.drawn = std::move(g);
}

}  // namespace attnlab::gui
