// cli_inference.cpp: `attention-lab decode SCENARIO --prefill P [--chunk C] -o OUT.json` and
// `attention-lab tiled SCENARIO --block-q Br --block-k Bc -o OUT.json`: see cli_inference.h.
#include "cli/cli_inference.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <stdexcept>

#include "attnlab/lessons/inference.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/inference_json.h"

namespace attnlab::cli {
namespace {

constexpr int64_t kMaxCount = int64_t{1} << 31;
// What a decode or tiled run holds besides the stages, per number it writes: the run's doubles
// (scores and weights, or O, m, l and rescale), the JSON tree and its text. The decode's was
// measured (tests/memory_test.py): about 83 bytes per weight at T = 6688, causal (its scores,
// weights and JSON); 112 leaves a margin.
constexpr double kDecodeBytesPerNumber = 112.0, kTiledBytesPerNumber = 64.0;

}  // namespace

void InferenceCli::Register(CLI::App& app, CLI::App& code) {
  decode_ = app.add_subcommand(
      "decode", "Run a scenario as a KV-cache decode (prefill, then one token per step) and "
                "compare every row with the full computation, as JSON");
  decode_->add_option("scenario", input_,
                      "Scenario file (.json), a figure exported from one, or preset id")
      ->required();
  decode_->add_option("--prefill", prefill_, "Tokens of the prefill, 0..T")
      ->option_text("P")
      ->required();
  decode_->add_option("--chunk", chunk_, "The prefill in chunks of C tokens (0: one chunk)")
      ->option_text("C");
  decode_->add_option("-o,--output", out_, "Output JSON file ('-' for standard output)")
      ->required();
  tiled_ = app.add_subcommand(
      "tiled", "Run a scenario through FlashAttention's tiled online softmax and compare O / l "
               "with the full computation, as JSON");
  tiled_->add_option("scenario", input_,
                     "Scenario file (.json), a figure exported from one, or preset id")
      ->required();
  tiled_->add_option("--block-q", block_q_, "Query rows per tile")->option_text("Br")->required();
  tiled_->add_option("--block-k", block_k_, "Keys per tile")->option_text("Bc")->required();
  tiled_->add_option("-o,--output", out_, "Output JSON file ('-' for standard output)")
      ->required();
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
  const char* needed = decode ? (prefill_.empty() ? "--prefill" : nullptr)
                       : block_q_.empty()         ? "--block-q"
                       : block_k_.empty()         ? "--block-k"
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
  const double B = static_cast<double>(sh.B * sh.H), T = static_cast<double>(sh.T);
  const double numbers =
      decode ? B * T * (T + 1) / 2
             : B * std::ceil(T / static_cast<double>(Bc)) * T * static_cast<double>(sh.dh_v + 3);
  CheckCommandMemory(s, sh, decode ? "decode" : "tiled",
                     (decode ? kDecodeBytesPerNumber : kTiledBytesPerNumber) * numbers);
  const Stages st = RunScenario(s);
  const nlohmann::json j = decode ? DecodeRunJson(s, opt, RunDecode(s, st, opt))
                                  : TiledRunJson(s, RunTiled(s, st, Br, Bc));
  io.write(out_, j.dump() + "\n");
  return 0;
}

}  // namespace attnlab::cli
