// session.h: where the window starts and what it remembers. The scenario on screen is saved at
// exit to $XDG_CONFIG_HOME/attention-lab/last-session.json (~/.config/... when XDG_CONFIG_HOME
// is unset) and opened again next time; the very first start shows raschka-journey and the
// guided tour. settings.json beside it remembers that the tour was seen.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "attnlab/figures/figure_meta.h"
#include "attnlab/model/scenario.h"
#include "cli/window_options.h"

namespace attnlab::gui {

struct AppState;

/// The preset of the very first start.
inline constexpr const char* kFirstPreset = "raschka-journey";

/// $XDG_CONFIG_HOME/attention-lab/last-session.json, or ~/.config/attention-lab/...;
/// "" when neither variable is set.
std::string LastSessionPath();

/// What the window opens with.
struct StartPoint {
  Scenario scenario;
  std::string preset_id;  ///< when it is a preset
  std::string path;       ///< when it is a file
  std::string message;    ///< why the requested start was not possible ("" when it was)
  std::optional<FigureSource> figure;  ///< when the file is a figure: its view options too
  bool marked = false;  ///< StartMarkerPath() was written: ClearStartMarker() after a frame
};

/// A scenario file or preset named on the command line that cannot be opened; what() is one
/// line naming it (the app exits with status 2, like the command line).
struct StartError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// last-session.opening beside LastSessionPath() ("" when there is no place for it): written
/// before the window opens the last session and held with an exclusive flock until a frame of
/// it is drawn, then removed. Found unlocked at the next start, it means the previous one
/// crashed, aborted or was killed before drawing; found locked, another window (started at the
/// same moment) is opening the session right now.
std::string StartMarkerPath();

/// Where a last session is kept aside (never deleted by the app): one that stopped a start, or
/// one that could not be read (broken, too large, too deep, not a regular file). It is
/// last-session.failed.json beside it, or last-session.failed-N.json (N = 2, 3, ...) when that
/// name is taken.
std::string FailedSessionPath();

/// FILE.json, else --preset ID, else the last session, else kFirstPreset. Errors: StartError
/// for a FILE or ID that cannot be loaded. A last session that cannot be read is moved to
/// FailedSessionPath() and kFirstPreset opens, with the reason and the new name in `message`
/// ("last session not restored: <path>: <reason>; kept as <kept>"); when it cannot be moved,
/// SaveSession refuses to replace it. Before it opens the last session it writes and locks
/// StartMarkerPath() (and sets `marked`); when an unlocked marker is already there (the previous
/// start never drew its first frame), the last session is moved to FailedSessionPath() and
/// kFirstPreset opens instead, saying so in `message`. A marker another running window holds
/// is left to it: this start opens the last session unmarked.
StartPoint ChooseStart(const GuiOptions& options);

/// Removes and unlocks the marker this window holds (StartMarkerPath()): the start it marked
/// drew a frame, or ended without crashing. Nothing when it holds none.
void ClearStartMarker();

/// A figure's view options on screen (a figure opened as the start scenario): its head and
/// batch (when the scenario has them), weights range, values, colormaps, and its stage in focus
/// when it shows one. Errors: ScenarioError when f.scenario is invalid.
void ApplyFigureView(AppState& state, const FigureSource& f);

/// When the file at `path` is a figure: ApplyFigureView of its view options (File > Open, Open
/// Recent and a drop, as the command line's FIGURE). Returns whether it was one; never throws
/// (a file that cannot be read or parsed was already refused by the open).
bool ApplyFigureFileView(AppState& state, const std::string& path);

/// Writes the scenario on screen (the edited one when it runs, else the last one that ran) to
/// LastSessionPath(), and the settings (SaveSettings). Returns "" or the reason it failed; never
/// writes to something there that is not a regular file (a FIFO would block the exit), nor over
/// a last session that could not be read and could not be moved aside (ChooseStart).
std::string SaveSession(const AppState& state);

/// While the window runs: saves the session (SaveSession, atomic) when the scenario changed
/// since the last save, at most every `interval` seconds ($ATTNLAB_AUTOSAVE_SECONDS, default
/// 30) and never while a mouse button is held (mid-drag), so a crash or SIGKILL loses at most
/// that much work. `now`: steady clock in seconds.
void AutosaveWhenIdle(AppState& state, double now);

/// AutosaveWhenIdle's interval in seconds: $ATTNLAB_AUTOSAVE_SECONDS, default 30.
double AutosaveIntervalSeconds();

/// What the window remembers besides the scenario.
struct Settings {
  bool tour_seen = false;  ///< the guided tour was shown once (it starts by itself only then)
  float zoom = 1.0f;       ///< View > Zoom (Ctrl+= / Ctrl+-), on top of the monitor's scale
  /// The controls' "Modern attention" section is open (the learner opened it, or a preset
  /// that needs it did); closed for a new user, who sees chapter 3's controls first.
  bool modern_open = false;
  /// The two panels under the heatmaps (softmax peaking, why 1/sqrt(d_k)) are shown; hidden,
  /// the heatmaps take their room.
  bool plots_open = true;
  std::string export_folder;  ///< the folder of the last export ("": the working folder)
};

/// What `state` would remember now (its tour, zoom, sections and export folder).
Settings CurrentSettings(const AppState& state);

/// settings.json beside LastSessionPath() ("" when there is no place for it).
std::string SettingsPath();

/// Writes `text` atomically to `path` (a file of the config folder), creating the folder;
/// returns "" or "<what> not saved: <reason>".
std::string WriteConfigFile(const std::string& path, const std::string& text,
                            const std::string& what);

/// A JSON file of the config folder (settings, recent files), parsed within the scenario
/// files' limits (CheckJsonLimits; at most 1 MiB). Errors: FileError, ScenarioError or
/// nlohmann's parse_error; the callers fall back to defaults.
nlohmann::json ReadConfigJson(const std::string& path);

/// The settings; defaults when the file is missing or cannot be read.
Settings LoadSettings();

/// Writes the settings. Returns "" or the reason it failed.
std::string SaveSettings(const Settings& settings);

/// Whether the tour starts by itself: on the very first start (settings say it was never
/// seen), and only when the learner named no file, preset or script.
bool TourStartsByItself(const GuiOptions& options, const Settings& settings);

/// "~/x" -> "$HOME/x"; anything else unchanged.
std::string ExpandPath(const std::string& path);
/// The absolute, normalised form of a path (for messages).
std::string AbsolutePath(const std::string& path);

}  // namespace attnlab::gui
