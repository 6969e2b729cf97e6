// ipynb_test.cpp: `attention-lab code ... -o OUT.ipynb`: the program as a Jupyter notebook
// (nbformat 4), checked as JSON, and its cells run in order by Debian's python3 (NumPy, and
// PyTorch for torch scenarios; skipped without them) give the app's attention weights.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attnlab/codegen.h"
#include "attnlab/pipeline.h"
#include "attnlab/presets.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Joined(const json& source) {
  std::string out;
  for (const json& line : source) out += line.get<std::string>();
  return out;
}

TEST(ProgramAsNotebook, IsNbformat4WithOneMarkdownLineThenTheProgramCellByCell) {
  for (const char* id : {"numpy-masked", "karpathy-head"}) {
    const std::string program = GeneratePyTorchCode(LoadPreset(id));
    const json nb = json::parse(ProgramAsNotebook(program));
    EXPECT_EQ(nb["nbformat"], 4);
    EXPECT_EQ(nb["nbformat_minor"], 4);
    EXPECT_EQ(nb["metadata"]["kernelspec"]["language"], "python");
    const json& cells = nb["cells"];
    ASSERT_GE(cells.size(), 4u) << id;
    EXPECT_EQ(cells[0]["cell_type"], "markdown");
    ASSERT_EQ(cells[0]["source"].size(), 1u);
    EXPECT_EQ(Joined(cells[0]["source"]).find('\n'), std::string::npos);
    EXPECT_NE(Joined(cells[0]["source"]).find(std::string(id) == "numpy-masked" ? "NumPy" : "PyTorch"),
              std::string::npos);
    // The code cells, joined at blank lines, are the program without its blank lines.
    std::string joined, expected;
    for (size_t i = 1; i < cells.size(); ++i) {
      EXPECT_EQ(cells[i]["cell_type"], "code");
      EXPECT_TRUE(cells[i]["outputs"].empty());
      EXPECT_TRUE(cells[i]["execution_count"].is_null());
      const std::string src = Joined(cells[i]["source"]);
      EXPECT_FALSE(src.empty());
      EXPECT_NE(src.back(), '\n');
      joined += src + "\n";
    }
    for (size_t at = 0; at < program.size();) {
      const size_t end = program.find('\n', at);
      const std::string line = program.substr(at, end - at);
      if (!line.empty()) expected += line + "\n";
      at = end == std::string::npos ? program.size() : end + 1;
    }
    EXPECT_EQ(joined, expected) << id;
  }
}

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

}  // namespace
}  // namespace attnlab
