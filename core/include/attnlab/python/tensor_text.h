// tensor_text.h: reads back the text a learner pasted from a notebook: what print(tensor) writes
// in PyTorch ("tensor([[0.1551, 0.2104], ...], grad_fn=<SoftmaxBackward0>)"), NumPy's repr
// ("array([[0.1, 0.2]], dtype=float32)") or print ("[[0.1 0.2]\n [0.3 0.4]]"), or bare nested
// brackets, of any rank, with the line breaks, padding and scientific notation those prints
// use, and nan, inf and -inf. It is a parser, never an evaluator: nothing in the text can run
// code, and its memory and nesting are bounded (kMaxPastedBytes, kMaxPastedRank), so any byte
// string is safe to give it (tests/fuzz).
//
// Each number keeps how precisely it was printed (the half unit of its last digit), so the
// numbers can be compared "to the printed digits" (match.h).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace attnlab {

/// The largest pasted text read: 16 MiB (about two million printed numbers).
inline constexpr size_t kMaxPastedBytes = 16u * 1024 * 1024;
/// The most nested brackets a pasted tensor may have (PyTorch allows 64 dimensions; a print of
/// an attention stage has at most 4).
inline constexpr int kMaxPastedRank = 32;

/// How the text was written.
enum class PastedForm {
  kTorch,  ///< tensor(...), as print(tensor) writes it
  kNumpy,  ///< array(...), NumPy's repr (a notebook cell's last expression)
  kBare,   ///< bare brackets: NumPy's print(array), or a list
};

/// A tensor read from pasted text. `values` in C (row-major) order, shape's product of them;
/// shape is empty for a scalar ("tensor(0.9302)"). half_unit[i] is half a unit in the last
/// printed digit of value i (0.00005 for "0.1551", 0.5e-5 for "1.5510e-01", 0.5 for "3."),
/// 0 for nan and infinities.
struct PastedTensor {
  PastedForm form = PastedForm::kBare;
  std::vector<int64_t> shape;
  std::vector<double> values;
  std::vector<double> half_unit;
  /// The dtype the text names, as written: "torch.float64", "float32", ..., or "" for none.
  std::string dtype;
  /// The label line before the tensor, when the text starts with one ("weights:", as the
  /// generated program prints it), without its colon; else "".
  std::string label;
};

/// Text that is not a pasted tensor: what() is one line, "line L, column C: <what is wrong>",
/// L and C counted from 1 (C in characters, not bytes).
class TensorTextError : public std::runtime_error {
 public:
  TensorTextError(int line, int column, const std::string& message);
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_, column_;
};

/// Reads `text` (see the file comment). Accepted: optional label line ("weights:"), then
/// tensor(DATA[, key=value ...]) or array(DATA[, dtype=...]) or DATA alone, with whitespace
/// anywhere between tokens. DATA is a number or nested [ ... ] lists whose items are separated
/// by commas or whitespace; every list at one depth has the same length. Numbers: [+-]digits
/// [.digits][e[+-]digits], nan, inf, -inf. Keyword values after the data (grad_fn=<...>,
/// dtype=torch.float64, requires_grad=True, device='cuda:0', size=(0, 3)) are read as text and
/// only the dtype is kept. Errors: TensorTextError naming the line and column of the culprit:
/// an unexpected character, an unclosed bracket, ragged lists, a summarised print ("..."), a
/// number out of double's range, nesting deeper than kMaxPastedRank, text longer than
/// kMaxPastedBytes, or no tensor at all.
PastedTensor ParseTensorText(std::string_view text);

}  // namespace attnlab
