// tour_panel.cpp: the guided tour's card (tour.h). It sits on a bottom panel the step does not
// talk about, under the heatmaps it talks about; the
// step's heatmap or panel is outlined in orange, with an arrow from the card to it. Back, Next
// and Skip emit TourCommand actions.
#include <imgui_internal.h>  // GImGui->MovingWindow: the learner drags the card

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "gui/panels/panels.h"
#include "gui/state/app_state.h"
#include "gui/state/tour.h"
#include "gui/widgets/widgets.h"

namespace attnlab::gui {
namespace {

const ImU32 kAccent = IM_COL32(255, 170, 60, 255);

/// Where a target was drawn last frame (invalid when it was not drawn).
ScreenRect TargetRect(const AppState& state, TourTarget target) {
  if (const std::optional<Stage> s = TargetStage(target)) {
    if (state.central != CentralView::kHeatmaps) return {};
    // Clipped to the canvas's visible part: the outline never runs over the panels below.
    ScreenRect r = state.heatmap_cells[StageIndex(*s)];
    const ScreenRect& view = state.heatmap_canvas;
    if (view.valid() && r.valid()) {
      r.min = ImVec2(std::max(r.min.x, view.min.x), std::max(r.min.y, view.min.y));
      r.max = ImVec2(std::min(r.max.x, view.max.x), std::min(r.max.y, view.max.y));
    }
    return r.valid() ? r : ScreenRect{};
  }
  switch (target) {
    case TourTarget::kPeaking:
      return state.central == CentralView::kHeatmaps ? state.peaking_rect : ScreenRect{};
    case TourTarget::kVariance:
      return state.central == CentralView::kHeatmaps ? state.variance_rect : ScreenRect{};
    case TourTarget::kControls:
      return state.controls_rect;
    case TourTarget::kViews:
      return state.views_rect;
    default:
      return {};
  }
}

ImVec2 Clamp(ImVec2 p, const ScreenRect& r) {
  return ImVec2(std::clamp(p.x, r.min.x, r.max.x), std::clamp(p.y, r.min.y, r.max.y));
}

/// An orange outline around the target; `strong`: the step's main target, with an arrow
/// from the card.
void Highlight(const ScreenRect& target, const ScreenRect& card, bool strong) {
  if (!target.valid()) return;
  ImDrawList* dl = ImGui::GetForegroundDrawList();
  const ImVec2 a(target.min.x - 3, target.min.y - 3), b(target.max.x + 3, target.max.y + 3);
  const ImU32 color = strong ? kAccent : IM_COL32(255, 170, 60, 150);
  dl->AddRect(a, b, IM_COL32(0, 0, 0, 160), 6.0f, 0, strong ? 5.0f : 3.5f);
  dl->AddRect(a, b, color, 6.0f, 0, strong ? 2.5f : 1.5f);
  if (!strong || !card.valid()) return;
  // From the card's edge toward the target's nearest edge.
  const ImVec2 tc((target.min.x + target.max.x) * 0.5f, (target.min.y + target.max.y) * 0.5f);
  const ImVec2 cc((card.min.x + card.max.x) * 0.5f, (card.min.y + card.max.y) * 0.5f);
  const ImVec2 from = Clamp(tc, card);
  const ImVec2 to = Clamp(cc, ScreenRect{a, b});
  const float dx = to.x - from.x, dy = to.y - from.y, len = std::hypot(dx, dy);
  // Only to a neighbour: a long arrow would cross other heatmaps (the outline says enough).
  if (len < 12 || len > ImGui::GetFontSize() * 5.0f) return;
  const ImVec2 u(dx / len, dy / len), n(-u.y, u.x);
  const ImVec2 tip(to.x - u.x * 2, to.y - u.y * 2);
  const ImVec2 base(tip.x - u.x * 11, tip.y - u.y * 11);
  dl->AddLine(from, base, IM_COL32(0, 0, 0, 160), 5.0f);
  dl->AddLine(from, base, kAccent, 2.5f);
  dl->AddTriangleFilled(tip, ImVec2(base.x + n.x * 6, base.y + n.y * 6),
                        ImVec2(base.x - n.x * 6, base.y - n.y * 6), kAccent);
}

/// "Your turn: ..." and whether it is done yet (the check is UpdateTourTask's).
void DrawTask(const char* task, bool done) {
  ImGui::Spacing();
  const ImVec4 accent = ImGui::ColorConvertU32ToFloat4(kAccent);
  TextWrappedAtSpaces((std::string("Your turn: ") + task).c_str(), &accent);
  if (done) {
    const ImVec4 green(0.45f, 0.85f, 0.45f, 1.0f);
    TextWrappedAtSpaces("\xE2\x9C\x93 Done! Next when you are ready.", &green);
  } else {
    const ImVec4 grey = ImGui::GetStyle().Colors[ImGuiCol_TextDisabled];
    TextWrappedAtSpaces("\xE2\x97\x8B not yet \xE2\x80\x94 or just go on with Next.", &grey);
  }
}

}  // namespace

/// Where the card goes, and how wide it is: at `preferred` if there it covers neither what the
/// step points at (nor, if it can, its second target) nor the status bar; else beside the
/// target (right, left, below, above), else in a corner of the window; each place first at
/// the width asked for, then narrower (and so taller). Among places that all cover the target,
/// the one that covers least of it. Always inside the window above the status bar. The
/// card's height is last frame's, scaled to the width.
ImVec2 PlaceCard(const AppState& state, const TourStep& step, ImVec2 preferred, float* width) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemSpacing.y + 4;
  const ImVec2 lo(vp->WorkPos.x + 4, vp->WorkPos.y + 4);
  const ImVec2 hi(vp->WorkPos.x + vp->WorkSize.x - 4, vp->WorkPos.y + vp->WorkSize.y - status_h);
  const ScreenRect& last = state.tour.card;
  const float last_w = last.valid() ? last.max.x - last.min.x : *width;
  const float last_h = last.valid() ? last.max.y - last.min.y : ImGui::GetFontSize() * 14.0f;
  const ScreenRect t = TargetRect(state, step.target), also = TargetRect(state, step.also);
  const float asked = *width, gap = 12;
  ImVec2 best = preferred;
  float least = FLT_MAX;
  for (const float w : {asked, asked * 0.8f, asked * 0.65f}) {
    if (w < ImGui::GetFontSize() * 15.0f && w != asked) break;
    const float h = last_h * std::max(1.0f, last_w / w);  // the same text, fewer columns
    auto inside = [&](ImVec2 p) {
      return ImVec2(std::clamp(p.x, lo.x, std::max(lo.x, hi.x - w)),
                    std::clamp(p.y, lo.y, std::max(lo.y, hi.y - h)));
    };
    auto covered = [&](ImVec2 p, const ScreenRect& r) {  // the area of r under the card at p
      if (!r.valid()) return 0.0f;
      const float x = std::min(p.x + w, r.max.x) - std::max(p.x, r.min.x);
      const float y = std::min(p.y + h, r.max.y) - std::max(p.y, r.min.y);
      return x > 0 && y > 0 ? x * y : 0.0f;
    };
    std::vector<ImVec2> candidates = {inside(preferred)};
    for (const ScreenRect& r : {t, also})
      if (r.valid())
        for (ImVec2 p :
             {ImVec2(r.max.x + gap, r.min.y), ImVec2(r.min.x - gap - w, r.min.y),
              ImVec2(r.min.x, r.max.y + gap), ImVec2(r.min.x, r.min.y - gap - h),
              ImVec2(r.max.x + gap, r.max.y - h), ImVec2(r.min.x - gap - w, r.max.y - h)})
          candidates.push_back(inside(p));
    for (ImVec2 p : {hi, ImVec2(lo.x, hi.y), ImVec2(hi.x, lo.y), lo})
      candidates.push_back(inside(p));  // the window's corners
    for (const ImVec2& p : candidates)  // free of both targets
      if (covered(p, t) == 0 && covered(p, also) == 0) {
        *width = w;
        return p;
      }
    for (const ImVec2& p : candidates)  // free of the main target, else covering least of it
      if (const float c = covered(p, t) * 1000.0f + covered(p, also); c < least) {
        least = c;
        best = p;
        *width = w;
      }
    if (least < 1000.0f) return best;  // free of the main target at this width
  }
  return best;
}

void DrawTourPanel(AppState& state) {
  TourState& tour = state.tour;
  if (!tour.active) {
    tour.card = tour.target = ScreenRect{};
    return;
  }
  const std::vector<TourStep>& steps = TourSteps();
  tour.step = std::clamp(tour.step, 0, static_cast<int>(steps.size()) - 1);
  const TourStep& step = steps[static_cast<size_t>(tour.step)];

  // The card sits on the bottom panel the step does not talk about (the variance experiment,
  // or the peaking panel when the step is about the variance), never on a heatmap; in the
  // other views, bottom right.
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ScreenRect& slot =
      step.target == TourTarget::kVariance || step.also == TourTarget::kVariance
          ? state.peaking_rect
          : state.variance_rect;
  const bool docked = state.central == CentralView::kHeatmaps && slot.valid();
  float width = docked ? std::max(slot.max.x - slot.min.x, ImGui::GetFontSize() * 18.0f)
                       : ImGui::GetFontSize() * 24.0f;
  const ImVec2 preferred =
      docked ? slot.min
             : ImVec2(vp->WorkPos.x + vp->WorkSize.x - width - 16,
                      vp->WorkPos.y + vp->WorkSize.y - ImGui::GetFontSize() * 16.0f);
  const ImVec2 pos = PlaceCard(state, step, preferred, &width);
  // Placed each frame until the learner drags the card; then where they put it.
  if (!tour.moved) ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSizeConstraints(ImVec2(width, 0), ImVec2(width, FLT_MAX));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.16f, 0.15f, 0.13f, 1.0f));  // opaque
  ImGui::PushStyleColor(ImGuiCol_Border, ImGui::ColorConvertU32ToFloat4(kAccent));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 2.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 6.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(12, 10));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav;
  if (ImGui::Begin("##tour", nullptr, flags)) {
    if (!tour.moved && GImGui->MovingWindow == ImGui::GetCurrentWindow()) tour.moved = true;
    ImGui::TextDisabled("Guided tour  \xC2\xB7  %d of %zu", tour.step + 1, steps.size());
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(kAccent), "%s", step.title);
    TextWrappedAtSpaces(step.text);
    if (step.task) DrawTask(step.task, tour.task_done);
    ImGui::Spacing();
    const bool last = tour.step + 1 == static_cast<int>(steps.size());
    ImGui::BeginDisabled(tour.step == 0);
    if (ImGui::Button("\xE2\x97\x82 Back")) Emit(state, TourCommand{TourCommand::kBack});
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.45f, 0.12f, 1.0f));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.85f, 0.55f, 0.18f, 1.0f));
    if (ImGui::Button(last ? "Finish" : "Next \xE2\x96\xB8"))
      Emit(state, TourCommand{TourCommand::kNext});
    ImGui::PopStyleColor(2);
    if (step.preset && !last) Tip("The step's preset is loaded for you; Ctrl+Z takes it back.");
    const char* skip = "Skip tour";
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize(skip).x -
                    ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::Button(skip)) Emit(state, TourCommand{TourCommand::kSkip});
    Tip("Close the tour. Help \xE2\x96\xB8 Guided tour (F1) opens it again.");
    tour.card = ScreenRect{ImGui::GetWindowPos(),
                           ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                                  ImGui::GetWindowPos().y + ImGui::GetWindowSize().y)};
  }
  ImGui::End();
  ImGui::PopStyleVar(3);
  ImGui::PopStyleColor(2);

  tour.target = TargetRect(state, step.target);
  Highlight(TargetRect(state, step.also), tour.card, false);
  Highlight(tour.target, tour.card, true);
}

}  // namespace attnlab::gui
