// cli_microgpt.cpp: `attention-lab microgpt [--input FILE] [--seed N] [--steps N]
// [--temperature T] [--samples N] [--hex] [-o RUN.json] [--save-every N]`: see cli_microgpt.h.
#include "cli/cli_microgpt.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "attnlab/base/file_io.h"
#include "attnlab/lessons/microgpt.h"
#include "cli/cli_stop.h"   // StopOnSignals
#include "cli/cli_train.h"  // ParseCount

namespace attnlab::cli {

namespace {

// The largest input read: names.txt is 228 KB; a document is at most a line of it.
constexpr uint64_t kMaxInputBytes = uint64_t{64} << 20;

}  // namespace

void MicrogptCli::Register(CLI::App& app) {
  cmd_ = app.add_subcommand(
      "microgpt",
      "Karpathy's microgpt.py bit for bit: train the tiny GPT on names, print its losses and "
      "samples exactly as `python3 microgpt.py` does");
  cmd_->add_option("--input", input_,
                   "Documents, one a line, UTF-8 (default: the names list microgpt.py "
                   "downloads, shipped with the app)");
  cmd_->add_option("--seed", seed_, "random.seed, any integer (default 42)");
  cmd_->add_option("--steps", steps_, "Training steps, 0..1000000 (default 1000)");
  cmd_->add_option("--temperature", temperature_,
                   "Sampling temperature, a number other than 0 (default 0.5)");
  cmd_->add_option("--samples", samples_, "Names sampled after training, 0..100000 (default 20)");
  cmd_->add_flag("--hex", hex_, "Print each step's loss as Python's float.hex, every bit of it");
  cmd_->add_option("-o,--output", out_,
                   "Also save the run as JSON (settings, losses, parameters, samples) for the "
                   "window ('-' for standard output instead of the printed lines)");
  cmd_->add_option("--save-every", save_every_,
                   "With -o, keep the parameters every N steps too (default 0: only before "
                   "the first step and after the last)");
}

int MicrogptCli::Run(const std::function<void(const std::string&, const std::string&)>& write) {
  MicrogptSettings s;
  s.seed_text = seed_;
  s.seed_key = PythonSeedKey(seed_);  // "seed 'x' is not an integer"
  s.steps = ParseCount("--steps", steps_, 0, 1000000);
  s.samples = ParseCount("--samples", samples_, 0, 100000);
  const int64_t save_every = ParseCount("--save-every", save_every_, 0, 1000000);
  char* end = nullptr;
  s.temperature = std::strtod(temperature_.c_str(), &end);
  if (temperature_.empty() || *end != '\0' || !std::isfinite(s.temperature) || s.temperature == 0.0)
    throw std::invalid_argument("--temperature \"" + temperature_ +
                                "\" is not a finite number other than 0");
  std::vector<std::u32string> docs;
  try {
    docs = MicrogptDocuments(input_.empty() ? std::string(MicrogptNamesText())
                                            : ReadFile(input_, kMaxInputBytes, "--input"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--input " + input_ + ": " + e.what());
  }
  if (docs.empty())
    throw std::invalid_argument("--input " + input_ +
                                ": no documents (every line is empty or blank); microgpt.py "
                                "would stop at docs[step % 0]");
  Microgpt run(std::move(docs), s);

  const bool json_to_stdout = out_ == "-";
  MicrogptRecord record;
  if (!out_.empty()) record.params.emplace_back(0, run.Params());
  const StopOnSignals stop;
  const auto print = [&](const std::string& line) {
    if (json_to_stdout) return;
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
  };
  const auto on_step = [&](const Microgpt& r, const MicrogptStep& step) {
    if (out_.empty()) return;
    record.losses.push_back(step.loss);
    record.documents.push_back(r.Documents()[step.document]);
    const int64_t done = r.StepsDone();
    if (done == s.steps || (save_every > 0 && done % save_every == 0))
      record.params.emplace_back(done, r.Params());
  };
  RunMicrogpt(
      run, hex_, print, [&] { return stop.signal() != 0; }, on_step, &record.samples);
  if (const int signal = stop.signal(); signal != 0) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "attention-lab: microgpt: stopped by %s after %lld of %lld steps and %zu of "
                 "%lld samples; nothing written\n",
                 signal == SIGINT ? "Ctrl+C" : "SIGTERM", static_cast<long long>(run.StepsDone()),
                 static_cast<long long>(s.steps), record.samples.size(),
                 static_cast<long long>(s.samples));
    return 128 + signal;
  }
  if (!out_.empty()) write(out_, MicrogptRunJson(run, record));
  return 0;
}

}  // namespace attnlab::cli
