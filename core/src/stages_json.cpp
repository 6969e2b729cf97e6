// stages_json.cpp: see stages_json.h.
#include "attnlab/stages_json.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attnlab/text.h"
#include "json_matrix.h"

namespace attnlab {

using nlohmann::json;

namespace detail {

json FloatJson(float v) {
  if (!std::isfinite(v)) return ShortestFloat(v);  // "nan", "inf", "-inf"
  const std::string text = ShortestFloat(v);
  double d = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), d);  // no locale, unlike strtod
  return d;
}

json MatrixJson(const Matrix& m) {
  json rows = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(FloatJson(m(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace detail

namespace {

using detail::FloatJson;
using detail::MatrixJson;

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
  j["var_K"] = FloatJson(static_cast<float>(st.var_K));  // a float32 value; inf when it overflows
  j["shape"] = {{"B", B}, {"T", st.shape.T},   {"d_in", st.shape.d_in}, {"d_out", st.shape.d_out},
                {"H", H}, {"d_k", st.shape.dh}};
  return j;
}

std::string DumpStages(const Stages& stages) { return StagesToJson(stages).dump() + "\n"; }

}  // namespace attnlab
