// torch_print.cpp: see torch_print.h. Follows the steps of torch/_tensor_str.py (PyTorch 1.13):
// pick the elements a summarised print shows, let them choose the number format (integer,
// fixed or scientific, and one common width), then write the nested brackets.
//
// [SECTION] The number format and the printer (torch/_tensor_str.py)
// [SECTION] TorchTensorString
// [SECTION] The stages: names, styles, PrintStage
// [SECTION] The notebooks' variance prints: PrintStats
#include "attnlab/python/torch_print.h"

#include <cmath>
#include <iterator>
#include <stdexcept>

#include "attnlab/base/text.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/stats.h"
#include "attnlab/python/numpy_print.h"

namespace attnlab {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The number format and the printer (torch/_tensor_str.py)
// ---------------------------------------------------------------------------------------------

// PyTorch's default print options (torch._tensor_str.PRINT_OPTS).
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 80;

// How every element of one tensor is written (torch._tensor_str._Formatter).
struct Formatter {
  bool int_mode = true;
  bool sci_mode = false;
  size_t width = 1;

  std::string Format(double v) const {
    std::string s;
    if (!std::isfinite(v))
      s = FormatNumber(v, NumberStyle::kFixed);  // "nan", "inf", "-inf" in every mode
    else if (sci_mode)
      s = FormatNumber(v, NumberStyle::kExponent, kPrecision);
    else if (int_mode)
      s = FormatNumber(v, NumberStyle::kFixedAll, 0) + ".";
    else
      s = FormatNumber(v, NumberStyle::kFixedAll, kPrecision);
    return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
  }
};

// The format chosen by the nonzero finite elements among `shown`: integer mode when all are
// whole numbers; scientific when max/min of their magnitudes exceeds 1000 or max exceeds 1e8
// (or, not in integer mode, min is below 1e-4); the width is the longest element's text (plus
// one for the integer mode's "." ).
Formatter ChooseFormat(const std::vector<double>& shown) {
  Formatter f;
  std::vector<double> vals;
  for (double v : shown)
    if (std::isfinite(v) && v != 0.0) vals.push_back(v);
  if (vals.empty()) return f;
  double mn = INFINITY, mx = 0.0;
  for (double v : vals) {
    mn = std::min(mn, std::fabs(v));
    mx = std::max(mx, std::fabs(v));
    if (v != std::ceil(v)) f.int_mode = false;
  }
  f.sci_mode = mx / mn > 1000.0 || mx > 1.0e8 || (!f.int_mode && mn < 1.0e-4);
  for (double v : vals) {
    size_t len;
    if (f.sci_mode)
      len = FormatNumber(v, NumberStyle::kExponent, kPrecision).size();
    else if (f.int_mode)
      len = FormatNumber(v, NumberStyle::kFixedAll, 0).size() + 1;
    else
      len = FormatNumber(v, NumberStyle::kFixedAll, kPrecision).size();
    f.width = std::max(f.width, len);
  }
  return f;
}

// One tensor being printed: its values, shape, strides and whether it is summarised.
class Printer {
 public:
  Printer(const ElementAt& at, int64_t n, std::span<const int64_t> shape)
      : at_(at), shape_(shape.begin(), shape.end()), strides_(shape.size(), 1) {
    for (size_t d = shape_.size(); d-- > 1;) strides_[d - 1] = strides_[d] * shape_[d];
    summarize_ = n > kThreshold;
    std::vector<double> shown;
    CollectShown(0, 0, shown);
    fmt_ = ChooseFormat(shown);
  }

  std::string Text() const {
    const int indent = 7;  // strlen("tensor(")
    return "tensor(" + Str(0, 0, indent) + ")";
  }

 private:
  bool Elided(size_t d) const { return summarize_ && shape_[d] > 2 * kEdgeItems; }

  // The indices of dimension d that are printed: all, or the first and last kEdgeItems.
  std::vector<int64_t> Kept(size_t d) const {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < shape_[d]; ++i)
      if (!Elided(d) || i < kEdgeItems || i >= shape_[d] - kEdgeItems) idx.push_back(i);
    return idx;
  }

  // The elements a summarised print shows (get_summarized_data), which alone pick the format.
  void CollectShown(size_t d, int64_t base, std::vector<double>& out) const {
    if (d == shape_.size()) {
      out.push_back(at_(base));
      return;
    }
    for (int64_t i : Kept(d)) CollectShown(d + 1, base + i * strides_[d], out);
  }

  // The sub-tensor of dimensions d.. starting at `base`, its brackets `indent` columns in.
  std::string Str(size_t d, int64_t base, int indent) const {
    if (d == shape_.size()) return fmt_.Format(at_(base));
    if (d + 1 == shape_.size()) return VectorStr(d, base, indent);
    std::vector<std::string> slices;
    for (int64_t i : Kept(d)) {
      if (Elided(d) && i == shape_[d] - kEdgeItems) slices.push_back("...");
      slices.push_back(Str(d + 1, base + i * strides_[d], indent + 1));
    }
    const std::string sep =
        "," + std::string(shape_.size() - d - 1, '\n') + std::string(indent + 1, ' ');
    std::string out = "[";
    for (size_t i = 0; i < slices.size(); ++i) out += (i ? sep : "") + slices[i];
    return out + "]";
  }

  // The last dimension: elements wrapped so that each line fits the line width.
  std::string VectorStr(size_t d, int64_t base, int indent) const {
    const double element_length = static_cast<double>(fmt_.width + 2);
    const int64_t per_line = std::max<int64_t>(
        1, static_cast<int64_t>(std::floor((kLineWidth - indent) / element_length)));
    std::vector<std::string> data;
    for (int64_t i : Kept(d)) {
      if (Elided(d) && i == shape_[d] - kEdgeItems) data.push_back(" ...");
      data.push_back(fmt_.Format(at_(base + i * strides_[d])));
    }
    std::string out = "[";
    for (size_t i = 0; i < data.size(); ++i) {
      if (i > 0) out += i % per_line ? ", " : ",\n" + std::string(indent + 1, ' ');
      out += data[i];
    }
    return out + "]";
  }

  const ElementAt& at_;
  std::vector<int64_t> shape_, strides_;
  bool summarize_ = false;
  Formatter fmt_;
};

std::string ShapeTuple(std::span<const int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] TorchTensorString
// ---------------------------------------------------------------------------------------------

// str(t) of a float32 tensor, or with float64 = true of a torch.float64 one: _str_intern adds
// "dtype=torch.float64" after the values, on the last line when it fits in the line width
// (_add_suffixes), else on a line of its own indented under "tensor(".
// The element count of `shape`; std::invalid_argument for a negative dimension.
int64_t ElementCount(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("tensor shape " + ShapeTuple(shape) + ": negative");
    n *= d;
  }
  return n;
}

// The element count of `shape`, which must be `values`' size (else std::invalid_argument).
template <typename T>
int64_t CheckedCount(std::span<const T> values, std::span<const int64_t> shape) {
  const int64_t n = ElementCount(shape);
  if (n != static_cast<int64_t>(values.size()))
    throw std::invalid_argument("tensor shape " + ShapeTuple(shape) + " does not hold " +
                                std::to_string(values.size()) + " values");
  return n;
}

std::string TensorString(const ElementAt& at, std::span<const int64_t> shape,
                         const char* dtype_suffix) {
  const int64_t n = ElementCount(shape);
  std::vector<std::string> suffixes;
  std::string body;
  if (n == 0) {
    if (shape.size() != 1) suffixes.push_back("size=" + ShapeTuple(shape));
    body = "tensor([]";
  } else {
    body = Printer(at, n, shape).Text();
    body.pop_back();  // the ")"
  }
  if (dtype_suffix) suffixes.push_back(dtype_suffix);
  const size_t nl = body.rfind('\n');
  size_t last_line = nl == std::string::npos ? body.size() + 2 : body.size() - nl + 1;
  for (const std::string& suffix : suffixes) {
    if (last_line + suffix.size() + 2 > static_cast<size_t>(kLineWidth)) {
      body += ",\n" + std::string(7, ' ') + suffix;
      last_line = 7 + suffix.size();
    } else {
      body += ", " + suffix;
      last_line += suffix.size() + 2;
    }
  }
  return body + ")";
}

}  // namespace

std::string TorchTensorString(std::span<const float> values, std::span<const int64_t> shape) {
  CheckedCount(values, shape);
  return TensorString([&](int64_t i) { return static_cast<double>(values[i]); }, shape, nullptr);
}

std::string TorchTensorStringF64(std::span<const double> values, std::span<const int64_t> shape) {
  CheckedCount(values, shape);
  return TensorString([&](int64_t i) { return values[i]; }, shape, "dtype=torch.float64");
}

std::string TorchTensorStringAs(Dtype dtype, std::span<const float> values,
                                std::span<const int64_t> shape) {
  CheckedCount(values, shape);
  const char* suffix = dtype == Dtype::kBfloat16  ? "dtype=torch.bfloat16"
                       : dtype == Dtype::kFloat16 ? "dtype=torch.float16"
                                                  : nullptr;
  return TensorString([&](int64_t i) { return static_cast<double>(values[i]); }, shape, suffix);
}

std::string TorchTensorString(const Matrix& m) {
  const int64_t shape[2] = {m.rows(), m.cols()};
  return TorchTensorString(std::span<const float>(m.data(), static_cast<size_t>(m.size())), shape);
}

std::string TorchTensorString(const MatrixStack& stack) {
  if (stack.empty()) return TorchTensorString(std::span<const float>(), std::vector<int64_t>{0});
  const int64_t shape[3] = {static_cast<int64_t>(stack.size()), stack[0].rows(), stack[0].cols()};
  std::vector<float> values;
  values.reserve(static_cast<size_t>(shape[0] * stack[0].size()));
  for (const Matrix& m : stack) {
    if (m.rows() != shape[1] || m.cols() != shape[2])
      throw std::invalid_argument("matrix stack: matrices of different shapes");
    values.insert(values.end(), m.data(), m.data() + m.size());
  }
  return TorchTensorString(values, shape);
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The stages: names, styles, PrintStage
// ---------------------------------------------------------------------------------------------

struct StageInfo {
  const char* name;
  const char* what;
};

// The projections' weights, printed by `show` though they are no stage.
constexpr StageInfo kProjections[] = {{"W_query", "query projection, x @ W"},
                                      {"W_key", "key projection, x @ W"},
                                      {"W_value", "value projection, x @ W"}};

// `show`'s tensors in its order: the stages (ShowStages, each row's print_what), the
// projections' W's right after the X they multiply.
const std::vector<StageInfo>& Printables() {
  static const std::vector<StageInfo> all = [] {
    std::vector<StageInfo> v;
    for (Stage s : ShowStages()) {
      v.push_back({StageName(s), RowOf(s).print_what});
      if (s == Stage::kX) v.insert(v.end(), std::begin(kProjections), std::end(kProjections));
    }
    return v;
  }();
  return all;
}

// How the program prints: torch float32, torch.float64, or a NumPy float64 array's repr.
// kNumpyF32: NumPy's repr of a float32 ndarray ("..., dtype=float32)").
// kTorchBf16, kTorchF16: a torch.bfloat16 / torch.float16 tensor, printed as _tensor_str prints
// them (its values widened to float32, formatted as float32's) with its dtype suffix.
enum class PrintStyle { kTorch, kTorchF64, kTorchBf16, kTorchF16, kNumpy, kNumpyF32 };

PrintStyle StyleOf(const Stages& st) {
  const bool numpy = st.generator == Generator::kNumpy;
  // NumPy in bfloat16 / float16: the program's float32 arrays holding the stored numbers.
  if (numpy && IsLowPrecision(st.dtype)) return PrintStyle::kNumpyF32;
  if (st.dtype == Dtype::kBfloat16) return PrintStyle::kTorchBf16;
  if (st.dtype == Dtype::kFloat16) return PrintStyle::kTorchF16;
  if (!st.f64) return numpy ? PrintStyle::kNumpyF32 : PrintStyle::kTorch;
  return numpy ? PrintStyle::kNumpy : PrintStyle::kTorchF64;
}

// The tensor of `shape` whose elements `at` gives, printed in `style`. Only the shown elements
// are read: a stage is never copied for printing.
std::string Print(PrintStyle style, const ElementAt& at, const std::vector<int64_t>& shape) {
  switch (style) {
    case PrintStyle::kNumpy:
      return NumpyArrayRepr(at, shape);
    case PrintStyle::kNumpyF32:
      return NumpyArrayRepr(at, shape, true);
    case PrintStyle::kTorchF64:
      return TensorString(at, shape, "dtype=torch.float64");
    case PrintStyle::kTorch:
    case PrintStyle::kTorchBf16:
    case PrintStyle::kTorchF16:
      break;
  }
  // float32 values (or bfloat16 / float16 ones widened): a double of a float read back as the
  // float it is
  const char* suffix = style == PrintStyle::kTorchBf16  ? "dtype=torch.bfloat16"
                       : style == PrintStyle::kTorchF16 ? "dtype=torch.float16"
                                                        : nullptr;
  return TensorString([&](int64_t i) { return static_cast<double>(static_cast<float>(at(i))); },
                      shape, suffix);
}

// out.text and out.printed of the tensor of out.shape whose elements `at` gives: the repr and
// what print() writes, the same text for torch; NumPy's str for NumPy (no "array(", no commas).
void SetText(PrintedStage& out, PrintStyle style, const ElementAt& at) {
  out.at = at;
  out.text = Print(style, at, out.shape);
  const bool numpy = style == PrintStyle::kNumpy || style == PrintStyle::kNumpyF32;
  out.printed = numpy ? NumpyArrayStr(at, out.shape, style == PrintStyle::kNumpyF32) : out.text;
}

// A stack of B (per-token stages) or B*H (per-head stages) matrices in the program's shape.
template <typename Stack>
void SetStack(PrintedStage& out, const Stack& stack, const Shape& sh, bool per_head,
              PrintStyle style) {
  if (stack.empty()) {
    out.present = false;
    return;
  }
  const int64_t rows = stack[0].rows(), cols = stack[0].cols();
  if (sh.B == 1 && sh.H == 1)
    out.shape = {rows, cols};
  else if (!per_head || sh.H == 1)
    out.shape = {static_cast<int64_t>(stack.size()), rows, cols};
  else
    out.shape = {sh.B, sh.H, rows, cols};
  const int64_t per = rows * cols;  // each matrix is row-major: the program's C order
  SetText(out, style,
          [&stack, per](int64_t i) { return static_cast<double>(stack[i / per].data()[i % per]); });
}

template <typename M>
void SetMatrix(PrintedStage& out, const M& m, PrintStyle style) {
  if (m.size() == 0) {  // the W's of a qkv scenario
    out.present = false;
    return;
  }
  out.shape = {m.rows(), m.cols()};
  SetText(out, style, [&m](int64_t i) { return static_cast<double>(m.data()[i]); });
}

// The stage `name` from `src`: the Stages (float32) or their float64 copy.
template <typename Src>
void SetStage(PrintedStage& out, const Stages& st, const Src& src, std::string_view name) {
  const Shape& sh = st.shape;
  const PrintStyle style = StyleOf(st);
  if (name == "W_query") SetMatrix(out, src.W[0], style);
  if (name == "W_key") SetMatrix(out, src.W[1], style);
  if (name == "W_value") SetMatrix(out, src.W[2], style);
  const std::optional<Stage> stage = ParseStage(name);
  if (!stage) return;
  // bfloat16 / float16: the mask is a float32 tensor, and so are the softmax's outputs
  // (weights, weights_dropped, sink) of the upcast softmax (scaling.softmax_dtype "float32").
  const bool low = style == PrintStyle::kTorchBf16 || style == PrintStyle::kTorchF16;
  const bool softmax_out = StageIsWeights(*stage) || *stage == Stage::kSink;
  const PrintStyle weight_style = low && st.weights_f32 ? PrintStyle::kTorch : style;
  if (*stage == Stage::kMask) {
    // torch: tril(ones) of 1. and 0.; NumPy: the notebook's mask after mask[mask == 0] = -inf
    // and mask[mask == 1] = 0, the matrix it adds to the scaled scores.
    const bool numpy = style == PrintStyle::kNumpy || style == PrintStyle::kNumpyF32;
    if (numpy) out.what = "0 = may attend, -inf = masked (added to the logits)";
    const MaskMatrix& m = st.mask;
    if (m.size() == 0) {
      out.present = false;
    } else {
      out.shape = {m.rows(), m.cols()};
      SetText(out, low ? PrintStyle::kTorch : style, [&m, numpy](int64_t i) {
        const bool allowed = m(i / m.cols(), i % m.cols()) != 0;
        return numpy ? (allowed ? 0.0 : -INFINITY) : (allowed ? 1.0 : 0.0);
      });
    }
    return;
  }
  // Q, K, V and their rotations print whole (B x T x d), as the program holds them.
  SetStack(out, *StageStack(src, *stage), sh, StageIsPerHead(*stage) && !StageIsProjected(*stage),
           softmax_out ? weight_style : style);
}

}  // namespace

const std::vector<std::string>& PrintableStageNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const StageInfo& s : Printables()) v.push_back(s.name);
    return v;
  }();
  return names;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The notebooks' variance prints: PrintStats
// ---------------------------------------------------------------------------------------------

// var(scores * multiplier / sqrt(d_k)) before the mask: the NumPy notebook's scaled.var(),
// each product rounded as the pipeline's logits are (in the run's precision). scale_at
// "q_and_k": the scores are already scaled.
double ScaledVariance(const Stages& st, const Scenario& s, VarianceKind kind) {
  const bool at_scores = s.scaling.scale_at == ScaleAt::kScores;
  const double mult = at_scores ? s.scaling.multiplier : 1.0;
  const double div = std::sqrt(static_cast<double>(st.shape.dh));
  const bool scale = at_scores && s.scaling.sqrt_dk;
  if (st.f64) {
    MatrixStackD scaled = st.f64->scores;
    for (MatrixD& m : scaled) {
      if (mult != 1.0) m *= mult;
      if (scale) m /= div;
    }
    return StackVarianceF64(scaled, kind);
  }
  MatrixStack scaled = st.scores;
  for (Matrix& m : scaled) {
    if (mult != 1.0) m *= static_cast<float>(mult);
    if (scale) m /= static_cast<float>(div);
  }
  return StackVariance(scaled, kind);
}

}  // namespace

namespace {

// "name: value" lines, each value as the notebook shows a .var(): a torch scalar tensor or
// NumPy's float64 repr.
std::string VarianceLines(const Stages& st, VarianceKind kind,
                          const std::vector<std::pair<std::string, double>>& lines) {
  std::string out;
  for (const auto& [name, value] : lines) {
    const std::string text =
        kind == VarianceKind::kNumpy ? NumpyFloat64Repr(value)
        : st.f64 ? TorchTensorStringF64(std::vector<double>{value}, std::vector<int64_t>{})
                 : TorchTensorString(std::vector<float>{static_cast<float>(value)},
                                     std::vector<int64_t>{});
    out += name + ": " + text + "\n";
  }
  return out;
}

}  // namespace

std::string PrintStats(const Stages& st, const Scenario& s) {
  const VarianceKind kind = VarianceKindOf(st.generator);
  const StageVariances v = WholeVariances(st, kind);
  std::vector<std::pair<std::string, double>> lines = {
      {"q.var()", v.var_q}, {"k.var()", v.var_k}, {"scores.var()", v.var_scores}};
  if (s.mask.kind != MaskKind::kNone)  // logits hold -inf: the scaled scores before the mask
    lines.emplace_back("scaled.var() (before the mask)", ScaledVariance(st, s, kind));
  lines.emplace_back("logits.var()", v.var_logits);
  lines.emplace_back("weights.var()", v.var_weights);
  std::string out = VarianceLines(st, kind, lines);
  if (st.shape.B * st.shape.H > 1) {  // one (T, T) matrix, as a notebook's wei of one sequence
    const StageVariances h = HeadVariances(st, 0, 0, kind);
    out += "batch 0, head 0 only (its d_k columns of q and k, its T x T matrices):\n" +
           VarianceLines(st, kind,
                         {{"q.var()", h.var_q},
                          {"k.var()", h.var_k},
                          {"scores.var()", h.var_scores},
                          {"logits.var()", h.var_logits},
                          {"weights.var()", h.var_weights}});
  }
  return out;
}

std::optional<PrintedStage> PrintStage(const Stages& st, std::string_view name) {
  PrintedStage out;
  for (const StageInfo& s : Printables())
    if (name == s.name) out = {s.name, s.what, {}, "", "", true, {}};
  if (out.name.empty()) return std::nullopt;
  if (st.f64)
    SetStage(out, st, *st.f64, name);
  else
    SetStage(out, st, st, name);
  return out;
}

}  // namespace attnlab
