// bugs.cpp: see bugs.h.
#include "attnlab/model/bugs.h"

#include <cmath>

namespace attnlab {

const std::vector<BugInfo>& Bugs() {
  static const std::vector<BugInfo> bugs = {
      {"bug-softmax-dim", "softmax over the queries (dim=-2), not the keys",
       "weights sum to 1 down the columns instead of along the rows: the last key, seen only "
       "by the last query, gets weight 1 there",
       "karpathy/ng-video-lecture #42 (F.softmax(wei, dim=1): a very low loss, bad samples)",
       "softmax over the keys (dim=-1): every row sums to 1"},
      {"bug-mask-after-softmax", "masked after softmax, not renormalised",
       "rows sum to less than 1: the masked keys' share of the softmax is thrown away instead of "
       "shared out, so early queries get almost no context",
       "Raschka, LLMs from scratch 3.5.1 (masked_simple without masked_simple_norm)",
       "softmax, the mask, then each row divided by its sum: rows sum to 1 again"},
      {"bug-scale-d-model",
       "scaled by \xE2\x88\x9A"
       "C (d_model), not \xE2\x88\x9Ahead_size",
       "logits too small by \xE2\x88\x9A(C / head_size): every row is flatter (higher entropy) "
       "than the fix, so each query blurs over more keys",
       "karpathy/ng-video-lecture PR #6 (wei = q @ k.T * C**-0.5)",
       "scaled by head_size**-0.5 (1 / \xE2\x88\x9A"
       "d_k)"},
      {"bug-window-off-by-one", "sliding window W + 1 instead of W",
       "each query sees one key too many: the diagonal band is one cell wider than the window "
       "W the model was trained with",
       "ml-explore/mlx-lm PR #390", "the sliding window of W keys the model was trained with"},
      {"bug-rope-pairs", "RoPE pairs (p, p + dh/2), not the model's (2p, 2p + 1)",
       "each frequency turns the wrong pair of q and k features: the scores still depend only "
       "on the distance, but not the way the weights were laid out for, so every row shifts",
       "karpathy/nanochat #264 (apply_rotary_emb splits halves; the frequencies are interleaved)",
       "RoPE on the model's own pairs (2p, 2p + 1)"},
      {"bug-view-no-transpose", "heads split with view(B, heads, T, d_k), no transpose",
       "the heads split the sequence instead of the features: head h reads only tokens "
       "h\xC2\xB7T/heads .. (h+1)\xC2\xB7T/heads \xE2\x88\x92 1, each cut into heads pieces of "
       "d_k, "
       "so the later heads never see the first tokens",
       "harvardnlp/annotated-transformer #118, bentrevett/pytorch-seq2seq #148",
       "heads split by features: view(B, T, heads, d_k).transpose(1, 2)"},
      {"bug-fp16-mask-fill", "masked_fill(mask, -1e9) in float16, not torch.finfo(dtype).min",
       "-1e9 is beyond float16's range (65504) and is stored as -inf: a row that sees no key (a "
       "padding query) is 0 / 0 = nan instead of finite, and in the next layer 0 * nan spreads "
       "it to every row",
       "NVIDIA/apex #93 (torch.Tensor([-1e15]).half() is -inf: nan in float16 training) and "
       "#1052 (on a float16 tensor masked_fill(..., -1e9) raises \"value cannot be converted to "
       "type at::Half without overflow\"); facebookresearch/mmf PR #962 (-1e9 replaced by a "
       "value float16 holds)",
       "masked with torch.finfo(float16).min (-65504): the padding rows stay finite"},
      {"bug-decode-top-left", "top-left causal mask in a decode step (is_causal, 1 query, t keys)",
       "the new token's query is masked as row 0 of torch.ones(1, t).tril(), as if it sat at "
       "the first position: it sees only the first key, so every decoded row puts weight 1 on "
       "the first token. The full T \xC3\x97 T computation (as many queries as keys) is the same "
       "either way; only a decode step shows it",
       "pytorch/pytorch #144858 and #108108 (scaled_dot_product_attention's is_causal aligns "
       "the mask top-left when L < S); rasbt/LLMs-from-scratch #697",
       "bottom-right alignment: query r of a step sits at its own position and sees every cached "
       "key before it",
       true},
      {"bug-sink-sigmoid",
       "attention sink as softmax \xC3\x97 \xCF\x83(lse \xE2\x88\x92 sink), not one more softmax "
       "column",
       "the same weights wherever a row sees a key (\xCF\x83(lse \xE2\x88\x92 s) is exactly the "
       "keys' "
       "share of the softmax over [logits, s]), but a row that sees no key (a padding query) "
       "is nan: its softmax over all \xE2\x88\x92inf is 0 / 0 and \xCF\x83(\xE2\x88\x92inf) = 0 "
       "cannot undo it, where the sink should take the whole row",
       "pytorch/torchtitan PR #2211 (gpt-oss's sink applied after FlexAttention as "
       "out * sigmoid(lse - sink))",
       "the sink as one more column of each row's softmax (torch.cat([logits, sink]).softmax): "
       "a row with no key gives 0 weights and 1 to the sink"},
      {"bug-causal-dropped", "causal mask dropped on the fast path (is_causal not passed)",
       "every query attends to the tokens after it: the weights above the diagonal are not "
       "zero, so each word's context mixes in the words it should predict, and a model trained "
       "so learns to read the answer instead of predicting it",
       "vllm-project/vllm-omni #7322 (2026: a FlashAttention path called without causal=True "
       "ran full bidirectional attention); karpathy/nanoGPT #451 (the flash branch masks only "
       "through is_causal=True)",
       "the causal mask on every path: is_causal=True, or masked_fill with the tril mask"},
  };
  return bugs;
}

const BugInfo* FindBug(const std::string& id) {
  for (const BugInfo& b : Bugs())
    if (id == b.id) return &b;
  return nullptr;
}

Scenario BugFix(const std::string& id, const Scenario& bug) {
  const Shape sh = ValidateScenario(bug);
  Scenario fix = bug;
  // The fix says what is right (the bug's title says what is wrong, so it cannot be reused).
  if (const BugInfo* info = FindBug(id)) fix.title = "The fix of " + id + ": " + info->fix;
  if (id == "bug-softmax-dim") {
    if (bug.normalization != Normalization::kSoftmaxDimQuery)
      throw ScenarioError("normalization", "the " + id + " fix needs \"softmax_dim_query\"");
    fix.normalization = Normalization::kSoftmax;
  } else if (id == "bug-mask-after-softmax") {
    if (bug.normalization != Normalization::kSoftmaxThenMaskNoRenorm)
      throw ScenarioError("normalization",
                          "the " + id + " fix needs \"softmax_then_mask_no_renorm\"");
    fix.normalization = Normalization::kSoftmaxThenMask;
  } else if (id == "bug-scale-d-model") {
    if (bug.scaling.sqrt_dk)
      throw ScenarioError("scaling.sqrt_dk",
                          "the " + id + " fix needs false (the scale is the multiplier)");
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
  } else if (id == "bug-fp16-mask-fill") {
    if (bug.mask.fill != MaskFill::kMinus1e9 || bug.dtype != Dtype::kFloat16)
      throw ScenarioError("mask.fill", "the " + id + " fix needs \"-1e9\" in a float16 scenario");
    fix.mask.fill = MaskFill::kFinfoMin;
  } else if (id == "bug-decode-top-left") {
    if (bug.mask.align != MaskAlign::kTopLeft || bug.mask.kind == MaskKind::kNone)
      throw ScenarioError("mask.align",
                          "the " + id + " fix needs \"top_left\" and a mask (not \"none\")");
    fix.mask.align = MaskAlign::kBottomRight;
  } else if (id == "bug-sink-sigmoid") {
    if (bug.scaling.sink_form != SinkForm::kSigmoid)
      throw ScenarioError("scaling.sink_form", "the " + id + " fix needs \"sigmoid\"");
    fix.scaling.sink_form = SinkForm::kConcat;
  } else if (id == "bug-causal-dropped") {
    if (bug.mask.kind != MaskKind::kNone)
      throw ScenarioError("mask.kind", "the " + id + " fix needs \"none\" (the mask dropped)");
    fix.mask = MaskSpec{};
    fix.mask.kind = MaskKind::kCausal;
  } else {
    throw ScenarioError("bug", "no bug \"" + id + "\" in the gallery");
  }
  return fix;
}

std::optional<Scenario> ApplyBug(const std::string& id, const Scenario& right) {
  Scenario bug = right;
  const bool masked = right.mask.kind != MaskKind::kNone;
  const bool projected = right.input.source != InputSource::kQkv;
  if (id == "bug-softmax-dim" && right.normalization == Normalization::kSoftmax) {
    bug.normalization = Normalization::kSoftmaxDimQuery;
  } else if (id == "bug-mask-after-softmax" && masked &&
             (right.normalization == Normalization::kSoftmax ||
              right.normalization == Normalization::kSoftmaxThenMask)) {
    bug.normalization = Normalization::kSoftmaxThenMaskNoRenorm;
  } else if (id == "bug-scale-d-model" && projected) {
    // sqrt_dk, or its fix's spelling: no sqrt_dk and the multiplier head_size**-0.5
    const Shape sh = ValidateScenario(right);
    const double by_dh = std::pow(static_cast<double>(sh.dh), -0.5);
    const bool fix_form =
        !right.scaling.sqrt_dk && std::fabs(right.scaling.multiplier - by_dh) <= 1e-12 * by_dh;
    if (sh.d_in == sh.dh || (!right.scaling.sqrt_dk && !fix_form)) return std::nullopt;
    bug.scaling.sqrt_dk = false;
    bug.scaling.multiplier =
        (fix_form ? 1.0 : right.scaling.multiplier) * std::pow(static_cast<double>(sh.d_in), -0.5);
  } else if (id == "bug-window-off-by-one" && right.mask.kind == MaskKind::kSlidingWindow) {
    bug.mask.window = right.mask.window + 1;
  } else if (id == "bug-rope-pairs" && right.positions.kind == PositionKind::kRope &&
             right.positions.layout == RopeLayout::kInterleaved) {
    if (ValidateScenario(right).dh < 4) return std::nullopt;
    bug.positions.layout = RopeLayout::kSplitHalves;
  } else if (id == "bug-view-no-transpose" && projected && right.projections.heads >= 2 &&
             !right.projections.per_head && right.projections.head_split == HeadSplit::kTranspose) {
    bug.projections.head_split = HeadSplit::kViewNoTranspose;
  } else if (id == "bug-fp16-mask-fill" && masked && right.dtype == Dtype::kFloat16 &&
             right.mask.fill != MaskFill::kMinus1e9) {
    bug.mask.fill = MaskFill::kMinus1e9;
  } else if (id == "bug-decode-top-left" && masked && right.mask.align == MaskAlign::kBottomRight) {
    bug.mask.align = MaskAlign::kTopLeft;
  } else if (id == "bug-sink-sigmoid" && !right.scaling.sink.empty() &&
             right.scaling.sink_form == SinkForm::kConcat) {
    bug.scaling.sink_form = SinkForm::kSigmoid;
  } else if (id == "bug-causal-dropped" && right.mask.kind == MaskKind::kCausal &&
             right.mask.align == MaskAlign::kBottomRight) {
    bug.mask = MaskSpec{};  // mask none, and the causal mask's settings gone with it
  } else {
    return std::nullopt;
  }
  if (const BugInfo* info = FindBug(id)) bug.title = right.title + " with " + info->name;
  return bug;
}

}  // namespace attnlab
