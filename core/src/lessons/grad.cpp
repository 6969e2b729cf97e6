// grad.cpp: see grad.h. The backward pass written out step by step in the order
// torch.autograd runs it for tools/torch_oracle.py's forward (masked_fill, then / sqrt(dh), then
// * multiplier, read backwards), so each float32 rounding is PyTorch's where it can be.
#include "attnlab/lessons/grad.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attnlab/lessons/experiments.h"
#include "model/stage_rules.h"

namespace attnlab {
namespace {

/// Refuses an index outside 0..T-1, naming what it indexes.
void CheckIndex(const char* what, int64_t v, int64_t T) {
  if (v < 0 || v >= T)
    throw GradError(std::string(what) + " " + std::to_string(v) + " is outside 0.." +
                    std::to_string(T - 1) + " (the scenario has T = " + std::to_string(T) +
                    " tokens)");
}

/// Whether query `row` may attend to `key` (every key when the stages carry no mask).
bool Allowed(const Stages& st, int64_t row, int64_t key) {
  return st.mask.rows() != st.shape.T || st.mask(row, key) != 0;
}

/// Row `row` of the mask as 0/1 (all 1 when the stages carry no mask).
std::vector<uint8_t> AllowedRow(const Stages& st, int64_t row) {
  std::vector<uint8_t> out(static_cast<size_t>(st.shape.T));
  for (int64_t k = 0; k < st.shape.T; ++k) out[k] = Allowed(st, row, k) ? 1 : 0;
  return out;
}

/// projections.qk_norm's backward, in place: `grad` (T x n*dh) with respect to the norm's output
/// becomes the gradient with respect to its input `pre` (same size). Per head row x with
/// r = 1 / sqrt(mean(x^2) + eps), y = x r w s (w the weight or 1, s the scale) and g' = grad w s:
/// dx = r (g' - x r^2 mean(g' x)), the derivative of x r (r's own derivative is -r^3 x / n).
void QkNormBackward(const QkNormSpec& q, float eps, int64_t dh, const Matrix& pre, Matrix& grad) {
  for (Eigen::Index i = 0; i < pre.rows(); ++i)
    for (int64_t c0 = 0; c0 + dh <= pre.cols(); c0 += dh) {
      double ms = 0, gx = 0;
      std::vector<double> gp(static_cast<size_t>(dh));
      for (int64_t k = 0; k < dh; ++k) {
        const double x = pre(i, c0 + k);
        const double w = q.weight.empty() ? 1.0 : q.weight[static_cast<size_t>(k)];
        gp[static_cast<size_t>(k)] = grad(i, c0 + k) * w * q.scale;
        ms += x * x;
        gx += gp[static_cast<size_t>(k)] * x;
      }
      const double n = static_cast<double>(dh);
      const double r = 1.0 / std::sqrt(ms / n + eps);
      for (int64_t k = 0; k < dh; ++k)
        grad(i, c0 + k) =
            static_cast<float>(r * (gp[static_cast<size_t>(k)] - pre(i, c0 + k) * r * r * gx / n));
    }
}

/// Whether projections.qk_norm comes after RoPE's rotation in `s` (it then normalizes Q_rot and
/// K_rot); false without a norm.
bool QkNormAfterRope(const Scenario& s) {
  return s.projections.qk_norm && s.projections.qk_norm->after_rope &&
         s.positions.kind == PositionKind::kRope;
}

/// grad_Q (B x T x d_out), grad_K (B x T x KV * dh) from grad_scores: per head h,
/// scores_h = Q_h K_g^T (g = KvHead(h), h itself unless K/V heads are grouped), so
/// grad_Q_h = grad_scores_h K_g and grad_K_g = sum over g's query heads of grad_scores_h^T Q_h
/// (repeat_interleave's backward sums the copies). Only row I of grad_Q is non-zero.
/// With RoPE the scores multiply Q_rot and K_rot: those gradients (Q's H heads, K's KV heads)
/// are rotated back (a rotation's transpose turns by the opposite angles: the same rule with
/// the sign flipped) onto Q and K.
void HeadSliceGrads(const Scenario& s, const Stages& st, Gradients& g) {
  const Shape& sh = st.shape;
  const bool rope = !st.Q_rot.empty();
  const MatrixStack& Q = rope ? st.Q_rot : st.Q;
  const MatrixStack& K = rope ? st.K_rot : st.K;
  g.grad_Q.assign(sh.B, Matrix::Zero(sh.T, sh.d_out));
  g.grad_K.assign(sh.B, Matrix::Zero(sh.T, sh.KWidth()));
  for (int64_t b = 0; b < sh.B; ++b)
    for (int64_t h = 0; h < sh.H; ++h) {
      const int64_t kv = sh.KvHead(h);
      const RowVector gs = st.Head(g.grad_scores, b, h).row(g.row);
      const auto K_g = K[b].middleCols(kv * sh.dh, sh.dh);
      const auto q_row = Q[b].row(g.row).segment(h * sh.dh, sh.dh);
      g.grad_Q[b].row(g.row).segment(h * sh.dh, sh.dh) = gs * K_g;
      g.grad_K[b].middleCols(kv * sh.dh, sh.dh) += gs.transpose() * q_row;
    }
  if (!rope) return;
  if (QkNormAfterRope(s)) {  // back through the norm onto the rotated, unnormalized rows
    const float eps = static_cast<float>(QkNormEps(*s.projections.qk_norm, s.dtype));
    const rules::RopeTable<float> fwd = rules::RopeAngles<float>(s.positions, sh.T, sh.dh);
    for (int64_t b = 0; b < sh.B; ++b)
      for (auto [grad, from] :
           {std::pair{&g.grad_Q[b], &st.Q[b]}, std::pair{&g.grad_K[b], &st.K[b]}}) {
        Matrix pre(from->rows(), from->cols());
        rules::RopeRotate(fwd, s.positions.layout, from->cols() / sh.dh, sh.dh, *from, pre);
        QkNormBackward(*s.projections.qk_norm, eps, sh.dh, pre, *grad);
      }
  }
  PositionsSpec back = s.positions;
  back.sign = -back.sign;
  const rules::RopeTable<float> table = rules::RopeAngles<float>(back, sh.T, sh.dh);
  for (MatrixStack* grads : {&g.grad_Q, &g.grad_K})
    for (Matrix& m : *grads) {
      Matrix rotated(m.rows(), m.cols());
      rules::RopeRotate(table, back.layout, m.cols() / sh.dh, sh.dh, m, rotated);
      m = rotated;
    }
}

/// grad_W_query (d_in x d_out), grad_W_key (d_in x KV * dh) = sum_b X_b^T grad_Q[b] (grad_K[b]); Q
/// = X W_query. projections.head_split "view_no_transpose": grad_Q and grad_K are laid out as the
/// heads read Q and K; each cell goes back to the projection's cell it was read from
/// (HeadSplitSource).
void ProjectionGrads(const Scenario& s, const Stages& st, Gradients& g) {
  if (st.X.empty()) return;  // qkv input: no W
  const Shape& sh = st.shape;
  g.grad_W_query = Matrix::Zero(sh.d_in, sh.d_out);
  g.grad_W_key = Matrix::Zero(sh.d_in, sh.KWidth());
  if (sh.H > 1 && s.projections.head_split != HeadSplit::kTranspose) {
    for (int64_t b = 0; b < sh.B; ++b)
      for (auto [grad, W] :
           {std::pair{&g.grad_Q[b], &g.grad_W_query}, std::pair{&g.grad_K[b], &g.grad_W_key}}) {
        Matrix back = Matrix::Zero(grad->rows(), grad->cols());
        for (int64_t r = 0; r < grad->rows(); ++r)
          for (int64_t c = 0; c < grad->cols(); ++c) {
            const StageCell from =
                HeadSplitSource(s.projections.head_split, sh.T, grad->cols(), sh.dh, r, c);
            back(from.row, from.col) = (*grad)(r, c);
          }
        W->noalias() += st.X[b].transpose() * back;
      }
    return;
  }
  // projections.qk_norm on Q and K themselves: grad_Q and grad_K are with respect to the
  // normalized Q and K the app shows; W's gradient goes back through the norm onto X W (+ b).
  const bool norm_here = s.projections.qk_norm && !QkNormAfterRope(s);
  for (int64_t b = 0; b < sh.B; ++b) {
    Matrix gq = g.grad_Q[b], gk = g.grad_K[b];
    if (norm_here) {
      const float eps = static_cast<float>(QkNormEps(*s.projections.qk_norm, s.dtype));
      for (auto [grad, w] : {std::pair{&gq, 0}, std::pair{&gk, 1}}) {
        Matrix pre = st.X[b] * st.W[w];
        if (st.bias[w].size() > 0) pre.rowwise() += st.bias[w];
        QkNormBackward(*s.projections.qk_norm, eps, sh.dh, pre, *grad);
      }
    }
    g.grad_W_query.noalias() += st.X[b].row(g.row).transpose() * gq.row(g.row);
    g.grad_W_key.noalias() += st.X[b].transpose() * gk;
  }
}

/// ||diag(w) - w w^T||_F for w = e / sum: the sum over k, m of (delta_km w_k - w_k w_m)^2 is
/// sum w^2 - 2 sum w^3 + (sum w^2)^2.
double JacobianNormOf(const std::vector<double>& e, double sum) {
  double s2 = 0.0, s3 = 0.0;
  for (double x : e) {
    const double p = x / sum;
    s2 += p * p;
    s3 += p * p * p;
  }
  const double v = s2 - 2.0 * s3 + s2 * s2;  // rounding may leave it just below 0
  return std::sqrt(v < 0.0 ? 0.0 : v);       // nan stays nan
}

}  // namespace

Gradients LossGradients(const Scenario& s, const Stages& st, int64_t row, int64_t key) {
  const Shape& sh = st.shape;
  CheckIndex("loss row", row, sh.T);
  CheckIndex("loss key", key, sh.T);
  if (!Allowed(st, row, key))
    throw GradError("loss key " + std::to_string(key) + " is masked for query row " +
                    std::to_string(row) + " (mask.kind " + Name(s.mask.kind) +
                    "): its weight is 0 and -log 0 is infinite; pick a key the row may see");
  if (s.scaling.scale_at == ScaleAt::kQAndK)
    throw GradError(
        "scaling.scale_at \"q_and_k\": the gradients are worked out for the scale applied to "
        "the scores (\"scores\", the same logits up to rounding); switch it back to see them");
  Gradients g;
  g.row = row;
  g.key = key;
  const float div = static_cast<float>(std::sqrt(static_cast<double>(sh.dh)));
  const float mult = static_cast<float>(s.scaling.multiplier);
  g.grad_logits.assign(st.weights.size(), Matrix::Zero(sh.T, sh.T));
  g.grad_scores.assign(st.weights.size(), Matrix::Zero(sh.T, sh.T));
  for (size_t m = 0; m < st.weights.size(); ++m) {
    const RowVector w = st.weights[m].row(row);
    g.loss -= std::log(static_cast<double>(w[key]));
    const RowVector gz = rules::LossGradRow(s.normalization, w, st.logits[m].row(row),
                                            AllowedRow(st, row).data(), key);
    g.grad_logits[m].row(row) = gz;
    for (int64_t k = 0; k < sh.T; ++k) {
      float v = Allowed(st, row, k) ? gz[k] : 0.0f;  // masked_fill's backward
      if (s.scaling.softcap) {
        // cap * tanh(x / cap) backward as autograd takes it: * cap, tanh's (1 - y * y) with y
        // its output (x recomputed as the forward pass computes it), / cap.
        const float cap = static_cast<float>(*s.scaling.softcap);
        float x = st.scores[m](row, k);
        if (mult != 1.0f) x = x * mult;
        if (s.scaling.sqrt_dk) x = x / div;
        if (s.positions.kind == PositionKind::kAlibi)  // ALiBi's bias comes before the cap
          x = x + -(static_cast<float>(
                        AlibiSlopesOf(s.positions, sh.H)[static_cast<size_t>(m % sh.H)]) *
                    static_cast<float>(AlibiDistance(row, k, s.positions.symmetric)));
        const float y = std::tanh(x / cap);
        v = ((v * cap) * (1.0f - y * y)) / cap;
      }
      if (s.scaling.sqrt_dk) v = v / div;
      g.grad_scores[m](row, k) = v * mult;
    }
  }
  HeadSliceGrads(s, st, g);
  ProjectionGrads(s, st, g);
  g.jacobian_row = RowJacobian(s, st, 0, 0, row);
  return g;
}

Matrix SoftmaxJacobian(const RowVector& w) {
  return rules::NormalizationJacobian(Normalization::kSoftmax, w, w, nullptr);
}

Matrix RowJacobian(const Scenario& s, const Stages& st, int64_t b, int64_t h, int64_t row) {
  CheckIndex("batch", b, st.shape.B);
  CheckIndex("head", h, st.shape.H);
  CheckIndex("row", row, st.shape.T);
  const RowVector w = st.Head(st.weights, b, h).row(row);
  return rules::NormalizationJacobian(s.normalization, w, st.Head(st.logits, b, h).row(row),
                                      AllowedRow(st, row).data());
}

double SoftmaxJacobianNorm(const RowVector& w) {
  std::vector<double> p(w.data(), w.data() + w.size());
  return JacobianNormOf(p, 1.0);
}

std::vector<double> JacobianNormCurve(const RowVector& scores, const std::vector<uint8_t>& allowed,
                                      const CurveRules& rules,
                                      const std::vector<double>& multipliers) {
  std::vector<double> out;
  out.reserve(multipliers.size());
  for (double m : multipliers) {
    const RowVectorD w = SoftmaxRowAt(scores, allowed, rules, m);  // PeakingCurve's softmax
    out.push_back(JacobianNormOf(std::vector<double>(w.begin(), w.end()), 1.0));
  }
  return out;
}

double StackNorm(const MatrixStack& stack) {
  double ss = 0.0;
  for (const Matrix& m : stack) ss += m.cast<double>().squaredNorm();
  return std::sqrt(ss);
}

}  // namespace attnlab
