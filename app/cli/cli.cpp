// cli.cpp: the command line. One function per subcommand; each loads its input through
// LoadScenarioArg, runs the core, and writes its output atomically.
//
//   attention-lab dump SCENARIO.json|PRESET_ID -o OUT.json   every stage as JSON
//                [--loss-row I --loss-key J]   and the gradients of -sum log weights[:,:,I,J]
//   attention-lab presets                                    one line per preset: id, title
//   attention-lab variance --dims 5,100 --trials 20000 --seed 0
//   attention-lab show SCENARIO.json|PRESET_ID [--stage S]   stages printed as PyTorch does
//   attention-lab match SCENARIO.json|PRESET_ID --tensor FILE|-   which stage a pasted print is
//   attention-lab code SCENARIO.json|PRESET_ID [-o OUT.py|OUT.ipynb]  the program behind it
//   attention-lab export SCENARIO.json|PRESET_ID --stage S [--head H] [--batch B]
//                [--colormap NAME] [--scale N] [--values auto|on|off] [--range
//                auto|fixed|data|per-row|log]
//                [--format png|svg|pdf|csv|npy] [--dpi N] [--width 8cm|80mm|3.5in]   (--stage A,B,C
//                or pipeline: one multi-panel figure) -o OUT.png    (or --all -o DIR: every stage,
//                head and batch; --stage tokens: the token view, token_view.h)
//   attention-lab decode SCENARIO --prefill P [--chunk C] -o OUT.json   a KV-cache decode
//   attention-lab tiled SCENARIO --block-q Br --block-k Bc -o OUT.json  FlashAttention's loop
//   attention-lab circuits [--task T] [--steps N] [-o RUN.json] [--code]  an induction head forms
#include "cli/cli.h"

#include <stdlib.h>  // mkdtemp

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "attnlab/base/cpu_level.h"
#include "attnlab/base/file_io.h"
#include "attnlab/base/text.h"
#include "attnlab/figures/export.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/figures/token_view.h"
#include "attnlab/lessons/experiments.h"
#include "attnlab/lessons/grad.h"
#include "attnlab/model/bugs.h"
#include "attnlab/model/memory_probe.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/model/scenario.h"
#include "attnlab/notebook/notebook.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/match.h"
#include "attnlab/python/stages_json.h"
#include "attnlab/python/tensor_text.h"
#include "attnlab/python/torch_print.h"
#include "cli/cli_circuits.h"
#include "cli/cli_docs.h"
#include "cli/cli_inference.h"
#include "cli/cli_microgpt.h"
#include "cli/cli_train.h"
#include "cli/window_options.h"

namespace attnlab::cli {
namespace {

/// Bad input: reported as one line on stderr with exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The scenario file this run read (empty for a preset): no output may overwrite it.
std::string& InputFile() {
  static std::string path;
  return path;
}

/// Refuses an output that is the scenario file being read (it would be lost on a failure).
void CheckNotInput(const std::string& out) {
  if (!InputFile().empty() && out != "-" && SameFile(out, InputFile()))
    throw UsageError(out +
                     ": is the scenario being read; writing it would overwrite its own "
                     "input (choose another output)");
}

/// A scenario from a file path (a scenario JSON, or a figure that carries one: figure_meta.h),
/// or else a preset id. Errors name the file or the id.
Scenario LoadScenarioArg(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) {
    InputFile() = arg;
    try {
      return ScenarioFromFileBytes(ReadScenarioFile(arg));
    } catch (const ScenarioError& e) {
      throw UsageError(arg + ": " + e.what());
    }
  }
  if (IsPreset(arg)) return LoadPreset(arg);
  if (std::filesystem::exists(arg, ec)) throw UsageError(arg + ": not a regular file");
  std::string known;
  for (const PresetInfo& p : Presets()) known += (known.empty() ? "" : ", ") + p.id;
  throw UsageError(arg + ": no such file, and not a preset id (presets: " + known + ")");
}

/// Flushes standard output. Errors: FileError when a write failed (a full disk, a closed pipe).
void FlushStdout() {
  if (std::cout) errno = 0;
  std::cout.flush();
  if (!std::cout)
    throw FileError(std::string("standard output: cannot write (") +
                    (errno ? std::strerror(errno) : "write error") + ")");
}

/// Writes `text` to `path` atomically, or to stdout when path is "-". Errors: FileError,
/// UsageError when `path` is the scenario being read.
void WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    FlushStdout();
    return;
  }
  CheckNotInput(path);
  WriteFileAtomic(path, text);
}

/// An integer option's text as a T in [lo, hi], decimal only. CLI11 would accept "0x10" and
/// "010" (octal), wrap "-1" for unsigned options and clamp overflow silently. Errors:
/// UsageError naming the option and the range.
template <typename T>
T ParseInteger(const std::string& option, const std::string& text, T lo, T hi) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const bool digits = text.find_first_not_of("0123456789", text[0] == '-') == std::string::npos &&
                      text.size() > (text[0] == '-' ? 1u : 0u);
  if (!digits) throw UsageError(option + " \"" + text + "\" is not an integer");
  // Digits that do not fit T (a negative number for an unsigned T included) are out of range.
  if (ec != std::errc() || ptr != end || value < lo || value > hi)
    throw UsageError(option + " " + text + " is outside " + std::to_string(lo) + ".." +
                     std::to_string(hi));
  return value;
}

/// dump's --loss-row and --loss-key (both or neither): the gradients of grad.h, or none.
/// Errors: UsageError for one without the other or a number outside 0..T-1; GradError for a
/// key the mask forbids for the row.
std::optional<Gradients> DumpGradients(const Scenario& scenario, const Stages& stages,
                                       const std::string& row, const std::string& key) {
  if (row.empty() && key.empty()) return std::nullopt;
  if (row.empty() || key.empty())
    throw UsageError(
        "--loss-row and --loss-key go together (the loss is -log weights[:, :, I, J])");
  const int64_t T = stages.shape.T;
  return LossGradients(scenario, stages, ParseInteger<int64_t>("--loss-row", row, 0, T - 1),
                       ParseInteger<int64_t>("--loss-key", key, 0, T - 1));
}

int Dump(const std::string& input, const std::string& out, const std::string& loss_row,
         const std::string& loss_key) {
  const Scenario scenario = LoadScenarioArg(input);
  if (!loss_row.empty() || !loss_key.empty()) {
    // The gradients (two (B*H) x T x T stacks, the T x T Jacobian) and the backward pass's
    // temporaries: measured 20 bytes a logit beyond the stages (T = 8756), counted as 24.
    const Shape sh = ValidateScenario(scenario);
    const double tt = static_cast<double>(sh.T) * static_cast<double>(sh.T);
    CheckCommandMemory(scenario, sh, "dump with gradients",
                       4.0 * (5.0 * static_cast<double>(sh.B * sh.H) * tt + tt +
                              2.0 * static_cast<double>(sh.B * sh.T * sh.d_out)));
  }
  const Stages stages = RunScenario(scenario);
  const std::optional<Gradients> grads = DumpGradients(scenario, stages, loss_row, loss_key);
  const auto write = [&](std::ostream& os) {
    if (grads)
      WriteStagesJsonWithGradients(os, stages, *grads);
    else
      WriteStagesJson(os, stages);
  };
  // Streamed: the text of a large scenario is several times its stages (EstimateStageBytes).
  if (out == "-") {
    errno = 0;  // the first failed write's reason survives to FlushStdout
    write(std::cout);
    FlushStdout();
  } else {
    CheckNotInput(out);
    WriteFileAtomic(out, write);
  }
  return 0;
}

struct ExportArgs {
  std::string input, out, stage, colormap, values = "auto", format, range = "auto";
  std::string head, batch = "0", scale = "1";  // integers (ParseInteger); no --head: 0, or
                                               // all heads for --stage tokens
  std::string dpi, width;                      // --dpi 300, --width 8cm
  std::string colorbar = "auto";               // --colorbar shared|per-panel
  bool all = false;
};

/// The stages of --stage: one name, several separated by commas (one multi-panel figure), or
/// "pipeline": PipelineStages (every stage the run makes, the mask unless there is none).
/// Errors: UsageError naming an unknown stage.
std::vector<Stage> ExportStages(const std::string& text, const Scenario& scenario) {
  if (text == "pipeline") return PipelineStages(scenario);
  std::vector<Stage> stages;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const std::optional<Stage> stage = ParseStage(name);
    if (!stage) {
      throw UsageError("--stage \"" + name + "\" is not a stage (" + StageNameList(AllStages()) +
                       ", pipeline or tokens)");
    }
    stages.push_back(*stage);
    start = comma + 1;
  }
  return stages;
}

/// --width's text ("8cm", "80mm", "3.5in") in inches. Errors: UsageError.
double ParseWidth(const std::string& text) {
  static const std::pair<const char*, double> units[] = {{"cm", 2.54}, {"mm", 25.4}, {"in", 1}};
  for (const auto& [unit, per_inch] : units) {
    const size_t n = text.size() - std::min(text.size(), std::strlen(unit));
    if (text.compare(n, std::string::npos, unit) != 0) continue;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + n, value);
    if (ec == std::errc() && ptr == text.data() + n && n > 0 && value > 0 && value <= 1000)
      return value / per_inch;
  }
  throw UsageError("--width \"" + text + "\" is not a length such as 8cm, 80mm or 3.5in");
}

/// The output file's extension, lower case, without its dot ("" for `-o -`, --all's folder or
/// a name without one).
std::string OutputExtension(const ExportArgs& a) {
  if (a.all || a.out == "-") return "";
  std::string named = std::filesystem::path(a.out).extension().string();
  if (!named.empty()) named.erase(0, 1);
  for (char& ch : named) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return named;
}

constexpr const char* kExportFormats = "png, svg, pdf, csv or npy";

/// The export's format: --format, else the output file's extension when it names one, else PNG.
/// Errors: UsageError for a --format that is none.
ExportFormat ExportFormatOf(const ExportArgs& a) {
  if (!a.format.empty()) {
    const std::optional<ExportFormat> format = ParseExportFormat(a.format);
    if (!format) throw UsageError("--format \"" + a.format + "\" is not one of " + kExportFormats);
    return *format;
  }
  return ParseExportFormat(OutputExtension(a)).value_or(ExportFormat::kPng);
}

/// Refuses an output whose extension is not `format`'s (x.jpg would hold PNG bytes): the name
/// and --format must agree. Errors: UsageError naming -o.
void CheckExportExtension(const ExportArgs& a, ExportFormat format) {
  const std::string named = OutputExtension(a);
  if (named.empty() || "." + named == ExportExtension(format)) return;
  if (a.format.empty() || !ParseExportFormat(named))
    throw UsageError("-o " + a.out + ": ." + named + " is not a format the export writes (" +
                     kExportFormats + "; the name's extension or --format chooses it)");
  throw UsageError("-o " + a.out + ": the name says ." + named + " but --format is " + a.format +
                   " (name the file ." + a.format + ")");
}

/// Exports through `write` (which writes a file atomically, as the core's exporters do) to
/// `out`, or when `out` is "-" into a temporary folder's file whose bytes then go to standard
/// output. Errors: those of `write`; FileError when the temporary cannot be made or read.
void ExportTo(const std::string& out, const std::function<void(const std::string&)>& write) {
  if (out != "-") {
    write(out);
    return;
  }
  std::string dir = (std::filesystem::temp_directory_path() / "attention-lab-XXXXXX").string();
  if (!mkdtemp(dir.data()))
    throw FileError(dir + ": cannot make a temporary folder (" + std::strerror(errno) + ")");
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove{dir};
  const std::string path = dir + "/export";
  write(path);
  std::cout << ReadFile(path);
  FlushStdout();
}

/// `export --stage tokens`: the token view (token_view.h) of `scenario` as a PNG, SVG or PDF
/// carrying the scenario; `head` -1 for every head. Errors: UsageError (CSV / NPY, a head or
/// batch out of range), FileError.
int ExportTokens(const ExportArgs& a, const Scenario& scenario, const FigureOptions& opt,
                 ExportFormat format, int64_t head, int64_t batch) {
  FigureFormat figure = FigureFormat::kPng;
  if (format == ExportFormat::kSvg) figure = FigureFormat::kSvg;
  if (format == ExportFormat::kPdf) figure = FigureFormat::kPdf;
  if (format == ExportFormat::kCsv || format == ExportFormat::kNpy)
    throw UsageError("--stage tokens is a picture: use png, svg or pdf");
  CheckNotInput(a.out);
  CheckExportExtension(a, format);
  TokenViewOptions view;
  view.head = head;
  view.batch = batch;
  try {
    ValidateScenario(scenario);
    const Stages run = RunScenario(scenario);
    const std::string meta =
        FigureMetadata(scenario, {Stage::kWeights}, std::max<int64_t>(head, 0), batch, opt);
    const std::string bytes = TokenFigureFile(run, scenario, view, opt, figure, meta);
    ExportTo(a.out, [&](const std::string& path) { WriteFileAtomic(path, bytes); });
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return 0;
}

int Export(const ExportArgs& a) {
  FigureOptions opt;
  opt.scale = ParseInteger<int>("--scale", a.scale, 1, 8);
  if (!a.dpi.empty()) opt.dpi = ParseInteger<int>("--dpi", a.dpi, 1, 100000);
  if (!a.width.empty()) opt.width_inches = ParseWidth(a.width);
  if (const std::optional<ColorbarMode> c = ParseColorbarMode(a.colorbar))
    opt.colorbar = *c;
  else
    throw UsageError("--colorbar \"" + a.colorbar + "\" is not one of auto, shared, per-panel");
  const int64_t head = ParseInteger<int64_t>("--head", a.head.empty() ? "0" : a.head, 0, INT64_MAX);
  const int64_t batch = ParseInteger<int64_t>("--batch", a.batch, 0, INT64_MAX);
  if (!a.colormap.empty()) {
    try {
      FindColormap(a.colormap);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--colormap: ") + e.what());
    }
    opt.colormap = a.colormap;
  }
  if (const std::optional<ValuesMode> v = ParseName<ValuesMode>(a.values))
    opt.values = *v;
  else
    throw UsageError("--values \"" + a.values + "\" is not one of " + NameList<ValuesMode>());
  if (const std::optional<RangeMode> r = ParseRangeMode(a.range))
    opt.range = *r;
  else
    throw UsageError("--range \"" + a.range + "\" is not one of auto, fixed, data, per-row, log");
  const std::optional<ExportFormat> format = ExportFormatOf(a);
  if (!a.all && a.stage.empty()) throw UsageError("--stage is required (or --all)");
  if (a.all && !a.stage.empty()) throw UsageError("--stage and --all exclude each other");
  const Scenario scenario = LoadScenarioArg(a.input);
  if (!a.all && a.stage == "tokens")
    return ExportTokens(a, scenario, opt, *format, a.head.empty() ? -1 : head, batch);
  const std::vector<Stage> stages = a.all ? AllStages() : ExportStages(a.stage, scenario);
  if (stages.size() > 1 && (*format == ExportFormat::kCsv || *format == ExportFormat::kNpy))
    throw UsageError("several stages make one figure: use png, svg or pdf (or one stage)");
  if (a.all && a.out == "-") throw UsageError("--all writes a folder: -o - is not one");
  if (!a.all) CheckNotInput(a.out);
  try {  // refuse a figure too large, or an export past the memory limit, before running
    const Shape sh = ValidateScenario(scenario);
    const bool figure = *format != ExportFormat::kCsv && *format != ExportFormat::kNpy;
    std::vector<std::pair<int64_t, int64_t>> sizes;
    for (Stage s : stages) {
      sizes.push_back(StageSize(s, sh));
      if (figure) CheckFigureSize(s, sizes.back().first, sizes.back().second, opt.scale);
    }
    CheckExportMemory(scenario, sizes, *format, opt, a.all);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  CheckExportExtension(a, *format);  // after the input's checks, before anything runs
  const Stages run = RunScenario(scenario);
  try {
    if (a.all) {
      for (const std::string& p : ExportAll(run, scenario, opt, *format, a.out))
        std::cout << p << "\n";
    } else if (stages.size() == 1) {
      const StageView view = ExtractStage(run, scenario, stages[0], head, batch);
      ExportTo(a.out,
               [&](const std::string& path) { ExportView(view, opt, *format, path, &scenario); });
    } else {
      std::vector<StageView> views;
      for (Stage s : stages)
        views.push_back(ExtractStage(run, scenario, s, StageIsPerHead(s) ? head : 0, batch));
      ExportTo(a.out,
               [&](const std::string& path) { ExportPanels(views, scenario, opt, *format, path); });
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return 0;
}

int Code(const std::string& input, const std::string& out) {
  const Scenario scenario = LoadScenarioArg(input);
  const bool ipynb = out.size() > 6 && out.compare(out.size() - 6, 6, ".ipynb") == 0;
  WriteOutput(out, ipynb ? ScenarioNotebook(scenario) : GeneratePyTorchCode(scenario));
  return 0;
}

/// `presets`: one line per preset (id, then title); with `bug_fixes`, instead a JSON object
/// mapping each bug-gallery id (model/bugs.h Bugs) to its fix (BugFix) as a scenario@1 object,
/// which tools/make_goldens.py reads so that the fixes are spelled once, in the core. 0.
int ListPresets(bool bug_fixes) {
  if (bug_fixes) {
    nlohmann::ordered_json fixes = nlohmann::ordered_json::object();
    for (const BugInfo& b : Bugs())
      fixes[b.id] = nlohmann::ordered_json::parse(WriteScenario(BugFix(b.id, LoadPreset(b.id))));
    std::cout << fixes.dump(2) << "\n";
    return 0;
  }
  // By group in reading order (presets.h): a heading line ("# Raschka, chapter 3 ..."), then
  // "id  title" lines, the titles lined up after the longest id.
  size_t width = 0;
  for (const PresetInfo& p : Presets()) width = std::max(width, p.id.size());
  std::optional<PresetGroup> group;
  for (const PresetInfo& p : Presets()) {
    if (p.group != group) {
      std::cout << (group ? "\n" : "") << "# " << PresetGroupTitle(p.group) << "\n";
      group = p.group;
    }
    std::cout << p.id << std::string(width + 2 - p.id.size(), ' ') << p.title << "\n";
  }
  return 0;
}

// Bounds of `variance`, so that any command line finishes in seconds: at most this many
// dimensions, each at most kMaxVarianceD, and trials x (sum of the dims) random pairs in all.
constexpr size_t kMaxVarianceDims = 64;
constexpr int64_t kMaxVarianceD = 65536;
constexpr int64_t kMaxVarianceTrials = 10'000'000;
constexpr double kMaxVarianceTotal = 2e8;

struct VarianceArgs {
  std::vector<std::string> dims = {"5", "100"};
  std::string trials = "1000", seed = "0", out = "-";
};

int Variance(const VarianceArgs& a) {
  if (a.dims.size() > kMaxVarianceDims)
    throw UsageError("--dims: " + std::to_string(a.dims.size()) + " dimensions, more than the " +
                     std::to_string(kMaxVarianceDims) + " allowed");
  std::vector<int64_t> dims;
  double sum = 0;
  for (const std::string& d : a.dims) {
    dims.push_back(ParseInteger<int64_t>("--dims", d, 1, kMaxVarianceD));
    sum += static_cast<double>(dims.back());
  }
  const int64_t trials = ParseInteger<int64_t>("--trials", a.trials, 2, kMaxVarianceTrials);
  const uint64_t seed = ParseInteger<uint64_t>("--seed", a.seed, 0, UINT64_MAX);
  if (sum * static_cast<double>(trials) > kMaxVarianceTotal)
    throw UsageError("--trials x --dims: " + std::to_string(trials) + " trials x " +
                     std::to_string(static_cast<int64_t>(sum)) +
                     " (the dims' sum) is more than the limit of 2e8 numbers");
  const std::string& out = a.out;
  std::vector<VariancePoint> points;
  try {
    points = VarianceExperiment(dims, trials, seed);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--") + e.what());
  }
  nlohmann::json j = {{"trials", trials}, {"seed", seed}, {"dims", nlohmann::json::array()}};
  for (const VariancePoint& p : points)
    j["dims"].push_back(
        {{"d", p.d}, {"var_unscaled", p.var_unscaled}, {"var_scaled", p.var_scaled}});
  WriteOutput(out, j.dump() + "\n");
  return 0;
}

// User text (a title, a token, a file name) safe to write to a terminal: every control
// character (newline, ESC of an ANSI sequence, ...) shown by VisibleToken's symbol, spaces kept.
std::string TerminalText(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i += DecodeUtf8At(s, i).len) {
    const size_t len = DecodeUtf8At(s, i).len;
    out += s[i] == ' ' ? std::string(" ") : VisibleToken(s.substr(i, len));
  }
  return out;
}

// The stages printed as print(tensor) prints them in PyTorch 1.13, shaped as `code`'s program
// holds them (torch_print.h), each after a line naming it.
int Show(const std::string& input, const std::string& stage) {
  const std::vector<std::string>& names = PrintableStageNames();
  if (!stage.empty() && stage != "stats" &&
      std::find(names.begin(), names.end(), stage) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    known += ", stats";
    throw UsageError("--stage \"" + TerminalText(stage) + "\" is not a stage (" + known + ")");
  }
  const Scenario s = LoadScenarioArg(input);
  {
    // With a mask, the stats' scaled.var() scales a copy of the scores (PrintStats).
    const Shape shape = ValidateScenario(s);
    const bool stats = stage.empty() || stage == "stats";
    const double per = s.dtype == Dtype::kFloat64 ? 8.0 : 4.0;
    const double copy = stats && s.mask.kind != MaskKind::kNone
                            ? per * static_cast<double>(shape.B * shape.H) *
                                  static_cast<double>(shape.T) * static_cast<double>(shape.T)
                            : 0.0;
    try {
      CheckCommandMemory(s, shape, "show", copy);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const Stages st = RunScenario(s);
  if (!stage.empty() && stage != "stats") {
    // One stage: exactly what print(stage) writes in the program, to paste beside a
    // notebook's own output (no title, no header line).
    const PrintedStage p = *PrintStage(st, stage);
    if (!p.present)
      throw UsageError("--stage " + stage + ": this scenario has none (" +
                       (ParseStage(stage) ? RowOf(*ParseStage(stage)).absent_note
                                          : "Q, K and V are given") +  // the W's of qkv input
                       ")");
    std::cout << p.printed << "\n";
    return 0;
  }
  const auto& sh = st.shape;
  std::cout << TerminalText(s.title.empty() ? input : s.title) << "\n";
  std::cout << "B=" << sh.B << " T=" << sh.T;
  if (s.input.source != InputSource::kQkv) std::cout << " d_in=" << sh.d_in;  // qkv: no X
  std::cout << " d_out=" << sh.d_out << " heads=" << sh.H;
  if (GroupsKv(sh)) std::cout << " kv_heads=" << sh.Kv();  // K and V: kv_heads * d_k wide
  std::cout << " d_k=" << sh.dh;
  if (sh.H > 1 && s.projections.head_split != HeadSplit::kTranspose)  // the bug: Q, K, V as read
    std::cout << " head_split=" << Name(s.projections.head_split);
  if (sh.d_v != sh.d_out) std::cout << " d_v=" << sh.d_v;  // qkv input with its own V width
  if (const UnseededDraw u = FirstUnseededDraw(s); u != UnseededDraw::kNone)
    std::cout << "\n"
              << (u == UnseededDraw::kDropout ? "dropout seed: " : "W seed: ")
              << UnseededText(s.input.generator) << " ("
              << (s.input.generator == Generator::kNumpy ? "np.random.seed(" : "torch.manual_seed(")
              << DefaultSeed(s.input.generator) << "))";
  std::cout << "\ntokens:";
  for (const std::string& t : st.tokens) std::cout << " [" << VisibleToken(t) << "]";
  std::cout << "\n";
  for (const std::string& name : names) {
    if (!stage.empty()) continue;  // stats only
    const PrintedStage p = *PrintStage(st, name);
    if (!p.present) continue;
    std::string shape;
    for (int64_t d : p.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    std::cout << "\n" << name << ": " << p.what << ", shape (" << shape << ")\n" << p.text << "\n";
  }
  if (stage.empty() || stage == "stats")  // the notebooks' .var() prints
    std::cout << "\nstats: the variances the notebooks print, over whole tensors\n"
              << PrintStats(st, s);
  return 0;
}

// Which stage of the scenario a learner's pasted print is, or which known mistake explains it
// (match.h), as one JSON object on standard output.
int Match(const std::string& input, const std::string& tensor) {
  std::string text;
  if (tensor == "-") {
    text.resize(kMaxPastedBytes + 1);
    std::cin.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(std::cin.gcount()));
  } else {
    text = ReadFile(tensor, kMaxPastedBytes, "--tensor");
  }
  const std::string from = tensor == "-" ? "standard input" : TerminalText(tensor);
  PastedTensor pasted;
  try {
    pasted = ParseTensorText(text);
  } catch (const TensorTextError& e) {
    throw UsageError("--tensor " + from + ": " + e.what());
  }
  const Scenario s = LoadScenarioArg(input);
  {
    const Shape shape = ValidateScenario(s);
    try {
      CheckCommandMemory(s, shape, "match", 0.0);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  const MatchResult r = MatchPasted(s, pasted);
  auto index = [](int64_t i) { return i < 0 ? nlohmann::json() : nlohmann::json(i); };
  const nlohmann::json j = {
      {"verdict", Name(r.verdict)},
      {"stage", r.stage.empty() ? nlohmann::json() : nlohmann::json(r.stage)},
      {"batch", index(r.batch)},
      {"head", index(r.head)},
      {"max_abs_diff", r.stage.empty() ? nlohmann::json() : nlohmann::json(r.max_abs_diff)},
      {"cause", r.cause.empty() ? nlohmann::json() : nlohmann::json(r.cause)},
      {"cause_text", r.cause_text}};
  std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace

std::string VersionLine() { return "attention-lab " ATTNLAB_VERSION; }

std::string VersionText() {
  return VersionLine() + "\nkernels: " + Name(ActiveCpuLevel()) +
         " (the best this CPU runs: " + Name(BestCpuLevel()) +
         "; ATTNLAB_CPU_CAPABILITY=default|avx2|avx512 chooses)";
}

std::string SubcommandList() {
  std::string list;
  for (const char* name : kSubcommands) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

bool IsSubcommand(const std::string& arg) {
  return std::find(kSubcommands.begin(), kSubcommands.end(), arg) != kSubcommands.end() ||
         arg == "-h" || arg == "--help" || arg == "--version" || arg == kGenerateMan ||
         arg == kGenerateCompletion;
}

constexpr const char* kScenarioHelp =
    "Scenario file (.json), a figure exported from one (.png, .svg, .pdf), or preset id";

namespace {

/// The export subcommand and its options, filled into `ex`.
CLI::App* AddExportCommand(CLI::App& app, ExportArgs& ex) {
  CLI::App* exp =
      app.add_subcommand("export", "Render a stage's heatmap to PNG, SVG or PDF (or CSV / NPY)");
  exp->add_option("scenario", ex.input, kScenarioHelp)->required();
  exp->add_option("--stage", ex.stage,
                  StageNameList(AllStages(), " or ") +
                      "; several separated by commas, or pipeline, for one figure with a panel "
                      "each; or tokens, the sentence with a line per query-key pair whose "
                      "opacity is the weight");
  exp->add_option("--head", ex.head,
                  "Head (per-head stages), from 0 (default 0; with --stage tokens every head)");
  exp->add_option("--batch", ex.batch, "Batch entry, from 0");
  exp->add_option("--colormap", ex.colormap, "viridis, magma, gray, coolwarm or rdbu");
  exp->add_option("--scale", ex.scale, "Size multiplier 1..8 (2 for slides)");
  exp->add_option("--dpi", ex.dpi,
                  "Print resolution, pixels per inch (PNG pHYs; SVG and PDF printed size)");
  exp->add_option("--width", ex.width,
                  "Printed width of the figure: 8cm, 80mm or 3.5in (use --scale for pixels)");
  exp->add_option("--values", ex.values, "Print cell values: auto (T <= 12), on, off");
  exp->add_option("--range", ex.range,
                  "How the weights are coloured: auto (default: [0, 1] up to 32 keys, log10 when "
                  "[0, 1] would show almost nothing), fixed [0, 1], data [0, largest weight], "
                  "per-row (each row over its largest), log (log10)");
  exp->add_option("--format", ex.format,
                  "png, svg, pdf, csv or npy (default: the output's extension, else png); an "
                  "extension that says otherwise is refused");
  exp->add_flag("--all", ex.all, "Every stage, head and batch into the folder given by -o");
  exp->add_option("-o,--output", ex.out,
                  "Output file ('-' for standard output), or folder with --all")
      ->required();
  exp->add_option("--colorbar", ex.colorbar,
                  "Several stages: shared (one colorbar, the panels on one range), per-panel, or "
                  "auto (default: shared when every panel has the same scale, else per-panel)");
  return exp;
}

}  // namespace

namespace {

/// The man page's sections (`man`) or the bash completion script, made from `app`'s
/// subcommands and the window's options (cli_docs.h); 0.
int PrintBuildDocs(const CLI::App& app, bool man) {
  CLI::App window{"", "attention-lab"};
  gui::GuiOptions options;
  std::string size;
  bool no_autosave = false;
  gui::DescribeWindowOptions(window, options, size, no_autosave);
  std::vector<std::string> ids;
  for (const PresetInfo& p : Presets()) ids.push_back(p.id);
  std::cout << (man ? ManSections(app, window) : BashCompletion(app, window, ids));
  FlushStdout();
  return 0;
}

/// Parses the command line into `app`'s options. nullopt: go on and run the subcommand; else
/// the exit status: 0 after --help or --version, 2 after a usage error (said on stderr).
std::optional<int> ParseArguments(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "attention-lab: error: " << MessageText(e.what(), 16 * kMessageQuoteChars)
              << " (see attention-lab --help)\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace

namespace {

/// tests/memory_test.py: with ATTNLAB_MEMORY_PROBE=1 the process stops with status 0 once the
/// memory checks have passed (memory_probe.h), before any large allocation.
void InstallMemoryProbe() {
  if (const char* probe = std::getenv("ATTNLAB_MEMORY_PROBE"); probe && std::string(probe) == "1")
    SetMemoryChecksPassedHook([] {
      std::fputs("attention-lab: memory checks passed (ATTNLAB_MEMORY_PROBE)\n", stderr);
      std::_Exit(0);
    });
}

/// The scenario subcommands (dump, presets, variance, show, match, code): their options, and
/// running the one given.
struct ScenarioCli {
  std::string input, out, stage, loss_row, loss_key, tensor, code_out = "-";
  bool bug_fixes = false;
  VarianceArgs va;
  CLI::App *dump = nullptr, *presets = nullptr, *variance = nullptr, *show = nullptr,
           *match = nullptr, *code = nullptr;

  void Register(CLI::App& app) {
    dump = app.add_subcommand("dump", "Run a scenario and write every stage as JSON");
    dump->add_option("scenario", input, kScenarioHelp)->required();
    dump->add_option("-o,--output", out, "Output JSON file ('-' for standard output)")->required();
    // The gradients (grad.h); parsed once T is known.
    dump->add_option("--loss-row", loss_row,
                     "Also write the gradients of L = -sum_{b,h} log weights[b, h, I, J] (with "
                     "--loss-key)")
        ->option_text("I");
    dump->add_option("--loss-key", loss_key,
                     "The key J that query row I should attend to (0-based, as the dump's arrays)")
        ->option_text("J");

    presets = app.add_subcommand("presets", "List the shipped presets: id, then title");
    presets->add_flag("--bug-fixes", bug_fixes,
                      "Instead, write a JSON object: each bug-gallery preset's id and its fix");

    variance = app.add_subcommand(
        "variance", "Variance of q.k for random q, k of dimension d, before and after 1/sqrt(d)");
    variance->add_option("--dims", va.dims, "Dimensions d (1..65536, at most 64), comma separated")
        ->delimiter(',');
    variance->add_option("--trials", va.trials, "Random (q, k) pairs per dimension (2..1e7)");
    variance->add_option("--seed", va.seed, "torch.manual_seed before each dimension (0..2^64-1)");
    variance->add_option("-o,--output", va.out, "Output JSON file ('-' for standard output)");

    show = app.add_subcommand("show", "Print the stages of a scenario as PyTorch prints them");
    show->add_option("scenario", input, kScenarioHelp)->required();
    std::string printable;  // X, W_query, ..., context: the names PrintStage knows
    const std::vector<std::string>& names = PrintableStageNames();
    for (size_t i = 0; i < names.size(); ++i)
      printable += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    show->add_option("--stage", stage,
                     "Only this stage, exactly as print(stage) writes it in the program (to "
                     "paste beside a notebook's output): " +
                         printable + "; or stats, the notebooks' .var() prints");

    match = app.add_subcommand(
        "match",
        "Which stage of a scenario a pasted print(tensor) is, or which mistake explains it");
    match->add_option("scenario", input, kScenarioHelp)->required();
    match
        ->add_option("--tensor", tensor,
                     "The pasted text: PyTorch's tensor([...]), NumPy's array([...]) or bare "
                     "brackets, in a file ('-' for standard input)")
        ->required()
        ->option_text("FILE|-");

    code = app.add_subcommand("code", "Print the PyTorch program that computes a scenario");
    code->add_option("scenario", input, kScenarioHelp)->required();
    code->add_option("-o,--output", code_out,
                     "Output .py file, or .ipynb for a Jupyter notebook ('-' for standard output)");
  }

  /// The exit status of the subcommand given among these (2 when none of them).
  int Run(TrainCli& train_cli, InferenceCli& inference) const {
    if (*dump) return Dump(input, out, loss_row, loss_key);
    if (*presets) return ListPresets(bug_fixes);
    if (*variance) return Variance(va);
    if (*show) return Show(input, stage);
    if (*match) return Match(input, tensor);
    const TrainCliIo io{LoadScenarioArg, WriteOutput};
    if (*code)
      return train_cli.CodeGiven()   ? train_cli.Code(input, code_out, io)
             : inference.CodeGiven() ? inference.Code(input, code_out, io)
                                     : Code(input, code_out);
    return 2;
  }

  bool Given() const { return *dump || *presets || *variance || *show || *match || *code; }
};

}  // namespace

int Run(int argc, char** argv) {
  // Ctrl+C or a kill during a write removes the temporary: no file is left half-written.
  InterruptWritesOnSignals();
  InstallMemoryProbe();
  CLI::App app{"Attention Lab: self-attention you can play with, to the digits PyTorch prints.",
               "attention-lab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionText(),
                       "Print the version (" ATTNLAB_VERSION
                       ") and the kernels' instruction-set level, and exit");

  ScenarioCli scenario;
  scenario.Register(app);
  TrainCli train_cli;  // attention-lab train, and code --train (cli_train.cpp)
  train_cli.Register(app, *scenario.code);
  ExportArgs ex;
  CLI::App* exp = AddExportCommand(app, ex);
  InferenceCli inference;  // attention-lab decode, tiled (cli_inference.cpp)
  inference.Register(app, *scenario.code);
  MicrogptCli microgpt;  // attention-lab microgpt (cli_microgpt.cpp)
  microgpt.Register(app);
  CircuitsCli circuits;  // attention-lab circuits (cli_circuits.cpp)
  circuits.Register(app);

  // The build's documentation, made from the definitions above and the window's (cli_docs.h).
  if (const std::string first = argv[1];
      argc == 2 && (first == kGenerateMan || first == kGenerateCompletion))
    return PrintBuildDocs(app, first == kGenerateMan);
  if (const std::optional<int> status = ParseArguments(app, argc, argv)) return *status;
  try {
    int status = 2;
    if (scenario.Given()) status = scenario.Run(train_cli, inference);
    if (*exp) status = Export(ex);
    const TrainCliIo io{LoadScenarioArg, WriteOutput};
    if (train_cli.TrainGiven()) status = train_cli.Train(io);
    if (inference.Given()) status = inference.Run(io);
    if (microgpt.Given()) status = microgpt.Run(WriteOutput);
    if (circuits.Given()) status = circuits.Run(WriteOutput);
    FlushStdout();  // a failed write to stdout (a full disk, /dev/full) is an error, not success
    return status;
  } catch (const WriteInterrupted& e) {
    std::cerr << "attention-lab: " << MessageText(e.what(), 16 * kMessageQuoteChars) << "\n";
    return 128 + e.signal();  // as a shell reports a process its signal ended: 130, 143
  } catch (const std::bad_alloc&) {
    std::cerr << "attention-lab: error: out of memory\n";
  } catch (const std::exception& e) {
    // UsageError, ScenarioError, FontError, FileError, ...: their text quotes paths and
    // arguments, which may hold any byte; the message stays one line of plain text.
    std::cerr << "attention-lab: error: " << MessageText(e.what(), 16 * kMessageQuoteChars) << "\n";
  }
  return 2;
}

}  // namespace attnlab::cli
