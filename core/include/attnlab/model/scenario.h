// scenario.h: the scenario file format attention-lab/scenario@1: read, validate, write.
//
// A scenario is everything a learner can set: input, seeds, projections, scaling, mask,
// normalization and dropout. The format, field by field, is what this header
// and ParseScenario's refusals say; tests/golden/scenarios shows it in use with PyTorch's numbers.
//
// Legend: B batch, T tokens, d_in input width, d_out projection width, H heads, dh = d_out / H.
//
// [SECTION] The format's name, its limits, ScenarioError
// [SECTION] The format's choices and their spellings
// [SECTION] The parts: input, projections, scaling, mask, dropout, positions
// [SECTION] Scenario and Shape; head splits and grouped K/V
// [SECTION] Reading and validating
// [SECTION] Seeds and draws
// [SECTION] Writing, the memory estimate, comparisons
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "attnlab/base/enum_names.h"
#include "attnlab/base/tensor.h"
#include "attnlab/model/tokenizer.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] The format's name, its limits, ScenarioError
// ---------------------------------------------------------------------------------------------

/// The format tag every scenario file carries.
inline constexpr const char* kScenarioFormat = "attention-lab/scenario@1";

/// The largest amount of memory one scenario's stages may take: 2 GiB. A scenario whose
/// estimated size (EstimateStageBytes) is larger is refused before anything is allocated.
inline constexpr double kMaxStageBytes = 2.0 * 1024 * 1024 * 1024;

/// The largest scenario or figure file that is read: 256 MiB (a float32 matrix of about 25
/// million numbers as JSON text). A larger file is refused before a byte of it is read
/// (ReadScenarioFile); parsing what is below it takes time linear in its size.
inline constexpr uint64_t kMaxScenarioFileBytes = 256ull * 1024 * 1024;

/// The deepest JSON nesting a scenario (or a figure's metadata) may have: 64 arrays or objects
/// inside one another. A scenario needs 4 (a batch of matrices inside "input"); deeper text is
/// refused by CheckJsonLimits before anything is built from it.
inline constexpr int kMaxJsonDepth = 64;

/// A scenario that cannot be run. `field()` is the dotted path of the culprit
/// ("projections.heads", "input.values[2]"), or "" for JSON syntax errors, whose message
/// gives the line and column. what() is one line: "<field>: <what is wrong>".
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string field, const std::string& message);
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] The format's choices and their spellings
// ---------------------------------------------------------------------------------------------

/// input.source: where X comes from (see InputSpec); qkv: no X, Q, K and V directly.
enum class InputSource { kMatrix, kText, kRandn, kQkv };
/// input.generator: whose random generator the draws reproduce. kTorch: torch.manual_seed and
/// torch.randn / torch.rand (rng.h). kNumpy: NumPy's legacy global generator, np.random.seed
/// and np.random.randn / np.random.rand (numpy_rng.h): float64 draws, rounded to float32 in a
/// float32 scenario, kept in a float64 one (Dtype). NumPy has no nn.Linear, nn.Embedding or
/// nn.Dropout.
enum class Generator { kTorch, kNumpy };
/// projections.init: how W_query, W_key, W_value are made (see ProjectionSpec).
enum class ProjectionInit { kIdentity, kTorchRand, kRandn, kLinear, kMatrix };
/// Whether `init` draws W from the generator (torch_rand, randn, linear): then d_out is needed
/// and projections.seed, if given, reseeds before the draws.
inline bool ProjectionInitDraws(ProjectionInit init) {
  return init == ProjectionInit::kTorchRand || init == ProjectionInit::kRandn ||
         init == ProjectionInit::kLinear;
}
/// One of the three projections; also the index into ProjectionSpec::W and Stages::W.
enum class Projection { kQuery = 0, kKey = 1, kValue = 2 };
/// projections.head_split: how the B x T x (n * dh) projections become n heads of T x dh.
/// kTranspose: q.view(B, T, n, dh).transpose(1, 2), what every reference implementation writes:
/// head h takes columns h*dh .. (h+1)*dh - 1 of every token's row. kViewNoTranspose: the
/// classic mistake q.view(B, n, T, dh) with no transpose (annotated-transformer #118,
/// bentrevett/pytorch-seq2seq #148; the bug gallery's bug-view-no-transpose): the same memory
/// read as n blocks of T rows, so head h's row r is the dh numbers at flat position
/// (h*T + r) * dh of the batch entry's row-major T x (n * dh) matrix, a piece of token
/// (h*T + r) / n's row instead of token r's. The buggy code merges the heads back the same way,
/// context.view(B, T, d_v) with no transpose. Applied to Q, K and V alike (HeadSplitSource).
enum class HeadSplit { kTranspose, kViewNoTranspose };
/// mask.kind: none (all allowed), causal (key j <= query i), custom (MaskSpec::allowed),
/// sliding_window (keys i - W + 1 .. i, as gpt-oss and mlx-lm count), prefix_lm (keys j < P
/// for every query, causal after), document (causal within a document of MaskSpec::doc_ids),
/// and / or (MaskSpec::of combined cell by cell, as attention-gym's and_masks / or_masks).
enum class MaskKind { kNone, kCausal, kCustom, kSlidingWindow, kPrefixLm, kDocument, kAnd, kOr };
/// mask.masked_rows: what a row with no allowed key gives: nan (0 / 0, the notebooks'
/// softmax) or zero (0 weights, as PyTorch >= 2.5's scaled_dot_product_attention).
enum class MaskedRows { kNan, kZero };
/// mask.fill: the value masked logits get, as masked_fill(~allowed, value) writes it, then
/// stored in the dtype: -inf (default), torch.finfo(dtype).min (kFinfoMin), -1e9 or -1e4 (the
/// constants of many repositories), or Gemma's -2.3819763e38 (kGemma: gemma_pytorch's model.py
/// fills its causal mask with it, 0.7 x float32's largest, and adds the mask to the scores). A
/// finite fill gives a row with no allowed key uniform weights 1 / T instead of nan; -1e9 and
/// Gemma's value in float16 overflow to -inf (its range ends at 65504).
enum class MaskFill { kNegInf, kFinfoMin, kMinus1e9, kMinus1e4, kGemma };
/// scaling.softmax_dtype: kSame computes the weights like any stage (stored in the dtype);
/// kFloat32 is the usual low-precision fix, torch.softmax(logits, dim=-1, dtype=torch.float32):
/// the weights (and their dropout) computed and kept in float32, the context computed from them
/// in float32 and stored in the dtype. bfloat16 and float16 only.
enum class SoftmaxDtype { kSame, kFloat32 };
/// scaling.sink_form: how gpt-oss's attention sink s acts on a row of logits l (keys allowed).
/// kConcat: Hugging Face's and gpt-oss's reference, softmax over [l, s] with the sink's column
/// dropped. kSigmoid: torchtitan's FlexAttention rescale (pytorch/torchtitan PR #2211),
/// softmax(l) * sigmoid(lse - s) with lse = logsumexp(l): the keys' share
/// e^lse / (e^lse + e^s) of the concat form, so the two agree to rounding wherever a row sees a
/// key; a row that sees none is nan (softmax over all -inf is 0/0, sigmoid(-inf) = 0, nan * 0)
/// where the concat form gives 0 weights and the whole row to the sink (the bug gallery's
/// bug-sink-sigmoid).
enum class SinkForm { kConcat, kSigmoid };
/// scaling.scale_at: where the scale (multiplier / sqrt(dh)) is applied. kScores: to the
/// product, logits = (q @ k^T) * multiplier / sqrt(dh), as the notebooks write it. kQAndK: to
/// q and k before the product, each times sqrt(scale), as PyTorch's math path of
/// scaled_dot_product_attention computes it (aten/src/ATen/native/transformers/attention.cpp,
/// _scaled_dot_product_attention_math): the same logits up to rounding (QkScaleOf).
enum class ScaleAt { kScores, kQAndK };
/// mask.align: where a step's queries sit against its keys when there are fewer queries than
/// keys (a KV-cache decode step: q_len < kv_len; with q_len == kv_len, as in the full
/// computation, both are the same). kBottomRight: the last query is the last key's token, what
/// decoding needs (flash-attn >= 2.1, PyTorch's causal_lower_right); kTopLeft: query row r is
/// the step's first key + r, what PyTorch's is_causal (torch.ones(L, S).tril()) does, so a new
/// token sees only the first key (pytorch #108108, #144858). AlignedQueryPosition applies it.
enum class MaskAlign { kBottomRight, kTopLeft };
/// normalization: how logits become weights, row by row (see pipeline.h). kSoftmaxThenMask is
/// Raschka's section 3.5.1 first way (`masked_simple_norm`): softmax over every key, the
/// weights times the 0/1 mask, each row divided by its new sum; the logits stay unmasked.
/// kSoftmaxThenMaskNoRenorm is the classic mistake of that way (the bug gallery's
/// bug-mask-after-softmax): softmax over every key, times the mask, and no renormalisation, so
/// a row's weights sum to less than 1 (the masked keys' share is lost).
/// kSoftmaxDimQuery is the other classic mistake (bug-softmax-dim, ng-video-lecture #42):
/// torch.softmax(logits, dim=-2), each key's column normalised over the queries instead of
/// each query's row over the keys, so the columns sum to 1 and the rows do not.
enum class Normalization {
  kSoftmax,
  kSoftmaxNaive,
  kSum,
  kMean,
  kSoftmaxThenMask,
  kSoftmaxThenMaskNoRenorm,
  kSoftmaxDimQuery
};

/// Whether the mask reaches the logits (-inf where a key is masked, before the normalization):
/// true for every normalization but softmax_then_mask and softmax_then_mask_no_renorm, which
/// mask the weights instead.
inline bool MaskAppliesToLogits(Normalization n) {
  return n != Normalization::kSoftmaxThenMask && n != Normalization::kSoftmaxThenMaskNoRenorm;
}
/// Whether the weights are the stable softmax over each row's allowed keys (softmax, and
/// softmax_then_mask, whose renormalisation cancels the masked keys' share): what the
/// peaking and gradient curves (experiments.h, grad.h) compute.
inline bool IsSoftmaxOverAllowedKeys(Normalization n) {
  return n == Normalization::kSoftmax || n == Normalization::kSoftmaxThenMask;
}

/// dtype (top level): the precision of the whole pipeline. kFloat32: PyTorch's default float32
/// tensors (NumPy draws rounded to float32). kFloat64: every draw, product and normalisation in
/// double, as torch.float64 tensors (torch.set_default_dtype(torch.float64)) or NumPy's native
/// float64 arrays compute them (pipeline.h, "float64"). kBfloat16 and kFloat16: low precision
/// (pipeline.h, "bfloat16 and float16"): every stage computed in float32 from the previous
/// stage's stored values and its result rounded to nearest even in the dtype, as PyTorch's
/// GPU kernels accumulate in float32 and store torch.bfloat16 / torch.float16.
enum class Dtype { kFloat32, kFloat64, kBfloat16, kFloat16 };

/// Whether `d` stores its stages in fewer bits than float32 (bfloat16, float16).
inline bool IsLowPrecision(Dtype d) { return d == Dtype::kBfloat16 || d == Dtype::kFloat16; }

/// Bytes one value of `d` takes as stored (torch's element_size()): 8 for float64, 4 for
/// float32, 2 for bfloat16 and float16 (the app holds them widened to float32 in memory).
inline int64_t BytesPerValue(Dtype d) {
  return d == Dtype::kFloat64 ? 8 : IsLowPrecision(d) ? 2 : 4;
}

/// positions.kind (top level "positions"; absent = none): how token positions enter attention.
/// kRope rotates each head's q and k by angles proportional to the position (RoFormer; Llama,
/// Hugging Face, LLMs-from-scratch, nanochat), between the projections and the scores;
/// kSinusoidal adds the original Transformer's fixed encoding to X (Vaswani et al. 2017, 3.5);
/// kAlibi adds ALiBi's linear biases to the logits (AlibiSlopes). kNone: positions do not
/// enter (the notebooks'). Each kind has its own fields in PositionsSpec.
enum class PositionKind { kNone, kAlibi, kRope, kSinusoidal };
/// positions.layout (rope only): which dimensions of a head rotate together. kSplitHalves pairs
/// i and i + dh/2 (Hugging Face's rotate_half, LLMs-from-scratch, nanochat); kInterleaved pairs
/// 2i and 2i + 1 (Meta's original Llama, complex numbers).
enum class RopeLayout { kSplitHalves, kInterleaved };
/// positions.slopes (alibi only): which slope head h gets. kPaper: the paper's reference code
/// (AlibiSlopes); kAttentionGym: 2^(-8(h+1)/H) for any H (AttentionGymSlopes); kGiven: the
/// numbers the scenario lists, one per head (PositionsSpec::slopes).
enum class AlibiSlopeRule { kPaper, kAttentionGym, kGiven };

/// The spec's spellings of each enum, in the order messages and menus list them; Name(v),
/// ParseName<E>(text) and NameList<E>() (enum_names.h) read these lists and nothing else.
inline constexpr EnumName<InputSource> kInputSources[] = {{InputSource::kMatrix, "matrix"},
                                                          {InputSource::kText, "text"},
                                                          {InputSource::kRandn, "randn"},
                                                          {InputSource::kQkv, "qkv"}};
inline constexpr EnumName<Generator> kGenerators[] = {{Generator::kTorch, "torch"},
                                                      {Generator::kNumpy, "numpy"}};
inline constexpr EnumName<ProjectionInit> kProjectionInits[] = {
    {ProjectionInit::kIdentity, "identity"},
    {ProjectionInit::kTorchRand, "torch_rand"},
    {ProjectionInit::kRandn, "randn"},
    {ProjectionInit::kLinear, "linear"},
    {ProjectionInit::kMatrix, "matrix"}};
inline constexpr EnumName<Projection> kProjections[] = {
    {Projection::kQuery, "query"}, {Projection::kKey, "key"}, {Projection::kValue, "value"}};
inline constexpr EnumName<HeadSplit> kHeadSplits[] = {
    {HeadSplit::kTranspose, "transpose"}, {HeadSplit::kViewNoTranspose, "view_no_transpose"}};
inline constexpr EnumName<MaskKind> kMaskKinds[] = {{MaskKind::kNone, "none"},
                                                    {MaskKind::kCausal, "causal"},
                                                    {MaskKind::kCustom, "custom"},
                                                    {MaskKind::kSlidingWindow, "sliding_window"},
                                                    {MaskKind::kPrefixLm, "prefix_lm"},
                                                    {MaskKind::kDocument, "document"},
                                                    {MaskKind::kAnd, "and"},
                                                    {MaskKind::kOr, "or"}};
inline constexpr EnumName<MaskedRows> kMaskedRows[] = {{MaskedRows::kNan, "nan"},
                                                       {MaskedRows::kZero, "zero"}};
inline constexpr EnumName<MaskFill> kMaskFills[] = {{MaskFill::kNegInf, "-inf"},
                                                    {MaskFill::kFinfoMin, "finfo_min"},
                                                    {MaskFill::kMinus1e9, "-1e9"},
                                                    {MaskFill::kMinus1e4, "-1e4"},
                                                    {MaskFill::kGemma, "-2.3819763e38"}};
inline constexpr EnumName<SoftmaxDtype> kSoftmaxDtypes[] = {{SoftmaxDtype::kSame, "same"},
                                                            {SoftmaxDtype::kFloat32, "float32"}};
inline constexpr EnumName<SinkForm> kSinkForms[] = {{SinkForm::kConcat, "concat"},
                                                    {SinkForm::kSigmoid, "sigmoid"}};
inline constexpr EnumName<ScaleAt> kScaleAts[] = {{ScaleAt::kScores, "scores"},
                                                  {ScaleAt::kQAndK, "q_and_k"}};
inline constexpr EnumName<MaskAlign> kMaskAligns[] = {{MaskAlign::kBottomRight, "bottom_right"},
                                                      {MaskAlign::kTopLeft, "top_left"}};
inline constexpr EnumName<Normalization> kNormalizations[] = {
    {Normalization::kSoftmax, "softmax"},
    {Normalization::kSoftmaxNaive, "softmax_naive"},
    {Normalization::kSum, "sum"},
    {Normalization::kMean, "mean"},
    {Normalization::kSoftmaxThenMask, "softmax_then_mask"},
    {Normalization::kSoftmaxThenMaskNoRenorm, "softmax_then_mask_no_renorm"},
    {Normalization::kSoftmaxDimQuery, "softmax_dim_query"}};
inline constexpr EnumName<Dtype> kDtypes[] = {{Dtype::kFloat32, "float32"},
                                              {Dtype::kFloat64, "float64"},
                                              {Dtype::kBfloat16, "bfloat16"},
                                              {Dtype::kFloat16, "float16"}};
inline constexpr EnumName<PositionKind> kPositionKinds[] = {
    {PositionKind::kNone, "none"},
    {PositionKind::kAlibi, "alibi"},
    {PositionKind::kRope, "rope"},
    {PositionKind::kSinusoidal, "sinusoidal"}};
inline constexpr EnumName<AlibiSlopeRule> kAlibiSlopeRules[] = {
    {AlibiSlopeRule::kPaper, "paper"},
    {AlibiSlopeRule::kAttentionGym, "attention_gym"},
    {AlibiSlopeRule::kGiven, "given"}};
inline constexpr EnumName<RopeLayout> kRopeLayouts[] = {{RopeLayout::kSplitHalves, "split_halves"},
                                                        {RopeLayout::kInterleaved, "interleaved"}};
constexpr const auto& AllNames(PositionKind) { return kPositionKinds; }
constexpr const auto& AllNames(RopeLayout) { return kRopeLayouts; }
constexpr const auto& AllNames(AlibiSlopeRule) { return kAlibiSlopeRules; }
constexpr const auto& AllNames(InputSource) { return kInputSources; }
constexpr const auto& AllNames(Generator) { return kGenerators; }
constexpr const auto& AllNames(ProjectionInit) { return kProjectionInits; }
constexpr const auto& AllNames(Projection) { return kProjections; }
constexpr const auto& AllNames(MaskKind) { return kMaskKinds; }
constexpr const auto& AllNames(HeadSplit) { return kHeadSplits; }
constexpr const auto& AllNames(MaskedRows) { return kMaskedRows; }
constexpr const auto& AllNames(MaskAlign) { return kMaskAligns; }
constexpr const auto& AllNames(MaskFill) { return kMaskFills; }
constexpr const auto& AllNames(SoftmaxDtype) { return kSoftmaxDtypes; }
constexpr const auto& AllNames(SinkForm) { return kSinkForms; }
constexpr const auto& AllNames(ScaleAt) { return kScaleAts; }
constexpr const auto& AllNames(Normalization) { return kNormalizations; }
constexpr const auto& AllNames(Dtype) { return kDtypes; }

// ---------------------------------------------------------------------------------------------
// [SECTION] The parts: input, projections, scaling, mask, dropout, positions
// ---------------------------------------------------------------------------------------------

/// 0/1 matrix, T x T, row-major: 1 where query i may attend to key j.
using MaskMatrix = Eigen::Matrix<uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// "input": where X (B x T x d_in) comes from.
struct InputSpec {
  InputSource source = InputSource::kMatrix;
  // matrix: B matrices of T x d_in; tokens: T labels or empty for "x1".."xT".
  MatrixStack values;
  std::vector<std::string> tokens;
  // text: X = rows of nn.Embedding(V, d_in) created right after torch.manual_seed(seed).
  std::string text;
  TokenizerKind tokenizer = TokenizerKind::kWords;
  std::vector<std::string> special_tokens = {"<|endoftext|>", "<|unk|>"};
  // text and randn
  int64_t d_in = 0;
  uint64_t seed = 0;
  // randn: X = torch.randn(batch, length, d_in) right after torch.manual_seed(seed)
  // (np.random.seed(seed); np.random.randn(batch, length, d_in) with the numpy generator).
  int64_t batch = 1;
  int64_t length = 0;
  // The generator of every draw of the scenario (input, projections). Default torch.
  Generator generator = Generator::kTorch;
  // qkv, drawn (Q, K, V empty): after the seed, q = randn(batch, length, d_k),
  // k = randn(batch, length, d_k), v = randn(batch, length, d_v) in `order`.
  // qkv, given: Q, K (B x T x d_k) and V (B x T x d_v) as written; tokens as for matrix.
  // The heads of a qkv scenario are ProjectionSpec::heads (input.heads in the file).
  int64_t d_k = 0;
  int64_t d_v = 0;  ///< 0: d_k
  std::array<Projection, 3> order = {Projection::kQuery, Projection::kKey, Projection::kValue};
  MatrixStack Q, K, V;
  /// qkv with Q, K and V given as matrices (not drawn).
  bool QkvGiven() const { return source == InputSource::kQkv && !Q.empty(); }
};

/// "projections.qk_norm" (absent: off): RMSNorm of each head's q and k (dh numbers each) before
/// the scores, as nanochat's gpt.py (CausalSelfAttention.forward: norm(q), norm(k) after
/// apply_rotary_emb, its norm F.rms_norm without a weight, then q * 1.2 and k * 1.2) and
/// gemma_pytorch's model.py (GemmaAttention.forward: query_norm and key_norm, RMSNorm of
/// head_dim with a weight, before apply_rotary_emb) write it. Each head's row x becomes
/// x * rsqrt(mean(x^2) + eps) * weight, then times `scale` (QkNormRow, one rule): the norm's
/// three roundings as the composite F.rms_norm computes them, the scale one more (a separate
/// q * 1.2). Q and K (or Q_rot and K_rot with "order" "after_rope") are the normalized values.
struct QkNormSpec {
  /// "eps" (absent: torch.finfo(dtype).eps, F.rms_norm's default when eps is None).
  std::optional<double> eps;
  /// "weight" (absent: none): dh numbers, every head's, as one nn.Parameter of head_dim shared
  /// by the heads. Gemma's RMSNorm multiplies by (1 + weight): write those sums here.
  std::vector<double> weight;
  /// "order": "after_rope" (default, nanochat) or "before_rope" (Gemma). Without RoPE the two
  /// are the same setting (Q and K are normalized).
  bool after_rope = true;
  double scale = 1.0;  ///< "scale": q and k times this after the norm (nanochat's 1.2)
  bool operator==(const QkNormSpec&) const = default;
};
/// eps of `q` in a scenario of dtype `d`: q.eps, or torch.finfo(d).eps (2^-23 for float32, 2^-52
/// for float64, 2^-7 for bfloat16, 2^-10 for float16).
double QkNormEps(const QkNormSpec& q, Dtype d);

/// "projections": how W_query, W_key, W_value (d_in x d_out, x @ W convention) are made.
struct ProjectionSpec {
  ProjectionInit init = ProjectionInit::kIdentity;
  int64_t d_out = 0;             ///< ignored for identity (d_out = d_in); for matrix, from W
  std::optional<uint64_t> seed;  ///< nullopt: the generator goes on from the input's draws
  std::array<Projection, 3> order = {Projection::kQuery, Projection::kKey, Projection::kValue};
  bool bias = false;  ///< linear only
  int64_t heads = 1;  ///< must divide d_out
  /// Grouped K/V heads (GQA, as LLMs-from-scratch's GQA module): 0 (absent) = heads. Must
  /// divide heads; W_key and W_value are then d_in x (kv_heads * dh), K and V have kv_heads
  /// heads, and query head h reads K/V head h / (heads / kv_heads) (repeat_interleave). 1 is
  /// multi-query attention. Not with identity, per_head or qkv input.
  int64_t kv_heads = 0;
  bool out_proj = false;  ///< linear only: nn.Linear(d_out, d_out, bias=True) after Q,K,V
  /// out_proj's bias ("out_proj": {"bias": false} drops it): nn.Linear(d_out, d_out,
  /// bias=False), as LLMs-from-scratch's 04_gqa, nanoGPT (bias=False), nanochat's c_proj and
  /// Gemma's o_proj; the generator then draws the weight only. Read only with out_proj.
  bool out_proj_bias = true;
  /// Inits that draw only: one module per head, as LLMs-from-scratch ch03
  /// MultiHeadAttentionWrapper's ModuleList of CausalAttention. Head h draws its own
  /// W_query, W_key, W_value (d_in x dh each, in `order`) after head h - 1's, and they fill
  /// columns h*dh .. (h+1)*dh - 1 of the d_in x d_out W; the dropout mask is drawn head by head
  /// too (head h's B x T x T after head h - 1's). false: the three d_in x d_out matrices are
  /// drawn whole (MultiHeadAttention's weight split).
  bool per_head = false;
  /// "head_split" (HeadSplit): "transpose" (default) or the bug "view_no_transpose". Not with
  /// per_head (its modules split nothing) or qkv input.
  HeadSplit head_split = HeadSplit::kTranspose;
  /// "qk_norm" (QkNormSpec; absent: off). Not with head_split "view_no_transpose".
  std::optional<QkNormSpec> qk_norm;
  std::array<Matrix, 3> W;  ///< matrix only, indexed by Projection (K, V: d_in x kv_heads*dh)
};

/// "scaling": how scores become logits, and the score modifiers of today's models.
struct ScalingSpec {
  bool sqrt_dk = true;  ///< divide by sqrt(dh)
  double multiplier =
      1.0;  ///< the temperature knob (1/T): logits = scores * multiplier [/ sqrt(dh)]
  /// "softcap" c > 0 (absent: off): logits = c * tanh(logits / c) after the multiplier and
  /// sqrt(dh), before the mask, as Gemma 2's attention soft-capping (c = 50 there): every logit
  /// is squashed into (-c, c). Three float32 roundings, as PyTorch computes them.
  std::optional<double> softcap;
  /// "sink" (absent: empty, off): the logit of gpt-oss's attention sink, one number for every
  /// head or one per head (H numbers, head h's at index h). Each row's softmax runs over its T
  /// keys plus a sink column holding this logit (unscaled, unmasked), and the sink's column is
  /// dropped before weights @ V, so a row's weights sum to 1 minus what the sink took
  /// (Stages::sink); a row with every key masked gives 0 weights, not nan. Needs
  /// normalization "softmax".
  std::vector<double> sink;
  /// "softmax_dtype" (SoftmaxDtype): "same" (default) or "float32", the upcast softmax of a
  /// bfloat16 or float16 scenario.
  SoftmaxDtype softmax_dtype = SoftmaxDtype::kSame;
  /// "sink_form" (SinkForm): "concat" (default, absent from files) or "sigmoid", how the sink
  /// acts on the softmax (the weights, and Stages::sink = 1 - the keys' share). Needs a sink.
  SinkForm sink_form = SinkForm::kConcat;
  /// "scale_at" (ScaleAt): "scores" (default, absent from files) or "q_and_k", PyTorch's
  /// scaled_dot_product_attention math path: q and k each times sqrt(scale) (QkScaleOf), the
  /// scores stage then holds the scaled product and the logits take no further scaling.
  ScaleAt scale_at = ScaleAt::kScores;
  /// The sink logit of head h (empty sink: none). Needs a validated scenario.
  double SinkOf(int64_t h) const {
    return sink.size() == 1 ? sink[0] : sink[static_cast<size_t>(h)];
  }
  /// Whether a sink rescales the softmax by sigmoid(lse - sink) (sink_form "sigmoid",
  /// torchtitan) instead of being one more softmax column.
  bool SigmoidSink() const { return !sink.empty() && sink_form == SinkForm::kSigmoid; }
};

/// The factors q and k are each multiplied by before q @ k^T under scale_at "q_and_k", as
/// PyTorch's _scaled_dot_product_attention_math (aten/src/ATen/native/transformers/
/// attention.cpp) makes them: scale = multiplier / sqrt(dh) (multiplier without sqrt_dk), in
/// double as SDPA's `scale` argument; k's factor sqrt(|scale|) in double, q's the same with the
/// scale's sign (SDPA's negative scaling). The engine rounds them to its number type (float32's
/// opmath in float32, bfloat16 and float16); each product q * f is one rounding.
struct QkScale {
  double q = 1, k = 1;
};
QkScale QkScaleOf(const ScalingSpec& scaling, int64_t dh);

/// "mask": which keys each query may attend to (AllowedCells builds the T x T matrix).
struct MaskSpec {
  MaskKind kind = MaskKind::kNone;
  MaskMatrix allowed;            ///< custom only: T x T of 0/1
  int64_t window = 1;            ///< sliding_window only: W >= 1 keys, the query's own included
  int64_t prefix = 0;            ///< prefix_lm only: P >= 0 keys every query sees
  std::vector<int64_t> doc_ids;  ///< document only: T document ids, one per token
  std::vector<MaskSpec> of;      ///< and / or only: the masks combined (at least one)
  MaskedRows masked_rows = MaskedRows::kNan;  ///< top-level mask only
  MaskFill fill = MaskFill::kNegInf;          ///< top-level mask only: the masked logits' value
  MaskAlign align = MaskAlign::kBottomRight;  ///< top-level mask only: steps with q_len < kv_len
};

/// The T x T matrix of `mask` (1 where query i may attend to key j): the one place every mask
/// kind is turned into cells (engine, figures and stages all read it). `mask` must be valid
/// for T (ValidateScenario); custom masks of another size throw std::invalid_argument.
MaskMatrix AllowedCells(const MaskSpec& mask, int64_t T);
/// The position (row of AllowedCells) that row r of a step's queries is masked as, under
/// `align` (MaskAlign): kBottomRight: first_query + r, the query's own position; kTopLeft:
/// first_key + r, the step's keys (positions first_key, first_key + 1, ...) counted from the
/// top left as torch.ones(L, S).tril() counts them. Errors: none.
inline int64_t AlignedQueryPosition(MaskAlign align, int64_t first_query, int64_t first_key,
                                    int64_t r) {
  return (align == MaskAlign::kBottomRight ? first_query : first_key) + r;
}
/// The mask's short name with its setting, for titles and menus: "sliding window W = 3",
/// "prefix-LM P = 2", "documents", "and of 2 masks", "causal", ...
std::string MaskName(const MaskSpec& mask);
/// What the mask lets each query see, one sentence for legends, hover text and program
/// comments: "3 keys, this one included" (sliding_window, as gpt-oss and mlx-lm count W),
/// "keys 0..1 seen by every query, causal after" (prefix_lm), ...
std::string MaskLegend(const MaskSpec& mask);
/// What a row with no allowed key gives under `rows`: "nan weights (0 / 0, the notebooks'
/// softmax)" or "0 weights (PyTorch >= 2.5's scaled_dot_product_attention)".
std::string MaskedRowsLegend(MaskedRows rows);
/// Whether two masks are the same setting (kind, its own fields, masked_rows).
bool SameMask(const MaskSpec& a, const MaskSpec& b);

/// ALiBi's slope of each of H heads (Press et al., "Train Short, Test Long"), as the paper's
/// reference code (ofirpress/attention_with_linear_biases, get_slopes) computes them, in double:
/// 2^(-8h/H) for h = 1..H when H is a power of two; otherwise the H' = 2^floor(log2 H) slopes
/// of H' heads, then every other slope of 2H' heads (the 1st, 3rd, ...) for the H - H' left.
/// logits[b, h, i, j] += -slope_h * (i - j) (pipeline.h). H >= 1.
std::vector<double> AlibiSlopes(int64_t H);
/// ALiBi's slope of each of H heads as attention-gym's generate_alibi_bias
/// (attn_gym/mods/alibi.py, its alibi_mod's scale) computes them: 2^(-8(h+1)/H) for
/// h = 0..H-1, for any H (flash-attention's tests use the same), in float32 as its score_mod
/// does on an int32 head index (the exponent rounded to float32, then the power); returned as
/// doubles holding those float32 values. Equal to AlibiSlopes when H is a power of two; with
/// H = 3: 0.15749012 (2^(-8/3)), 0.024803139 (2^(-16/3)), 1/256. H >= 1.
std::vector<double> AttentionGymSlopes(int64_t H);

struct DropoutSpec {
  double p = 0.0;                ///< in [0, 1)
  std::optional<uint64_t> seed;  ///< nullopt: the generator goes on from the projections' draws
};

/// "positions" (top level, optional): how the position of token i (0..T-1) enters attention.
/// A kind plus the fields of each kind (a kind reads only its own).
struct PositionsSpec {
  PositionKind kind = PositionKind::kNone;
  // rope: head h's q and k (dh columns each, dh even) rotated pair by pair: pair p of
  // dimensions (layout) turns by the angle sign * i * theta^(-2p/dh) at position i.
  RopeLayout layout = RopeLayout::kSplitHalves;
  double theta = 10000.0;  ///< rope: the base of the frequencies, > 0 (Llama 3 uses 500000)
  int sign = 1;            ///< rope: +1 (Hugging Face, Meta) or -1 (nanochat's rotation)
  /// alibi: the rule of the heads' slopes ("slopes": "paper", "attention_gym" or numbers).
  AlibiSlopeRule slope_rule = AlibiSlopeRule::kPaper;
  std::vector<double> slopes;  ///< alibi, kGiven: head h's slope, one per head
  /// alibi: -m |i - j| (bidirectional models: a key after the query is penalized alike)
  /// instead of -m (i - j).
  bool symmetric = false;
};
/// The ALiBi slope of each of H heads under `p` (AlibiSlopes, AttentionGymSlopes or the
/// given numbers), in double: the one rule every stage, program and label reads. H >= 1; for
/// kGiven, p.slopes has H numbers (ValidateScenario checks it).
std::vector<double> AlibiSlopesOf(const PositionsSpec& p, int64_t H);
/// ALiBi's distance of query position i from key position j under `symmetric`
/// (PositionsSpec::symmetric): i - j, or |i - j|. The bias is -(slope * distance).
inline int64_t AlibiDistance(int64_t i, int64_t j, bool symmetric) {
  return symmetric ? (i > j ? i - j : j - i) : i - j;
}
/// Whether two positions settings are the same (kind and the kind's own fields).
bool SamePositions(const PositionsSpec& a, const PositionsSpec& b);
/// The positions' short name for titles and menus: "RoPE (split halves, θ = 10000)",
/// "RoPE (interleaved, θ = 10000, sign −1)", "ALiBi", "sinusoidal", "none".
std::string PositionsName(const PositionsSpec& p);

// ---------------------------------------------------------------------------------------------
// [SECTION] Scenario and Shape; head splits and grouped K/V
// ---------------------------------------------------------------------------------------------

/// A whole scenario. Default-constructed fields equal the spec's defaults.
struct Scenario {
  std::string title;
  InputSpec input;
  ProjectionSpec projections;
  ScalingSpec scaling;
  MaskSpec mask;
  Normalization normalization = Normalization::kSoftmax;
  DropoutSpec dropout;
  Dtype dtype = Dtype::kFloat32;  ///< "dtype": float32 (default), float64, bfloat16, float16
  PositionsSpec positions;        ///< "positions": none (default), alibi, rope or sinusoidal
};

/// The sizes a scenario resolves to. For text input this tokenizes the text. For qkv input
/// there is no X and no W: d_in = 0, d_out = d_k (the width of Q and K) and d_v the width of V
/// (input.d_v, or V's columns when given). Every other source has d_v = d_out. Each of the H
/// heads takes dh = d_out / H columns of Q and K and dh_v = d_v / H columns of V; the context
/// is T x d_v (its heads side by side), as torch's view(B, T, H, d_v / H) splits it.
struct Shape {
  int64_t B = 1, T = 0, d_in = 0, d_out = 0, H = 1, dh = 0;
  int64_t vocab = 0;  ///< V for text input, else 0
  int64_t d_v = 0;    ///< width of V and of the context (ValidateScenario always sets it)
  int64_t dh_v = 0;   ///< d_v / H, V's columns per head
  /// K/V heads (projections.kv_heads; H when absent): K is T x KV*dh and V T x KV*dh_v, and
  /// query head h reads K/V head KvHead(h), as repeat_interleave(H / KV, dim=head) pairs them.
  /// 0 in a Shape built by hand means H (Kv() reads it).
  int64_t KV = 0;
  /// The number of K/V heads: KV, or H when KV is 0.
  int64_t Kv() const { return KV > 0 ? KV : H; }
  /// The K/V head that query head h reads: h / (H / KV) (LLMs-from-scratch's GQA module).
  int64_t KvHead(int64_t h) const { return h / (H / Kv()); }
  /// Columns of K (KV * dh) and of V (KV * dh_v): d_out and d_v without grouping.
  int64_t KWidth() const { return Kv() * dh; }
  int64_t VWidth() const { return Kv() * dh_v; }
};

/// A cell of a T x width stage: row, column.
struct StageCell {
  int64_t row = 0, col = 0;
};
/// The one rule of projections.head_split (HeadSplit). Row r, column c of a T x width stage as
/// its heads read it (head c / dh's column c % dh, the heads side by side: what the app shows as
/// Q, K, V, Q_rot and K_rot) is the cell HeadSplitSource returns of the T x width tensor before
/// the split (one batch entry, row-major): (r, c) for kTranspose; for kViewNoTranspose the cell
/// at flat position f = (c / dh) * T * dh + r * dh + c % dh, (f / width, f % width). The merge
/// of the heads' context (T x width, heads side by side) writes cell (r, c) to that same cell.
/// width = n * dh, 0 <= r < T, 0 <= c < width. Errors: none.
StageCell HeadSplitSource(HeadSplit split, int64_t T, int64_t width, int64_t dh, int64_t r,
                          int64_t c);
/// The inverse of HeadSplitSource: the cell (r, c) of the heads-side-by-side stage whose
/// HeadSplitSource is `cell` (which head's output the merged context's cell holds). Errors: none.
StageCell HeadSplitTarget(HeadSplit split, int64_t T, int64_t width, int64_t dh, StageCell cell);

/// Whether the scenario groups its K/V heads (projections.kv_heads < heads: GQA, or MQA at 1).
inline bool GroupsKv(const Shape& sh) { return sh.Kv() < sh.H; }
/// Which query heads share K/V head g, for titles, hover text and the window:
/// "K/V head 1 of 2, shared by query heads 4..7" (LLMs-from-scratch's GQA module's
/// group_size = heads / kv_heads consecutive query heads). g in [0, KV). Errors: none.
std::string KvGroupLegend(const Shape& sh, int64_t g);
/// Bytes one token's K and V take in a cache, KV * dh (K) + KV * dh_v (V) values of
/// `bytes_per_value` each (BytesPerValue of the dtype): what grouping K/V heads saves (multi-head:
/// H heads).
int64_t KvBytesPerToken(const Shape& sh, int64_t kv_heads, int64_t bytes_per_value);

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading and validating
// ---------------------------------------------------------------------------------------------

/// Refuses JSON text the parser must not see, in one pass over its bytes (no allocation):
/// text longer than kMaxScenarioFileBytes, and arrays or objects nested deeper than
/// kMaxJsonDepth (brackets inside strings do not count). Errors: ScenarioError with field "",
/// "JSON nested deeper than 64 levels at line L, column C" (1-based, C counts bytes) or
/// "JSON text of N bytes, more than the limit of 268435456 (256 MiB)". Text that passes may
/// still be broken JSON: the parser says where.
void CheckJsonLimits(std::string_view text);

/// The bytes of a scenario or figure file, for ParseScenario / ScenarioFromFileBytes.
/// Errors: FileError (file_io.h) naming the path: what ReadFile refuses, and a file larger than
/// kMaxScenarioFileBytes, refused before reading: "<path>: 300000000 bytes, more than the
/// 268435456 (256 MiB) a scenario or figure file may have".
std::string ReadScenarioFile(const std::string& path);

/// Parses and validates a scenario from JSON text (CheckJsonLimits first).
/// Errors: ScenarioError naming the field (unknown field, wrong type, impossible shape,
/// out-of-range value, a number beyond a double such as 1e400, a seed outside torch.manual_seed's
/// [-2^63, 2^64) or, with input.generator "numpy", outside np.random.seed's [0, 2^32 - 1], what
/// NumPy has no counterpart for (text input, init "linear", dropout p > 0 with "numpy"),
/// "projections" given with input.source "qkv", a "dtype" other than "float32", "float64",
/// "bfloat16" and "float16" (the last two refused with input.generator "numpy"),
/// too large for kMaxStageBytes: the size most out of line), or, for broken JSON, the line and
/// column.
Scenario ParseScenario(const std::string& json_text);

/// Validates a scenario built in code (the GUI's edits) exactly as ParseScenario does, and
/// returns its shape. Errors: ScenarioError naming the field.
Shape ValidateScenario(const Scenario& s);

// ---------------------------------------------------------------------------------------------
// [SECTION] Seeds and draws
// ---------------------------------------------------------------------------------------------

/// The seed a generator starts from when the scenario draws before any seed of its own (a
/// fresh process): torch: 67280421310721, libtorch's default_rng_seed_val, which a new
/// torch.Generator() holds (Python's torch replaces it by a random seed when it is imported);
/// numpy: 0, the app's choice (NumPy seeds its global generator from the operating system).
uint64_t DefaultSeed(Generator generator);

/// The draw of a scenario that comes before any seed, if one does: the projections (an init
/// that draws, no projections.seed, an input that draws nothing: matrix, or qkv given), or the
/// dropout mask (p > 0, no dropout.seed, and nothing drawn before it). That draw starts from
/// DefaultSeed, and the generated program pins that seed right before it.
enum class UnseededDraw { kNone, kProjections, kDropout };
UnseededDraw FirstUnseededDraw(const Scenario& s);

/// One draw of the projections: columns [first_col, first_col + cols) of W_`name` (and of its
/// bias) drawn as one tensor, d_in x cols (torch.rand / torch.randn(d_in, cols)) or
/// nn.Linear(d_in, cols) (weight cols x d_in, transposed into place).
struct WeightDraw {
  Projection name;
  int64_t first_col = 0, cols = 0;
};

/// The draws that make W_query, W_key and W_value, in the generator's order: one whole
/// d_in x d_out draw per projection in `order` (W_key and W_value d_in x KV * dh with grouped
/// K/V heads, as LLMs-from-scratch's GQA module's nn.Linear(d_in, num_kv_groups * head_dim)), or
/// with `per_head` (LLMs-from-scratch ch03 MultiHeadAttentionWrapper: one CausalAttention per head)
/// head after head, each head's three d_in x dh draws in `order`. Empty for inits that draw
/// nothing. The one definition of the draw order the engine (pipeline.cpp, in both dtypes) follows;
/// the generated program and tools/torch_oracle.py write the same loops. Needs a validated `sh`.
std::vector<WeightDraw> ProjectionDraws(const ProjectionSpec& p, const Shape& sh);

/// The per-head T x T matrices (index b * H + h, as the stages hold them) in the order the
/// dropout mask is drawn: b * H + h in index order (one nn.Dropout over the B x H x T x T
/// tensor), or with `per_head` head by head (each head's nn.Dropout over its B x T x T
/// weights, head 0 first, as the wrapper's heads run one after the other).
std::vector<int64_t> DropoutDrawOrder(const ProjectionSpec& p, const Shape& sh);

/// What the window and `show` say of an unseeded draw: "unseeded: PyTorch's default seed"
/// (torch) or "unseeded: seed 0 (NumPy has no default seed)" (numpy).
const char* UnseededText(Generator generator);

// ---------------------------------------------------------------------------------------------
// [SECTION] Writing, the memory estimate, comparisons
// ---------------------------------------------------------------------------------------------

/// Serialises to the scenario@1 JSON text (2-space indent, only fields that differ from their
/// defaults besides the required ones). ParseScenario(WriteScenario(s)) == s.
std::string WriteScenario(const Scenario& s);

/// Bytes the engine will allocate for this shape's stages (X, W, Q, K, V, per-head T x T
/// stages, mask, context) and the draws they are copied from, counted as float32 (the mask too,
/// which leaves room for the program itself). Compared with kMaxStageBytes. It bounds the peak
/// memory of `attention-lab dump` (measured: T = 4096, d = 64, causal: estimate 275 MB, peak
/// RSS 231 MB).
double EstimateStageBytes(const Shape& shape, bool with_dropout, bool text_input,
                          bool out_proj = false);

/// The memory a scenario's stages take, as ValidateScenario counts it against kMaxStageBytes:
/// EstimateStageBytes of its shape, three times over for float64 (the double stages are kept
/// beside the float32 ones). `shape` is ValidateScenario(s). Bytes.
double ScenarioStageBytes(const Scenario& s, const Shape& shape);

/// The promise behind kMaxStageBytes, for one command: its peak memory is the scenario's stages
/// (ScenarioStageBytes) plus `extra_bytes` of its own (a figure's rasters, a training batch,
/// a copy for printing), and that sum may not pass kMaxStageBytes. `what` names the command's
/// work in the message ("the PNG figure", "training"). Errors: std::invalid_argument "WHAT
/// needs about 3.71 GiB (the stages 1.80 GiB + 1.91 GiB of its own), more than the 2 GiB
/// limit", thrown before anything is allocated. The per-command estimates are checked by
/// tests/memory_test.sh, which runs every command at its largest accepted size.
void CheckCommandMemory(const Scenario& s, const Shape& shape, const std::string& what,
                        double extra_bytes);

/// Settings of one stage group equal? Used by the engine to recompute only what changed.
bool SameInput(const InputSpec& a, const InputSpec& b);
bool SameProjections(const ProjectionSpec& a, const ProjectionSpec& b);
/// scaling (not the sink), ALiBi on or off, mask: what acts on the logits after the scores
/// (RoPE acts on Q and K: SamePositions).
bool SameLogitSettings(const Scenario& a, const Scenario& b);
bool operator==(const Scenario& a, const Scenario& b);

}  // namespace attnlab
