// pipeline.h: the attention engine. Runs a scenario through every stage and keeps them all.
//
// Legend: B batch, H heads, T tokens, d_in input width, d_out projection width,
// dh = d_out / H (d_k, the head size), d_v the width of V and the context (d_out, or
// input.d_v for qkv input), dh_v = d_v / H. Per-head stages are stacks of B*H matrices of
// T x T, index b * H + h; the others are stacks of B matrices (see tensor.h).
//
//   X (B x T x d_in) --W_query/W_key/W_value (d_in x d_out)--> Q, K, V (B x T x d_out)
//   (input.source "qkv": no X and no W, Q, K, V given or drawn directly; d_out = d_k, and V
//    is T x d_v, d_v = input.d_v or V's width)
//   positions "sinusoidal": X = the input + PE (T x d_in, stage_rules.h SinusoidalEncoding)
//   positions "rope": Q_rot, K_rot = Q, K with each head's pairs of dimensions rotated by
//                  angles position * theta^(-2p/dh) (stage_rules.h RopeRotate; Q's H heads,
//                  K's KV heads); the scores then take Q_rot and K_rot in place of Q and K
//   scores[b,h]  = Q_h K_g^T, g = h / (H / KV)                (T x T, before scaling; g = h
//                  unless projections.kv_heads groups K and V: GQA, K and V are T x KV * dh)
//   logits[b,h]  = scores * multiplier / sqrt(dh), -inf where the mask forbids
//                  (not for softmax_then_mask: its mask acts on the weights)
//                  with positions alibi: + -(slope_h * (i - j)) after the scaling;
//                  with scaling.softcap c: then c * tanh(logits / c) (Gemma 2)
//   weights[b,h] = normalization(logits) row by row           (softmax, naive, sum, mean,
//                  softmax_then_mask = softmax(logits) * mask / row sum of that);
//                  a row whose normaliser is 0 or nan is nan in its masked cells too;
//                  with scaling.sink s_h: softmax over [logits, s_h], the last column
//                  (sink[b,h], T x 1) dropped (gpt-oss); scaling.sink_form "sigmoid":
//                  softmax(logits) * g, g = sigmoid(logsumexp(logits) - s_h), sink = 1 - g
//                  (torchtitan; nan in a row with every key masked)
//   weights_dropped = nn.Dropout(p)(weights), training mode    (only when p > 0)
//   context[b]   = concat_h(weights_used[b,h] V_g), then out_proj if any  (T x d_v; V_g is
//                  K/V head g's dh_v columns of V, g as for the scores)
//   projections.head_split "view_no_transpose" (the bug q.view(B, H, T, dh)): Q, K and V are
//                  held as their heads read them, heads side by side (HeadSplitSource: head h's
//                  row r is a piece of another token's row), before RoPE; the context's heads
//                  are merged back the same way (context.view(B, T, d_v)) before out_proj
//
// Every stage equals what PyTorch computes for the same scenario (the goldens in
// tests/golden/scenarios, made with Debian's torch by tools/make_goldens.py),
// generator draws bit for bit, arithmetic to float32 rounding (matmul summation order differs).
// The stage rules are written once, generic over the number type; "dtype": "float64" runs
// them in double only (no float32 run first), as incrementally as float32, with the Numerics
// policies of NumericsOf<double>; Stages::f64 keeps the double values and the float fields hold
// them rounded to float32 (the window and the figures read those).
//
// What float64 means, per generator:
//   - torch: every tensor is torch.float64 (torch.randn(..., dtype=torch.float64), nn.Linear and
//     nn.Embedding with dtype=torch.float64). PyTorch 1.13 draws float64 normals differently
//     from float32 ones: below 16 elements the same double Box-Muller with its cached sine half
//     (normal_distribution<double>), from 16 on normal_fill's generic blocks of 16 from 53-bit
//     uniforms, with libm log, cos and sin in double (there is no AVX2 float64 kernel).
//     torch.rand and uniform_ draw 53-bit uniforms (one 64-bit word per element), the AVX2 build
//     fusing x * width + low as for float32. Dropout keeps with U53 < 1 - p and scales by
//     1 / (1 - p) in double.
//   - numpy: NumPy's float64 draws as they are (np.random.randn, np.random.rand), no rounding;
//     the products (X @ W, q @ k.T, weights @ v) summed as np.matmul sums them with Debian's
//     reference BLAS: each element left to right over the inner index, so the scores and their
//     variance are NumPy's to the last bit.
// Numbers written in the scenario (matrix input, Q/K/V given, W matrices) are read as the
// double of their text (WrittenAsDouble) as the scenario file and the generated program write
// it (the shortest float32 text: "0.43" is the double 0.43, not float32(0.43) widened), which
// is what torch.tensor(..., dtype=torch.float64) and np.array(...) make of the program's
// literals.
// bfloat16 and float16 ("dtype": "bfloat16" / "float16"; NumPy draws first rounded to float32): the
// float32 path with each stage stored in the dtype (StoreAs, round to nearest even): the draws and
// nn.Linear's weights as drawn in float32 then .to(dtype); every operation after that (X @ W, +
// bias, q @ k.T, the scaling, the mask, the softmax, weights @ v, out_proj) computed in float32
// from the stored operands and its result stored again: float32 accumulation, as PyTorch's GPU
// kernels and its CPU softmax compute them. (Debian's torch 1.13 CPU bfloat16 matmul does not: it
// rounds every product and partial sum to bfloat16; tools/torch_oracle.py makes its products
// in float32 for that reason.) The logits are stored once after their whole rule (scaling,
// ALiBi, soft-capping, mask) and var_K is the float32 variance of the stored K.
// Checked against real PyTorch and NumPy in tests/golden/f64 (tools/make_qkv_goldens.py): the
// draws bit for bit, the arithmetic to float64 rounding (torch's summation orders differ; the
// NumPy notebook's np.matmul(q, k.T) is matched exactly, tests/notebook_test.cpp).
//
// [SECTION] The tensors of a run: StageTensors, Stages; RoPE's shift check
// [SECTION] Numerics and the generator
// [SECTION] Stored values: recompute counts, dtypes, mask fills
// [SECTION] Engine and RunScenario
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "attnlab/base/tensor.h"
#include "attnlab/model/scenario.h"
#include "attnlab/model/stages.h"
#include "attnlab/random/numpy_rng.h"
#include "attnlab/random/rng.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] The tensors of a run: StageTensors, Stages; RoPE's shift check
// ---------------------------------------------------------------------------------------------

/// A matrix of number type S in row-major storage (MatrixOf<float> is Matrix, tensor.h).
template <typename S>
using MatrixOf = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// A row vector of number type S.
template <typename S>
using RowVectorOf = Eigen::Matrix<S, 1, Eigen::Dynamic, Eigen::RowMajor>;
/// B x rows x cols, or (B*H) x T x T, of number type S (MatrixStackOf<float> is MatrixStack).
template <typename S>
using MatrixStackOf = std::vector<MatrixOf<S>>;
// MatrixD, RowVectorD and MatrixStackD (tensor.h) are MatrixOf<double> and so on.

/// The tensors of every stage of one run in number type S (float for float32 runs, double for
/// "dtype": "float64"). Shapes in the comments (legend above).
template <typename S>
struct StageTensors {
  MatrixStackOf<S> X;                  ///< B x T x d_in; empty for qkv input
  std::array<MatrixOf<S>, 3> W;        ///< W_query, W_key, W_value: d_in x d_out (x @ W; W_key
                                       ///< and W_value d_in x KV * dh with kv_heads); 0 x 0
                                       ///< for qkv input
  std::array<RowVectorOf<S>, 3> bias;  ///< 1 x d_out each, empty without bias
  MatrixOf<S> out_proj_W;              ///< d_out x d_out (x @ W convention), empty without out_proj
  RowVectorOf<S> out_proj_bias;        ///< 1 x d_out, empty without out_proj
  MatrixStackOf<S> Q;                  ///< B x T x d_out
  MatrixStackOf<S> K;                  ///< B x T x KV * dh (d_out unless kv_heads groups it)
  MatrixStackOf<S> V;                  ///< B x T x KV * dh_v (d_v = d_out unless qkv input sets
                                       ///< it; narrower with grouped K/V heads)
  MatrixStackOf<S> Q_rot, K_rot;       ///< positions "rope" only (else empty): Q and K rotated,
                                       ///< shaped as Q and K, what the scores multiply
  MatrixStackOf<S> scores;             ///< (B*H) x T x T, Q_h K_h^T
  MatrixStackOf<S> logits;             ///< (B*H) x T x T, scaled, -inf where masked
  MatrixStackOf<S> weights;            ///< (B*H) x T x T, attention weights
  MatrixStackOf<S> weights_dropped;    ///< (B*H) x T x T, empty when dropout p == 0
  /// (B*H) x T x 1: what gpt-oss's attention sink (scaling.sink) took of each row, its column
  /// of the softmax over T + 1 (1 minus the row's weights' sum); empty without a sink
  MatrixStackOf<S> sink;
  MatrixStackOf<S> context;  ///< B x T x d_v (after out_proj when present)
};

/// The stack that holds `stage` in `t` (a field of the same name), or nullptr for the mask (one
/// T x T matrix of 0/1, Stages::mask). The one switch from a Stage to its tensor.
template <typename S>
const MatrixStackOf<S>* StageStack(const StageTensors<S>& t, Stage stage) {
  switch (stage) {
    case Stage::kX:
      return &t.X;
    case Stage::kQ:
      return &t.Q;
    case Stage::kK:
      return &t.K;
    case Stage::kV:
      return &t.V;
    case Stage::kQRot:
      return &t.Q_rot;
    case Stage::kKRot:
      return &t.K_rot;
    case Stage::kScores:
      return &t.scores;
    case Stage::kMask:
      return nullptr;
    case Stage::kLogits:
      return &t.logits;
    case Stage::kWeights:
      return &t.weights;
    case Stage::kWeightsDropped:
      return &t.weights_dropped;
    case Stage::kContext:
      return &t.context;
    case Stage::kSink:
      return &t.sink;
  }
  return nullptr;
}

/// Every stage of a float64 run ("float64" above), shaped as the float fields of Stages.
using StagesF64 = StageTensors<double>;

/// Every intermediate of one run, kept for display: the float32 tensors (StageTensors<float>:
/// X, W, bias, out_proj_W, out_proj_bias, Q, K, V, scores, logits, weights, weights_dropped,
/// context) and what the stages share whatever the number type.
struct Stages : StageTensors<float> {
  Shape shape;                              ///< B, T, d_in, d_out, H, dh, d_v, dh_v
  Generator generator = Generator::kTorch;  ///< input.generator of the scenario run
  /// The scenario's dtype. bfloat16 and float16: the float fields hold the stored values
  /// (each exactly a bfloat16 / float16 number, widened to float).
  Dtype dtype = Dtype::kFloat32;
  /// scaling.softmax_dtype "float32" in a bfloat16 / float16 run: weights, weights_dropped and
  /// sink hold float32 values (not stored in the dtype).
  bool weights_f32 = false;
  std::vector<std::string> tokens;  ///< T labels (text tokens, matrix tokens, or "x1".."xT")
  std::vector<int> token_ids;       ///< text input only: T ids into vocab
  std::vector<std::string> vocab;   ///< text input only: V entries
  MaskMatrix mask;                  ///< T x T, 1 where attention is allowed
  double var_K = 0.0;  ///< K.var() over all elements, as the scenario's library computes it
                       ///< (stats.h kTorchUnbiased): a float32 value, inf above FLT_MAX
  /// "dtype": "float64" only: every stage in double ("float64" above); the float fields above
  /// then hold those values rounded to float32. Null for float32 scenarios.
  std::shared_ptr<const StagesF64> f64;
  /// bfloat16 / float16 runs only: the same scenario computed in float32 (dtype float32,
  /// softmax_dtype "same"), once per run by the engine, the reference each stored value's
  /// rounding error is measured against (the window's hover, cell_explanation.h). Null for
  /// float32 and float64 runs.
  std::shared_ptr<const StageTensors<float>> f32;

  /// The T x T matrix of a per-head stage for batch b, head h.
  const Matrix& Head(const MatrixStack& stage, int64_t b, int64_t h) const {
    return stage[static_cast<size_t>(b * shape.H + h)];
  }
};

/// RoPE's shift check: the scores of the last run recomputed from its Q and K rotated with every
/// position moved by `shift` (token i at position i + shift), minus the same recomputation at
/// the positions 0..T-1, both in the run's number type with one product order: the largest
/// finite |difference| over every batch, head and cell. RoPE's scores depend on i - j only, so
/// this is the rounding of the angles (about 1e-6 of the scores' size in float32, growing with
/// the positions' size); exactly 0 for shift 0 and when the scenario has no RoPE. `s` is the
/// scenario `st` was computed from. Cost: two score products per head. Errors: none.
double RopeShiftLargestChange(const Scenario& s, const Stages& st, int64_t shift);

// ---------------------------------------------------------------------------------------------
// [SECTION] Numerics and the generator
// ---------------------------------------------------------------------------------------------

/// How a run rounds where PyTorch, NumPy and the number type differ: the numerics that must
/// differ between the stage rules' instances, named (NumericsOf chooses them per run).
struct Numerics {
  /// How a row's normaliser (sum of exps, sum of logits) is summed.
  enum class Sum {
    kTorchCascade,  ///< PyTorch's float32 cascade order (torch_sum.h, ATen SumKernel.cpp);
                    ///< float only (another type sums left to right)
    kEigen,         ///< Eigen's vectorised sum (float32 softmax, within rounding of torch's)
    kLeftToRight,   ///< j = 0, 1, ..., T - 1 in the number type
  };
  /// How the stable softmax scales the exps by their sum.
  enum class SoftmaxScale {
    kReciprocal,  ///< exp * (1 / sum), as torch.softmax's kernel
    kDivide,      ///< exp / sum, as the NumPy programs write it
  };
  /// How a matrix product (X @ W, q @ k.T, weights @ v) sums.
  enum class Product {
    kEigen,        ///< Eigen's product, in row blocks (PyTorch's BLAS order is not reproduced)
    kLeftToRight,  ///< each element over the inner index from 0 upward, one rounding per
                   ///< product and per addition: NumPy with Debian's reference BLAS (dgemm)
  };
  Sum sum = Sum::kTorchCascade;   ///< x.sum(-1): the naive softmax's and "sum"'s normaliser
  Sum softmax_sum = Sum::kEigen;  ///< the stable softmax's sum of exps
  SoftmaxScale softmax = SoftmaxScale::kReciprocal;
  Product product = Product::kEigen;
};

/// The numerics of a run in number type S (float or double) from `generator`: float32 runs
/// take PyTorch's cascade sum (Eigen's for the softmax), the reciprocal and Eigen's products
/// whatever the generator (the float32 goldens); float64 runs sum left to right, and NumPy's
/// float64 programs divide and multiply as np.matmul with reference BLAS ("float64" above). Errors:
/// none.
template <typename S>
Numerics NumericsOf(Generator generator) {
  if constexpr (std::is_same_v<S, float>) {
    return Numerics{};
  } else {
    const bool numpy = generator == Generator::kNumpy;
    return Numerics{Numerics::Sum::kLeftToRight, Numerics::Sum::kLeftToRight,
                    numpy ? Numerics::SoftmaxScale::kDivide : Numerics::SoftmaxScale::kReciprocal,
                    numpy ? Numerics::Product::kLeftToRight : Numerics::Product::kEigen};
  }
}

/// The double a number written in a scenario stands for: the double of its shortest float32
/// text (ShortestFloat), e.g. 0.43f -> 0.43, which is what torch.tensor(..., dtype=float64)
/// and np.array(...) make of the generated program's literals. Non-finite values stay.
double WrittenAsDouble(float v);

/// The generator a scenario draws from (input.generator): PyTorch's or NumPy's legacy global
/// one, with the calls the pipeline makes. NumPy's float64 draws are rounded to float32 (the
/// pipeline computes in float32). Copyable: the engine keeps its state between stages.
class DrawSource {
 public:
  /// A fresh process: seeded with DefaultSeed(kind) (scenario.h), torch's default seed or
  /// NumPy's 0, which the generated program pins before an unseeded draw.
  explicit DrawSource(Generator kind = Generator::kTorch);
  /// torch.manual_seed(seed) or np.random.seed(seed). Error: std::invalid_argument for a
  /// numpy seed above 2**32 - 1 (ValidateScenario refuses it first).
  void Seed(uint64_t seed);
  /// torch.randn(n) or np.random.randn(n), as float32, C order.
  std::vector<float> Normal(int64_t n) { return NormalOf<float>(n); }
  /// Normal(n) written into out[0..n): no allocation for torch (the engine reuses its buffers).
  void NormalInto(float* out, int64_t n) { NormalIntoOf(out, n); }
  /// torch.rand(n) or np.random.rand(n), as float32, C order.
  std::vector<float> Uniform(int64_t n) { return UniformOf<float>(n); }
  /// Normal for number type S: float (NumPy's doubles rounded to float32) or double
  /// (torch.randn(n, dtype=torch.float64), NumPy's doubles as drawn).
  template <typename S>
  std::vector<S> NormalOf(int64_t n);
  /// NormalOf<S>(n) written into out[0..n).
  template <typename S>
  void NormalIntoOf(S* out, int64_t n);
  /// Uniform for number type S (float or double), as NormalOf.
  template <typename S>
  std::vector<S> UniformOf(int64_t n);
  /// The torch generator (nn.Linear, nn.Embedding, dropout: torch only).
  TorchGenerator& torch() { return torch_; }
  Generator kind() const { return kind_; }

 private:
  Generator kind_;
  TorchGenerator torch_;
  NumpyGenerator numpy_;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Stored values: recompute counts, dtypes, mask fills
// ---------------------------------------------------------------------------------------------

/// How many times each stage group has been computed (to show and test that a temperature
/// change does not recompute the projections or the scores).
struct RecomputeCounts {
  int input = 0, projections = 0, scores = 0, logits = 0, weights = 0, dropout = 0, context = 0;
};

/// The value float32 `v` is stored as in `dtype`, widened back to float exactly: rounded to
/// nearest, ties to even, to bfloat16 (Eigen::bfloat16: 8 significant bits, float32's range)
/// or float16 (Eigen::half: 11 significant bits, largest finite 65504, beyond it +-inf,
/// subnormal below 6.1e-5); float32 and float64 return `v` as it is. NaN stays NaN, as
/// PyTorch's tensor.to(torch.bfloat16) / .to(torch.float16). Errors: none.
float StoreAs(Dtype dtype, float v);

/// The spacing of `dtype`'s numbers at 1, torch.finfo(dtype).eps: float64 2^-52, float32
/// 2^-23, bfloat16 2^-7, float16 2^-10 (a rounding to the dtype moves a value by at most half
/// of it, relative). Errors: none.
double DtypeEpsilon(Dtype dtype);

/// The value mask.fill writes into masked logits in `dtype`, as masked_fill(~allowed, value)
/// stores it: -inf; torch.finfo(dtype).min (float32 -3.4028235e38, float64 -1.797e308,
/// bfloat16 -3.3895314e38, float16 -65504); -1e9 (float16: -inf, beyond its range; bfloat16
/// -998244352); -1e4 (bfloat16 -9984). As a double (float values widened). Errors: none.
double MaskFillValue(MaskFill fill, Dtype dtype);

// ---------------------------------------------------------------------------------------------
// [SECTION] Engine and RunScenario
// ---------------------------------------------------------------------------------------------

/// Runs scenarios and keeps the stages of the last one. Recomputes only from the first stage
/// whose settings changed: input -> projections -> scores -> logits (scaling, mask) -> weights
/// (normalization) -> dropout -> context. One set of stage rules (templates over the number
/// type) serves both dtypes: a float32 scenario computes in float, a "dtype": "float64" one
/// only in double (Stages::f64), its float fields then the double stages rounded to float32,
/// and it recomputes as incrementally. The projections and the per-head stages run in row
/// blocks on ParallelFor's threads (parallel.h; ATTNLAB_THREADS, SetThreadCount): every stage
/// is bit-identical whatever the thread count. The dropout mask is drawn on one thread.
class Engine {
 public:
  /// Runs `scenario` and returns its stages. Errors: ScenarioError (from ValidateScenario)
  /// before anything is changed, so the previous stages stay intact; std::bad_alloc.
  const Stages& Run(const Scenario& scenario);

  /// The stages of the last successful Run (empty before the first).
  const Stages& stages() const { return stages_; }
  /// Moves the stages of the last run out (no copy of the T x T stages: RunScenario's result
  /// is the only one held). The engine is empty afterwards, as before its first Run.
  Stages TakeStages();
  const RecomputeCounts& counts() const { return counts_; }
  bool has_result() const { return has_result_; }

 private:
  // The stages from `from` on (Run's numbering: 0 input ... 6 context) in number type S.
  template <typename S>
  void Compute(const Scenario& s, int from);
  // The tensors of number type S: stages_'s own (float) or the float64 set being computed.
  template <typename S>
  StageTensors<S>& Tensors();
  template <typename S>
  void ComputeInput(const Scenario& s);
  template <typename S>
  void InputQkv(const InputSpec& in, DrawSource& gen);
  template <typename S>
  void ComputeProjections(const Scenario& s);
  // Q, K, V = X @ W (+ bias), or X itself for the identity init. Returns, per batch entry b,
  // 1 when every value of the V it made is finite (checked by the tasks that made it, while
  // the rows are in cache), else 0; empty for the identity init (V is X: nothing made).
  template <typename S>
  std::vector<uint8_t> Project(bool identity);
  // positions "rope": Q_rot and K_rot from Q and K (empty otherwise).
  template <typename S>
  void ApplyRope(const Scenario& s);
  // projections.qk_norm: each head's rows of Q and K (or Q_rot and K_rot) normalized in place.
  template <typename S>
  void NormalizeQk(const Scenario& s, MatrixStackOf<S>& Q, MatrixStackOf<S>& K);
  // Scores (from <= 2), logits (from <= 3) and weights, then the context when with_context,
  // row block by row block on all threads (parallel.h).
  template <typename S>
  void ComputeHeads(const Scenario& s, int from, bool with_context);
  // Scores rows [r0, r0 + rb) of matrix m = b * H + h, made in `into` (rb x T, all +0 before:
  // the product adds into it; a thread's buffer in cache) and streamed from there into the
  // scores stage.
  template <typename S>
  void ScoreRows(size_t m, int64_t r0, int64_t rb, S* into);
  // softmax_dim_query: the weights of every matrix column by column (then the context when
  // with_context), after ComputeHeads has made all the logits.
  template <typename S>
  void WeightsByColumns(const Scenario& s, bool with_context);
  void BuildMask(const Scenario& s);
  template <typename S>
  void ComputeDropout(const Scenario& s);
  template <typename S>
  void PrepareContext();
  // v_finite_ from V, once V is made (ComputeProjections): a temperature drag does not rescan it.
  // batch_finite: Project's answer (per batch entry, 1 = all of its V finite; empty = unknown);
  // only the batch entries not known to be finite are scanned, head by head.
  template <typename S>
  void FindFiniteV(const std::vector<uint8_t>& batch_finite);
  // stages_.var_K: K.var() as the scenario's library computes it (variance.h).
  template <typename S>
  void VarianceOfK(const Scenario& s);
  // Context rows [r0, r0 + rb) (row block `block`) of matrix m = b * H + h from `used`.
  template <typename S>
  void ContextRows(const MatrixStackOf<S>& used, size_t m, int64_t r0, int64_t rb, int64_t block);
  // The context once every head's rows are in: the heads merged (projections.head_split),
  // then out_proj if any.
  template <typename S>
  void FinishContext();
  template <typename S>
  void ComputeContext();
  // float64 runs: the stages from `from` on rounded into stages_'s float fields.
  void RoundFloat64(int from);
  // bfloat16 and float16 runs: rounds the float elements of `m` (an Eigen matrix or block) to
  // store_ in place (StoreAs); nothing for float32, float64 or double matrices.
  template <typename M>
  void Store(M&& m) const;
  template <typename S>
  void StoreStack(MatrixStackOf<S>& stack) const;

  Scenario last_;
  bool has_result_ = false;
  Stages stages_;
  // float64 runs: the double stages; stages_.f64 shares them (copied before a recompute when
  // someone else still holds them).
  std::shared_ptr<StagesF64> f64_;
  RecomputeCounts counts_;
  Numerics numerics_;                             // of the current run (NumericsOf)
  Dtype store_ = Dtype::kFloat32;                 // the current run's dtype: what Store rounds to
  HeadSplit head_split_ = HeadSplit::kTranspose;  // the current run's projections.head_split
  DrawSource gen_after_input_;                    // generator state where the projections start
  int64_t default_tokens_ = -1;       // T of stages_.tokens when they are "x1".."xT", else -1
  DrawSource gen_after_projections_;  // generator state where dropout starts
  // Per row block (matrix m, block k at m * blocks + k, parallel.h RowBlock): 1 when every
  // row's weights beyond its active length are exactly +0 (the causal fast path of the context
  // product); 0 when a row's normaliser is 0, negative or nan and PyTorch fills its masked cells.
  std::vector<uint8_t> block_zero_tail_;
  std::vector<uint8_t> v_finite_;  // per matrix b * H + h: V's head columns are all finite
                                   // (FindFiniteV, whenever V changes)
  // Eigen's packing of each K/V head's K^T (the right operand of q @ k^T) and V (of
  // weights @ v), made once per run instead of once per row block (kernels.h pack_right);
  // index b * KV + K/V head. Float32 and float64 runs keep their own.
  template <typename S>
  struct PackedHeads {
    std::vector<Eigen::Matrix<S, Eigen::Dynamic, 1>> k, v;
    bool v_current = false;  // v is the packing of the current V (a temperature drag keeps it)
    // scaling.scale_at "q_and_k": Q and K (Q_rot and K_rot under RoPE) times their factors
    // (QkScaleOf), stored in the dtype, the scores' operands; empty otherwise (ScaleQk).
    MatrixStackOf<S> q_scaled, k_scaled;
  };
  PackedHeads<float> packed_f_;
  PackedHeads<double> packed_d_;
  template <typename S>
  PackedHeads<S>& Packed();
  // Packs K (the scores' operand: Q_rot's K_rot under RoPE) when `k`, and V when `v` and it is
  // not current, on all threads; nothing unless the run multiplies by Eigen's product.
  template <typename S>
  void PackHeads(bool k, bool v);
  // Makes (scale_at "q_and_k") or clears the scaled operands of PackedHeads.
  template <typename S>
  void ScaleQk(const Scenario& s);
  // K.var() is still to be computed for stages_.var_K (ComputeProjections made a new K): it
  // runs as one more task beside the head tasks of ComputeHeads, which only read K.
  bool var_k_pending_ = false;
  // The kind stages_.mask was built for: a temperature drag must not rebuild it.
  MaskKind mask_kind_ = MaskKind::kNone;
  // What the parts of logits (-inf) and weights (0) beyond each row's active length were last
  // written for: while kind, T and the number of matrices stay, they need no rewriting.
  struct TailKey {
    MaskKind kind;
    int64_t T;
    size_t count;
    bool finite_fill;  // logits: the masked cells hold mask.fill, not -inf
    bool operator==(const TailKey&) const = default;
  };
  std::optional<TailKey> logits_tail_, weights_tail_;
  // bfloat16 / float16 runs: the engine of the float32 reference run (Stages::f32), itself
  // incremental; null otherwise.
  std::unique_ptr<Engine> reference_;
};

/// One-shot convenience: validates and runs `scenario` in a fresh engine and returns its stages
/// (moved out of the engine, so the peak memory is one set of stages: EstimateStageBytes).
/// Errors: ScenarioError naming the field; std::bad_alloc.
Stages RunScenario(const Scenario& scenario);

}  // namespace attnlab
