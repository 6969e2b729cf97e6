// grad_json.cpp: the gradients in the dump (see grad.h, WriteStagesJsonWithGradients).
#include <ostream>

#include "attnlab/grad.h"
#include "attnlab/stages_json.h"

namespace attnlab {

void WriteStagesJsonWithGradients(std::ostream& os, const Stages& st, const Gradients& g) {
  const int64_t B = st.shape.B, H = st.shape.H;
  const MatrixStack wk{g.grad_W_key}, wq{g.grad_W_query}, jacobian{g.jacobian_row};
  // In byte order (upper case first), as the dump's keys are.
  std::vector<DumpExtra> extra = {{"grad_K", &g.grad_K, B, 0}, {"grad_Q", &g.grad_Q, B, 0}};
  if (!st.X.empty()) {
    extra.push_back({"grad_W_key", &wk});
    extra.push_back({"grad_W_query", &wq});
  }
  extra.push_back({"grad_logits", &g.grad_logits, B, H});
  extra.push_back({"grad_scores", &g.grad_scores, B, H});
  extra.push_back({"jacobian_row", &jacobian});
  WriteStagesJson(os, st, extra);
}

}  // namespace attnlab
