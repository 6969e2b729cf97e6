// cli_test.cpp: the attention-lab command line end to end: outputs, and for every kind of bad
// input exit status 2, one clear line on stderr naming the culprit, and no output file.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attnlab/base/cpu_level.h"
#include "attnlab/base/file_io.h"
#include "attnlab/figures/export.h"
#include "attnlab/figures/figure.h"
#include "attnlab/figures/figure_meta.h"
#include "attnlab/figures/token_view.h"
#include "attnlab/lessons/circuits.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/codegen_circuits.h"
#include "attnlab/random/rng.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status;
  std::string out, err;
};

// A per-test name, so that ctest -j can run the tests of this file side by side.
std::string TestName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(getpid());
}

Result RunCli(const std::string& args) {
  const fs::path err_path = fs::temp_directory_path() / ("attnlab_stderr_" + TestName() + ".txt");
  const std::string cmd = std::string(ATTNLAB_CLI) + " " + args + " 2>" + err_path.string();
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, "", ""};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadFile(err_path.string());
  fs::remove(err_path);
  return r;
}

// Everything a reader gets from a FIFO until the writer closes it.
std::string ReadPipe(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnlab_cli_" + TestName());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  fs::path dir_;
};

TEST_F(Cli, PresetsListsIdThenTitle) {
  const Result r = RunCli("presets");
  EXPECT_EQ(r.status, 0);
  for (const char* id :
       {"raschka-journey", "dog-attacks-cat", "karpathy-trick", "karpathy-head", "scaling-demo",
        "scaling-demo-scaled", "numpy-masked", "karpathy-a-at-b", "raschka-3.3-simple",
        "raschka-3.4-v2", "raschka-3.5-causal", "raschka-3.5-dropout", "raschka-3.5-causal-batch",
        "raschka-3.6-mha", "raschka-3.5-masked-simple"})
    EXPECT_NE(r.out.find(std::string(id) + " "), std::string::npos) << id;
  // The titles line up after the longest id (alibi-heads3-attention-gym) and two spaces.
  EXPECT_NE(r.out.find("\nraschka-journey             Raschka ch. 3"), std::string::npos) << r.out;
  // By course and chapter: the book's first section first, each group under its heading.
  EXPECT_EQ(r.out.rfind("# Raschka, chapter 3", 0), 0u) << r.out;
  EXPECT_LT(r.out.find("\nraschka-3.3-sum "), r.out.find("\nraschka-3.4-v2 ")) << r.out;
  EXPECT_LT(r.out.find("\nraschka-3.6-mha "), r.out.find("\nraschka-journey ")) << r.out;
  EXPECT_LT(r.out.find("\nraschka-journey "), r.out.find("\n# The NumPy notebook")) << r.out;
  EXPECT_LT(r.out.find("\n# Modern attention"), r.out.find("\nalibi ")) << r.out;
  EXPECT_LT(r.out.find("\n# Bug gallery"), r.out.find("\nbug-softmax-dim ")) << r.out;
  // docs/presets.md shows the same list (it is this output, made by tools/presets_doc.sh).
  const std::string doc = ReadFile(std::string(ATTNLAB_GOLDEN_DIR) + "/../../docs/presets.md");
  EXPECT_NE(doc.find("```\n" + r.out + "```\n"), std::string::npos)
      << "docs/presets.md is not the output of `attention-lab presets`: run tools/presets_doc.sh";
}

TEST_F(Cli, DumpPresetWritesEveryStage) {
  const Result r = RunCli("dump raschka-journey -o " + Path("out.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(Path("out.json")));
  EXPECT_NEAR(j["scores"][0][0][1][0].get<double>(), 1.2705, 5e-5);
  EXPECT_NEAR(j["context"][0][1][1].get<double>(), 0.8210, 5e-5);
  EXPECT_EQ(j["tokens"][1], "journey");
}

TEST_F(Cli, DumpScenarioFile) {
  const std::string f = Write("s.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 3, "d_in": 2, "seed": 0},
    "projections": {"init": "identity"}, "mask": {"kind": "causal"}})");
  const Result r = RunCli("dump " + f + " -o " + Path("out.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(ReadFile(Path("out.json")));
  EXPECT_EQ(j["weights"][0][0][0][0], 1.0);
  EXPECT_EQ(j["logits"][0][0][0][2], "-inf");
}

TEST_F(Cli, ExportWritesThePngTheLibraryRenders) {
  const Result r = RunCli("export dog-attacks-cat --stage weights --scale 2 -o " + Path("w.png"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Scenario s = LoadPreset("dog-attacks-cat");
  const std::string want = EmbedPngText(
      EncodePng(RenderFigure(ExtractStage(RunScenario(s), s, Stage::kWeights, 0, 0), {.scale = 2})),
      kFigureMetadataKey, FigureMetadata(s, {Stage::kWeights}, 0, 0, {.scale = 2}));
  // The command line adds nothing of its own but the scenario and the view options.
  EXPECT_TRUE(ReadFile(Path("w.png")) == want);
  const Result csv = RunCli("export raschka-journey --stage context -o " + Path("c.csv"));
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(ReadFile(Path("c.csv")).substr(0, 13), "query,d0,d1\nY");
  const Result all = RunCli("export karpathy-trick --all -o " + Path("all"));
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_TRUE(fs::exists(Path("all/weights_b3.png")));
  EXPECT_TRUE(fs::exists(Path("all/mask.png")));
}

// `-o -` is standard output for export too (it used to write a file named "-"): the bytes are
// those of the file the same command writes, for one stage and for a multi-panel figure.
TEST_F(Cli, ExportToStandardOutputIsTheFileItWouldWrite) {
  for (const std::string args : {"export dog-attacks-cat --stage weights --scale 2",
                                 "export raschka-journey --stage context --format csv",
                                 "export karpathy-head --stage scores,weights --format svg"}) {
    const std::string ext = args.find("csv") != std::string::npos   ? ".csv"
                            : args.find("svg") != std::string::npos ? ".svg"
                                                                    : ".png";
    const Result file = RunCli(args + " -o " + Path("f" + ext));
    ASSERT_EQ(file.status, 0) << file.err;
    const Result out = RunCli(args + " -o -");
    ASSERT_EQ(out.status, 0) << out.err;
    EXPECT_TRUE(out.out == ReadFile(Path("f" + ext))) << args;
    EXPECT_GT(out.out.size(), 100u) << args;
  }
  EXPECT_EQ(RunCli("export dog-attacks-cat --stage weights -o -").out.substr(1, 3), "PNG");
  const Result all = RunCli("export dog-attacks-cat --all -o -");
  EXPECT_EQ(all.status, 2);
  EXPECT_EQ(all.err, "attention-lab: error: --all writes a folder: -o - is not one\n");
}

// `export --stage tokens`: the token view (token_view.h) as the library draws it, every head by
// default; one <line> per allowed pair and head, the weight as its opacity; the scenario rides
// along; CSV is refused (a picture), and so is a head out of range.
TEST_F(Cli, ExportTokensWritesTheTokenView) {
  const Result r = RunCli("export raschka-3.5-causal --stage tokens -o " + Path("t.svg"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Scenario s = LoadPreset("raschka-3.5-causal");
  const std::string svg = ReadFile(Path("t.svg"));
  EXPECT_TRUE(svg == TokenFigureFile(RunScenario(s), s, {}, {}, FigureFormat::kSvg,
                                     FigureMetadata(s, {Stage::kWeights}, 0, 0, {})));
  size_t lines = 0;
  for (size_t at = svg.find("<line "); at != std::string::npos; at = svg.find("<line ", at + 1))
    ++lines;
  EXPECT_EQ(lines, 21u);  // the causal mask's 21 allowed pairs of 6 tokens
  const Result two = RunCli("export raschka-3.6-mha --stage tokens -o -");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_EQ(two.out.substr(1, 3), "PNG");
  EXPECT_TRUE(ReadFigureScenario(two.out).scenario == LoadPreset("raschka-3.6-mha"));
  const Result csv = RunCli("export raschka-journey --stage tokens -o " + Path("t.csv"));
  EXPECT_EQ(csv.status, 2);
  EXPECT_EQ(csv.err, "attention-lab: error: --stage tokens is a picture: use png, svg or pdf\n");
  const Result head = RunCli("export raschka-journey --stage tokens --head 3 -o " + Path("h.png"));
  EXPECT_EQ(head.status, 2);
  EXPECT_NE(head.err.find("head 3 is out of range"), std::string::npos) << head.err;
  EXPECT_FALSE(fs::exists(Path("h.png")));
}

// The format follows --format, else the file's extension (any case), else PNG; an extension
// that says another format, or none the export writes, is refused before anything is written.
TEST_F(Cli, ExportFormatFollowsTheNameAndRefusesAContradiction) {
  const Result jpg = RunCli("export dog-attacks-cat --stage weights -o " + Path("x.jpg"));
  EXPECT_EQ(jpg.status, 2);
  EXPECT_EQ(jpg.err, "attention-lab: error: -o " + Path("x.jpg") +
                         ": .jpg is not a format the export writes (png, svg, pdf, csv or npy; "
                         "the name's extension or --format chooses it)\n");
  const Result clash =
      RunCli("export dog-attacks-cat --stage weights --format png -o " + Path("x.svg"));
  EXPECT_EQ(clash.status, 2);
  EXPECT_EQ(clash.err, "attention-lab: error: -o " + Path("x.svg") +
                           ": the name says .svg but --format is png (name the file .png)\n");
  EXPECT_FALSE(fs::exists(Path("x.jpg")));
  EXPECT_FALSE(fs::exists(Path("x.svg")));
  ASSERT_EQ(RunCli("export dog-attacks-cat --stage weights -o " + Path("up.SVG")).status, 0);
  EXPECT_EQ(ReadFile(Path("up.SVG")).substr(0, 5), "<?xml");
  ASSERT_EQ(
      RunCli("export dog-attacks-cat --stage weights --format pdf -o " + Path("plain")).status, 0);
  EXPECT_EQ(ReadFile(Path("plain")).substr(0, 5), "%PDF-");
  ASSERT_EQ(RunCli("export dog-attacks-cat --stage weights -o " + Path("noext")).status, 0);
  EXPECT_EQ(ReadFile(Path("noext")).substr(1, 3), "PNG");
}

// --help names every subcommand and the window's options, --size among them.
TEST_F(Cli, HelpListsEverySubcommandAndTheWindowOptions) {
  const Result r = RunCli("--help");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"dump", "presets", "variance", "show", "match", "code", "train",
                           "export", "decode", "tiled"})
    EXPECT_NE(r.out.find("\n  " + std::string(name) + " "), std::string::npos) << name;
  for (const char* option : {"--size WxH", "--preset ID", "--screenshot", "--script"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << "\n" << r.out;
}

// decode and tiled write the issue's keys, with PyTorch's numbers (golden/decode, made by
// tools/make_decode_goldens.py; tolerance as tests/inference_test.cpp explains: a few float32
// ulps of summation order), and refuse bad options with exit 2 naming the option.
TEST_F(Cli, DecodeAndTiledWriteEveryStepAsPyTorchsLoops) {
  const nlohmann::json top_left = test::LoadGolden("decode/journey-top-left-p2.json");
  Result r = RunCli("decode bug-decode-top-left --prefill 2 -o -");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& want = top_left["decode"]["expected"];
  ASSERT_EQ(j["steps"].size(), want["steps"].size());
  for (size_t i = 0; i < j["steps"].size(); ++i) {
    EXPECT_EQ(j["steps"][i]["t"], want["steps"][i]["t"]);
    EXPECT_EQ(j["steps"][i]["cache_len"], want["steps"][i]["cache_len"]);
    EXPECT_EQ(j["steps"][i]["evicted"], want["steps"][i]["evicted"]);
  }
  EXPECT_GT(j["steps"][1]["max_abs_diff"].get<double>(), 0.05);  // top-left: the classic bug
  EXPECT_TRUE(test::MatrixNear("decode context", test::JsonMatrix(j["context"][0]),
                               test::JsonMatrix(want["context"][0]), 2e-6, 1e-5));

  const nlohmann::json causal = test::LoadGolden("decode/journey-causal-p2.json");
  r = RunCli("tiled flash-journey --block-q 2 --block-k 2 -o " + Path("t.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(ReadFile(Path("t.json")));
  EXPECT_EQ(j["skipped_tiles"], 3);
  EXPECT_EQ(j["steps"].size(), 9u);
  EXPECT_EQ(j["steps"][4]["rows"], nlohmann::json({2, 4}));
  EXPECT_EQ(j["steps"][4]["keys"], nlohmann::json({2, 4}));
  EXPECT_TRUE(test::MatrixNear("tiled context", test::JsonMatrix(j["context"][0]),
                               test::JsonMatrix(causal["tiled"]["expected"]["context"][0]), 2e-6,
                               1e-5));
  EXPECT_LE(j["max_abs_diff"].get<double>(), 1e-6);

  r = RunCli("decode raschka-journey --prefill 9 -o " + Path("d.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "attention-lab: error: --prefill: 9 is outside 0..6 (the scenario has T = 6 tokens)\n");
  EXPECT_FALSE(fs::exists(Path("d.json")));
  r = RunCli("tiled raschka-journey --block-q 0 --block-k 2 -o " + Path("d.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "attention-lab: error: --block-q \"0\" is not an integer in 1..2147483648\n");
}

// bfloat16: decode and tiled run it (the JSON names the dtype and the tolerance; the values are
// PyTorch's loops', tools/make_decode_goldens.py: the decode's stored stages within one
// bfloat16 ulp, the tiles' FlashAttention-2 rounding of P), and code --loop writes both loops
// with the program's stored() where the loops store.
TEST_F(Cli, DecodeAndTiledInBfloat16) {
  const nlohmann::json g = test::LoadGolden("decode/lowp-bfloat16-journey-causal-p2.json");
  const std::string scenario = Write("bf16.json", g["scenario"].dump());
  Result r = RunCli("decode " + scenario + " --prefill 2 -o -");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dtype"], "bfloat16");
  EXPECT_GT(j["tolerance"].get<double>(), 0.0);
  EXPECT_LE(j["max_abs_diff"].get<double>(), j["tolerance"].get<double>());
  EXPECT_TRUE(test::MatrixNear("bfloat16 decode context", test::JsonMatrix(j["context"][0]),
                               test::JsonMatrix(g["decode"]["expected"]["context"][0]), 0.0,
                               0x1p-7));
  for (const auto& row : j["context"][0])
    for (const auto& v : row) EXPECT_EQ(v.get<float>(), StoreAs(Dtype::kBfloat16, v.get<float>()));
  r = RunCli("tiled " + scenario + " --block-q 2 --block-k 2 -o -");
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dtype"], "bfloat16");
  EXPECT_TRUE(test::MatrixNear("bfloat16 tiled context", test::JsonMatrix(j["context"][0]),
                               test::JsonMatrix(g["tiled"]["expected"]["context"][0]), 0.0,
                               0x1p-7));
  EXPECT_LE(j["max_abs_diff"].get<double>(), j["tolerance"].get<double>());
  // The loop programs store what the loops store (tools/check_loop_codegen.py runs them).
  r = RunCli("code " + scenario + " --loop decode --prefill 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("    step_logits = stored(step_logits)  # the whole rule"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    step_weights = stored(step_weights)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    step_context = stored((step_weights @ cache_v"), std::string::npos)
      << r.out;
  r = RunCli("code " + scenario + " --loop tiled --block-q 2 --block-k 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("                    p = stored(p)  # P stored in the dtype before P @ V"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("= stored(out)  # O / l made in float32, stored"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("step_scores = stored("),
            std::string::npos);  // the tiles keep float32 logits
}

/// The numbers of a CSV export's rows (each line's fields after the row label; the header
/// line skipped).
std::vector<std::vector<double>> CsvNumbers(const std::string& csv) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // the header: the axis and the column labels
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream fields(
        line.substr(line.rfind('"') == std::string::npos ? 0 : line.rfind('"')));
    std::string field;
    std::getline(fields, field, ',');  // the row label
    while (std::getline(fields, field, ',')) row.push_back(std::stod(field));
    rows.push_back(row);
  }
  return rows;
}

// decode and tiled with -o naming a figure or table format: one step's heatmap (--step,
// --head, --batch). Its CSV holds the numbers of the JSON's step: the decode step's weights of
// that head with the sink's share as the last column; the tile's m, l, rescale and O per row.
TEST_F(Cli, DecodeAndTiledExportOneStep) {
  Result r = RunCli("decode gpt-oss-sink --prefill 3 --chunk 2 -o " + Path("d.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json d = nlohmann::json::parse(ReadFile(Path("d.json")));
  const nlohmann::json& step = d["steps"][3];  // chunks 0-1 and 2, then tokens 3, 4, ...
  ASSERT_TRUE(step.contains("sink"));
  r = RunCli("decode gpt-oss-sink --prefill 3 --chunk 2 --step 3 --head 1 -o " + Path("s.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::vector<double>> cells = CsvNumbers(ReadFile(Path("s.csv")));
  const nlohmann::json& w = step["weights"][0][1];
  ASSERT_EQ(cells.size(), w.size());
  ASSERT_EQ(cells[0].size(), w[0].size() + 1);  // the keys, then the sink
  double row_sum = 0;
  for (size_t c = 0; c < w[0].size(); ++c) {
    EXPECT_EQ(cells[0][c], w[0][c].get<double>()) << c;
    row_sum += cells[0][c];
  }
  EXPECT_EQ(cells[0].back(), step["sink"][0][1][0][0].get<double>());
  EXPECT_NEAR(row_sum + cells[0].back(), 1.0, 1e-6);  // the keys and the sink share the row
  EXPECT_GT(cells[0].back(), 0.01);
  r = RunCli("decode gpt-oss-sink --prefill 3 --step 3 -o " + Path("s.png"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadFile(Path("s.png")).substr(1, 3), "PNG");

  r = RunCli("tiled flash-journey --block-q 2 --block-k 2 -o " + Path("t.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json t = nlohmann::json::parse(ReadFile(Path("t.json")));
  r = RunCli("tiled flash-journey --block-q 2 --block-k 2 --step 4 -o " + Path("t.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::vector<double>> tile = CsvNumbers(ReadFile(Path("t.csv")));
  const nlohmann::json& s4 = t["steps"][4];
  ASSERT_EQ(tile.size(), 2u);
  for (size_t row = 0; row < 2; ++row) {
    EXPECT_EQ(tile[row][0], s4["m"][row].get<double>());
    EXPECT_EQ(tile[row][1], s4["l"][row].get<double>());
    EXPECT_EQ(tile[row][2], s4["rescale"][row].get<double>());
    EXPECT_EQ(tile[row][3], s4["O"][row][0].get<double>());
  }
  r = RunCli("tiled flash-journey --block-q 2 --block-k 2 --step 9 -o " + Path("t.csv"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "attention-lab: error: step 9 is out of range: the tiled run has 9 steps (0..8)\n");
  r = RunCli("decode gpt-oss-sink --prefill 3 --step 1 -o " + Path("x.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--step, --head and --batch choose the figure"), std::string::npos) << r.err;
}

// code --loop: the scenario's program and the loop (the programs themselves run against the
// JSON in the ctest codegen_loops_reproduce_cli); the loop's settings are checked as decode's
// and tiled's, and they need --loop.
TEST_F(Cli, CodeLoop) {
  Result r = RunCli("code flash-journey --loop tiled --block-q 2 --block-k 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("context = weights @ V"), std::string::npos);
  EXPECT_NE(r.out.find("Br, Bc = 2, 2\n"), std::string::npos);
  EXPECT_NE(r.out.find("print(\"largest |tiled - full| over the context:\", max_abs_diff)"),
            std::string::npos);
  r = RunCli("code bug-decode-top-left --loop decode --prefill 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("prefill, chunk = 2, 0\n"), std::string::npos);
  EXPECT_NE(r.out.find("top = cache_pos[0]  # mask.align \"top_left\""), std::string::npos);
  r = RunCli("code raschka-journey --loop decode");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "attention-lab: error: --prefill is required with --loop decode\n");
  r = RunCli("code raschka-journey --loop decode --prefill 7");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "attention-lab: error: --prefill: 7 is outside 0..6 (the scenario has T = 6 tokens)\n");
  r = RunCli("code raschka-journey --block-q 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--block-q requires --loop"), std::string::npos) << r.err;
}

TEST_F(Cli, VarianceJson) {
  const Result r = RunCli("variance --dims 5,100 --trials 20000 --seed 0");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["dims"].size(), 2u);
  EXPECT_EQ(j["dims"][0]["d"], 5);
  EXPECT_NEAR(j["dims"][0]["var_unscaled"].get<double>(), 5.0, 0.25);
  EXPECT_NEAR(j["dims"][1]["var_unscaled"].get<double>(), 100.0, 5.0);
  EXPECT_NEAR(j["dims"][1]["var_scaled"].get<double>(), 1.0, 0.05);
}

// show: every stage as PyTorch 1.13's print(tensor) writes it (goldens of
// tools/make_print_goldens.py), each after a line naming it and its shape.
TEST_F(Cli, ShowPrintsEveryStageAsPyTorch) {
  const Result r = RunCli("show raschka-journey");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto golden = test::LoadGolden("print/scenarios/preset-raschka-journey.json");
  EXPECT_NE(r.out.find("\nX: input embeddings, shape (6, 3)\ntensor([[0.4300, 0.1500, 0.8900],\n"),
            std::string::npos)
      << r.out;
  for (const auto& [name, stage] : golden.items())
    EXPECT_NE(r.out.find("shape (" + std::to_string(stage["shape"][0].get<int>()) + ", " +
                         std::to_string(stage["shape"][1].get<int>()) + ")\n" +
                         stage["text"].get<std::string>() + "\n"),
              std::string::npos)
        << name << "\n"
        << r.out;
  EXPECT_EQ(r.out.find("weights_dropped"), std::string::npos);  // no dropout: not printed
}

// show --stage S prints exactly what print(S) writes in PyTorch 1.13, byte for byte (the
// goldens of tools/make_print_goldens.py), to paste beside a notebook's output; NumPy
// scenarios print as NumPy's print(array): no "array(", no commas.
TEST_F(Cli, ShowOneStagePrintsExactlyWhatPrintWrites) {
  const auto golden = test::LoadGolden("print/scenarios/preset-raschka-journey.json");
  for (const char* name : {"X", "W_query", "scores", "mask", "weights", "context"}) {
    const Result r = RunCli("show raschka-journey --stage " + std::string(name));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, golden[name]["text"].get<std::string>() + "\n") << name;
  }
  const Result n = RunCli("show numpy-masked --stage mask");
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_EQ(n.out.substr(0, 10), "[[  0. -in") << n.out;
  EXPECT_EQ(n.out.find(','), std::string::npos) << n.out;
  const Result none = RunCli("show karpathy-trick --stage weights_dropped");
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.err,
            "attention-lab: error: --stage weights_dropped: this scenario has none (dropout p "
            "is 0)\n");
}

// Issue 33's scenario, seeded nowhere: show names the seed the app started from and prints
// the numbers the program (which pins that seed) prints; numpy and dropout say so too.
TEST_F(Cli, ShowSaysWhichDrawIsUnseeded) {
  const std::string torch = Write("t.json", R"({"format": "attention-lab/scenario@1",
      "input": {"source": "matrix", "values": [[1, 2], [3, 4]]},
      "projections": {"init": "torch_rand", "d_out": 2}})");
  const Result t = RunCli("show " + torch);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("\nW seed: unseeded: PyTorch's default seed "
                       "(torch.manual_seed(67280421310721))\n"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("\ncontext: "), std::string::npos);
  EXPECT_NE(t.out.find("tensor([[2.4652, 3.2246],\n        [2.4822, 3.2441]])"), std::string::npos)
      << t.out;
  const std::string numpy = Write("n.json", R"({"format": "attention-lab/scenario@1",
      "input": {"source": "matrix", "generator": "numpy", "values": [[1, 2], [3, 4]]},
      "projections": {"init": "torch_rand", "d_out": 2}})");
  const Result n = RunCli("show " + numpy + " --stage stats");
  ASSERT_EQ(n.status, 0) << n.err;
  EXPECT_NE(n.out.find("\nW seed: unseeded: seed 0 (NumPy has no default seed) "
                       "(np.random.seed(0))\n"),
            std::string::npos)
      << n.out;
  const std::string drop = Write("d.json", R"({"format": "attention-lab/scenario@1",
      "input": {"source": "matrix", "values": [[1, 2], [3, 4]]},
      "projections": {"init": "identity"}, "dropout": {"p": 0.5}})");
  const Result d = RunCli("show " + drop + " --stage stats");
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_NE(d.out.find("\ndropout seed: unseeded: PyTorch's default seed"), std::string::npos)
      << d.out;
  const Result seeded = RunCli("show raschka-journey --stage stats");
  EXPECT_EQ(seeded.out.find("unseeded"), std::string::npos) << seeded.out;
}

// The dump's shape of qkv input has no d_in (there is no X); d_out is the width of Q and K.
TEST_F(Cli, DumpShapeOfQkvHasNoDIn) {
  const Result q = RunCli("dump scaling-demo -o -");
  ASSERT_EQ(q.status, 0) << q.err;
  const nlohmann::json shape = nlohmann::json::parse(q.out)["shape"];
  EXPECT_FALSE(shape.contains("d_in")) << shape;
  EXPECT_EQ(shape["d_out"], 16);
  EXPECT_EQ(shape["d_k"], 16);
  const Result x = RunCli("dump raschka-journey -o -");
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(nlohmann::json::parse(x.out)["shape"]["d_in"], 3);
  const Result s = RunCli("show scaling-demo --stage stats");
  EXPECT_NE(s.out.find("\nB=4 T=8 d_out=16 heads=1 d_k=16\n"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("d_in="), std::string::npos) << s.out;
}

TEST_F(Cli, ShowUnknownStageExits2ListingTheNames) {
  const Result r = RunCli("show karpathy-trick --stage q");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "attention-lab: error: --stage \"q\" is not a stage (X, W_query, W_key, W_value, Q, "
            "K, V, Q_rot, K_rot, scores, logits, mask, weights, weights_dropped, sink, context, "
            "stats)\n");
}

// show ends with the variances the notebooks print, as the notebook prints them: the
// from-scratch notebook's k.var(), q.var(), wei.var() (scaling-demo: wei is the unscaled
// scores) and the NumPy notebook's q.var() (numpy-masked, its seed 0 golden).
TEST_F(Cli, ShowPrintsTheNotebooksVariances) {
  const Result r = RunCli("show scaling-demo --stage stats");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* line : {"\nq.var(): tensor(0.9302)\n", "\nk.var(): tensor(1.0069)\n",
                           "\nscores.var(): tensor(15.6977)\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
  EXPECT_EQ(r.out.find("weights: attention weights"), std::string::npos);  // stats only
  // karpathy-mathematical-trick.txt, cell 29: wei.var() of the (T, T) averaging weights.
  const Result trick = RunCli("show karpathy-trick --stage stats");
  ASSERT_EQ(trick.status, 0) << trick.err;
  const size_t one = trick.out.find("batch 0, head 0 only");
  ASSERT_NE(one, std::string::npos) << trick.out;
  EXPECT_NE(trick.out.find("\nweights.var(): tensor(0.0273)\n", one), std::string::npos)
      << trick.out;
  const Result n = RunCli("show numpy-masked");
  ASSERT_EQ(n.status, 0) << n.err;
  const auto repr = test::LoadGolden("notebooks/numpy-masked.json")["cells"]["repr"];
  for (const auto& [ours, notebook] : {std::pair{"q.var()", "q.var()"},
                                       {"k.var()", "k.var()"},
                                       {"scores.var()", "np.matmul(q, k.T).var()"},
                                       {"scaled.var() (before the mask)", "scaled.var()"}}) {
    const std::string line =
        std::string("\n") + ours + ": " + repr[notebook].get<std::string>() + "\n";
    EXPECT_NE(n.out.find(line), std::string::npos) << line << n.out;
  }
}

// A shared scenario's title must not drive the terminal: no raw ESC, newline or other control.
TEST_F(Cli, ShowEscapesControlCharactersOfTheTitle) {
  auto doc = test::LoadGolden("scenarios/preset-raschka-journey.json")["scenario"];
  doc["title"] =
      "evil\x1b[2J\x1b]0;pwned\x07 title\nsecond line\r\xC2\x9B"
      "31m";  // ... and U+009B, the one-byte CSI
  const Result r = RunCli("show " + Write("evil.json", doc.dump()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "evil\uFFFD[2J\uFFFD]0;pwned\uFFFD title\u2424second line\u240D\uFFFD31m");
  for (char c : r.out) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << int(c);
  EXPECT_EQ(r.out.find("\xC2\x9B"), std::string::npos);
}

// match: the JSON of the issue's keys, for a file and for standard input, with the book's
// numbers printed by PyTorch 1.13 (tests/golden/match/cases.json, tools/make_match_goldens.py).
TEST_F(Cli, MatchWritesTheVerdictAsJson) {
  const auto cases = test::LoadGolden("match/cases.json");
  for (const auto& c : cases) {
    const std::string name = c["name"];
    if (name != "causal-weights" && name != "journey-scale-off") continue;
    const std::string file = Write(name + ".txt", c["text"].get<std::string>());
    const Result r = RunCli("match " + c["preset"].get<std::string>() + " --tensor " + file);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{"batch", "cause", "cause_text", "head",
                                              "max_abs_diff", "stage", "verdict"}));
    EXPECT_EQ(j["verdict"], c["verdict"]) << r.out;
    EXPECT_EQ(j["stage"], c["stage"]) << r.out;
    EXPECT_EQ(j["cause"], c["cause"]) << r.out;
    EXPECT_TRUE(j["batch"].is_null() && j["head"].is_null()) << r.out;
    EXPECT_TRUE(j["max_abs_diff"].is_number()) << r.out;
    const Result in = RunCli("match " + c["preset"].get<std::string>() + " --tensor - < " + file);
    ASSERT_EQ(in.status, 0) << in.err;
    EXPECT_EQ(in.out, r.out);
  }
}

TEST_F(Cli, MatchRefusesMalformedTextNamingLineAndColumn) {
  const std::string bad = Write("bad.txt", "tensor([[0.1, 0.2],\n        [0.3, 0.4x]])");
  const Result r = RunCli("match raschka-journey --tensor " + bad);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "attention-lab: error: --tensor " + bad +
                       ": line 2, column 18: unexpected \"x\" in a number\n");
  const Result missing = RunCli("match raschka-journey --tensor " + Path("nope.txt"));
  EXPECT_EQ(missing.status, 2);
}

TEST_F(Cli, BadInputExits2WithOneLineAndNoOutputFile) {
  const std::string ragged = Write("ragged.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "matrix", "values": [[1, 2], [3]]}, "projections": {"init": "identity"}})");
  const std::string broken = Write("broken.json", "{\n  \"format\": \n}");
  const std::string big = Write("big.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 10000000, "d_in": 4, "seed": 1},
    "projections": {"init": "identity"}})");
  const std::string out = Path("out.json"), png = Path("out.png");  // export's is a figure
  std::string many_dims = "1";
  for (int d = 2; d <= 65; ++d) many_dims += "," + std::to_string(d);
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"dump no-such-preset -o " + out, "no-such-preset: no such file, and not a preset id"},
      {"dump " + ragged + " -o " + out,
       ragged + ": input.values[1]: has 1 entries but row 0 has 2"},
      {"dump " + broken + " -o " + out, broken + ": JSON syntax error at line 3, column 1"},
      {"dump " + big + " -o " + out, "input.length: T = 10000000"},
      {"dump raschka-journey -o /nonexistent-dir/out.json",
       "/nonexistent-dir/out.json: cannot write (No such file or directory)"},
      {"dump raschka-journey", "--output is required"},
      {"variance --dims 5,x", "--dims"},
      {"variance --dims 0", "--dims 0 is outside 1..65536"},
      {"variance --dims 70000", "--dims 70000 is outside 1..65536"},
      {"variance --dims 0x10", "--dims \"0x10\" is not an integer"},
      {"variance --dims " + many_dims, "--dims: 65 dimensions, more than the 64 allowed"},
      {"variance --trials 1", "--trials 1 is outside 2..10000000"},
      {"variance --trials 10000000 --dims 64,64,64", "is more than the limit of 2e8 numbers"},
      {"variance --seed 18446744073709551616",
       "--seed 18446744073709551616 is outside 0..18446744073709551615"},
      {"variance --seed -1", "--seed -1 is outside 0..18446744073709551615"},
      {"export raschka-journey --stage weights --head 99999999999999999999 -o " + png,
       "--head 99999999999999999999 is outside 0..9223372036854775807"},
      {"export raschka-journey --stage weights --scale 4294967297 -o " + png,
       "--scale 4294967297 is outside 1..8"},
      {"frobnicate", "frobnicate"},
      {"export raschka-journey --stage attention -o " + png,
       "--stage \"attention\" is not a stage (X, Q, K, V, Q_rot, K_rot, scores, mask, logits, "
       "weights, "
       "sink, weights_dropped, context, pipeline or tokens)"},
      {"export raschka-journey --stage weights --head 2 -o " + png,
       "head 2 is out of range: the scenario has 1 head (0)"},
      {"export karpathy-head --stage weights --batch 4 -o " + png,
       "batch 4 is out of range: the scenario has a batch of 4 (0..3)"},
      {"export raschka-journey --stage weights_dropped -o " + png,
       "weights_dropped needs dropout p > 0"},
      {"export raschka-journey --stage weights --colormap jet -o " + png,
       "--colormap: unknown colormap \"jet\""},
      {"export raschka-journey --stage weights --scale 0 -o " + png, "--scale 0 is outside 1..8"},
      {"export raschka-journey --stage weights -o /nonexistent-dir/w.png",
       "/nonexistent-dir/w.png: cannot write (No such file or directory)"},
      {"export raschka-journey -o " + png, "--stage is required (or --all)"},
      {"export raschka-journey --stage weights --range linear -o " + png,
       "--range \"linear\" is not one of auto, fixed, data, per-row, log"},
  };
  for (const Case& c : cases) {
    const Result r = RunCli(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_EQ(r.err.rfind("attention-lab: error: ", 0), 0u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.args;
    EXPECT_FALSE(fs::exists(png)) << c.args;
  }
  int files = 0;  // no temporary left behind either
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 3);
}

TEST_F(Cli, ExportRefusesAFigureTooLargeToEncodeAndWritesNothing) {
  // T = 5000 at scale 8 overflowed stb's buffer (SIGSEGV); T = 4096 wrote an empty PNG, exit 0.
  const std::string f = Write("big.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 5000, "d_in": 64, "seed": 0},
    "projections": {"init": "identity"}, "mask": {"kind": "causal"}})");
  for (const std::string what : {"--stage weights", "--all"}) {
    const Result r = RunCli("export " + f + " " + what + " --scale 8 -o " + Path("w.png"));
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err,
              "attention-lab: error: the " + std::string(what == "--all" ? "scores" : "weights") +
                  " figure would be 40000 x 40000 pixels, more than the PNG limit of 134217728 "
                  "pixels (about 11585 x 11585): use a smaller scale, or export CSV or NPY\n");
    EXPECT_FALSE(fs::exists(Path("w.png")));
  }
}

TEST_F(Cli, CommandsRefuseWhatWouldPassTheMemoryLimitBeforeAllocating) {
  // T = 11000, d 1: the stages fit (1.8 GiB); a figure of them (121 M pixels, 32 bytes each),
  // the show of a causal run (a copy of the scores for scaled.var()) and the gradients of a
  // dump do not. The refusal comes before the run: no output file, exit 2, one line.
  const std::string plain = Write("t.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 11000, "d_in": 1, "seed": 0},
    "projections": {"init": "identity"}})");
  const std::string causal = Write("c.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 11000, "d_in": 1, "seed": 0},
    "projections": {"init": "identity"}, "mask": {"kind": "causal"}})");
  Result r = RunCli("export " + plain + " --stage weights -o " + Path("w.png"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "attention-lab: error: the PNG export needs about 5.89 GiB (the stages 1.8 GiB "
            "+ 4.09 GiB of its own), more than the 2 GiB limit\n");
  EXPECT_FALSE(fs::exists(Path("w.png")));
  r = RunCli("export " + plain + " --stage scores,weights -o " + Path("w.svg"));  // two panels
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("the SVG export needs about 9.98 GiB"), std::string::npos) << r.err;
  r = RunCli("show " + causal);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "attention-lab: error: show needs about 2.25 GiB (the stages 1.8 GiB + "
            "0.451 GiB of its own), more than the 2 GiB limit\n");
  EXPECT_EQ(r.out, "");
  r = RunCli("dump " + plain + " --loss-row 3 --loss-key 1 -o " + Path("d.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("dump with gradients needs about 4.51 GiB"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("d.json")));
  // Training: a batch of 256 sequences of 128 tokens, 8192 wide, would hold about 4.3 GiB.
  const std::string wide = Write("wide.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 128, "d_in": 8192, "seed": 1},
    "projections": {"init": "linear", "d_out": 1024, "seed": 1}})");
  r = RunCli("train " + wide + " --steps 2 --batch 256 -o " + Path("r.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("training needs about 4."), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("r.json")));
}

TEST_F(Cli, WriteErrorsOnStandardOutputExit2) {
  if (!fs::is_character_file("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const char* args :
       {"dump raschka-journey -o -", "presets", "variance --dims 5", "code raschka-journey",
        "show raschka-journey", "export raschka-journey --all -o " /* paths listed on stdout */}) {
    std::string cmd = args;
    if (cmd.back() == ' ') cmd += Path("all");
    const Result r = RunCli(cmd + " >/dev/full");
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err,
              "attention-lab: error: standard output: cannot write (No space left on device)\n")
        << args;
  }
  const Result file = RunCli("dump raschka-journey -o /dev/full");
  EXPECT_EQ(file.status, 2);
  EXPECT_EQ(file.err, "attention-lab: error: /dev/full: cannot write (No space left on device)\n");
  const bool still_device = fs::is_character_file("/dev/full");
  if (!still_device && geteuid() == 0) {  // put it back for everyone else
    fs::remove("/dev/full");
    mknod("/dev/full", S_IFCHR | 0666, makedev(1, 7));
    chmod("/dev/full", 0666);
  }
  EXPECT_TRUE(still_device);
}

TEST_F(Cli, DevicesAndFifosAsOutputAreWrittenNotReplaced) {
  ASSERT_EQ(mkfifo(Path("pipe").c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = ReadPipe(Path("pipe")); });
  const Result r = RunCli("dump raschka-journey -o " + Path("pipe"));
  reader.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_fifo(Path("pipe")));
  EXPECT_EQ(nlohmann::json::parse(got)["tokens"][1], "journey");
  if (geteuid() != 0) return;  // device nodes need root
  ASSERT_EQ(mknod(Path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  EXPECT_EQ(RunCli("dump raschka-journey -o " + Path("null")).status, 0);
  EXPECT_TRUE(fs::is_character_file(Path("null")));
  EXPECT_EQ(RunCli("dump raschka-journey -o /dev/null").status, 0);
  const bool still_device = fs::is_character_file("/dev/null");
  if (!still_device) {  // put it back for everyone else
    fs::remove("/dev/null");
    mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3));
    chmod("/dev/null", 0666);
  }
  EXPECT_TRUE(still_device);
}

TEST_F(Cli, ExportAllWritesEveryFileOrNone) {
  fs::create_directories(dir_ / "all" / "weights.png");  // one target cannot be written
  const Result r = RunCli("export raschka-journey --all -o " + Path("all"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("weights.png: cannot write (a folder, not a regular file)"),
            std::string::npos)
      << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_ / "all")) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"weights.png"});
}

TEST_F(Cli, OutputThatIsTheInputScenarioIsRefused) {
  const std::string f = Write("s.json", R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 3, "d_in": 2, "seed": 0},
    "projections": {"init": "identity"}})");
  const std::string before = ReadFile(f);
  fs::create_symlink("s.json", dir_ / "link.json");
  for (const std::string& args :
       {"dump " + f + " -o " + f, "code " + f + " -o " + Path("link.json"),
        "export " + f + " --stage weights --format csv -o " + f}) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find("would overwrite its own input"), std::string::npos) << args << r.err;
    EXPECT_EQ(ReadFile(f), before) << args;
  }
}

TEST_F(Cli, LongFileNamesFit) {
  const std::string name = std::string(250, 'n') + ".json";  // 255 bytes
  const Result r = RunCli("dump raschka-journey -o " + Path(name));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(Path(name)))["tokens"][1], "journey");
}

TEST_F(Cli, VersionIsTheProjectVersion) {
  unsetenv("ATTNLAB_CPU_CAPABILITY");
  const Result r = RunCli("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), "attention-lab " ATTNLAB_VERSION "\n");
  EXPECT_EQ(std::string(ATTNLAB_VERSION), "0.1.0");
  // The second line names the kernels' level: the best this CPU runs, unless forced lower.
  const std::string best = Name(BestCpuLevel());
  EXPECT_NE(r.out.find("\nkernels: " + best + " (the best this CPU runs: " + best + ";"),
            std::string::npos)
      << r.out;
  ASSERT_EQ(setenv("ATTNLAB_CPU_CAPABILITY", "default", 1), 0);
  const Result forced = RunCli("--version");
  unsetenv("ATTNLAB_CPU_CAPABILITY");
  EXPECT_NE(forced.out.find("\nkernels: default (the best this CPU runs: " + best + ";"),
            std::string::npos)
      << forced.out;
}

/// Waits until process `pid` has used `seconds` of CPU time (user + system, all its threads, as
/// /proc/PID/stat counts them); false if it ended first or ten minutes passed (hung).
static bool WaitForCpuSeconds(pid_t pid, double seconds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (std::chrono::steady_clock::now() < give_up) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');  // the command name may hold spaces
    if (close == std::string::npos) return false;
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    std::vector<std::string> f;
    while (fields >> field) f.push_back(field);
    // After the name: state is field 3, utime 14 and stime 15 (proc(5)), so indexes 11, 12.
    if (f.size() < 13 || f[0] == "Z") return false;
    const double ticks = std::stod(f[11]) + std::stod(f[12]);
    if (ticks / static_cast<double>(sysconf(_SC_CLK_TCK)) >= seconds) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Ctrl+C (SIGINT) or SIGTERM during a long `train` stops it after the step under way: exit
// 128 + the signal, one line saying how far it got, no output file and no temporary beside it.
TEST_F(Cli, TrainStopsOnCtrlCAndWritesNothing) {
  for (const int signal : {SIGINT, SIGTERM}) {
    const std::string out = Path("run.json"), err = Path("err.txt");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (!std::freopen(err.c_str(), "w", stderr)) _exit(99);
      execl(ATTNLAB_CLI, ATTNLAB_CLI, "train", "karpathy-head", "--task", "associative-recall",
            "--steps", "100000", "--d-k", "256", "-o", out.c_str(), static_cast<char*>(nullptr));
      _exit(98);
    }
    // 100000 steps take minutes; the signal comes once training has surely started: the
    // process has used 3 s of CPU (loading and checking the scenario take
    // milliseconds; under AddressSanitizer the start alone can take over half a second). CPU time,
    // not wall-clock time, so a loaded machine changes nothing.
    ASSERT_TRUE(WaitForCpuSeconds(pid, 3.0)) << "train never started";
    ASSERT_EQ(kill(pid, signal), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping: signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
    const std::string text = ReadFile(err);
    EXPECT_NE(
        text.find(signal == SIGINT ? "stopped by Ctrl+C after " : "stopped by SIGTERM after "),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("of 100000 steps; nothing written"), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    fs::remove(err);
    EXPECT_TRUE(fs::is_empty(dir_)) << "left behind: " << fs::directory_iterator(dir_)->path();
  }
}

// `circuits`: a line per evaluation on stdout, -o writes the JSON with the issue's keys (one
// entry per printed line), and the lines are the core's (CircuitLine) for the same run.
TEST_F(Cli, CircuitsPrintsLinesAndWritesJson) {
  const std::string out = Path("run.json");
  const Result r = RunCli("circuits --steps 200 --task planted --seed 3 -o " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  CircuitOptions o;
  o.steps = 200;
  o.task = CircuitTask::kPlanted;
  o.seed = 3;
  const CircuitRun run = TrainCircuits(o);
  std::string want;
  for (const CircuitEval& e : run.evals) want += CircuitLine(e) + "\n";
  EXPECT_EQ(r.out, want);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(out));
  EXPECT_EQ(j["steps"], nlohmann::json({0, 100, 200}));
  for (const char* key : {"loss_first", "loss_second", "prev_token", "prefix_match", "copying"})
    ASSERT_EQ(j[key].size(), 3u) << key;
  EXPECT_EQ(j["prev_token"][2].size(), 2u);  // one per layer-0 head
  EXPECT_DOUBLE_EQ(j["loss_second"][2].get<double>(), run.evals[2].loss_second);
  EXPECT_GE(j["seconds"].get<double>(), 0.0);
}

TEST_F(Cli, CircuitsRejectsBadOptionsAndPrintsCode) {
  for (const std::string bad :
       {"--heads 3", "--task period", "--steps 0", "--d-model 2", "-o run.csv"}) {
    const Result r = RunCli("circuits " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("error:"), std::string::npos) << bad << ": " << r.err;
  }
  const Result code = RunCli("circuits --code --seed 4 --heads 4");
  ASSERT_EQ(code.status, 0) << code.err;
  CircuitOptions o;
  o.seed = 4;
  o.heads = 4;
  EXPECT_EQ(code.out, GenerateCircuitsCode(o));
}

// Ctrl+C during `circuits` stops it as `train` stops: 130, one line, nothing written.
TEST_F(Cli, CircuitsStopsOnCtrlCAndWritesNothing) {
  const std::string out = Path("run.json"), err = Path("err.txt");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!std::freopen(err.c_str(), "w", stderr)) _exit(99);
    if (!std::freopen("/dev/null", "w", stdout)) _exit(99);
    execl(ATTNLAB_CLI, ATTNLAB_CLI, "circuits", "--steps", "100000", "-o", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(98);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // 100000 steps take minutes
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping: signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const std::string text = ReadFile(err);
  EXPECT_NE(text.find("stopped by Ctrl+C after "), std::string::npos) << text;
  EXPECT_NE(text.find("of 100000 steps; nothing written"), std::string::npos) << text;
  fs::remove(err);
  EXPECT_TRUE(fs::is_empty(dir_)) << "left behind: " << fs::directory_iterator(dir_)->path();
}

// karpathy-trick's X is torch.randn(4, 8, 2) after manual_seed(1337): 64 values, so the block
// kernel draws them. The kernel is PyTorch's choice on this CPU unless ATEN_CPU_CAPABILITY=default
// asks for the generic one, as it does in PyTorch.
std::vector<float> DumpedX(const Result& r) {
  std::vector<float> x;
  const nlohmann::json dump = nlohmann::json::parse(r.out);
  for (const auto& batch : dump["X"])
    for (const auto& row : batch)
      for (const auto& v : row) x.push_back(v.get<float>());
  return x;
}

TEST_F(Cli, NormalKernelIsChosenAtRunTimeAsPyTorchChoosesIt) {
#if defined(__x86_64__) || defined(__i386__)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx2 = false;  // PyTorch's AVX2 kernels exist on x86 only
#endif
  EXPECT_EQ(DetectNormalKernel(), avx2 ? NormalKernel::kAvx2 : NormalKernel::kScalar);
  const std::vector<float> chosen = TorchGenerator(1337).Normal(64);
  const std::vector<float> generic = TorchGenerator(1337, NormalKernel::kScalar).Normal(64);
  const std::vector<float> vectorised = TorchGenerator(1337, NormalKernel::kAvx2).Normal(64);
  EXPECT_NE(generic, vectorised);  // the two kernels differ in the last bits
  EXPECT_EQ(chosen, avx2 ? vectorised : generic);
  EXPECT_EQ(DumpedX(RunCli("dump karpathy-trick -o -")), chosen);
  ASSERT_EQ(setenv("ATEN_CPU_CAPABILITY", "default", 1), 0);
  const Result forced = RunCli("dump karpathy-trick -o -");
  unsetenv("ATEN_CPU_CAPABILITY");
  EXPECT_EQ(DumpedX(forced), generic);
}

// The command line needs no display: the subcommands never touch GLFW or OpenGL.
TEST_F(Cli, SubcommandsRunWithoutADisplay) {
  ASSERT_EQ(unsetenv("DISPLAY"), 0);
  ASSERT_EQ(unsetenv("WAYLAND_DISPLAY"), 0);
  const Result show = RunCli("show raschka-journey --stage weights");
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("tensor([[0.1551, 0.2104, 0.2059, 0.1413, 0.1074, 0.1799],"),
            std::string::npos)
      << show.out;
  const Result dump = RunCli("dump karpathy-head -o " + Path("k.json"));
  EXPECT_EQ(dump.status, 0) << dump.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(Path("k.json")))["shape"]["T"], 8);
  const Result png = RunCli("export raschka-journey --stage weights -o " + Path("w.png"));
  EXPECT_EQ(png.status, 0) << png.err;
  EXPECT_GT(fs::file_size(Path("w.png")), 1000u);
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// Issue 31: the deep file killed show and dump with SIGSEGV, and the unclosed one took `show`
// 50 s. Both are refused at once, exit 2, naming the depth, line and column.
TEST_F(Cli, DeepOrUnclosedJsonIsRefusedAtOnce) {
  const std::string head = "{\"format\": \"attention-lab/scenario@1\", \"input\": ";
  const std::string deep =
      Write("deep.json", head + std::string(150000, '[') + std::string(150000, ']') + "}");
  const std::string unclosed = Write("unclosed.json", std::string(1000000, '['));
  for (const std::string& cmd :
       {"show " + deep, "dump " + deep + " -o " + Path("d.json"),
        "export " + deep + " --stage weights -o " + Path("w.png"), "code " + deep}) {
    const Result r = RunCli(cmd);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_EQ(r.err, "attention-lab: error: " + deep +
                         ": JSON nested deeper than 64 levels at line 1, column 112\n")
        << cmd;
  }
  EXPECT_FALSE(fs::exists(Path("d.json")));
  // Refused by the depth pass at the 65th bracket (bench BM_RefuseJson has its speed).
  const Result r = RunCli("show " + unclosed);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "attention-lab: error: " + unclosed +
                       ": JSON nested deeper than 64 levels at line 1, column 65\n");
}

TEST_F(Cli, AScenarioFileAboveTheSizeLimitIsRefusedBeforeReading) {
  const std::string big = Write("big.json", "{");
  fs::resize_file(big, kMaxScenarioFileBytes + 10);  // sparse
  const Result r = RunCli("show " + big);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "attention-lab: error: " + big +
                       ": 268435466 bytes, more than the 268435456 (256 MiB) a scenario or "
                       "figure file may have\n");
}

}  // namespace
}  // namespace attnlab

namespace attnlab {
namespace {

// Issue 31 (e): SIGTERM or SIGINT in the middle of writing a large dump used to leave its
// temporary (.attnlab-PID-XXXXXX, up to gigabytes) forever. The writer now removes it, leaves
// the old file as it was (or none), says so and exits 128 + the signal.
TEST_F(Cli, ASignalDuringAWriteLeavesTheOldFileAndNoTemporary) {
  const std::string scenario =
      Write("big.json", R"({"format": "attention-lab/scenario@1", "input": {"source": "randn",
      "length": 2048, "d_in": 64, "seed": 8}, "projections": {"init": "randn", "d_out": 64,
      "seed": 1}})");
  for (const int sig : {SIGTERM, SIGINT}) {
    const fs::path out_dir = dir_ / ("out" + std::to_string(sig));
    fs::create_directories(out_dir);
    const std::string out = (out_dir / "d.json").string();
    if (sig == SIGINT) std::ofstream(out) << "old\n";  // replacing a file: it must stay old
    const std::string err = Path("err" + std::to_string(sig) + ".txt");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (!std::freopen(err.c_str(), "w", stderr)) _exit(99);
      execl(ATTNLAB_CLI, ATTNLAB_CLI, "dump", scenario.c_str(), "-o", out.c_str(), nullptr);
      _exit(98);
    }
    // The signal comes once the temporary holds a megabyte: mid-write, whatever the machine.
    bool writing = false;
    for (int i = 0; i < 12000 && !writing; ++i) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(out_dir, ec))
        if (e.path().filename().string().rfind(".attnlab-", 0) == 0 &&
            fs::file_size(e.path(), ec) > (1u << 20))
          writing = true;
      if (!writing) usleep(5000);
    }
    ASSERT_TRUE(writing) << "the dump never started writing";
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(out_dir)) left.push_back(e.path().filename());
    if (sig == SIGINT) {
      EXPECT_EQ(left, std::vector<std::string>{"d.json"});
      EXPECT_EQ(ReadFile(out), "old\n");
    } else {
      EXPECT_TRUE(left.empty()) << left.front();
    }
    EXPECT_EQ(ReadFile(err), "attention-lab: " + out + ": not written (interrupted by " +
                                 (sig == SIGINT ? "SIGINT" : "SIGTERM") + ")\n");
  }
}

// A signal when nothing is being written ends the command at once, as it always did.
TEST_F(Cli, ASignalBeforeAnyWriteEndsTheCommandAtOnce) {
  const std::string scenario =
      Write("big.json", R"({"format": "attention-lab/scenario@1", "input": {"source": "randn",
      "length": 4096, "d_in": 64, "seed": 8}, "projections": {"init": "randn", "d_out": 64,
      "seed": 1}})");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(ATTNLAB_CLI, ATTNLAB_CLI, "dump", scenario.c_str(), "-o", Path("d.json").c_str(),
          nullptr);
    _exit(98);
  }
  usleep(100000);  // computing the stages (seconds at T = 4096): no temporary yet
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(fs::exists(Path("d.json")));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_NE(e.path().filename().string().rfind(".attnlab-", 0), 0u) << e.path();
}

// scaling.scale_at (PyTorch's SDPA scaling): a bad value is refused naming the field, exit 2;
// the loop programs and the gradients refuse "q_and_k" (they scale the scores) with exit 2.
TEST_F(Cli, ScaleAtIsCheckedAndRefusedWhereUnsupported) {
  const std::string base = R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 4, "d_in": 4, "seed": 1},
    "projections": {"init": "randn", "d_out": 4, "seed": 2}, "mask": {"kind": "causal"},
    "scaling": {"scale_at": )";
  Result r = RunCli("dump " + Write("bad.json", base + R"("qk"}})") + " -o " + Path("o.json"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("scaling.scale_at: unknown value \"qk\" (expected one of: scores, "
                       "q_and_k)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Path("o.json")));
  const std::string ok = Write("ok.json", base + R"("q_and_k"}})");
  r = RunCli("dump " + ok + " -o " + Path("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunCli("code " + ok + " --loop decode --prefill 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("scaling.scale_at: the generated loops scale the scores"), std::string::npos)
      << r.err;
  r = RunCli("code " + ok);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("f = math.sqrt(abs(scale))\nQ_s = Q * f\nK_s = K * f\n"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace attnlab
