// native_dialog.cpp: see native_dialog.h.
#include "gui/actions/native_dialog.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "gui/state/app_state.h"

extern char** environ;

namespace attnlab::gui {
namespace {

/// True if an executable called `name` is in one of PATH's folders (what `command -v` finds).
bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  const std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string file = dir + "/" + name;
    if (access(file.c_str(), X_OK) == 0 && !std::filesystem::is_directory(file)) return true;
    start = end + 1;
  }
  return false;
}

const char* TitleFor(DialogKind kind) {
  switch (kind) {
    case DialogKind::kOpen:
      return "Open scenario";
    case DialogKind::kSaveAs:
      return "Save scenario as";
    case DialogKind::kExportAll:
      return "Export all heatmaps into a folder";
    case DialogKind::kSaveNotebook:
      return "Save the program as a notebook";
    default:
      return "Export heatmap";
  }
}

/// The command line of `tool` for `kind`, starting at `path`.
std::vector<std::string> Arguments(const std::string& tool, DialogKind kind,
                                   const std::string& path) {
  const std::string title = TitleFor(kind);
  if (tool == "kdialog") {
    if (kind == DialogKind::kOpen)
      return {tool, "--title", title, "--getopenfilename", path, "*.json"};
    if (kind == DialogKind::kExportAll)
      return {tool, "--title", title, "--getexistingdirectory", path};
    return {tool, "--title", title, "--getsavefilename", path};
  }
  std::vector<std::string> args = {tool, "--file-selection", "--title=" + title};
  if (!path.empty()) args.push_back("--filename=" + path);
  if (kind == DialogKind::kOpen) args.push_back("--file-filter=Scenarios (*.json) | *.json");
  if (kind == DialogKind::kExportAll) args.push_back("--directory");
  if (kind == DialogKind::kSaveAs || kind == DialogKind::kExport ||
      kind == DialogKind::kExportCompare || kind == DialogKind::kSaveNotebook ||
      kind == DialogKind::kExportStep) {
    args.push_back("--save");
    args.push_back("--confirm-overwrite");
  }
  return args;
}

}  // namespace

NativeDialog::~NativeDialog() {
  if (fd_ >= 0) close(fd_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::string NativeDialog::Tool(bool scripted) {
  if (const char* chosen = std::getenv("ATTNLAB_FILE_DIALOG")) {
    const std::string tool = chosen;
    return (tool == "zenity" || tool == "kdialog") && OnPath(tool) ? tool : "";
  }
  if (scripted) return "";
  for (const char* tool : {"zenity", "kdialog"})
    if (OnPath(tool)) return tool;
  return "";
}

bool NativeDialog::Start(const std::string& tool, DialogKind kind, const std::string& path) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<std::string> args = Arguments(tool, kind, path);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int failed = posix_spawnp(&pid_, tool.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (failed != 0) {
    close(fds[0]);
    pid_ = -1;
    return false;
  }
  fd_ = fds[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
  return true;
}

NativeDialog::Status NativeDialog::Poll() {
  if (pid_ <= 0) return Status::kFailed;
  char buf[4096];
  for (ssize_t n; fd_ >= 0 && (n = read(fd_, buf, sizeof buf)) > 0;) output_.append(buf, n);
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == 0) return Status::kRunning;
  pid_ = -1;
  for (ssize_t n; fd_ >= 0 && (n = read(fd_, buf, sizeof buf)) > 0;) output_.append(buf, n);
  const int code = done > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!output_.empty() && (output_.back() == '\n' || output_.back() == '\r')) output_.pop_back();
  if (code == 0 && !output_.empty() && output_.find('\n') == std::string::npos) {
    path_ = output_;
    return Status::kChosen;
  }
  return code == 1 ? Status::kCancelled : Status::kFailed;
}

void PollNativeDialog(AppState& state) {
  DialogState& d = state.dialog;
  if (!d.native) return;
  const NativeDialog::Status status = d.native->Poll();
  if (status == NativeDialog::Status::kRunning) return;
  Emit(state, NativeDialogEnded{status == NativeDialog::Status::kChosen,
                                status == NativeDialog::Status::kFailed, d.native->path()});
}

}  // namespace attnlab::gui
