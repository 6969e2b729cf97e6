// stages_json.cpp: see stages_json.h.
#include "attnlab/stages_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace attnlab {
namespace {

using nlohmann::json;

// The shortest text that round-trips the float32, stored as the double that text denotes, so
// the JSON shows 0.1 rather than 0.10000000149011612 and a reader rounding to float32 gets the
// original bits back.
json FloatJson(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf - 1, v);
  *res.ptr = '\0';
  return std::strtod(buf, nullptr);
}

template <typename M>
json MatrixJson(const M& m) {
  json rows = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c)
      row.push_back(FloatJson(static_cast<float>(m(r, c))));
    rows.push_back(std::move(row));
  }
  return rows;
}

json VectorJson(const RowVector& v) {
  json out = json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(FloatJson(v[i]));
  return out;
}

json StackJson(const MatrixStack& stack) {
  json out = json::array();
  for (const Matrix& m : stack) out.push_back(MatrixJson(m));
  return out;
}

// B*H matrices as a B x H x T x T nested array.
json HeadStackJson(const MatrixStack& stack, int64_t B, int64_t H) {
  json out = json::array();
  for (int64_t b = 0; b < B; ++b) {
    json heads = json::array();
    for (int64_t h = 0; h < H; ++h) heads.push_back(MatrixJson(stack[b * H + h]));
    out.push_back(std::move(heads));
  }
  return out;
}

}  // namespace

json StagesToJson(const Stages& st) {
  const int64_t B = st.shape.B, H = st.shape.H;
  json j = json::object();
  j["X"] = StackJson(st.X);
  j["W_query"] = MatrixJson(st.W[0]);
  j["W_key"] = MatrixJson(st.W[1]);
  j["W_value"] = MatrixJson(st.W[2]);
  const char* bias_names[3] = {"b_query", "b_key", "b_value"};
  for (int w = 0; w < 3; ++w)
    if (st.bias[w].size() > 0) j[bias_names[w]] = VectorJson(st.bias[w]);
  if (st.out_proj_W.size() > 0) {
    j["out_proj_W"] = MatrixJson(st.out_proj_W);
    j["out_proj_b"] = VectorJson(st.out_proj_bias);
  }
  j["Q"] = StackJson(st.Q);
  j["K"] = StackJson(st.K);
  j["V"] = StackJson(st.V);
  j["scores"] = HeadStackJson(st.scores, B, H);
  j["logits"] = HeadStackJson(st.logits, B, H);
  json mask = json::array();
  for (Eigen::Index r = 0; r < st.mask.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < st.mask.cols(); ++c) row.push_back(int(st.mask(r, c)));
    mask.push_back(std::move(row));
  }
  j["mask"] = std::move(mask);
  j["weights"] = HeadStackJson(st.weights, B, H);
  if (!st.weights_dropped.empty()) j["weights_dropped"] = HeadStackJson(st.weights_dropped, B, H);
  j["context"] = StackJson(st.context);
  j["tokens"] = st.tokens;
  if (!st.vocab.empty()) {
    j["token_ids"] = st.token_ids;
    j["vocab"] = st.vocab;
  }
  j["var_K"] = std::isfinite(st.var_K) ? json(st.var_K) : json("nan");
  j["shape"] = {{"B", B}, {"T", st.shape.T},   {"d_in", st.shape.d_in}, {"d_out", st.shape.d_out},
                {"H", H}, {"d_k", st.shape.dh}};
  return j;
}

std::string DumpStages(const Stages& stages) { return StagesToJson(stages).dump() + "\n"; }

}  // namespace attnlab
