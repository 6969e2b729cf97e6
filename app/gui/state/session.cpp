// session.cpp: see session.h.
#include "gui/state/session.h"

#include <fcntl.h>
#include <imgui.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attnlab/base/file_io.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/model/presets.h"
#include "cli/cli.h"
#include "gui/state/app_state.h"

namespace attnlab::gui {

std::string LastSessionPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path dir;
  if (xdg && *xdg)
    dir = xdg;
  else if (home && *home)
    dir = std::filesystem::path(home) / ".config";
  else
    return "";
  return (dir / "attention-lab" / "last-session.json").string();
}

// A figure's view options on screen: its head and batch (when the scenario has them), weights
// range, values, colormaps, and its stage in focus when it shows one.
void ApplyFigureView(AppState& state, const FigureSource& f) {
  const Shape sh = ValidateScenario(f.scenario);
  state.head = f.head < sh.H ? f.head : 0;
  state.batch = f.batch < sh.B ? f.batch : 0;
  state.view.weights_range = f.options.range;
  state.view.values = f.options.values;
  auto index = [](const std::string& name, int fallback) {
    for (size_t i = 0; i < Colormaps().size(); ++i)
      if (Colormaps()[i].name == name) return static_cast<int>(i);
    return fallback;
  };
  const bool one = !f.options.colormap.empty();  // one map for every heatmap
  state.view.sequential_colormap = index(one ? f.options.colormap : f.options.sequential_colormap,
                                         state.view.sequential_colormap);
  state.view.diverging_colormap =
      index(one ? f.options.colormap : f.options.diverging_colormap, state.view.diverging_colormap);
  if (f.stages.size() == 1) state.focus = f.stages[0];
}

bool ApplyFigureFileView(AppState& state, const std::string& path) {
  try {
    const std::string bytes = ReadScenarioFile(path);
    if (!LooksLikeFigure(bytes)) return false;
    ApplyFigureView(state, ReadFigureScenario(bytes));
    return true;
  } catch (const std::exception&) {
    return false;  // opening it has already said what is wrong
  }
}

namespace {

/// The start marker this window wrote and holds locked (flock) until its first frame; -1 when
/// it holds none.
int g_marker_fd = -1;

/// The last session could not be moved aside: this window must not save over it.
bool g_keep_last_session = false;

enum class MarkerState {
  kNone,     ///< no marker (or one a window removed while this start looked at it)
  kRunning,  ///< a running window holds it: it is opening the last session right now
  kCrashed,  ///< left by a start that died before its first frame
};

/// Whether StartMarkerPath() is there and whose it is. A running window holds an exclusive
/// flock on it (MarkStart), which the kernel releases when the process dies however it dies:
/// a marker nobody holds was left by a crash, an abort or a kill. A marker left that way is
/// removed here (this start takes over); one a window has just created and not yet locked or
/// written (empty) counts as running.
MarkerState InspectStartMarker() {
  const std::string marker = StartMarkerPath();
  if (marker.empty()) return MarkerState::kNone;
  const int fd = ::open(marker.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno == ENOENT ? MarkerState::kNone : MarkerState::kCrashed;
  MarkerState state = MarkerState::kCrashed;
  struct stat held {
  }, now{};
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    state = errno == EWOULDBLOCK ? MarkerState::kRunning : MarkerState::kCrashed;
  } else if (::fstat(fd, &held) != 0 || ::stat(marker.c_str(), &now) != 0 ||
             held.st_ino != now.st_ino || held.st_dev != now.st_dev) {
    state = MarkerState::kNone;  // its window drew its frame and removed it meanwhile
  } else if (held.st_size == 0) {
    state = MarkerState::kRunning;  // created an instant ago, not yet locked
  } else {
    ::unlink(marker.c_str());
  }
  ::close(fd);
  return state;
}

/// Writes StartMarkerPath() ("opening <last> (pid N)") and keeps it locked until
/// ClearStartMarker(). False when it cannot (no config folder, or another window took it first).
bool MarkStart(const std::string& last) {
  const std::string marker = StartMarkerPath();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(marker).parent_path(), ec);
  const int fd =
      ::open(marker.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return false;
  struct stat st {};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size != 0) {
    ::close(fd);  // another window's, or not a file this start made
    return false;
  }
  const std::string text = "opening " + last + " (pid " + std::to_string(::getpid()) + ")\n";
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ::unlink(marker.c_str());
    ::close(fd);
    return false;
  }
  g_marker_fd = fd;
  return true;
}

/// Moves the last session `last` to FailedSessionPath(); returns the words for the message:
/// "kept as <path>", or, when it cannot be moved, "left at <last> (not moved: <reason>; this
/// window will not save over it)".
std::string KeepAside(const std::string& last) {
  const std::string kept = FailedSessionPath();
  std::error_code ec;
  std::filesystem::rename(last, kept, ec);
  if (!ec) return "kept as " + kept;
  if (ec == std::errc::no_such_file_or_directory)
    return "moved aside by another window started with this one";
  g_keep_last_session = true;
  return "left at " + last + " (not moved: " + ec.message() +
         "; this window will not save over it)";
}

}  // namespace

StartPoint ChooseStart(const GuiOptions& options) {
  StartPoint start;
  if (!options.file.empty()) {
    const std::string path = ExpandPath(options.file);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      std::string known;
      for (const PresetInfo& p : Presets()) known += (known.empty() ? "" : ", ") + p.id;
      throw StartError(options.file + ": no such file, and not a subcommand (" +
                       cli::SubcommandList() + "; see --help); presets open with --preset ID (" +
                       known + ")");
    }
    std::string text;
    try {
      text = ReadScenarioFile(path);
    } catch (const std::exception& e) {
      throw StartError(e.what());  // FileError names the path itself
    }
    // A JSON object without "format" (any JSON file the desktop offered): said so, rather than
    // its first field that a scenario does not have.
    if (!LooksLikeFigure(text)) {
      try {
        CheckJsonLimits(text);  // its depth and its tree's memory, before the tree is built
      } catch (const std::exception& e) {
        throw StartError(options.file + ": " + e.what());
      }
      const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (j.is_object() && !j.contains("format"))
        throw StartError(options.file + ": not an Attention Lab scenario (it has no " +
                         "\"format\": \"" + kScenarioFormat + "\")");
    }
    try {
      if (LooksLikeFigure(text)) start.figure = ReadFigureScenario(text);  // and its options
      start.scenario = start.figure ? start.figure->scenario : ParseScenario(text);
    } catch (const std::exception& e) {
      throw StartError(options.file + ": " + e.what());
    }
    if (!LooksLikeFigure(text)) start.path = AbsolutePath(path);  // Save must not write a figure
    return start;
  }
  if (!options.preset.empty()) {
    try {
      start.scenario = LoadPreset(options.preset);
    } catch (const std::exception& e) {
      // LoadPreset's message starts with its field, "preset: no preset ...".
      throw StartError(std::string("--") + e.what());
    }
    start.preset_id = options.preset;
    return start;
  }
  const std::string last = LastSessionPath();
  std::error_code ec;
  if (!last.empty() &&
      std::filesystem::symlink_status(last, ec).type() != std::filesystem::file_type::not_found) {
    const MarkerState marker = InspectStartMarker();
    if (marker == MarkerState::kCrashed) {
      // The previous start noted that it was opening this session and never drew it: a crash,
      // an abort or a kill. Opening it again could stop this start too; keep it aside instead.
      // What opened comes first: the status bar shows the start of a long line.
      start.message = std::string("opened ") + kFirstPreset +
                      ": the previous start stopped before showing the last session, now " +
                      KeepAside(last);
    } else {
      // Another window opening it right now (two started together) holds its marker: this one
      // opens the session too, unmarked (the marker is the other window's).
      if (marker == MarkerState::kNone) start.marked = MarkStart(last);
      try {
        start.scenario = ParseScenario(ReadScenarioFile(last));
        return start;
      } catch (const std::exception& e) {
        ClearStartMarker();
        start.marked = false;
        // Kept aside, never overwritten by this window's saves: the learner may want it back.
        // A FileError names the path itself.
        const std::string why = e.what();
        start.message = "last session not restored: " +
                        (why.rfind(last + ": ", 0) == 0 ? why : last + ": " + why) + "; " +
                        KeepAside(last);
      }
    }
  } else if (!last.empty()) {
    InspectStartMarker();  // a crashed start's marker left without a session is dropped
  }
  start.scenario = LoadPreset(kFirstPreset);
  start.preset_id = kFirstPreset;
  return start;
}

std::string StartMarkerPath() {
  const std::string last = LastSessionPath();
  if (last.empty()) return "";
  return (std::filesystem::path(last).parent_path() / "last-session.opening").string();
}

std::string FailedSessionPath() {
  const std::filesystem::path dir = std::filesystem::path(LastSessionPath()).parent_path();
  std::filesystem::path p = dir / "last-session.failed.json";
  std::error_code ec;
  for (int n = 2; std::filesystem::exists(p, ec); ++n)
    p = dir / ("last-session.failed-" + std::to_string(n) + ".json");
  return p.string();
}

void ClearStartMarker() {
  if (g_marker_fd < 0) return;
  // Removed while still locked: a start waiting for the lock then finds no file (not a crash).
  const std::string marker = StartMarkerPath();
  if (!marker.empty()) ::unlink(marker.c_str());
  ::close(g_marker_fd);
  g_marker_fd = -1;
}

std::string SaveSession(const AppState& state) {
  const std::string path = LastSessionPath();
  if (path.empty()) return "no place for the session: neither XDG_CONFIG_HOME nor HOME is set";
  if (g_keep_last_session)
    return "session not saved: " + path + " could not be read nor moved aside, and is kept";
  // Only a regular file is replaced: a FIFO or a device there would be written (and a FIFO
  // without a reader would hold the exit forever).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return "session not saved: " + path + " is not a regular file";
  const Scenario& s = state.error.empty() ? state.scenario : state.shown;
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    WriteFileAtomic(path, WriteScenario(s));
  } catch (const std::exception& e) {
    return std::string("session not saved: ") + e.what();
  }
  return SaveSettings(CurrentSettings(state));
}

Settings CurrentSettings(const AppState& state) {
  Settings s;
  s.tour_seen = state.tour.seen;
  s.zoom = state.zoom;
  s.modern_open = state.modern_open;
  s.plots_open = state.plots_open;
  s.export_folder = state.export_folder;
  return s;
}

double AutosaveIntervalSeconds() {
  static const double interval = [] {
    const char* env = std::getenv("ATTNLAB_AUTOSAVE_SECONDS");
    const double v = env ? std::atof(env) : 0.0;
    return v > 0 ? v : 30.0;
  }();
  return interval;
}

void AutosaveWhenIdle(AppState& state, double now) {
  const double interval = AutosaveIntervalSeconds();
  if (state.shown_version == state.autosaved_version || now - state.autosaved_at < interval) return;
  if (ImGui::IsAnyMouseDown()) return;
  state.autosaved_at = now;
  state.autosaved_version = state.shown_version;
  const std::string problem = SaveSession(state);
  if (!problem.empty()) {
    state.status = "Autosave: " + problem;
    state.status_is_error = true;
  }
}

std::string SettingsPath() {
  const std::string last = LastSessionPath();
  if (last.empty()) return "";
  return (std::filesystem::path(last).parent_path() / "settings.json").string();
}

nlohmann::json ReadConfigJson(const std::string& path) {
  const std::string text = ReadFile(path, 1 << 20, "a config file");
  CheckJsonLimits(text);
  return nlohmann::json::parse(text);
}

Settings LoadSettings() {
  Settings settings;
  const std::string path = SettingsPath();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return settings;
  try {
    const nlohmann::json j = ReadConfigJson(path);
    settings.tour_seen = j.value("tour_seen", false);
    settings.zoom = ClampZoom(j.value("zoom", 1.0f));
    settings.modern_open = j.value("modern_open", false);
    settings.plots_open = j.value("plots_open", true);
    settings.export_folder = j.value("export_folder", std::string());
  } catch (const std::exception&) {
    // A broken settings file is not worth a message: defaults it is.
  }
  return settings;
}

std::string SaveSettings(const Settings& settings) {
  const std::string path = SettingsPath();
  if (path.empty()) return "no place for the settings: neither XDG_CONFIG_HOME nor HOME is set";
  const nlohmann::json j = {{"format", "attention-lab/settings@1"},
                            {"tour_seen", settings.tour_seen},
                            {"zoom", std::round(settings.zoom * 100.0) / 100.0},
                            {"modern_open", settings.modern_open},
                            {"plots_open", settings.plots_open},
                            {"export_folder", settings.export_folder}};
  return WriteConfigFile(path, j.dump(2) + "\n", "settings");
}

std::string WriteConfigFile(const std::string& path, const std::string& text,
                            const std::string& what) {
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    WriteFileAtomic(path, text);
  } catch (const std::exception& e) {
    return what + " not saved: " + e.what();
  }
  return "";
}

bool TourStartsByItself(const GuiOptions& options, const Settings& settings) {
  return !settings.tour_seen && options.file.empty() && options.preset.empty() &&
         options.script.empty();
}

std::string ExpandPath(const std::string& path) {
  if (path.size() >= 2 && path[0] == '~' && path[1] == '/') {
    if (const char* home = std::getenv("HOME")) return std::string(home) + path.substr(1);
  }
  return path;
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace attnlab::gui
