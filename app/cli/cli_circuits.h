// cli_circuits.h: `attention-lab circuits`, the command line of the induction-head lesson
// (core/include/attnlab/lessons/circuits.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace attnlab::cli {

/// The options of `circuits`, parsed by CLI11 into text and checked by Run.
class CircuitsCli {
 public:
  /// Adds the `circuits` subcommand to `app`.
  void Register(CLI::App& app);
  /// True when `circuits` was given.
  bool Given() const { return cmd_ != nullptr && cmd_->parsed(); }
  /// Runs it: trains and prints CircuitLine's line at every evaluation (stdout), then writes
  /// -o RUN.json (CircuitRunJson) through `write` (atomic; "-" for standard output); with
  /// --code prints the PyTorch program of the same run instead (to -o, or standard output).
  /// Returns 0; bad options throw std::invalid_argument naming the option. SIGINT (Ctrl+C) or
  /// SIGTERM stops after the step under way: nothing is written, one line says so, and it
  /// returns 130 or 143.
  int Run(const std::function<void(const std::string&, const std::string&)>& write);

 private:
  CLI::App* cmd_ = nullptr;
  bool code_ = false;
  std::string out_, task_ = "variable", steps_ = "3000", seed_ = "0", heads_ = "2", d_model_ = "32";
};

}  // namespace attnlab::cli
