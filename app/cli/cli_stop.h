// cli_stop.h: what the training commands (train, circuits) share on a terminal: Ctrl+C or
// SIGTERM asks the run to stop after the step under way, and a progress line on stderr.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>

namespace attnlab::cli {

// SIGINT (Ctrl+C) or SIGTERM while training: set by the handler, read after each step.
inline volatile std::sig_atomic_t g_stop_training = 0;

inline void OnStopTraining(int signal) { g_stop_training = signal; }

// While it lives, SIGINT and SIGTERM only ask the training to stop (after the step under way);
// the handlers found are restored after.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop_training = 0;
    struct sigaction sa = {};
    sa.sa_handler = OnStopTraining;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  /// The signal that asked to stop, or 0.
  int signal() const { return g_stop_training; }

 private:
  struct sigaction old_int_ = {}, old_term_ = {};
};

// "train: step 1200 / 5000 (24%)" (the command's name first) on stderr, rewritten in place at most
// 10 times a second, when stderr is a terminal (nothing in logs, pipes or tests); the line is
// cleared at the end.
class ProgressLine {
 public:
  ProgressLine(int64_t total, const char* command)
      : total_(total), command_(command), shown_(isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() { Clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  /// Erases the line (before a message is printed, and at the end).
  void Clear() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }
  void Show(int64_t done) {
    if (!shown_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    std::fprintf(stderr, "\r%s: step %lld / %lld (%d%%), Ctrl+C stops", command_,
                 static_cast<long long>(done), static_cast<long long>(total_),
                 static_cast<int>(100 * done / std::max<int64_t>(total_, 1)));
    std::fflush(stderr);
  }

 private:
  int64_t total_;
  const char* command_;
  bool shown_, drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace attnlab::cli
