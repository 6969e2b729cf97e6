// experiments.cpp: see experiments.h.
//
// [SECTION] The variance of q·k against d
// [SECTION] Softmax peaking: a row's stats and the curve
// [SECTION] The averaging trick, v1-v4
// [SECTION] LogSpace
#include "attnlab/lessons/experiments.h"

#include <cmath>
#include <limits>
#include <string>

#include "attnlab/base/text.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/random/rng.h"
#include "base/float_exp.h"
#include "base/torch_sum.h"
#include "model/stage_rules.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] The variance of q·k against d
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// [SECTION] Softmax peaking: a row's stats and the curve
// ---------------------------------------------------------------------------------------------

PeakStats RowPeakStats(const RowVector& w) {
  PeakStats s;
  double h = 0.0;
  for (Eigen::Index j = 0; j < w.size(); ++j) {
    const double x = w[j];
    if (std::isnan(x)) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      return PeakStats{nan, -1, nan, nan, nan, nan};
    }
    s.sum += x;
    s.min_weight = j == 0 ? x : std::min(s.min_weight, x);
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

double DistributionTolerance(Dtype dtype) {
  return IsLowPrecision(dtype) ? DtypeEpsilon(dtype) : 1e-3;
}

bool IsDistribution(const PeakStats& row, double tol) {
  return row.min_weight >= 0 && std::fabs(row.sum - 1.0) <= tol;
}

bool RowsAreDistributions(const std::vector<PeakStats>& rows, double tol) {
  for (const PeakStats& p : rows)
    if (!std::isnan(p.sum) && !IsDistribution(p, tol)) return false;
  return true;
}

std::vector<PeakStats> RowsPeakStats(const Matrix& weights) {
  std::vector<PeakStats> out;
  for (Eigen::Index r = 0; r < weights.rows(); ++r) out.push_back(RowPeakStats(weights.row(r)));
  return out;
}

CurveRules CurveRulesOf(const Scenario& s, const Shape& sh, int64_t head, int64_t query) {
  const rules::LogitScaling<double> f = rules::ForHead(rules::LogitScalingOf<double>(s, sh.dh),
                                                       rules::HeadSlopes<double>(s, sh.H), head);
  CurveRules r;
  r.divisor = f.scale ? f.div : 1.0;
  // scale_at "q_and_k": the scores already hold (q f)(k f)^T = qk * multiplier [/ sqrt(dh)], so
  // another multiplier m' is logits = scores * m' / multiplier (to rounding; the curve is double).
  if (s.scaling.scale_at == ScaleAt::kQAndK && s.scaling.multiplier != 0.0)
    r.divisor = s.scaling.multiplier;
  if (f.softcap) r.softcap = f.cap;
  if (f.alibi) r.alibi_slope = f.slope;
  r.alibi_symmetric = f.symmetric;
  r.query = query;
  const std::vector<double> sinks = rules::HeadSinks<double>(s, sh.H);
  if (!sinks.empty()) r.sink = sinks[static_cast<size_t>(head)];
  r.sink_form = s.scaling.sink_form;
  return r;
}

RowVectorD SoftmaxRowAt(const RowVector& scores, const std::vector<uint8_t>& allowed,
                        const CurveRules& r, double multiplier, double* sink_share) {
  const int64_t T = scores.size();
  MaskMatrix ok = MaskMatrix::Ones(1, T);
  if (!allowed.empty())
    for (int64_t j = 0; j < T; ++j) ok(0, j) = allowed[static_cast<size_t>(j)] ? 1 : 0;
  // The row's logits by the pipeline's rule: the row as a 1 x T matrix whose row 0 is query i.
  const rules::LogitScaling<double> f{multiplier,
                                      r.divisor,
                                      r.divisor != 1.0,
                                      r.softcap.has_value(),
                                      r.softcap.value_or(1),
                                      r.alibi_slope.has_value(),
                                      r.alibi_slope.value_or(0),
                                      r.query,
                                      0,
                                      r.alibi_symmetric};
  const MatrixD sc = scores.cast<double>();
  MatrixD z(1, T);
  rules::LogitRows(sc.data(), ok, MaskKind::kCustom, f, 0, 1, true, z);
  RowVectorD w(T);
  // The float64 softmax of a NumPy program: max subtracted, exp, sum left to right, exp / sum.
  const Numerics divide{Numerics::Sum::kLeftToRight, Numerics::Sum::kLeftToRight,
                        Numerics::SoftmaxScale::kDivide, Numerics::Product::kLeftToRight};
  double sink_w = 0;
  rules::NormalizeRow(Normalization::kSoftmax, divide, z.data(), ok.data(), T, T, w.data(),
                      r.sink ? &*r.sink : nullptr, &sink_w, r.sink_form);
  if (sink_share) *sink_share = sink_w;
  return w;
}

std::vector<PeakingPoint> PeakingCurve(const RowVector& scores, const std::vector<uint8_t>& allowed,
                                       const CurveRules& rules,
                                       const std::vector<double>& multipliers) {
  std::vector<PeakingPoint> out;
  for (double m : multipliers) {
    const RowVectorD wd = SoftmaxRowAt(scores, allowed, rules, m);
    PeakStats st = RowPeakStats(wd.cast<float>());
    // Entropy from the double weights, so the curve stays smooth where floats would round.
    double h = 0.0;
    for (double x : wd)
      if (x > 0) h -= x * std::log(x);
    st.entropy = h;
    st.effective_tokens = std::exp(h);
    out.push_back({m, st});
  }
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The averaging trick, v1-v4
// ---------------------------------------------------------------------------------------------

// torch.mean(x[:n], dim=0)[c] for a row-major T x C float32 x: the sum as cascade_sum orders it
// for this shape (32-byte vectors of 8 floats, as the AVX2 and default kernels), then / n.
float TorchColumnMean(const Matrix& x, int64_t n, int64_t c) {
  const int64_t C = x.cols();
  const float* col = x.data() + c;
  float sum;
  if (n == 1) {
    sum = 0.0f + col[0];
  } else if (C == 1) {  // one contiguous row
    sum = TorchContiguousSum(col, n);
  } else {  // outer reduction: groups of 4 vectors (C >= 8) or of 4 scalars run LevelSum
    const int64_t grouped = C >= 8 ? C / 32 * 32 : C / 4 * 4;
    // (torch_sum.h: one cascade for the grouped columns, row_sum's four for the rest)
    const auto at = [&](int64_t i) { return col[i * C]; };
    sum = c < grouped ? detail::CascadeSums<float, 1>(n, [&](int64_t i, int) { return at(i); })[0]
                      : detail::InterleavedSum<float>(n, at);
  }
  return sum / static_cast<float>(n);
}

// w @ x for T x T weights w and T x C x: each product rounded to float32, then added in order
// k = 0..T-1 from zero, as PyTorch 1.13's CPU matmul does for these shapes (checked bit for bit
// against Debian's torch for 8 x 8 @ 8 x 2 and 8 x 8 @ 8 x 32).
Matrix TorchMatmul(const Matrix& w, const Matrix& x) {
  Matrix out(w.rows(), x.cols());
  for (Eigen::Index t = 0; t < w.rows(); ++t)
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
      float acc = 0.0f;
      for (Eigen::Index k = 0; k < w.cols(); ++k) {
        const float prod = w(t, k) * x(k, c);
        acc += prod;
      }
      out(t, c) = acc;
    }
  return out;
}

// torch.allclose(xbow, result) (rtol 1e-5, atol 1e-8, float32 as torch.isclose computes it),
// the largest difference, and the cell that decides the verdict.
void CompareToV1(TrickStep& step, const Matrix& v1, const Matrix& x) {
  if (step.result.rows() != v1.rows() || step.result.cols() != v1.cols()) {
    step.max_diff_from_v1 = std::numeric_limits<double>::infinity();
    step.allclose_to_v1 = false;
    return;
  }
  double worst = 0.0, worst_margin = -std::numeric_limits<double>::infinity();
  bool close = true;
  for (Eigen::Index t = 0; t < v1.rows(); ++t)
    for (Eigen::Index c = 0; c < v1.cols(); ++c) {
      const float a = v1(t, c), b = step.result(t, c);
      const float diff = std::fabs(a - b), tol = 1e-8f + std::fabs(1e-5f * b);
      const bool ok = a == b || diff <= tol;  // equal infinities are close; nan never is
      close = close && ok;
      if (!std::isnan(diff)) worst = std::max(worst, static_cast<double>(diff));
      const double margin = std::isnan(diff) ? INFINITY : a == b ? -tol : diff - tol;
      if (margin > worst_margin) {
        worst_margin = margin;
        step.worst_diff = a == b ? 0.0 : diff;
        step.worst_tolerance = tol;
        // One rounding of v1's running sum at this cell, scaled by the mean's division.
        float top = 0.0f;
        for (Eigen::Index k = 0; k <= t; ++k) top = std::max(top, std::fabs(x(k, c)));
        const double ulp = std::nextafter(top, INFINITY) - top;
        step.near_tolerance =
            std::isfinite(margin) && std::fabs(margin) <= ulp / static_cast<double>(t + 1);
      }
    }
  step.max_diff_from_v1 = worst;
  step.allclose_to_v1 = close;
}

// Row-wise stable softmax of a T x T matrix whose masked entries are -inf.
Matrix RowSoftmax(const Matrix& z) {
  Matrix w(z.rows(), z.cols());
  for (Eigen::Index i = 0; i < z.rows(); ++i) {
    const float mx = z.row(i).maxCoeff();
    detail::ShiftedExp(z.row(i).data(), mx, w.row(i).data(), z.cols());
    w.row(i) /= w.row(i).sum();
  }
  return w;
}

// v1, v2, v3 of the notebook, in float32 as PyTorch 1.13 computes them.
void AveragingVersions(const Matrix& x, std::vector<TrickStep>& steps) {
  const Eigen::Index T = x.rows();
  TrickStep& v1 = steps[0];
  v1.name = "v1: explicit loop";
  v1.code =
      "xbow = torch.zeros((T, C))\nfor t in range(T):\n    xprev = x[:t+1]\n    xbow[t] = "
      "torch.mean(xprev, 0)";
  v1.result = Matrix(T, x.cols());
  v1.weights = Matrix::Zero(T, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    for (Eigen::Index c = 0; c < x.cols(); ++c) v1.result(t, c) = TorchColumnMean(x, t + 1, c);
    v1.weights.row(t).head(t + 1).setConstant(1.0f / static_cast<float>(t + 1));
  }
  // v2: wei / wei.sum(1, keepdim=True): 1 / (t + 1) in float32, then wei @ x.
  TrickStep& v2 = steps[1];
  v2.name = "v2: tril matrix multiply";
  v2.code =
      "wei = torch.tril(torch.ones(T, T))\nwei = wei / wei.sum(1, keepdim=True)\nxbow2 = wei @ x";
  v2.weights = Matrix::Zero(T, T);
  for (Eigen::Index t = 0; t < T; ++t)
    v2.weights.row(t).head(t + 1).setConstant(1.0f / static_cast<float>(t + 1));
  v2.result = TorchMatmul(v2.weights, x);
  // v3: softmax of zeros over keys 0..t (the row max is 0): exp(0) = 1 each, times 1 / sum, as
  // torch's softmax kernel multiplies by the reciprocal; the -inf keys get exp(-inf) = 0.
  TrickStep& v3 = steps[2];
  v3.name = "v3: masked_fill + softmax";
  v3.code =
      "tril = torch.tril(torch.ones(T, T))\nwei = torch.zeros((T, T))\n"
      "wei = wei.masked_fill(tril == 0, float('-inf'))\nwei = F.softmax(wei, dim=-1)\nxbow3 = wei "
      "@ x";
  v3.weights = Matrix::Zero(T, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    const float e = std::exp(0.0f - 0.0f);
    v3.weights.row(t).head(t + 1).setConstant(e * (1.0f / (e * static_cast<float>(t + 1))));
  }
  v3.result = TorchMatmul(v3.weights, x);
}

}  // namespace

std::vector<TrickStep> AveragingTrick(const Stages& st, const Scenario& sc, int64_t batch) {
  if (batch < 0 || batch >= st.shape.B)
    throw std::invalid_argument("batch " + std::to_string(batch) + " is out of range (0.." +
                                std::to_string(st.shape.B - 1) + ")");
  if (st.X.size() <= static_cast<size_t>(batch))
    throw std::invalid_argument(
        "the averaging trick averages X, and this scenario has none (input.source \"qkv\")");
  const Matrix& x = st.X[batch];
  const Eigen::Index T = x.rows();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<TrickStep> steps(4);
  AveragingVersions(x, steps);
  // v4: a real head: the zeros become q.k, so each token picks whom to listen to.
  TrickStep& v4 = steps[3];
  v4.name = "v4: self-attention head";
  // The code of the current state: the multiplier and 1/sqrt(d_k) only when they are on.
  std::string first = "wei = q @ k.transpose(-2, -1)";
  if (sc.scaling.multiplier != 1.0)
    first += " * " + FormatNumber(sc.scaling.multiplier, NumberStyle::kShortest);
  if (sc.scaling.sqrt_dk) first += " * " + std::to_string(st.shape.dh) + "**-0.5";
  v4.code = first +
            "\nwei = wei.masked_fill(tril == 0, float('-inf'))\nwei = F.softmax(wei, dim=-1)\n"
            "out = wei @ v";
  const int64_t dh = st.shape.dh;
  Matrix logits = st.Head(st.scores, batch, 0);
  if (sc.scaling.scale_at == ScaleAt::kScores) {  // "q_and_k": the scores are already scaled
    logits *= static_cast<float>(sc.scaling.multiplier);
    if (sc.scaling.sqrt_dk) logits /= static_cast<float>(std::sqrt(static_cast<double>(dh)));
  }
  for (Eigen::Index i = 0; i < T; ++i) logits.row(i).tail(T - i - 1).setConstant(neg_inf);
  v4.weights = RowSoftmax(logits);
  v4.result = v4.weights * st.V[batch].leftCols(dh);
  const Matrix v1 = steps[0].result;
  for (TrickStep& s : steps) CompareToV1(s, v1, x);
  steps[0].near_tolerance = false;  // v1 against itself: exact, whatever the tolerance
  return steps;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] LogSpace
// ---------------------------------------------------------------------------------------------

std::vector<double> LogSpace(double lo, double hi, int n) {
  if (!(lo > 0 && hi > 0) || n < 2)
    throw std::invalid_argument("LogSpace: needs lo, hi > 0 and n >= 2");
  std::vector<double> out(static_cast<size_t>(n));
  const double a = std::log(lo), b = std::log(hi);
  for (int i = 0; i < n; ++i) out[i] = std::exp(a + (b - a) * i / (n - 1));
  return out;
}

}  // namespace attnlab
