// window_options.cpp: see window_options.h.
#include "cli/window_options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>

#include "cli/cli.h"

namespace attnlab::gui {

const char* WindowUsage() {
  return R"(Without a subcommand attention-lab opens the window:
  attention-lab                    the last session (raschka-journey and the guided tour the
                                   first time)
  attention-lab FILE.json          a scenario file
  attention-lab --preset ID        a shipped preset (ids: attention-lab presets)
  --size WxH                       the window's size, or a width W with the height at 16:10
                                   (default: 1280x800, or the work area when smaller)
Testing and measuring (the run ends by itself):
  --screenshot OUT.png             write the window's pixels after the last frame
  --layout OUT.json                write where each heatmap was drawn
  --frames N                       render N frames
  --script FILE                    run actions, one per frame (app/gui/shell/script.h lists them)
  --frame-stats                    print {"frames": .., "median_ms": ..} at exit
  --no-autosave                    do not save the session at exit
)";
}

namespace {

/// "1024x700" or "1280" (height 800): both sides in 480..8192.
void ParseSize(const std::string& text, int* width, int* height) {
  const size_t x = text.find('x');
  auto side = [&](const std::string& digits) {
    if (digits.empty() || digits.size() > 5 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw OptionsError("--size \"" + text + "\" is not WxH or W (e.g. 1024x700)");
    const int v = std::stoi(digits);
    if (v < 480 || v > 8192)
      throw OptionsError("--size \"" + text + "\": each side must be in 480..8192");
    return v;
  };
  *width = side(text.substr(0, x));
  *height = x == std::string::npos ? std::max(480, *width * 10 / 16) : side(text.substr(x + 1));
}

}  // namespace

void DescribeWindowOptions(CLI::App& app, GuiOptions& o, std::string& size, bool& no_autosave) {
  app.description(
      "Attention Lab: self-attention you can play with, to the digits PyTorch prints.\n"
      "Without a subcommand it opens the window. Subcommands: " +
      cli::SubcommandList() + " (see attention-lab --help).");
  app.add_option("scenario", o.file, "Scenario file (.json) to open");
  app.add_option("--preset", o.preset, "Open a shipped preset (ids: attention-lab presets)")
      ->option_text("ID");
  app.add_option("--screenshot", o.screenshot, "Write the window's pixels to this PNG and exit")
      ->option_text("OUT.png");
  app.add_option("--layout", o.layout,
                 "Write where each heatmap was drawn in the last frame (JSON) and exit")
      ->option_text("OUT.json");
  app.add_option("--frames", o.frames, "Render this many frames, then exit")
      ->check(CLI::Range(1, 1000000))
      ->option_text("N");
  app.add_option("--script", o.script, "Run the actions in this file, one per frame, then exit")
      ->option_text("FILE");
  app.add_flag("--frame-stats", o.frame_stats, "Print the median frame time as JSON at exit");
  app.add_flag("--no-autosave", no_autosave, "Do not save the session at exit");
  app.add_option("--size", size,
                 "Window size WxH, or a width W with the height at 16:10 (default: 1280x800, or "
                 "the monitor's work area when smaller)")
      ->option_text("WxH");
}

GuiOptions ParseGuiOptions(int argc, char** argv, bool* exit_now) {
  *exit_now = false;
  GuiOptions o;
  CLI::App app{"", "attention-lab"};
  bool no_autosave = false;
  std::string size;
  DescribeWindowOptions(app, o, size, no_autosave);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    *exit_now = true;
    return o;
  } catch (const CLI::ParseError& e) {
    throw OptionsError(e.what());
  }
  if (!o.file.empty() && !o.preset.empty())
    throw OptionsError("give a scenario file or --preset, not both");
  o.autosave = !no_autosave;
  if (!size.empty()) ParseSize(size, &o.width, &o.height);
  return o;
}

}  // namespace attnlab::gui
