// window.h: the main window: one full-screen ImGui window holding the menu bar, the controls
// on the left (input, projections, attention), the heatmaps on the right, the peaking and
// variance panels under them and a status line; plus the dialogs and keyboard shortcuts.
#pragma once

#include <string>

namespace attnlab::gui {

struct AppState;

/// Draws the whole window for this frame (panels emit actions; nothing is applied here).
void DrawMainWindow(AppState& state);

/// Where each heatmap image was drawn in the last frame, as JSON (for --layout and the GUI
/// tests): {"heatmaps": [{"stage", "x0", "y0", "x1", "y1", "rows", "cols"}, ...]} in pixels of
/// the window, top-left origin; stages without an image are left out. Also "canvas" (the visible
/// part of the maps' canvas), "grid_decimals" (the decimals the number layout sized its cells
/// for, 0 without it) and "controls" (the interactive items of the last frame, control_count.h).
std::string HeatmapLayoutJson(const AppState& state);

/// The ImGui style of the app: dark, rounded, a little roomier than the default.
void ApplyStyle();

}  // namespace attnlab::gui
