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

std::vector<PeakStats> RowsPeakStats(const Matrix& weights) {
  std::vector<PeakStats> out;
  for (Eigen::Index r = 0; r < weights.rows(); ++r) out.push_back(RowPeakStats(weights.row(r)));
  return out;
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

namespace {

void CompareToV1(TrickStep& step, const Matrix& v1) {
  if (step.result.rows() != v1.rows() || step.result.cols() != v1.cols()) {
    step.max_diff_from_v1 = std::numeric_limits<double>::infinity();
    step.allclose_to_v1 = false;
    return;
  }
  double worst = 0.0;
  bool close = true;
  for (Eigen::Index i = 0; i < v1.size(); ++i) {
    const double a = step.result.data()[i], b = v1.data()[i];
    worst = std::max(worst, std::fabs(a - b));
    close = close && std::fabs(a - b) <= 1e-8 + 1e-5 * std::fabs(b);
  }
  step.max_diff_from_v1 = worst;
  step.allclose_to_v1 = close;
}

// Row-wise stable softmax of a T x T matrix whose masked entries are -inf.
Matrix RowSoftmax(const Matrix& z) {
  Matrix w(z.rows(), z.cols());
  for (Eigen::Index i = 0; i < z.rows(); ++i) {
    const float mx = z.row(i).maxCoeff();
    w.row(i) = (z.row(i).array() - mx).exp().matrix();
    w.row(i) /= w.row(i).sum();
  }
  return w;
}

}  // namespace

std::vector<TrickStep> AveragingTrick(const Stages& st, const Scenario& sc, int64_t batch) {
  if (batch < 0 || batch >= st.shape.B)
    throw std::invalid_argument("batch " + std::to_string(batch) + " is out of range (0.." +
                                std::to_string(st.shape.B - 1) + ")");
  const Matrix& x = st.X[batch];
  const Eigen::Index T = x.rows();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<TrickStep> steps(4);

  // v1, v2 and v3 compute the same averages in three ways. They are evaluated in double and
  // rounded once to float32, so that float summation order (which differs between this engine
  // and PyTorch's BLAS) cannot make torch.allclose's tight atol of 1e-8 fail on a near-zero
  // mean: the app then agrees with the notebook's "True" whatever the data.
  using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const MatrixD xd = x.cast<double>();

  // v1: for t: xbow[t] = mean of x[:t+1], the loop of the notebooks (as running sums).
  TrickStep& v1 = steps[0];
  v1.name = "v1: explicit loop";
  v1.code =
      "xbow = torch.zeros((T, C))\nfor t in range(T):\n    xprev = x[:t+1]\n    xbow[t] = "
      "torch.mean(xprev, 0)";
  MatrixD r1(T, x.cols());
  Eigen::RowVectorXd running = Eigen::RowVectorXd::Zero(x.cols());
  v1.weights = Matrix::Zero(T, T);
  for (Eigen::Index t = 0; t < T; ++t) {
    running += xd.row(t);
    r1.row(t) = running / static_cast<double>(t + 1);
    v1.weights.row(t).head(t + 1).setConstant(static_cast<float>(1.0 / (t + 1)));
  }
  v1.result = r1.cast<float>();
  // v2: the same averages as one matrix product with a row-normalised lower triangle.
  TrickStep& v2 = steps[1];
  v2.name = "v2: tril matrix multiply";
  v2.code =
      "wei = torch.tril(torch.ones(T, T))\nwei = wei / wei.sum(1, keepdim=True)\nxbow2 = wei @ x";
  MatrixD w2 = MatrixD::Ones(T, T).triangularView<Eigen::Lower>();
  for (Eigen::Index t = 0; t < T; ++t) w2.row(t) /= w2.row(t).sum();
  v2.weights = w2.cast<float>();
  v2.result = (w2.triangularView<Eigen::Lower>() * xd).cast<float>();
  // v3: start from zeros, forbid the future with -inf, softmax: exp(0) / (t + 1), the same.
  TrickStep& v3 = steps[2];
  v3.name = "v3: masked_fill + softmax";
  v3.code =
      "tril = torch.tril(torch.ones(T, T))\nwei = torch.zeros((T, T))\n"
      "wei = wei.masked_fill(tril == 0, float('-inf'))\nwei = F.softmax(wei, dim=-1)\nxbow3 = wei "
      "@ x";
  MatrixD w3 = MatrixD::Zero(T, T);
  for (Eigen::Index i = 0; i < T; ++i) {
    // softmax of a row of zeros over keys 0..i (the row max is 0): each allowed key gets
    // exp(0 - 0) / (i + 1 terms of exp(0)); the -inf keys get exp(-inf) = 0.
    const double e = std::exp(0.0 - 0.0);
    w3.row(i).head(i + 1).setConstant(e / (e * static_cast<double>(i + 1)));
  }
  v3.weights = w3.cast<float>();
  v3.result = (w3.triangularView<Eigen::Lower>() * xd).cast<float>();
  // v4: a real head: the zeros become q.k, so each token picks whom to listen to.
  TrickStep& v4 = steps[3];
  v4.name = "v4: self-attention head";
  v4.code =
      "wei = q @ k.transpose(-2, -1) * multiplier / d_k**0.5\n"
      "wei = wei.masked_fill(tril == 0, float('-inf'))\nwei = F.softmax(wei, dim=-1)\nout = wei @ "
      "v";
  const int64_t dh = st.shape.dh;
  Matrix logits = st.Head(st.scores, batch, 0) * static_cast<float>(sc.scaling.multiplier);
  if (sc.scaling.sqrt_dk) logits /= static_cast<float>(std::sqrt(static_cast<double>(dh)));
  for (Eigen::Index i = 0; i < T; ++i) logits.row(i).tail(T - i - 1).setConstant(neg_inf);
  v4.weights = RowSoftmax(logits);
  v4.result = v4.weights * st.V[batch].leftCols(dh);
  for (TrickStep& s : steps) CompareToV1(s, v1.result);
  return steps;
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
