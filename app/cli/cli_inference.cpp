// cli_inference.cpp: `attention-lab decode SCENARIO --prefill P [--chunk C] -o OUT.json` and
// `attention-lab tiled SCENARIO --block-q Br --block-k Bc -o OUT.json`: see cli_inference.h.
#include "cli/cli_inference.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "attnlab/figures/export.h"
#include "attnlab/figures/inference_views.h"
#include "attnlab/lessons/inference.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/inference_json.h"

namespace attnlab::cli {
namespace {

constexpr int64_t kMaxCount = int64_t{1} << 31;

/// The export format `out`'s extension names (.png, .svg, .pdf, .csv, .npy), or nullopt (JSON).
std::optional<ExportFormat> FigureFormatOf(const std::string& out) {
  const size_t dot = out.find_last_of("./");
  if (dot == std::string::npos || out[dot] != '.') return std::nullopt;
  return ParseExportFormat(out.substr(dot + 1));
}

}  // namespace

void InferenceCli::Register(CLI::App& app, CLI::App& code) {
  decode_ = app.add_subcommand(
      "decode",
      "Run a scenario as a KV-cache decode (prefill, then one token per step) and "
      "compare every row with the full computation, as JSON");
  decode_
      ->add_option("scenario", input_,
                   "Scenario file (.json), a figure exported from one, or preset id")
      ->required();
  decode_->add_option("--prefill", prefill_, "Tokens of the prefill, 0..T")
      ->option_text("P")
      ->required();
  decode_->add_option("--chunk", chunk_, "The prefill in chunks of C tokens (0: one chunk)")
      ->option_text("C");
  decode_
      ->add_option("-o,--output", out_,
                   "Output JSON file ('-' for standard output); .png, .svg, .pdf, .csv or "
                   ".npy: the heatmap of one step's weights (--step, --head, --batch)")
      ->required();
  decode_
      ->add_option("--step", step_,
                   "With a figure output: the step drawn, from 0 (default: the last)")
      ->option_text("K");
  decode_->add_option("--head", head_, "With a figure output: the head drawn, from 0")
      ->option_text("H");
  decode_->add_option("--batch", batch_, "With a figure output: the batch entry drawn, from 0")
      ->option_text("B");
  tiled_ = app.add_subcommand(
      "tiled",
      "Run a scenario through FlashAttention's tiled online softmax and compare O / l "
      "with the full computation, as JSON");
  tiled_
      ->add_option("scenario", input_,
                   "Scenario file (.json), a figure exported from one, or preset id")
      ->required();
  tiled_->add_option("--block-q", block_q_, "Query rows per tile")->option_text("Br")->required();
  tiled_->add_option("--block-k", block_k_, "Keys per tile")->option_text("Bc")->required();
  tiled_
      ->add_option("-o,--output", out_,
                   "Output JSON file ('-' for standard output); .png, .svg, .pdf, .csv or "
                   ".npy: the heatmap of one tile's state per row (--step)")
      ->required();
  tiled_
      ->add_option("--step", step_,
                   "With a figure output: the tile drawn, from 0 (default: the last)")
      ->option_text("K");
  CLI::Option* loop =
      code.add_option("--loop", loop_,
                      "The scenario's program followed by a loop: decode (the KV-cache decode of "
                      "`attention-lab decode`) or tiled (FlashAttention's loop of `attention-lab "
                      "tiled`), ending with the largest difference from the full computation")
          ->check(CLI::IsMember({"decode", "tiled"}))
          ->option_text("decode|tiled");
  code.add_option("--prefill", prefill_, "With --loop decode: tokens of the prefill, 0..T")
      ->option_text("P")
      ->needs(loop);
  code.add_option("--chunk", chunk_, "With --loop decode: the prefill in chunks of C tokens")
      ->option_text("C")
      ->needs(loop);
  code.add_option("--block-q", block_q_, "With --loop tiled: query rows per tile")
      ->option_text("Br")
      ->needs(loop);
  code.add_option("--block-k", block_k_, "With --loop tiled: keys per tile")
      ->option_text("Bc")
      ->needs(loop);
}

int InferenceCli::Code(const std::string& input, const std::string& out, const TrainCliIo& io) {
  const bool decode = loop_ == "decode";
  const char* needed = decode             ? (prefill_.empty() ? "--prefill" : nullptr)
                       : block_q_.empty() ? "--block-q"
                       : block_k_.empty() ? "--block-k"
                                          : nullptr;
  if (needed)
    throw std::invalid_argument(std::string(needed) + " is required with --loop " + loop_);
  std::string program;
  if (decode) {
    DecodeOptions opt;
    opt.prefill = ParseCount("--prefill", prefill_, 0, kMaxCount);
    opt.chunk = ParseCount("--chunk", chunk_, 0, kMaxCount);
    program = GenerateDecodeCode(io.load(input), opt);
  } else {
    program = GenerateTiledCode(io.load(input), ParseCount("--block-q", block_q_, 1, kMaxCount),
                                ParseCount("--block-k", block_k_, 1, kMaxCount));
  }
  const bool ipynb = out.size() > 6 && out.compare(out.size() - 6, 6, ".ipynb") == 0;
  io.write(out, ipynb ? ProgramAsNotebook(program) : program);
  return 0;
}

int InferenceCli::Run(const TrainCliIo& io) {
  const bool decode = decode_->parsed();
  DecodeOptions opt;
  int64_t Br = 0, Bc = 0;
  if (decode) {
    opt.prefill = ParseCount("--prefill", prefill_, 0, kMaxCount);
    opt.chunk = ParseCount("--chunk", chunk_, 0, kMaxCount);
  } else {
    Br = ParseCount("--block-q", block_q_, 1, kMaxCount);
    Bc = ParseCount("--block-k", block_k_, 1, kMaxCount);
  }
  const Scenario s = io.load(input_);
  const Shape sh = ValidateScenario(s);
  CheckCommandMemory(s, sh, decode ? "decode" : "tiled", EstimateInferenceBytes(sh, decode, Bc));
  const std::optional<ExportFormat> figure = FigureFormatOf(out_);
  if (!figure && (!step_.empty() || !head_.empty() || !batch_.empty()))
    throw std::invalid_argument("--step, --head and --batch choose the figure: -o " + out_ +
                                " is JSON (name a .png, .svg, .pdf, .csv or .npy)");
  const Stages st = RunScenario(s);
  if (figure) {
    io.write(out_, ExportBytes(decode ? DecodeFigure(s, st, RunDecode(s, st, opt))
                                      : TiledFigure(s, st, RunTiled(s, st, Br, Bc)),
                               StepFigureOptions(), *figure, &s));
    return 0;
  }
  const nlohmann::json j = decode ? DecodeRunJson(s, opt, RunDecode(s, st, opt))
                                  : TiledRunJson(s, RunTiled(s, st, Br, Bc));
  io.write(out_, j.dump() + "\n");
  return 0;
}

StageView InferenceCli::DecodeFigure(const Scenario& s, const Stages& st,
                                     const DecodeRun& run) const {
  const int64_t last = static_cast<int64_t>(run.steps.size()) - 1;
  return DecodeStepView(st, s, run,
                        step_.empty() ? last : ParseCount("--step", step_, 0, kMaxCount),
                        head_.empty() ? 0 : ParseCount("--head", head_, 0, kMaxCount),
                        batch_.empty() ? 0 : ParseCount("--batch", batch_, 0, kMaxCount));
}

StageView InferenceCli::TiledFigure(const Scenario& s, const Stages& st,
                                    const TiledRun& run) const {
  const int64_t last = static_cast<int64_t>(run.steps.size()) - 1;
  return TileStateView(st, s, run,
                       step_.empty() ? last : ParseCount("--step", step_, 0, kMaxCount));
}

}  // namespace attnlab::cli
