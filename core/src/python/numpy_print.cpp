// numpy_print.cpp: see numpy_print.h. The steps of numpy/core/arrayprint.py (NumPy 1.24): pick
// the elements a summarised print shows, let them fix the float format, then lay the nested
// brackets out, wrapping each row at the line width.
#include "attnlab/python/numpy_print.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {
namespace {

constexpr int kPrecision = 8;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 75 - 1;  // array2string takes len(")") off the line width

// Dragon4 with unique=True and a cutoff of `precision` digits after the point: the shortest
// round-trip digits when they have at most `precision` decimals, else the exact value rounded
// there. Scientific ("1.23e+00", exponent of two digits at least) or positional ("0.25").
// Trailing zeros trimmed, the point kept ("1.", "1.e+00"). `f32`: v is a float32, whose own
// shortest digits are taken (NumPy's Dragon4 runs on the array's type). `all`: exactly
// `precision` decimals, the exact value's own digits past the shortest ones (Dragon4's
// min_digits: a float32 0.4246357 is 4.2463571e-01 with 7 decimals, not 4.2463570e-01).
std::string Digits(double v, bool sci, int precision, bool f32, bool all = false) {
  char buf[512];
  const auto fmt = sci ? std::chars_format::scientific : std::chars_format::fixed;
  auto res = f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), fmt)
                 : std::to_chars(buf, buf + sizeof buf, v, fmt);
  std::string s(buf, res.ptr);
  std::string mant = s, exp;
  if (sci) {
    const size_t e = s.find('e');
    mant = s.substr(0, e);
    exp = s.substr(e + 1);
  }
  const size_t dot = mant.find('.');
  const size_t decimals = dot == std::string::npos ? 0 : mant.size() - dot - 1;
  if (static_cast<int>(decimals) > precision || all) {
    std::snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*f", precision, v);
    s = buf;
    mant = s;
    if (sci) {
      const size_t e = s.find('e');
      mant = s.substr(0, e);
      exp = s.substr(e + 1);
    }
    if (mant.find('.') != std::string::npos && !all)
      while (mant.back() == '0') mant.pop_back();
  }
  if (mant.find('.') == std::string::npos) mant += ".";
  if (!sci) return mant;
  // exponent: sign and at least two digits
  const char sign = exp[0] == '-' ? '-' : '+';
  std::string digits = exp.substr(exp[0] == '-' || exp[0] == '+' ? 1 : 0);
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  if (digits.size() < 2) digits.insert(0, 2 - digits.size(), '0');
  return mant + "e" + sign + digits;
}

// FloatingFormat for the shown elements: exp_format, pad_left, pad_right, precision, exp_size.
struct FloatFormat {
  bool sci = false;
  int precision = kPrecision;
  size_t pad_left = 0, pad_right = 0, exp_size = 0;
  bool f32 = false;  // the values are float32: their digits and max / min in float32

  FloatFormat(const std::vector<double>& shown, bool float32) : f32(float32) {
    std::vector<double> finite;
    double mx = 0, mn = INFINITY;
    bool any_nonfinite = false, neg_inf = false;
    for (double v : shown) {
      if (!std::isfinite(v)) {
        any_nonfinite = true;
        neg_inf = neg_inf || (std::isinf(v) && v < 0);
        continue;
      }
      finite.push_back(v);
      if (v != 0) mx = std::max(mx, std::fabs(v)), mn = std::min(mn, std::fabs(v));
    }
    // max_val / min_val is a division in the array's dtype; the comparisons are in double.
    const double ratio =
        f32 ? static_cast<double>(static_cast<float>(mx) / static_cast<float>(mn)) : mx / mn;
    if (mn != INFINITY) sci = mx >= 1e8 || mn < 1e-4 || ratio > 1000.0;
    if (sci) {
      size_t frac = 0;
      for (double v : finite) {
        const std::string d = Digits(v, true, kPrecision, f32);
        const size_t dot = d.find('.'), e = d.find('e');
        frac = std::max(frac, e - dot - 1);
        pad_left = std::max(pad_left, dot);
        exp_size = std::max(exp_size, d.size() - e - 2);
      }
      precision = static_cast<int>(frac);
      pad_right = exp_size + 2 + frac;
    } else {
      for (double v : finite) {
        const std::string d = Digits(v, false, kPrecision, f32);
        const size_t dot = d.find('.');
        pad_left = std::max(pad_left, dot);
        pad_right = std::max(pad_right, d.size() - dot - 1);
      }
    }
    if (any_nonfinite) {  // room for "nan", "inf", "-inf"
      const size_t offset = pad_right + 1, inflen = 3 + (neg_inf ? 1 : 0);
      pad_left =
          std::max({pad_left, 3 > offset ? 3 - offset : 0, inflen > offset ? inflen - offset : 0});
    }
  }

  std::string operator()(double v) const {
    if (!std::isfinite(v)) {
      const std::string s = std::isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
      const size_t width = pad_left + pad_right + 1;
      return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
    }
    // Scientific: exactly `precision` decimals (min_digits), exponent padded to exp_size.
    std::string d = Digits(v, sci, precision, f32, sci);
    if (sci) {
      const size_t e2 = d.find('e');
      const size_t exp_digits = d.size() - e2 - 2;
      if (exp_digits < exp_size) d.insert(e2 + 2, exp_size - exp_digits, '0');
    } else {
      const size_t dot = d.find('.');
      const size_t decimals = d.size() - dot - 1;
      if (decimals < pad_right) d.append(pad_right - decimals, ' ');
    }
    const size_t dot = d.find('.');
    if (dot < pad_left) d.insert(0, pad_left - dot, ' ');
    return d;
  }
};

class ArrayPrinter {
 public:
  ArrayPrinter(const ElementAt& at, int64_t n, std::span<const int64_t> shape, bool float32,
               bool str = false)
      : at_(at),
        shape_(shape.begin(), shape.end()),
        strides_(shape.size(), 1),
        float32_(float32),
        separator_(str ? " " : ", ") {
    for (size_t d = shape_.size(); d-- > 1;) strides_[d - 1] = strides_[d] * shape_[d];
    summarize_ = n > kThreshold;
  }

  // str(a), array_str's array2string(a, separator=' ', prefix=""): no "array(" and no dtype,
  // the next lines indented by one space (for "["), the whole line width (no ")" to leave room
  // for), and no comma between elements or at the end of a row.
  std::string Str() {
    std::vector<double> shown;
    Collect(0, 0, shown);
    format_.emplace(shown, float32_);
    return Rec(0, 0, " ", kLineWidth + 1);
  }

  std::string Repr() {
    std::vector<double> shown;
    Collect(0, 0, shown);
    format_.emplace(shown, float32_);
    const std::string prefix(7, ' ');  // len("array(") + 1 for "["
    const std::string data = "array(" + Rec(0, 0, prefix, kLineWidth);
    if (!float32_) return data + ")";
    // array_repr: "array(" + data + "," then the dtype, after a space or, when the last line
    // would pass the line width (75), on a new line under the data.
    const std::string dtype = "dtype=float32)";
    const size_t last_line = data.size() + 1 - (data.rfind('\n') + 1);
    const bool wrap = last_line + dtype.size() + 1 > 75;
    return data + "," + (wrap ? "\n" + std::string(6, ' ') : " ") + dtype;
  }

 private:
  bool Elided(size_t d) const { return summarize_ && 2 * kEdgeItems < shape_[d]; }

  void Collect(size_t d, int64_t base, std::vector<double>& out) const {
    if (d == shape_.size()) {
      out.push_back(at_(base));
      return;
    }
    for (int64_t i = 0; i < shape_[d]; ++i)
      if (!Elided(d) || i < kEdgeItems || i >= shape_[d] - kEdgeItems)
        Collect(d + 1, base + i * strides_[d], out);
  }

  // _extendLine: wrap before `word` when the line would pass `width` (unless that cannot help).
  static void Extend(std::string& s, std::string& line, const std::string& word, size_t width,
                     const std::string& indent) {
    if (line.size() + word.size() > width && line.size() > indent.size()) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      s += line + "\n";
      line = indent;
    }
    line += word;
  }

  // _formatArray's recurser.
  std::string Rec(size_t d, int64_t base, const std::string& indent, int width) const {
    if (d == shape_.size()) return (*format_)(at_(base));
    const std::string next_indent = indent + " ";
    const int next_width = width - 1;
    const int64_t n = shape_[d];
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < n; ++i)
      if (!Elided(d) || i < kEdgeItems || i >= n - kEdgeItems) idx.push_back(i);
    std::string s;
    if (d + 1 == shape_.size()) {
      // curr_width - len(separator.rstrip())
      const size_t elem_width = static_cast<size_t>(width) - (separator_ == " " ? 0 : 1);
      std::string line = indent;
      for (size_t k = 0; k < idx.size(); ++k) {
        if (Elided(d) && idx[k] == n - kEdgeItems) {
          Extend(s, line, "...", elem_width, indent);
          line += separator_;
        }
        const std::string word = Rec(d + 1, base + idx[k] * strides_[d], next_indent, next_width);
        Extend(s, line, word, k + 1 < idx.size() ? elem_width : elem_width, indent);
        if (k + 1 < idx.size()) line += separator_;
      }
      s += line;
    } else {
      const std::string line_sep =
          (separator_ == " " ? "" : ",") + std::string(shape_.size() - d - 1, '\n');
      for (size_t k = 0; k < idx.size(); ++k) {
        if (Elided(d) && idx[k] == n - kEdgeItems) s += indent + "..." + line_sep;
        s += indent + Rec(d + 1, base + idx[k] * strides_[d], next_indent, next_width);
        if (k + 1 < idx.size()) s += line_sep;
      }
    }
    return "[" + s.substr(indent.size()) + "]";
  }

  const ElementAt& at_;
  std::vector<int64_t> shape_, strides_;
  bool summarize_ = false;
  bool float32_ = false;
  std::string separator_;  // ", " (repr) or " " (str)
  std::optional<FloatFormat> format_;
};

}  // namespace

namespace {

// The element count of `shape`. Errors as NumpyArrayRepr.
int64_t ElementCount(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1) throw std::invalid_argument("numpy array: every dimension must be at least 1");
    n *= d;
  }
  if (shape.empty()) throw std::invalid_argument("numpy array: the shape is empty");
  return n;
}

}  // namespace

std::string NumpyArrayRepr(std::span<const double> values, std::span<const int64_t> shape,
                           bool float32) {
  const int64_t n = ElementCount(shape);
  if (n != static_cast<int64_t>(values.size()))
    throw std::invalid_argument("numpy array: the shape does not hold " +
                                std::to_string(values.size()) + " values");
  const ElementAt at = [&](int64_t i) { return values[static_cast<size_t>(i)]; };
  return ArrayPrinter(at, n, shape, float32).Repr();
}

std::string NumpyArrayRepr(const ElementAt& at, std::span<const int64_t> shape, bool float32) {
  return ArrayPrinter(at, ElementCount(shape), shape, float32).Repr();
}

std::string NumpyArrayStr(const ElementAt& at, std::span<const int64_t> shape, bool float32) {
  return ArrayPrinter(at, ElementCount(shape), shape, float32, true).Str();
}

std::string NumpyFloat64Repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  // The shortest digits, as d.ddde+XX: the digits and the decimal exponent.
  const auto res =
      std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  const std::string s(buf, res.ptr);
  const size_t e = s.find('e');
  std::string digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp = std::stoi(s.substr(e + 1));
  const int n = static_cast<int>(digits.size());
  std::string out = std::signbit(v) ? "-" : "";
  if (exp >= -4 && exp < 16) {  // positional, at least one digit after the point
    if (exp < 0) return out + "0." + std::string(-exp - 1, '0') + digits;
    if (n <= exp + 1) return out + digits + std::string(exp + 1 - n, '0') + ".0";
    return out + digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
  }
  out += digits.substr(0, 1) + (n > 1 ? "." + digits.substr(1) : "");
  const std::string e_digits = std::to_string(std::abs(exp));
  return out + "e" + (exp < 0 ? "-" : "+") + (e_digits.size() < 2 ? "0" : "") + e_digits;
}

}  // namespace attnlab
