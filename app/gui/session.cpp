// session.cpp: see session.h.
#include "gui/session.h"

#include <imgui.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attnlab/base/file_io.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/model/presets.h"
#include "cli/cli.h"
#include "gui/app_state.h"

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
  if (!last.empty() && std::filesystem::exists(last, ec)) {
    const std::string marker = StartMarkerPath();
    if (std::filesystem::exists(marker, ec)) {
      // The previous start noted that it was opening this session and never drew it: a crash,
      // an abort or a kill. Opening it again could stop this start too; keep it aside instead.
      const std::string kept = FailedSessionPath();
      std::filesystem::rename(last, kept, ec);
      // What opened comes first: the status bar shows the start of a long line.
      start.message = std::string("opened ") + kFirstPreset +
                      ": the previous start stopped before showing the last session, now kept "
                      "as " +
                      (ec ? last : kept);
      ClearStartMarker();
    } else {
      start.marked = WriteConfigFile(marker, "opening " + last + "\n", "start marker").empty();
      try {
        start.scenario = ParseScenario(ReadScenarioFile(last));
        return start;
      } catch (const std::exception& e) {
        start.message = "last session not restored: " + last + ": " + e.what();
        ClearStartMarker();
        start.marked = false;
      }
    }
  }
  ClearStartMarker();  // none is left behind when there is no last session to open
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
  const std::string marker = StartMarkerPath();
  std::error_code ec;
  if (!marker.empty()) std::filesystem::remove(marker, ec);
}

std::string SaveSession(const AppState& state) {
  const std::string path = LastSessionPath();
  if (path.empty()) return "no place for the session: neither XDG_CONFIG_HOME nor HOME is set";
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
