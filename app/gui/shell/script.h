// script.h: --script FILE, actions from a text file, one command per frame, emitted through
// the same Emit() the widgets use, so undo/redo, export and save are tested end to end.
//
// One command per line; '#' starts a comment; a command's words are separated by spaces.
// Every command, its arguments, their check and what it does is one row of the table
// kCommands in script.cpp (its help text says what the command does); nothing else lists them.
// STAGE is a stage's name (model/stages.h: X, Q, K, V, Q_rot, K_rot, scores, mask, logits,
// weights, sink, weights_dropped, context); MAP is a STAGE or a view's map as --layout names it
// (trick_v2_weights, compare_diff, grad_Q, train_scaled).
//
// A file or export action that fails, or an expect that does not hold, fails the script: the
// app prints "script FILE:LINE: reason" and exits with status 3.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::gui {

struct AppState;

/// The largest script read: 16 MiB (a script of a million commands).
inline constexpr uint64_t kMaxScriptBytes = 16u << 20;

class ScriptRunner {
 public:
  /// Reads and checks every line. Errors: std::runtime_error "FILE:LINE: what is wrong";
  /// FileError (file_io.h) for a file that cannot be read, is not a regular file (a FIFO,
  /// /dev/zero) or has more than kMaxScriptBytes.
  void Load(const std::string& path);

  /// Runs at the start of each frame: checks the previous command's outcome, then emits this
  /// frame's actions. Returns false once the script is over (or failed; see failure()).
  bool Step(AppState& state);

  bool loaded() const { return !commands_.empty(); }
  /// While an `idle S` command runs: the seconds left of it (the main loop waits for events
  /// that long), else 0.
  double IdleSeconds() const;
  const std::string& failure() const { return failure_; }

  /// One line of the script: its number and its words (the command first).
  struct Command {
    int line = 0;
    std::vector<std::string> words;
  };
  /// What a command spanning frames carries to the next frames: drag-temperature, wait,
  /// click (release on the next frame), wheel (back to 0 on the next), pan (8 frames).
  struct Frames {
    int left = 0;
    int total = 0;
    double drag_from = 1.0, drag_to = 1.0;
    bool dragging = false, releasing = false, unwheel = false;
    // pan: the mouse moves from pan_from to pan_to with the left button down.
    ImVec2 pan_from{0, 0}, pan_to{0, 0};
    bool panning = false;
    int pan_frame = 0;
    // idle: wall-clock end (steady seconds, 0: none) and the wall and CPU time at its start.
    double idle_until = 0, idle_wall0 = 0, idle_cpu0 = 0;
  };

 private:
  bool Fail(const Command& c, const std::string& why);
  /// Runs the step of a command spanning frames, if one is under way; false when none is.
  bool Continue(AppState& state);

  std::string path_;
  std::vector<Command> commands_;
  size_t next_ = 0;
  std::string failure_;
  Frames frames_;
  const Command* current_ = nullptr;
};

}  // namespace attnlab::gui
