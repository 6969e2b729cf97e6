// gqa_util.h: a grouped-K/V-heads scenario and the same attention written as plain multi-head
// attention, for tests that compare the two (pipeline_test, grad_test).
#pragma once

#include "attnlab/model/pipeline.h"

namespace attnlab::test {

/// randn X (T = 5, d_in = 4, seed 11), randn W (seed 12), d_out = 8, 4 query heads sharing
/// 2 K/V heads (d_k = 2): W_key and W_value are 4 x 4.
inline Scenario GroupedKvScenario() {
  return ParseScenario(R"({"format": "attention-lab/scenario@1",
    "input": {"source": "randn", "length": 5, "d_in": 4, "seed": 11},
    "projections": {"init": "randn", "d_out": 8, "seed": 12, "heads": 4, "kv_heads": 2}})");
}

/// `grouped` as plain multi-head attention: init "matrix" with the W of its run `st`, W_key and
/// W_value widened to d_in x d_out by repeating each K/V head's columns for the query heads
/// that share it (what repeat_interleave does to K and V).
inline Scenario RepeatedKvHeads(const Scenario& grouped, const Stages& st) {
  const Shape& sh = st.shape;
  Scenario r = grouped;
  r.projections.init = ProjectionInit::kMatrix;
  r.projections.kv_heads = 0;
  r.projections.seed.reset();
  r.projections.W[0] = st.W[0];
  for (int w = 1; w < 3; ++w) {
    Matrix full(sh.d_in, sh.d_out);
    for (int64_t h = 0; h < sh.H; ++h)
      full.middleCols(h * sh.dh, sh.dh) = st.W[w].middleCols(sh.KvHead(h) * sh.dh, sh.dh);
    r.projections.W[w] = full;
  }
  return r;
}

}  // namespace attnlab::test
