// main.cpp: dispatch. With a subcommand (dump, presets, variance, show, ...) attention-lab is a
// command-line tool built on the core; without one it opens the window. The window part reads
// like Dear ImGui's example_glfw_opengl3: set-up, main loop, clean-up, each step commented;
// everything the app does lives in gui/ (AppState, actions, panels).
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/base/file_io.h"
#include "attnlab/base/text.h"
#include "cli/cli.h"
#include "cli/window_options.h"
#include "gui/actions/apply.h"
#include "gui/actions/microgpt_view.h"
#include "gui/actions/training.h"
#include "gui/gfx/gl.h"
#include "gui/gfx/keep_loaded.h"
#include "gui/gfx/screenshot.h"
#include "gui/gfx/script_fonts.h"
#include "gui/gfx/window_icon.h"
#include "gui/panels/panels.h"
#include "gui/shell/script.h"
#include "gui/shell/test_hooks.h"
#include "gui/shell/window.h"
#include "gui/state/actions.h"
#include "gui/state/app_state.h"
#include "gui/state/recent_files.h"
#include "gui/state/session.h"
#include "gui/widgets/stage_layout.h"

namespace {

/// SIGTERM, SIGINT or SIGHUP asked the window to close: the loop ends and the session is saved.
volatile std::sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int signal) { g_stop_signal = signal; }

void CatchStopSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaction(s, &sa, nullptr);
}

void GlfwErrorCallback(int error, const char* description) {
  std::fprintf(stderr, "attention-lab: GLFW error %d: %s\n", error, description);
}

/// Files dropped on the window become one DropFiles action (the first .json opens).
void OnDrop(GLFWwindow* window, int count, const char** paths) {
  auto* state = static_cast<attnlab::gui::AppState*>(glfwGetWindowUserPointer(window));
  if (!state || count <= 0) return;
  attnlab::gui::DropFiles drop;
  for (int i = 0; i < count; ++i) drop.paths.emplace_back(paths[i]);
  attnlab::gui::Emit(*state, std::move(drop));
}

/// The fallback faces merged into the font just added (ImFontConfig::MergeMode), at its size.
void MergeFallbacks(const std::vector<attnlab::gui::FallbackFace>& faces, float size) {
  for (const attnlab::gui::FallbackFace& face : faces) {
    ImFontConfig config;
    config.MergeMode = true;
    config.FontNo = face.index;
    ImGui::GetIO().Fonts->AddFontFromFileTTF(face.file.c_str(), size, &config, face.ranges.data());
  }
}

/// DejaVu Sans at a readable size, with the glyphs the labels use (BaseGlyphRanges: Latin,
/// Greek, arrows, math symbols such as the square root), and DejaVu Sans Mono for code; the
/// tokens' other letters (`codepoints`: CJK, Arabic, emoji, ...) merged into each from the
/// fallback fonts fontconfig finds. Falls back to ImGui's built-in font, with a warning.
attnlab::gui::Fonts LoadFonts(float scale, const std::vector<ImWchar>& codepoints) {
  ImGuiIO& io = ImGui::GetIO();
  attnlab::gui::Fonts fonts;
  fonts.codepoints = codepoints;
  fonts.fallbacks = attnlab::gui::FindFallbackFaces(codepoints);
  const ImWchar* ranges = attnlab::gui::BaseGlyphRanges();
  const char* path = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    fonts.regular = io.Fonts->AddFontFromFileTTF(path, std::round(16.0f * scale), nullptr, ranges);
    MergeFallbacks(fonts.fallbacks, std::round(16.0f * scale));
    fonts.small = io.Fonts->AddFontFromFileTTF(path, std::round(13.0f * scale), nullptr, ranges);
    MergeFallbacks(fonts.fallbacks, std::round(13.0f * scale));
  }
  const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  if (fonts.regular && std::filesystem::exists(mono, ec)) {
    fonts.mono = io.Fonts->AddFontFromFileTTF(mono, std::round(14.0f * scale), nullptr, ranges);
    MergeFallbacks(fonts.fallbacks, std::round(14.0f * scale));
  }
  if (!fonts.regular) {
    fonts.warning = std::string("Font ") + path +
                    " not found (install fonts-dejavu-core); using ImGui's small built-in font.";
    std::fprintf(stderr, "attention-lab: %s\n", fonts.warning.c_str());
    ImFontConfig config;
    config.SizePixels = std::round(13.0f * scale);
    fonts.regular = io.Fonts->AddFontDefault(&config);
    fonts.small = fonts.regular;
  }
  if (!fonts.mono) fonts.mono = fonts.regular;
  return fonts;
}

/// The fonts and the style's sizes at the monitor's content scale times the zoom (the style
/// from its one base each time: ApplyStyle).
void ScaleFontsAndStyle(attnlab::gui::AppState& state) {
  const float scale = state.content_scale * state.zoom;
  state.fonts = LoadFonts(scale, state.font_codepoints);
  attnlab::gui::ApplyStyle(scale);
}

/// At start: the window's content scale (HiDPI) and the remembered zoom, then the fonts.
void ScaleToMonitor(GLFWwindow* window, attnlab::gui::AppState& state) {
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window, &sx, &sy);
  state.content_scale = std::clamp(sx, 0.5f, 4.0f);
  state.zoom = attnlab::gui::LoadSettings().zoom;
  ScaleFontsAndStyle(state);
}

/// View > Zoom or the shown tokens' letters changed: the fonts again at the new size (a sharp
/// atlas, not a stretched one) with the tokens' fallback glyphs, and the style's sizes scaled to
/// match. Runs between frames, so no frame draws with a half-built atlas.
void RebuildFonts(attnlab::gui::AppState& state) {
  ImGui::GetIO().Fonts->Clear();
  ScaleFontsAndStyle(state);
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  state.fonts_dirty = false;
}

/// Options, start scenario and script; returns an exit status when the app must stop now. A
/// scenario file that cannot be opened does not stop it: `*start_error` gets the reason.
std::optional<int> Prepare(int argc, char** argv, attnlab::gui::TestHooks& hooks,
                           attnlab::gui::StartPoint& start, std::string* start_error) {
  namespace gui = attnlab::gui;
  try {
    bool exit_now = false;
    hooks.options = gui::ParseGuiOptions(argc, argv, &exit_now);
    if (exit_now) return 0;
  } catch (const gui::OptionsError& e) {
    std::cerr << "attention-lab: error: " << attnlab::MessageText(e.what(), 960)
              << " (see attention-lab --help)\n";
    return 2;
  }
  try {
    try {
      start = gui::ChooseStart(hooks.options);
    } catch (const gui::StartError& e) {
      // --preset ID or a path to nothing: a typo on a command line, refused before any window.
      std::error_code ec;
      if (hooks.options.file.empty() ||
          !std::filesystem::exists(gui::ExpandPath(hooks.options.file), ec))
        throw;
      // A file that is not a scenario (opened from the desktop, say): the window opens what it
      // would open without one and says why in its status bar; the run's status is still 2.
      std::cerr << "attention-lab: error: " << attnlab::MessageText(e.what(), 960) << "\n";
      *start_error = std::string("Cannot open ") + e.what();
      gui::GuiOptions without_file = hooks.options;
      without_file.file.clear();
      start = gui::ChooseStart(without_file);
    }
    hooks.LoadScript();
  } catch (const std::exception& e) {
    if (start.marked) gui::ClearStartMarker();  // an orderly stop, not a crash
    std::cerr << "attention-lab: error: " << attnlab::MessageText(e.what(), 960) << "\n";
    return 2;
  }
  return std::nullopt;
}

/// A GLFW window with a GL 3.3 core context (float textures, framebuffer objects, texelFetch)
/// and its functions loaded; nullptr with the reason on stderr.
GLFWwindow* OpenWindow(const attnlab::gui::GuiOptions& options) {
  glfwSetErrorCallback(GlfwErrorCallback);
  if (!glfwInit()) {
    std::cerr << "attention-lab: error: cannot open a window (no display? try xvfb-run)\n";
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
  attnlab::gui::HintDesktopIdentity();  // WM_CLASS attention-lab, as the desktop entry
  // Without --size: 1280 x 800 times the monitor's content scale where its work area has room,
  // else the whole work area (stage_layout.h, FirstWindowSize).
  int width = options.width, height = options.height;
  if (width == 0) {
    float sx = 1, sy = 1;
    int wx = 0, wy = 0, ww = 0, wh = 0;
    if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
      glfwGetMonitorContentScale(monitor, &sx, &sy);
      glfwGetMonitorWorkarea(monitor, &wx, &wy, &ww, &wh);
    }
    const attnlab::gui::WindowSize size = attnlab::gui::FirstWindowSize(ww, wh, sx);
    width = size.width;
    height = size.height;
  }
  GLFWwindow* window = glfwCreateWindow(width, height, "Attention Lab", nullptr, nullptr);
  if (!window) {
    std::cerr << "attention-lab: error: cannot create an OpenGL 3.3 window\n";
    glfwTerminate();
    return nullptr;
  }
  attnlab::gui::SetWindowIcon(window);
  glfwMakeContextCurrent(window);
  if (!gladLoadGL(glfwGetProcAddress)) {
    std::cerr << "attention-lab: error: cannot load OpenGL 3.3 functions\n";
    glfwDestroyWindow(window);
    glfwTerminate();
    return nullptr;
  }
  glfwSwapInterval(options.Headless() ? 0 : 1);  // vsync, except when measuring
  // The driver stays mapped after glfwTerminate: what it keeps for the process is then not
  // reported by LeakSanitizer as a leak of an unknown module (keep_loaded.h).
  attnlab::gui::KeepLoadedLibrariesMapped();
  return window;
}

/// The start scenario on screen, its message if it fell back, and the guided tour on the very
/// first start (see session.h).
void StartState(attnlab::gui::AppState& state, const attnlab::gui::StartPoint& start,
                const attnlab::gui::GuiOptions& options) {
  namespace gui = attnlab::gui;
  gui::StartScenario(state, start.scenario, start.preset_id);
  state.scenario_path = start.path;
  if (start.figure) gui::ApplyFigureView(state, *start.figure);
  if (!start.message.empty()) {
    state.status = start.message;
    state.status_is_error = true;
    std::cerr << "attention-lab: " << attnlab::MessageText(start.message, 960) << "\n";
  }
  const gui::Settings settings = gui::LoadSettings();
  state.tour.seen = settings.tour_seen;
  state.modern_open = settings.modern_open;
  state.plots_open = settings.plots_open;
  state.export_folder = settings.export_folder;
  state.recent_files = gui::LoadRecentFiles();
  state.scripted = !options.script.empty();
  if (gui::TourStartsByItself(options, settings))
    gui::Emit(state, gui::TourCommand{gui::TourCommand::kStart});
}

void ReleaseTextures(attnlab::gui::AppState& state) {
  for (attnlab::gui::HeatmapSlot& slot : state.heatmaps) slot.gpu.Release();
  for (attnlab::gui::HeatmapSlot& slot : state.head_maps) slot.gpu.Release();
  for (attnlab::gui::HeatmapSlot& slot : state.trick.weight_maps) slot.gpu.Release();
  for (attnlab::gui::HeatmapSlot& slot : state.trick.result_maps) slot.gpu.Release();
  for (attnlab::gui::HeatmapSlot& slot : state.compare.maps) slot.gpu.Release();
  attnlab::gui::ReleaseTrainTextures(state);
  attnlab::gui::ReleaseMicrogptView(state);
  attnlab::gui::ReleaseGradientTextures(state);
  if (state.dialog.preview.texture) glDeleteTextures(1, &state.dialog.preview.texture);
  state.dialog.preview.texture = 0;
}

/// ImGui's draw data into the window's framebuffer; its size in pixels.
void RenderFrame(GLFWwindow* window, int* display_w, int* display_h) {
  ImGui::Render();
  glfwGetFramebufferSize(window, display_w, display_h);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  glViewport(0, 0, *display_w, *display_h);
  glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

/// The GL objects while the context lives, then ImGui's backends, the window and GLFW.
void CleanUp(GLFWwindow* window, attnlab::gui::AppState& state,
             attnlab::gui::HeatmapRenderer& renderer) {
  ReleaseTextures(state);
  renderer.Shutdown();
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  attnlab::gui::TestHooks::LeakOnPurposeIfAsked();
}

/// The last session's start marker (session.h) goes once a frame is drawn, or on any orderly
/// return; a crash, abort or kill before the first frame leaves it for the next start to see.
struct StartMarkerGuard {
  bool armed;
  void Clear() {
    if (armed) attnlab::gui::ClearStartMarker();
    armed = false;
  }
  ~StartMarkerGuard() { Clear(); }
};

/// Dear ImGui's context, style and backends for `window` (no imgui.ini: the layout is fixed).
void InitImGui(GLFWwindow* window) {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;  // Tab, arrows, Space: every control
  attnlab::gui::ApplyStyle(1.0f);                        // ScaleToMonitor sets the scale
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
}

/// Frames until the window closes, a quit is asked, a stop signal arrives or the test hooks
/// end the run: events, the script's actions, the widgets, the actions applied, the render.
void RunMainLoop(GLFWwindow* window, attnlab::gui::AppState& state, attnlab::gui::TestHooks& hooks,
                 StartMarkerGuard& start_marker) {
  namespace gui = attnlab::gui;
  using Clock = std::chrono::steady_clock;
  ImGuiIO& io = ImGui::GetIO();
  int calm_frames = 0;  // frames since the last input: a few, then the window waits for events
  auto seconds = [](Clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  while (!glfwWindowShouldClose(window) && !state.quit_requested && !g_stop_signal) {
    // Idle is idle: with nothing running and no input, sleep until an event (or a timeout)
    // instead of drawing the same frame again. Waking before the timeout means an event came.
    // The wait goes in slices of 0.25 s so that a stop signal ends it soon (no frame is drawn
    // between slices).
    double wait = hooks.WaitSeconds(state, calm_frames, seconds(Clock::now()));
    if (wait <= 0) glfwPollEvents();
    while (wait > 0 && !g_stop_signal) {
      const double slice = std::min(wait, 0.25);
      const Clock::time_point before = Clock::now();
      glfwWaitEventsTimeout(slice);
      const double slept = seconds(Clock::now()) - seconds(before);
      if (slept < slice * 0.95) {  // woken early: an event
        calm_frames = 0;
        break;
      }
      wait -= slept;
    }
    ++calm_frames;
    const Clock::time_point frame_start = Clock::now();
    if (!hooks.BeforeFrame(state)) break;  // a script emits its actions before the widgets

    if (state.fonts_dirty) RebuildFonts(state);

    // Start the Dear ImGui frame
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    hooks.OverrideMouse(state, io);
    ImGui::NewFrame();

    // A background run that ended is shown from this frame on.
    gui::FinishBackgroundRun(state, false);
    // The window, then every action of this frame applied in one place.
    gui::DrawMainWindow(state);
    gui::ApplyPendingActions(state);
    if (hooks.options.autosave)
      gui::AutosaveWhenIdle(state,
                            std::chrono::duration<double>(Clock::now().time_since_epoch()).count());

    // Rendering
    int display_w = 0, display_h = 0;
    RenderFrame(window, &display_w, &display_h);
    ++state.frame;
    const bool last_frame = hooks.AfterRender(state, display_w, display_h);
    glfwSwapBuffers(window);
    start_marker.Clear();  // the start scenario is on screen
    if (hooks.options.frame_stats) glFinish();
    hooks.frame_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - frame_start).count());
    if (last_frame) break;
  }
}

int RunWindow(int argc, char** argv) {
  namespace gui = attnlab::gui;

  // Options: a scenario file or preset, and the testing switches (test_hooks.h).
  gui::TestHooks hooks;
  gui::StartPoint start;
  std::string start_error;  // the scenario file named on the command line could not be opened
  if (const std::optional<int> status = Prepare(argc, argv, hooks, start, &start_error))
    return *status;
  const int failed_start = start_error.empty() ? 0 : 2;
  StartMarkerGuard start_marker{start.marked};

  // Setup window
  GLFWwindow* window = OpenWindow(hooks.options);
  if (!window) return failed_start ? failed_start : 1;

  InitImGui(window);

  // Our state: the start scenario, the heatmap renderer.
  auto state = std::make_unique<gui::AppState>();
  ScaleToMonitor(window, *state);
  gui::HeatmapRenderer renderer;
  try {
    renderer.Init();
  } catch (const std::exception& e) {
    std::cerr << "attention-lab: error: " << attnlab::MessageText(e.what(), 960) << "\n";
    return 1;
  }
  state->renderer = &renderer;
  state->synchronous_runs = !hooks.options.script.empty();
  StartState(*state, start, hooks.options);
  if (!start_error.empty()) {
    state->status = start_error;
    state->status_is_error = true;
  }
  glfwSetWindowUserPointer(window, state.get());  // for OnDrop
  glfwSetDropCallback(window, OnDrop);
  state->autosaved_version = state->shown_version;  // the start needs no save
  CatchStopSignals();

  RunMainLoop(window, *state, hooks, start_marker);
  hooks.ReportFrameStats(*state);
  if (hooks.options.autosave && hooks.exit_status == 0) {
    const std::string problem = gui::SaveSession(*state);
    if (!problem.empty()) std::cerr << "attention-lab: " << problem << "\n";
  }

  // Cleanup
  CleanUp(window, *state, renderer);
  return hooks.exit_status ? hooks.exit_status : failed_start;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && attnlab::cli::IsSubcommand(argv[1])) {
    const int status = attnlab::cli::Run(argc, argv);
    const std::string first = argv[1];
    if (argc == 2 && (first == "-h" || first == "--help")) std::cout << attnlab::gui::WindowUsage();
    return status;
  }
  return RunWindow(argc, argv);
}
