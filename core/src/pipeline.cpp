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
#include "attnlab/stats.h"

namespace attnlab {

Matrix MatrixFromFlat(const std::vector<float>& values, Eigen::Index rows, Eigen::Index cols) {
  return Eigen::Map<const Matrix>(values.data(), rows, cols);
}

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
  if (from <= 2) ComputeScores();
  if (from <= 3) ComputeLogits(s);
  if (from <= 4) ComputeWeights(s);
  if (from <= 5) ComputeDropout(s);
  if (from <= 6) ComputeContext();
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
  // A fresh generator is a fresh Python process: torch's default seed until manual_seed.
  DrawSource gen(s.input.generator);
  st.generator = s.input.generator;
  st.X.clear();
  st.tokens.clear();
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
      const std::vector<float> flat = gen.Normal(sh.B * sh.T * sh.d_in);
      for (int64_t b = 0; b < sh.B; ++b)
        st.X.push_back(Eigen::Map<const Matrix>(flat.data() + b * sh.T * sh.d_in, sh.T, sh.d_in));
      break;
    }
    case InputSource::kQkv:
      InputQkv(s.input, gen);
      break;
  }
  if (st.tokens.empty())
    for (int64_t t = 0; t < sh.T; ++t) st.tokens.push_back("x" + std::to_string(t + 1));
  gen_after_input_ = gen;
}

// Q, K and V of a qkv input: given, or q = randn(B, T, d_k), k = ..., v = ... in input.order.
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
    const std::vector<float> flat = gen.Normal(sh.B * sh.T * sh.d_out);
    out.clear();
    for (int64_t b = 0; b < sh.B; ++b)
      out.push_back(Eigen::Map<const Matrix>(flat.data() + b * sh.T * sh.d_out, sh.T, sh.d_out));
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] projections
// ---------------------------------------------------------------------------------------------

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
  for (Matrix& w : st.W)
    if (qkv) w.resize(0, 0);
  for (Projection name : p.order) {
    if (qkv) break;
    const int w = static_cast<int>(name);
    switch (p.init) {
      case ProjectionInit::kIdentity:
        st.W[w] = Matrix::Identity(sh.d_in, sh.d_in);
        break;
      case ProjectionInit::kTorchRand:  // nn.Parameter(torch.rand(d_in, d_out))
        st.W[w] = MatrixFromFlat(gen.Uniform(sh.d_in * sh.d_out), sh.d_in, sh.d_out);
        break;
      case ProjectionInit::kRandn:  // torch.randn(d_in, d_out)
        st.W[w] = MatrixFromFlat(gen.Normal(sh.d_in * sh.d_out), sh.d_in, sh.d_out);
        break;
      case ProjectionInit::kLinear: {  // nn.Linear(d_in, d_out, bias): W = weight.T
        TorchGenerator::LinearInit lin = gen.torch().Linear(sh.d_in, sh.d_out, p.bias);
        st.W[w] = MatrixFromFlat(lin.weight, sh.d_out, sh.d_in).transpose();
        if (p.bias) st.bias[w] = Eigen::Map<const RowVector>(lin.bias.data(), sh.d_out);
        break;
      }
      case ProjectionInit::kMatrix:
        st.W[w] = p.W[w];
        break;
    }
  }
  if (p.out_proj) {  // nn.Linear(d_out, d_out, bias=True), drawn after the three projections
    TorchGenerator::LinearInit lin = gen.torch().Linear(sh.d_out, sh.d_out, true);
    st.out_proj_W = MatrixFromFlat(lin.weight, sh.d_out, sh.d_out).transpose();
    st.out_proj_bias = Eigen::Map<const RowVector>(lin.bias.data(), sh.d_out);
  }
  gen_after_projections_ = gen;

  // Q = X @ W_query (+ b_query), and so on: the product first, then the bias, as
  // torch_scenario.py computes them (two roundings, not one addmm).
  MatrixStack* outs[3] = {&st.Q, &st.K, &st.V};
  for (int w = 0; w < 3 && !qkv; ++w) {
    outs[w]->resize(sh.B);
    for (int64_t b = 0; b < sh.B; ++b) {
      Matrix& y = (*outs[w])[b];
      y.noalias() = st.X[b] * st.W[w];
      if (st.bias[w].size() > 0) y.rowwise() += st.bias[w];
    }
  }
  // K.var() as torch computes it (stats.h): unbiased, a float32 value (inf above FLT_MAX).
  st.var_K = StackVariance(st.K, VarianceKind::kTorchUnbiased);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] scores, logits, weights
// ---------------------------------------------------------------------------------------------

void Engine::ComputeScores() {
  ++counts_.scores;
  Stages& st = stages_;
  const Shape& sh = st.shape;
  st.scores.resize(sh.B * sh.H);
  for (int64_t b = 0; b < sh.B; ++b)
    for (int64_t h = 0; h < sh.H; ++h) {
      // scores = q @ k.transpose(-2, -1) for head h's columns h*dh .. (h+1)*dh - 1.
      st.scores[b * sh.H + h].noalias() =
          st.Q[b].middleCols(h * sh.dh, sh.dh) * st.K[b].middleCols(h * sh.dh, sh.dh).transpose();
    }
}

namespace {

// Number of leading entries of row i that may be non-zero after masking: the causal mask
// allows keys 0..i, so the rest of the row need not be touched.
inline int64_t ActiveLength(MaskKind kind, int64_t i, int64_t T) {
  return kind == MaskKind::kCausal ? i + 1 : T;
}

}  // namespace

void Engine::ComputeLogits(const Scenario& s) {
  ++counts_.logits;
  Stages& st = stages_;
  const Shape& sh = st.shape;
  const int64_t T = sh.T;
  // The mask only changes with its kind (or T); a temperature drag must not rebuild it.
  const bool same_mask =
      st.mask.rows() == T && mask_kind_ == s.mask.kind && s.mask.kind != MaskKind::kCustom;
  if (!same_mask) {
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
  // logits = scores * multiplier, then / sqrt(dh): two float32 roundings, as PyTorch does
  // (the divisor is float32(sqrt(dh)); x * 1 is exact, so a multiplier of 1 is skipped).
  const float mult = static_cast<float>(s.scaling.multiplier);
  const bool scale = s.scaling.sqrt_dk;
  const float div = static_cast<float>(std::sqrt(static_cast<double>(sh.dh)));
  const float neg_inf = -std::numeric_limits<float>::infinity();
  st.logits.resize(st.scores.size());
  const TailKey key{s.mask.kind, T, st.scores.size()};
  const bool tails_written = logits_tail_ == key;
  for (size_t m = 0; m < st.scores.size(); ++m) {
    const Matrix& sc = st.scores[m];
    Matrix& lg = st.logits[m];
    lg.resize(T, T);
    for (int64_t i = 0; i < T; ++i) {
      const float* in = sc.data() + i * T;
      float* out = lg.data() + i * T;
      const int64_t len = ActiveLength(s.mask.kind, i, T);
      if (mult != 1.0f && scale) {
        for (int64_t j = 0; j < len; ++j) out[j] = (in[j] * mult) / div;
      } else if (scale) {
        for (int64_t j = 0; j < len; ++j) out[j] = in[j] / div;
      } else {
        for (int64_t j = 0; j < len; ++j) out[j] = in[j] * mult;
      }
      if (!tails_written)
        for (int64_t j = len; j < T; ++j) out[j] = neg_inf;
      if (s.mask.kind == MaskKind::kCustom) {
        const uint8_t* allowed = st.mask.data() + i * T;
        for (int64_t j = 0; j < T; ++j)
          if (!allowed[j]) out[j] = neg_inf;
      }
    }
  }
  logits_tail_ = key;
}

namespace {

// Normalises one row's first `len` logits z into out (PyTorch's formulas, see pipeline.h) and
// returns what PyTorch writes in the row's masked cells beyond `len`: exp(-inf) = 0 (or the
// masked 0 of "sum" and "mean") times or divided by the row's normaliser. That is +0 for a
// finite positive normaliser, -0 for a negative one ("sum"), and nan when the normaliser is 0
// or nan (exp underflow, a zero row sum, +inf logits: inf - inf), as in the rest of the row.
float NormalizeRow(Normalization norm, const float* logits, const uint8_t* allowed, int64_t len,
                   float* weights) {
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
      const float sum = out.sum();
      out /= sum;
      return 0.0f / sum;
    }
    case Normalization::kSum: {
      // z / sum(z) over the allowed entries: can be negative or blow up.
      for (int64_t j = 0; j < len; ++j) out[j] = allowed[j] ? z[j] : 0.0f;
      const float sum = out.sum();
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

}  // namespace

void Engine::ComputeWeights(const Scenario& s) {
  ++counts_.weights;
  Stages& st = stages_;
  const int64_t T = st.shape.T;
  const MaskKind kind = s.mask.kind;
  st.weights.resize(st.logits.size());
  const TailKey key{kind, T, st.logits.size()};
  // The causal fast path leaves the cells above the diagonal at the +0 an earlier run wrote;
  // a row whose normaliser is 0, negative or nan gets PyTorch's value there instead.
  const bool tails_written = weights_tail_ == key;
  bool zero_tails = true;
  for (size_t m = 0; m < st.logits.size(); ++m) {
    Matrix& w = st.weights[m];
    w.resize(T, T);
    for (int64_t i = 0; i < T; ++i) {
      const int64_t len = ActiveLength(kind, i, T);
      float* row = w.data() + i * T;
      const float fill = NormalizeRow(s.normalization, st.logits[m].data() + i * T,
                                      st.mask.data() + i * T, len, row);
      if (fill != 0.0f || std::signbit(fill)) {
        std::fill(row + len, row + T, fill);
        zero_tails = zero_tails && len == T;
      } else if (!tails_written) {
        std::fill(row + len, row + T, 0.0f);
      }
    }
  }
  upper_is_zero_ = kind == MaskKind::kCausal && zero_tails;
  weights_tail_ = zero_tails ? std::optional<TailKey>(key) : std::nullopt;
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
  // One mask over the B x H x T x T tensor in flat order: matrix after matrix, row-major.
  for (Matrix& m : st.weights_dropped) gen.torch().Dropout(m.data(), m.size(), s.dropout.p);
}

void Engine::ComputeContext() {
  ++counts_.context;
  Stages& st = stages_;
  const Shape& sh = st.shape;
  const MatrixStack& used = st.weights_dropped.empty() ? st.weights : st.weights_dropped;
  // The weights above the diagonal are exactly +0 under a causal mask when every row's
  // normaliser is finite and positive (exp(-inf) = 0), so a triangular product gives the same
  // sums with half the work.
  const bool lower = upper_is_zero_;
  st.context.resize(sh.B);
  for (int64_t b = 0; b < sh.B; ++b) {
    Matrix& ctx = st.context[b];
    ctx.resize(sh.T, sh.d_out);
    for (int64_t h = 0; h < sh.H; ++h) {
      const Matrix& w = used[b * sh.H + h];
      const auto v = st.V[b].middleCols(h * sh.dh, sh.dh);
      // 0 * inf is nan in PyTorch's full product: V must be finite for the skip to be exact.
      if (lower && v.allFinite()) {
        // Block rows [r0, r0 + rb) only meet keys [0, r0 + rb): one GEMM per block row skips
        // the zero blocks above the diagonal (faster here than Eigen's triangular product).
        constexpr int64_t kBlock = 256;
        for (int64_t r0 = 0; r0 < sh.T; r0 += kBlock) {
          const int64_t rb = std::min(kBlock, sh.T - r0);
          ctx.block(r0, h * sh.dh, rb, sh.dh).noalias() =
              w.block(r0, 0, rb, r0 + rb) * v.topRows(r0 + rb);
        }
      } else {
        ctx.middleCols(h * sh.dh, sh.dh).noalias() = w * v;
      }
    }
    if (st.out_proj_W.size() > 0) {
      Matrix y = ctx * st.out_proj_W;
      y.rowwise() += st.out_proj_bias;
      ctx = std::move(y);
    }
  }
}

}  // namespace attnlab
