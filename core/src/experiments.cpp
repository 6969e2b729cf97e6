// experiments.cpp: see experiments.h.
#include "attnlab/experiments.h"

#include <cmath>
#include <limits>
#include <string>

#include "attnlab/rng.h"

namespace attnlab {

std::vector<VariancePoint> VarianceExperiment(const std::vector<int64_t>& dims, int64_t trials,
                                              uint64_t seed, bool keep_samples) {
  if (dims.empty()) throw std::invalid_argument("dims: give at least one dimension");
  if (trials < 2)
    throw std::invalid_argument("trials: must be at least 2, got " + std::to_string(trials));
  for (int64_t d : dims) {
    if (d < 1)
      throw std::invalid_argument("dims: " + std::to_string(d) +
                                  " is not a dimension (must be at least 1)");
    if (static_cast<double>(d) * static_cast<double>(trials) > kMaxVarianceElements)
      throw std::invalid_argument("trials x dims: " + std::to_string(trials) + " x " +
                                  std::to_string(d) + " is more than the limit of 5e7 numbers");
  }
  std::vector<VariancePoint> out;
  TorchGenerator gen;
  for (int64_t d : dims) {
    gen.ManualSeed(seed);
    const std::vector<float> q = gen.Normal(trials * d);
    const std::vector<float> k = gen.Normal(trials * d);
    VariancePoint p;
    p.d = d;
    std::vector<float> dots(static_cast<size_t>(trials));
    for (int64_t t = 0; t < trials; ++t) {
      float acc = 0.0f;
      for (int64_t i = 0; i < d; ++i) acc += q[t * d + i] * k[t * d + i];
      dots[t] = acc;
    }
    // Two passes in double: the mean, then the mean squared deviation (ddof = 0).
    const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
    double mean = 0.0;
    for (float x : dots) mean += x;
    mean /= static_cast<double>(trials);
    double ss = 0.0;
    for (float x : dots) ss += (x - mean) * (x - mean);
    p.var_unscaled = ss / static_cast<double>(trials);
    p.var_scaled = p.var_unscaled * inv_sqrt_d * inv_sqrt_d;
    if (keep_samples) p.dots = std::move(dots);
    out.push_back(std::move(p));
  }
  return out;
}

PeakStats RowPeakStats(const RowVector& w) {
  PeakStats s;
  double h = 0.0;
  for (Eigen::Index j = 0; j < w.size(); ++j) {
    const double x = w[j];
    if (std::isnan(x)) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      return PeakStats{nan, -1, nan, nan};
    }
    if (s.argmax < 0 || x > s.max_weight) {
      s.max_weight = x;
      s.argmax = j;
    }
    if (x > 0) h -= x * std::log(x);
  }
  s.entropy = h;
  s.effective_tokens = std::exp(h);
  return s;
}

std::vector<PeakingPoint> PeakingCurve(const RowVector& scores, const std::vector<uint8_t>& allowed,
                                       double scale, const std::vector<double>& multipliers) {
  std::vector<PeakingPoint> out;
  const Eigen::Index n = scores.size();
  for (double m : multipliers) {
    double mx = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < n; ++j)
      if (allowed.empty() || allowed[j]) mx = std::max(mx, scores[j] * m * scale);
    std::vector<double> e(static_cast<size_t>(n), 0.0);
    double sum = 0.0;
    for (Eigen::Index j = 0; j < n; ++j)
      if (allowed.empty() || allowed[j]) sum += e[j] = std::exp(scores[j] * m * scale - mx);
    RowVector w(n);
    for (Eigen::Index j = 0; j < n; ++j) w[j] = static_cast<float>(e[j] / sum);
    // Entropy from the double weights, so the curve stays smooth where floats would round.
    PeakStats st = RowPeakStats(w);
    double h = 0.0;
    for (double x : e)
      if (x > 0) h -= (x / sum) * std::log(x / sum);
    st.entropy = h;
    st.effective_tokens = std::exp(h);
    out.push_back({m, st});
  }
  return out;
}

std::vector<double> LogSpace(double lo, double hi, int n) {
  if (!(lo > 0 && hi > 0) || n < 2)
    throw std::invalid_argument("LogSpace: needs lo, hi > 0 and n >= 2");
  std::vector<double> out(static_cast<size_t>(n));
  const double a = std::log(lo), b = std::log(hi);
  for (int i = 0; i < n; ++i) out[i] = std::exp(a + (b - a) * i / (n - 1));
  return out;
}

}  // namespace attnlab
