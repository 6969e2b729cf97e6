// session.h: where the window starts and what it remembers. The scenario on screen is saved at
// exit to $XDG_CONFIG_HOME/attention-lab/last-session.json (~/.config/... when XDG_CONFIG_HOME
// is unset) and opened again next time; the very first start shows raschka-journey.
#pragma once

#include <stdexcept>
#include <string>

#include "attnlab/scenario.h"
#include "gui/options.h"

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
};

/// A scenario file or preset named on the command line that cannot be opened; what() is one
/// line naming it (the app exits with status 2, like the command line).
struct StartError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// FILE.json, else --preset ID, else the last session, else kFirstPreset. Errors: StartError
/// for a FILE or ID that cannot be loaded. A last session that cannot be read falls back to
/// kFirstPreset with the reason in `message`.
StartPoint ChooseStart(const GuiOptions& options);

/// Writes the scenario on screen (the edited one when it runs, else the last one that ran) to
/// LastSessionPath(). Returns "" or the reason it failed.
std::string SaveSession(const AppState& state);

/// "~/x" -> "$HOME/x"; anything else unchanged.
std::string ExpandPath(const std::string& path);
/// The absolute, normalised form of a path (for messages).
std::string AbsolutePath(const std::string& path);

}  // namespace attnlab::gui
