// tensor_text_test.cpp: ParseTensorText reads what PyTorch and NumPy print (real prints: the
// goldens of tools/make_match_goldens.py and make_print_goldens.py) and refuses everything else
// with the line and column of the culprit.
#include "attnlab/python/tensor_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_util.h"

namespace attnlab {
namespace {

TEST(TensorText, ReadsPyTorchPrintWithGradFn) {
  const PastedTensor t = ParseTensorText(
      "tensor([[-0.0739,  0.0713],\n        [-0.0748,  0.0703]], grad_fn=<MmBackward0>)");
  EXPECT_EQ(t.form, PastedForm::kTorch);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  ASSERT_EQ(t.values.size(), 4u);
  EXPECT_DOUBLE_EQ(t.values[0], -0.0739);
  EXPECT_DOUBLE_EQ(t.values[3], 0.0703);
  EXPECT_DOUBLE_EQ(t.half_unit[0], 0.00005);
  EXPECT_EQ(t.dtype, "");
}

TEST(TensorText, ReadsDtypeScientificNanInfAndIntegerMode) {
  const PastedTensor t = ParseTensorText(
      "tensor([[ 1.5000e-06,        nan],\n        [       inf,       -inf]],\n"
      "       dtype=torch.float64)");
  EXPECT_EQ(t.dtype, "torch.float64");
  EXPECT_DOUBLE_EQ(t.values[0], 1.5e-6);
  EXPECT_DOUBLE_EQ(t.half_unit[0], 0.5e-10);
  EXPECT_TRUE(std::isnan(t.values[1]));
  EXPECT_EQ(t.values[2], INFINITY);
  EXPECT_EQ(t.values[3], -INFINITY);
  const PastedTensor ints = ParseTensorText("tensor([[1., 0.],\n        [1., 1.]])");
  EXPECT_DOUBLE_EQ(ints.half_unit[0], 0.5);
}

TEST(TensorText, ReadsNumpyReprStrBareScalarsAndLabels) {
  const PastedTensor r =
      ParseTensorText("array([[ 1.76405235,  0.40015721],\n       [ 0.97873798,  2.2408932 ]])");
  EXPECT_EQ(r.form, PastedForm::kNumpy);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_DOUBLE_EQ(r.half_unit[3], 0.5e-7);
  const PastedTensor s = ParseTensorText("[[ 0.  -inf]\n [ 0.   0. ]]");
  EXPECT_EQ(s.form, PastedForm::kBare);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(s.values[1], -INFINITY);
  const PastedTensor f = ParseTensorText("array([0.5, 1.5], dtype=float32)");
  EXPECT_EQ(f.dtype, "float32");
  const PastedTensor scalar = ParseTensorText("tensor(0.9302)");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_DOUBLE_EQ(scalar.values.at(0), 0.9302);
  const PastedTensor labelled = ParseTensorText("weights:\ntensor([0.25, 0.75])");
  EXPECT_EQ(labelled.label, "weights");
  EXPECT_EQ(labelled.shape, (std::vector<int64_t>{2}));
  const PastedTensor empty = ParseTensorText("tensor([], size=(0, 3))");
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0}));
}

// Every stage print of the book's programs (PyTorch 1.13) reads back to its shape, and every
// NumPy str() golden (NumPy 1.24) too.
TEST(TensorText, ReadsEveryGoldenPrint) {
  for (const auto& c : test::LoadGolden("match/cases.json")) {
    const PastedTensor t = ParseTensorText(c["text"].get<std::string>());
    EXPECT_EQ(t.form, PastedForm::kTorch) << c["name"];
    EXPECT_FALSE(t.values.empty()) << c["name"];
  }
  for (const auto& c : test::LoadGolden("print/numpy_str_cases.json")) {
    const std::string text = c["str"];
    if (text.find("...") != std::string::npos) continue;  // summarised: refused (below)
    const PastedTensor t = ParseTensorText(text);
    EXPECT_EQ(t.shape, c["shape"].get<std::vector<int64_t>>()) << c["name"];
  }
}

// Malformed text: one message naming the line and column (counted from 1, in characters).
TEST(TensorText, MalformedTextNamesLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"tensor([[0.1, 0.2],\n        [0.3, 0.4]]",
       "line 2, column 20: expected \",\" or \")\", found the end of the text"},
      {"tensor([[0.1, 0.2],\n        [0.3]])",
       "line 2, column 9: this list has 1 items where the first list at its depth has 2 "
       "(ragged lists)"},
      {"tensor([[0.1, 0.2],\n        [0.3, abc]])",
       "line 2, column 15: expected a number, found \"a\""},
      {"tensor([0.1, 0.2", "line 1, column 8: this \"[\" is never closed"},
      {"[[1, 2], [3, 4]] extra", "line 1, column 18: unexpected \"e\" after the tensor"},
      {"tensor([[0.1, ..., 0.2]])",
       "line 1, column 15: the print is summarised (\"...\"): print the tensor whole, e.g. after "
       "torch.set_printoptions(threshold=100000) or np.set_printoptions(threshold=100000)"},
      {"", "line 1, column 1: no tensor: expected \"tensor(\", \"array(\", \"[\" or a number"},
      {"[1e999]", "line 1, column 2: the number \"1e999\" is out of range"},
      {"[1, [2]]", "line 1, column 5: a list inside a list of numbers"},
      {"[[1], [[2]]]", "line 1, column 7: a list of lists where the lists beside it hold numbers"},
      {"tensor([1.5], grad_fn=<Mm",
       "line 1, column 23: the value of \"grad_fn\" opens with "
       "\"<\" and is never closed"},
      {"__import__('os').system('x')", "line 1, column 1: expected a number, found \"_\""},
      {"[0.5 \xc3\xa9]", "line 1, column 6: expected a number, found byte 0xC3"},
      {"[1.2.3]", "line 1, column 5: expected \",\" or \"]\", found \".\""},
  };
  for (const auto& [text, message] : cases) {
    try {
      ParseTensorText(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const TensorTextError& e) {
      EXPECT_EQ(std::string(e.what()), message) << text;
    }
  }
}

// Bounded: nesting deeper than kMaxPastedRank is refused at its bracket, not by the stack.
TEST(TensorText, DeepNestingIsRefused) {
  const std::string deep = std::string(100000, '[') + "1" + std::string(100000, ']');
  try {
    ParseTensorText(deep);
    FAIL();
  } catch (const TensorTextError& e) {
    EXPECT_EQ(e.column(), kMaxPastedRank + 1);
  }
  const std::string ok = std::string(kMaxPastedRank, '[') + "1" + std::string(kMaxPastedRank, ']');
  EXPECT_EQ(ParseTensorText(ok).shape.size(), static_cast<size_t>(kMaxPastedRank));
}

}  // namespace
}  // namespace attnlab
