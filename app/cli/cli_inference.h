// cli_inference.h: `attention-lab decode` and `attention-lab tiled` (cli_inference.cpp), the
// command line of the KV-cache decode and the online softmax (core lessons/inference.h); their
// JSON is python/inference_json.h's.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "attnlab/figures/stage_view.h"
#include "attnlab/lessons/inference.h"
#include "cli/cli_train.h"

namespace attnlab::cli {

/// The options of both commands, parsed by CLI11 into text and checked when run.
class InferenceCli {
 public:
  /// Adds the `decode` and `tiled` subcommands to `app`, and --loop decode|tiled with
  /// --prefill, --chunk, --block-q, --block-k to the existing `code` subcommand.
  void Register(CLI::App& app, CLI::App& code);
  /// True when `code --loop` was given.
  bool CodeGiven() const { return !loop_.empty(); }
  /// Runs `code SCENARIO --loop decode|tiled`: the scenario's program and the loop
  /// (GenerateDecodeCode / GenerateTiledCode) to `out` (.py, .ipynb or "-"). Returns 0; errors
  /// throw one-line messages (the option or field at fault).
  int Code(const std::string& input, const std::string& out, const TrainCliIo& io);
  /// True when `decode` or `tiled` was given.
  bool Given() const { return (decode_ && decode_->parsed()) || (tiled_ && tiled_->parsed()); }
  /// Runs the command given: loads the scenario, runs it, writes the JSON (-o, "-" for
  /// standard output) through `io`, or with -o naming .png, .svg, .pdf, .csv or .npy the
  /// heatmap of one step (--step, --head, --batch; figures/inference_views.h). Returns 0; errors
  /// throw one-line messages (the option or field at fault).
  int Run(const TrainCliIo& io);

 private:
  /// The figure of the decode step --step (default the last) for --head and --batch
  /// (DecodeStepView), and of the tile --step (TileStateView). Errors: std::invalid_argument.
  StageView DecodeFigure(const Scenario& s, const Stages& st, const DecodeRun& run) const;
  StageView TiledFigure(const Scenario& s, const Stages& st, const TiledRun& run) const;

  CLI::App *decode_ = nullptr, *tiled_ = nullptr;
  std::string input_, out_, prefill_, chunk_ = "0", block_q_, block_k_, loop_;
  std::string step_, head_, batch_;  ///< the figure's step, head and batch ("": default)
};

}  // namespace attnlab::cli
