// json_matrix.cpp: see json_matrix.h.
#include "base/json_matrix.h"

#include <charconv>
#include <cmath>
#include <string>

#include "attnlab/base/text.h"

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

}  // namespace attnlab
