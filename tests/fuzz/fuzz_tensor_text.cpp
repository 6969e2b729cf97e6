// fuzz_tensor_text.cpp: any bytes as a learner's pasted print for ParseTensorText
// (tensor_text.h). Invariants: it returns a tensor whose shape holds exactly its values, one
// half unit per value, a rank of at most kMaxPastedRank; or it throws TensorTextError naming a
// line and a column from 1. Nothing else escapes, and nothing in the text is run.
#include <string>

#include "attnlab/python/tensor_text.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab;
  if (size > 65536) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const PastedTensor t = ParseTensorText(text);
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0) fuzz::Violated("a negative dimension");
      n *= d;
    }
    if (static_cast<size_t>(n) != t.values.size()) fuzz::Violated("shape and values disagree");
    if (t.half_unit.size() != t.values.size()) fuzz::Violated("one half unit per value");
    if (t.shape.size() > static_cast<size_t>(kMaxPastedRank)) fuzz::Violated("rank over limit");
  } catch (const TensorTextError& e) {
    if (e.line() < 1 || e.column() < 1) fuzz::Violated("a line or column below 1");
  }
  return 0;
}
