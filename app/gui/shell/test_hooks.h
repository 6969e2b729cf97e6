// test_hooks.h: what the window does for tests and measurements, kept out of main.cpp's loop:
// the script (one command per frame, standing in for the mouse when it clicks), the screenshot
// and the heatmap layout written after the last frame of a headless run, and the frame-time
// statistics (--frame-stats).
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "cli/window_options.h"
#include "gui/shell/script.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

struct TestHooks {
  GuiOptions options;
  ScriptRunner script;
  bool script_running = false;
  std::vector<double> frame_ms;
  int exit_status = 0;  ///< 3: the script failed; 2: the screenshot or layout could not be written

  /// Loads the --script file, if any. Errors: std::runtime_error "FILE:LINE: what is wrong".
  void LoadScript();

  /// Before the widgets: the script emits this frame's actions. False when the run must stop
  /// now (the script failed; exit_status says so).
  bool BeforeFrame(AppState& state);

  /// How long the main loop may wait for events before the next frame (window.h
  /// IdleWaitSeconds; `calm_frames` frames since the last input): a run that ends by itself
  /// never waits, except through a script's `idle S`.
  double WaitSeconds(const AppState& state, int calm_frames, double now) const;

  /// After ImGui's NewFrame backends: a script's mouse replaces the real one.
  void OverrideMouse(const AppState& state, ImGuiIO& io) const;

  /// After rendering: on the last frame of a headless run, writes the screenshot and layout.
  /// Returns true when this was the last frame.
  bool AfterRender(const AppState& state, int display_w, int display_h);

  /// At exit: prints {"frames":..,"median_ms":..,"T":..} with --frame-stats.
  void ReportFrameStats(const AppState& state) const;

  /// At exit, in AddressSanitizer builds only: with ATTNLAB_LEAK_ON_PURPOSE=1 in the
  /// environment, leaks one block from our own code, so that tools/sanitize.sh can check that
  /// its window leak check still fails on a leak of ours. Does nothing otherwise.
  static void LeakOnPurposeIfAsked();
};

}  // namespace attnlab::gui
