// adam.h (internal to the lessons): one tensor's torch.optim.Adam / AdamW step, the one rule the
// training lessons (train.cpp, circuits.cpp) update their weights by.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnlab::detail {

/// torch.optim.Adam's single-tensor step (PyTorch 1.13, no amsgrad) on n floats, or AdamW's
/// when weight_decay > 0 (decoupled: param.mul_(1 - lr * weight_decay) first; Adam's default
/// weight_decay of 0 leaves the parameter alone):
///   exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
///   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
///   step_size = lr / (1 - beta1**step);  bc2_sqrt = math.sqrt(1 - beta2**step)   (double)
///   param.addcdiv_(exp_avg, exp_avg_sq.sqrt() / bc2_sqrt + eps, value=-step_size)
/// betas 0.9, 0.999, eps 1e-8; `step` counts from 1. Scalars are rounded to float32 as the
/// kernels do; the vectorised kernels' fused multiply-adds are written as std::fma.
inline void AdamUpdate(float* param, const float* grad, float* m, float* v, int64_t n, int64_t step,
                       double lr, double weight_decay = 0) {
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  const float beta1 = static_cast<float>(kBeta1), beta2 = static_cast<float>(kBeta2);
  const float alpha1 = static_cast<float>(1 - kBeta1), alpha2 = static_cast<float>(1 - kBeta2);
  const double bc1 = 1 - std::pow(kBeta1, static_cast<double>(step));
  const double bc2 = 1 - std::pow(kBeta2, static_cast<double>(step));
  const float neg_step = static_cast<float>(-(lr / bc1));
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float eps = static_cast<float>(kEps);
  const float decay = static_cast<float>(1 - lr * weight_decay);
  for (int64_t i = 0; i < n; ++i) {
    if (weight_decay != 0) param[i] *= decay;
    const float g = grad[i];
    m[i] = std::fma(g, alpha1, m[i] * beta1);
    v[i] = std::fma(alpha2 * g, g, v[i] * beta2);
    const float denom = std::sqrt(v[i]) / bc2_sqrt + eps;
    param[i] = std::fma(neg_step, m[i] / denom, param[i]);
  }
}

}  // namespace attnlab::detail
