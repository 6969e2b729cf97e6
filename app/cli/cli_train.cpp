// cli_train.cpp: `attention-lab train SCENARIO --task NAME --steps N [--no-scale] [--d-k N]
// [--lr X] -o run.json|run.csv [--save-scenario F]` and `attention-lab code SCENARIO --train
// --task NAME --steps N`: see cli_train.h and core/include/attnlab/lessons/train.h.
#include "cli/cli_train.h"

#include <array>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "attnlab/figures/loss_plot.h"
#include "attnlab/lessons/train.h"
#include "attnlab/python/codegen.h"
#include "cli/cli_stop.h"

namespace attnlab::cli {
namespace {

std::string TaskList() {
  std::string s;
  for (const TrainTaskInfo& t : TrainTasks())
    s += std::string(s.empty() ? "" : "; ") + t.name + " (" + t.description + ")";
  return s;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void TrainCli::Register(CLI::App& app, CLI::App& code) {
  train_ = app.add_subcommand(
      "train", "Train one attention head with Adam on a synthetic task (loss per step, weights)");
  train_
      ->add_option("scenario", input_,
                   "Scenario file or preset id: its seed draws W_query, W_key, W_value")
      ->required();
  const std::string tasks = "Task: " + TaskList();
  auto common = [&](CLI::App& c) {
    return std::vector<CLI::Option*>{
        c.add_option("--task", task_, tasks),
        c.add_option("--steps", steps_, "Adam steps, 1..100000 (default 100)"),
        c.add_flag("--no-scale", no_scale_, "Do not divide the scores by sqrt(d_k)"),
        c.add_option("--d-k", d_k_, "Head size d_k, 1..1024 (default: the scenario's d_out)"),
        c.add_option("--lr", lr_, "Adam's learning rate, in (0, 10] (default 0.01)"),
        c.add_option("--batch", batch_, "Examples per step, 1..256 (default 16)"),
        c.add_option("--data-seed", data_seed_,
                     "torch.manual_seed of the task's data (default 0)")};
  };
  common(*train_);
  train_
      ->add_option("-o,--output", out_,
                   "run.json (\"loss\" per step and the trained weights), run.csv (step,loss), "
                   "or run.png (the loss curves of the run with and without 1/sqrt(d_k), "
                   "trained both ways); '-' for JSON on standard output")
      ->required();
  train_->add_option(
      "--save-scenario", save_scenario_,
      "Also write the trained head as a scenario (init: matrix) to open in the window");
  train_->footer("Tasks:\n  previous-token      " + std::string(TrainTasks()[0].description) +
                 "\n  copy-first          " + TrainTasks()[1].description +
                 "\n  associative-recall  " + TrainTasks()[2].description);
  CLI::Option* train_flag =
      code.add_flag("--train", code_train_,
                    "The PyTorch training loop of `attention-lab train` instead (leaves `losses`)");
  for (CLI::Option* o : common(code)) o->needs(train_flag);  // else they would do nothing
}

namespace {

TrainOptions ParseOptions(const std::string& task, const std::string& steps, bool no_scale,
                          const std::string& d_k, const std::string& lr, const std::string& batch,
                          const std::string& data_seed) {
  TrainOptions o;
  const std::optional<TrainTask> t = ParseTrainTask(task);
  if (!t) {
    std::string names;
    for (const TrainTaskInfo& info : TrainTasks())
      names += (names.empty() ? "" : ", ") + std::string(info.name);
    throw std::invalid_argument("--task \"" + task + "\" is not a task (" + names + ")");
  }
  o.task = *t;
  o.steps = ParseCount("--steps", steps, 1, 100000);
  o.scale = !no_scale;
  o.d_k = ParseCount("--d-k", d_k, 0, 1024);
  o.batch = ParseCount("--batch", batch, 1, 256);
  o.data_seed = static_cast<uint64_t>(ParseCount("--data-seed", data_seed, 0, INT64_MAX));
  char* end = nullptr;
  o.lr = std::strtod(lr.c_str(), &end);
  if (lr.empty() || *end != '\0' || !(o.lr > 0 && o.lr <= 10))
    throw std::invalid_argument("--lr \"" + lr + "\" is not a number in (0, 10]");
  return o;
}

}  // namespace

int TrainCli::Train(const TrainCliIo& io) {
  const TrainOptions o = ParseOptions(task_, steps_, no_scale_, d_k_, lr_, batch_, data_seed_);
  const bool csv = EndsWith(out_, ".csv"), png = EndsWith(out_, ".png");
  if (!csv && !png && out_ != "-" && !EndsWith(out_, ".json"))
    throw std::invalid_argument("-o " + out_ + ": give a .json, .csv or .png file (or '-')");
  if (png && no_scale_)
    throw std::invalid_argument("--no-scale: -o " + out_ +
                                " plots both runs, with and without 1/sqrt(d_k); drop --no-scale");
  const Scenario s = io.load(input_);
  std::array<TrainRun, 2> both;
  {
    // Progress on a terminal; Ctrl+C or SIGTERM stops after the current step and writes nothing.
    const StopOnSignals stop;
    int64_t done = 0;
    const int64_t total = png ? 2 * o.steps : o.steps;
    ProgressLine line(total, "train");
    const TrainProgress progress = [&](int64_t steps_done) {
      done = steps_done;
      line.Show(steps_done);
      return stop.signal() == 0;
    };
    if (png)
      both = TrainScaledAndUnscaled(s, o, progress);
    else
      both[0] = TrainAttentionHead(s, o, progress);
    if (const int signal = stop.signal(); signal != 0) {
      line.Clear();
      std::fprintf(stderr,
                   "attention-lab: train: stopped by %s after %lld of %lld steps; nothing "
                   "written\n",
                   signal == SIGINT ? "Ctrl+C" : "SIGTERM", static_cast<long long>(done),
                   static_cast<long long>(total));
      return 128 + signal;
    }
  }
  if (png)
    io.write(out_, LossCurvesPng({&both[0], &both[1]}, {"scaled by 1/\u221Ad_k", "unscaled"},
                                 LossPlotTitle(both[0])));
  else
    io.write(out_, csv ? LossCurvesCsv({&both[0]}, {"loss"}) : TrainRunJson(both[0]));
  const TrainRun& run = both[0];
  if (!save_scenario_.empty()) io.write(save_scenario_, WriteScenario(TrainedHeadScenario(run)));
  return 0;
}

int TrainCli::Code(const std::string& input, const std::string& out, const TrainCliIo& io) {
  const TrainOptions o = ParseOptions(task_, steps_, no_scale_, d_k_, lr_, batch_, data_seed_);
  const std::string py = GenerateTrainingCode(io.load(input), o);
  io.write(out, EndsWith(out, ".ipynb") ? ProgramAsNotebook(py) : py);
  return 0;
}

int64_t ParseCount(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || text[0] == '+' || v < lo || v > hi)
    throw std::invalid_argument(option + " \"" + text + "\" is not an integer in " +
                                std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

}  // namespace attnlab::cli
