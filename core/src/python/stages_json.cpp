// stages_json.cpp: see stages_json.h.
//
// [SECTION] The streaming JSON writer and the stats
// [SECTION] The stages' keys
// [SECTION] WriteStagesJson, DumpStages, WriteStagesJsonWithGradients
#include "attnlab/python/stages_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "attnlab/base/text.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/model/stats.h"
#include "base/json_matrix.h"

namespace attnlab {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The streaming JSON writer and the stats
// ---------------------------------------------------------------------------------------------

// The dump written as it goes, without a JSON tree: at T = 4096 a tree of the three T x T
// stages would take several times the stages themselves (and its destructor allocates, which
// turns an out-of-memory into an abort). Output is buffered and handed to the stream in 1 MiB
// pieces. Keys in byte order, as the tree (a std::map) wrote them.
class StreamWriter {
 public:
  explicit StreamWriter(std::ostream& os) : os_(os) { buf_.reserve(kChunk + 64); }
  ~StreamWriter() { Flush(); }

  void Raw(std::string_view text) {
    buf_.append(text);
    if (buf_.size() >= kChunk) Flush();
  }
  // The same text as detail::FloatJson's value dumps (ShortestFloat), whole values as 1.0 so
  // every float stays a JSON float; nan, inf, -inf as strings (the spec's convention).
  void Float(float v) {
    const std::string text = ShortestFloat(v);  // short: no allocation
    if (!std::isfinite(v)) {
      Raw("\"" + text + "\"");
    } else {
      Raw(text);
      if (text.find_first_of(".e") == std::string::npos) Raw(".0");
    }
  }
  void Int(int64_t v) { Raw(std::to_string(v)); }
  // A double's shortest round-trip text (17 digits at most), whole values as 1.0; nan, inf,
  // -inf as strings.
  void Double(double v) {
    if (!std::isfinite(v)) {
      Raw(std::isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"");
      return;
    }
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    const std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
    Raw(text);
    if (text.find_first_of(".e") == std::string_view::npos) Raw(".0");
  }
  void String(const std::string& s) { Raw(json(s).dump()); }
  void Key(const char* key) {
    Raw(first_key_ ? "{\"" : ",\"");
    first_key_ = false;
    Raw(key);
    Raw("\":");
  }
  void End() { Raw("}\n"); }

  template <typename M>
  void Matrix2(const M& m) {
    Raw("[");
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      Raw(r ? ",[" : "[");
      for (Eigen::Index c = 0; c < m.cols(); ++c) {
        if (c) Raw(",");
        Number(m(r, c));
      }
      Raw("]");
    }
    Raw("]");
  }
  template <typename V>
  void Vector(const V& v) {
    Raw("[");
    for (Eigen::Index i = 0; i < v.size(); ++i) {
      if (i) Raw(",");
      Number(v[i]);
    }
    Raw("]");
  }
  // One element: a mask's 0/1, a float32 value or a float64 one (shortest round-trip text).
  void Number(uint8_t v) { Raw(v ? "1" : "0"); }
  void Number(float v) { Float(v); }
  void Number(double v) { Double(v); }
  // B matrices, or B*H matrices as B x H x T x T.
  template <typename S>
  void Stack(const S& stack, int64_t B, int64_t H) {
    Raw("[");
    for (int64_t b = 0; b < B; ++b) {
      if (b) Raw(",");
      if (H > 0) Raw("[");
      for (int64_t h = 0; h < std::max<int64_t>(H, 1); ++h) {
        if (h) Raw(",");
        Matrix2(stack[static_cast<size_t>(b * std::max<int64_t>(H, 1) + h)]);
      }
      if (H > 0) Raw("]");
    }
    Raw("]");
  }
  template <typename T>
  void List(const std::vector<T>& items) {
    Raw("[");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) Raw(",");
      if constexpr (std::is_same_v<T, std::string>) {
        String(items[i]);
      } else {
        Int(items[i]);
      }
    }
    Raw("]");
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  void Flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::ostream& os_;
  std::string buf_;
  bool first_key_ = true;
};

// Whether the variances (stats and var_K) are written as doubles: NumPy's var is a float64
// (numpy scenarios), and so is torch's of a float64 tensor; torch's of float32 is a float32.
bool DoubleVariances(const Stages& st) {
  return VarianceKindOf(st.generator) == VarianceKind::kNumpy || st.f64;
}

// "stats": the notebooks' .var() prints over whole stages (stats.h): float32 values for torch
// scenarios, float64 for numpy ones.
void WriteStats(StreamWriter& w, const Stages& st) {
  const VarianceKind kind = VarianceKindOf(st.generator);
  const StageVariances v = WholeVariances(st, kind);
  w.Key("stats");
  const std::pair<const char*, double> items[] = {{"var_k", v.var_k},
                                                  {"var_logits", v.var_logits},
                                                  {"var_q", v.var_q},
                                                  {"var_scores", v.var_scores},
                                                  {"var_weights", v.var_weights}};
  for (size_t i = 0; i < std::size(items); ++i) {
    w.Raw(i ? ",\"" : "{\"");
    w.Raw(items[i].first);
    w.Raw("\":");
    if (DoubleVariances(st))
      w.Double(items[i].second);
    else
      w.Float(static_cast<float>(items[i].second));
  }
  w.Raw("}");
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The stages' keys
// ---------------------------------------------------------------------------------------------

// Every key in byte order; the numbers from `src`: the Stages themselves (float32) or their
// float64 copy (StagesF64, same field names). Each stage is written under its name
// (stages.h), unless the run lacks it (K_rot and Q_rot without RoPE, X of a qkv input, ...).
template <typename Src>
void WriteKeys(StreamWriter& w, const Stages& st, const Src& src,
               const std::vector<DumpExtra>& extra) {
  const int64_t B = st.shape.B, H = st.shape.H;
  std::vector<std::pair<std::string, std::function<void()>>> keys;
  for (const StageRow& row : kStageTable) {
    if (row.stage == Stage::kMask) {  // one T x T matrix of 0/1
      keys.emplace_back(row.name, [&] { w.Matrix2(st.mask); });
      continue;
    }
    const auto* stack = StageStack(src, row.stage);
    if (*row.absent && stack->empty()) continue;
    // Q, K, V and their rotations: B x T x d, the heads side by side.
    const int64_t heads = row.per_head && !row.projected ? H : 0;
    keys.emplace_back(row.name, [&w, stack, B, heads] { w.Stack(*stack, B, heads); });
  }
  const bool has_x = !src.X.empty();  // qkv input: no X and no W
  const char* w_names[3] = {"W_query", "W_key", "W_value"};
  const char* bias_names[3] = {"b_query", "b_key", "b_value"};
  for (size_t i = 0; i < 3; ++i) {
    if (has_x) keys.emplace_back(w_names[i], [&w, &src, i] { w.Matrix2(src.W[i]); });
    if (src.bias[i].size() > 0)
      keys.emplace_back(bias_names[i], [&w, &src, i] { w.Vector(src.bias[i]); });
  }
  keys.emplace_back("dtype", [&] { w.Raw(std::string("\"") + Name(st.dtype) + "\""); });
  for (const DumpExtra& e : extra)  // e.g. the gradients (WriteStagesJsonWithGradients)
    keys.emplace_back(e.key, [&w, &e] {
      if (e.B > 0)
        w.Stack(*e.stack, e.B, e.H);
      else
        w.Matrix2(e.stack->front());
    });
  if (src.out_proj_W.size() > 0) {
    keys.emplace_back("out_proj_W", [&] { w.Matrix2(src.out_proj_W); });
    if (src.out_proj_bias.size() > 0)  // out_proj.bias false: no bias
      keys.emplace_back("out_proj_b", [&] { w.Vector(src.out_proj_bias); });
  }
  keys.emplace_back("shape", [&] {
    // d_in is the width of X: qkv input has no X, so no d_in (as no X and no W's).
    w.Raw("{\"B\":" + std::to_string(B) + ",\"H\":" + std::to_string(H) +
          ",\"T\":" + std::to_string(st.shape.T) +
          (has_x ? ",\"d_in\":" + std::to_string(st.shape.d_in) : std::string()) + ",\"d_k\":" +
          std::to_string(st.shape.dh) + ",\"d_out\":" + std::to_string(st.shape.d_out) +
          ",\"d_v\":" + std::to_string(st.shape.d_v) +
          // grouped K/V heads only (K and V are T x KV * d_k): files without stay as they were
          (GroupsKv(st.shape) ? ",\"kv_heads\":" + std::to_string(st.shape.Kv()) : std::string()) +
          "}");
  });
  if (!st.vocab.empty()) {
    keys.emplace_back("token_ids", [&] { w.List(st.token_ids); });
    keys.emplace_back("vocab", [&] { w.List(st.vocab); });
  }
  keys.emplace_back("tokens", [&] { w.List(st.tokens); });
  keys.emplace_back("var_K", [&] {
    if (DoubleVariances(st))
      w.Double(st.var_K);  // NumPy's var, or torch's of a float64 tensor
    else
      w.Float(static_cast<float>(st.var_K));  // a float32 value; inf when it overflows
  });
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  bool stats = false;  // WriteStats writes its own key, "stats"
  for (const auto& [key, write] : keys) {
    if (!stats && key > "stats") {
      WriteStats(w, st);
      stats = true;
    }
    w.Key(key.c_str());
    write();
  }
  if (!stats) WriteStats(w, st);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] WriteStagesJson, DumpStages, WriteStagesJsonWithGradients
// ---------------------------------------------------------------------------------------------

void WriteStagesJson(std::ostream& os, const Stages& st) { WriteStagesJson(os, st, {}); }

void WriteStagesJson(std::ostream& os, const Stages& st, const std::vector<DumpExtra>& extra) {
  StreamWriter w(os);
  if (st.f64)
    WriteKeys(w, st, *st.f64, extra);
  else
    WriteKeys(w, st, st, extra);
  w.End();
}

std::string DumpStages(const Stages& stages) {
  std::ostringstream os;
  WriteStagesJson(os, stages);
  return std::move(os).str();
}

json StagesToJson(const Stages& stages) { return json::parse(DumpStages(stages)); }

// The gradients in the dump (grad.h, for dump --loss-row / --loss-key).
void WriteStagesJsonWithGradients(std::ostream& os, const Stages& st, const Gradients& g) {
  const int64_t B = st.shape.B, H = st.shape.H;
  const MatrixStack wk{g.grad_W_key}, wq{g.grad_W_query}, jacobian{g.jacobian_row};
  // In byte order (upper case first), as the dump's keys are.
  std::vector<DumpExtra> extra = {{"grad_K", &g.grad_K, B, 0}, {"grad_Q", &g.grad_Q, B, 0}};
  if (!st.X.empty()) {
    extra.push_back({"grad_W_key", &wk});
    extra.push_back({"grad_W_query", &wq});
  }
  extra.push_back({"grad_logits", &g.grad_logits, B, H});
  extra.push_back({"grad_scores", &g.grad_scores, B, H});
  extra.push_back({"jacobian_row", &jacobian});
  WriteStagesJson(os, st, extra);
}

}  // namespace attnlab
