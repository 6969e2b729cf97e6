// cli_microgpt.h: `attention-lab microgpt` (cli_microgpt.cpp): Karpathy's microgpt.py run
// bit for bit (core/include/attnlab/lessons/microgpt.h), printing what the script prints.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace attnlab::cli {

/// The options of `microgpt`, parsed by CLI11 into text and checked by Run.
class MicrogptCli {
 public:
  /// Adds the `microgpt` subcommand to `app`.
  void Register(CLI::App& app);
  /// True when `microgpt` was given.
  bool Given() const { return cmd_ != nullptr && cmd_->parsed(); }
  /// Runs it: the script's lines on standard output; -o writes the run as JSON through `write`
  /// (atomically). Returns 0; bad input throws a one-line error (exit 2). SIGINT (Ctrl+C) or
  /// SIGTERM stops after the step or sample under way: nothing is written, one line on stderr
  /// says so, and it returns 130 or 143.
  int Run(const std::function<void(const std::string&, const std::string&)>& write);

 private:
  CLI::App* cmd_ = nullptr;
  bool hex_ = false;
  std::string input_, out_, seed_ = "42", steps_ = "1000", temperature_ = "0.5", samples_ = "20",
                            save_every_ = "0";
};

}  // namespace attnlab::cli
