// test_hooks.cpp: see test_hooks.h.
#include "gui/shell/test_hooks.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "attnlab/base/file_io.h"
#include "gui/gfx/screenshot.h"
#include "gui/shell/window.h"

namespace attnlab::gui {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The value 90% of v lie at or below (the nearest rank), 0 for none.
double Percentile90(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() * 9 / 10];
}

}  // namespace

void TestHooks::LoadScript() {
  if (options.script.empty()) return;
  script.Load(options.script);
  script_running = script.loaded();
}

bool TestHooks::BeforeFrame(AppState& state) {
  if (!script_running) return true;
  script_running = script.Step(state);
  if (script.failure().empty()) return true;
  std::cerr << "attention-lab: script failed: " << script.failure() << "\n";
  exit_status = 3;
  return false;
}

double TestHooks::WaitSeconds(const AppState& state, int calm_frames, double now) const {
  if (script_running) return script.IdleSeconds();
  if (options.Headless()) return 0.0;
  return IdleWaitSeconds(state, calm_frames, now);
}

void TestHooks::OverrideMouse(const AppState& state, ImGuiIO& io) const {
  if (!state.script_mouse.active) {
    // A headless run has no user: Xvfb's pointer rests mid-screen and would hover a heatmap
    // (a tooltip in every screenshot). Only the script's hover and click move the mouse.
    if (options.Headless()) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    return;
  }
  io.MousePos = state.script_mouse.pos;
  io.MouseDown[0] = state.script_mouse.down;
  io.MouseWheel = state.script_mouse.wheel;
}

bool TestHooks::AfterRender(const AppState& state, int display_w, int display_h) {
  const bool frames_done = options.frames == 0 || state.frame >= options.frames;
  const bool last_frame = options.Headless() && frames_done && !script_running;
  if (!last_frame) return false;
  try {
    if (!options.screenshot.empty())
      WriteFileAtomic(options.screenshot, ReadFramebufferPng(display_w, display_h));
    if (!options.layout.empty()) WriteFileAtomic(options.layout, HeatmapLayoutJson(state));
  } catch (const std::exception& e) {
    std::cerr << "attention-lab: error: " << e.what() << "\n";
    exit_status = 2;
  }
  return true;
}

void TestHooks::ReportFrameStats(const AppState& state) const {
  if (!options.frame_stats) return;
  // The first frames build the font atlas and the first textures: leave them out.
  const size_t skip = std::min<size_t>(frame_ms.size() / 10 + 2, frame_ms.size());
  const std::vector<double> steady(frame_ms.begin() + skip, frame_ms.end());
  std::printf(
      "{\"frames\": %zu, \"median_ms\": %.3f, \"p90_ms\": %.3f, \"T\": %lld, "
      "\"background_runs\": %lld}\n",
      steady.size(), Median(steady), Percentile90(steady),
      static_cast<long long>(ShownShape(state).T),
      static_cast<long long>(state.background.completed));
  if (state.script_idle.wall >= 0)  // the last `idle S` of the script
    std::printf("{\"idle_wall_s\": %.3f, \"idle_cpu_s\": %.3f}\n", state.script_idle.wall,
                state.script_idle.cpu);
}

#if defined(__SANITIZE_ADDRESS__)
namespace {
// Holds the block until it is dropped below: a pointer in a volatile global is not optimised away.
char* volatile g_leak_probe = nullptr;
}  // namespace
#endif

void TestHooks::LeakOnPurposeIfAsked() {
#if defined(__SANITIZE_ADDRESS__)
  const char* asked = std::getenv("ATTNLAB_LEAK_ON_PURPOSE");
  if (!asked || std::strcmp(asked, "1") != 0) return;
  g_leak_probe = new char[4096];
  std::memset(g_leak_probe, 1, 4096);
  g_leak_probe = nullptr;  // the only pointer is gone: LeakSanitizer must report 4096 bytes
#endif
}

}  // namespace attnlab::gui
