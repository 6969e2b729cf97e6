// window.h: the main window: one full-screen ImGui window holding the menu bar, the controls
// on the left (input, projections, attention), the heatmaps on the right, the peaking and
// variance panels under them and a status line; plus the dialogs and keyboard shortcuts.
#pragma once

#include <imgui.h>

#include <nlohmann/json_fwd.hpp>
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

/// Whether the window must draw the next frame without waiting for input: a training run, a
/// background recompute, a playing step view, the tour (its highlights), a desktop file
/// dialog, a held mouse button (a drag). Otherwise the main loop waits for events
/// (IdleWaitSeconds).
bool WindowIsBusy(const AppState& state);

/// How long the main loop may wait for an event before drawing again, in seconds; 0: draw
/// now. `calm_frames`: frames drawn since the last input. A few frames after each input let
/// ImGui settle (hover, scroll, a texture uploaded); then it waits, 0.5 s at most while a text
/// field blinks its cursor, else until the next autosave is due (AutosaveWhenIdle), at most
/// 30 s. `now`: steady clock in seconds.
double IdleWaitSeconds(const AppState& state, int calm_frames, double now);

/// Frames drawn after an input before the window may wait (IdleWaitSeconds).
inline constexpr int kSettleFrames = 20;

/// The ImGui style of the app at `scale` (the monitor's content scale times the zoom): dark,
/// rounded, a little roomier than the default. Built from ImGui's default style every time, then
/// ImGuiStyle::ScaleAllSizes(scale), so rebuilding it at a zoom and back is idempotent (scaling
/// the style in place would compound). `scale` below 0.25 counts as 0.25.
ImGuiStyle WindowStyle(float scale);

/// ImGui::GetStyle() = WindowStyle(scale).
void ApplyStyle(float scale);

/// The style's sizes in pixels as JSON (for --layout: the GUI tests compare them after zooming).
nlohmann::json StyleSizesJson(const ImGuiStyle& style);

}  // namespace attnlab::gui
