// cli_outputs_test.cpp: what the command line writes, checked against the core that computes it
// in this process: the dump with gradients (grad.h) against torch.autograd's goldens, figures
// that reopen as their scenario (figure_meta.h), notebooks whose cells give the app's weights
// (codegen.h), the same dump bytes on 1, 2 and 8 threads (parallel.h), and training runs
// (train.h, loss_plot.h). Built into attnlab_cli_tests, with the app (tests/CMakeLists.txt).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "attnlab/base/file_io.h"
#include "attnlab/base/text.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/figures/loss_plot.h"
#include "attnlab/figures/png.h"
#include "attnlab/figures/stage_view.h"
#include "attnlab/lessons/grad.h"
#include "attnlab/lessons/train.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/torch_print.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::JsonMatrix;
using test::Shell;
using test::TempPath;

// [SECTION] dump --loss-row / --loss-key

// `attention-lab dump PRESET --loss-row I --loss-key J`: the gradients in the dump equal
// torch.autograd's (the golden of the same preset and loss), keys in byte order, W's gradients
// only where there is a W.
std::pair<int, std::string> Dump(const std::string& args) {
  return test::RunShell(std::string(ATTNLAB_CLI) + " dump " + args + " -o -");
}

TEST(GradCli, DumpAddsTheGradients) {
  const auto [status, out] = Dump("karpathy-head --loss-row 5 --loss-key 2");
  ASSERT_EQ(WEXITSTATUS(status), 0) << out;
  const json dump = json::parse(out);
  const json golden = test::LoadGolden("grad/preset-karpathy-head.json");
  const json& ex = golden["expected"];
  for (const char* key : {"grad_logits", "grad_scores"})
    for (size_t b = 0; b < 4; ++b)
      EXPECT_TRUE(test::GradNear(key, JsonMatrix(dump[key][b][0]), ex[key][b][0]));
  for (const char* key : {"grad_Q", "grad_K"})
    for (size_t b = 0; b < 4; ++b)
      EXPECT_TRUE(test::GradNear(key, JsonMatrix(dump[key][b]), ex[key][b]));
  for (const char* key : {"grad_W_query", "grad_W_key", "jacobian_row"})
    EXPECT_TRUE(test::GradNear(key, JsonMatrix(dump[key]), ex[key]));
  // The stream keeps the dump's byte order: context < grad_K < ... < jacobian_row < logits.
  size_t at = out.find("\"context\":");
  for (const char* key :
       {"\"grad_K\":", "\"grad_Q\":", "\"grad_W_key\":", "\"grad_W_query\":", "\"grad_logits\":",
        "\"grad_scores\":", "\"jacobian_row\":", "\"logits\":"}) {
    const size_t next = out.find(key);
    ASSERT_NE(next, std::string::npos) << key;
    EXPECT_GT(next, at) << key;
    at = next;
  }
  const auto [qkv_status, qkv_out] = Dump("numpy-masked --loss-row 3 --loss-key 1");
  ASSERT_EQ(WEXITSTATUS(qkv_status), 0);
  const json qkv = json::parse(qkv_out);
  EXPECT_FALSE(qkv.contains("grad_W_query"));
  const json qkv_golden = test::LoadGolden("grad/preset-numpy-masked.json");
  EXPECT_TRUE(test::GradNear("qkv grad_K", JsonMatrix(qkv["grad_K"][0]),
                             qkv_golden["expected"]["grad_K"][0]));
  // Without the options the dump has no gradient.
  const auto [plain_status, plain_out] = Dump("karpathy-head");
  EXPECT_EQ(WEXITSTATUS(plain_status), 0);
  EXPECT_EQ(plain_out.find("grad_"), std::string::npos);
}

TEST(GradCli, DumpRefusesBadLossIndices) {
  const std::string dump = "karpathy-head 2>&1 ";
  const std::pair<std::string, std::string> cases[] = {
      {"--loss-row 8 --loss-key 0", "attention-lab: error: --loss-row 8 is outside 0..7\n"},
      {"--loss-row 2 --loss-key -1", "attention-lab: error: --loss-key -1 is outside 0..7\n"},
      {"--loss-row x --loss-key 0", "attention-lab: error: --loss-row \"x\" is not an integer\n"},
      {"--loss-row 2",
       "attention-lab: error: --loss-row and --loss-key go together (the loss "
       "is -log weights[:, :, I, J])\n"},
      {"--loss-row 2 --loss-key 5",
       "attention-lab: error: loss key 5 is masked for query row 2 (mask.kind causal): its "
       "weight is 0 and -log 0 is infinite; pick a key the row may see\n"}};
  for (const auto& [args, message] : cases) {
    const auto [status, out] = Dump(dump + args);
    EXPECT_EQ(WEXITSTATUS(status), 2) << args;
    EXPECT_EQ(out, message) << args;
  }
}

// [SECTION] figures

// The command line takes a figure wherever it takes a scenario, and makes multi-panel figures.
TEST(FigureCli, PipelineFigureDumpsAsItsScenarioAndHasEveryPanel) {
  const std::string cli = ATTNLAB_CLI;
  const fs::path pdf = TempPath(".pdf"), png = TempPath(".png");
  ASSERT_EQ(Shell(cli + " export karpathy-head --stage pipeline -o " + pdf.string()).first, 0);
  ASSERT_EQ(
      Shell(cli + " export karpathy-head --stage scores,weights --head 0 -o " + png.string()).first,
      0);
  const std::string want = Shell(cli + " dump karpathy-head -o -").second;
  ASSERT_GT(want.size(), 1000u);
  EXPECT_EQ(Shell(cli + " dump " + pdf.string() + " -o -").second, want);
  EXPECT_EQ(Shell(cli + " dump " + png.string() + " -o -").second, want);
  const FigureSource f = ReadFigureScenario(ReadFile(png.string()));
  EXPECT_EQ(f.stages, (std::vector<Stage>{Stage::kScores, Stage::kWeights}));
  // karpathy-head is causal without dropout: the mask is a panel, weights_dropped is not.
  const std::string text = Shell("pdftotext " + pdf.string() + " -").second;
  for (const char* title : {"X = ", "Q = ", "K = ", "V = ", "scores = ", "mask: causal",
                            "logits = ", "weights = ", "context = "})
    EXPECT_NE(text.find(title), std::string::npos) << title << " not in\n" << text;
  EXPECT_EQ(text.find("dropout("), std::string::npos);
  EXPECT_NE(text.find(LoadPreset("karpathy-head").title.substr(0, 20)), std::string::npos);
  fs::remove(pdf);
  fs::remove(png);
}

TEST(FigureCli, ATruncatedFigureIsRefusedInOneLineNamingIt) {
  const std::string cli = ATTNLAB_CLI;
  const fs::path svg = TempPath(".svg"), cut = TempPath("_cut.svg");
  ASSERT_EQ(Shell(cli + " export dog-attacks-cat --stage weights -o " + svg.string()).first, 0);
  const std::string bytes = ReadFile(svg.string());
  WriteFileAtomic(cut.string(), bytes.substr(0, bytes.find("</attnlab:figure>")));
  const auto [status, err] = Shell(cli + " show " + cut.string() + " 2>&1");
  EXPECT_EQ(status, 2);
  EXPECT_EQ(err, "attention-lab: error: " + cut.string() +
                     ": this SVG carries no Attention Lab scenario (only figures exported by "
                     "Attention Lab do)\n");
  const auto [csv_status, csv_err] = Shell(
      cli + " export dog-attacks-cat --stage scores,weights -o " + cut.string() + ".csv 2>&1");
  EXPECT_EQ(csv_status, 2);
  EXPECT_NE(csv_err.find("several stages make one figure"), std::string::npos) << csv_err;
  fs::remove(svg);
  fs::remove(cut);
}

// [SECTION] notebooks

// Runs the notebook's code cells in order in one namespace and returns `weights` as JSON.
std::string RunCells(const std::string& ipynb) {
  const std::string cmd =
      "/usr/bin/python3 -c 'import json, sys\nnb = json.load(open(sys.argv[1]))\nenv = {}\n"
      "for c in nb[\"cells\"]:\n    if c[\"cell_type\"] == \"code\": "
      "exec(\"\".join(c[\"source\"]), env)\n"
      "w = env[\"weights\"]\nw = w.tolist()\nprint(\"RESULT\", json.dumps(w))' " +
      ipynb + " 2>&1";
  const auto [status, out] = test::RunShell(cmd);
  const size_t at = out.find("RESULT ");
  if (status != 0 || at == std::string::npos) return "error: " + out;
  return out.substr(at + 7);
}

TEST(ProgramAsNotebook, CellsRunInOrderGiveTheAppsWeights) {
  const bool numpy = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  const bool torch = std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  if (!numpy) GTEST_SKIP() << "no /usr/bin/python3 with numpy";
  const fs::path dir = fs::temp_directory_path() / ("attnlab_ipynb_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> ids = {"numpy-masked"};
  if (torch) ids.push_back("scaling-demo-scaled");
  for (const std::string& id : ids) {
    const fs::path path = dir / (id + ".ipynb");
    const std::string cmd =
        std::string(ATTNLAB_CLI) + " code " + id + " -o " + path.string() + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const std::string result = RunCells(path.string());
    ASSERT_NE(result.rfind("error: ", 0), 0u) << result;
    const json w = json::parse(result);
    const Stages st = RunScenario(LoadPreset(id));
    // (T, T) for one batch and head, (B, T, T) otherwise: compare batch 0.
    const json& w0 = w[0][0].is_array() ? w[0] : w;
    EXPECT_TRUE(test::MatrixNear(id + " weights", st.weights[0], test::JsonMatrix(w0), 1e-6, 1e-5));
  }
  fs::remove_all(dir);
}

// A saved notebook carries its outputs: the last cell's weights and context as PyTorch prints
// them (PrintStage), and the weights heatmap as a PNG (the core's figure), byte-stable; Jupyter's
// validator (python3-nbformat) accepts it.
TEST(ProgramAsNotebook, SavedNotebookCarriesPrintedTensorsAndTheHeatmap) {
  const fs::path dir = fs::temp_directory_path() / ("attnlab_nbout_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string id = "raschka-3.5-causal";
  const std::string a = (dir / "a.ipynb").string(), b = (dir / "b.ipynb").string();
  for (const std::string& path : {a, b}) {
    const auto [status, out] =
        test::RunShell(std::string(ATTNLAB_CLI) + " code " + id + " -o " + path);
    ASSERT_EQ(status, 0) << out;
  }
  const std::string text = ReadFile(a);
  EXPECT_EQ(text, ReadFile(b));  // byte-stable
  const json nb = json::parse(text);
  const json& outputs = nb["cells"].back()["outputs"];
  ASSERT_EQ(outputs.size(), 3u) << outputs;
  const Scenario sc = LoadPreset(id);
  const Stages st = RunScenario(sc);
  auto joined = [](const json& lines) {
    std::string t;
    for (const json& l : lines) t += l.get<std::string>();
    return t;
  };
  EXPECT_EQ(joined(outputs[0]["data"]["text/plain"]),
            "weights:\n" + PrintStage(st, "weights")->text);
  EXPECT_EQ(joined(outputs[1]["data"]["text/plain"]),
            "context:\n" + PrintStage(st, "context")->text);
  EXPECT_EQ(PrintStage(st, "weights")->text.rfind("tensor([[1.0000, 0.0000,", 0), 0u);
  const StageView view = ExtractStage(st, sc, Stage::kWeights, 0, 0);
  EXPECT_EQ(outputs[2]["data"]["image/png"], Base64Encode(EncodePng(RenderFigure(view, {}))));
  for (const json& o : outputs) EXPECT_EQ(o["output_type"], "display_data");
  if (std::system("/usr/bin/python3 -c 'import nbformat' >/dev/null 2>&1") == 0) {
    const auto [status, out] = test::RunShell(
        "/usr/bin/python3 -c 'import sys, nbformat\nnbformat.validate(nbformat.read(sys.argv[1], "
        "as_version=4))\nprint(\"valid\")' " +
        a + " 2>&1");
    EXPECT_EQ(status, 0) << out;
    EXPECT_EQ(out, "valid\n");
  } else {
    std::cerr << "python3-nbformat is not installed: the notebook was not validated\n";
  }
  fs::remove_all(dir);
}

// [SECTION] threads

// `dump` writes the same bytes whatever ATTNLAB_THREADS says.
TEST(ParallelEngine, DumpIsByteIdenticalWithAttnlabThreads1And2And8) {
  const fs::path dir = fs::temp_directory_path() / ("attnlab_parallel_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string scenario = (dir / "randn300.json").string();
  {
    std::ofstream f(scenario);
    f << R"({"format": "attention-lab/scenario@1",
      "input": {"source": "randn", "length": 300, "d_in": 16, "seed": 5},
      "projections": {"init": "linear", "d_out": 16, "heads": 2, "seed": 9},
      "mask": {"kind": "causal"}, "dropout": {"p": 0.1, "seed": 2}})";
  }
  std::string first;
  for (int threads : {1, 2, 8}) {
    const std::string out = (dir / ("dump" + std::to_string(threads) + ".json")).string();
    const auto [status, text] = test::RunShell("ATTNLAB_THREADS=" + std::to_string(threads) + " " +
                                               ATTNLAB_CLI + " dump " + scenario + " -o " + out);
    ASSERT_EQ(status, 0) << text;
    std::ifstream in(out, std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    ASSERT_GT(bytes.size(), 1000000u);  // 2 heads x 300 x 300 per stage
    if (threads == 1)
      first = bytes;
    else
      EXPECT_TRUE(bytes == first) << "dump differs at ATTNLAB_THREADS=" << threads;
  }
  fs::remove_all(dir);
}

// [SECTION] training

TEST(TrainCli, WritesLossesWeightsAndAScenario) {
  const std::string dir = ::testing::TempDir();
  const std::string cli = ATTNLAB_CLI;
  auto [rc, out] =
      test::RunShell(cli + " train karpathy-head --task copy-first --steps 12 --d-k 8 -o " + dir +
                     "run.json --save-scenario " + dir + "head.json");
  ASSERT_EQ(rc, 0) << out;
  std::ifstream in(dir + "run.json");
  const nlohmann::json run = nlohmann::json::parse(in);
  EXPECT_EQ(run["loss"].size(), 12u);
  EXPECT_EQ(run["W_query"].size(), 32u);    // d_in
  EXPECT_EQ(run["W_query"][0].size(), 8u);  // d_k
  std::ifstream sin(dir + "head.json");
  const std::string text((std::istreambuf_iterator<char>(sin)), std::istreambuf_iterator<char>());
  const Scenario saved = ParseScenario(text);
  EXPECT_EQ(saved.projections.init, ProjectionInit::kMatrix);
  EXPECT_EQ(saved.projections.W[0](0, 0), run["W_query"][0][0].get<float>());
  std::tie(rc, out) = test::RunShell(cli + " train karpathy-head --steps 3 -o " + dir + "run.csv");
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(test::RunShell("head -1 " + dir + "run.csv").second, "step,loss\n");
  std::tie(rc, out) =
      test::RunShell(cli + " train karpathy-head --task copy -o " + dir + "x.json 2>&1");
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_NE(out.find("--task \"copy\" is not a task"), std::string::npos) << out;
  std::tie(rc, out) =
      test::RunShell(cli + " code karpathy-head --train --task copy-first --steps 7");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("batch, steps, lr = 16, 16, 7, 0.01"), std::string::npos) << out;
}

// `train -o run.png` plots the run with and without 1/sqrt(d_k) (loss_plot.h's image of the
// same two runs); `code` without --train refuses the training options instead of ignoring them.
TEST(TrainCli, PlotsBothRunsAsPngAndCodeNeedsTrain) {
  const std::string dir = ::testing::TempDir();
  const std::string cli = ATTNLAB_CLI;
  auto [rc, out] =
      test::RunShell(cli + " train karpathy-head --task copy-first --steps 20 --d-k 64 -o " + dir +
                     "run.png 2>&1");
  ASSERT_EQ(rc, 0) << out;
  TrainOptions o;
  o.task = TrainTask::kCopyFirst;
  o.steps = 20;
  o.d_k = 64;
  const auto [scaled, unscaled] = TrainScaledAndUnscaled(LoadPreset("karpathy-head"), o);
  std::ifstream in(dir + "run.png", std::ios::binary);
  const std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(png, LossCurvesPng({&scaled, &unscaled}, {"scaled by 1/\u221Ad_k", "unscaled"},
                               LossPlotTitle(scaled)));
  std::tie(rc, out) =
      test::RunShell(cli + " train karpathy-head --no-scale -o " + dir + "x.png 2>&1");
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_NE(out.find("drop --no-scale"), std::string::npos) << out;
  std::tie(rc, out) = test::RunShell(cli + " code karpathy-head --task copy-first --steps 7 2>&1");
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_NE(out.find("--task requires --train"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace attnlab
