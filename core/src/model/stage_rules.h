// stage_rules.h (internal to the core): the rules of the per-head stages, written once for
// every number type S (float for float32 runs, double for float64 ones; pipeline.h): how
// logits are made from scores and the mask, and how a row of logits becomes weights under the
// five normalizations, forward and backward (grad.h). Where PyTorch, NumPy and the number type must
// round differently the rule takes a Numerics policy (pipeline.h) instead of a second copy. Adding
// a normalization or a mask kind means adding its case here (and to the scenario format, codegen
// and the UI).
//
// Legend: T tokens; a row is one query's T entries; `len` its active length (the causal mask
// allows keys 0..i, so entries len..T-1 of row i are masked and need not be touched).
//
// [SECTION] Which keys a row touches
// [SECTION] Logits: scaling, ALiBi, sinks, soft-capping, the mask
// [SECTION] Weights: a row's normalization
// [SECTION] Finite mask fills and rows with no key
// [SECTION] Positions: the sinusoidal encoding
// [SECTION] Positions: RoPE
// [SECTION] The normalizations' backward, one float32 row (grad.h)
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "attnlab/model/pipeline.h"
#include "base/float_exp.h"
#include "base/torch_sum.h"

namespace attnlab::rules {

// ---------------------------------------------------------------------------------------------
// [SECTION] Which keys a row touches
// ---------------------------------------------------------------------------------------------

// Number of leading entries of row i that may be non-zero after masking: the causal mask
// allows keys 0..i, so the rest of the row need not be touched.
// Sliding-window and document masks allow a subset of the causal keys.
inline int64_t ActiveLength(MaskKind kind, int64_t i, int64_t T) {
  const bool causal =
      kind == MaskKind::kCausal || kind == MaskKind::kSlidingWindow || kind == MaskKind::kDocument;
  return causal ? i + 1 : T;
}

// Whether the mask's cells must be read one by one (every kind but none and causal, whose
// cells ActiveLength already says).
inline bool ReadsMaskCells(MaskKind kind) {
  return kind != MaskKind::kNone && kind != MaskKind::kCausal;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Logits: scaling, ALiBi, sinks, soft-capping, the mask
// ---------------------------------------------------------------------------------------------

// How logits are made from scores: * mult, then / div (sqrt(dh) rounded to S) when scale,
// then, when softcap, cap * tanh(logits / cap) (Gemma 2's soft-capping, before the mask).
template <typename S>
struct LogitScaling {
  S mult, div;
  bool scale;
  bool softcap = false;
  S cap = 1;
  bool alibi = false;  // ALiBi: + -(slope * (i - j)) after the scaling, before the cap
  S slope = 0;         // the head's ALiBi slope (AlibiSlopes, scenario.h) in S
  // The absolute positions of row 0 and column 0 (ALiBi's i and j): 0 for the full T x T
  // matrix; a decode step's first query and first cached key, a tile's first row and key.
  int64_t q0 = 0, k0 = 0;
  bool symmetric = false;  // ALiBi's distance |i - j| (positions.symmetric), else i - j
};

// The logit scaling of scenario `s` for heads of size dh, as the pipeline applies it:
// * multiplier, / sqrt(dh) rounded to S, scaling.softcap (ALiBi's slope is per head: HeadSlopes).
// scaling.scale_at "q_and_k": the scores already hold the scaled product (ScaledOperand), so
// the logits take no multiplier and no division (x * 1 is exact).
template <typename S>
LogitScaling<S> LogitScalingOf(const Scenario& s, int64_t dh) {
  const bool at_scores = s.scaling.scale_at == ScaleAt::kScores;
  LogitScaling<S> f{static_cast<S>(at_scores ? s.scaling.multiplier : 1.0),
                    static_cast<S>(std::sqrt(static_cast<double>(dh))),
                    at_scores && s.scaling.sqrt_dk, s.scaling.softcap.has_value(),
                    static_cast<S>(s.scaling.softcap.value_or(1.0))};
  f.symmetric = s.positions.symmetric;
  return f;
}

// scaling.scale_at "q_and_k": an operand of the scores (T x heads * dh, Q or K as the scores
// read them) times its factor (QkScaleOf, rounded to S), one rounding per element as
// PyTorch's query * scaling_factor in _scaled_dot_product_attention_math; the caller stores
// the result in low precision.
template <typename S>
MatrixOf<S> ScaledOperand(const MatrixOf<S>& m, double factor) {
  return m * static_cast<S>(factor);
}

// ALiBi's slope of each of H heads rounded to S (AlibiSlopesOf, scenario.h); empty without ALiBi.
template <typename S>
std::vector<S> HeadSlopes(const Scenario& s, int64_t H) {
  std::vector<S> slopes;
  if (s.positions.kind == PositionKind::kAlibi)
    for (double slope : AlibiSlopesOf(s.positions, H)) slopes.push_back(static_cast<S>(slope));
  return slopes;
}

// gpt-oss's sink logit of each of H heads rounded to S (scaling.sink); empty without a sink.
template <typename S>
std::vector<S> HeadSinks(const Scenario& s, int64_t H) {
  std::vector<S> sinks;
  if (!s.scaling.sink.empty())
    for (int64_t h = 0; h < H; ++h) sinks.push_back(static_cast<S>(s.scaling.SinkOf(h)));
  return sinks;
}

// `f` for head h: ALiBi on with the head's slope when `slopes` (HeadSlopes) is not empty.
template <typename S>
LogitScaling<S> ForHead(LogitScaling<S> f, const std::vector<S>& slopes, int64_t h) {
  if (!slopes.empty()) f.alibi = true, f.slope = slopes[static_cast<size_t>(h)];
  return f;
}

// Rows [r0, r0 + rb) of logits from the same rows of scores: `sc` holds those rb rows of scores,
// T = lg.cols() apart, the first of them row r0's (`data() + r0 * T` of a whole T x T stage).
// `tails` says whether the -inf beyond each row's active length must be written (not already
// there from an earlier run).
template <typename S>
void LogitRows(const S* sc, const MaskMatrix& mask, MaskKind kind, LogitScaling<S> f, int64_t r0,
               int64_t rb, bool tails, MatrixOf<S>& lg) {
  const int64_t T = lg.cols();
  const S neg_inf = -std::numeric_limits<S>::infinity();
  for (int64_t i = r0; i < r0 + rb; ++i) {
    const S* in = sc + (i - r0) * T;
    S* out = lg.data() + i * T;
    const int64_t len = ActiveLength(kind, i, T);
    // Two roundings, as PyTorch and NumPy do (x * 1 is exact, so a multiplier of 1 is skipped).
    if (f.mult != 1 && f.scale) {
      for (int64_t j = 0; j < len; ++j) out[j] = (in[j] * f.mult) / f.div;
    } else if (f.scale) {
      for (int64_t j = 0; j < len; ++j) out[j] = in[j] / f.div;
    } else {
      for (int64_t j = 0; j < len; ++j) out[j] = in[j] * f.mult;
    }
    // ALiBi's bias -(slope * (i - j)) (|i - j| when symmetric), rounded as PyTorch's float
    // tensors round it.
    if (f.alibi)
      for (int64_t j = 0; j < len; ++j)
        out[j] =
            out[j] + -(f.slope * static_cast<S>(AlibiDistance(f.q0 + i, f.k0 + j, f.symmetric)));
    // c * tanh(logits / c): three roundings, as PyTorch computes the expression.
    if (f.softcap)
      for (int64_t j = 0; j < len; ++j) out[j] = f.cap * static_cast<S>(std::tanh(out[j] / f.cap));
    if (tails)
      for (int64_t j = len; j < T; ++j) out[j] = neg_inf;
    if (ReadsMaskCells(kind)) {
      const uint8_t* allowed = mask.data() + i * T;
      for (int64_t j = 0; j < T; ++j)
        if (!allowed[j]) out[j] = neg_inf;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Weights: a row's normalization
// ---------------------------------------------------------------------------------------------

// out[j] = exp(z[j] - shift), j < n: float32 vectorised with IEEE underflow (float_exp.h),
// float64 with libm.
// `z_min`: the least z[j] when known (RowMax), which may spare float32's underflow check.
inline void ShiftedExp(const float* z, float shift, float* out, int64_t n,
                       float z_min = std::numeric_limits<float>::quiet_NaN()) {
  detail::ShiftedExp(z, shift, out, n, z_min);
}
inline void ShiftedExp(const double* z, double shift, double* out, int64_t n, double = 0) {
  for (int64_t j = 0; j < n; ++j) out[j] = std::exp(z[j] - shift);
}

// The max of a row's first n logits (Eigen's maxCoeff when there is no nan), and in *min the
// least of them where ShiftedExp can use it (float32, one pass: detail::RowMaxMin).
inline float RowMax(const float* z, int64_t n, float* min) {
  float max;
  detail::RowMaxMin(z, n, max, *min);
  return max;
}
inline double RowMax(const double* z, int64_t n, double* min) {
  *min = std::numeric_limits<double>::quiet_NaN();
  return Eigen::Map<const Eigen::ArrayXd>(z, n).maxCoeff();
}

// The sum of a row's first `len` entries x (the other T - len are 0) in `order`.
template <typename S>
S RowSum(Numerics::Sum order, const S* x, int64_t len, int64_t T) {
  if constexpr (std::is_same_v<S, float>)
    if (order == Numerics::Sum::kTorchCascade) return detail::TorchRowSum(x, len, T);
  if (order == Numerics::Sum::kEigen) return Eigen::Map<const Eigen::Array<S, -1, 1>>(x, len).sum();
  S sum = 0;  // kLeftToRight (and the cascade, float32's order only, in another type)
  for (int64_t j = 0; j < len; ++j) sum += x[j];
  return sum;
}

// Normalises one row's first `len` logits z into out (PyTorch's formulas, see pipeline.h; the
// sums, the softmax's scaling and exp by the run's Numerics). With a `sink` logit (softmax
// only; nullptr: none) the softmax runs over the row and one more column holding *sink, as
// gpt-oss's reference sdpa concatenates it, and *sink_weight receives that column's share (the
// row's weights then sum to 1 minus it; a row of -inf gives 0 weights and 1 to the sink).
// With `form` SinkForm::kSigmoid (scaling.sink_form, torchtitan PR #2211) the row's plain
// softmax is rescaled instead: weights = softmax(z) * g, g = sigmoid(lse - sink) with
// lse = max + log(sum exp(z - max)) (-inf for a row of -inf, as torch.logsumexp), and
// *sink_weight = 1 - g. Equal to the concat form up to rounding when the row sees a key; a row
// of -inf gives nan weights (0/0 times g = 0) and 1 to the sink.
// Returns what PyTorch writes
// in the row's masked cells beyond `len`: exp(-inf) = 0 (or the masked 0 of "sum" and "mean")
// times or divided by the row's normaliser. That is +0 for a finite positive normaliser, -0
// for a negative one ("sum"), and nan when the normaliser is 0 or nan (exp underflow, a zero
// row sum, +inf logits: inf - inf), as in the rest of the row.
template <typename S>
S NormalizeRow(Normalization norm, const Numerics& num, const S* logits, const uint8_t* allowed,
               int64_t len, int64_t T, S* weights, const S* sink = nullptr,
               S* sink_weight = nullptr, SinkForm form = SinkForm::kConcat) {
  using Array = Eigen::Array<S, Eigen::Dynamic, 1>;
  const Eigen::Map<const Array> z(logits, len);
  Eigen::Map<Array> out(weights, len);
  switch (norm) {
    case Normalization::kSoftmax: {
      // Stable softmax: subtracting the row max keeps exp() from overflowing and does not
      // change the result. Masked entries are -inf and become exactly 0.
      if (sink && form == SinkForm::kSigmoid) {
        // torchtitan's rescale: the plain softmax of the row, then its keys' share of
        // [z, sink] as sigmoid(lse - sink), 1 / (1 + exp(-(lse - sink))).
        const S fill = NormalizeRow(Normalization::kSoftmax, num, logits, allowed, len, T, weights);
        const S mx = z.maxCoeff();
        S lse = -std::numeric_limits<S>::infinity();  // torch.logsumexp of a row of -inf
        if (!(std::isinf(mx) && mx < 0)) {
          Array e(len);
          ShiftedExp(logits, mx, e.data(), len);
          lse = mx + std::log(RowSum(num.softmax_sum, e.data(), len, T));
        }
        const S gate = S(1) / (S(1) + std::exp(-(lse - *sink)));
        out *= gate;
        if (sink_weight) *sink_weight = S(1) - gate;
        return fill * gate;
      }
      S lowest;
      const S row_max = RowMax(logits, len, &lowest);
      const S mx = sink ? std::max(row_max, *sink) : row_max;
      ShiftedExp(logits, mx, weights, len, lowest);
      S sum = RowSum(num.softmax_sum, weights, len, T);
      S sink_exp = 0;  // the sink's column comes last, after the masked keys' zeros
      if (sink) sink_exp = std::exp(*sink - mx), sum += sink_exp;  // ShiftedExp of one value
      if (num.softmax == Numerics::SoftmaxScale::kDivide) {
        out /= sum;
        if (sink_weight) *sink_weight = sink_exp / sum;
        return S(0) / sum;
      }
      const S inv = S(1) / sum;
      out *= inv;
      if (sink_weight) *sink_weight = sink_exp * inv;
      return S(0) * inv;
    }
    case Normalization::kSoftmaxNaive: {
      // exp(z) / sum exp(z), as the notebooks first write it: overflows to inf and nan for
      // large logits, which is the lesson.
      ShiftedExp(logits, S(0), weights, len);
      const S sum = RowSum(num.sum, weights, len, T);  // exps.sum()
      out /= sum;
      return S(0) / sum;
    }
    case Normalization::kSum: {
      // z / sum(z) over the allowed entries: can be negative or blow up.
      for (int64_t j = 0; j < len; ++j) out[j] = allowed[j] ? z[j] : S(0);
      // In PyTorch's order: where partial sums overflow (3e38 + 3e38) the order decides
      // between inf and a finite sum.
      const S sum = RowSum(num.sum, weights, len, T);
      out /= sum;
      return S(0) / sum;
    }
    case Normalization::kSoftmaxThenMask: {
      // Raschka's 3.5.1 first way: the softmax over every key (the logits are unmasked, so
      // `len` is the whole row), the weights times the 0/1 mask (masked_simple; nan * 0 stays
      // nan, as in PyTorch), each row divided by its new sum (masked_simple_norm: a division).
      NormalizeRow(Normalization::kSoftmax, num, logits, allowed, len, T, weights);
      for (int64_t j = 0; j < len; ++j) weights[j] *= allowed[j] ? S(1) : S(0);
      const S sum = RowSum(num.sum, weights, len, T);
      out /= sum;
      return S(0) / sum;
    }
    case Normalization::kSoftmaxDimQuery:
      // Normalised column by column (ColumnSoftmax), never a row at a time: nan says so.
      out.setConstant(std::numeric_limits<S>::quiet_NaN());
      return std::numeric_limits<S>::quiet_NaN();
    case Normalization::kSoftmaxThenMaskNoRenorm: {
      // The mistake of that way (bug-mask-after-softmax): softmax(logits) * mask and nothing
      // more, so each row keeps only its allowed keys' share and sums to less than 1.
      NormalizeRow(Normalization::kSoftmax, num, logits, allowed, len, T, weights);
      for (int64_t j = 0; j < len; ++j) weights[j] *= allowed[j] ? S(1) : S(0);
      return S(0);
    }
    case Normalization::kMean: {
      // Uniform weights over the allowed entries: the "averaging with tril" trick.
      S count = 0;
      for (int64_t j = 0; j < len; ++j) count += allowed[j] ? S(1) : S(0);
      for (int64_t j = 0; j < len; ++j) out[j] = (allowed[j] ? S(1) : S(0)) / count;
      return S(0) / count;
    }
  }
  return S(0);
}

// Rows [r0, r0 + rb) of the weights from the same rows of logits; with a `sink` logit (softmax
// only, nullptr: none; `form` how it acts, NormalizeRow) row i's sink share goes to sink_w(i, 0)
// (T x 1). Returns true when every
// row's masked cells beyond its active length hold +0 (written now, or already there when
// `tails` is false); a row whose normaliser is 0, negative or nan gets PyTorch's fill there.
template <typename S>
bool WeightRows(Normalization norm, const Numerics& num, const MatrixOf<S>& lg,
                const MaskMatrix& mask, MaskKind kind, int64_t r0, int64_t rb, bool tails,
                MatrixOf<S>& w, const S* sink, MatrixOf<S>* sink_w,
                SinkForm form = SinkForm::kConcat) {
  const int64_t T = lg.cols();
  bool zero_tails = true;
  for (int64_t i = r0; i < r0 + rb; ++i) {
    const int64_t len = ActiveLength(kind, i, T);
    S* row = w.data() + i * T;
    const S fill = NormalizeRow(norm, num, lg.data() + i * T, mask.data() + i * T, len, T, row,
                                sink, sink ? sink_w->data() + i : nullptr, form);
    if (fill != 0 || std::signbit(fill)) {
      std::fill(row + len, row + T, fill);
      zero_tails = zero_tails && len == T;
    } else if (tails) {
      std::fill(row + len, row + T, S(0));
    }
  }
  return zero_tails;
}

// torch.softmax(logits, dim=-2) of one T x T matrix (bug-softmax-dim): each key's column over
// the queries: its max, exp(z - max), the sum from row 0 down (PyTorch's CPU softmax over a
// dimension that is not the last adds the rows in order, a column per vector lane), then each
// entry divided by the sum. A column of -inf only (a key no query may see) is nan, as in torch.
template <typename S>
void ColumnSoftmax(const MatrixOf<S>& lg, MatrixOf<S>& w) {
  const int64_t T = lg.rows();
  std::vector<S> col(static_cast<size_t>(T)), e(static_cast<size_t>(T));
  for (int64_t j = 0; j < lg.cols(); ++j) {
    S mx = -std::numeric_limits<S>::infinity();
    for (int64_t i = 0; i < T; ++i) col[i] = lg(i, j), mx = std::max(mx, col[i]);
    ShiftedExp(col.data(), mx, e.data(), T);
    S sum = 0;
    for (int64_t i = 0; i < T; ++i) sum += e[i];
    for (int64_t i = 0; i < T; ++i) w(i, j) = e[i] / sum;
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Finite mask fills and rows with no key
// ---------------------------------------------------------------------------------------------

// mask.fill finite (MaskFillValue: finfo_min, -1e9, -1e4): rows [r0, r0 + rb) of the logits get
// `fill` in every masked cell in place of -inf, as logits.masked_fill(~allowed, fill).
template <typename S>
void FillMasked(const MaskMatrix& mask, int64_t r0, int64_t rb, S fill, MatrixOf<S>& lg) {
  for (int64_t i = r0; i < r0 + rb; ++i)
    for (int64_t j = 0; j < lg.cols(); ++j)
      if (!mask(i, j)) lg(i, j) = fill;
}

// masked_rows "zero": rows [r0, r0 + rb) with no allowed key get +0 weights, as PyTorch >= 2.5's
// scaled_dot_product_attention (its _safe_softmax) writes them instead of softmax's nan.
template <typename S>
void ZeroMaskedRows(const MaskMatrix& mask, int64_t r0, int64_t rb, MatrixOf<S>& w) {
  for (int64_t i = r0; i < r0 + rb; ++i)
    if (!mask.row(i).any()) w.row(i).setZero();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Positions: the sinusoidal encoding
// ---------------------------------------------------------------------------------------------

// The original Transformer's positional encoding (Vaswani et al. 2017, section 3.5), T x d:
// PE(i, 2k) = sin(i * f_k), PE(i, 2k + 1) = cos(i * f_k), f_k = exp(2k * -(ln 10000 / d)),
// each step rounded in S as the Annotated Transformer's PositionalEncoding computes it
// (div_term = exp(arange(0, d, 2) * -(log(10000.0) / d)); the constant a double rounded to S).
// An odd d has one more sin column than cos columns.
template <typename S>
MatrixOf<S> SinusoidalEncoding(int64_t T, int64_t d) {
  MatrixOf<S> pe(T, d);
  const S c = static_cast<S>(-(std::log(10000.0) / static_cast<double>(d)));
  for (int64_t k = 0; 2 * k < d; ++k) {
    const S f = std::exp(static_cast<S>(2 * k) * c);
    for (int64_t i = 0; i < T; ++i) {
      const S angle = static_cast<S>(i) * f;
      pe(i, 2 * k) = std::sin(angle);
      if (2 * k + 1 < d) pe(i, 2 * k + 1) = std::cos(angle);
    }
  }
  return pe;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Positions: RoPE
// ---------------------------------------------------------------------------------------------

// The cosines and sines of RoPE's angles for positions first .. first + T - 1 of a head of
// size dh (even): entry (i, p), p < dh / 2, of the angle (first + i) * inv_freq[p], with
// inv_freq[p] = 1 / theta^((2p) / dh), each step rounded in S as the reference implementations
// compute them (Hugging Face's LlamaRotaryEmbedding, LLMs-from-scratch's compute_rope_params,
// Meta's precompute_freqs_cis, nanochat: arange(0, dh, 2).float() / dh, theta ** that, 1.0 /
// that, the position times it). The sines are multiplied by the sign (-1: nanochat's rotation,
// sin(-a) = -sin(a) exactly).
template <typename S>
struct RopeTable {
  MatrixOf<S> cos, sin;  ///< T x dh / 2
};

template <typename S>
RopeTable<S> RopeAngles(const PositionsSpec& p, int64_t T, int64_t dh, int64_t first = 0) {
  const int64_t half = dh / 2;
  RopeTable<S> t{MatrixOf<S>(T, half), MatrixOf<S>(T, half)};
  for (int64_t k = 0; k < half; ++k) {
    const S exponent = static_cast<S>(2 * k) / static_cast<S>(dh);
    const S inv_freq = S(1) / std::pow(static_cast<S>(p.theta), exponent);
    for (int64_t i = 0; i < T; ++i) {
      const S angle = static_cast<S>(first + i) * inv_freq;
      t.cos(i, k) = std::cos(angle);
      t.sin(i, k) = static_cast<S>(p.sign) * std::sin(angle);
    }
  }
  return t;
}

// `in` (T x H*dh, head h in columns h*dh .. h*dh + dh - 1; H is the query heads for Q and the
// K/V heads for K) rotated into `out` (same size):
// each pair (a, b) of a head's dimensions, row i, pair k, becomes
// (a cos - b sin, b cos + a sin). Pairs: dimensions k and k + dh/2 (split_halves: x * cos +
// rotate_half(x) * sin, rotate_half(x) = cat(-x2, x1)) or 2k and 2k + 1 (interleaved: the
// complex product (a + ib)(cos + i sin), as Meta's apply_rotary_emb).
template <typename S, typename In, typename Out>
void RopeRotate(const RopeTable<S>& t, RopeLayout layout, int64_t H, int64_t dh, const In& in,
                Out& out) {
  const int64_t half = dh / 2;
  for (Eigen::Index i = 0; i < in.rows(); ++i)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t k = 0; k < half; ++k) {
        const int64_t ca = h * dh + (layout == RopeLayout::kSplitHalves ? k : 2 * k);
        const int64_t cb = ca + (layout == RopeLayout::kSplitHalves ? half : 1);
        const S a = in(i, ca), b = in(i, cb), c = t.cos(i, k), s = t.sin(i, k);
        out(i, ca) = a * c - b * s;
        out(i, cb) = b * c + a * s;
      }
}

// QK-norm (scenario.h QkNormSpec) of `m` (T x n*dh, head h in columns h*dh .. h*dh + dh - 1),
// in place: each head's row x becomes x * rsqrt(mean(x^2) + eps), times weight[k] when a
// weight is given, each operation rounded in S as the composite F.rms_norm computes it (x.pow(2),
// mean, + eps, rsqrt as 1 / sqrt, the product, the weight's product). The scale is not applied
// here: it is a separate product after the result is stored (nanochat's q * 1.2).
template <typename S>
void QkNormRows(const QkNormSpec& q, S eps, int64_t dh, MatrixOf<S>& m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (int64_t c0 = 0; c0 + dh <= m.cols(); c0 += dh) {
      S sum = 0;
      for (int64_t k = 0; k < dh; ++k) {
        const S square = m(i, c0 + k) * m(i, c0 + k);
        sum += square;
      }
      const S mean = sum / static_cast<S>(dh);
      const S root = std::sqrt(mean + eps);
      const S inv = S(1) / root;
      for (int64_t k = 0; k < dh; ++k) {
        S y = m(i, c0 + k) * inv;
        if (!q.weight.empty()) y = y * static_cast<S>(q.weight[static_cast<size_t>(k)]);
        m(i, c0 + k) = y;
      }
    }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The normalizations' backward, one float32 row (grad.h)
// ---------------------------------------------------------------------------------------------

// The normaliser of "sum" for a row of logits z (T entries, -inf where masked): the allowed
// logits summed as NormalizeRow sums them in the float32 forward pass (PyTorch's order).
inline float SumNormaliser(const float* z, const uint8_t* allowed, int64_t T) {
  std::vector<float> kept(static_cast<size_t>(T));
  for (int64_t k = 0; k < T; ++k) kept[k] = allowed[k] ? z[k] : 0.0f;
  return RowSum(Numerics{}.sum, kept.data(), T, T);
}

// The stable softmax of a whole float32 row (every key; -inf entries give 0), for the
// backward of softmax_then_mask_no_renorm, whose weights keep the softmax of the unmasked row.
inline RowVector SoftmaxOfRow(const RowVector& z) {
  const RowVector e = (z.array() - z.maxCoeff()).exp().matrix();
  return e / e.sum();
}

// d L / d logits of one row (1 x T) for L = -log w_J through `norm`, w and z the row's weights
// and logits, allowed[k] 1 where the row may attend. Masked cells get 0 (nan when the row's
// gradient is nan, as PyTorch's softmax backward gives them); "mean" does not depend on z.
inline RowVector LossGradRow(Normalization norm, const RowVector& w, const RowVector& z,
                             const uint8_t* allowed, int64_t J) {
  const Eigen::Index T = w.size();
  RowVector g = RowVector::Zero(T);
  const float gJ = -1.0f / w[J];  // log's backward: grad / self, grad = -1
  switch (norm) {
    case Normalization::kSoftmax:
    case Normalization::kSoftmaxNaive:
    case Normalization::kSoftmaxThenMask: {
      // softmax's backward: w * (g - sum(g * w)); g is gJ at J and 0 elsewhere. softmax then
      // mask and renormalise is the softmax over the allowed keys (its normaliser cancels), so
      // its backward is the same, with 0 at the masked keys (w = 0 there).
      const float dot = gJ * w[J];
      for (Eigen::Index k = 0; k < T; ++k) g[k] = w[k] * ((k == J ? gJ : 0.0f) - dot);
      break;
    }
    case Normalization::kSum: {
      // w = kept / S: grad_kept = g / S; grad_S = -g_J * ((kept_J / S) / S), added to every kept.
      const float S = SumNormaliser(z.data(), allowed, T);
      const float gS = -gJ * (w[J] / S);
      // kept = masked_fill(logits, masked, 0): its backward zeroes the masked cells.
      for (Eigen::Index k = 0; k < T; ++k) g[k] = allowed[k] ? (k == J ? gJ / S : 0.0f) + gS : 0.0f;
      break;
    }
    case Normalization::kMean:
      break;  // the weights do not depend on the logits
    case Normalization::kSoftmaxDimQuery:
      // w_iJ is the softmax of column J: within row i only z_iJ moves it, by w_J (1 - w_J).
      g[J] = gJ * w[J] * (1.0f - w[J]);
      break;
    case Normalization::kSoftmaxThenMaskNoRenorm: {
      // w = p * mask with p the softmax over every key: d(-log w_J)/dz_k = gJ p_J (delta - p_k)
      // = -(delta_Jk - p_k), with p recomputed from the unmasked logits z.
      const RowVector p = SoftmaxOfRow(z);
      for (Eigen::Index k = 0; k < T; ++k) g[k] = gJ * p[J] * ((k == J ? 1.0f : 0.0f) - p[k]);
      break;
    }
  }
  return g;
}

// d w / d z of one row (T x T, entry (k, m) = d w_k / d z_m) under `norm`, arguments as
// LossGradRow: diag(w) - w w^T for the softmaxes (softmax_then_mask too), (delta_km - w_k) / S over
// the allowed keys for "sum", 0 for "mean".
inline Matrix NormalizationJacobian(Normalization norm, const RowVector& w, const RowVector& z,
                                    const uint8_t* allowed) {
  const Eigen::Index T = w.size();
  switch (norm) {
    case Normalization::kSoftmax:
    case Normalization::kSoftmaxNaive:
    case Normalization::kSoftmaxThenMask: {
      Matrix J = -(w.transpose() * w);
      J.diagonal() += w.transpose();
      return J;
    }
    case Normalization::kSum: {
      const float S = SumNormaliser(z.data(), allowed, T);
      Matrix J(T, T);
      for (Eigen::Index k = 0; k < T; ++k)
        for (Eigen::Index m = 0; m < T; ++m)
          J(k, m) = allowed[m] ? ((k == m ? 1.0f : 0.0f) - w[k]) / S : 0.0f;
      return J;
    }
    case Normalization::kMean:
      break;
    case Normalization::kSoftmaxDimQuery: {
      // Each weight of the row belongs to another column's softmax: d w_k / d z_m within the
      // row is w_k (1 - w_k) when k = m, else 0.
      Matrix J = Matrix::Zero(T, T);
      for (Eigen::Index k = 0; k < T; ++k) J(k, k) = w[k] * (1.0f - w[k]);
      return J;
    }
    case Normalization::kSoftmaxThenMaskNoRenorm: {
      // w_k = mask_k p_k: d w_k / d z_m = mask_k p_k (delta_km - p_m), p over every key.
      const RowVector p = SoftmaxOfRow(z);
      Matrix J = -(p.transpose() * p);
      J.diagonal() += p.transpose();
      for (Eigen::Index k = 0; k < T; ++k)
        if (!allowed[k]) J.row(k).setZero();
      return J;
    }
  }
  return Matrix::Zero(T, T);
}

}  // namespace attnlab::rules
