// pipeline.cpp: the attention engine (see pipeline.h for the stages and their shapes).
//
// [SECTION] Run: decide which stages to recompute
// [SECTION] input: matrix, text (nn.Embedding), randn
// [SECTION] projections: Q, K, V
// [SECTION] scores, logits, weights
// [SECTION] dropout and context
#include "attnlab/pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "float_exp.h"
#include "torch_sum.h"
#include "attnlab/parallel.h"
#include "attnlab/stats.h"

namespace attnlab {

Matrix MatrixFromFlat(const std::vector<float>& values, Eigen::Index rows, Eigen::Index cols) {
  return Eigen::Map<const Matrix>(values.data(), rows, cols);
}

DrawSource::DrawSource(Generator kind)
    : kind_(kind), torch_(DefaultSeed(Generator::kTorch)), numpy_(DefaultSeed(Generator::kNumpy)) {}

void DrawSource::Seed(uint64_t seed) {
  if (kind_ == Generator::kNumpy)
    numpy_.Seed(seed);
  else
    torch_.ManualSeed(seed);
}

namespace {
std::vector<float> ToFloat(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());  // float64 draws rounded to float32
}
}  // namespace

std::vector<float> DrawSource::Normal(int64_t n) {
  return kind_ == Generator::kNumpy ? ToFloat(numpy_.Randn(n)) : torch_.Normal(n);
}

void DrawSource::NormalInto(float* out, int64_t n) {
  if (kind_ == Generator::kNumpy) {
    const std::vector<double> v = numpy_.Randn(n);
    std::copy(v.begin(), v.end(), out);
  } else {
    torch_.NormalInto(out, n);
  }
}

std::vector<float> DrawSource::Uniform(int64_t n) {
  return kind_ == Generator::kNumpy ? ToFloat(numpy_.Rand(n)) : torch_.Uniform(n);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Run
// ---------------------------------------------------------------------------------------------

const Stages& Engine::Run(const Scenario& s) {
  const Shape shape = ValidateScenario(s);  // throws before anything below is touched
  // The first stage whose settings differ from the last run; everything after it is redone.
  int from = 0;
  if (has_result_) {
    from = 7;
    if (s.dropout.p != last_.dropout.p || s.dropout.seed != last_.dropout.seed) from = 5;
    if (s.normalization != last_.normalization) from = 4;
    if (!SameLogitSettings(s, last_)) from = 3;
    if (!SameProjections(s.projections, last_.projections)) from = 1;
    if (!SameInput(s.input, last_.input)) from = 0;
    if (s.dtype != last_.dtype) from = 0;  // dtype: float64 recomputes in pipeline_f64.cpp
    if (from == 7 && s.title == last_.title) return stages_;
  }
  // Stages are overwritten in place: a full recompute of the same size reuses every buffer
  // instead of faulting in fresh pages for each T x T matrix.
  stages_.shape = shape;
  if (from <= 0) ComputeInput(s);
  if (from <= 1) ComputeProjections(s);
  // Scores, logits, weights (and the context when there is no dropout) are computed together,
  // row block by row block on all threads, while each block is in cache.
  const bool context_fused = s.dropout.p <= 0.0;
  if (from <= 4) ComputeHeads(s, from, context_fused);
  if (from <= 5) ComputeDropout(s);
  if (from <= 6 && !(from <= 4 && context_fused)) ComputeContext();
  ComputeFloat64(s, stages_);  // float64 scenarios: every stage again in double
  last_ = s;
  has_result_ = true;
  return stages_;
}

Stages Engine::TakeStages() {
  Stages out = std::move(stages_);
  *this = Engine();
  return out;
}

Stages RunScenario(const Scenario& scenario) {
  Engine engine;
  engine.Run(scenario);
  return engine.TakeStages();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] input
// ---------------------------------------------------------------------------------------------

void Engine::ComputeInput(const Scenario& s) {
  ++counts_.input;
  Stages& st = stages_;
  const Shape& sh = st.shape;
  // A fresh generator: DefaultSeed until the first seed (the program pins it if it is used).
  DrawSource gen(s.input.generator);
  st.generator = s.input.generator;
  MatrixStack last_X;
  last_X.swap(st.X);  // the last X's buffers, reused by a randn draw of the same size
  std::vector<std::string> last_tokens;
  last_tokens.swap(st.tokens);  // kept when they were the default labels of the same T
  st.token_ids.clear();
  st.vocab.clear();
  switch (s.input.source) {
    case InputSource::kMatrix:
      st.X = s.input.values;
      st.tokens = s.input.tokens;
      break;
    case InputSource::kText: {
      st.tokens = Tokenize(s.input.text, s.input.tokenizer);
      Vocabulary v = BuildVocabulary(st.tokens, s.input.special_tokens);
      st.vocab = std::move(v.vocab);
      st.token_ids = std::move(v.token_ids);
      // torch.manual_seed(seed); nn.Embedding(V, d_in): the whole V x d_in table is drawn
      // (its size decides the randn path and tail), then the rows of the token ids are taken.
      gen.Seed(s.input.seed);
      const Matrix table =
          MatrixFromFlat(gen.torch().Embedding(sh.vocab, sh.d_in), sh.vocab, sh.d_in);
      Matrix x(sh.T, sh.d_in);
      for (int64_t t = 0; t < sh.T; ++t) x.row(t) = table.row(st.token_ids[t]);
      st.X.push_back(std::move(x));
      break;
    }
    case InputSource::kRandn: {
      gen.Seed(s.input.seed);
      const int64_t n = sh.B * sh.T * sh.d_in;
      if (sh.B == 1) {
        // Drawn into the last run's X (fresh pages cost more than the draw): row-major
        // T x d_in is the flat order.
        st.X.swap(last_X);
        st.X.resize(1);
        st.X[0].resize(sh.T, sh.d_in);
        gen.NormalInto(st.X[0].data(), n);
      } else {  // one flat draw over the batch (its tail spans the last matrix)
        const std::vector<float> flat = gen.Normal(n);
        for (int64_t b = 0; b < sh.B; ++b)
          st.X.push_back(
              Eigen::Map<const Matrix>(flat.data() + b * sh.T * sh.d_in, sh.T, sh.d_in));
      }
      break;
    }
    case InputSource::kQkv:
      InputQkv(s.input, gen);
      break;
  }
  if (!st.tokens.empty()) {
    default_tokens_ = -1;
  } else if (default_tokens_ == sh.T) {
    st.tokens.swap(last_tokens);  // "x1".."xT" again: T strings not made anew on every draw
  } else {
    for (int64_t t = 0; t < sh.T; ++t) st.tokens.push_back("x" + std::to_string(t + 1));
    default_tokens_ = sh.T;
  }
  gen_after_input_ = gen;
}

// Q, K and V of a qkv input: given, or q = randn(B, T, d_k), k = randn(B, T, d_k),
// v = randn(B, T, d_v) in input.order.
void Engine::InputQkv(const InputSpec& in, DrawSource& gen) {
  Stages& st = stages_;
  const Shape& sh = st.shape;
  st.tokens = in.tokens;
  if (in.QkvGiven()) {
    st.Q = in.Q;
    st.K = in.K;
    st.V = in.V;
    return;
  }
  gen.Seed(in.seed);
  MatrixStack* outs[3] = {&st.Q, &st.K, &st.V};
  for (Projection name : in.order) {
    MatrixStack& out = *outs[static_cast<int>(name)];
    const int64_t d = name == Projection::kValue ? sh.d_v : sh.d_out;
    const std::vector<float> flat = gen.Normal(sh.B * sh.T * d);
    out.clear();
    for (int64_t b = 0; b < sh.B; ++b)
      out.push_back(Eigen::Map<const Matrix>(flat.data() + b * sh.T * d, sh.T, d));
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] projections
// ---------------------------------------------------------------------------------------------

namespace {

// One draw of ProjectionDraws: a d_in x cols tensor from `init` into columns [first_col,
// first_col + cols) of W (and, for nn.Linear with bias, of `bias`; both already d_out wide).
void DrawInto(ProjectionInit init, const WeightDraw& d, int64_t d_in, bool with_bias,
              DrawSource& gen, Matrix& W, RowVector& bias) {
  auto cols = W.middleCols(d.first_col, d.cols);
  switch (init) {
    case ProjectionInit::kTorchRand:  // nn.Parameter(torch.rand(d_in, cols))
      cols = MatrixFromFlat(gen.Uniform(d_in * d.cols), d_in, d.cols);
      break;
    case ProjectionInit::kRandn:  // torch.randn(d_in, cols)
      cols = MatrixFromFlat(gen.Normal(d_in * d.cols), d_in, d.cols);
      break;
    case ProjectionInit::kLinear: {  // nn.Linear(d_in, cols, bias): W = weight.T
      TorchGenerator::LinearInit lin = gen.torch().Linear(d_in, d.cols, with_bias);
      cols = MatrixFromFlat(lin.weight, d.cols, d_in).transpose();
      if (with_bias)
        bias.segment(d.first_col, d.cols) = Eigen::Map<const RowVector>(lin.bias.data(), d.cols);
      break;
    }
    default:
      break;  // identity and matrix draw nothing
  }
}

}  // namespace

void Engine::ComputeProjections(const Scenario& s) {
  ++counts_.projections;
  Stages& st = stages_;
  const Shape& sh = st.shape;
  const ProjectionSpec& p = s.projections;
  DrawSource gen = gen_after_input_;
  const bool draws = ProjectionInitDraws(p.init);
  if (draws && p.seed) gen.Seed(*p.seed);
  for (auto& b : st.bias) b.resize(0);
  st.out_proj_W.resize(0, 0);
  st.out_proj_bias.resize(0);
  const bool qkv = s.input.source == InputSource::kQkv;  // Q, K, V come from the input
  for (int w = 0; w < 3 && !qkv; ++w) {
    if (p.init == ProjectionInit::kIdentity) st.W[w] = Matrix::Identity(sh.d_in, sh.d_in);
    if (p.init == ProjectionInit::kMatrix) st.W[w] = p.W[w];
    if (!draws) continue;
    st.W[w].resize(sh.d_in, sh.d_out);
    if (p.bias && p.init == ProjectionInit::kLinear) st.bias[w].resize(sh.d_out);
  }
  for (Matrix& w : st.W)
    if (qkv) w.resize(0, 0);
  // The draws in the generator's order: whole matrices, or head by head (per_head).
  if (!qkv)
    for (const WeightDraw& d : ProjectionDraws(p, sh)) {
      const int w = static_cast<int>(d.name);
      DrawInto(p.init, d, sh.d_in, st.bias[w].size() > 0, gen, st.W[w], st.bias[w]);
    }
  if (p.out_proj) {  // nn.Linear(d_out, d_out, bias=True), drawn after the three projections
    TorchGenerator::LinearInit lin = gen.torch().Linear(sh.d_out, sh.d_out, true);
    st.out_proj_W = MatrixFromFlat(lin.weight, sh.d_out, sh.d_out).transpose();
    st.out_proj_bias = Eigen::Map<const RowVector>(lin.bias.data(), sh.d_out);
  }
  gen_after_projections_ = gen;

  // Q = X @ W_query (+ b_query), and so on: the product first, then the bias, as
  // torch_scenario.py computes them (two roundings, not one addmm). Row blocks on all threads.
  MatrixStack* outs[3] = {&st.Q, &st.K, &st.V};
  if (!qkv) {
    for (MatrixStack* out : outs) {
      out->resize(sh.B);
      for (Matrix& y : *out) y.resize(sh.T, sh.d_out);
    }
    // Parts of at least 256 rows: Eigen's set-up of a 64-row product costs about as much as
    // the product. The parts depend on T only, so no thread count changes a sum.
    const int64_t rows = std::max<int64_t>(RowBlock(sh.T), 256);
    const int64_t blocks = (sh.T + rows - 1) / rows;
    ParallelFor(3 * sh.B * blocks, [&](int64_t task) {
      const int w = static_cast<int>(task / (sh.B * blocks));
      const int64_t b = task / blocks % sh.B, r0 = task % blocks * rows;
      const int64_t rb = std::min(rows, sh.T - r0);
      auto y = (*outs[w])[b].middleRows(r0, rb);
      y.noalias() = st.X[b].middleRows(r0, rb) * st.W[w];
      if (st.bias[w].size() > 0) y.rowwise() += st.bias[w];
    });
  }
  // K.var() as the scenario's library computes it (stats.h): torch's unbiased float32 value
  // (inf above FLT_MAX), or NumPy's ddof = 0; the generated program's var_K = K.var().
  st.var_K = StackVariance(st.K, VarianceKindOf(s.input.generator));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] scores, logits, weights
// ---------------------------------------------------------------------------------------------

namespace {

// Number of leading entries of row i that may be non-zero after masking: the causal mask
// allows keys 0..i, so the rest of the row need not be touched.
inline int64_t ActiveLength(MaskKind kind, int64_t i, int64_t T) {
  return kind == MaskKind::kCausal ? i + 1 : T;
}

// The matrices of a per-head stage cut into row blocks (RowBlock(T) rows, the last one
// shorter): task i is block i % blocks of matrix i / blocks, the last block first, as the
// causal mask makes the last rows the longest.
struct RowBlocks {
  int64_t T, rows, blocks;
  explicit RowBlocks(int64_t t) : T(t), rows(RowBlock(t)), blocks((t + rows - 1) / rows) {}
  size_t Matrix(int64_t task) const { return static_cast<size_t>(task / blocks); }
  int64_t Block(int64_t task) const { return blocks - 1 - task % blocks; }
  int64_t First(int64_t task) const { return Block(task) * rows; }
  int64_t Count(int64_t task) const { return std::min(rows, T - First(task)); }
};

// How logits are made from scores: * mult, then / div (float32(sqrt(dh))) when scale.
struct LogitScaling {
  float mult, div;
  bool scale;
};

}  // namespace

void Engine::BuildMask(const Scenario& s) {
  Stages& st = stages_;
  const int64_t T = st.shape.T;
  // The mask only changes with its kind (or T); a temperature drag must not rebuild it.
  if (st.mask.rows() == T && mask_kind_ == s.mask.kind && s.mask.kind != MaskKind::kCustom)
    return;
  if (s.mask.kind == MaskKind::kCustom) {
    st.mask = s.mask.allowed;
  } else {
    st.mask.resize(T, T);
    for (int64_t i = 0; i < T; ++i) {
      const int64_t len = ActiveLength(s.mask.kind, i, T);
      std::memset(st.mask.data() + i * T, 1, len);
      std::memset(st.mask.data() + i * T + len, 0, T - len);
    }
  }
  mask_kind_ = s.mask.kind;
}

namespace {

// Rows [r0, r0 + rb) of logits from the same rows of scores. `tails` says whether the -inf
// beyond each row's active length must be written (not already there from an earlier run).
void LogitRows(const Matrix& sc, const MaskMatrix& mask, MaskKind kind, LogitScaling f,
               int64_t r0, int64_t rb, bool tails, Matrix& lg) {
  const int64_t T = sc.cols();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t i = r0; i < r0 + rb; ++i) {
    const float* in = sc.data() + i * T;
    float* out = lg.data() + i * T;
    const int64_t len = ActiveLength(kind, i, T);
    // Two float32 roundings, as PyTorch does (x * 1 is exact, so a multiplier of 1 is skipped).
    if (f.mult != 1.0f && f.scale) {
      for (int64_t j = 0; j < len; ++j) out[j] = (in[j] * f.mult) / f.div;
    } else if (f.scale) {
      for (int64_t j = 0; j < len; ++j) out[j] = in[j] / f.div;
    } else {
      for (int64_t j = 0; j < len; ++j) out[j] = in[j] * f.mult;
    }
    if (tails)
      for (int64_t j = len; j < T; ++j) out[j] = neg_inf;
    if (kind == MaskKind::kCustom) {
      const uint8_t* allowed = mask.data() + i * T;
      for (int64_t j = 0; j < T; ++j)
        if (!allowed[j]) out[j] = neg_inf;
    }
  }
}

// Normalises one row's first `len` logits z into out (PyTorch's formulas, see pipeline.h) and
// returns what PyTorch writes in the row's masked cells beyond `len`: exp(-inf) = 0 (or the
// masked 0 of "sum" and "mean") times or divided by the row's normaliser. That is +0 for a
// finite positive normaliser, -0 for a negative one ("sum"), and nan when the normaliser is 0
// or nan (exp underflow, a zero row sum, +inf logits: inf - inf), as in the rest of the row.
float NormalizeRow(Normalization norm, const float* logits, const uint8_t* allowed, int64_t len,
                   int64_t T, float* weights) {
  const Eigen::Map<const Eigen::ArrayXf> z(logits, len);
  Eigen::Map<Eigen::ArrayXf> out(weights, len);
  switch (norm) {
    case Normalization::kSoftmax: {
      // Stable softmax: subtracting the row max keeps exp() from overflowing and does not
      // change the result. Masked entries are -inf and become exactly 0.
      const float mx = z.maxCoeff();
      detail::ShiftedExp(logits, mx, weights, len);
      const float inv = 1.0f / out.sum();
      out *= inv;
      return 0.0f * inv;
    }
    case Normalization::kSoftmaxNaive: {
      // exp(z) / sum exp(z), as the notebooks first write it: overflows to inf and nan for
      // large logits, which is the lesson.
      detail::ShiftedExp(logits, 0.0f, weights, len);
      const float sum = detail::TorchRowSum(weights, len, T);  // exps.sum(): PyTorch's order
      out /= sum;
      return 0.0f / sum;
    }
    case Normalization::kSum: {
      // z / sum(z) over the allowed entries: can be negative or blow up.
      for (int64_t j = 0; j < len; ++j) out[j] = allowed[j] ? z[j] : 0.0f;
      // In PyTorch's order: where partial sums overflow (3e38 + 3e38) the order decides
      // between inf and a finite sum.
      const float sum = detail::TorchRowSum(weights, len, T);
      out /= sum;
      return 0.0f / sum;
    }
    case Normalization::kMean: {
      // Uniform weights over the allowed entries: the "averaging with tril" trick.
      float count = 0.0f;
      for (int64_t j = 0; j < len; ++j) count += allowed[j] ? 1.0f : 0.0f;
      for (int64_t j = 0; j < len; ++j) out[j] = (allowed[j] ? 1.0f : 0.0f) / count;
      return 0.0f / count;
    }
  }
  return 0.0f;
}

// Rows [r0, r0 + rb) of the weights from the same rows of logits. Returns true when every
// row's masked cells beyond its active length hold +0 (written now, or already there when
// `tails` is false); a row whose normaliser is 0, negative or nan gets PyTorch's fill there.
bool WeightRows(Normalization norm, const Matrix& lg, const MaskMatrix& mask, MaskKind kind,
                int64_t r0, int64_t rb, bool tails, Matrix& w) {
  const int64_t T = lg.cols();
  bool zero_tails = true;
  for (int64_t i = r0; i < r0 + rb; ++i) {
    const int64_t len = ActiveLength(kind, i, T);
    float* row = w.data() + i * T;
    const float fill = NormalizeRow(norm, lg.data() + i * T, mask.data() + i * T, len, T, row);
    if (fill != 0.0f || std::signbit(fill)) {
      std::fill(row + len, row + T, fill);
      zero_tails = zero_tails && len == T;
    } else if (tails) {
      std::fill(row + len, row + T, 0.0f);
    }
  }
  return zero_tails;
}

}  // namespace

void Engine::ComputeHeads(const Scenario& s, int from, bool with_context) {
  Stages& st = stages_;
  const Shape& sh = st.shape;
  const int64_t T = sh.T;
  const size_t count = static_cast<size_t>(sh.B * sh.H);
  const MaskKind kind = s.mask.kind;
  const TailKey key{kind, T, count};
  const bool do_scores = from <= 2, do_logits = from <= 3;
  auto sized = [&](MatrixStack& stack) {
    stack.resize(count);
    for (Matrix& m : stack) m.resize(T, T);
  };
  if (do_scores) ++counts_.scores, sized(st.scores);
  if (do_logits) ++counts_.logits, sized(st.logits), BuildMask(s);
  ++counts_.weights;
  sized(st.weights);
  if (with_context) PrepareContext();
  const float div = static_cast<float>(std::sqrt(static_cast<double>(sh.dh)));
  const LogitScaling scaling{static_cast<float>(s.scaling.multiplier), div, s.scaling.sqrt_dk};
  const bool logit_tails = logits_tail_ != key, weight_tails = weights_tail_ != key;
  const RowBlocks blocks(T);
  block_zero_tail_.assign(count * blocks.blocks, 0);
  ParallelFor(static_cast<int64_t>(count) * blocks.blocks, [&](int64_t task) {
    const size_t m = blocks.Matrix(task);
    const int64_t r0 = blocks.First(task), rb = blocks.Count(task);
    const int64_t b = static_cast<int64_t>(m) / sh.H, h = static_cast<int64_t>(m) % sh.H;
    if (do_scores)  // scores = q @ k.transpose(-2, -1) for head h's columns
      st.scores[m].middleRows(r0, rb).noalias() =
          st.Q[b].block(r0, h * sh.dh, rb, sh.dh) * st.K[b].middleCols(h * sh.dh, sh.dh).transpose();
    if (do_logits)
      LogitRows(st.scores[m], st.mask, kind, scaling, r0, rb, logit_tails, st.logits[m]);
    block_zero_tail_[m * blocks.blocks + blocks.Block(task)] = WeightRows(
        s.normalization, st.logits[m], st.mask, kind, r0, rb, weight_tails, st.weights[m]);
    if (with_context) ContextRows(st.weights, m, r0, rb, blocks.Block(task));
  });
  if (do_logits) logits_tail_ = key;
  const bool zero_tails = std::all_of(block_zero_tail_.begin(), block_zero_tail_.end(),
                                      [](uint8_t z) { return z != 0; });
  weights_tail_ = zero_tails ? std::optional<TailKey>(key) : std::nullopt;
  if (with_context) ApplyOutProj();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] dropout and context
// ---------------------------------------------------------------------------------------------

void Engine::ComputeDropout(const Scenario& s) {
  ++counts_.dropout;
  Stages& st = stages_;
  if (s.dropout.p <= 0.0) {
    st.weights_dropped.clear();
    return;
  }
  DrawSource gen = gen_after_projections_;
  if (s.dropout.seed) gen.Seed(*s.dropout.seed);
  st.weights_dropped.resize(st.weights.size());
  for (size_t m = 0; m < st.weights.size(); ++m) st.weights_dropped[m] = st.weights[m];
  // One mask over the B x H x T x T tensor in flat order (matrix after matrix, row-major), or
  // head by head for per_head modules (DropoutDrawOrder). The generator is sequential, so this
  // stays on one thread.
  for (int64_t m : DropoutDrawOrder(s.projections, st.shape)) {
    Matrix& w = st.weights_dropped[static_cast<size_t>(m)];
    gen.torch().Dropout(w.data(), w.size(), s.dropout.p);
  }
}

void Engine::PrepareContext() {
  ++counts_.context;
  Stages& st = stages_;
  const Shape& sh = st.shape;
  st.context.resize(sh.B);
  for (Matrix& ctx : st.context) ctx.resize(sh.T, sh.d_v);
  // 0 * inf is nan in PyTorch's full product: V must be finite for the causal skip to be exact.
  v_finite_.resize(sh.B * sh.H);
  for (int64_t b = 0; b < sh.B; ++b)
    for (int64_t h = 0; h < sh.H; ++h)
      v_finite_[b * sh.H + h] = st.V[b].middleCols(h * sh.dh_v, sh.dh_v).allFinite();
}

void Engine::ContextRows(const MatrixStack& used, size_t m, int64_t r0, int64_t rb,
                         int64_t block) {
  Stages& st = stages_;
  const Shape& sh = st.shape;
  const int64_t b = static_cast<int64_t>(m) / sh.H, h = static_cast<int64_t>(m) % sh.H;
  const Matrix& w = used[m];
  const auto v = st.V[b].middleCols(h * sh.dh_v, sh.dh_v);
  auto out = st.context[b].block(r0, h * sh.dh_v, rb, sh.dh_v);
  // Under a causal mask the weights beyond each row's diagonal are exactly +0 when its
  // normaliser is finite and positive (exp(-inf) = 0): rows [r0, r0 + rb) then meet only keys
  // [0, r0 + rb), and the product skips the zero block above the diagonal.
  const RowBlocks blocks(sh.T);
  const bool lower = mask_kind_ == MaskKind::kCausal && v_finite_[m] &&
                     block_zero_tail_[m * blocks.blocks + block];
  if (lower)
    out.noalias() = w.block(r0, 0, rb, r0 + rb) * v.topRows(r0 + rb);
  else
    out.noalias() = w.middleRows(r0, rb) * v;
}

void Engine::ApplyOutProj() {
  Stages& st = stages_;
  const Shape& sh = st.shape;
  if (st.out_proj_W.size() == 0) return;
  // out_proj(context) = context @ W + bias, row block by row block (rows are independent).
  const int64_t rows = RowBlock(sh.T), blocks = (sh.T + rows - 1) / rows;
  ParallelFor(sh.B * blocks, [&](int64_t task) {
    const int64_t b = task / blocks, r0 = task % blocks * rows;
    auto ctx = st.context[b].middleRows(r0, std::min(rows, sh.T - r0));
    Matrix y = ctx * st.out_proj_W;
    y.rowwise() += st.out_proj_bias;
    ctx = y;
  });
}

void Engine::ComputeContext() {
  Stages& st = stages_;
  const MatrixStack& used = st.weights_dropped.empty() ? st.weights : st.weights_dropped;
  PrepareContext();
  const RowBlocks blocks(st.shape.T);
  ParallelFor(static_cast<int64_t>(used.size()) * blocks.blocks, [&](int64_t task) {
    ContextRows(used, blocks.Matrix(task), blocks.First(task), blocks.Count(task),
                blocks.Block(task));
  });
  ApplyOutProj();
}

}  // namespace attnlab
