// torch_print.h: float32 tensors as text, exactly as `print(tensor)` writes them in PyTorch 1.13
// with its default print options (precision 4, threshold 1000, edgeitems 3, linewidth 80, sci_mode
// chosen automatically). Matches torch/_tensor_str.py of PyTorch 1.13 (its _Formatter,
// _vector_str, _tensor_str_with_formatter and get_summarized_data) for a plain CPU float32
// tensor without grad: same integer mode ("1., 0."), same scientific-notation rule, same padding,
// same wrapping, same "..." summarisation, nan/inf and -0.
//
// Also the `show` command's stages: each stage of a run as a tensor of the shape the generated
// notebook program (codegen.h) gives it, printed as above.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/python/numpy_print.h"

namespace attnlab {

/// str(t) for a float32 CPU tensor t of `shape` (any number of dimensions, 0 included for a
/// scalar) holding `values` in row-major (C) order, as PyTorch 1.13 prints it with default print
/// options: "tensor([[0.4300, 0.1500],\n        [0.5500, 0.8700]])". A tensor with no element
/// prints "tensor([])", plus ", size=(0, 3)" when it is not 1-D, as torch does. Errors:
/// std::invalid_argument when the product of `shape` is not values.size() or a dimension is < 0.
std::string TorchTensorString(std::span<const float> values, std::span<const int64_t> shape);

/// str(t) for a torch.float64 tensor: the same digits from the double values, then
/// ", dtype=torch.float64" as _str_intern adds it (on a line of its own, indented under
/// "tensor(", when the last line would pass 80 characters). Errors as above.
std::string TorchTensorStringF64(std::span<const double> values, std::span<const int64_t> shape);

/// str(t) for a torch.bfloat16 or torch.float16 tensor (`dtype`) of `values`, each a value of
/// that dtype widened to float: _tensor_str formats it from its float32 widening (the digits of
/// TorchTensorString), then ", dtype=torch.bfloat16" or ", dtype=torch.float16" as for
/// float64. Another dtype: TorchTensorString. Errors as above.
std::string TorchTensorStringAs(Dtype dtype, std::span<const float> values,
                                std::span<const int64_t> shape);

/// str(t) of a 2-D tensor (rows x cols).
std::string TorchTensorString(const Matrix& m);

/// str(t) of a 3-D tensor (stack.size() x rows x cols); every matrix must have the shape of the
/// first (else std::invalid_argument). An empty stack prints as shape (0,).
std::string TorchTensorString(const MatrixStack& stack);

/// One stage of a run laid out as the generated program (codegen.h) holds it.
struct PrintedStage {
  std::string name;            ///< "X", "W_query", ..., "context"
  std::string what;            ///< what it is, in a few words ("attention weights")
  std::vector<int64_t> shape;  ///< its tensor shape, e.g. {T, d_in} or {B, H, T, T}
  std::string text;            ///< TorchTensorString of it (NumPy: its repr); empty when absent
  /// What print(stage) writes in the program, without print's newline: `text` for torch (str
  /// of a tensor is its repr), NumPy's str (NumpyArrayStr) for numpy scenarios. What `show
  /// --stage S` prints and the window's "Copy as printed" copies.
  std::string printed;
  bool present = true;  ///< false for weights_dropped without dropout (p = 0), sink without one
  /// Its element i in C order of `shape`, as printed (the mask as the program's 1./0. or
  /// 0/-inf matrix); reads the Stages it was made from, which must outlive it. Empty when absent.
  ElementAt at;
};

/// The stage names PrintStage accepts, in pipeline order: X, W_query, W_key, W_value, Q, K, V,
/// scores, logits, mask, weights, weights_dropped, sink (scaling.sink: B x H x T x 1), context.
const std::vector<std::string>& PrintableStageNames();

/// The stage called `name` (see PrintableStageNames) of a run, or nullopt for an unknown name.
/// Shapes follow the generated program: with B = 1 and one head the batch and head dimensions
/// are dropped (X is T x d_in, scores T x T); else X, Q, K, V, context are B x T x d and the
/// per-head stages B x T x T (one head) or B x H x T x T. W_* are d_in x d_out (x @ W), the mask
/// T x T of 1. (may attend) and 0. as the program's float torch.tril(torch.ones(T, T)).
/// Float64 runs print their double values: "tensor(..., dtype=torch.float64)" for torch,
/// NumPy's repr "array(...)" (numpy_print.h) for numpy scenarios. A numpy scenario in float32
/// prints NumPy's repr of float32 arrays, "array(..., dtype=float32)". The mask of a numpy
/// scenario is the NumPy program's 0 / -inf matrix.
std::optional<PrintedStage> PrintStage(const Stages& stages, std::string_view name);

/// The variances the notebooks print (`k.var()`, `wei.var()`), over the whole tensors of a run
/// (stats.h WholeVariances, the dump's "stats"), one line each as the notebook shows them:
/// "q.var(): tensor(0.9302)" for torch (unbiased; ", dtype=torch.float64" in float64), and
/// "q.var(): 0.9583443565030865" for numpy scenarios (ddof = 0, a float64 as NumPy's var gives
/// it). Lines for q, k, scores, logits (nan where a logit is -inf) and weights, and with a mask
/// "scaled.var() (before the mask)": scores * multiplier / sqrt(d_k) unmasked, the NumPy
/// notebook's scaled.var(). With more than one batch entry or head, the same again for batch 0,
/// head 0 only (a notebook's `wei` of one sequence, (T, T)). `scenario` is the one `stages`
/// were run from.
std::string PrintStats(const Stages& stages, const Scenario& scenario);

}  // namespace attnlab
