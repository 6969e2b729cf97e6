// stats.h: the variances the notebooks print, q.var(), k.var(), wei.var(), ... over whole stages
// (each computed as variance.h says the scenario's library computes it).
//
// Legend: B batch, H heads, T tokens, d_out = d_k * H. Q and K are B x T x d_out, scores,
// logits and weights (B*H) x T x T (pipeline.h). Every variance is over all elements of the
// stage (or of one batch and head), as `tensor.var()` with no dim computes it.
#pragma once

#include <cstdint>

#include "attnlab/model/pipeline.h"
#include "attnlab/model/variance.h"

namespace attnlab {

/// The notebooks' variance prints of one run. Each is a double holding the value the notebook
/// prints (a float32 value for kTorchUnbiased).
struct StageVariances {
  double var_q = 0, var_k = 0;  ///< Q.var(), K.var() (B x T x d_out)
  double var_scores = 0;        ///< (Q @ K^T).var(), (B*H) x T x T
  double var_logits = 0;        ///< the scaled, masked logits: nan when a cell is -inf
  double var_weights = 0;       ///< the attention weights (before dropout)
};

/// The variances over the whole tensors: what `dump` writes as "stats". A float64 run
/// (st.f64 set) is measured in float64 (StackVarianceF64). `kind` defaults to the
/// scenario's generator: torch -> kTorchUnbiased, numpy -> kNumpy (VarianceKindOf).
StageVariances WholeVariances(const Stages& st, VarianceKind kind);

/// The same for batch b and head h only: Q and K restricted to head h's d_k columns of
/// batch b, scores, logits and weights the T x T matrix of (b, h). Error: std::out_of_range
/// when b or h is outside the stages.
StageVariances HeadVariances(const Stages& st, int64_t b, int64_t h, VarianceKind kind);

}  // namespace attnlab
