// inference_json.cpp: see inference_json.h.
#include "attnlab/python/inference_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json_matrix.h"

namespace attnlab {
namespace {

using nlohmann::json;

/// One value: the float32 writer's shortest text (float32 runs) or the double itself.
json Value(double v, bool f64) {
  if (!f64) return detail::FloatJson(static_cast<float>(v));
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json Values(const std::vector<double>& v, bool f64) {
  json out = json::array();
  for (double x : v) out.push_back(Value(x, f64));
  return out;
}

json Rows(const MatrixD& m, bool f64) {
  json out = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(Value(m(r, c), f64));
    out.push_back(row);
  }
  return out;
}

json Stack(const MatrixStackD& s, bool f64) {
  json out = json::array();
  for (const MatrixD& m : s) out.push_back(Rows(m, f64));
  return out;
}

/// B*H matrices (index b * H + h) as B x H x rows x cols.
json HeadStack(const MatrixStackD& s, size_t B, bool f64) {
  const size_t H = B == 0 ? 1 : s.size() / B;
  json out = json::array();
  for (size_t b = 0; b < B; ++b) {
    json heads = json::array();
    for (size_t h = 0; h < H; ++h) heads.push_back(Rows(s[b * H + h], f64));
    out.push_back(heads);
  }
  return out;
}

}  // namespace

json DecodeRunJson(const Scenario& s, const DecodeOptions& opt, const DecodeRun& run) {
  const bool f64 = s.dtype == Dtype::kFloat64;
  json j = {{"prefill", opt.prefill},
            {"chunk", opt.chunk},
            {"align", Name(s.mask.align)},
            {"dtype", Name(s.dtype)},
            {"max_abs_diff", Value(run.max_abs_diff, true)},
            {"tolerance", Value(run.tolerance, true)},
            {"unreachable_cells", run.unreachable_cells},
            {"context", Stack(run.context, f64)},
            {"steps", json::array()}};
  for (const DecodeStep& step : run.steps) {
    const json weights = HeadStack(step.weights, run.context.size(), f64);
    j["steps"].push_back({{"first", step.first},
                          {"t", step.t},
                          {"keys", step.keys},
                          {"cache_len", step.cache_len},
                          {"evicted", step.evicted},
                          {"max_abs_diff", Value(step.max_abs_diff, true)},
                          {"weights", weights}});
    if (!step.sink.empty())
      j["steps"].back()["sink"] = HeadStack(step.sink, run.context.size(), f64);
  }
  return j;
}

json TiledRunJson(const Scenario& s, const TiledRun& run) {
  const bool f64 = s.dtype == Dtype::kFloat64;
  json j = {{"block_q", run.block_q},
            {"block_k", run.block_k},
            {"dtype", Name(s.dtype)},
            {"max_abs_diff", Value(run.max_abs_diff, true)},
            {"tolerance", Value(run.tolerance, true)},
            {"skipped_tiles", run.skipped_tiles},
            {"context", Stack(run.context, f64)},
            {"steps", json::array()}};
  if (!run.sink.empty()) j["sink"] = HeadStack(run.sink, run.context.size(), f64);
  for (const TileStep& t : run.steps)
    j["steps"].push_back({{"batch", t.batch},
                          {"head", t.head},
                          {"rows", {t.row0, t.row0 + t.rows}},
                          {"keys", {t.key0, t.key0 + t.keys}},
                          {"skipped", t.skipped},
                          {"m", Values(t.m, f64)},
                          {"l", Values(t.l, f64)},
                          {"rescale", Values(t.rescale, f64)},
                          {"O", Rows(t.O, f64)}});
  return j;
}

}  // namespace attnlab
