// control_count.h: how many interactive items (buttons, checkboxes, sliders, fields, combos,
// menu items, tree headers, the heatmaps' cells...) the window drew in a frame, counted in one
// place: every ImGui widget that can be hovered asks ImGui::ItemHoverable once per frame when it
// is not clipped away, and the link wraps that function (-Wl,--wrap, app/CMakeLists.txt) to
// count the distinct item ids. --layout writes the count as "controls" (the 40-control rule of a
// new user's first screen); nothing else reads it.
#pragma once

namespace attnlab::gui {

/// Starts counting a new frame (call before the frame's widgets).
void BeginControlCount();

/// The distinct interactive items counted since BeginControlCount.
int ControlCount();

}  // namespace attnlab::gui
