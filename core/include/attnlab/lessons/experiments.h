// experiments.h: the notebooks' two experiments on why attention scales its logits.
//
// 1. Variance (raschka-ch03 "But why sqrt?", numpy-scaled-masked-attention,
//    self-attention-from-scratch): for random q, k ~ N(0, 1)^d the dot product q.k has variance
//    d; dividing by sqrt(d) brings it back to 1.
// 2. Softmax peaking (self-attention-from-scratch, "almost one-hot"): as the logits grow
//    (a larger multiplier, or no 1/sqrt(d_k)), a softmax row collapses onto its largest entry.
//
// Legend: d = vector dimension, N = number of trials, T = entries in one attention row.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/pipeline.h"

namespace attnlab {

/// The largest trials * d the variance experiment accepts (two N x d float tables): 5e7.
inline constexpr double kMaxVarianceElements = 5e7;

/// Variance of q.k at one dimension d.
struct VariancePoint {
  int64_t d = 0;
  double var_unscaled = 0.0;  ///< population variance of q.k (np.var, ddof = 0); about d
  double var_scaled = 0.0;    ///< population variance of q.k / sqrt(d); about 1
  std::vector<float> dots;    ///< the N dot products (unscaled), when samples were asked for
};

/// For each d: torch.manual_seed(seed); q = torch.randn(N, d); k = torch.randn(N, d);
/// dots = (q * k).sum(-1) in float32; then the population variance (ddof = 0, as the notebooks'
/// np.var) of dots and of dots / sqrt(d), accumulated in double. keep_samples keeps the dots
/// for a histogram. Errors: std::invalid_argument when dims is empty, a d < 1, N < 2, or
/// N * d > kMaxVarianceElements (the message names the culprit).
std::vector<VariancePoint> VarianceExperiment(const std::vector<int64_t>& dims, int64_t trials,
                                              uint64_t seed, bool keep_samples = false);

/// How peaked one row of attention weights is.
struct PeakStats {
  double max_weight = 0.0;        ///< largest weight, in [0, 1]
  int64_t argmax = -1;            ///< its column (the key attended to most)
  double entropy = 0.0;           ///< -sum w log w, in nats (0 for one-hot, log n for uniform)
  double effective_tokens = 0.0;  ///< exp(entropy): how many keys the row effectively averages
  double sum = 0.0;         ///< the row's sum: 1 for a distribution (nan for a row holding nan)
  double min_weight = 0.0;  ///< smallest weight (negative for z / sum(z) of signed logits)
};

/// How far from 1 the sum of a row of weights stored in `dtype` may be and the row still be a
/// distribution: 1e-3 (float32 and float64 sums of a softmax), or the dtype's eps for bfloat16
/// (2^-7) and float16 (2^-10), whose stored weights each moved by up to eps / 2 of
/// themselves, so the row's sum by up to eps / 2 (DtypeEpsilon). Errors: none.
double DistributionTolerance(Dtype dtype);

/// Whether one row (RowPeakStats) is a distribution, so that its entropy means something: no
/// weight negative and the sum within `tol` of 1 (DistributionTolerance). A nan row is not.
/// Errors: none.
bool IsDistribution(const PeakStats& row, double tol);

/// Whether every row of `rows` (RowsPeakStats) is a distribution, so that its entropy means
/// what the compare view says: each row that holds no nan is one (IsDistribution; a softmax over
/// the queries, a mask after the softmax without renormalising, a sink's share or signed
/// weights break it). Errors: none.
bool RowsAreDistributions(const std::vector<PeakStats>& rows, double tol);

/// Statistics of one row of weights (1 x T); zero weights add nothing to the entropy. A row
/// holding nan gives nan statistics and argmax -1.
PeakStats RowPeakStats(const RowVector& weights);

/// RowPeakStats of every row of a T x T weights matrix (the compare view's row entropies).
std::vector<PeakStats> RowsPeakStats(const Matrix& weights);

/// One point of a peaking curve: the row's softmax at one multiplier.
struct PeakingPoint {
  double multiplier = 1.0;
  PeakStats stats;
};

/// How the lessons' curves (PeakingCurve, JacobianNormCurve) make the logits of one row of
/// scores at a multiplier m (their x axis), as the pipeline makes them for one head and one
/// query: logits = scores x m / divisor, minus ALiBi's slope x (i - j), then soft-capped
/// c tanh(logits / c); the softmax then runs over the allowed keys and, with a sink, one more
/// column holding the sink's logit (gpt-oss; the keys' weights then sum below 1). RoPE needs
/// no rule here: the scores of a RoPE run are already those of the rotated Q and K.
struct CurveRules {
  double divisor = 1.0;                    ///< sqrt(d_k) when scaling.sqrt_dk, else 1 (no division)
  std::optional<double> softcap;           ///< scaling.softcap's c
  std::optional<double> alibi_slope;       ///< the head's ALiBi slope (positions "alibi")
  int64_t query = 0;                       ///< the row's query position i (ALiBi's distance i - j)
  bool alibi_symmetric = false;            ///< ALiBi's distance |i - j| (positions.symmetric)
  std::optional<double> sink;              ///< the head's sink logit (scaling.sink)
  SinkForm sink_form = SinkForm::kConcat;  ///< how the sink acts (scaling.sink_form)
  bool operator==(const CurveRules&) const = default;
};

/// The rules of head `head`, query row `query` of scenario `s` (shape `sh` from its run), from
/// the pipeline's own stage rules (stage_rules.h: LogitScalingOf, HeadSlopes, HeadSinks), in
/// double. Errors: none for a validated scenario and head < sh.H.
CurveRules CurveRulesOf(const Scenario& s, const Shape& sh, int64_t head, int64_t query);

/// The weights of one row of scores (1 x T, before scaling) at multiplier m under `rules`,
/// over the keys where `allowed` (1 x T of 0/1, or empty for all) is non-zero, 0 elsewhere, in
/// double: the pipeline's logit rule (LogitRows) and float64 softmax rule (NormalizeRow: max
/// subtracted, libm exp, sum left to right, NumPy's exp / sum, the sink's column last). The
/// one softmax of the lessons' curves (PeakingCurve, JacobianNormCurve: they share their x
/// axis). `sink_share`, when given, receives the sink's column (0 without a sink). Errors:
/// none (a row with nothing allowed is nan, or 0 with a sink, which then takes 1; nan with
/// the sigmoid form, the sink taking 1).
RowVectorD SoftmaxRowAt(const RowVector& scores, const std::vector<uint8_t>& allowed,
                        const CurveRules& rules, double multiplier, double* sink_share = nullptr);

/// The softmax of one row of scores (1 x T, before scaling) at each multiplier m, as
/// SoftmaxRowAt makes it under `rules`. Computed in double for a smooth curve; the statistics
/// are the keys' (with a sink their weights sum below 1).
std::vector<PeakingPoint> PeakingCurve(const RowVector& scores, const std::vector<uint8_t>& allowed,
                                       const CurveRules& rules,
                                       const std::vector<double>& multipliers);

/// One version of the notebooks' "mathematical trick" (karpathy-mathematical-trick,
/// self-attention-from-scratch): how token t comes to average the tokens 0..t.
struct TrickStep {
  std::string name;               ///< "v1: explicit loop", ...
  std::string code;               ///< the notebook's lines for this version
  Matrix weights;                 ///< T x T: the averaging weights it amounts to
  Matrix result;                  ///< T x C: what it computes (xbow, xbow2, xbow3, out)
  double max_diff_from_v1 = 0.0;  ///< max |result - v1's result|; inf when shapes differ
  /// torch.allclose(xbow, result) as PyTorch 1.13 decides it: |xbow - r| <= 1e-8 + 1e-5 |r| in
  /// every cell, computed in float32 as torch.isclose does (equal infinities close, nan never).
  bool allclose_to_v1 = false;
  /// The cell that decides the verdict (largest |xbow - r| - tolerance): its |xbow - r| ...
  double worst_diff = 0.0;
  /// ... and its tolerance 1e-8 + 1e-5 |r| (float32). Unset (0) when the shapes differ.
  double worst_tolerance = 0.0;
  /// The verdict hangs on rounding: at that cell |worst_diff - worst_tolerance| is at most one
  /// float32 rounding of v1's running sum (ulp of the largest |x| averaged, divided by the
  /// count), so another summation order (another CPU, BLAS or PyTorch version) may give the
  /// other verdict. Karpathy's notebook printed True where PyTorch 1.13 here says False for
  /// karpathy-trick batch 1 (3.24e-8 off, tolerance 3.02e-8): this flag says so. False for v1.
  bool near_tolerance = false;
};

/// The four versions for batch entry `batch` of a run: v1 the explicit loop of running means
/// over X, v2 tril(ones) normalised by its row sums times X, v3 masked_fill(-inf) then softmax
/// times X, v4 a real head: softmax of the causal-masked logits of the run's head 0 (its
/// scaling and multiplier) times V's head-0 columns. v1, v2 and v3 are evaluated in float32 as
/// the notebook's own cells run in PyTorch 1.13 on the CPU (torch.mean's cascade sum with
/// 8-float vectors, as AVX2 and default builds; the matmul's products added in order), bit for
/// bit on the karpathy presets (tests/golden/trick.json), so their allclose verdicts are
/// PyTorch's: equal up to rounding, and allclose True except where rounding crosses the
/// tolerance. v4 differs (it weights the past by q.k, and averages V, not X). Errors:
/// std::invalid_argument for a batch out of range, or stages without X (qkv input).
std::vector<TrickStep> AveragingTrick(const Stages& stages, const Scenario& scenario,
                                      int64_t batch);

/// n multipliers spaced evenly in log scale from lo to hi (both > 0), n >= 2.
std::vector<double> LogSpace(double lo, double hi, int n);

}  // namespace attnlab
