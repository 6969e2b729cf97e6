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
//   scores[b,h]  = Q_h K_h^T                                  (T x T, before scaling)
//   logits[b,h]  = scores * multiplier / sqrt(dh), -inf where the mask forbids
//   weights[b,h] = normalization(logits) row by row           (softmax, naive, sum, mean);
//                  a row whose normaliser is 0 or nan is nan in its masked cells too
//   weights_dropped = nn.Dropout(p)(weights), training mode    (only when p > 0)
//   context[b]   = concat_h(weights_used[b,h] V_h), then out_proj if any  (T x d_v; V_h is
//                  head h's dh_v columns of V)
//
// Every stage equals what PyTorch computes for the same scenario (the goldens in
// tests/golden/scenarios, made with Debian's torch by tools/make_goldens.py),
// generator draws bit for bit, arithmetic to float32 rounding (matmul summation order differs).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/numpy_rng.h"
#include "attnlab/rng.h"
#include "attnlab/scenario.h"
#include "attnlab/tensor.h"

namespace attnlab {

struct StagesF64;  // pipeline_f64.h

/// Every intermediate of one run, kept for display. Shapes in the comments.
struct Stages {
  Shape shape;                      ///< B, T, d_in, d_out, H, dh, d_v, dh_v
  Generator generator = Generator::kTorch;  ///< input.generator of the scenario run
  std::vector<std::string> tokens;  ///< T labels (text tokens, matrix tokens, or "x1".."xT")
  std::vector<int> token_ids;       ///< text input only: T ids into vocab
  std::vector<std::string> vocab;   ///< text input only: V entries
  MatrixStack X;                    ///< B x T x d_in; empty for qkv input
  std::array<Matrix, 3> W;          ///< W_query, W_key, W_value: d_in x d_out (x @ W); 0 x 0
                                    ///< for qkv input
  std::array<RowVector, 3> bias;    ///< 1 x d_out each, empty without bias
  Matrix out_proj_W;                ///< d_out x d_out (x @ W convention), empty without out_proj
  RowVector out_proj_bias;          ///< 1 x d_out, empty without out_proj
  MatrixStack Q, K;                 ///< B x T x d_out
  MatrixStack V;                    ///< B x T x d_v (d_v = d_out unless qkv input sets it)
  MatrixStack scores;               ///< (B*H) x T x T, Q_h K_h^T
  MatrixStack logits;               ///< (B*H) x T x T, scaled, -inf where masked
  MaskMatrix mask;                  ///< T x T, 1 where attention is allowed
  MatrixStack weights;              ///< (B*H) x T x T, attention weights
  MatrixStack weights_dropped;      ///< (B*H) x T x T, empty when dropout p == 0
  MatrixStack context;              ///< B x T x d_v (after out_proj when present)
  double var_K = 0.0;  ///< K.var() over all elements, as the scenario's library computes it
                       ///< (stats.h kTorchUnbiased): a float32 value, inf above FLT_MAX
  /// "dtype": "float64" only: every stage in double (pipeline_f64.h); the float fields above
  /// then hold those values rounded to float32. Null for float32 scenarios.
  std::shared_ptr<const StagesF64> f64;

  /// The T x T matrix of a per-head stage for batch b, head h.
  const Matrix& Head(const MatrixStack& stage, int64_t b, int64_t h) const {
    return stage[static_cast<size_t>(b * shape.H + h)];
  }
};

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
  std::vector<float> Normal(int64_t n);
  /// Normal(n) written into out[0..n): no allocation for torch (the engine reuses its buffers).
  void NormalInto(float* out, int64_t n);
  /// torch.rand(n) or np.random.rand(n), as float32, C order.
  std::vector<float> Uniform(int64_t n);
  /// The torch generator (nn.Linear, nn.Embedding, dropout: torch only).
  TorchGenerator& torch() { return torch_; }
  Generator kind() const { return kind_; }

 private:
  Generator kind_;
  TorchGenerator torch_;
  NumpyGenerator numpy_;
};

/// How many times each stage group has been computed (to show and test that a temperature
/// change does not recompute the projections or the scores).
struct RecomputeCounts {
  int input = 0, projections = 0, scores = 0, logits = 0, weights = 0, dropout = 0, context = 0;
};

/// Runs scenarios and keeps the stages of the last one. Recomputes only from the first stage
/// whose settings changed: input -> projections -> scores -> logits (scaling, mask) -> weights
/// (normalization) -> dropout -> context. The projections and the per-head stages run in row
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
  void ComputeInput(const Scenario& s);
  void InputQkv(const InputSpec& in, DrawSource& gen);
  void ComputeProjections(const Scenario& s);
  // Scores (from <= 2), logits (from <= 3) and weights, then the context when with_context,
  // row block by row block on all threads (parallel.h).
  void ComputeHeads(const Scenario& s, int from, bool with_context);
  void BuildMask(const Scenario& s);
  void ComputeDropout(const Scenario& s);
  void PrepareContext();
  // Context rows [r0, r0 + rb) (row block `block`) of matrix m = b * H + h from `used`.
  void ContextRows(const MatrixStack& used, size_t m, int64_t r0, int64_t rb, int64_t block);
  void ApplyOutProj();
  void ComputeContext();

  Scenario last_;
  bool has_result_ = false;
  Stages stages_;
  RecomputeCounts counts_;
  DrawSource gen_after_input_;        // generator state where the projections start
  int64_t default_tokens_ = -1;       // T of stages_.tokens when they are "x1".."xT", else -1
  DrawSource gen_after_projections_;  // generator state where dropout starts
  // Per row block (matrix m, block k at m * blocks + k, parallel.h RowBlock): 1 when every
  // row's weights beyond its active length are exactly +0 (the causal fast path of the context
  // product); 0 when a row's normaliser is 0, negative or nan and PyTorch fills its masked cells.
  std::vector<uint8_t> block_zero_tail_;
  std::vector<uint8_t> v_finite_;  // per matrix b * H + h: V's head columns are all finite
  // The kind stages_.mask was built for: a temperature drag must not rebuild it.
  MaskKind mask_kind_ = MaskKind::kNone;
  // What the parts of logits (-inf) and weights (0) beyond each row's active length were last
  // written for: while kind, T and the number of matrices stay, they need no rewriting.
  struct TailKey {
    MaskKind kind;
    int64_t T;
    size_t count;
    bool operator==(const TailKey&) const = default;
  };
  std::optional<TailKey> logits_tail_, weights_tail_;
};

/// The end of every Engine::Run: for a float64 scenario recomputes the stages in double
/// (pipeline_f64.h) into st.f64 and rounds them into the float fields; for float32 clears
/// st.f64. Errors: std::bad_alloc.
void ComputeFloat64(const Scenario& scenario, Stages& st);

/// One-shot convenience: validates and runs `scenario` in a fresh engine and returns its stages
/// (moved out of the engine, so the peak memory is one set of stages: EstimateStageBytes).
/// Errors: ScenarioError naming the field; std::bad_alloc.
Stages RunScenario(const Scenario& scenario);

}  // namespace attnlab
