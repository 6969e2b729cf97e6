// ipynb_test.cpp: `attention-lab code ... -o OUT.ipynb`: the program as a Jupyter notebook
// (nbformat 4), checked as JSON, and its cells run in order by Debian's python3 (NumPy, and
// PyTorch for torch scenarios; skipped without them) give the app's attention weights.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/presets.h"
#include "attnlab/python/codegen.h"
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
    EXPECT_NE(
        Joined(cells[0]["source"]).find(std::string(id) == "numpy-masked" ? "NumPy" : "PyTorch"),
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

}  // namespace
}  // namespace attnlab
