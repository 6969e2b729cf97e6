// scenario.cpp: reading, validating and writing attention-lab/scenario@1 (see scenario.h).
//
// [SECTION] errors
// [SECTION] JSON field readers (each error names the dotted field path)
// [SECTION] ParseScenario
// [SECTION] ValidateScenario and the memory estimate
// [SECTION] WriteScenario
// [SECTION] comparisons
#include "attnlab/model/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "attnlab/base/file_io.h"
#include "attnlab/base/text.h"
#include "attnlab/model/memory_probe.h"
#include "attnlab/random/numpy_rng.h"
#include "attnlab/random/rng.h"
#include "base/json_matrix.h"

namespace attnlab {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// [SECTION] errors
// ---------------------------------------------------------------------------------------------

ScenarioError::ScenarioError(std::string field, const std::string& message)
    // The field's keys and the message's quotes come from the file: one line, whatever they hold.
    : std::runtime_error(field.empty() ? MessageText(message, std::string_view::npos)
                                       : MessageText(field, 2 * kMessageQuoteChars) + ": " +
                                             MessageText(message, std::string_view::npos)),
      field_(std::move(field)) {}

// ---------------------------------------------------------------------------------------------
// [SECTION] JSON field readers
// ---------------------------------------------------------------------------------------------
namespace {

const char* TypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::number_float:
      return "a non-integer number";
    default:
      return "a number";
  }
}

[[noreturn]] void Fail(const std::string& field, const std::string& message) {
  throw ScenarioError(field, message);
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Refuses any key of `obj` not in `allowed`.
void CheckKeys(const json& obj, const std::string& path,
               std::initializer_list<const char*> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      Fail(Join(path, it.key()), "unknown field (expected one of: " + list + ")");
    }
  }
}

const json& Require(const json& obj, const std::string& path, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) Fail(Join(path, key), "missing required field");
  return *it;
}

const json& Object(const json& j, const std::string& path) {
  if (!j.is_object()) Fail(path, std::string("must be an object, not ") + TypeName(j));
  return j;
}

std::string String(const json& j, const std::string& path) {
  if (!j.is_string()) Fail(path, std::string("must be a string, not ") + TypeName(j));
  return j.get<std::string>();
}

bool Bool(const json& j, const std::string& path) {
  if (!j.is_boolean()) Fail(path, std::string("must be true or false, not ") + TypeName(j));
  return j.get<bool>();
}

double Number(const json& j, const std::string& path) {
  if (!j.is_number()) Fail(path, std::string("must be a number, not ") + TypeName(j));
  const double v = j.get<double>();
  if (!std::isfinite(v)) Fail(path, "must be a finite number");
  return v;
}

// nlohmann's DOM built through its SAX interface, to know where the parser is: the path of the
// value being read ("input.values[0][1]") for the error nlohmann reports without a position
// (a number too large for a double: 1e400, out_of_range.406), and the text of each integer
// literal beyond int64 / uint64, which nlohmann can only give as a double (2^64 would read as
// 1.8446744073709552e+19, and -9223372036854775809 would round to -2^63).
class DomBuilder : public nlohmann::json_sax<json> {
 public:
  explicit DomBuilder(json& root) : root_(root) {}

  bool null() override { return Put(nullptr); }
  bool boolean(bool v) override { return Put(v); }
  bool number_integer(number_integer_t v) override { return Put(v); }
  bool number_unsigned(number_unsigned_t v) override { return Put(v); }
  bool number_float(number_float_t v, const string_t& text) override {
    if (text.find_first_of(".eE") == std::string::npos) big_integers_[Path()] = text;
    return Put(v);
  }
  bool string(string_t& v) override { return Put(std::move(v)); }
  bool binary(binary_t& v) override { return Put(std::move(v)); }
  bool start_object(std::size_t) override { return Open(json::object()); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool key(string_t& k) override {
    levels_.back().key = k;
    return true;
  }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
    error_path_ = Path();
    error_ = e.what();
    if (const auto* pe = dynamic_cast<const json::parse_error*>(&e)) syntax_byte_ = pe->byte;
    return false;
  }

  /// The path of the value being read, "(scenario)" at the top.
  std::string Path() const {
    std::string path;
    for (size_t i = 0; i < levels_.size(); ++i) {
      const json& node = *levels_[i].node;
      // An outer array already holds the container being read; the innermost gets a new value.
      const size_t at = node.size() - (i + 1 < levels_.size() ? 1 : 0);
      path = node.is_array() ? Index(path, at) : Join(path, levels_[i].key);
    }
    return path.empty() ? "(scenario)" : path;
  }

  std::map<std::string, std::string> big_integers_;  // path -> literal text
  std::string error_path_, error_;
  std::optional<size_t> syntax_byte_;

 private:
  struct Level {
    json* node;
    std::string key;  // objects: the key of the value being read
  };
  // Adds v where the parser is; returns the new node.
  json* Add(json&& v) {
    if (levels_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Level& l = levels_.back();
    if (l.node->is_array()) {
      l.node->push_back(std::move(v));
      return &l.node->back();
    }
    json& slot = (*l.node)[l.key];
    slot = std::move(v);
    return &slot;
  }
  bool Put(json&& v) {
    Add(std::move(v));
    return true;
  }
  bool Open(json&& container) {
    json* node = Add(std::move(container));
    levels_.push_back({node, ""});
    return true;
  }
  bool Close() {
    levels_.pop_back();
    return true;
  }

  json& root_;
  std::vector<Level> levels_;
};

// The integer literals beyond int64 / uint64 of the scenario being parsed (DomBuilder), by
// path: Seed and Integer quote them as written.
thread_local const std::map<std::string, std::string>* t_big_integers = nullptr;

const std::string* BigIntegerText(const std::string& path) {
  if (!t_big_integers) return nullptr;
  auto it = t_big_integers->find(path);
  return it == t_big_integers->end() ? nullptr : &it->second;
}

// A whole double as people write it: 18446744073709551616, not 1.8446744073709552e+19 (up to
// 1e21, where the exponent form is the shorter one).
std::string WholeText(double v) {
  if (std::fabs(v) >= 1e21) return json(v).dump();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// An integer in [lo, hi]. JSON has one number type: 2.0 is accepted as 2, as Python's int()
// would; 2.5 is not. Integers beyond uint64 arrive from nlohmann as doubles.
int64_t Integer(const json& j, const std::string& path, int64_t lo, int64_t hi) {
  if (!j.is_number()) Fail(path, std::string("must be a whole number, not ") + TypeName(j));
  const std::string range =
      "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got ";
  if (const std::string* text = BigIntegerText(path)) Fail(path, range + *text);
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (v != std::floor(v)) Fail(path, "must be a whole number, not " + json(v).dump());
    if (v < static_cast<double>(lo) || v > static_cast<double>(hi))
      Fail(path, range + WholeText(v));
    return static_cast<int64_t>(v);
  }
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(hi))
    Fail(path, range + j.dump());
  const int64_t v = j.get<int64_t>();
  if (v < lo || v > hi) Fail(path, range + std::to_string(v));
  return v;
}

// A torch.manual_seed value: any integer in [-2^63, 2^64); negatives wrap as in PyTorch
// (manual_seed(-1) is seed 2^64 - 1). A whole double such as 2.0 or 1e3 counts, as int() would.
uint64_t Seed(const json& j, const std::string& path) {
  const std::string range = "must be an integer in [-2^63, 2^64) (a torch.manual_seed value)";
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) return static_cast<uint64_t>(j.get<int64_t>());
  if (!j.is_number()) Fail(path, range + ", not " + TypeName(j));
  if (const std::string* text = BigIntegerText(path)) Fail(path, range + ", got " + *text);
  const double v = j.get<double>();
  constexpr double kTwo63 = 9223372036854775808.0, kTwo64 = 18446744073709551616.0;
  if (v != std::floor(v)) Fail(path, range + ", got " + json(v).dump());
  if (v < -kTwo63 || v >= kTwo64) Fail(path, range + ", got " + WholeText(v));
  return v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
}

std::optional<uint64_t> OptionalSeed(const json& obj, const std::string& path) {
  auto it = obj.find("seed");
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return Seed(*it, Join(path, "seed"));
}

// One of the enum's spellings (its list in scenario.h or tokenizer.h).
template <NamedEnum Enum>
Enum Choice(const json& j, const std::string& path) {
  const std::string s = String(j, path);
  if (const std::optional<Enum> e = ParseName<Enum>(s)) return *e;
  Fail(path,
       "unknown value \"" + MessageText(s) + "\" (expected one of: " + NameList<Enum>() + ")");
}

std::vector<std::string> StringList(const json& j, const std::string& path) {
  if (!j.is_array()) Fail(path, std::string("must be an array of strings, not ") + TypeName(j));
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(String(j[i], Index(path, i)));
  return out;
}

// A float32 that is finite after rounding to float, as torch.tensor(..., dtype=float32) rounds
// it (1e39 is a finite double but inf in float; 3.4028235e+38, the shortest text of FLT_MAX, is
// a little above FLT_MAX and rounds to it).
float FiniteFloat(const json& j, const std::string& path) {
  const double v = Number(j, path);
  const float f = static_cast<float>(v);
  if (!std::isfinite(f)) Fail(path, "is " + j.dump() + ", which is not finite in float32");
  return f;
}

// A rows x cols array of numbers; ragged rows, non-numbers and non-finite values are refused.
Matrix NumberMatrix(const json& j, const std::string& path) {
  if (!j.is_array() || j.empty()) Fail(path, "must be a non-empty array of rows of numbers");
  const size_t rows = j.size();
  if (!j[0].is_array() || j[0].empty())
    Fail(Index(path, 0), "must be a non-empty array of numbers (a row)");
  const size_t cols = j[0].size();
  if (static_cast<double>(rows) * static_cast<double>(cols) * 4 > kMaxStageBytes)
    Fail(path, "is larger than the 2 GiB limit of a scenario");
  Matrix m(rows, cols);
  for (size_t r = 0; r < rows; ++r) {
    const json& row = j[r];
    if (!row.is_array())
      Fail(Index(path, r), std::string("must be a row (an array), not ") + TypeName(row));
    if (row.size() != cols)
      Fail(Index(path, r), "has " + std::to_string(row.size()) + " entries but row 0 has " +
                               std::to_string(cols) + " (ragged rows)");
    for (size_t c = 0; c < cols; ++c) m(r, c) = FiniteFloat(row[c], Index(Index(path, r), c));
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] ParseScenario
// ---------------------------------------------------------------------------------------------

// B matrices of the same rows x cols: a T x d array (B = 1) or a B x T x d array.
MatrixStack NumberStack(const json& v, const std::string& path, const char* shape) {
  MatrixStack out;
  if (v.is_array() && !v.empty() && v[0].is_array() && !v[0].empty() && v[0][0].is_array()) {
    for (size_t b = 0; b < v.size(); ++b) {
      out.push_back(NumberMatrix(v[b], Index(path, b)));
      if (out.back().rows() != out[0].rows() || out.back().cols() != out[0].cols())
        Fail(Index(path, b),
             std::string("batch entries must all have the same ") + shape + " shape");
    }
  } else {
    out.push_back(NumberMatrix(v, path));
  }
  return out;
}

// "order": a permutation of "query", "key", "value".
std::array<Projection, 3> DrawOrder(const json& o, const std::string& path) {
  if (!o.is_array() || o.size() != 3)
    Fail(path, "must list \"query\", \"key\" and \"value\" once each");
  std::array<Projection, 3> order{};
  std::set<Projection> seen;
  for (size_t i = 0; i < 3; ++i) {
    order[i] = Choice<Projection>(o[i], Index(path, i));
    if (!seen.insert(order[i]).second)
      Fail(Index(path, i), std::string("\"") + Name(order[i]) +
                               "\" appears twice; list query, key, value once each");
  }
  return order;
}

int64_t Size(const json& j, const std::string& path) {
  return Integer(j, path, 1, int64_t{1} << 40);
}

void ParseQkvInput(const json& j, InputSpec& in) {
  const std::string path = "input";
  CheckKeys(j, path,
            {"source", "generator", "seed", "batch", "length", "d_k", "d_v", "order", "heads", "Q",
             "K", "V", "tokens"});
  if (j.contains("Q") || j.contains("K") || j.contains("V")) {
    // "generator" stays: it picks the program's library (NumPy or PyTorch) and its prints.
    for (const char* drawn : {"seed", "batch", "length", "d_k", "d_v", "order"})
      if (j.contains(drawn))
        Fail(Join(path, drawn), "is only read when Q, K and V are drawn, not given as matrices");
    in.Q = NumberStack(Require(j, path, "Q"), "input.Q", "T x d_k");
    in.K = NumberStack(Require(j, path, "K"), "input.K", "T x d_k");
    in.V = NumberStack(Require(j, path, "V"), "input.V", "T x d_v");
    in.batch = static_cast<int64_t>(in.Q.size());
    in.length = in.Q[0].rows();
    in.d_k = in.Q[0].cols();
    in.d_v = in.V[0].cols();
    if (j.contains("tokens")) in.tokens = StringList(j["tokens"], "input.tokens");
    return;
  }
  if (j.contains("batch")) in.batch = Size(j["batch"], "input.batch");
  in.length = Size(Require(j, path, "length"), "input.length");
  in.d_k = Size(Require(j, path, "d_k"), "input.d_k");
  in.d_v = j.contains("d_v") ? Size(j["d_v"], "input.d_v") : in.d_k;
  in.seed = Seed(Require(j, path, "seed"), "input.seed");
  if (j.contains("order")) in.order = DrawOrder(j["order"], "input.order");
  if (j.contains("tokens")) in.tokens = StringList(j["tokens"], "input.tokens");
}

InputSpec ParseInput(const json& j) {
  const std::string path = "input";
  Object(j, path);
  InputSpec in;
  in.source = Choice<InputSource>(Require(j, path, "source"), "input.source");
  if (j.contains("generator")) in.generator = Choice<Generator>(j["generator"], "input.generator");
  switch (in.source) {
    case InputSource::kMatrix: {
      CheckKeys(j, path, {"source", "generator", "values", "tokens"});
      in.values = NumberStack(Require(j, path, "values"), "input.values", "T x d_in");
      in.batch = static_cast<int64_t>(in.values.size());
      in.d_in = in.values[0].cols();
      if (j.contains("tokens")) in.tokens = StringList(j["tokens"], "input.tokens");
      break;
    }
    case InputSource::kText: {
      CheckKeys(j, path,
                {"source", "generator", "text", "tokenizer", "d_in", "seed", "special_tokens"});
      in.text = String(Require(j, path, "text"), "input.text");
      if (j.contains("tokenizer"))
        in.tokenizer = Choice<TokenizerKind>(j["tokenizer"], "input.tokenizer");
      in.d_in = Size(Require(j, path, "d_in"), "input.d_in");
      in.seed = Seed(Require(j, path, "seed"), "input.seed");
      if (j.contains("special_tokens"))
        in.special_tokens = StringList(j["special_tokens"], "input.special_tokens");
      break;
    }
    case InputSource::kRandn: {
      CheckKeys(j, path, {"source", "generator", "batch", "length", "d_in", "seed"});
      if (j.contains("batch")) in.batch = Size(j["batch"], "input.batch");
      in.length = Size(Require(j, path, "length"), "input.length");
      in.d_in = Size(Require(j, path, "d_in"), "input.d_in");
      in.seed = Seed(Require(j, path, "seed"), "input.seed");
      break;
    }
    case InputSource::kQkv:
      ParseQkvInput(j, in);
      break;
  }
  return in;
}

// "projections.qk_norm": eps, weight, order, scale (QkNormSpec).
QkNormSpec ParseQkNorm(const json& j) {
  const std::string path = "projections.qk_norm";
  Object(j, path);
  CheckKeys(j, path, {"eps", "weight", "order", "scale"});
  QkNormSpec q;
  if (j.contains("eps")) q.eps = Number(j["eps"], Join(path, "eps"));
  if (j.contains("weight")) {
    const json& w = j["weight"];
    if (!w.is_array() || w.empty())
      Fail(Join(path, "weight"), "must be a list of numbers, one per dimension of a head");
    for (size_t i = 0; i < w.size(); ++i)
      q.weight.push_back(FiniteFloat(w[i], Index(Join(path, "weight"), i)));
  }
  if (j.contains("order")) {
    const json& o = j["order"];
    if (o != "after_rope" && o != "before_rope")
      Fail(Join(path, "order"), "must be \"after_rope\" or \"before_rope\"");
    q.after_rope = o == "after_rope";
  }
  if (j.contains("scale")) q.scale = Number(j["scale"], Join(path, "scale"));
  return q;
}

ProjectionSpec ParseProjections(const json& j) {
  const std::string path = "projections";
  Object(j, path);
  CheckKeys(j, path,
            {"init", "d_out", "seed", "order", "bias", "heads", "kv_heads", "out_proj", "per_head",
             "head_split", "qk_norm", "W_query", "W_key", "W_value"});
  ProjectionSpec p;
  p.init = Choice<ProjectionInit>(Require(j, path, "init"), "projections.init");
  const bool needs_d_out = ProjectionInitDraws(p.init);
  if (j.contains("d_out")) {
    p.d_out = Integer(j["d_out"], "projections.d_out", 1, int64_t{1} << 40);
  } else if (needs_d_out) {
    Fail("projections.d_out",
         std::string("missing required field (init \"") + Name(p.init) + "\")");
  }
  p.seed = OptionalSeed(j, path);
  if (j.contains("order")) p.order = DrawOrder(j["order"], "projections.order");
  if (j.contains("bias")) p.bias = Bool(j["bias"], "projections.bias");
  if (j.contains("heads")) p.heads = Integer(j["heads"], "projections.heads", 1, int64_t{1} << 40);
  if (j.contains("kv_heads"))
    p.kv_heads = Integer(j["kv_heads"], "projections.kv_heads", 1, int64_t{1} << 40);
  if (j.contains("out_proj")) {  // true / false, or {"bias": false}: on, without its bias
    const json& o = j["out_proj"];
    if (o.is_object()) {
      CheckKeys(o, "projections.out_proj", {"bias"});
      p.out_proj = true;
      if (o.contains("bias")) p.out_proj_bias = Bool(o["bias"], "projections.out_proj.bias");
    } else if (!o.is_boolean()) {
      Fail("projections.out_proj",
           std::string("must be true, false or {\"bias\": false}, not ") + TypeName(o));
    } else {
      p.out_proj = o.get<bool>();
    }
  }
  if (j.contains("per_head")) p.per_head = Bool(j["per_head"], "projections.per_head");
  if (j.contains("head_split"))
    p.head_split = Choice<HeadSplit>(j["head_split"], "projections.head_split");
  if (j.contains("qk_norm")) p.qk_norm = ParseQkNorm(j["qk_norm"]);
  for (Projection w : {Projection::kQuery, Projection::kKey, Projection::kValue}) {
    const std::string key = std::string("W_") + Name(w);
    if (p.init == ProjectionInit::kMatrix) {
      p.W[static_cast<int>(w)] = NumberMatrix(Require(j, path, key.c_str()), Join(path, key));
    } else if (j.contains(key)) {
      Fail(Join(path, key),
           std::string("is only read when init is \"matrix\", not \"") + Name(p.init) + "\"");
    }
  }
  if (p.init == ProjectionInit::kMatrix && !j.contains("d_out")) p.d_out = p.W[0].cols();
  return p;
}

// "mask" (top, with masked_rows) or one of its "of" entries, recursively: each kind reads its
// own fields and refuses the others'.
MaskSpec ParseMask(const json& j, const std::string& path, bool top) {
  const json& m = Object(j, path);
  if (top)
    CheckKeys(
        m, path,
        {"kind", "allowed", "window", "prefix", "doc_ids", "of", "masked_rows", "align", "fill"});
  else
    CheckKeys(m, path, {"kind", "allowed", "window", "prefix", "doc_ids", "of"});
  MaskSpec mask;
  if (m.contains("kind")) mask.kind = Choice<MaskKind>(m["kind"], Join(path, "kind"));
  if (top && m.contains("masked_rows"))
    mask.masked_rows = Choice<MaskedRows>(m["masked_rows"], Join(path, "masked_rows"));
  if (top && m.contains("align")) mask.align = Choice<MaskAlign>(m["align"], Join(path, "align"));
  if (top && m.contains("fill")) mask.fill = Choice<MaskFill>(m["fill"], Join(path, "fill"));
  struct Own {
    const char* field;
    MaskKind kind;
  };
  for (const Own& own : {Own{"allowed", MaskKind::kCustom}, Own{"window", MaskKind::kSlidingWindow},
                         Own{"prefix", MaskKind::kPrefixLm}, Own{"doc_ids", MaskKind::kDocument}})
    if (mask.kind != own.kind && m.contains(own.field))
      Fail(Join(path, own.field), std::string("is only read when kind is \"") + Name(own.kind) +
                                      "\", not \"" + Name(mask.kind) + "\"");
  if (mask.kind != MaskKind::kAnd && mask.kind != MaskKind::kOr && m.contains("of"))
    Fail(Join(path, "of"), std::string("is only read when kind is \"and\" or \"or\", not \"") +
                               Name(mask.kind) + "\"");
  constexpr int64_t kMaxTokens = int64_t{1} << 31;
  switch (mask.kind) {
    case MaskKind::kCustom: {
      const std::string field = Join(path, "allowed");
      const Matrix a = NumberMatrix(Require(m, path, "allowed"), field);
      for (Eigen::Index r = 0; r < a.rows(); ++r)
        for (Eigen::Index c = 0; c < a.cols(); ++c)
          if (a(r, c) != 0.0f && a(r, c) != 1.0f)
            Fail(field + "[" + std::to_string(r) + "][" + std::to_string(c) + "]",
                 "must be 0 or 1");
      mask.allowed = a.cast<uint8_t>();
      break;
    }
    case MaskKind::kSlidingWindow:
      mask.window = Integer(Require(m, path, "window"), Join(path, "window"), 1, kMaxTokens);
      break;
    case MaskKind::kPrefixLm:
      mask.prefix = Integer(Require(m, path, "prefix"), Join(path, "prefix"), 0, kMaxTokens);
      break;
    case MaskKind::kDocument: {
      const std::string field = Join(path, "doc_ids");
      const json& ids = Require(m, path, "doc_ids");
      if (!ids.is_array())
        Fail(field, std::string("must be an array of T integers, not ") + TypeName(ids));
      for (size_t i = 0; i < ids.size(); ++i)
        mask.doc_ids.push_back(Integer(ids[i], Index(field, i), -kMaxTokens, kMaxTokens));
      break;
    }
    case MaskKind::kAnd:
    case MaskKind::kOr: {
      const std::string field = Join(path, "of");
      const json& of = Require(m, path, "of");
      if (!of.is_array() || of.empty())
        Fail(field, std::string("must be a non-empty array of masks, not ") +
                        (of.is_array() ? "an empty array" : TypeName(of)));
      for (size_t i = 0; i < of.size(); ++i)
        mask.of.push_back(ParseMask(of[i], Index(field, i), false));
      break;
    }
    default:
      break;
  }
  return mask;
}

}  // namespace

namespace {

/// "2.05 GiB": bytes in GiB to three digits, as every memory message says it.
std::string GibText(double bytes) {
  std::ostringstream os;
  os.precision(3);
  os << bytes / (1024.0 * 1024 * 1024) << " GiB";
  return os.str();
}

/// What one pass over JSON text finds outside its strings (and the strings' bytes).
struct JsonCounts {
  uint64_t objects = 0, arrays = 0, commas = 0, members = 0, strings = 0, string_bytes = 0;
};

/// Bytes the parsed tree (nlohmann::json, as DomBuilder builds it) of text with these counts
/// takes at most, allocator overhead included, at its peak while it grows. Each value is a
/// 16-byte json in its parent, counted as 40 (a vector grown by doubling holds up to twice its
/// size and copies while it grows; a container is counted twice, once by its comma); an object
/// is a heap std::map plus its bookkeeping (112 bytes), a member a map node with its key string
/// (128), an array a heap std::vector (48), a string longer than the 15 bytes kept inline its
/// own heap block. Measured with /usr/bin/time -v on `attention-lab show` (peak resident set):
/// 20 MB of {} in an array peaks at 1.18 GB (estimated 1.28 GB); 5 MB of {} entries inside a
/// scenario at 325 MB (estimated 325 MB); a 20 MB matrix of zeros at 387 MB (estimated 420 MB).
double JsonTreeBytes(const JsonCounts& n) {
  const double values = static_cast<double>(n.commas + n.objects + n.arrays + 1);
  return values * 40 + static_cast<double>(n.objects) * 112 + static_cast<double>(n.members) * 128 +
         static_cast<double>(n.arrays) * 48 + static_cast<double>(n.strings) * 32 +
         static_cast<double>(n.string_bytes);
}

}  // namespace

namespace {

json ParseJson(const std::string& json_text, DomBuilder& sax, json& root) {
  CheckJsonLimits(json_text);  // before any structure is built: deep nesting would recurse
  if (json::sax_parse(json_text, &sax)) return root;
  if (sax.syntax_byte_) {
    // Line and column of the byte where parsing stopped (1-based, as editors count).
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < *sax.syntax_byte_ && i < json_text.size(); ++i) {
      if (json_text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string detail = sax.error_;
    const size_t colon = detail.find(": ", detail.find("parse error"));
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    throw ScenarioError("", "JSON syntax error at line " + std::to_string(line) + ", column " +
                                std::to_string(col) + ": " + detail);
  }
  // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
  const std::string& what = sax.error_;
  const size_t open = what.find('\''), close = what.rfind('\'');
  if (open == std::string::npos || open == close) Fail(sax.error_path_, what);
  Fail(sax.error_path_, "number " + what.substr(open + 1, close - open - 1) + " is out of range");
}

}  // namespace

void CheckJsonLimits(std::string_view text) {
  if (text.size() > kMaxScenarioFileBytes)
    throw ScenarioError("", "JSON text of " + std::to_string(text.size()) +
                                " bytes, more than the limit of " +
                                std::to_string(kMaxScenarioFileBytes) + " (" +
                                std::to_string(kMaxScenarioFileBytes >> 20) + " MiB)");
  int depth = 0;
  bool in_string = false;
  size_t line = 1, line_start = 0;
  // What the tree will hold, counted on the way (JsonTreeBytes): every value but the first
  // follows a ',' or opens a container's first element; each member has its ':'.
  JsonCounts n;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    } else if (in_string) {
      ++n.string_bytes;
      if (c == '\\')
        ++i;  // an escaped quote or backslash does not end the string
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
      ++n.strings;
    } else if (c == '[' || c == '{') {
      ++(c == '[' ? n.arrays : n.objects);
      if (++depth > kMaxJsonDepth)
        throw ScenarioError("", "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels at line " + std::to_string(line) + ", column " +
                                    std::to_string(i - line_start + 1));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',') {
      ++n.commas;
    } else if (c == ':') {
      ++n.members;
    }
  }
  const double tree = JsonTreeBytes(n);
  if (static_cast<double>(text.size()) + tree > kMaxStageBytes)
    throw ScenarioError(
        "", "JSON text of " + std::to_string(n.commas + 1) + " values or more needs about " +
                GibText(static_cast<double>(text.size()) + tree) + " to read (the text " +
                GibText(static_cast<double>(text.size())) + " + its tree " + GibText(tree) +
                "), more than the " + GibText(kMaxStageBytes) + " limit");
}

std::string ReadScenarioFile(const std::string& path) {
  return ReadFile(path, kMaxScenarioFileBytes, "a scenario or figure file");
}

namespace {

// "positions": the kind, then the kind's own fields (a field of another kind is refused).
PositionsSpec ParsePositions(const json& j) {
  Object(j, "positions");
  PositionsSpec p;
  CheckKeys(j, "positions", {"kind", "layout", "theta", "sign", "slopes", "symmetric"});
  p.kind = Choice<PositionKind>(Require(j, "positions", "kind"), "positions.kind");
  if (p.kind != PositionKind::kRope)
    for (const char* key : {"layout", "theta", "sign"})
      if (j.contains(key))
        Fail(std::string("positions.") + key,
             std::string("is only read when kind is \"rope\", not \"") + Name(p.kind) + "\"");
  if (p.kind != PositionKind::kAlibi)
    for (const char* key : {"slopes", "symmetric"})
      if (j.contains(key))
        Fail(std::string("positions.") + key,
             std::string("is only read when kind is \"alibi\", not \"") + Name(p.kind) + "\"");
  if (j.contains("layout")) p.layout = Choice<RopeLayout>(j["layout"], "positions.layout");
  if (j.contains("theta")) p.theta = Number(j["theta"], "positions.theta");
  if (j.contains("sign")) p.sign = static_cast<int>(Integer(j["sign"], "positions.sign", -1, 1));
  if (j.contains("slopes")) {
    // "paper" or "attention_gym" (a rule), or the slopes themselves, one number per head.
    const json& sl = j["slopes"];
    if (sl.is_array()) {
      if (sl.empty())
        Fail("positions.slopes", "must be \"paper\", \"attention_gym\" or one number per head");
      p.slope_rule = AlibiSlopeRule::kGiven;
      for (size_t h = 0; h < sl.size(); ++h)
        p.slopes.push_back(FiniteFloat(sl[h], Index("positions.slopes", h)));
    } else {
      p.slope_rule = Choice<AlibiSlopeRule>(sl, "positions.slopes");
      if (p.slope_rule == AlibiSlopeRule::kGiven)
        Fail("positions.slopes", "\"given\" is written as the numbers themselves, one per head");
    }
  }
  if (j.contains("symmetric")) p.symmetric = Bool(j["symmetric"], "positions.symmetric");
  return p;
}

}  // namespace

Scenario ParseScenario(const std::string& json_text) {
  json root;
  DomBuilder sax(root);
  const json j = ParseJson(json_text, sax, root);
  struct Scope {  // the readers below look big integer literals up while this parse runs
    explicit Scope(const std::map<std::string, std::string>* m) { t_big_integers = m; }
    ~Scope() { t_big_integers = nullptr; }
  } scope(&sax.big_integers_);
  Object(j, "(scenario)");
  CheckKeys(j, "",
            {"format", "title", "input", "projections", "scaling", "mask", "normalization",
             "dropout", "dtype", "positions"});
  const std::string format = String(Require(j, "", "format"), "format");
  if (format != kScenarioFormat)
    Fail("format",
         "must be \"" + std::string(kScenarioFormat) + "\", got \"" + MessageText(format) + "\"");
  Scenario s;
  if (j.contains("title")) s.title = String(j["title"], "title");
  s.input = ParseInput(Require(j, "", "input"));
  if (s.input.source == InputSource::kQkv) {
    if (j.contains("projections"))
      Fail("projections",
           "is not read when input.source is \"qkv\" (Q, K and V come without X or W); remove "
           "it (the heads are input.heads)");
    if (j["input"].contains("heads"))
      s.projections.heads = Size(j["input"]["heads"], "input.heads");
  } else {
    s.projections = ParseProjections(Require(j, "", "projections"));
  }
  if (s.projections.init == ProjectionInit::kIdentity && s.projections.d_out != 0) {
    const int64_t d_in =
        ValidateScenario(Scenario{"", s.input, ProjectionSpec{}, {}, {}, {}, {}}).d_in;
    if (s.projections.d_out != d_in)
      Fail("projections.d_out",
           "is " + std::to_string(s.projections.d_out) +
               " but init \"identity\" needs d_out = d_in = " + std::to_string(d_in));
  }
  if (j.contains("scaling")) {
    const json& sc = Object(j["scaling"], "scaling");
    CheckKeys(
        sc, "scaling",
        {"sqrt_dk", "multiplier", "softcap", "sink", "sink_form", "softmax_dtype", "scale_at"});
    if (sc.contains("scale_at"))
      s.scaling.scale_at = Choice<ScaleAt>(sc["scale_at"], "scaling.scale_at");
    if (sc.contains("softmax_dtype"))
      s.scaling.softmax_dtype = Choice<SoftmaxDtype>(sc["softmax_dtype"], "scaling.softmax_dtype");
    if (sc.contains("sink_form"))
      s.scaling.sink_form = Choice<SinkForm>(sc["sink_form"], "scaling.sink_form");
    if (sc.contains("sqrt_dk")) s.scaling.sqrt_dk = Bool(sc["sqrt_dk"], "scaling.sqrt_dk");
    if (sc.contains("multiplier"))
      s.scaling.multiplier = Number(sc["multiplier"], "scaling.multiplier");
    if (sc.contains("softcap")) s.scaling.softcap = Number(sc["softcap"], "scaling.softcap");
    if (sc.contains("sink")) {
      const json& sk = sc["sink"];
      if (sk.is_array()) {
        if (sk.empty())
          Fail("scaling.sink", "must be a number or a non-empty array of numbers, one per head");
        for (size_t h = 0; h < sk.size(); ++h)
          s.scaling.sink.push_back(FiniteFloat(sk[h], Index("scaling.sink", h)));
      } else {
        s.scaling.sink.push_back(FiniteFloat(sk, "scaling.sink"));
      }
    }
  }
  if (j.contains("mask")) s.mask = ParseMask(j["mask"], "mask", true);
  if (j.contains("normalization"))
    s.normalization = Choice<Normalization>(j["normalization"], "normalization");
  if (j.contains("dropout")) {
    const json& d = Object(j["dropout"], "dropout");
    CheckKeys(d, "dropout", {"p", "seed"});
    if (d.contains("p")) s.dropout.p = Number(d["p"], "dropout.p");
    s.dropout.seed = OptionalSeed(d, "dropout");
  }
  if (j.contains("dtype")) s.dtype = Choice<Dtype>(j["dtype"], "dtype");
  if (j.contains("positions")) s.positions = ParsePositions(j["positions"]);
  ValidateScenario(s);
  return s;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] ValidateScenario and the memory estimate
// ---------------------------------------------------------------------------------------------

double EstimateStageBytes(const Shape& sh, bool with_dropout, bool text_input, bool out_proj) {
  const double B = sh.B, T = sh.T, d_in = sh.d_in, d_out = sh.d_out, H = sh.H;
  const double d_v = sh.d_v > 0 ? sh.d_v : d_out;  // a Shape built by hand may leave it 0
  // K and V are KV heads wide (kv_heads): narrower than Q with grouped K/V heads.
  const double d_k = sh.dh > 0 ? static_cast<double>(sh.KWidth()) : d_out;
  const double d_kv_v = sh.dh_v > 0 ? static_cast<double>(sh.VWidth()) : d_v;
  double floats = 2 * B * T * d_in                          // X, and the draw it is copied from
                  + d_in * (2 * d_out + d_k + d_kv_v)       // W_query, W_key, W_value, a draw
                  + 4 * d_out                               // their biases
                  + (out_proj ? 2 * d_out * d_out : 0)      // out_proj and its draw
                  + B * T * (d_out + d_k + d_kv_v)          // Q, K, V
                  + B * T * (d_k + d_kv_v)                  // K and V packed (Engine::PackHeads)
                  + T * T                                   // mask (1 byte, counted as 4)
                  + (with_dropout ? 4 : 3) * B * H * T * T  // scores, logits, weights, dropped
                  + 2 * B * T * d_v;                        // context (and before out_proj)
  if (text_input) floats += static_cast<double>(sh.vocab) * d_in;  // the embedding table
  // Not counted: per-thread buffers (each thread's ScoresScratch, RowBlock(T) <= 128 rows of
  // T; Eigen's packing blocks), a few hundredths of the T x T stages wherever they matter.
  return floats * 4.0;
}

namespace {

std::string Gib(double bytes) {
  std::ostringstream os;
  os.precision(3);
  os << bytes / (1024.0 * 1024 * 1024) << " GiB";
  return os.str();
}

// The refusal of a scenario whose stages would not fit in kMaxStageBytes. It names the size
// that is most out of line: for each of T, B, H, d_out, d_in, the factor by which it alone
// would have to shrink for the scenario to fit; the largest factor wins (a size that cannot
// make it fit on its own is not named unless none can; near-ties go to the larger size). So 1024
// heads at T = 2048 blame projections.heads, and T = 10^7 blames the input's length.
[[noreturn]] void FailTooLarge(const Scenario& s, const Shape& sh, double bytes) {
  const InputSpec& in = s.input;
  const bool dropout = s.dropout.p > 0, text = in.source == InputSource::kText;
  const bool identity = s.projections.init == ProjectionInit::kIdentity;
  const std::string values = "input.values";
  struct Size {
    const char* label;
    int64_t Shape::*member;
    std::string field;
  };
  const bool qkv = in.source == InputSource::kQkv, given = in.QkvGiven();
  const bool drawn = in.source == InputSource::kRandn || (qkv && !given);
  const std::string t_field = drawn                             ? "input.length"
                              : in.source == InputSource::kText ? "input.text"
                              : given                           ? "input.Q"
                                                                : values;
  const std::string d_in_field = in.source == InputSource::kMatrix ? values : "input.d_in";
  const std::string d_out_field = qkv        ? (given ? "input.Q" : "input.d_k")
                                  : identity ? d_in_field
                                  : s.projections.init == ProjectionInit::kMatrix
                                      ? "projections.W_query"
                                      : "projections.d_out";
  std::vector<Size> sizes = {{"T", &Shape::T, t_field},
                             {"B", &Shape::B,
                              drawn   ? "input.batch"
                              : given ? "input.Q"
                                      : values},
                             {"H", &Shape::H, qkv ? "input.heads" : "projections.heads"},
                             {"d_in", &Shape::d_in, d_in_field},
                             {"d_out", &Shape::d_out, d_out_field}};
  if (qkv) sizes.push_back({"d_v", &Shape::d_v, given ? "input.V" : "input.d_v"});
  const Size* worst = &sizes[0];
  double worst_factor = 0;
  for (const Size& z : sizes) {
    if (identity && !qkv && z.member == &Shape::d_out) continue;  // d_out is d_in: as d_in
    if (qkv && z.member == &Shape::d_in) continue;                // no X
    auto estimate = [&](double v) {
      Shape t = sh;
      t.*z.member = static_cast<int64_t>(v);
      if (identity && !qkv && z.member == &Shape::d_in) t.d_out = t.d_in;
      if (!qkv) t.d_v = t.d_out;  // V and the context are d_out wide
      if (z.member == &Shape::H || z.member == &Shape::d_out) t.H = std::min(t.H, t.d_out);
      // Head widths follow the changed size; K/V heads (kv_heads) stay at most H.
      t.dh = t.d_out / std::max<int64_t>(t.H, 1);
      t.dh_v = t.d_v / std::max<int64_t>(t.H, 1);
      t.KV = std::min(t.KV, t.H);
      return EstimateStageBytes(t, dropout, text, s.projections.out_proj);
    };
    const double now = static_cast<double>(sh.*z.member);
    if (estimate(1) > kMaxStageBytes) continue;  // this size alone cannot make it fit
    double lo = 1, hi = now;                     // the largest value that fits lies in [lo, hi)
    for (int i = 0; i < 64 && hi - lo > 1; ++i) {
      const double mid = std::floor((lo + hi) / 2);
      (estimate(mid) <= kMaxStageBytes ? lo : hi) = mid;
    }
    const double factor = now / lo;
    // Within 25% (T and d_out of T x d_out terms shrink alike) the larger size is named.
    if (factor > worst_factor * 1.25 ||
        (factor > worst_factor * 0.8 && now > static_cast<double>(sh.*worst->member))) {
      worst = &z;
      worst_factor = factor;
    }
  }
  std::string others;
  for (const Size& z : sizes)
    if (&z != worst)
      others +=
          std::string(others.empty() ? "" : ", ") + z.label + " = " + std::to_string(sh.*z.member);
  Fail(worst->field, std::string(worst->label) + " = " + std::to_string(sh.*worst->member) + " (" +
                         others + ") needs about " + Gib(bytes) + ", more than the " +
                         Gib(kMaxStageBytes) + " limit of a scenario");
}

}  // namespace

namespace {

// Every matrix of `stack` is rows x cols and finite; `field` names the stack ("input.values").
void CheckStack(const MatrixStack& stack, const std::string& field, int64_t rows, int64_t cols,
                const char* shape) {
  for (size_t b = 0; b < stack.size(); ++b) {
    const std::string at = stack.size() > 1 ? Index(field, b) : field;
    if (stack[b].rows() != rows || stack[b].cols() != cols)
      Fail(at, "is " + std::to_string(stack[b].rows()) + " x " + std::to_string(stack[b].cols()) +
                   " but must be " + shape + " = " + std::to_string(rows) + " x " +
                   std::to_string(cols));
    for (Eigen::Index r = 0; r < rows; ++r)
      for (Eigen::Index c = 0; c < cols; ++c)
        if (!std::isfinite(stack[b](r, c))) Fail(Index(Index(at, r), c), "must be a finite number");
  }
}

void CheckTokens(const InputSpec& in, int64_t T, const char* rows_of) {
  if (!in.tokens.empty() && static_cast<int64_t>(in.tokens.size()) != T)
    Fail("input.tokens", "has " + std::to_string(in.tokens.size()) + " labels but there are " +
                             std::to_string(T) + " tokens (rows of " + rows_of + ")");
}

void ValidateQkvInput(const InputSpec& in, Shape& sh) {
  if (in.QkvGiven()) {
    if (in.Q[0].size() == 0) Fail("input.Q", "must hold at least one token of one number");
    sh.B = static_cast<int64_t>(in.Q.size());
    sh.T = in.Q[0].rows();
    const int64_t d_k = in.Q[0].cols();
    for (const auto& [stack, field] : {std::pair{&in.K, "input.K"}, std::pair{&in.V, "input.V"}})
      if (static_cast<int64_t>(stack->size()) != sh.B)
        Fail(field, "has " + std::to_string(stack->size()) + " batch entries but input.Q has " +
                        std::to_string(sh.B));
    CheckStack(in.Q, "input.Q", sh.T, d_k, "T x d_k");
    CheckStack(in.K, "input.K", sh.T, d_k, "T x d_k (the shape of input.Q)");
    if (in.V[0].cols() == 0) Fail("input.V", "must hold at least one number per token");
    CheckStack(in.V, "input.V", sh.T, in.V[0].cols(), "T x d_v");
    CheckTokens(in, sh.T, "input.Q");
    sh.d_out = d_k;
    sh.d_v = in.V[0].cols();
  } else {
    if (in.batch < 1) Fail("input.batch", "must be at least 1");
    if (in.length < 1) Fail("input.length", "must be at least 1");
    if (in.d_k < 1) Fail("input.d_k", "must be at least 1");
    if (in.d_v < 0) Fail("input.d_v", "must be at least 1");
    if (in.order[0] == in.order[1] || in.order[0] == in.order[2] || in.order[1] == in.order[2])
      Fail("input.order", "must list \"query\", \"key\" and \"value\" once each");
    sh.B = in.batch;
    sh.T = in.length;
    sh.d_out = in.d_k;
    sh.d_v = in.d_v > 0 ? in.d_v : in.d_k;
    CheckTokens(in, sh.T, "the draws, input.length");
  }
  sh.d_in = 0;
}

void ValidateInput(const InputSpec& in, Shape& sh) {
  switch (in.source) {
    case InputSource::kMatrix: {
      if (in.values.empty() || in.values[0].size() == 0)
        Fail("input.values", "must hold at least one token of at least one number");
      sh.B = static_cast<int64_t>(in.values.size());
      sh.T = in.values[0].rows();
      sh.d_in = in.values[0].cols();
      for (size_t b = 0; b < in.values.size(); ++b)
        if (in.values[b].rows() != sh.T || in.values[b].cols() != sh.d_in)
          Fail(sh.B > 1 ? Index("input.values", b) : "input.values",
               "batch entries must all have the same T x d_in shape");
      CheckStack(in.values, "input.values", sh.T, sh.d_in, "T x d_in");
      CheckTokens(in, sh.T, "input.values");
      break;
    }
    case InputSource::kText: {
      if (in.text.empty()) Fail("input.text", "must not be empty");
      if (in.d_in < 1) Fail("input.d_in", "must be at least 1");
      const std::vector<std::string> tokens = Tokenize(in.text, in.tokenizer);
      if (tokens.empty())
        Fail("input.text", std::string("has no tokens with the \"") + TokenizerName(in.tokenizer) +
                               "\" tokenizer");
      sh.T = static_cast<int64_t>(tokens.size());
      sh.d_in = in.d_in;
      sh.vocab = static_cast<int64_t>(BuildVocabulary(tokens, in.special_tokens).vocab.size());
      break;
    }
    case InputSource::kRandn: {
      if (in.batch < 1) Fail("input.batch", "must be at least 1");
      if (in.length < 1) Fail("input.length", "must be at least 1");
      if (in.d_in < 1) Fail("input.d_in", "must be at least 1");
      sh.B = in.batch;
      sh.T = in.length;
      sh.d_in = in.d_in;
      break;
    }
    case InputSource::kQkv:
      ValidateQkvInput(in, sh);
      break;
  }
}

// Whether the input draws from the generator (always right after its own input.seed).
bool InputDraws(const InputSpec& in) {
  return in.source == InputSource::kRandn || in.source == InputSource::kText ||
         (in.source == InputSource::kQkv && !in.QkvGiven());
}

// The combinations the numpy generator has no meaning for, and NumPy's seed range.
void ValidateGenerator(const Scenario& s) {
  const InputSpec& in = s.input;
  const ProjectionSpec& p = s.projections;
  if (in.generator != Generator::kNumpy) return;
  const std::string numpy = " with input.generator \"numpy\"";
  if (in.source == InputSource::kText)
    Fail("input.generator", "\"numpy\" has no nn.Embedding: text input needs \"torch\"");
  if (p.init == ProjectionInit::kLinear)
    Fail("projections.init", "\"linear\" (nn.Linear) has no NumPy counterpart" + numpy +
                                 " (use randn, torch_rand for np.random.rand, or matrix)");
  if (s.dropout.p > 0)
    Fail("dropout.p", "must be 0" + numpy + " (nn.Dropout has no NumPy counterpart here)");
  if (s.mask.fill != MaskFill::kNegInf)
    Fail("mask.fill", "must be \"-inf\"" + numpy + " (the NumPy programs add a 0 / -inf mask)");
  const auto check_seed = [&](uint64_t seed, const char* field) {
    if (seed > kNumpyMaxSeed)
      Fail(field, "must be in [0, 2**32 - 1]" + numpy + " (np.random.seed refuses " +
                      (seed >= (uint64_t{1} << 63) ? "negative seeds" : std::to_string(seed)) +
                      ")");
  };
  if (InputDraws(in)) check_seed(in.seed, "input.seed");
  if (p.seed && ProjectionInitDraws(p.init)) check_seed(*p.seed, "projections.seed");
  // Projections drawn before any seed start from DefaultSeed(kNumpy), which the program pins.
}

// projections.kv_heads (0: heads): must divide heads, and only W that are drawn whole or
// given can be grouped. Returns KV.
int64_t ValidateKvHeads(const Scenario& s, const Shape& sh) {
  const ProjectionSpec& p = s.projections;
  if (p.kv_heads == 0 || p.kv_heads == p.heads) return sh.H;
  const std::string f = "projections.kv_heads";
  if (p.kv_heads < 1) Fail(f, "must be at least 1");
  if (s.input.source == InputSource::kQkv)
    Fail(f, "is not read with qkv input (K and V come with input.heads heads)");
  if (p.kv_heads > p.heads || p.heads % p.kv_heads != 0)
    Fail(f, std::to_string(p.kv_heads) + " K/V heads do not divide heads = " +
                std::to_string(p.heads) + " (each K/V head serves heads / kv_heads query heads)");
  if (p.init == ProjectionInit::kIdentity)
    Fail(f,
         "needs W_key and W_value narrower than d_in, which init \"identity\" cannot give "
         "(use \"matrix\" or an init that draws)");
  if (p.per_head)
    Fail(f,
         "cannot group K/V heads with per_head (the wrapper's heads each own their K and V); "
         "turn per_head off");
  return p.kv_heads;
}

void ValidateProjections(const Scenario& s, Shape& sh) {
  const ProjectionSpec& p = s.projections;
  if (s.input.source == InputSource::kQkv) {
    if (p.init != ProjectionInit::kIdentity || p.out_proj || p.bias)
      Fail("projections.init",
           "is not used when input.source is \"qkv\" (no W: Q, K and V come "
           "directly)");
  } else if (p.init == ProjectionInit::kIdentity) {
    sh.d_out = sh.d_in;  // a d_out left over from another init is ignored (the GUI keeps it)
  } else if (p.init == ProjectionInit::kMatrix) {
    sh.d_out = p.W[0].cols();
    // W_key and W_value are checked below, once kv_heads fixes their width.
    const Matrix& m = p.W[0];
    if (m.rows() != sh.d_in || m.size() == 0)
      Fail("projections.W_query", "is " + std::to_string(m.rows()) + " x " +
                                      std::to_string(m.cols()) + " but must be d_in x d_out = " +
                                      std::to_string(sh.d_in) + " x " + std::to_string(sh.d_out));
    if (!m.allFinite()) Fail("projections.W_query", "must hold finite numbers only");
    if (p.d_out != 0 && p.d_out != sh.d_out)
      Fail("projections.d_out", "is " + std::to_string(p.d_out) + " but the W matrices have " +
                                    std::to_string(sh.d_out) + " columns");
  } else {
    if (p.d_out < 1) Fail("projections.d_out", "must be at least 1");
    sh.d_out = p.d_out;
  }
  const bool qkv = s.input.source == InputSource::kQkv;
  const char* heads = qkv ? "input.heads" : "projections.heads";
  const char* d_out = qkv ? "d_k" : "d_out";
  if (p.heads < 1) Fail(heads, "must be at least 1");
  if (sh.d_out % p.heads != 0)
    Fail(heads, std::to_string(p.heads) + " heads do not divide " + d_out + " = " +
                    std::to_string(sh.d_out) + " (each head takes " + d_out + " / heads columns)");
  if (!qkv) sh.d_v = sh.d_out;  // V and the context are as wide as Q and K
  if (sh.d_v % p.heads != 0)
    Fail(heads, std::to_string(p.heads) + " heads do not divide d_v = " + std::to_string(sh.d_v) +
                    " (each head takes d_v / heads columns of V)");
  if (p.out_proj && p.init != ProjectionInit::kLinear)
    Fail("projections.out_proj",
         std::string("needs init \"linear\", not \"") + Name(p.init) + "\"");
  if (p.per_head && (qkv || !ProjectionInitDraws(p.init)))
    Fail("projections.per_head",
         std::string("needs an init that draws (\"torch_rand\", \"randn\" or \"linear\"), not \"") +
             (qkv ? "qkv input" : Name(p.init)) + "\": only drawn weights have a draw order");
  if (p.head_split != HeadSplit::kTranspose && (qkv || p.per_head))
    Fail("projections.head_split",
         qkv ? "is not read with qkv input (Q, K and V come split into input.heads heads)"
             : "cannot be \"view_no_transpose\" with per_head (the wrapper's heads each project "
               "their own columns: nothing is split); turn per_head off");
  sh.H = p.heads;
  sh.dh = sh.d_out / sh.H;
  sh.dh_v = sh.d_v / sh.H;
  if (p.qk_norm) {
    const QkNormSpec& q = *p.qk_norm;
    if (p.head_split != HeadSplit::kTranspose)
      Fail("projections.qk_norm",
           "cannot be used with head_split \"view_no_transpose\" (the norm reads whole heads)");
    if (q.eps && !(std::isfinite(*q.eps) && *q.eps >= 0))
      Fail("projections.qk_norm.eps",
           "must be a finite number of at least 0, got " + json(*q.eps).dump());
    if (!std::isfinite(q.scale))
      Fail("projections.qk_norm.scale", "must be a finite number, got " + json(q.scale).dump());
    if (!q.weight.empty() && static_cast<int64_t>(q.weight.size()) != sh.dh)
      Fail("projections.qk_norm.weight", std::to_string(q.weight.size()) +
                                             " numbers for heads of " + std::to_string(sh.dh) +
                                             " dimensions (one per dimension of a head)");
  }
  sh.KV = ValidateKvHeads(s, sh);
  if (p.init == ProjectionInit::kMatrix && !qkv)
    for (Projection w : {Projection::kKey, Projection::kValue}) {
      const Matrix& m = p.W[static_cast<int>(w)];
      const std::string field = std::string("projections.W_") + Name(w);
      const int64_t cols = w == Projection::kKey ? sh.KWidth() : sh.VWidth();
      const std::string want =
          sh.KV == sh.H ? "d_in x d_out = " : "d_in x (kv_heads * d_out / heads) = ";
      if (m.rows() != sh.d_in || m.cols() != cols || m.size() == 0)
        Fail(field, "is " + std::to_string(m.rows()) + " x " + std::to_string(m.cols()) +
                        " but must be " + want + std::to_string(sh.d_in) + " x " +
                        std::to_string(cols));
      if (!m.allFinite()) Fail(field, "must hold finite numbers only");
    }
}

}  // namespace

std::vector<WeightDraw> ProjectionDraws(const ProjectionSpec& p, const Shape& sh) {
  std::vector<WeightDraw> draws;
  if (!ProjectionInitDraws(p.init)) return draws;
  if (!p.per_head) {
    for (Projection name : p.order)  // W_key, W_value: KV * dh columns (GQA)
      draws.push_back({name, 0, name == Projection::kQuery ? sh.d_out : sh.KWidth()});
    return draws;
  }
  for (int64_t h = 0; h < sh.H; ++h)
    for (Projection name : p.order) draws.push_back({name, h * sh.dh, sh.dh});
  return draws;
}

std::vector<int64_t> DropoutDrawOrder(const ProjectionSpec& p, const Shape& sh) {
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(sh.B * sh.H));
  if (!p.per_head) {
    for (int64_t m = 0; m < sh.B * sh.H; ++m) order.push_back(m);
    return order;
  }
  for (int64_t h = 0; h < sh.H; ++h)
    for (int64_t b = 0; b < sh.B; ++b) order.push_back(b * sh.H + h);
  return order;
}

StageCell HeadSplitSource(HeadSplit split, int64_t T, int64_t width, int64_t dh, int64_t r,
                          int64_t c) {
  if (split == HeadSplit::kTranspose) return {r, c};
  // q.view(B, n, T, dh): head c / dh's row r starts at flat (c / dh) * T * dh + r * dh.
  const int64_t f = (c / dh) * T * dh + r * dh + c % dh;
  return {f / width, f % width};
}

StageCell HeadSplitTarget(HeadSplit split, int64_t T, int64_t width, int64_t dh, StageCell cell) {
  if (split == HeadSplit::kTranspose) return cell;
  const int64_t f = cell.row * width + cell.col;
  const int64_t h = f / (T * dh), in_head = f % (T * dh);
  return {in_head / dh, h * dh + in_head % dh};
}

std::string KvGroupLegend(const Shape& sh, int64_t g) {
  const int64_t group = sh.H / sh.Kv();
  return "K/V head " + std::to_string(g) + " of " + std::to_string(sh.Kv()) +
         ", shared by query heads " + std::to_string(g * group) + ".." +
         std::to_string((g + 1) * group - 1);
}

int64_t KvBytesPerToken(const Shape& sh, int64_t kv_heads, int64_t bytes_per_value) {
  return kv_heads * (sh.dh + sh.dh_v) * bytes_per_value;
}

uint64_t DefaultSeed(Generator generator) {
  return generator == Generator::kNumpy ? 0 : TorchGenerator::kDefaultSeed;
}

UnseededDraw FirstUnseededDraw(const Scenario& s) {
  if (InputDraws(s.input)) return UnseededDraw::kNone;  // seeded: everything after continues
  if (ProjectionInitDraws(s.projections.init))
    return s.projections.seed ? UnseededDraw::kNone : UnseededDraw::kProjections;
  return s.dropout.p > 0 && !s.dropout.seed ? UnseededDraw::kDropout : UnseededDraw::kNone;
}

const char* UnseededText(Generator generator) {
  return generator == Generator::kNumpy ? "unseeded: seed 0 (NumPy has no default seed)"
                                        : "unseeded: PyTorch's default seed";
}

namespace {

// What a mask needs to match T (custom: T x T of 0/1; document: T ids), its "of" recursively.
void ValidateMask(const MaskSpec& mask, const std::string& path, int64_t T) {
  if (mask.kind == MaskKind::kCustom) {
    const std::string field = path + ".allowed";
    if (mask.allowed.rows() != T || mask.allowed.cols() != T)
      Fail(field, "is " + std::to_string(mask.allowed.rows()) + " x " +
                      std::to_string(mask.allowed.cols()) +
                      " but must be T x T = " + std::to_string(T) + " x " + std::to_string(T));
    for (Eigen::Index r = 0; r < T; ++r)
      for (Eigen::Index c = 0; c < T; ++c)
        if (mask.allowed(r, c) > 1)
          Fail(field + "[" + std::to_string(r) + "][" + std::to_string(c) + "]", "must be 0 or 1");
  }
  if (mask.kind == MaskKind::kSlidingWindow && mask.window < 1)
    Fail(path + ".window",
         "must be at least 1 (the query's own key), got " + std::to_string(mask.window));
  if (mask.kind == MaskKind::kPrefixLm && mask.prefix < 0)
    Fail(path + ".prefix", "must be at least 0, got " + std::to_string(mask.prefix));
  if (mask.kind == MaskKind::kDocument && static_cast<int64_t>(mask.doc_ids.size()) != T)
    Fail(path + ".doc_ids", "has " + std::to_string(mask.doc_ids.size()) +
                                " ids but must have one per token, T = " + std::to_string(T));
  if ((mask.kind == MaskKind::kAnd || mask.kind == MaskKind::kOr) && mask.of.empty())
    Fail(path + ".of", "must list at least one mask");
  for (size_t i = 0; i < mask.of.size(); ++i)
    ValidateMask(mask.of[i], path + ".of[" + std::to_string(i) + "]", T);
}

// scaling.softcap and scaling.sink: their values, and the normalizations a sink has a meaning
// for (gpt-oss's sink is one more column of a softmax).
void ValidateScoreModifiers(const Scenario& s, const Shape& sh) {
  const ScalingSpec& sc = s.scaling;
  if (sc.softcap) {
    const double c = *sc.softcap;
    if (!(std::isfinite(c) && c > 0 && static_cast<float>(c) > 0 &&
          std::isfinite(static_cast<float>(c))))
      Fail("scaling.softcap",
           "must be a number c > 0 (finite and not 0 in float32): logits = "
           "c * tanh(logits / c), got " +
               json(c).dump());
  }
  if (sc.softmax_dtype == SoftmaxDtype::kFloat32 && !IsLowPrecision(s.dtype))
    Fail("scaling.softmax_dtype", std::string("\"float32\" upcasts the softmax of a bfloat16 or "
                                              "float16 scenario; dtype is \"") +
                                      Name(s.dtype) + "\"");
  if (sc.sink_form != SinkForm::kConcat && sc.sink.empty())
    Fail("scaling.sink_form",
         std::string("\"") + Name(sc.sink_form) + "\" needs an attention sink (scaling.sink)");
  if (sc.sink.empty()) return;
  for (size_t h = 0; h < sc.sink.size(); ++h)
    if (!std::isfinite(static_cast<float>(sc.sink[h])))
      Fail(sc.sink.size() == 1 ? "scaling.sink" : Index("scaling.sink", h),
           "must be finite in float32, got " + json(sc.sink[h]).dump());
  if (sc.sink.size() != 1 && static_cast<int64_t>(sc.sink.size()) != sh.H)
    Fail("scaling.sink", "has " + std::to_string(sc.sink.size()) +
                             " logits but must be one number or one per head (heads = " +
                             std::to_string(sh.H) + ")");
  if (s.normalization != Normalization::kSoftmax)
    Fail("scaling.sink", std::string("needs normalization \"softmax\" (the sink is one more "
                                     "column of the softmax), not \"") +
                             Name(s.normalization) + "\"");
}

}  // namespace

std::vector<double> AlibiSlopes(int64_t H) {
  // The slopes of n heads, n a power of two: start, start^2, ..., start^n, start = 2^(-8/n)
  // (the reference code's 2 ** (-2 ** -(log2(n) - 3)), then start * ratio ** i).
  auto power_of_2 = [](int64_t n) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
    std::vector<double> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(start * std::pow(start, static_cast<double>(i)));
    return out;
  };
  int64_t closest = 1;
  while (closest * 2 <= H) closest *= 2;
  std::vector<double> slopes = power_of_2(closest);
  if (closest == H) return slopes;
  const std::vector<double> twice = power_of_2(2 * closest);
  for (int64_t k = 0; k < H - closest; ++k) slopes.push_back(twice[static_cast<size_t>(2 * k)]);
  return slopes;
}

std::vector<double> AttentionGymSlopes(int64_t H) {
  // attention-gym's alibi_mod: scale = exp2(-((h + 1) * 8.0 / H)) on an int32 head index, so
  // in float32: the exponent's product and quotient each rounded to float32, then the power
  // rounded to float32 (computed here in double: correctly rounded).
  std::vector<double> out;
  for (int64_t h = 0; h < H; ++h) {
    const float e = -((static_cast<float>(h + 1) * 8.0f) / static_cast<float>(H));
    out.push_back(static_cast<float>(std::exp2(static_cast<double>(e))));
  }
  return out;
}

std::vector<double> AlibiSlopesOf(const PositionsSpec& p, int64_t H) {
  switch (p.slope_rule) {
    case AlibiSlopeRule::kAttentionGym:
      return AttentionGymSlopes(H);
    case AlibiSlopeRule::kGiven:
      return p.slopes;
    case AlibiSlopeRule::kPaper:
      break;
  }
  return AlibiSlopes(H);
}

namespace {

void ValidatePositions(const Scenario& s, const Shape& sh) {
  const PositionsSpec& p = s.positions;
  if (p.kind == PositionKind::kRope) {
    if (sh.dh % 2 != 0)
      Fail("positions.kind",
           "\"rope\" rotates pairs of dimensions, so the head size must be even; it is " +
               std::to_string(sh.dh) + " (d_out " + std::to_string(sh.d_out) + " / " +
               std::to_string(sh.H) + " heads)");
    if (!(std::isfinite(p.theta) && p.theta > 0))
      Fail("positions.theta", "must be a finite number above 0, got " + json(p.theta).dump());
    if (p.sign != 1 && p.sign != -1)
      Fail("positions.sign", "must be 1 or -1, got " + std::to_string(p.sign));
  }
  if (p.kind == PositionKind::kAlibi && p.slope_rule == AlibiSlopeRule::kGiven &&
      static_cast<int64_t>(p.slopes.size()) != sh.H)
    Fail("positions.slopes",
         "has " + std::to_string(p.slopes.size()) +
             " slopes but must have one per head (heads = " + std::to_string(sh.H) + ")");
  if (p.kind == PositionKind::kSinusoidal && s.input.source == InputSource::kQkv)
    Fail("positions.kind",
         "\"sinusoidal\" adds its encoding to X, and a qkv input has no X (use \"rope\", "
         "which rotates Q and K)");
}

}  // namespace

Shape ValidateScenario(const Scenario& s) {
  Shape sh;
  ValidateInput(s.input, sh);
  ValidateProjections(s, sh);
  ValidateGenerator(s);
  if (!std::isfinite(s.scaling.multiplier)) Fail("scaling.multiplier", "must be a finite number");
  ValidateScoreModifiers(s, sh);
  ValidateMask(s.mask, "mask", sh.T);
  if (!(s.dropout.p >= 0.0 && s.dropout.p < 1.0))
    Fail("dropout.p", "must be in [0, 1), got " + json(s.dropout.p).dump());
  ValidatePositions(s, sh);
  const double bytes = ScenarioStageBytes(s, sh);
  if (bytes > kMaxStageBytes) FailTooLarge(s, sh, bytes);
  return sh;
}

double ScenarioStageBytes(const Scenario& s, const Shape& sh) {
  // float64: the double stages (twice the size) are kept beside the float32 ones.
  // RoPE keeps Q and K before and after the rotation: Q_rot (B x T x d_out) and K_rot
  // (B x T x kv_heads * dh, narrower with grouped K/V heads) more.
  const double k_width = sh.dh > 0 ? static_cast<double>(sh.KWidth()) : sh.d_out;
  const double rope = s.positions.kind == PositionKind::kRope
                          ? static_cast<double>(sh.B) * sh.T * (sh.d_out + k_width) * 4
                          : 0;
  return (EstimateStageBytes(sh, s.dropout.p > 0, s.input.source == InputSource::kText,
                             s.projections.out_proj) +
          rope) *
         (s.dtype == Dtype::kFloat64 ? 3.0 : 1.0);
}

void CheckCommandMemory(const Scenario& s, const Shape& shape, const std::string& what,
                        double extra_bytes) {
  const double stages = ScenarioStageBytes(s, shape);
  if (stages + extra_bytes <= kMaxStageBytes) return MemoryChecksPassed();
  throw std::invalid_argument(what + " needs about " + Gib(stages + extra_bytes) + " (the stages " +
                              Gib(stages) + " + " + Gib(extra_bytes) +
                              " of its own), more than the " + Gib(kMaxStageBytes) + " limit");
}

namespace {
void (*g_memory_checks_passed)() = nullptr;
}  // namespace

void SetMemoryChecksPassedHook(void (*hook)()) { g_memory_checks_passed = hook; }

void MemoryChecksPassed() {
  if (g_memory_checks_passed) g_memory_checks_passed();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] WriteScenario
// ---------------------------------------------------------------------------------------------
namespace {

using detail::MatrixJson;  // the shortest float32 text, shared with the dump

json SeedJson(uint64_t seed) { return json(seed); }

json StackJson(const MatrixStack& stack) {
  if (stack.size() == 1) return MatrixJson(stack[0]);
  json out = json::array();
  for (const Matrix& m : stack) out.push_back(MatrixJson(m));
  return out;
}

void WriteQkvInput(const Scenario& s, json& in) {
  const InputSpec& i = s.input;
  if (i.QkvGiven()) {
    in["Q"] = StackJson(i.Q);
    in["K"] = StackJson(i.K);
    in["V"] = StackJson(i.V);
  } else {
    in["seed"] = SeedJson(i.seed);
    in["batch"] = i.batch;
    in["length"] = i.length;
    in["d_k"] = i.d_k;
    if (i.d_v != 0 && i.d_v != i.d_k) in["d_v"] = i.d_v;
    in["order"] = {Name(i.order[0]), Name(i.order[1]), Name(i.order[2])};
  }
  if (!i.tokens.empty()) in["tokens"] = i.tokens;
  if (s.projections.heads != 1) in["heads"] = s.projections.heads;
}

json ProjectionsJson(const ProjectionSpec& p);
void WriteStages(const Scenario& s, json& j);

}  // namespace

std::string WriteScenario(const Scenario& s) {
  json j = json::object();
  j["format"] = kScenarioFormat;
  if (!s.title.empty()) j["title"] = s.title;
  json in = json::object();
  in["source"] = Name(s.input.source);
  switch (s.input.source) {
    case InputSource::kMatrix:
      in["values"] = StackJson(s.input.values);
      if (!s.input.tokens.empty()) in["tokens"] = s.input.tokens;
      break;
    case InputSource::kText:
      in["text"] = s.input.text;
      in["tokenizer"] = TokenizerName(s.input.tokenizer);
      in["d_in"] = s.input.d_in;
      in["seed"] = SeedJson(s.input.seed);
      if (s.input.special_tokens != InputSpec{}.special_tokens)
        in["special_tokens"] = s.input.special_tokens;
      break;
    case InputSource::kRandn:
      in["batch"] = s.input.batch;
      in["length"] = s.input.length;
      in["d_in"] = s.input.d_in;
      in["seed"] = SeedJson(s.input.seed);
      break;
    case InputSource::kQkv:
      WriteQkvInput(s, in);
      break;
  }
  if (s.input.generator != Generator::kTorch) in["generator"] = Name(s.input.generator);
  j["input"] = in;
  if (s.input.source != InputSource::kQkv) j["projections"] = ProjectionsJson(s.projections);
  WriteStages(s, j);
  return j.dump(2) + "\n";
}

namespace {

json ProjectionsJson(const ProjectionSpec& p) {
  json pj = json::object();
  pj["init"] = Name(p.init);
  if (p.init != ProjectionInit::kIdentity) {
    pj["d_out"] = p.init == ProjectionInit::kMatrix ? p.W[0].cols() : p.d_out;
  }
  pj["seed"] = p.seed ? SeedJson(*p.seed) : json(nullptr);
  pj["order"] = {Name(p.order[0]), Name(p.order[1]), Name(p.order[2])};
  if (p.init == ProjectionInit::kLinear) {
    pj["bias"] = p.bias;
    pj["out_proj"] = p.out_proj && !p.out_proj_bias ? json{{"bias", false}} : json(p.out_proj);
  }
  pj["heads"] = p.heads;
  if (p.kv_heads != 0 && p.kv_heads != p.heads) pj["kv_heads"] = p.kv_heads;
  if (p.per_head) pj["per_head"] = true;
  if (p.head_split != HeadSplit::kTranspose) pj["head_split"] = Name(p.head_split);
  if (p.qk_norm) {
    json q = json::object();
    if (p.qk_norm->eps) q["eps"] = *p.qk_norm->eps;
    if (!p.qk_norm->weight.empty()) q["weight"] = p.qk_norm->weight;
    q["order"] = p.qk_norm->after_rope ? "after_rope" : "before_rope";
    if (p.qk_norm->scale != 1.0) q["scale"] = p.qk_norm->scale;
    pj["qk_norm"] = q;
  }
  if (p.init == ProjectionInit::kMatrix) {
    pj["W_query"] = MatrixJson(p.W[0]);
    pj["W_key"] = MatrixJson(p.W[1]);
    pj["W_value"] = MatrixJson(p.W[2]);
  }
  return pj;
}

// A mask as the format writes it: its kind, the kind's own fields, masked_rows when not nan.
json MaskJson(const MaskSpec& mask) {
  json mj = {{"kind", Name(mask.kind)}};
  switch (mask.kind) {
    case MaskKind::kCustom: {
      json rows = json::array();
      for (Eigen::Index r = 0; r < mask.allowed.rows(); ++r) {
        json row = json::array();
        for (Eigen::Index c = 0; c < mask.allowed.cols(); ++c)
          row.push_back(int(mask.allowed(r, c)));
        rows.push_back(row);
      }
      mj["allowed"] = rows;
      break;
    }
    case MaskKind::kSlidingWindow:
      mj["window"] = mask.window;
      break;
    case MaskKind::kPrefixLm:
      mj["prefix"] = mask.prefix;
      break;
    case MaskKind::kDocument:
      mj["doc_ids"] = mask.doc_ids;
      break;
    case MaskKind::kAnd:
    case MaskKind::kOr:
      mj["of"] = json::array();
      for (const MaskSpec& part : mask.of) mj["of"].push_back(MaskJson(part));
      break;
    default:
      break;
  }
  if (mask.masked_rows != MaskedRows::kNan) mj["masked_rows"] = Name(mask.masked_rows);
  if (mask.align != MaskAlign::kBottomRight) mj["align"] = Name(mask.align);
  if (mask.fill != MaskFill::kNegInf) mj["fill"] = Name(mask.fill);
  return mj;
}

// scaling, mask, normalization and dropout.
void WriteStages(const Scenario& s, json& j) {
  j["scaling"] = {{"sqrt_dk", s.scaling.sqrt_dk}, {"multiplier", s.scaling.multiplier}};
  if (s.scaling.softcap) j["scaling"]["softcap"] = *s.scaling.softcap;
  if (s.scaling.sink.size() == 1) j["scaling"]["sink"] = s.scaling.sink[0];
  if (s.scaling.sink.size() > 1) j["scaling"]["sink"] = s.scaling.sink;
  if (s.scaling.sink_form != SinkForm::kConcat)
    j["scaling"]["sink_form"] = Name(s.scaling.sink_form);
  if (s.scaling.softmax_dtype != SoftmaxDtype::kSame)
    j["scaling"]["softmax_dtype"] = Name(s.scaling.softmax_dtype);
  if (s.scaling.scale_at != ScaleAt::kScores) j["scaling"]["scale_at"] = Name(s.scaling.scale_at);
  j["mask"] = MaskJson(s.mask);
  j["normalization"] = Name(s.normalization);
  j["dropout"] = {{"p", s.dropout.p},
                  {"seed", s.dropout.seed ? SeedJson(*s.dropout.seed) : json(nullptr)}};
  if (s.dtype != Dtype::kFloat32) j["dtype"] = Name(s.dtype);
  const PositionsSpec& p = s.positions;
  if (p.kind != PositionKind::kNone) {
    json pj = {{"kind", Name(p.kind)}};
    if (p.kind == PositionKind::kRope) {
      pj["layout"] = Name(p.layout);
      pj["theta"] = p.theta;
      pj["sign"] = p.sign;
    }
    if (p.kind == PositionKind::kAlibi) {  // written only when not the defaults
      if (p.slope_rule == AlibiSlopeRule::kGiven) {
        json given = json::array();  // read as float32: written as the shortest float32 text
        for (double m : p.slopes) given.push_back(detail::FloatJson(static_cast<float>(m)));
        pj["slopes"] = given;
      } else if (p.slope_rule != AlibiSlopeRule::kPaper) {
        pj["slopes"] = Name(p.slope_rule);
      }
      if (p.symmetric) pj["symmetric"] = true;
    }
    j["positions"] = pj;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] comparisons
// ---------------------------------------------------------------------------------------------
namespace {

template <typename M>
bool SameMatrix(const M& a, const M& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  // Bitwise, so that -0.0 and 0.0 differ exactly as they would in a file.
  return a.size() == 0 ||
         std::memcmp(a.data(), b.data(), sizeof(typename M::Scalar) * a.size()) == 0;
}

bool SameStack(const MatrixStack& a, const MatrixStack& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!SameMatrix(a[i], b[i])) return false;
  return true;
}

}  // namespace

bool SameInput(const InputSpec& a, const InputSpec& b) {
  if (a.source != b.source || a.generator != b.generator) return false;
  switch (a.source) {
    case InputSource::kMatrix:
      return a.tokens == b.tokens && SameStack(a.values, b.values);
    case InputSource::kText:
      return a.text == b.text && a.tokenizer == b.tokenizer && a.d_in == b.d_in &&
             a.seed == b.seed && a.special_tokens == b.special_tokens;
    case InputSource::kRandn:
      return a.batch == b.batch && a.length == b.length && a.d_in == b.d_in && a.seed == b.seed;
    case InputSource::kQkv:
      return a.QkvGiven() == b.QkvGiven() && a.tokens == b.tokens &&
             (a.QkvGiven() ? SameStack(a.Q, b.Q) && SameStack(a.K, b.K) && SameStack(a.V, b.V)
                           : a.batch == b.batch && a.length == b.length && a.d_k == b.d_k &&
                                 (a.d_v ? a.d_v : a.d_k) == (b.d_v ? b.d_v : b.d_k) &&
                                 a.order == b.order && a.seed == b.seed);
  }
  return false;
}

QkScale QkScaleOf(const ScalingSpec& scaling, int64_t dh) {
  // _scaled_dot_product_attention_math: calculate_scale (the given scale, in double), then its
  // square root; a negative scale multiplies q by -sqrt(|scale|) and k by sqrt(|scale|).
  const double scale = scaling.sqrt_dk ? scaling.multiplier / std::sqrt(static_cast<double>(dh))
                                       : scaling.multiplier;
  const double f = std::sqrt(std::fabs(scale));
  return {scale < 0 ? 0.0 - f : f, f};
}

double QkNormEps(const QkNormSpec& q, Dtype d) {
  if (q.eps) return *q.eps;
  switch (d) {
    case Dtype::kFloat64:
      return std::numeric_limits<double>::epsilon();
    case Dtype::kBfloat16:
      return 0.0078125;  // 2^-7
    case Dtype::kFloat16:
      return 0.0009765625;  // 2^-10
    default:
      return std::numeric_limits<float>::epsilon();
  }
}

bool SameProjections(const ProjectionSpec& a, const ProjectionSpec& b) {
  const auto kv = [](const ProjectionSpec& p) { return p.kv_heads ? p.kv_heads : p.heads; };
  if (a.init != b.init || a.heads != b.heads || a.seed != b.seed || a.order != b.order ||
      a.per_head != b.per_head || kv(a) != kv(b) || a.head_split != b.head_split ||
      a.qk_norm != b.qk_norm)
    return false;
  switch (a.init) {
    case ProjectionInit::kIdentity:
      return true;
    case ProjectionInit::kMatrix:
      for (int i = 0; i < 3; ++i)
        if (!SameMatrix(a.W[i], b.W[i])) return false;
      return true;
    case ProjectionInit::kLinear:
      return a.d_out == b.d_out && a.bias == b.bias && a.out_proj == b.out_proj &&
             (!a.out_proj || a.out_proj_bias == b.out_proj_bias);
    default:
      return a.d_out == b.d_out;
  }
}

bool SameLogitSettings(const Scenario& a, const Scenario& b) {
  return a.scaling.sqrt_dk == b.scaling.sqrt_dk && a.scaling.multiplier == b.scaling.multiplier &&
         a.scaling.scale_at == b.scaling.scale_at && a.scaling.softcap == b.scaling.softcap &&
         (a.positions.kind == PositionKind::kAlibi) == (b.positions.kind == PositionKind::kAlibi) &&
         (a.positions.kind != PositionKind::kAlibi || SamePositions(a.positions, b.positions)) &&
         SameMask(a.mask, b.mask);
}

bool SameMask(const MaskSpec& a, const MaskSpec& b) {
  if (a.kind != b.kind || a.masked_rows != b.masked_rows || a.align != b.align ||
      a.fill != b.fill || a.of.size() != b.of.size())
    return false;
  for (size_t i = 0; i < a.of.size(); ++i)
    if (!SameMask(a.of[i], b.of[i])) return false;
  switch (a.kind) {
    case MaskKind::kCustom:
      return SameMatrix(a.allowed, b.allowed);
    case MaskKind::kSlidingWindow:
      return a.window == b.window;
    case MaskKind::kPrefixLm:
      return a.prefix == b.prefix;
    case MaskKind::kDocument:
      return a.doc_ids == b.doc_ids;
    default:
      return true;
  }
}

std::string MaskName(const MaskSpec& mask) {
  switch (mask.kind) {
    case MaskKind::kSlidingWindow:
      return "sliding window W = " + std::to_string(mask.window);
    case MaskKind::kPrefixLm:
      return "prefix-LM P = " + std::to_string(mask.prefix);
    case MaskKind::kDocument:
      return "documents";
    case MaskKind::kAnd:
    case MaskKind::kOr:
      return std::string(Name(mask.kind)) + " of " + std::to_string(mask.of.size()) + " masks";
    default:
      return Name(mask.kind);
  }
}

std::string MaskLegend(const MaskSpec& mask) {
  switch (mask.kind) {
    case MaskKind::kNone:
      return "every query sees every key";
    case MaskKind::kCausal:
      return "each query sees itself and earlier keys";
    case MaskKind::kCustom:
      return "1 allowed, 0 masked";
    case MaskKind::kSlidingWindow:
      return std::to_string(mask.window) + (mask.window == 1 ? " key" : " keys") +
             ", this one included";
    case MaskKind::kPrefixLm:
      return mask.prefix > 0 ? "keys 0.." + std::to_string(mask.prefix - 1) +
                                   " seen by every query, causal after"
                             : "no prefix: causal";
    case MaskKind::kDocument:
      return "causal within a document, nothing across";
    case MaskKind::kAnd:
      return "allowed where every mask of the list allows";
    case MaskKind::kOr:
      return "allowed where any mask of the list allows";
  }
  return "";
}

std::string MaskedRowsLegend(MaskedRows rows) {
  return rows == MaskedRows::kZero ? "0 weights (PyTorch >= 2.5's scaled_dot_product_attention)"
                                   : "nan weights (0 / 0, the notebooks' softmax)";
}

MaskMatrix AllowedCells(const MaskSpec& mask, int64_t T) {
  if (mask.kind == MaskKind::kCustom) {
    if (mask.allowed.rows() != T || mask.allowed.cols() != T)
      throw std::invalid_argument("mask.allowed is not T x T = " + std::to_string(T) + " x " +
                                  std::to_string(T));
    return mask.allowed;
  }
  if (mask.kind == MaskKind::kDocument && static_cast<int64_t>(mask.doc_ids.size()) != T)
    throw std::invalid_argument("mask.doc_ids does not hold T = " + std::to_string(T) + " ids");
  MaskMatrix out(T, T);
  if (mask.kind == MaskKind::kAnd || mask.kind == MaskKind::kOr) {
    out.setConstant(mask.kind == MaskKind::kAnd ? 1 : 0);
    for (const MaskSpec& part : mask.of) {
      const MaskMatrix cells = AllowedCells(part, T);
      if (mask.kind == MaskKind::kAnd)
        out = out.cwiseMin(cells);
      else
        out = out.cwiseMax(cells);
    }
    return out;
  }
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) {
      bool allowed = true;  // none
      switch (mask.kind) {
        case MaskKind::kCausal:
          allowed = j <= i;
          break;
        case MaskKind::kSlidingWindow:  // keys i - W + 1 .. i: W keys, the query's own included
          allowed = j <= i && i - j < mask.window;
          break;
        case MaskKind::kPrefixLm:  // the prefix is seen by every query, causal after
          allowed = j <= i || j < mask.prefix;
          break;
        case MaskKind::kDocument:  // causal within a document, nothing across
          allowed = j <= i &&
                    mask.doc_ids[static_cast<size_t>(i)] == mask.doc_ids[static_cast<size_t>(j)];
          break;
        default:
          break;
      }
      out(i, j) = allowed ? 1 : 0;
    }
  return out;
}

bool SamePositions(const PositionsSpec& a, const PositionsSpec& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == PositionKind::kRope)
    return a.layout == b.layout && a.theta == b.theta && a.sign == b.sign;
  if (a.kind == PositionKind::kAlibi)
    return a.slope_rule == b.slope_rule && a.slopes == b.slopes && a.symmetric == b.symmetric;
  return true;
}

std::string PositionsName(const PositionsSpec& p) {
  if (p.kind == PositionKind::kAlibi) {
    std::string name = "ALiBi";
    std::vector<std::string> parts;
    if (p.slope_rule == AlibiSlopeRule::kAttentionGym) parts.push_back("attention-gym's slopes");
    if (p.slope_rule == AlibiSlopeRule::kGiven) parts.push_back("given slopes");
    if (p.symmetric) parts.push_back("symmetric");
    for (size_t k = 0; k < parts.size(); ++k) name += (k ? ", " : " (") + parts[k];
    return parts.empty() ? name : name + ")";
  }
  if (p.kind != PositionKind::kRope) return Name(p.kind);
  std::ostringstream os;
  os << "RoPE (" << (p.layout == RopeLayout::kSplitHalves ? "split halves" : "interleaved")
     << ", θ = " << p.theta << (p.sign < 0 ? ", sign −1" : "") << ")";
  return os.str();
}

bool operator==(const Scenario& a, const Scenario& b) {
  return a.title == b.title && SamePositions(a.positions, b.positions) &&
         SameInput(a.input, b.input) && SameProjections(a.projections, b.projections) &&
         SameLogitSettings(a, b) && a.normalization == b.normalization &&
         a.scaling.sink == b.scaling.sink && a.scaling.sink_form == b.scaling.sink_form &&
         a.scaling.softmax_dtype == b.scaling.softmax_dtype && a.dropout.p == b.dropout.p &&
         a.dropout.seed == b.dropout.seed && a.dtype == b.dtype;
}

}  // namespace attnlab
