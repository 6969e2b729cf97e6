// stats.cpp: see stats.h.
#include "attnlab/model/stats.h"

#include <stdexcept>
#include <string>

#include "attnlab/model/pipeline.h"

namespace attnlab {

StageVariances WholeVariances(const Stages& st, VarianceKind kind) {
  if (st.f64) {
    const StagesF64& f = *st.f64;
    return {StackVarianceF64(f.Q, kind), StackVarianceF64(f.K, kind),
            StackVarianceF64(f.scores, kind), StackVarianceF64(f.logits, kind),
            StackVarianceF64(f.weights, kind)};
  }
  return {StackVariance(st.Q, kind), StackVariance(st.K, kind), StackVariance(st.scores, kind),
          StackVariance(st.logits, kind), StackVariance(st.weights, kind)};
}

StageVariances HeadVariances(const Stages& st, int64_t b, int64_t h, VarianceKind kind) {
  const Shape& sh = st.shape;
  if (b < 0 || b >= sh.B || h < 0 || h >= sh.H || st.Q.size() != static_cast<size_t>(sh.B))
    throw std::out_of_range("HeadVariances: batch " + std::to_string(b) + ", head " +
                            std::to_string(h) + " outside the stages");
  // K: the columns of the K/V head that query head h reads (its own unless kv_heads groups them).
  const int64_t col = h * sh.dh, kcol = sh.KvHead(h) * sh.dh, head = b * sh.H + h;
  if (st.f64) {
    const StagesF64& f = *st.f64;
    const auto one = [&](const MatrixStackD& s) { return MatrixVarianceF64(s[head], kind); };
    return {ColumnsVarianceF64(f.Q[b], col, sh.dh, kind),
            ColumnsVarianceF64(f.K[b], kcol, sh.dh, kind), one(f.scores), one(f.logits),
            one(f.weights)};
  }
  // The head's T x T matrices are measured where they are, not copied.
  const auto one = [&](const MatrixStack& s) { return MatrixVariance(st.Head(s, b, h), kind); };
  return {ColumnsVariance(st.Q[b], col, sh.dh, kind), ColumnsVariance(st.K[b], kcol, sh.dh, kind),
          one(st.scores), one(st.logits), one(st.weights)};
}

}  // namespace attnlab
