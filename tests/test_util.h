// test_util.h: helpers shared by the tests: golden files and matrix comparisons that report
// the largest difference.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/base/tensor.h"

namespace attnlab::test {

/// Runs a shell command; returns its exit status (pclose's) and its standard output.
inline std::pair<int, std::string> RunShell(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  return {pclose(p), out};
}

/// A temporary path of this test and process ending in `ext` (".png"), so that ctest -j can run
/// the tests of one file side by side.
inline std::filesystem::path TempPath(const std::string& ext) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::filesystem::temp_directory_path() /
         ("attnlab_fig_" + std::string(info->name()) + "_" + std::to_string(getpid()) + ext);
}

/// Runs a shell command; returns its exit code (-1 when it did not exit) and standard output.
inline std::pair<int, std::string> Shell(const std::string& cmd) {
  const auto [status, out] = RunShell(cmd);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// A golden's file name as a GoogleTest parameter name (letters and digits, '_' elsewhere).
inline std::string ParamName(std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

inline nlohmann::json LoadGolden(const std::string& relative) {
  const std::string path = std::string(ATTNLAB_GOLDEN_DIR) + "/" + relative;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing golden file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

/// A JSON number or one of "inf", "-inf", "nan" as a float.
inline float JsonFloat(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    return NAN;
  }
  return static_cast<float>(j.get<double>());
}

inline Matrix JsonMatrix(const nlohmann::json& j) {
  Matrix m(j.size(), j.empty() ? 0 : j[0].size());
  for (size_t r = 0; r < j.size(); ++r)
    for (size_t c = 0; c < j[r].size(); ++c) m(r, c) = JsonFloat(j[r][c]);
  return m;
}

/// A JSON matrix (numbers or "inf", "-inf", "nan") as doubles, for float64 goldens.
inline MatrixD JsonMatrixDouble(const nlohmann::json& j) {
  MatrixD m(j.size(), j.empty() ? 0 : j[0].size());
  for (size_t r = 0; r < j.size(); ++r)
    for (size_t c = 0; c < j[r].size(); ++c)
      m(r, c) =
          j[r][c].is_string() ? static_cast<double>(JsonFloat(j[r][c])) : j[r][c].get<double>();
  return m;
}

/// Compares actual with expected (float or double matrices): equal non-finite values (inf with inf
/// of the same sign, nan with nan), and |a - e| <= atol + rtol * |e| for the finite ones. On
/// failure the message names the stage, the worst element and the largest difference.
template <typename Actual, typename Expected>
::testing::AssertionResult MatrixNear(const std::string& what, const Actual& actual,
                                      const Expected& expected, double atol, double rtol) {
  if (actual.rows() != expected.rows() || actual.cols() != expected.cols())
    return ::testing::AssertionFailure()
           << what << ": shape " << actual.rows() << "x" << actual.cols() << ", expected "
           << expected.rows() << "x" << expected.cols();
  double worst = 0.0;
  Eigen::Index wr = -1, wc = -1;
  for (Eigen::Index r = 0; r < actual.rows(); ++r)
    for (Eigen::Index c = 0; c < actual.cols(); ++c) {
      const double a = actual(r, c), e = expected(r, c);
      if (!std::isfinite(e) || !std::isfinite(a)) {
        const bool same = (std::isnan(a) && std::isnan(e)) || a == e;
        if (!same)
          return ::testing::AssertionFailure()
                 << what << "[" << r << "][" << c << "] = " << a << ", expected " << e;
        continue;
      }
      const double excess = std::fabs(double(a) - e) - (atol + rtol * std::fabs(e));
      if (excess > worst) {
        worst = excess;
        wr = r;
        wc = c;
      }
    }
  if (wr >= 0)
    return ::testing::AssertionFailure()
           << what << "[" << wr << "][" << wc << "] = " << actual(wr, wc) << ", expected "
           << expected(wr, wc) << " (difference "
           << std::fabs(double(actual(wr, wc)) - expected(wr, wc)) << ", tolerance " << atol
           << " + " << rtol << " * |expected|)";
  return ::testing::AssertionSuccess();
}

/// The stems of the golden files in ATTNLAB_GOLDEN_DIR/subdir, sorted (test parameters).
inline std::vector<std::string> GoldenNames(const std::string& subdir) {
  std::vector<std::string> names;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/" + subdir))
    names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The largest finite |value| of a matrix (0 when there is none): the scale of its ulps.
inline double MaxFiniteAbs(const Matrix& m) {
  double mx = 0;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (std::isfinite(m.data()[i])) mx = std::max(mx, std::fabs(double(m.data()[i])));
  return mx;
}

/// A gradient against torch.autograd's (grad_test.cpp's header says why this tolerance):
/// |got - want| <= 1e-6 + 4 float32 ulps of the stage's largest magnitude + 2e-5 |want|, equal
/// non-finite values.
inline ::testing::AssertionResult GradNear(const std::string& what, const Matrix& got,
                                           const nlohmann::json& want) {
  constexpr double kAtol = 1e-6, kRtol = 2e-5, kUlps = 4.0;
  const Matrix w = JsonMatrix(want);
  return MatrixNear(what, got, w, kAtol + kUlps * MaxFiniteAbs(w) * 1.1920929e-7, kRtol);
}

}  // namespace attnlab::test
