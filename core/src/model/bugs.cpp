// bugs.cpp: see bugs.h.
#include "attnlab/model/bugs.h"

#include <cmath>

namespace attnlab {

const std::vector<BugInfo>& Bugs() {
  static const std::vector<BugInfo> bugs = {
      {"bug-softmax-dim", "softmax over the queries (dim=-2), not the keys",
       "weights sum to 1 down the columns instead of along the rows: the last key, seen only "
       "by the last query, gets weight 1 there",
       "karpathy/ng-video-lecture #42 (F.softmax(wei, dim=1): a very low loss, bad samples)"},
      {"bug-mask-after-softmax", "masked after softmax, not renormalised",
       "rows sum to less than 1: the masked keys' share of the softmax is thrown away instead of "
       "shared out, so early queries get almost no context",
       "Raschka, LLMs from scratch 3.5.1 (masked_simple without masked_simple_norm)"},
      {"bug-scale-d-model", "scaled by \xE2\x88\x9A" "C (d_model), not \xE2\x88\x9Ahead_size",
       "logits too small by \xE2\x88\x9A(C / head_size): every row is flatter (higher entropy) "
       "than the fix, so each query blurs over more keys",
       "karpathy/ng-video-lecture PR #6 (wei = q @ k.T * C**-0.5)"},
      {"bug-window-off-by-one", "sliding window W + 1 instead of W",
       "each query sees one key too many: the diagonal band is one cell wider than the window "
       "W the model was trained with",
       "ml-explore/mlx-lm PR #390"},
      {"bug-rope-pairs", "RoPE pairs (p, p + dh/2), not the model's (2p, 2p + 1)",
       "each frequency turns the wrong pair of q and k features: the scores still depend only "
       "on the distance, but not the way the weights were laid out for, so every row shifts",
       "karpathy/nanochat #264 (apply_rotary_emb splits halves; the frequencies are interleaved)"},
      {"bug-view-no-transpose", "heads split with view(B, heads, T, d_k), no transpose",
       "the heads split the sequence instead of the features: head h reads only tokens "
       "h\xC2\xB7T/heads .. (h+1)\xC2\xB7T/heads \xE2\x88\x92 1, each cut into heads pieces of d_k, "
       "so the later heads never see the first tokens",
       "harvardnlp/annotated-transformer #118, bentrevett/pytorch-seq2seq #148"},
  };
  return bugs;
}

const BugInfo* FindBug(const std::string& id) {
  for (const BugInfo& b : Bugs())
    if (id == b.id) return &b;
  return nullptr;
}

namespace {

// The title of the fix: " (fixed)" in place of a closing " (the bug)".
std::string FixedTitle(const std::string& title) {
  const std::string tag = " (the bug)";
  if (title.size() >= tag.size() && title.compare(title.size() - tag.size(), tag.size(), tag) == 0)
    return title.substr(0, title.size() - tag.size()) + " (fixed)";
  return title + " (fixed)";
}

}  // namespace

Scenario BugFix(const std::string& id, const Scenario& bug) {
  const Shape sh = ValidateScenario(bug);
  Scenario fix = bug;
  fix.title = FixedTitle(bug.title);
  if (id == "bug-softmax-dim") {
    if (bug.normalization != Normalization::kSoftmaxDimQuery)
      throw ScenarioError("normalization", "the " + id + " fix needs \"softmax_dim_query\"");
    fix.normalization = Normalization::kSoftmax;
  } else if (id == "bug-mask-after-softmax") {
    if (bug.normalization != Normalization::kSoftmaxThenMaskNoRenorm)
      throw ScenarioError("normalization", "the " + id + " fix needs \"softmax_then_mask_no_renorm\"");
    fix.normalization = Normalization::kSoftmaxThenMask;
  } else if (id == "bug-scale-d-model") {
    if (bug.scaling.sqrt_dk)
      throw ScenarioError("scaling.sqrt_dk", "the " + id + " fix needs false (the scale is the multiplier)");
    fix.scaling.multiplier = std::pow(static_cast<double>(sh.dh), -0.5);  // head_size**-0.5
  } else if (id == "bug-window-off-by-one") {
    if (bug.mask.kind != MaskKind::kSlidingWindow || bug.mask.window < 2)
      throw ScenarioError("mask.window",
                          "the " + id + " fix needs a sliding window of at least 2 keys");
    fix.mask.window = bug.mask.window - 1;
  } else if (id == "bug-rope-pairs") {
    if (bug.positions.kind != PositionKind::kRope ||
        bug.positions.layout != RopeLayout::kSplitHalves || sh.dh < 4)
      throw ScenarioError("positions.layout", "the " + id +
                                                  " fix needs RoPE with \"split_halves\" and a "
                                                  "head size of at least 4");
    fix.positions.layout = RopeLayout::kInterleaved;
  } else if (id == "bug-view-no-transpose") {
    if (bug.projections.head_split != HeadSplit::kViewNoTranspose || sh.H < 2)
      throw ScenarioError("projections.head_split",
                          "the " + id + " fix needs \"view_no_transpose\" and at least 2 heads");
    fix.projections.head_split = HeadSplit::kTranspose;
  } else {
    throw ScenarioError("bug", "no bug \"" + id + "\" in the gallery");
  }
  return fix;
}

}  // namespace attnlab
