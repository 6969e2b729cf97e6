// window_options.h: the window's command line (everything that is not a subcommand).
//
//   attention-lab                         the last session (or raschka-journey and the guided
//                                         tour the first time)
//   attention-lab FILE.json               a scenario file
//   attention-lab --preset ID             a shipped preset
// Testing and measuring (all exit on their own):
//   --screenshot OUT.png   write the window's pixels after the last frame
//   --layout OUT.json      write where each heatmap was drawn in the last frame
//   --frames N             render N frames, then exit
//   --script FILE          run actions from FILE, one per frame (see script.h)
//   --frame-stats          print {"frames":..,"median_ms":..} on stdout at exit
//   --no-autosave          do not write the last session at exit
#pragma once

#include <stdexcept>
#include <string>

namespace CLI {
class App;
}

namespace attnlab::gui {

struct GuiOptions {
  std::string file;        ///< scenario file to open
  std::string preset;      ///< preset id to open
  std::string screenshot;  ///< PNG path
  std::string layout;      ///< JSON path: the heatmaps' rectangles in the last frame
  int frames = 0;          ///< 0: run until closed (or until the script ends)
  std::string script;
  bool frame_stats = false;
  bool autosave = true;
  /// --size WxH (or W, height at 16:10); 0: 1280 x 800 times the monitor's content scale, or
  /// its work area when smaller (FirstWindowSize).
  int width = 0, height = 0;

  /// True when the run ends by itself (a test or a measurement), not by the learner.
  bool Headless() const {
    return frames > 0 || !screenshot.empty() || !layout.empty() || !script.empty();
  }
};

/// Bad command line: one line for stderr.
struct OptionsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The window's usage, printed after the command line's --help.
const char* WindowUsage();

/// The window's command line into `app` (its description, arguments and options), bound to
/// `o`, the --size text and --no-autosave: the one definition ParseGuiOptions parses and the man
/// page and completion are made from (cli/cli_docs.h).
void DescribeWindowOptions(CLI::App& app, GuiOptions& o, std::string& size, bool& no_autosave);

/// Parses argv. Errors: OptionsError. --help prints the usage and sets *exit_now.
GuiOptions ParseGuiOptions(int argc, char** argv, bool* exit_now);

}  // namespace attnlab::gui
