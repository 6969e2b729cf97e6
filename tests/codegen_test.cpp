// codegen_test.cpp: the generated PyTorch programs, compared with committed goldens of their
// text (tests/golden/code/, one per golden scenario), so the suite checks them without torch.
// That they really compute the app's stages is checked by the ctest codegen_runs_in_pytorch
// (tools/check_codegen.py) where PyTorch is installed. ATTNLAB_UPDATE_GOLDENS=1 rewrites them.
#include "attnlab/codegen.h"

#include <cstdlib>
#include <filesystem>

#include "attnlab/file_io.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/scenarios"))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GeneratedCode : public ::testing::TestWithParam<std::string> {};

TEST_P(GeneratedCode, MatchesTheCommittedProgram) {
  const Scenario s =
      ParseScenario(test::LoadGolden("scenarios/" + GetParam() + ".json")["scenario"].dump());
  const std::string code = GeneratePyTorchCode(s);
  const std::string path = std::string(ATTNLAB_GOLDEN_DIR) + "/code/" + GetParam() + ".py";
  if (std::getenv("ATTNLAB_UPDATE_GOLDENS")) {
    fs::create_directories(fs::path(path).parent_path());
    WriteFileAtomic(path, code);
  }
  EXPECT_EQ(code, ReadFile(path));
}

INSTANTIATE_TEST_SUITE_P(Goldens, GeneratedCode, ::testing::ValuesIn(Names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(GeneratePyTorchCode, UsesTheNotebooksIdioms) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 8;
  s.input.d_in = 32;
  s.input.batch = 4;
  s.input.seed = 1337;
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = 16;
  s.projections.order = {Projection::kKey, Projection::kQuery, Projection::kValue};
  s.mask.kind = MaskKind::kCausal;
  s.dropout = {0.5, 123};
  const std::string code = GeneratePyTorchCode(s);
  for (const char* want :
       {"torch.manual_seed(1337)\nX = torch.randn(4, 8, 32)",
        "key = torch.nn.Linear(d_in, d_out, bias=False)\nquery = torch.nn.Linear",
        "mask = torch.tril(torch.ones(8, 8))",
        "logits = logits.masked_fill(mask == 0, float('-inf'))", "logits = scores / d_k**0.5",
        "weights = torch.softmax(logits, dim=-1)",
        "torch.manual_seed(123)\ndropout = torch.nn.Dropout(0.5)", "context = weights_dropped @ V"})
    EXPECT_NE(code.find(want), std::string::npos) << want << "\n---\n" << code;
}

}  // namespace
}  // namespace attnlab
