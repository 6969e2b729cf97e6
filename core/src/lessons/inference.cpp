// inference.cpp: see inference.h. The decode and online-softmax loops written out in the
// scenario's number type S, each step's logits and weights by the engine's stage rules
// (stage_rules.h) on the step's own rows, its mask read from AllowedCells (scenario.h).
//
// [SECTION] Shared pieces: refusals, differences, the head's rows
// [SECTION] A step's logit rule and weights
// [SECTION] KV-cache decode
// [SECTION] FlashAttention's tiled loop
// [SECTION] The agreement tolerance
// [SECTION] Decoded stages and the public entry points
#include "attnlab/lessons/inference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "model/kernels.h"
#include "model/stage_rules.h"

namespace attnlab {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Shared pieces: refusals, differences, the head's rows
// ---------------------------------------------------------------------------------------------

/// Refuses what neither loop can take: dropout (both are inference), the finite mask fills
/// the loops do not write (they mask with -inf), and the buggy head split (a step's rows are
/// its own tokens').
void CheckNoDropout(const Scenario& s, const char* what) {
  if (s.dropout.p > 0.0)
    throw InferenceError("dropout.p: " + std::to_string(s.dropout.p) + " is not 0; " + what +
                         " runs without dropout (inference), so it has nothing to equal");
  if (s.mask.fill != MaskFill::kNegInf)
    throw InferenceError(std::string("mask.fill: ") + what + " masks with -inf, not \"" +
                         Name(s.mask.fill) + "\"");
  if (s.projections.head_split != HeadSplit::kTranspose)
    throw InferenceError(std::string("projections.head_split: ") + what +
                         " reads each token's own row of Q, K and V; \"" +
                         Name(s.projections.head_split) +
                         "\" gives a head's row r pieces of other tokens' rows");
}

/// The largest |a - b| over two equally shaped matrices (doubles); nan where exactly one of
/// the two is nan, 0 where both are nan or the same infinity.
template <typename A, typename B>
double MaxAbsDiff(const A& a, const B& b) {
  double worst = 0.0;
  for (Eigen::Index r = 0; r < a.rows(); ++r)
    for (Eigen::Index c = 0; c < a.cols(); ++c) {
      const double x = static_cast<double>(a(r, c)), y = static_cast<double>(b(r, c));
      if (std::isnan(x) || std::isnan(y)) {
        if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      if (x == y) continue;
      worst = std::max(worst, std::abs(x - y));
    }
  return worst;
}

/// Sum over k < n of a[k] * b[k * stride], left to right, one rounding per product and sum.
template <typename S>
S Dot(const S* a, const S* b, int64_t n, int64_t stride) {
  S sum = 0;
  for (int64_t k = 0; k < n; ++k) sum += a[k] * b[k * stride];
  return sum;
}

/// `m` stored in `dtype` in place (bfloat16 / float16: each value rounded by StoreAs, as the
/// pipeline stores a stage); float32, float64 and double matrices are left as they are.
template <typename M>
void StoreIn(Dtype dtype, M&& m) {
  using S = typename std::decay_t<M>::Scalar;
  if constexpr (std::is_same_v<S, float>)
    if (IsLowPrecision(dtype)) m = m.unaryExpr([dtype](float v) { return StoreAs(dtype, v); });
}

/// The tensors of `st` in number type S: its float fields, or the float64 stages.
template <typename S>
const StageTensors<S>& TensorsOf(const Stages& st) {
  if constexpr (std::is_same_v<S, float>) {
    return st;
  } else {
    if (!st.f64)
      throw InferenceError("dtype: the stages hold no float64 values (run the scenario first)");
    return *st.f64;
  }
}

/// out_proj applied to `rows` (n x d_v) when the scenario has one, as the engine applies it
/// (low precision: the product stored, then + bias stored).
template <typename S>
void ApplyOutProj(const StageTensors<S>& ts, Dtype dtype, MatrixOf<S>& rows) {
  if (ts.out_proj_W.size() == 0) return;
  MatrixOf<S> y = rows * ts.out_proj_W;
  StoreIn(dtype, y);
  if (ts.out_proj_bias.size() > 0) {  // out_proj.bias false: the product alone
    y.rowwise() += ts.out_proj_bias;
    StoreIn(dtype, y);
  }
  rows = y;
}

/// Rows [first, first + n) of the context, per head weights (n x keys.size()) times the V rows
/// of `keys`, left to right over the keys; heads side by side (stored in `dtype`), then out_proj.
template <typename S>
MatrixOf<S> ContextRows(const StageTensors<S>& ts, const Shape& sh, Dtype dtype, int64_t b,
                        const std::vector<MatrixOf<S>>& weights, const std::vector<int64_t>& keys) {
  const int64_t n = weights.front().rows();
  MatrixOf<S> out = MatrixOf<S>::Zero(n, sh.d_v);
  const MatrixOf<S>& V = ts.V[static_cast<size_t>(b)];
  for (int64_t h = 0; h < sh.H; ++h) {
    const MatrixOf<S>& w = weights[static_cast<size_t>(h)];
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < sh.dh_v; ++c) {
        S sum = 0;
        for (size_t k = 0; k < keys.size(); ++k)
          sum += w(r, static_cast<Eigen::Index>(k)) * V(keys[k], sh.KvHead(h) * sh.dh_v + c);
        out(r, h * sh.dh_v + c) = sum;
      }
  }
  StoreIn(dtype, out);
  ApplyOutProj(ts, dtype, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] A step's logit rule and weights
// ---------------------------------------------------------------------------------------------

/// The stage rules both loops apply per head, as the pipeline does (stage_rules.h): the logit
/// scaling with scaling.softcap, ALiBi's slope per head, gpt-oss's sink logit per head.
template <typename S>
struct HeadRule {
  rules::LogitScaling<S> scaling;
  std::vector<S> slopes, sinks;  ///< per head; empty without ALiBi, without a sink
  MaskKind kind;                 ///< kCustom when the mask acts on the logits, else kNone
  /// scaling.scale_at "q_and_k": the scores' operands (Q and K, or Q_rot and K_rot) times
  /// their factors (QkScaleOf) and stored, B matrices each, as the engine's ScaleQk; else empty
  MatrixStackOf<S> q_scaled, k_scaled;
  /// The logit scaling of head h for a block whose row 0 and column 0 sit at absolute
  /// positions q0 and k0 (ALiBi's i and j).
  rules::LogitScaling<S> At(int64_t h, int64_t q0, int64_t k0) const {
    rules::LogitScaling<S> f = rules::ForHead(scaling, slopes, h);
    f.q0 = q0, f.k0 = k0;
    return f;
  }
  /// Head h's sink logit, nullptr without a sink.
  const S* Sink(int64_t h) const {
    return sinks.empty() ? nullptr : &sinks[static_cast<size_t>(h)];
  }
};

/// The HeadRule of scenario `s` with the stages' shape `sh`, built by the pipeline's own
/// helpers (LogitScalingOf, HeadSlopes, HeadSinks: stage_rules.h).
template <typename S>
HeadRule<S> RuleOf(const Scenario& s, const Shape& sh, const StageTensors<S>& ts) {
  HeadRule<S> rule{rules::LogitScalingOf<S>(s, sh.dh), rules::HeadSlopes<S>(s, sh.H),
                   rules::HeadSinks<S>(s, sh.H),
                   MaskAppliesToLogits(s.normalization) ? MaskKind::kCustom : MaskKind::kNone};
  if (s.scaling.scale_at == ScaleAt::kQAndK) {
    const QkScale f = QkScaleOf(s.scaling, sh.dh);
    for (const MatrixOf<S>& m : ts.Q_rot.empty() ? ts.Q : ts.Q_rot)
      rule.q_scaled.push_back(rules::ScaledOperand(m, f.q)), StoreIn(s.dtype, rule.q_scaled.back());
    for (const MatrixOf<S>& m : ts.K_rot.empty() ? ts.K : ts.K_rot)
      rule.k_scaled.push_back(rules::ScaledOperand(m, f.k)), StoreIn(s.dtype, rule.k_scaled.back());
  }
  return rule;
}

/// The queries and keys the scores multiply in batch b: Q_rot and K_rot with RoPE (each row
/// turned by its absolute position, as a KV cache stores its keys), else Q and K; under
/// scale_at "q_and_k" those times their factors (the rule's q_scaled and k_scaled).
template <typename S>
std::pair<const MatrixOf<S>&, const MatrixOf<S>&> ScoredQK(const StageTensors<S>& ts,
                                                           const HeadRule<S>& rule, int64_t b) {
  const size_t i = static_cast<size_t>(b);
  if (!rule.q_scaled.empty()) return {rule.q_scaled[i], rule.k_scaled[i]};
  if (!ts.Q_rot.empty()) return {ts.Q_rot[i], ts.K_rot[i]};
  return {ts.Q[i], ts.K[i]};
}

/// Head h's weights (q x keys) of decode step `step` in batch b: the new queries' scores over
/// the step's keys, logits by the head's rule at the queries' and keys' absolute positions
/// (the keys are contiguous: step.keys.front() onwards), each row's softmax over its keys plus
/// the sink column when there is one (WeightRows); the scores and weights recorded in `step`.
/// The logit and weight rules run as the engine runs them (kernels.h, at the active level), so
/// that a step's row equals the pipeline's bit for bit where they see the same keys.
/// bfloat16 / float16: the scores, the logits and the weights (and the sink's share) each
/// stored in the dtype once computed, as the pipeline stores them (the weights stay float32
/// with scaling.softmax_dtype "float32").
template <typename S>
MatrixOf<S> StepWeights(const Scenario& s, const StageTensors<S>& ts, const Shape& sh,
                        const Numerics& num, const HeadRule<S>& rule, int64_t b, int64_t h,
                        DecodeStep& step) {
  const auto qk = ScoredQK(ts, rule, b);
  const MatrixOf<S>&Q = qk.first, &K = qk.second;
  const int64_t q = step.t - step.first, kv = static_cast<int64_t>(step.keys.size());
  MatrixOf<S> sc(q, kv), lg(q, kv), w(q, kv), sink_w(q, 1);
  for (int64_t r = 0; r < q; ++r)
    for (int64_t c = 0; c < kv; ++c)
      sc(r, c) =
          Dot(&Q(step.first + r, h * sh.dh), &K(step.keys[c], sh.KvHead(h) * sh.dh), sh.dh, 1);
  StoreIn(s.dtype, sc);
  kernels::LogitRows<S>(sc.data(), step.allowed, rule.kind,
                        rule.At(h, step.first, step.keys.front()), 0, q, true, lg);
  StoreIn(s.dtype, lg);
  kernels::WeightRows<S>(s.normalization, num, lg, step.allowed, rule.kind, 0, q, true, w,
                         rule.Sink(h), &sink_w, s.scaling.sink_form);
  if (s.mask.masked_rows == MaskedRows::kZero) rules::ZeroMaskedRows(step.allowed, 0, q, w);
  if (s.scaling.softmax_dtype != SoftmaxDtype::kFloat32)
    StoreIn(s.dtype, w), StoreIn(s.dtype, sink_w);
  step.scores.push_back(sc.template cast<double>());
  step.logits.push_back(lg.template cast<double>());
  step.weights.push_back(w.template cast<double>());
  if (rule.Sink(h)) step.sink.push_back(sink_w.template cast<double>());
  return w;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] KV-cache decode
// ---------------------------------------------------------------------------------------------

template <typename S>
DecodeRun Decode(const Scenario& s, const Stages& st, const DecodeOptions& opt) {
  const StageTensors<S>& ts = TensorsOf<S>(st);
  const Shape& sh = st.shape;
  const int64_t T = sh.T;
  const MaskMatrix full = AllowedCells(s.mask, T);
  const bool ring = s.mask.kind == MaskKind::kSlidingWindow;
  const int64_t W = s.mask.window;
  const HeadRule<S> rule = RuleOf<S>(s, sh, ts);
  const Numerics num = NumericsOf<S>(st.generator);

  // (first, count) of every step: the prefill's chunks, then one token each.
  std::vector<std::pair<int64_t, int64_t>> plan;
  const int64_t C = opt.chunk > 0 ? opt.chunk : std::max<int64_t>(opt.prefill, 1);
  for (int64_t p = 0; p < opt.prefill; p += C) plan.emplace_back(p, std::min(C, opt.prefill - p));
  for (int64_t p = opt.prefill; p < T; ++p) plan.emplace_back(p, 1);

  DecodeRun run;
  run.context.assign(static_cast<size_t>(sh.B), MatrixD::Zero(T, sh.d_v));
  std::vector<int64_t> cache;  // positions whose K and V rows are kept, ascending
  for (const auto& [first, q] : plan) {
    DecodeStep step;
    step.first = first;
    step.t = first + q;
    if (ring)  // keys no query of this step (nor a later one) can see: older than first - W + 1
      while (!cache.empty() && cache.front() < first - W + 1) {
        step.evicted.push_back(cache.front());
        cache.erase(cache.begin());
      }
    step.keys = cache;
    for (int64_t p = first; p < first + q; ++p) step.keys.push_back(p);
    const int64_t kv = static_cast<int64_t>(step.keys.size());
    step.allowed.resize(q, kv);
    for (int64_t r = 0; r < q; ++r) {
      const int64_t row = AlignedQueryPosition(s.mask.align, first, step.keys.front(), r);
      for (int64_t c = 0; c < kv; ++c) step.allowed(r, c) = full(row, step.keys[c]);
      // What the full computation lets this query see that the step does not hold.
      int64_t reachable = 0;
      for (int64_t c = 0; c < kv; ++c) reachable += full(first + r, step.keys[c]);
      run.unreachable_cells += full.row(first + r).template cast<int64_t>().sum() - reachable;
    }
    for (int64_t b = 0; b < sh.B; ++b) {
      std::vector<MatrixOf<S>> head_weights;
      for (int64_t h = 0; h < sh.H; ++h)
        head_weights.push_back(StepWeights(s, ts, sh, num, rule, b, h, step));
      const MatrixOf<S> ctx = ContextRows(ts, sh, s.dtype, b, head_weights, step.keys);
      const auto fullrows = ts.context[static_cast<size_t>(b)].middleRows(first, q);
      const double diff = MaxAbsDiff(ctx, fullrows);
      step.max_abs_diff = std::isnan(diff) || std::isnan(step.max_abs_diff)
                              ? std::numeric_limits<double>::quiet_NaN()
                              : std::max(step.max_abs_diff, diff);
      step.context.push_back(ctx.template cast<double>());
      run.context[static_cast<size_t>(b)].middleRows(first, q) = ctx.template cast<double>();
    }
    cache = step.keys;
    if (ring)  // the ring buffer holds W keys: a chunk's extra keys leave after the step
      while (static_cast<int64_t>(cache.size()) > W) {
        step.evicted.push_back(cache.front());
        cache.erase(cache.begin());
      }
    step.cache_len = static_cast<int64_t>(cache.size());
    run.max_abs_diff = std::isnan(step.max_abs_diff) || std::isnan(run.max_abs_diff)
                           ? std::numeric_limits<double>::quiet_NaN()
                           : std::max(run.max_abs_diff, step.max_abs_diff);
    run.steps.push_back(std::move(step));
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] FlashAttention's tiled loop
// ---------------------------------------------------------------------------------------------

/// What the sink took of rows [row0, row0 + m.size()) of head `bh` (b * H + h) after the last
/// tile into sink[bh] (T x 1, made at the head's first block): exp(sink - m) / l when the sink
/// was the online softmax's first column (scaling.sink_form "concat"), 1 - gate for the
/// sigmoid rescale (`gate`: SigmoidGates).
template <typename S>
void RecordSink(S sink, SinkForm form, const std::vector<S>& m, const std::vector<S>& l,
                const std::vector<S>& gate, int64_t bh, int64_t row0, int64_t T,
                MatrixStackD& out) {
  if (static_cast<int64_t>(out.size()) <= bh)
    out.resize(static_cast<size_t>(bh) + 1, MatrixD::Zero(T, 1));
  for (size_t r = 0; r < m.size(); ++r)
    out[static_cast<size_t>(bh)](row0 + static_cast<int64_t>(r), 0) = static_cast<double>(
        form == SinkForm::kSigmoid ? S(1) - gate[r] : std::exp(sink - m[r]) / l[r]);
}

/// scaling.sink_form "sigmoid" after the last tile (torchtitan PR #2211): each row's keys'
/// share sigmoid(lse - sink) with lse = m + log l (-inf for a row that saw no key: l = 0), the
/// factor of O / l; 1 for every row otherwise (no sink, or the sink as a column).
template <typename S>
std::vector<S> SigmoidGates(const S* sink, SinkForm form, const std::vector<S>& m,
                            const std::vector<S>& l) {
  std::vector<S> gate(m.size(), S(1));
  if (sink && form == SinkForm::kSigmoid)
    for (size_t r = 0; r < m.size(); ++r)
      gate[r] = S(1) / (S(1) + std::exp(-((m[r] + std::log(l[r])) - *sink)));
  return gate;
}

template <typename S>
TiledRun Tiled(const Scenario& s, const Stages& st, int64_t Br, int64_t Bc) {
  const StageTensors<S>& ts = TensorsOf<S>(st);
  const Shape& sh = st.shape;
  const int64_t T = sh.T;
  const MaskMatrix full = AllowedCells(s.mask, T);
  const HeadRule<S> rule = RuleOf<S>(s, sh, ts);
  const S neg_inf = -std::numeric_limits<S>::infinity();
  TiledRun run;
  run.block_q = Br;
  run.block_k = Bc;
  for (int64_t b = 0; b < sh.B; ++b) {
    const auto qk = ScoredQK(ts, rule, b);
    const MatrixOf<S>&Q = qk.first, &K = qk.second;
    const MatrixOf<S>& V = ts.V[static_cast<size_t>(b)];
    MatrixOf<S> ctx(T, sh.d_v);
    for (int64_t h = 0; h < sh.H; ++h)
      for (int64_t i0 = 0; i0 < T; i0 += Br) {
        const int64_t rows = std::min(Br, T - i0);
        // A sink starts each row at m = sink, l = exp(sink - sink) = 1: one more column, never
        // multiplied with V, rescaled with the rest (a row with no allowed key ends at O = 0).
        // The sigmoid form (scaling.sink_form) leaves the online softmax alone and rescales
        // O / l by SigmoidGates after the last tile.
        const S* sink = rule.Sink(h);
        const bool sink_column = sink && s.scaling.sink_form == SinkForm::kConcat;
        std::vector<S> m(static_cast<size_t>(rows), sink_column ? *sink : neg_inf),
            l(static_cast<size_t>(rows), S(sink_column ? 1 : 0));
        MatrixOf<S> O = MatrixOf<S>::Zero(rows, sh.dh_v);
        for (int64_t j0 = 0; j0 < T; j0 += Bc) {
          const int64_t keys = std::min(Bc, T - j0);
          TileStep step{b, h, i0, rows, j0, keys};
          const MaskMatrix allowed = full.block(i0, j0, rows, keys);
          std::vector<S> rescale(static_cast<size_t>(rows), S(1));
          step.skipped = !allowed.any();
          if (step.skipped) {
            ++run.skipped_tiles;
          } else {
            MatrixOf<S> sc(rows, keys), lg(rows, keys);
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t c = 0; c < keys; ++c)
                sc(r, c) = Dot(&Q(i0 + r, h * sh.dh), &K(j0 + c, sh.KvHead(h) * sh.dh), sh.dh, 1);
            kernels::LogitRows<S>(sc.data(), allowed, MaskKind::kCustom, rule.At(h, i0, j0), 0,
                                  rows, true, lg);
            for (int64_t r = 0; r < rows; ++r) {
              const size_t ri = static_cast<size_t>(r);
              const S m_new = std::max(m[ri], lg.row(r).maxCoeff());
              if (m_new == neg_inf) continue;  // nothing allowed yet: the state stays 0
              rescale[ri] = m[ri] == neg_inf ? S(0) : std::exp(m[ri] - m_new);
              S sum = 0;
              std::vector<S> p(static_cast<size_t>(keys));
              for (int64_t c = 0; c < keys; ++c)
                sum += p[static_cast<size_t>(c)] = std::exp(lg(r, c) - m_new);
              l[ri] = rescale[ri] * l[ri] + sum;
              // Low precision (FlashAttention-2): l sums the float32 P, P·V reads P stored in the
              // dtype (the tensor cores multiply dtype operands into a float32 accumulator).
              if (IsLowPrecision(s.dtype))
                for (S& x : p) x = static_cast<S>(StoreAs(s.dtype, static_cast<float>(x)));
              for (int64_t d = 0; d < sh.dh_v; ++d)
                O(r, d) = rescale[ri] * O(r, d) +
                          Dot(p.data(), &V(j0, sh.KvHead(h) * sh.dh_v + d), keys, V.cols());
              m[ri] = m_new;
            }
          }
          step.m.assign(m.begin(), m.end());
          step.l.assign(l.begin(), l.end());
          step.rescale.assign(rescale.begin(), rescale.end());
          step.O = O.template cast<double>();
          run.steps.push_back(std::move(step));
        }
        const std::vector<S> gate = SigmoidGates(sink, s.scaling.sink_form, m, l);
        if (sink) RecordSink(*sink, s.scaling.sink_form, m, l, gate, sh.H * b + h, i0, T, run.sink);
        for (int64_t r = 0; r < rows; ++r) {
          const bool empty = !full.row(i0 + r).any();
          for (int64_t d = 0; d < sh.dh_v; ++d)
            ctx(i0 + r, h * sh.dh_v + d) =
                empty && s.mask.masked_rows == MaskedRows::kZero
                    ? S(0)
                    : O(r, d) / l[static_cast<size_t>(r)] * gate[static_cast<size_t>(r)];
        }
      }
    StoreIn(s.dtype, ctx);  // O / l made in float32, stored in the dtype
    ApplyOutProj(ts, s.dtype, ctx);
    const double diff = MaxAbsDiff(ctx, ts.context[static_cast<size_t>(b)]);
    run.max_abs_diff = std::isnan(diff) || std::isnan(run.max_abs_diff)
                           ? std::numeric_limits<double>::quiet_NaN()
                           : std::max(run.max_abs_diff, diff);
    run.context.push_back(ctx.template cast<double>());
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The agreement tolerance
// ---------------------------------------------------------------------------------------------

/// The largest finite |value| over `stack`, 0 for none.
template <typename S>
double LargestFinite(const MatrixStackOf<S>& stack) {
  double out = 0.0;
  for (const MatrixOf<S>& m : stack)
    for (Eigen::Index i = 0; i < m.size(); ++i)
      if (std::isfinite(m.data()[i]))
        out = std::max(out, std::abs(static_cast<double>(m.data()[i])));
  return out;
}

/// AgreementTolerance in number type S.
template <typename S>
double ToleranceOf(const Scenario& s, const Stages& st) {
  const StageTensors<S>& ts = TensorsOf<S>(st);
  const double L = LargestFinite(ts.context);
  if (s.dtype == Dtype::kFloat64) return 1e-12 * std::max(1.0, L);
  if (!IsLowPrecision(s.dtype)) return 1e-5 * std::max(1.0, L);
  // eps: the spacing of the dtype's numbers at 1 (a rounding moves a value by at most eps / 2
  // of it). Two roundings of each result row (O / l or weights·V, and out_proj's) give eps L;
  // the weights' own error (the weights or P stored: eps / 2 each; scores and logits stored
  // by the full computation, not by the tiles: up to eps |logit| per logit, so 2 eps Zmax
  // relative over a softmax row) reaches the rows through V (largest |V|) and out_proj (its
  // largest column sum of |W|, G).
  const double eps = DtypeEpsilon(s.dtype);
  double Z = LargestFinite(ts.logits);
  for (double sink : rules::HeadSinks<double>(s, st.shape.H)) Z = std::max(Z, std::abs(sink));
  const double G = ts.out_proj_W.size() == 0
                       ? 1.0
                       : static_cast<double>(ts.out_proj_W.cwiseAbs().colwise().sum().maxCoeff());
  return eps * (2 * L + G * LargestFinite(ts.V) * (2 + 2 * Z));
}

}  // namespace

double AgreementTolerance(const Scenario& s, const Stages& st) {
  return s.dtype == Dtype::kFloat64 && st.f64 ? ToleranceOf<double>(s, st)
                                              : ToleranceOf<float>(s, st);
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Decoded stages and the public entry points
// ---------------------------------------------------------------------------------------------

/// Run's rows placed into ts's per-head stages and context (DecodedStages), in number type S.
template <typename S>
void PlaceDecodedRows(const DecodeRun& run, const Shape& sh, StageTensors<S>& ts) {
  const S inf = std::numeric_limits<S>::infinity();
  for (size_t m = 0; m < ts.scores.size(); ++m) {
    ts.scores[m].setZero();
    ts.logits[m].setConstant(-inf);
    ts.weights[m].setZero();
    if (m < ts.sink.size()) ts.sink[m].setZero();
  }
  for (const DecodeStep& step : run.steps)
    for (size_t m = 0; m < step.scores.size(); ++m)
      for (int64_t r = 0; r < step.t - step.first; ++r)
        for (size_t c = 0; c < step.keys.size(); ++c) {
          const int64_t i = step.first + r, j = step.keys[c], ci = static_cast<int64_t>(c);
          ts.scores[m](i, j) = static_cast<S>(step.scores[m](r, ci));
          ts.logits[m](i, j) = static_cast<S>(step.logits[m](r, ci));
          ts.weights[m](i, j) = static_cast<S>(step.weights[m](r, ci));
          if (m < step.sink.size() && m < ts.sink.size())
            ts.sink[m](i, 0) = static_cast<S>(step.sink[m](r, 0));
        }
  for (int64_t b = 0; b < sh.B; ++b)
    ts.context[static_cast<size_t>(b)] = run.context[static_cast<size_t>(b)].template cast<S>();
}

}  // namespace

Stages DecodedStages(const Stages& full, const DecodeRun& run) {
  const Shape& sh = full.shape;
  const size_t heads = static_cast<size_t>(sh.B * sh.H);
  if (run.context.size() != static_cast<size_t>(sh.B) ||
      (!run.context.empty() && run.context[0].rows() != sh.T))
    throw std::invalid_argument("DecodedStages: the decode run is not of these stages (T = " +
                                std::to_string(sh.T) + ", B = " + std::to_string(sh.B) + ")");
  for (const DecodeStep& step : run.steps)
    if (step.scores.size() != heads)
      throw std::invalid_argument("DecodedStages: a step has " +
                                  std::to_string(step.scores.size()) +
                                  " head matrices, the stages " + std::to_string(heads));
  Stages out = full;
  out.weights_dropped.clear();
  out.f32.reset();
  out.mask = MaskMatrix::Zero(sh.T, sh.T);
  for (const DecodeStep& step : run.steps)
    for (int64_t r = 0; r < step.t - step.first; ++r)
      for (size_t c = 0; c < step.keys.size(); ++c)
        out.mask(step.first + r, step.keys[c]) = step.allowed(r, static_cast<int64_t>(c));
  if (full.f64) {
    auto f64 = std::make_shared<StagesF64>(*full.f64);
    f64->weights_dropped.clear();
    PlaceDecodedRows(run, sh, *f64);
    const auto narrow = [](const MatrixStackD& from, MatrixStack& to) {
      for (size_t m = 0; m < from.size(); ++m) to[m] = from[m].cast<float>();
    };
    narrow(f64->scores, out.scores);
    narrow(f64->logits, out.logits);
    narrow(f64->weights, out.weights);
    narrow(f64->sink, out.sink);
    narrow(f64->context, out.context);
    out.f64 = std::move(f64);
  } else {
    PlaceDecodedRows(run, sh, static_cast<StageTensors<float>&>(out));
  }
  return out;
}

void CheckDecode(const Scenario& s, int64_t T, const DecodeOptions& opt) {
  if (opt.prefill < 0 || opt.prefill > T)
    throw InferenceError("--prefill: " + std::to_string(opt.prefill) + " is outside 0.." +
                         std::to_string(T) + " (the scenario has T = " + std::to_string(T) +
                         " tokens)");
  if (opt.chunk < 0)
    throw InferenceError("--chunk: " + std::to_string(opt.chunk) +
                         " is negative (0: the prefill in one step)");
  if (s.normalization == Normalization::kSoftmaxDimQuery)
    throw InferenceError(
        "normalization: a decode step normalises each new query's row; "
        "\"softmax_dim_query\" normalises over queries that do not exist yet");
  CheckNoDropout(s, "a decode");
}

DecodeRun RunDecode(const Scenario& s, const Stages& st, const DecodeOptions& opt) {
  CheckDecode(s, st.shape.T, opt);
  DecodeRun run =
      s.dtype == Dtype::kFloat64 ? Decode<double>(s, st, opt) : Decode<float>(s, st, opt);
  run.tolerance = AgreementTolerance(s, st);
  return run;
}

void CheckTiled(const Scenario& s, int64_t block_q, int64_t block_k) {
  if (block_q < 1)
    throw InferenceError("--block-q: " + std::to_string(block_q) + " is less than 1 row");
  if (block_k < 1)
    throw InferenceError("--block-k: " + std::to_string(block_k) + " is less than 1 key");
  if (!IsSoftmaxOverAllowedKeys(s.normalization))
    throw InferenceError(std::string("normalization: the online softmax computes softmax, not \"") +
                         Name(s.normalization) + "\" (softmax or softmax_then_mask)");
  CheckNoDropout(s, "FlashAttention's forward pass");
}

MatrixD TileBlockOutput(const Scenario& s, const TiledRun& run, const TileStep& t, int64_t H) {
  const bool sigmoid = !run.sink.empty() && s.scaling.SigmoidSink();
  const size_t bh = static_cast<size_t>(t.batch * H + t.head);
  MatrixD out(t.rows, t.O.cols());
  for (int64_t r = 0; r < t.rows; ++r) {
    const double gate = sigmoid ? 1.0 - run.sink[bh](t.row0 + r, 0) : 1.0;
    for (int64_t d = 0; d < t.O.cols(); ++d) {
      const double v = t.O(r, d) / t.l[static_cast<size_t>(r)] * gate;
      out(r, d) = s.dtype == Dtype::kFloat64 ? v : StoreAs(s.dtype, static_cast<float>(v));
    }
  }
  return out;
}

TiledRun RunTiled(const Scenario& s, const Stages& st, int64_t block_q, int64_t block_k) {
  CheckTiled(s, block_q, block_k);
  TiledRun run = s.dtype == Dtype::kFloat64 ? Tiled<double>(s, st, block_q, block_k)
                                            : Tiled<float>(s, st, block_q, block_k);
  run.tolerance = AgreementTolerance(s, st);
  return run;
}

double EstimateInferenceBytes(const Shape& shape, bool decode, int64_t block_k) {
  constexpr double kDecodeBytesPerNumber = 112.0, kTiledBytesPerNumber = 64.0;
  const double B = static_cast<double>(shape.B * shape.H), T = static_cast<double>(shape.T);
  const double Bc = static_cast<double>(std::max<int64_t>(block_k, 1));
  return decode ? kDecodeBytesPerNumber * B * T * (T + 1) / 2
                : kTiledBytesPerNumber * B * std::ceil(T / Bc) * T *
                      static_cast<double>(shape.dh_v + 3);
}

}  // namespace attnlab
