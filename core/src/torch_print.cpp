// torch_print.cpp: see torch_print.h. Follows the steps of torch/_tensor_str.py (PyTorch 1.13):
// pick the elements a summarised print shows, let them choose the number format (integer,
// fixed or scientific, and one common width), then write the nested brackets.
#include "attnlab/torch_print.h"

#include <cmath>
#include <stdexcept>

#include "attnlab/text.h"

namespace attnlab {
namespace {

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

  std::string Format(float v) const {
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
Formatter ChooseFormat(const std::vector<float>& shown) {
  Formatter f;
  std::vector<float> vals;
  for (float v : shown)
    if (std::isfinite(v) && v != 0.0f) vals.push_back(v);
  if (vals.empty()) return f;
  double mn = INFINITY, mx = 0.0;
  for (float v : vals) {
    mn = std::min(mn, static_cast<double>(std::fabs(v)));
    mx = std::max(mx, static_cast<double>(std::fabs(v)));
    if (v != std::ceil(v)) f.int_mode = false;
  }
  f.sci_mode = mx / mn > 1000.0 || mx > 1.0e8 || (!f.int_mode && mn < 1.0e-4);
  for (float v : vals) {
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
  Printer(std::span<const float> values, std::span<const int64_t> shape)
      : values_(values), shape_(shape.begin(), shape.end()), strides_(shape.size(), 1) {
    for (size_t d = shape_.size(); d-- > 1;) strides_[d - 1] = strides_[d] * shape_[d];
    summarize_ = static_cast<int64_t>(values.size()) > kThreshold;
    std::vector<float> shown;
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
  void CollectShown(size_t d, int64_t base, std::vector<float>& out) const {
    if (d == shape_.size()) {
      out.push_back(values_[static_cast<size_t>(base)]);
      return;
    }
    for (int64_t i : Kept(d)) CollectShown(d + 1, base + i * strides_[d], out);
  }

  // The sub-tensor of dimensions d.. starting at `base`, its brackets `indent` columns in.
  std::string Str(size_t d, int64_t base, int indent) const {
    if (d == shape_.size()) return fmt_.Format(values_[static_cast<size_t>(base)]);
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
      data.push_back(fmt_.Format(values_[static_cast<size_t>(base + i * strides_[d])]));
    }
    std::string out = "[";
    for (size_t i = 0; i < data.size(); ++i) {
      if (i > 0) out += i % per_line ? ", " : ",\n" + std::string(indent + 1, ' ');
      out += data[i];
    }
    return out + "]";
  }

  std::span<const float> values_;
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

std::string TorchTensorString(std::span<const float> values, std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("tensor shape " + ShapeTuple(shape) + ": negative");
    n *= d;
  }
  if (n != static_cast<int64_t>(values.size()))
    throw std::invalid_argument("tensor shape " + ShapeTuple(shape) + " does not hold " +
                                std::to_string(values.size()) + " values");
  if (n == 0) return "tensor([]" + (shape.size() == 1 ? "" : ", size=" + ShapeTuple(shape)) + ")";
  return Printer(values, shape).Text();
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

struct StageInfo {
  const char* name;
  const char* what;
};

constexpr StageInfo kStageInfo[] = {
    {"X", "input embeddings"},
    {"W_query", "query projection, x @ W"},
    {"W_key", "key projection, x @ W"},
    {"W_value", "value projection, x @ W"},
    {"Q", "queries"},
    {"K", "keys"},
    {"V", "values"},
    {"scores", "Q @ K^T, before scaling"},
    {"logits", "scaled scores, -inf where masked"},
    {"mask", "1 = may attend"},
    {"weights", "attention weights"},
    {"weights_dropped", "attention weights after dropout"},
    {"context", "context vectors"},
};

// A stack of B (per-token stages) or B*H (per-head stages) matrices in the program's shape.
void SetStack(PrintedStage& out, const MatrixStack& stack, const Shape& sh, bool per_head) {
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
  std::vector<float> values;
  for (const Matrix& m : stack) values.insert(values.end(), m.data(), m.data() + m.size());
  out.text = TorchTensorString(values, out.shape);
}

void SetMatrix(PrintedStage& out, const Matrix& m) {
  if (m.size() == 0) {  // the W's of a qkv scenario
    out.present = false;
    return;
  }
  out.shape = {m.rows(), m.cols()};
  out.text = TorchTensorString(m);
}

}  // namespace

const std::vector<std::string>& PrintableStageNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const StageInfo& s : kStageInfo) v.push_back(s.name);
    return v;
  }();
  return names;
}

std::optional<PrintedStage> PrintStage(const Stages& st, std::string_view name) {
  PrintedStage out;
  for (const StageInfo& s : kStageInfo)
    if (name == s.name) out = {s.name, s.what, {}, "", true};
  if (out.name.empty()) return std::nullopt;
  const Shape& sh = st.shape;
  if (name == "X") SetStack(out, st.X, sh, false);
  if (name == "W_query") SetMatrix(out, st.W[0]);
  if (name == "W_key") SetMatrix(out, st.W[1]);
  if (name == "W_value") SetMatrix(out, st.W[2]);
  if (name == "Q") SetStack(out, st.Q, sh, false);
  if (name == "K") SetStack(out, st.K, sh, false);
  if (name == "V") SetStack(out, st.V, sh, false);
  if (name == "scores") SetStack(out, st.scores, sh, true);
  if (name == "logits") SetStack(out, st.logits, sh, true);
  if (name == "mask") SetMatrix(out, st.mask.cast<float>());
  if (name == "weights") SetStack(out, st.weights, sh, true);
  if (name == "weights_dropped") SetStack(out, st.weights_dropped, sh, true);
  if (name == "context") SetStack(out, st.context, sh, false);
  return out;
}

}  // namespace attnlab
