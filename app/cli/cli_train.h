// cli_train.h: `attention-lab train` and `attention-lab code --train` (cli_train.cpp), the
// command line of the training experiment (core/include/attnlab/lessons/train.h).
#pragma once

#include <signal.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "attnlab/model/scenario.h"

namespace attnlab::cli {

/// What the train commands borrow from cli.cpp: loading SCENARIO (file, figure or preset id)
/// and writing an output atomically ("-" for standard output). Both throw one-line errors.
struct TrainCliIo {
  std::function<Scenario(const std::string&)> load;
  std::function<void(const std::string&, const std::string&)> write;
};

/// A decimal integer option's text in [lo, hi] (no sign, no hex, no octal). Errors:
/// std::invalid_argument naming the option and the range. Shared by the train, decode and
/// tiled commands.
int64_t ParseCount(const std::string& option, const std::string& text, int64_t lo, int64_t hi);

/// The options of both commands, parsed by CLI11 into text and checked by Train / Code.
class TrainCli {
 public:
  /// Adds the `train` subcommand to `app` and --train, --task, --steps, --no-scale, --d-k,
  /// --lr, --batch, --data-seed to the existing `code` subcommand.
  void Register(CLI::App& app, CLI::App& code);
  /// True when `train` was given.
  bool TrainGiven() const { return train_ != nullptr && train_->parsed(); }
  /// True when `code --train` was given.
  bool CodeGiven() const { return code_train_; }
  /// Runs `train`: writes run.json or run.csv (-o) and --save-scenario. Returns 0; errors throw.
  /// On a terminal, stderr shows the steps done. SIGINT (Ctrl+C) or SIGTERM stops the training
  /// after the step under way: nothing is written, one line says so, and it returns 130 or 143.
  int Train(const TrainCliIo& io);
  /// Runs `code SCENARIO --train`: the PyTorch loop to `out` (.py, .ipynb or "-").
  int Code(const std::string& input, const std::string& out, const TrainCliIo& io);

 private:
  CLI::App* train_ = nullptr;
  bool code_train_ = false, no_scale_ = false;
  std::string input_, out_, save_scenario_, task_ = "previous-token", steps_ = "100", d_k_ = "0",
                                            lr_ = "0.01", batch_ = "16", data_seed_ = "0";
};

}  // namespace attnlab::cli
