// native_dialog.h: the desktop's own file dialog (zenity or kdialog) as a child process.
//
// The window never waits for it: Start() launches the tool with its standard output on a pipe,
// and Poll(), called once per frame, reads what has arrived without blocking. When no tool is
// found, or it cannot be started or fails, the typed-path dialog (file_dialogs_panel.cpp) is
// used instead.
#pragma once

#include <sys/types.h>

#include <string>

#include "gui/state/actions.h"

namespace attnlab::gui {

class NativeDialog {
 public:
  enum class Status { kRunning, kChosen, kCancelled, kFailed };

  NativeDialog() = default;
  NativeDialog(const NativeDialog&) = delete;
  NativeDialog& operator=(const NativeDialog&) = delete;
  /// A child still running is ended (SIGTERM) and reaped.
  ~NativeDialog();

  /// The tool to use: $ATTNLAB_FILE_DIALOG when set ("zenity", "kdialog"; "typed" or anything
  /// else: none), else zenity or kdialog when one is on PATH. A window driven by --script
  /// (`scripted`) uses one only when the variable names it, so tests never block on a real
  /// dialog. "" means the typed-path dialog.
  static std::string Tool(bool scripted);

  /// Starts `tool` to pick a file for `kind` (Save As asks the tool to confirm overwriting),
  /// starting at `path`. False when the child cannot be started.
  bool Start(const std::string& tool, DialogKind kind, const std::string& path);

  /// Reads what the child wrote so far and checks whether it has ended, without blocking.
  /// kChosen (path() is set) when it exited with 0 and a path, kCancelled on exit status 1
  /// (the user closed it), kFailed otherwise.
  Status Poll();

  const std::string& path() const { return path_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_, path_;
};

/// Once per frame: when the running native dialog has ended, emits NativeDialogEnded.
void PollNativeDialog(AppState& state);

}  // namespace attnlab::gui
