// torch_print_test.cpp: TorchTensorString and PrintStage against the text real PyTorch 1.13
// prints (tests/golden/print/, written by tools/make_print_goldens.py), byte for byte.
#include "attnlab/python/torch_print.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <regex>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/scenario.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/scenarios"))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every element of nested JSON arrays, in row-major order.
void Flatten(const nlohmann::json& j, std::vector<float>& out) {
  if (j.is_array()) {
    for (const auto& x : j) Flatten(x, out);
  } else {
    out.push_back(test::JsonFloat(j));
  }
}

TEST(TorchTensorString, MatchesPyTorchOnEdgeCases) {
  const nlohmann::json cases = test::LoadGolden("print/edge_cases.json");
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    std::vector<float> values;
    for (uint32_t b : c["bits"].get<std::vector<uint32_t>>()) {
      float f;
      std::memcpy(&f, &b, sizeof f);
      values.push_back(f);
    }
    const auto shape = c["shape"].get<std::vector<int64_t>>();
    EXPECT_EQ(TorchTensorString(values, shape), c["text"].get<std::string>()) << c["name"];
  }
}

TEST(TorchTensorString, MatrixAndStackOverloads) {
  Matrix m(2, 2);
  m << 0.43f, 0.15f, 0.55f, 0.87f;
  EXPECT_EQ(TorchTensorString(m), "tensor([[0.4300, 0.1500],\n        [0.5500, 0.8700]])");
  EXPECT_EQ(TorchTensorString(MatrixStack{m, m * 2.0f}),
            "tensor([[[0.4300, 0.1500],\n         [0.5500, 0.8700]],\n\n"
            "        [[0.8600, 0.3000],\n         [1.1000, 1.7400]]])");
  EXPECT_THROW(TorchTensorString(MatrixStack{m, Matrix(3, 2)}), std::invalid_argument);
  const std::vector<float> three = {1, 2, 3};
  EXPECT_THROW(TorchTensorString(three, std::vector<int64_t>{2, 2}), std::invalid_argument);
}

class PrintGolden : public ::testing::TestWithParam<std::string> {};

// The printer on the oracle's own values: exactly PyTorch's text for every stage.
TEST_P(PrintGolden, OracleValuesPrintAsPyTorch) {
  const nlohmann::json scenario = test::LoadGolden("scenarios/" + GetParam() + ".json");
  const nlohmann::json& expected = scenario["expected"];
  const nlohmann::json golden = test::LoadGolden("print/scenarios/" + GetParam() + ".json");
  // bfloat16 / float16 goldens: torch.bfloat16 / torch.float16 tensors (the mask, and the upcast
  // softmax's weights, float32).
  const Scenario s = ParseScenario(scenario["scenario"].dump());
  ASSERT_GE(golden.size(), 12u);
  for (const auto& [name, want] : golden.items()) {
    std::vector<float> values;
    Flatten(expected[name], values);
    const auto shape = want["shape"].get<std::vector<int64_t>>();
    const bool f32 =
        name == "mask" || (s.scaling.softmax_dtype == SoftmaxDtype::kFloat32 &&
                           (name == "weights" || name == "weights_dropped" || name == "sink"));
    EXPECT_EQ(TorchTensorStringAs(f32 ? Dtype::kFloat32 : s.dtype, values, shape),
              want["text"].get<std::string>())
        << name;
  }
}

// The printed numbers of a text, and the text with each replaced by "#" (its layout).
// A zero's sign is kept apart: "-0.0000" has the layout of " 0.0000" and counts in neg_zeros.
struct Printed {
  std::string layout;
  std::vector<double> numbers;
  int neg_zeros = 0;
};
Printed SplitNumbers(const std::string& text) {
  static const std::regex number(R"(-?\d+\.\d*(e[+-]\d+)?)");
  Printed p;
  std::string rest = text;
  std::smatch m;
  while (std::regex_search(rest, m, number)) {
    const double v = std::stod(m.str());
    const bool neg_zero = v == 0 && m.str()[0] == '-';
    p.neg_zeros += neg_zero;
    p.layout +=
        m.prefix().str() + (neg_zero ? " #" : "#") + std::string(m.length() - 1 - neg_zero, ' ');
    p.numbers.push_back(v);
    rest = m.suffix().str();
  }
  p.layout += rest;
  return p;
}

// The engine's stages through PrintStage: the shapes of the generated program and PyTorch's
// exact layout (format mode, widths, wrapping). The engine's matmul sums in another order than
// PyTorch's BLAS, so a printed digit may differ where float32 rounding does (dog-attacks-cat's
// context prints 3.4022e-04, the notebook 3.4023e-04): numbers agree to one unit of the last
// printed digit. Known difference, not the printer's: with the "sum" normalization PyTorch's
// masked weights are 0 / (negative row sum) = -0. ("-0.0000"), the engine's +0.
TEST_P(PrintGolden, EngineStagesPrintAsPyTorch) {
  const Scenario s =
      ParseScenario(test::LoadGolden("scenarios/" + GetParam() + ".json")["scenario"].dump());
  const Stages st = RunScenario(s);
  const nlohmann::json golden = test::LoadGolden("print/scenarios/" + GetParam() + ".json");
  for (const std::string& name : PrintableStageNames()) {
    const std::optional<PrintedStage> p = PrintStage(st, name);
    ASSERT_TRUE(p) << name;
    if (!golden.contains(name)) {
      EXPECT_FALSE(p->present) << name;
      continue;
    }
    EXPECT_EQ(p->shape, golden[name]["shape"].get<std::vector<int64_t>>()) << name;
    const Printed got = SplitNumbers(p->text);
    const Printed want = SplitNumbers(golden[name]["text"].get<std::string>());
    EXPECT_EQ(got.layout, want.layout) << name;
    ASSERT_EQ(got.numbers.size(), want.numbers.size()) << name;
    // bfloat16 / float16: a stored value may sit one ulp of the dtype away (pipeline_test.cpp's
    // DtypeUlp), relative to itself and to the stage's largest printed number.
    const double ulp = s.dtype == Dtype::kBfloat16  ? 0x1p-8
                       : s.dtype == Dtype::kFloat16 ? 0x1p-11
                                                    : 0;
    double largest = 0;
    for (double v : want.numbers) largest = std::max(largest, std::fabs(v));
    for (size_t i = 0; i < got.numbers.size(); ++i)
      EXPECT_NEAR(got.numbers[i], want.numbers[i],
                  1.01e-4 + 1e-4 * std::fabs(want.numbers[i]) +
                      ulp * (std::fabs(want.numbers[i]) + largest))
          << name << " number " << i;
    if (s.normalization != Normalization::kSum || name != "weights") {
      EXPECT_EQ(got.neg_zeros, want.neg_zeros) << name;
    }
    if (name == "X" || name.starts_with("W_") || name == "mask") {  // drawn or given: exact
      EXPECT_EQ(p->text, golden[name]["text"].get<std::string>()) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Goldens, PrintGolden, ::testing::ValuesIn(ScenarioNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(PrintStage, UnknownNameIsNullopt) {
  const Stages st = RunScenario(
      ParseScenario(test::LoadGolden("scenarios/preset-raschka-journey.json")["scenario"].dump()));
  EXPECT_FALSE(PrintStage(st, "q"));
  EXPECT_FALSE(PrintStage(st, ""));
  EXPECT_EQ(PrintableStageNames().size(), 16u);  // sink; Q_rot and K_rot with RoPE
  const auto w = PrintStage(st, "weights");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{6, 6}));
  EXPECT_FALSE(PrintStage(st, "weights_dropped")->present);
}

}  // namespace
}  // namespace attnlab
