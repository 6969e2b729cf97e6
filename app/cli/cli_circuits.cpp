// cli_circuits.cpp: `attention-lab circuits [--task variable|fixed|planted] [--steps N]
// [--seed S] [--heads H] [--d-model D] [-o RUN.json] [--code]`: see cli_circuits.h and
// core/include/attnlab/lessons/circuits.h.
#include "cli/cli_circuits.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "attnlab/lessons/circuits.h"
#include "attnlab/python/codegen_circuits.h"
#include "cli/cli_stop.h"
#include "cli/cli_train.h"  // ParseCount

namespace attnlab::cli {

void CircuitsCli::Register(CLI::App& app) {
  cmd_ = app.add_subcommand(
      "circuits",
      "Train a two-layer attention-only transformer and watch an induction head form (losses "
      "and per-head scores every 100 steps)");
  std::string tasks;
  for (const CircuitTaskInfo& t : CircuitTasks())
    tasks += std::string("\n  ") + t.name + std::string(10 - std::string(t.name).size(), ' ') +
             t.description;
  cmd_->add_option("--task", task_, "variable (default), fixed (the trap) or planted");
  cmd_->add_option("--steps", steps_, "AdamW steps, 1..100000 (default 3000)");
  cmd_->add_option("--seed", seed_, "torch.manual_seed of the weights and batches (default 0)");
  cmd_->add_option("--heads", heads_, "Heads per layer, 1..8 (default 2)");
  cmd_->add_option("--d-model", d_model_,
                   "Width of the residual stream, 4..256, a multiple of --heads (default 32)");
  cmd_->add_option("-o,--output", out_,
                   "RUN.json: steps, loss_first, loss_second, prev_token, prefix_match, "
                   "copying, seconds ('-' for standard output); with --code, the .py file");
  cmd_->add_flag("--code", code_,
                 "Print the PyTorch program of the same run instead (it prints the same lines)");
  cmd_->footer("Tasks:" + tasks +
               "\nScores: prev-token = mean weight of query q on key q - 1 (layer 0); "
               "prefix-match = mean weight of query q in the second copy on key q - N + 1, the "
               "token after the previous occurrence (layer 1); copying = fraction of tokens whose "
               "own logit the layer-1 head's OV circuit raises most.");
}

int CircuitsCli::Run(const std::function<void(const std::string&, const std::string&)>& write) {
  CircuitOptions o;
  const std::optional<CircuitTask> task = ParseCircuitTask(task_);
  if (!task)
    throw std::invalid_argument("--task \"" + task_ +
                                "\" is not a task (variable, fixed, planted)");
  o.task = *task;
  o.steps = ParseCount("--steps", steps_, 1, 100000);
  o.seed = static_cast<uint64_t>(ParseCount("--seed", seed_, 0, INT64_MAX - 1));
  o.heads = ParseCount("--heads", heads_, 1, 8);
  o.d_model = ParseCount("--d-model", d_model_, 4, 256);
  CheckCircuitOptions(o);
  if (code_) {
    write(out_.empty() ? "-" : out_, GenerateCircuitsCode(o));
    return 0;
  }
  if (!out_.empty() && out_ != "-" &&
      (out_.size() < 5 || out_.compare(out_.size() - 5, 5, ".json") != 0))
    throw std::invalid_argument("-o " + out_ + ": give a .json file (or '-')");
  const StopOnSignals stop;
  size_t printed = 0;
  int64_t done = 0;
  const auto start = std::chrono::steady_clock::now();
  // With -o - the JSON is standard output: the lines go to stderr then.
  FILE* lines = out_ == "-" ? stderr : stdout;
  const CircuitRun run = TrainCircuits(o, [&](const CircuitRun& so_far) {
    for (; printed < so_far.evals.size(); ++printed)
      std::fprintf(lines, "%s\n", CircuitLine(so_far.evals[printed]).c_str());
    std::fflush(lines);
    done = static_cast<int64_t>(so_far.loss.size());
    return stop.signal() == 0;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (const int signal = stop.signal(); signal != 0) {
    std::fprintf(stderr,
                 "attention-lab: circuits: stopped by %s after %lld of %lld steps; nothing "
                 "written\n",
                 signal == SIGINT ? "Ctrl+C" : "SIGTERM", static_cast<long long>(done),
                 static_cast<long long>(o.steps));
    return 128 + signal;
  }
  if (!out_.empty()) write(out_, CircuitRunJson(run, seconds));
  return 0;
}

}  // namespace attnlab::cli
