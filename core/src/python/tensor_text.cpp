// tensor_text.cpp: see tensor_text.h. A recursive-descent reader over the bytes, depth-limited;
// positions are turned into line and column only when an error is reported.
#include "attnlab/python/tensor_text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace attnlab {

TensorTextError::TensorTextError(int line, int column, const std::string& message)
    : std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(column) +
                         ": " + message),
      line_(line),
      column_(column) {}

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  PastedTensor Read() {
    PastedTensor t;
    if (s_.size() > kMaxPastedBytes)
      Fail(0, "the text is longer than " + std::to_string(kMaxPastedBytes >> 20) +
                  " MiB; paste one tensor's print");
    SkipSpace();
    ReadLabel(t);
    SkipSpace();
    bool call = false;
    if (Word("tensor")) {
      t.form = PastedForm::kTorch;
      call = true;
    } else if (Word("array")) {
      t.form = PastedForm::kNumpy;
      call = true;
    }
    if (call) {
      SkipSpace();
      Expect('(', "\"(\" after \"" +
                      std::string(t.form == PastedForm::kTorch ? "tensor" : "array") + "\"");
      SkipSpace();
    }
    if (At() == '\0' && pos_ >= s_.size())
      Fail(pos_, "no tensor: expected \"tensor(\", \"array(\", \"[\" or a number");
    Data(t, 0);
    if (call) {
      SkipSpace();
      while (At() == ',') {
        ++pos_;
        SkipSpace();
        Keyword(t);
        SkipSpace();
      }
      Expect(')', "\",\" or \")\"");
    }
    SkipSpace();
    if (pos_ < s_.size()) Fail(pos_, "unexpected " + Shown(pos_) + " after the tensor");
    return t;
  }

 private:
  char At() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r' || s_[pos_] == '\f' || s_[pos_] == '\v'))
      ++pos_;
  }

  static bool IsIdent(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  }

  // Consumes `w` when it stands at pos_ as a whole word.
  bool Word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    if (pos_ + w.size() < s_.size() && IsIdent(s_[pos_ + w.size()])) return false;
    pos_ += w.size();
    return true;
  }

  void Expect(char c, const std::string& what) {
    if (At() != c || pos_ >= s_.size()) Fail(pos_, "expected " + what + ", found " + Shown(pos_));
    ++pos_;
  }

  // "weights:" before the tensor, as the generated program prints it.
  void ReadLabel(PastedTensor& t) {
    size_t p = pos_;
    while (p < s_.size() && (IsIdent(s_[p]) || s_[p] == '.' || s_[p] == ' ')) ++p;
    if (p < s_.size() && s_[p] == ':' && p > pos_) {
      std::string label(s_.substr(pos_, p - pos_));
      while (!label.empty() && label.back() == ' ') label.pop_back();
      if (label == "tensor" || label == "array" || label.empty()) return;
      t.label = label;
      pos_ = p + 1;
    }
  }

  // key=value after the data; only dtype is kept.
  void Keyword(PastedTensor& t) {
    const size_t start = pos_;
    while (IsIdent(At()) && pos_ < s_.size()) ++pos_;
    if (pos_ == start)
      Fail(pos_, "expected a keyword (dtype=, grad_fn=, ...), found " + Shown(pos_));
    const std::string key(s_.substr(start, pos_ - start));
    SkipSpace();
    Expect('=', "\"=\" after \"" + key + "\"");
    SkipSpace();
    const size_t vstart = pos_;
    const char open = At();
    if (open == '<' || open == '(' || open == '\'' || open == '"') {
      const char close = open == '<' ? '>' : open == '(' ? ')' : open;
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != close) ++pos_;
      if (pos_ >= s_.size())
        Fail(vstart,
             "the value of \"" + key + "\" opens with " + Shown(vstart) + " and is never closed");
      ++pos_;
    } else {
      while (pos_ < s_.size() && (IsIdent(s_[pos_]) || s_[pos_] == '.' || s_[pos_] == ':')) ++pos_;
      if (pos_ == vstart) Fail(pos_, "expected the value of \"" + key + "\", found " + Shown(pos_));
    }
    if (key == "dtype") t.dtype = std::string(s_.substr(vstart, pos_ - vstart));
  }

  // A number or a [ ... ] list at nesting depth `depth`.
  void Data(PastedTensor& t, int depth) {
    if (At() != '[' || pos_ >= s_.size()) {
      if (depth == 0) {  // a scalar: tensor(0.9302)
        Number(t);
        return;
      }
      Fail(pos_, "expected a number or \"[\", found " + Shown(pos_));
    }
    if (depth >= kMaxPastedRank)
      Fail(pos_, "more than " + std::to_string(kMaxPastedRank) + " nested brackets");
    const size_t open = pos_;
    ++pos_;
    int64_t count = 0;
    bool lists = false;
    for (;;) {
      SkipSpace();
      if (At() == ']' && pos_ < s_.size()) {
        ++pos_;
        break;
      }
      if (pos_ >= s_.size()) Fail(open, "this \"[\" is never closed");
      if (count > 0) {  // items are separated by a comma, or by whitespace (NumPy's print)
        const bool spaced = pos_ > 0 && std::isspace(static_cast<unsigned char>(s_[pos_ - 1]));
        if (At() == ',') {
          ++pos_;
          SkipSpace();
          if (At() == ']' && pos_ < s_.size()) {  // a trailing comma, as Python allows
            ++pos_;
            break;
          }
        } else if (!spaced) {
          Fail(pos_, "expected \",\" or \"]\", found " + Shown(pos_));
        }
      }
      if (s_.substr(pos_, 3) == "...")
        Fail(pos_,
             "the print is summarised (\"...\"): print the tensor whole, e.g. after "
             "torch.set_printoptions(threshold=100000) or np.set_printoptions(threshold=100000)");
      const bool is_list = At() == '[';
      if (count == 0) lists = is_list;
      if (is_list != lists)
        Fail(pos_, lists ? "expected \"[\" (this list holds lists), found " + Shown(pos_)
                         : "a list inside a list of numbers");
      if (lists)
        Data(t, depth + 1);
      else
        Number(t);
      ++count;
    }
    // The length of the lists at this depth and whether they hold lists: set by the first,
    // checked for the others.
    if (static_cast<int>(shape_seen_.size()) <= depth) {
      shape_seen_.resize(depth + 1, -1);
      holds_lists_.resize(depth + 1, -1);
    }
    if (shape_seen_[depth] < 0) {
      shape_seen_[depth] = count;
      holds_lists_[depth] = lists ? 1 : 0;
    } else if (holds_lists_[depth] != (lists ? 1 : 0)) {
      Fail(open, holds_lists_[depth] ? "a list of numbers where the lists beside it hold lists"
                                     : "a list of lists where the lists beside it hold numbers");
    } else if (shape_seen_[depth] != count) {
      Fail(open, "this list has " + std::to_string(count) +
                     " items where the first list at its depth has " +
                     std::to_string(shape_seen_[depth]) + " (ragged lists)");
    }
    if (depth == 0) {
      t.shape.assign(shape_seen_.begin(), shape_seen_.end());
    }
  }

  // One printed number: its value and the half unit of its last digit.
  void Number(PastedTensor& t) {
    const size_t start = pos_;
    bool neg = false;
    if (At() == '-' || At() == '+') {
      neg = At() == '-';
      ++pos_;
    }
    if (Word("nan")) {
      t.values.push_back(NAN);
      t.half_unit.push_back(0.0);
      return;
    }
    if (Word("inf")) {
      t.values.push_back(neg ? -INFINITY : INFINITY);
      t.half_unit.push_back(0.0);
      return;
    }
    const size_t digits = pos_;
    while (std::isdigit(static_cast<unsigned char>(At())) && pos_ < s_.size()) ++pos_;
    const size_t int_digits = pos_ - digits;
    int decimals = 0;
    if (At() == '.' && pos_ < s_.size()) {
      ++pos_;
      const size_t d0 = pos_;
      while (std::isdigit(static_cast<unsigned char>(At())) && pos_ < s_.size()) ++pos_;
      decimals = static_cast<int>(pos_ - d0);
    }
    if (int_digits == 0 && decimals == 0) Fail(start, "expected a number, found " + Shown(start));
    long exponent = 0;
    if ((At() == 'e' || At() == 'E') && pos_ < s_.size()) {
      const size_t e = pos_++;
      if (At() == '+' || At() == '-') ++pos_;
      const size_t e0 = pos_;
      while (std::isdigit(static_cast<unsigned char>(At())) && pos_ < s_.size()) ++pos_;
      if (pos_ == e0) Fail(e, "an exponent without digits");
      const size_t sign = s_[e + 1] == '-' || s_[e + 1] == '+' ? 1 : 0;
      const std::string_view exp_text = s_.substr(e + 1 + sign, pos_ - e - 1 - sign);
      if (exp_text.size() > 6) Fail(e, "an exponent out of range");
      exponent = std::stol(std::string(exp_text));
      if (s_[e + 1] == '-') exponent = -exponent;
    }
    if (IsIdent(At()) && pos_ < s_.size()) Fail(pos_, "unexpected " + Shown(pos_) + " in a number");
    double v = 0;
    const char* first = s_.data() + start + (s_[start] == '+' ? 1 : 0);
    const auto res = std::from_chars(first, s_.data() + pos_, v);
    if (res.ec != std::errc() || !std::isfinite(v))
      Fail(start,
           "the number \"" + std::string(s_.substr(start, pos_ - start)) + "\" is out of range");
    t.values.push_back(v);
    t.half_unit.push_back(0.5 * std::pow(10.0, static_cast<double>(exponent - decimals)));
    if (t.values.size() > kMaxPastedBytes) Fail(start, "too many numbers");
  }

  // The character at byte p, quoted, or a description for the end and for control characters.
  std::string Shown(size_t p) const {
    if (p >= s_.size()) return "the end of the text";
    const unsigned char c = static_cast<unsigned char>(s_[p]);
    if (c == '\n' || c == '\r') return "a line break";
    if (c >= 0x20 && c < 0x7f) return std::string("\"") + static_cast<char>(c) + "\"";
    char buf[16];
    std::snprintf(buf, sizeof buf, "byte 0x%02X", c);
    return buf;
  }

  [[noreturn]] void Fail(size_t p, const std::string& message) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < p && i < s_.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(s_[i]);
      if (c == '\n') {
        ++line;
        column = 1;
      } else if ((c & 0xC0) != 0x80) {  // a UTF-8 continuation byte is not a character
        ++column;
      }
    }
    throw TensorTextError(line, column, message);
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::vector<int64_t> shape_seen_;  // the list length at each depth, -1 until seen
  std::vector<int> holds_lists_;     // at each depth: 1 lists of lists, 0 of numbers, -1 unseen
};

}  // namespace

PastedTensor ParseTensorText(std::string_view text) { return Reader(text).Read(); }

}  // namespace attnlab
