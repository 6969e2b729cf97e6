// pipeline.cpp: the attention engine (see pipeline.h for the stages and their shapes).
//
// [SECTION] Run: decide which stages to recompute
// [SECTION] input: matrix, text (nn.Embedding), randn
// [SECTION] projections: Q, K, V
// [SECTION] scores, logits, weights
// [SECTION] dropout and context
#include "attnlab/model/pipeline.h"

#include <emmintrin.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "attnlab/base/parallel.h"
#include "attnlab/base/text.h"
#include "attnlab/model/memory_probe.h"
#include "attnlab/model/variance.h"
#include "model/kernels.h"
#include "model/stage_rules.h"

namespace attnlab {

double WrittenAsDouble(float v) {
  if (!std::isfinite(v)) return v;
  const std::string text = ShortestFloat(v);
  double d = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), d);
  return d;
}

DrawSource::DrawSource(Generator kind)
    : kind_(kind), torch_(DefaultSeed(Generator::kTorch)), numpy_(DefaultSeed(Generator::kNumpy)) {}

void DrawSource::Seed(uint64_t seed) {
  if (kind_ == Generator::kNumpy)
    numpy_.Seed(seed);
  else
    torch_.ManualSeed(seed);
}

// NumPy's draws are float64: a float32 run rounds them, a float64 run keeps them.
template <typename S>
std::vector<S> DrawSource::NormalOf(int64_t n) {
  if (kind_ != Generator::kNumpy) return torch_.NormalOf<S>(n);
  const std::vector<double> v = numpy_.Randn(n);
  return std::vector<S>(v.begin(), v.end());
}

template <typename S>
void DrawSource::NormalIntoOf(S* out, int64_t n) {
  if (kind_ != Generator::kNumpy) return torch_.NormalIntoOf(out, n);
  const std::vector<double> v = numpy_.Randn(n);
  std::copy(v.begin(), v.end(), out);
}

template <typename S>
std::vector<S> DrawSource::UniformOf(int64_t n) {
  if (kind_ != Generator::kNumpy) return torch_.UniformOf<S>(n);
  const std::vector<double> v = numpy_.Rand(n);
  return std::vector<S>(v.begin(), v.end());
}

template std::vector<float> DrawSource::NormalOf<float>(int64_t);
template std::vector<double> DrawSource::NormalOf<double>(int64_t);
template void DrawSource::NormalIntoOf<float>(float*, int64_t);
template void DrawSource::NormalIntoOf<double>(double*, int64_t);
template std::vector<float> DrawSource::UniformOf<float>(int64_t);
template std::vector<double> DrawSource::UniformOf<double>(int64_t);

float StoreAs(Dtype dtype, float v) {
  // Eigen's conversions round to nearest, ties to even (float_to_bfloat16_rtne,
  // float_to_half_rtne); overflow gives +-inf, NaN stays NaN.
  if (dtype == Dtype::kBfloat16) return static_cast<float>(Eigen::bfloat16(v));
  if (dtype == Dtype::kFloat16) return static_cast<float>(Eigen::half(v));
  return v;
}

double DtypeEpsilon(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFloat64:
      return 0x1p-52;
    case Dtype::kBfloat16:
      return 0x1p-7;
    case Dtype::kFloat16:
      return 0x1p-10;
    default:
      return 0x1p-23;
  }
}

double MaskFillValue(MaskFill fill, Dtype dtype) {
  switch (fill) {
    case MaskFill::kNegInf:
      return -std::numeric_limits<double>::infinity();
    case MaskFill::kFinfoMin:  // torch.finfo(dtype).min: the most negative finite value
      if (dtype == Dtype::kFloat64) return std::numeric_limits<double>::lowest();
      if (dtype == Dtype::kBfloat16)
        return static_cast<float>(Eigen::NumTraits<Eigen::bfloat16>::lowest());
      if (dtype == Dtype::kFloat16)
        return static_cast<float>(Eigen::NumTraits<Eigen::half>::lowest());
      return std::numeric_limits<float>::lowest();
    case MaskFill::kMinus1e9:
      return dtype == Dtype::kFloat64 ? -1e9 : StoreAs(dtype, -1e9f);
    case MaskFill::kMinus1e4:
      return dtype == Dtype::kFloat64 ? -1e4 : StoreAs(dtype, -1e4f);
    case MaskFill::kGemma:  // gemma_pytorch's mask value, a Python float made a tensor
      return dtype == Dtype::kFloat64 ? -2.3819763e38 : StoreAs(dtype, -2.3819763e38f);
  }
  return 0.0;
}

template <typename M>
void Engine::Store(M&& m) const {
  using S = typename std::decay_t<M>::Scalar;
  if constexpr (std::is_same_v<S, float>) {
    if (!IsLowPrecision(store_)) return;
    const Dtype d = store_;
    m = m.unaryExpr([d](float v) { return StoreAs(d, v); });
  }
}

template <typename S>
void Engine::StoreStack(MatrixStackOf<S>& stack) const {
  for (MatrixOf<S>& m : stack) Store(m);
}

namespace {

template <typename S>
MatrixOf<S> FromFlat(const std::vector<S>& v, int64_t offset, Eigen::Index rows,
                     Eigen::Index cols) {
  return Eigen::Map<const MatrixOf<S>>(v.data() + offset, rows, cols);
}

// A matrix the scenario writes (float32 in Scenario), in number type S: as it is, or the
// double of its text (WrittenAsDouble).
template <typename S>
MatrixOf<S> Written(const Matrix& m) {
  if constexpr (std::is_same_v<S, float>)
    return m;
  else
    return m.unaryExpr(&WrittenAsDouble);
}

template <typename S>
MatrixStackOf<S> Written(const MatrixStack& stack) {
  MatrixStackOf<S> out;
  for (const Matrix& m : stack) out.push_back(Written<S>(m));
  return out;
}

// out = a @ b by the run's product order (Numerics::Product); a, b and out are Eigen
// expressions (blocks, transposes) of the same number type, out sized a.rows() x b.cols().
// With `packed` (Eigen's product only): b's packing, the first a.cols() rows of an operand of
// `depth` rows packed by kernels::PackRight; `out_zero` then says out is all +0 already (it is
// not cleared again: kernels::Table::product_packed).
template <typename A, typename B, typename Out>
void MultiplyInto(Numerics::Product order, const A& a, const B& b, Out&& out,
                  const typename A::Scalar* packed = nullptr, int64_t depth = 0,
                  bool out_zero = false) {
  if (order == Numerics::Product::kEigen) {  // at the CPU's best instruction set (kernels.h)
    using S = typename A::Scalar;
    auto view = [](const auto& x) {
      using X = std::decay_t<decltype(x)>;
      return kernels::View<const S>{x.data(), x.rows(), x.cols(), x.outerStride(),
                                    static_cast<bool>(X::IsRowMajor)};
    };
    static_assert(std::decay_t<Out>::IsRowMajor, "the products write row-major stages");
    const kernels::View<S> to{out.data(), out.rows(), out.cols(), out.outerStride(), true};
    if (packed)
      kernels::ProductPacked(view(a), view(b), packed, depth, to, out_zero);
    else
      kernels::Product(view(a), view(b), to);
    return;
  }
  // Reference BLAS (netlib dgemm) and NumPy's own loop: each element summed over the inner
  // index from 0 upward, from 0, one rounding per product and per addition.
  using S = typename std::decay_t<Out>::Scalar;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < b.cols(); ++j) {
      S acc = 0;
      for (Eigen::Index l = 0; l < a.cols(); ++l) acc = acc + a(i, l) * b(l, j);
      out(i, j) = acc;
    }
}

// projections.head_split on every batch entry of `stack` (B x T x n*dh, heads of dh columns):
// each matrix rearranged into the heads side by side as HeadSplitSource reads them (the split),
// or with `merge` each heads-side-by-side cell written back where HeadSplitSource puts it
// (context.view(B, T, d_v) after the buggy split). A permutation: exact in every dtype.
template <typename S>
void SplitStack(HeadSplit split, int64_t dh, MatrixStackOf<S>& stack, bool merge) {
  if (split == HeadSplit::kTranspose) return;
  for (MatrixOf<S>& m : stack) {
    MatrixOf<S> out(m.rows(), m.cols());
    for (Eigen::Index r = 0; r < m.rows(); ++r)
      for (Eigen::Index c = 0; c < m.cols(); ++c) {
        const StageCell from = HeadSplitSource(split, m.rows(), m.cols(), dh, r, c);
        if (merge)
          out(from.row, from.col) = m(r, c);
        else
          out(r, c) = m(from.row, from.col);
      }
    m.swap(out);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Run
// ---------------------------------------------------------------------------------------------

template <>
StageTensors<float>& Engine::Tensors<float>() {
  return stages_;
}

template <>
StageTensors<double>& Engine::Tensors<double>() {
  return *f64_;
}

template <>
Engine::PackedHeads<float>& Engine::Packed<float>() {
  return packed_f_;
}

template <>
Engine::PackedHeads<double>& Engine::Packed<double>() {
  return packed_d_;
}

const Stages& Engine::Run(const Scenario& s) {
  const Shape shape = ValidateScenario(s);  // throws before anything below is touched
  MemoryChecksPassed();                     // the limit probe (scenario.h)
  // The first stage whose settings differ from the last run; everything after it is redone.
  int from = 0;
  if (has_result_) {
    from = 7;
    if (s.dropout.p != last_.dropout.p || s.dropout.seed != last_.dropout.seed) from = 5;
    if (s.normalization != last_.normalization)  // softmax_then_mask leaves the logits unmasked
      from =
          MaskAppliesToLogits(s.normalization) == MaskAppliesToLogits(last_.normalization) ? 4 : 3;
    if (s.scaling.sink != last_.scaling.sink || s.scaling.sink_form != last_.scaling.sink_form ||
        s.scaling.softmax_dtype != last_.scaling.softmax_dtype)
      from = std::min(from, 4);
    if (!SameLogitSettings(s, last_)) from = 3;
    // scale_at "q_and_k" scales the scores' operands: the scores change with the scale.
    if (s.scaling.scale_at != last_.scaling.scale_at ||
        (s.scaling.scale_at == ScaleAt::kQAndK &&
         (s.scaling.multiplier != last_.scaling.multiplier ||
          s.scaling.sqrt_dk != last_.scaling.sqrt_dk)))
      from = std::min(from, 2);
    if (!SameProjections(s.projections, last_.projections) ||
        !SamePositions(s.positions, last_.positions))
      from = 1;
    // The sinusoidal encoding is part of X.
    if (!SamePositions(s.positions, last_.positions) &&
        (s.positions.kind == PositionKind::kSinusoidal ||
         last_.positions.kind == PositionKind::kSinusoidal))
      from = 0;
    if (!SameInput(s.input, last_.input)) from = 0;
    if (s.dtype != last_.dtype) from = 0;  // the other number type's stages
    if (from == 7 && s.title == last_.title) return stages_;
  }
  // Stages are overwritten in place: a full recompute of the same size reuses every buffer
  // instead of faulting in fresh pages for each T x T matrix.
  stages_.shape = shape;
  store_ = s.dtype;
  head_split_ = s.projections.head_split;
  stages_.dtype = s.dtype;
  stages_.weights_f32 = s.scaling.softmax_dtype == SoftmaxDtype::kFloat32;
  const bool f64 = s.dtype == Dtype::kFloat64;
  if (!has_result_ || s.dtype != last_.dtype) logits_tail_.reset(), weights_tail_.reset();
  if (f64) {
    // The double stages are shared with stages_.f64 (and with whoever copied them): a
    // recompute writes into a copy when anyone else still holds them.
    if (!f64_) {
      f64_ = std::make_shared<StagesF64>();
      logits_tail_.reset(), weights_tail_.reset();
    } else if (f64_.use_count() > 2) {
      f64_ = std::make_shared<StagesF64>(*f64_);
    }
    numerics_ = NumericsOf<double>(s.input.generator);
    Compute<double>(s, from);
    RoundFloat64(from);
    stages_.f64 = f64_;
  } else {
    f64_.reset();
    stages_.f64.reset();
    numerics_ = NumericsOf<float>(s.input.generator);
    Compute<float>(s, from);
  }
  if (IsLowPrecision(s.dtype)) {  // the float32 reference of the rounding errors
    if (!reference_) reference_ = std::make_unique<Engine>();
    Scenario f32 = s;
    f32.dtype = Dtype::kFloat32;
    f32.scaling.softmax_dtype = SoftmaxDtype::kSame;
    stages_.f32 = std::make_shared<const StageTensors<float>>(reference_->Run(f32));
  } else {
    reference_.reset();
    stages_.f32.reset();
  }
  last_ = s;
  has_result_ = true;
  return stages_;
}

template <typename S>
void Engine::Compute(const Scenario& s, int from) {
  if (from <= 0) ComputeInput<S>(s);
  if (from <= 1) ComputeProjections<S>(s);
  // Scores, logits, weights (and the context when there is no dropout) are computed together,
  // row block by row block on all threads, while each block is in cache.
  const bool context_fused = s.dropout.p <= 0.0;
  if (from <= 4) ComputeHeads<S>(s, from, context_fused);
  if (from <= 5) ComputeDropout<S>(s);
  if (from <= 6 && !(from <= 4 && context_fused)) ComputeContext<S>();
}

namespace {

template <typename S>
void Round(const MatrixStackOf<S>& from, MatrixStack& to) {
  to.resize(from.size());
  for (size_t i = 0; i < from.size(); ++i) to[i] = from[i].template cast<float>();
}

}  // namespace

void Engine::RoundFloat64(int from) {
  const StagesF64& f = *f64_;
  Stages& st = stages_;
  if (from <= 0) Round(f.X, st.X);
  if (from <= 1) {
    for (int w = 0; w < 3; ++w) {
      st.W[w] = f.W[w].cast<float>();
      st.bias[w] = f.bias[w].cast<float>();
    }
    st.out_proj_W = f.out_proj_W.cast<float>();
    st.out_proj_bias = f.out_proj_bias.cast<float>();
    Round(f.Q, st.Q);
    Round(f.K, st.K);
    Round(f.V, st.V);
    packed_f_.v_current = false;
    Round(f.Q_rot, st.Q_rot);
    Round(f.K_rot, st.K_rot);
  }
  if (from <= 2) Round(f.scores, st.scores);
  if (from <= 3) Round(f.logits, st.logits);
  if (from <= 4) Round(f.weights, st.weights), Round(f.sink, st.sink);
  if (from <= 5) Round(f.weights_dropped, st.weights_dropped);
  if (from <= 6) Round(f.context, st.context);
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

template <typename S>
void Engine::ComputeInput(const Scenario& s) {
  ++counts_.input;
  Stages& st = stages_;
  StageTensors<S>& t = Tensors<S>();
  const Shape& sh = st.shape;
  // A fresh generator: DefaultSeed until the first seed (the program pins it if it is used).
  DrawSource gen(s.input.generator);
  st.generator = s.input.generator;
  MatrixStackOf<S> last_X;
  last_X.swap(t.X);  // the last X's buffers, reused by a randn draw of the same size
  std::vector<std::string> last_tokens;
  last_tokens.swap(st.tokens);  // kept when they were the default labels of the same T
  st.token_ids.clear();
  st.vocab.clear();
  switch (s.input.source) {
    case InputSource::kMatrix:
      t.X = Written<S>(s.input.values);
      st.tokens = s.input.tokens;
      break;
    case InputSource::kText: {
      st.tokens = Tokenize(s.input.text, s.input.tokenizer);
      Vocabulary v = BuildVocabulary(st.tokens, s.input.special_tokens);
      st.vocab = std::move(v.vocab);
      st.token_ids = std::move(v.token_ids);
      // torch.manual_seed(seed); nn.Embedding(V, d_in): the whole V x d_in table is drawn
      // (normal_(0, 1); its size decides the randn path and tail), then the token ids' rows.
      gen.Seed(s.input.seed);
      const std::vector<S> table = gen.torch().NormalOf<S>(sh.vocab * sh.d_in);
      MatrixOf<S> x(sh.T, sh.d_in);
      for (int64_t t_ = 0; t_ < sh.T; ++t_)
        x.row(t_) = FromFlat(table, st.token_ids[t_] * sh.d_in, 1, sh.d_in);
      t.X.push_back(std::move(x));
      break;
    }
    case InputSource::kRandn: {
      gen.Seed(s.input.seed);
      const int64_t n = sh.B * sh.T * sh.d_in;
      if (sh.B == 1) {
        // Drawn into the last run's X (fresh pages cost more than the draw): row-major
        // T x d_in is the flat order.
        t.X.swap(last_X);
        t.X.resize(1);
        t.X[0].resize(sh.T, sh.d_in);
        gen.NormalIntoOf(t.X[0].data(), n);
      } else {  // one flat draw over the batch (its tail spans the last matrix)
        const std::vector<S> flat = gen.NormalOf<S>(n);
        for (int64_t b = 0; b < sh.B; ++b)
          t.X.push_back(FromFlat(flat, b * sh.T * sh.d_in, sh.T, sh.d_in));
      }
      break;
    }
    case InputSource::kQkv:
      InputQkv<S>(s.input, gen);
      for (MatrixStackOf<S>* m : {&t.Q, &t.K, &t.V}) StoreStack(*m);
      break;
  }
  // Low precision: the draws and the written numbers stored in the dtype (torch.randn(...)
  // .to(dtype)), then X + PE with PE stored too, the sum rounded once more.
  StoreStack(t.X);
  if (s.positions.kind == PositionKind::kSinusoidal) {  // X = embeddings + PE, every batch
    MatrixOf<S> pe = rules::SinusoidalEncoding<S>(sh.T, sh.d_in);
    Store(pe);
    for (MatrixOf<S>& x : t.X) x += pe;
    StoreStack(t.X);
  }
  if (!st.tokens.empty()) {
    default_tokens_ = -1;
  } else if (default_tokens_ == sh.T) {
    st.tokens.swap(last_tokens);  // "x1".."xT" again: T strings not made anew on every draw
  } else {
    for (int64_t i = 0; i < sh.T; ++i) st.tokens.push_back("x" + std::to_string(i + 1));
    default_tokens_ = sh.T;
  }
  gen_after_input_ = gen;
}

// Q, K and V of a qkv input: given, or q = randn(B, T, d_k), k = randn(B, T, d_k),
// v = randn(B, T, d_v) in input.order.
template <typename S>
void Engine::InputQkv(const InputSpec& in, DrawSource& gen) {
  StageTensors<S>& t = Tensors<S>();
  const Shape& sh = stages_.shape;
  stages_.tokens = in.tokens;
  if (in.QkvGiven()) {
    t.Q = Written<S>(in.Q);
    t.K = Written<S>(in.K);
    t.V = Written<S>(in.V);
    return;
  }
  gen.Seed(in.seed);
  MatrixStackOf<S>* outs[3] = {&t.Q, &t.K, &t.V};
  for (Projection name : in.order) {
    MatrixStackOf<S>& out = *outs[static_cast<int>(name)];
    const int64_t d = name == Projection::kValue ? sh.d_v : sh.d_out;
    const std::vector<S> flat = gen.NormalOf<S>(sh.B * sh.T * d);
    out.clear();
    for (int64_t b = 0; b < sh.B; ++b) out.push_back(FromFlat(flat, b * sh.T * d, sh.T, d));
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] projections
// ---------------------------------------------------------------------------------------------

namespace {

// Whether every value of m is finite: x * 0 is +-0 for a finite x and nan for an inf or a nan,
// so the sum is 0 exactly when every x is finite, in one vectorised pass (Eigen's allFinite
// compares cell by cell).
template <typename M>
bool AllFinite(const M& m) {
  using S = typename M::Scalar;
  return (m.array() * S(0)).sum() == S(0);
}

// One draw of ProjectionDraws: a d_in x cols tensor from `init` into columns [first_col,
// first_col + cols) of W (and, for nn.Linear with bias, of `bias`; both already d_out wide).
template <typename S>
void DrawInto(ProjectionInit init, const WeightDraw& d, int64_t d_in, bool with_bias,
              DrawSource& gen, MatrixOf<S>& W, RowVectorOf<S>& bias) {
  auto cols = W.middleCols(d.first_col, d.cols);
  switch (init) {
    case ProjectionInit::kTorchRand:  // nn.Parameter(torch.rand(d_in, cols))
      cols = FromFlat(gen.UniformOf<S>(d_in * d.cols), 0, d_in, d.cols);
      break;
    case ProjectionInit::kRandn:  // torch.randn(d_in, cols)
      cols = FromFlat(gen.NormalOf<S>(d_in * d.cols), 0, d_in, d.cols);
      break;
    case ProjectionInit::kLinear: {  // nn.Linear(d_in, cols, bias): W = weight.T
      const LinearInitOf<S> lin = gen.torch().LinearOf<S>(d_in, d.cols, with_bias);
      cols = FromFlat(lin.weight, 0, d.cols, d_in).transpose();
      if (with_bias)
        bias.segment(d.first_col, d.cols) =
            Eigen::Map<const RowVectorOf<S>>(lin.bias.data(), d.cols);
      break;
    }
    default:
      break;  // identity and matrix draw nothing
  }
}

}  // namespace

template <typename S>
void Engine::ComputeProjections(const Scenario& s) {
  ++counts_.projections;
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  const ProjectionSpec& p = s.projections;
  DrawSource gen = gen_after_input_;
  const bool draws = ProjectionInitDraws(p.init);
  if (draws && p.seed) gen.Seed(*p.seed);
  for (auto& b : st.bias) b.resize(0);
  st.out_proj_W.resize(0, 0);
  st.out_proj_bias.resize(0);
  const bool qkv = s.input.source == InputSource::kQkv;  // Q, K, V come from the input
  for (int w = 0; w < 3 && !qkv; ++w) {
    if (p.init == ProjectionInit::kIdentity) st.W[w] = MatrixOf<S>::Identity(sh.d_in, sh.d_in);
    if (p.init == ProjectionInit::kMatrix) st.W[w] = Written<S>(p.W[w]);
    if (!draws) continue;
    // W_key and W_value are d_in x KV * dh with grouped K/V heads (GQA).
    const int64_t cols = w == 0 ? sh.d_out : w == 1 ? sh.KWidth() : sh.VWidth();
    st.W[w].resize(sh.d_in, cols);
    if (p.bias && p.init == ProjectionInit::kLinear) st.bias[w].resize(cols);
  }
  for (MatrixOf<S>& w : st.W)
    if (qkv) w.resize(0, 0);
  // The draws in the generator's order: whole matrices, or head by head (per_head).
  if (!qkv)
    for (const WeightDraw& d : ProjectionDraws(p, sh)) {
      const int w = static_cast<int>(d.name);
      DrawInto<S>(p.init, d, sh.d_in, st.bias[w].size() > 0, gen, st.W[w], st.bias[w]);
    }
  if (p.out_proj) {  // nn.Linear(d_out, d_out, bias=...), drawn after the three projections
    const LinearInitOf<S> lin = gen.torch().LinearOf<S>(sh.d_out, sh.d_out, p.out_proj_bias);
    st.out_proj_W = FromFlat(lin.weight, 0, sh.d_out, sh.d_out).transpose();
    if (p.out_proj_bias)
      st.out_proj_bias = Eigen::Map<const RowVectorOf<S>>(lin.bias.data(), sh.d_out);
  }
  gen_after_projections_ = gen;
  // Low precision: nn.Linear's (and the draws') float32 values stored in the dtype.
  for (int w = 0; w < 3; ++w) Store(st.W[w]), Store(st.bias[w]);
  Store(st.out_proj_W);
  Store(st.out_proj_bias);
  const std::vector<uint8_t> v_batch_finite =
      qkv ? std::vector<uint8_t>() : Project<S>(p.init == ProjectionInit::kIdentity);
  // projections.head_split: Q, K and V as their heads read them (the heads side by side).
  if (!qkv && sh.H > 1 && p.head_split != HeadSplit::kTranspose) {
    SplitStack(p.head_split, sh.dh, st.Q, false);
    SplitStack(p.head_split, sh.dh, st.K, false);
    SplitStack(p.head_split, sh.dh_v, st.V, false);
  }
  const bool rope = s.positions.kind == PositionKind::kRope;
  if (p.qk_norm && !(rope && p.qk_norm->after_rope)) NormalizeQk<S>(s, st.Q, st.K);
  ApplyRope<S>(s);
  if (p.qk_norm && rope && p.qk_norm->after_rope) NormalizeQk<S>(s, st.Q_rot, st.K_rot);
  var_k_pending_ = true;  // VarianceOfK, beside ComputeHeads' tasks
  FindFiniteV<S>(v_batch_finite);
  Packed<S>().v_current = false;
}

template <typename S>
void Engine::VarianceOfK(const Scenario& s) {
  // K.var() as the scenario's library computes it (variance.h): torch's unbiased float32 value
  // (inf above FLT_MAX), or NumPy's ddof = 0; the generated program's var_K = K.var().
  const StageTensors<S>& st = Tensors<S>();
  if constexpr (std::is_same_v<S, float>)
    stages_.var_K = StackVariance(st.K, VarianceKindOf(s.input.generator));
  else
    stages_.var_K = StackVarianceF64(st.K, VarianceKindOf(s.input.generator));
}

template <typename S>
std::vector<uint8_t> Engine::Project(bool identity) {
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  MatrixStackOf<S>* outs[3] = {&st.Q, &st.K, &st.V};
  if (identity) {  // Q, K, V = X, X, X: the program multiplies by nothing
    for (MatrixStackOf<S>* out : outs) *out = st.X;
    return {};
  }
  // Q = X @ W_query (+ b_query), and so on: the product first, then the bias, as
  // torch_scenario.py computes them (two roundings, not one addmm). Row blocks on all threads.
  for (int w = 0; w < 3; ++w) {  // K and V: KV * dh columns with grouped K/V heads
    outs[w]->resize(sh.B);
    for (MatrixOf<S>& y : *outs[w]) y.resize(sh.T, st.W[w].cols());
  }
  // Parts of at least 256 rows: Eigen's set-up of a 64-row product costs about as much as
  // the product. The parts depend on T only, so no thread count changes a sum.
  const int64_t rows = std::max<int64_t>(RowBlock(sh.T), 256);
  const int64_t blocks = (sh.T + rows - 1) / rows;
  std::vector<uint8_t> v_block_finite(static_cast<size_t>(sh.B * blocks), 0);
  ParallelFor(3 * sh.B * blocks, [&](int64_t task) {
    const int w = static_cast<int>(task / (sh.B * blocks));
    const int64_t b = task / blocks % sh.B, r0 = task % blocks * rows;
    const int64_t rb = std::min(rows, sh.T - r0);
    auto y = (*outs[w])[b].middleRows(r0, rb);
    MultiplyInto(numerics_.product, st.X[b].middleRows(r0, rb), st.W[w], y);
    Store(y);  // X @ W stored, then + bias stored again: two operations, as in PyTorch
    if (st.bias[w].size() > 0) y.rowwise() += st.bias[w], Store(y);
    if (w == 2) v_block_finite[static_cast<size_t>(task % (sh.B * blocks))] = AllFinite(y);
  });
  std::vector<uint8_t> batch_finite(static_cast<size_t>(sh.B), 1);
  for (int64_t i = 0; i < sh.B * blocks; ++i)
    if (!v_block_finite[static_cast<size_t>(i)]) batch_finite[static_cast<size_t>(i / blocks)] = 0;
  return batch_finite;
}

template <typename S>
void Engine::NormalizeQk(const Scenario& s, MatrixStackOf<S>& Q, MatrixStackOf<S>& K) {
  // projections.qk_norm: the norm computed in S (float32 in low precision) and stored, then the
  // scale as one more product, stored again (a separate q * 1.2, as nanochat writes it).
  const QkNormSpec& q = *s.projections.qk_norm;
  const S eps = static_cast<S>(QkNormEps(q, s.dtype));
  for (MatrixStackOf<S>* stack : {&Q, &K})
    for (MatrixOf<S>& m : *stack) {
      rules::QkNormRows<S>(q, eps, stages_.shape.dh, m);
      Store(m);
      if (q.scale != 1.0) m *= static_cast<S>(q.scale), Store(m);
    }
}

template <typename S>
void Engine::ApplyRope(const Scenario& s) {
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  st.Q_rot.clear();
  st.K_rot.clear();
  if (s.positions.kind != PositionKind::kRope) return;
  const rules::RopeTable<S> table = rules::RopeAngles<S>(s.positions, sh.T, sh.dh);
  // Q's H heads and K's KV heads (fewer with grouped K/V heads), each rotated alike.
  for (auto [from, to] : {std::pair{&st.Q, &st.Q_rot}, std::pair{&st.K, &st.K_rot}})
    for (const MatrixOf<S>& m : *from) {
      to->emplace_back(m.rows(), m.cols());
      rules::RopeRotate(table, s.positions.layout, m.cols() / sh.dh, sh.dh, m, to->back());
      Store(to->back());  // the rotation computed in float32, stored once
    }
}

namespace {

// The scores of batch b, head h with every position moved by `shift`, by one product order
// (Eigen's) whatever the shift, so that only the rotation differs between two shifts.
template <typename S>
MatrixOf<S> ShiftedScores(const PositionsSpec& p, const Shape& sh, const StageTensors<S>& t,
                          const rules::RopeTable<S>& table, int64_t b, int64_t h) {
  MatrixOf<S> q(sh.T, sh.d_out), k(sh.T, sh.KWidth());
  rules::RopeRotate(table, p.layout, sh.H, sh.dh, t.Q[b], q);
  rules::RopeRotate(table, p.layout, sh.Kv(), sh.dh, t.K[b], k);
  return q.middleCols(h * sh.dh, sh.dh) * k.middleCols(sh.KvHead(h) * sh.dh, sh.dh).transpose();
}

template <typename S>
double ShiftChange(const PositionsSpec& p, const Shape& sh, const StageTensors<S>& t,
                   int64_t shift) {
  const rules::RopeTable<S> at0 = rules::RopeAngles<S>(p, sh.T, sh.dh, 0);
  const rules::RopeTable<S> moved = rules::RopeAngles<S>(p, sh.T, sh.dh, shift);
  double largest = 0;
  for (int64_t b = 0; b < sh.B; ++b)
    for (int64_t h = 0; h < sh.H; ++h) {
      const MatrixOf<S> d =
          ShiftedScores(p, sh, t, moved, b, h) - ShiftedScores(p, sh, t, at0, b, h);
      for (Eigen::Index i = 0; i < d.size(); ++i)  // a nan (inf - inf) is not a change
        if (std::isfinite(d.data()[i])) largest = std::max(largest, std::fabs(double(d.data()[i])));
    }
  return largest;
}

}  // namespace

double RopeShiftLargestChange(const Scenario& s, const Stages& st, int64_t shift) {
  if (s.positions.kind != PositionKind::kRope || st.scores.empty()) return 0.0;
  if (st.f64) return ShiftChange<double>(s.positions, st.shape, *st.f64, shift);
  return ShiftChange<float>(s.positions, st.shape, st, shift);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] scores, logits, weights
// ---------------------------------------------------------------------------------------------

namespace {

// Rows [r0, r0 + rb) of T-wide stages in chunks that stay in the first-level data cache:
// f(first, count) for each chunk in order. head_task makes and normalises the logits a chunk at
// a time: 16 KB of them (4 rows of T = 1024 floats), half of a 32 KB cache; at least one row.
template <typename F>
void ForRowsInL1(int64_t T, int64_t r0, int64_t rb, const F& f) {
  const int64_t rows = std::max<int64_t>(1, 4096 / std::max<int64_t>(T, 1));
  for (int64_t i0 = r0; i0 < r0 + rb; i0 += rows) f(i0, std::min(rows, r0 + rb - i0));
}

// This thread's buffer for the scores of one row block (RowBlock(T) x T, 256 KB at T = 1024).
// The products of a block add into it (Eigen's kernel adds into its destination), so it is
// all +0 between blocks: the logits pass clears each chunk of rows right after reading it
// (lines just read, or just copied into the stage: in cache), instead of a pass over cold
// lines before the next product. `clean` is false from a product until its rows are cleared (a
// block cut short by an exception leaves it false, and the next block clears the whole buffer).
template <typename S>
struct ScoresScratch {
  MatrixOf<S> rows;
  bool clean = false;
  // The buffer for T (all +0).
  static ScoresScratch& ForThisThread(int64_t T) {
    thread_local ScoresScratch scratch;
    if (scratch.rows.cols() != T || !scratch.clean) scratch.rows.setZero(RowBlock(T), T);
    scratch.clean = false;  // the caller's product writes into it
    return scratch;
  }
};

// to[0, n) = from[0, n) with non-temporal stores: the lines go to memory without being read
// into the cache first (the scores stage is not read again in the run that writes it). Ends
// with a store fence, so that the stores are ordered before the task reports itself done.
template <typename S>
void StreamCopy(const S* from, S* to, int64_t n) {
  constexpr int64_t kLanes = 16 / static_cast<int64_t>(sizeof(S));
  int64_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(to + i) % 16 != 0; ++i) to[i] = from[i];
  for (; i + kLanes <= n; i += kLanes) {
    if constexpr (std::is_same_v<S, float>)
      _mm_stream_ps(to + i, _mm_loadu_ps(from + i));
    else
      _mm_stream_pd(to + i, _mm_loadu_pd(from + i));
  }
  for (; i < n; ++i) to[i] = from[i];
  _mm_sfence();
}

// `count` matrices of T x T (their values left as they are when the sizes already match).
template <typename S>
void SizeStack(MatrixStackOf<S>& stack, size_t count, int64_t T) {
  stack.resize(count);
  for (MatrixOf<S>& m : stack) m.resize(T, T);
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

}  // namespace

void Engine::BuildMask(const Scenario& s) {
  Stages& st = stages_;
  const int64_t T = st.shape.T;
  // None and causal masks only change with their kind (or T); a temperature drag must not
  // rebuild them. The other kinds have settings of their own and are rebuilt (AllowedCells).
  const bool fixed = s.mask.kind == MaskKind::kNone || s.mask.kind == MaskKind::kCausal;
  if (st.mask.rows() == T && mask_kind_ == s.mask.kind && fixed) return;
  st.mask = AllowedCells(s.mask, T);
  mask_kind_ = s.mask.kind;
}

namespace {

// The Q and K the scores multiply: `scaled` (scale_at "q_and_k": Engine::ScaleQk's copies)
// when it is not empty, else the rotated Q and K under RoPE (positions "rope"), else Q and K.
template <typename S>
const MatrixStackOf<S>& ScoredQueries(const StageTensors<S>& st, const MatrixStackOf<S>& scaled) {
  return !scaled.empty() ? scaled : st.Q_rot.empty() ? st.Q : st.Q_rot;
}
template <typename S>
const MatrixStackOf<S>& ScoredKeys(const StageTensors<S>& st, const MatrixStackOf<S>& scaled) {
  return !scaled.empty() ? scaled : st.K_rot.empty() ? st.K : st.K_rot;
}

// Index of batch entry b's K/V head for query head h (GQA's grouping) among B * KV.
size_t KvIndex(const Shape& sh, int64_t b, int64_t h) {
  return static_cast<size_t>(b * sh.Kv() + sh.KvHead(h));
}

}  // namespace

template <typename S>
void Engine::ScaleQk(const Scenario& s) {
  PackedHeads<S>& packed = Packed<S>();
  packed.q_scaled.clear(), packed.k_scaled.clear();
  if (s.scaling.scale_at != ScaleAt::kQAndK) return;
  // SDPA's math path: query * sqrt(scale), key^T * sqrt(scale), each product rounded and
  // stored in the dtype, then the product of the two (ScoreRows).
  const StageTensors<S>& st = Tensors<S>();
  const QkScale f = QkScaleOf(s.scaling, stages_.shape.dh);
  const MatrixStackOf<S> none;
  for (const MatrixOf<S>& m : ScoredQueries(st, none))
    packed.q_scaled.push_back(rules::ScaledOperand(m, f.q)), Store(packed.q_scaled.back());
  for (const MatrixOf<S>& m : ScoredKeys(st, none))
    packed.k_scaled.push_back(rules::ScaledOperand(m, f.k)), Store(packed.k_scaled.back());
}

template <typename S>
void Engine::PackHeads(bool k, bool v) {
  PackedHeads<S>& packed = Packed<S>();
  if (numerics_.product != Numerics::Product::kEigen) {  // NumPy's loop and netlib: no packing
    packed.k.clear(), packed.v.clear(), packed.v_current = false;
    return;
  }
  v = v && !packed.v_current;
  if (!k && !v) return;
  const StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  const size_t count = static_cast<size_t>(sh.B * sh.Kv());
  // The operand each product reads: K_h^T (d_k x T, the transpose of K's head columns; the
  // rotated K under RoPE) and V_h (T x d_v of the head).
  const MatrixStackOf<S>& keys = ScoredKeys(st, packed.k_scaled);
  const auto operand = [&](bool of_k, size_t i) {
    const int64_t b = static_cast<int64_t>(i) / sh.Kv(), kvh = static_cast<int64_t>(i) % sh.Kv();
    if (of_k)
      return kernels::View<const S>{keys[b].data() + kvh * sh.dh, sh.dh, sh.T,
                                    keys[b].outerStride(), false};
    return kernels::View<const S>{st.V[b].data() + kvh * sh.dh_v, sh.T, sh.dh_v,
                                  st.V[b].outerStride(), true};
  };
  if (k) packed.k.resize(count);
  if (v) packed.v.resize(count);
  for (size_t i = 0; i < count; ++i) {
    if (k) packed.k[i].resize(sh.T * sh.dh);
    if (v) packed.v[i].resize(sh.T * sh.dh_v);
  }
  // Each operand in four slices of T (the packing is a copy: any split packs the same): K^T's
  // columns, V's rows. A slice then reads the rows of K or V that one projection task made
  // (Project's parts of 256 rows, at T = 1024), dealt to the same thread in every run.
  constexpr int64_t kSlices = 4;
  const int64_t per_operand = static_cast<int64_t>(count) * kSlices;
  const int64_t tasks = (k ? per_operand : 0) + (v ? per_operand : 0);
  ParallelFor(tasks, [&](int64_t task) {
    const bool of_k = k && task < per_operand;
    const int64_t t = of_k || !k ? task : task - per_operand;
    const size_t i = static_cast<size_t>(t / kSlices);
    const int64_t slice = t % kSlices;
    const kernels::View<const S> b = operand(of_k, i);
    S* into = (of_k ? packed.k : packed.v)[i].data();
    const int64_t t0 = sh.T * slice / kSlices, t1 = sh.T * (slice + 1) / kSlices;
    if (of_k)
      kernels::PackRight(b, 0, b.rows, t0, t1, into);
    else
      kernels::PackRight(b, t0, t1, 0, b.cols, into);
  });
  if (v) packed.v_current = true;
}

template <typename S>
void Engine::ComputeHeads(const Scenario& s, int from, bool with_context) {
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  const int64_t T = sh.T;
  const size_t count = static_cast<size_t>(sh.B * sh.H);
  // The mask kind the logit and weight rows see: none when the normalization masks the
  // weights itself (softmax_then_mask reads the mask matrix row by row; its masked weights are
  // then +0, or the row is nan throughout, so the causal skip of ContextRows stays exact).
  const MaskKind kind = MaskAppliesToLogits(s.normalization) ? s.mask.kind : MaskKind::kNone;
  // mask.fill: a finite value (finfo_min, -1e9, -1e4 stored in the dtype) replaces the masked
  // logits' -inf, and the weights then normalise whole rows as PyTorch's softmax does (the
  // masked cells' exp is 0 unless the fill comes within float range of the row's maximum).
  const double fill_value = MaskFillValue(s.mask.fill, s.dtype);
  const bool finite_fill = kind != MaskKind::kNone && std::isfinite(fill_value);
  const MaskKind weight_kind = finite_fill ? MaskKind::kNone : kind;
  const TailKey key{kind, T, count, finite_fill}, weight_key{weight_kind, T, count, false};
  // scaling.softmax_dtype "float32": the weights computed and kept in float32 (not stored).
  const bool weights_f32 = s.scaling.softmax_dtype == SoftmaxDtype::kFloat32;
  const bool do_scores = from <= 2, do_logits = from <= 3;
  if (do_scores) ++counts_.scores, SizeStack<S>(st.scores, count, T);
  if (do_logits) ++counts_.logits, SizeStack<S>(st.logits, count, T), BuildMask(s);
  ++counts_.weights;
  SizeStack<S>(st.weights, count, T);
  // gpt-oss's sink: one logit per head (scaling.sink), its share of each row kept in st.sink.
  const bool with_sink = !s.scaling.sink.empty();
  const std::vector<S> sinks = rules::HeadSinks<S>(s, sh.H);
  st.sink.clear();
  if (with_sink) st.sink.assign(count, MatrixOf<S>::Zero(T, 1));
  if (with_context) PrepareContext<S>();
  const rules::LogitScaling<S> scaling = rules::LogitScalingOf<S>(s, sh.dh);
  const std::vector<S> slopes = rules::HeadSlopes<S>(s, sh.H);  // ALiBi's slope of each head
  const bool logit_tails = logits_tail_ != key, weight_tails = weights_tail_ != weight_key;
  const bool by_columns = s.normalization == Normalization::kSoftmaxDimQuery;
  const RowBlocks blocks(T);
  const MaskMatrix& mask = stages_.mask;
  block_zero_tail_.assign(count * blocks.blocks, 0);
  if (do_scores) ScaleQk<S>(s);
  PackHeads<S>(do_scores, with_context && !by_columns);
  const auto head_task = [&](int64_t task) {
    const size_t m = blocks.Matrix(task);
    const int64_t r0 = blocks.First(task), rb = blocks.Count(task);
    const int64_t h = static_cast<int64_t>(m) % sh.H;
    // New scores are read from this thread's ScoresScratch, where ScoreRows made them.
    ScoresScratch<S>* scratch = do_scores ? &ScoresScratch<S>::ForThisThread(T) : nullptr;
    if (scratch) ScoreRows<S>(m, r0, rb, scratch->rows.data());
    const S* scores_rows = scratch ? scratch->rows.data() : st.scores[m].data() + r0 * T;
    // The logits and the weights a few rows at a time, so that the weights read rows of logits
    // still in the core's first-level cache (a whole block of them is not).
    bool zero_tail = true;
    ForRowsInL1(T, r0, rb, [&](int64_t i0, int64_t n) {
      if (do_logits) {
        kernels::LogitRows<S>(scores_rows + (i0 - r0) * T, mask, kind,
                              rules::ForHead(scaling, slopes, h), i0, n, logit_tails, st.logits[m]);
        if (finite_fill) rules::FillMasked(mask, i0, n, static_cast<S>(fill_value), st.logits[m]);
        Store(st.logits[m].middleRows(i0, n));
      }
      if (scratch) scratch->rows.middleRows(i0 - r0, n).setZero();  // read: cleared in cache
      if (by_columns) return;  // softmax over dim=-2 needs every row: done below
      zero_tail = kernels::WeightRows<S>(s.normalization, numerics_, st.logits[m], mask,
                                         weight_kind, i0, n, weight_tails, st.weights[m],
                                         with_sink ? &sinks[static_cast<size_t>(h)] : nullptr,
                                         with_sink ? &st.sink[m] : nullptr, s.scaling.sink_form) &&
                  zero_tail;
    });
    if (scratch) scratch->clean = true;
    if (by_columns) return;
    // A finite fill may leave the masked cells a share: the causal skip is off (ContextRows).
    block_zero_tail_[m * blocks.blocks + blocks.Block(task)] = zero_tail && !finite_fill;
    if (s.mask.masked_rows == MaskedRows::kZero) rules::ZeroMaskedRows(mask, r0, rb, st.weights[m]);
    if (!weights_f32) Store(st.weights[m].middleRows(r0, rb));
    if (with_sink && !weights_f32) Store(st.sink[m].middleRows(r0, rb));
    if (with_context) ContextRows<S>(st.weights, m, r0, rb, blocks.Block(task));
  };
  // A new K's variance is one more task, the last, so that the head tasks keep their indices
  // (and threads: ParallelFor deals the same index to the same thread) in every run.
  const int64_t heads = static_cast<int64_t>(count) * blocks.blocks;
  ParallelFor(heads + (var_k_pending_ ? 1 : 0), [&](int64_t task) {
    if (task == heads) return VarianceOfK<S>(s);
    head_task(task);
  });
  var_k_pending_ = false;
  if (do_logits) logits_tail_ = key;
  if (by_columns) WeightsByColumns<S>(s, with_context);
  const bool zero_tails = std::all_of(block_zero_tail_.begin(), block_zero_tail_.end(),
                                      [](uint8_t z) { return z != 0; });
  weights_tail_ = zero_tails ? std::optional<TailKey>(weight_key) : std::nullopt;
  if (with_context) FinishContext<S>();
}

template <typename S>
void Engine::ScoreRows(size_t m, int64_t r0, int64_t rb, S* into) {
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  const int64_t T = sh.T;
  const int64_t b = static_cast<int64_t>(m) / sh.H, h = static_cast<int64_t>(m) % sh.H;
  // scores = q @ k.transpose(-2, -1) for head h's columns; K's head is the one query head h
  // shares with its group (repeat_interleave over the K/V heads, GQA), h itself without.
  // RoPE: the rotated Q and K. Low precision: the rows stored in the dtype (Store).
  const PackedHeads<S>& packed = Packed<S>();
  const MatrixStackOf<S>& q = ScoredQueries(st, packed.q_scaled);
  const MatrixStackOf<S>& k = ScoredKeys(st, packed.k_scaled);
  Eigen::Map<MatrixOf<S>> out(into, rb, T);
  MultiplyInto(numerics_.product, q[b].block(r0, h * sh.dh, rb, sh.dh),
               k[b].middleCols(sh.KvHead(h) * sh.dh, sh.dh).transpose(), out,
               packed.k.empty() ? nullptr : packed.k[KvIndex(sh, b, h)].data(), sh.dh, true);
  Store(out);
  // Non-temporal stores: the stage's lines are not read into the cache before they are written.
  StreamCopy(into, st.scores[m].data() + r0 * T, rb * T);
}

// softmax_dim_query (bug-softmax-dim): every matrix's weights column by column once all its
// logits are made, then masked_rows and, fused, the context (no causal skip: block_zero_tail_
// stays 0, the columns' zeros are not the rows').
template <typename S>
void Engine::WeightsByColumns(const Scenario& s, bool with_context) {
  StageTensors<S>& st = Tensors<S>();
  const MaskMatrix& mask = stages_.mask;
  const int64_t T = stages_.shape.T;
  ParallelFor(static_cast<int64_t>(st.weights.size()), [&](int64_t m) {
    rules::ColumnSoftmax(st.logits[m], st.weights[m]);
    if (s.mask.masked_rows == MaskedRows::kZero) rules::ZeroMaskedRows(mask, 0, T, st.weights[m]);
    if (s.scaling.softmax_dtype != SoftmaxDtype::kFloat32) Store(st.weights[m]);
  });
  if (!with_context) return;
  PackHeads<S>(false, true);
  const RowBlocks blocks(T);
  ParallelFor(static_cast<int64_t>(st.weights.size()) * blocks.blocks, [&](int64_t task) {
    ContextRows<S>(st.weights, blocks.Matrix(task), blocks.First(task), blocks.Count(task),
                   blocks.Block(task));
  });
}

// ---------------------------------------------------------------------------------------------
// [SECTION] dropout and context
// ---------------------------------------------------------------------------------------------

template <typename S>
void Engine::ComputeDropout(const Scenario& s) {
  ++counts_.dropout;
  StageTensors<S>& st = Tensors<S>();
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
  for (int64_t m : DropoutDrawOrder(s.projections, stages_.shape)) {
    MatrixOf<S>& w = st.weights_dropped[static_cast<size_t>(m)];
    gen.torch().DropoutOf(w.data(), w.size(), s.dropout.p);
  }
  if (s.scaling.softmax_dtype != SoftmaxDtype::kFloat32) StoreStack(st.weights_dropped);
}

template <typename S>
void Engine::PrepareContext() {
  ++counts_.context;
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  st.context.resize(sh.B);
  for (MatrixOf<S>& ctx : st.context) ctx.resize(sh.T, sh.d_v);
}

template <typename S>
void Engine::FindFiniteV(const std::vector<uint8_t>& batch_finite) {
  const StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  // 0 * inf is nan in PyTorch's full product: V must be finite for the causal skip to be exact.
  // A batch entry whose V is all finite (Project checked it) has every head finite.
  v_finite_.resize(sh.B * sh.H);
  for (int64_t b = 0; b < sh.B; ++b) {
    const bool known =
        static_cast<size_t>(b) < batch_finite.size() && batch_finite[static_cast<size_t>(b)] != 0;
    for (int64_t h = 0; h < sh.H; ++h)
      v_finite_[b * sh.H + h] =
          known || AllFinite(st.V[b].middleCols(sh.KvHead(h) * sh.dh_v, sh.dh_v));
  }
}

template <typename S>
void Engine::ContextRows(const MatrixStackOf<S>& used, size_t m, int64_t r0, int64_t rb,
                         int64_t block) {
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  const int64_t b = static_cast<int64_t>(m) / sh.H, h = static_cast<int64_t>(m) % sh.H;
  const MatrixOf<S>& w = used[m];
  const auto v = st.V[b].middleCols(sh.KvHead(h) * sh.dh_v, sh.dh_v);  // its K/V head's V
  auto out = st.context[b].block(r0, h * sh.dh_v, rb, sh.dh_v);
  // Under a causal mask the weights beyond each row's diagonal are exactly +0 when its
  // normaliser is finite and positive (exp(-inf) = 0): rows [r0, r0 + rb) then meet only keys
  // [0, r0 + rb), and the product skips the zero block above the diagonal (exact in either
  // product order: the skipped terms are +0 or -0, and no partial sum is -0).
  const RowBlocks blocks(sh.T);
  const bool lower = mask_kind_ == MaskKind::kCausal && v_finite_[m] &&
                     block_zero_tail_[m * blocks.blocks + block];
  const PackedHeads<S>& packed = Packed<S>();
  const S* v_packed = packed.v_current ? packed.v[KvIndex(sh, b, h)].data() : nullptr;
  if (lower)
    MultiplyInto(numerics_.product, w.block(r0, 0, rb, r0 + rb), v.topRows(r0 + rb), out, v_packed,
                 sh.T);
  else
    MultiplyInto(numerics_.product, w.middleRows(r0, rb), v, out, v_packed, sh.T);
  Store(out);
}

template <typename S>
void Engine::FinishContext() {
  StageTensors<S>& st = Tensors<S>();
  const Shape& sh = stages_.shape;
  // projections.head_split "view_no_transpose": the heads merged back as the buggy code does,
  // context.view(B, T, d_v) with no transpose.
  if (sh.H > 1) SplitStack(head_split_, sh.dh_v, st.context, true);
  if (st.out_proj_W.size() == 0) return;
  // out_proj(context) = context @ W + bias (nn.Linear: Eigen's product in either dtype), row
  // block by row block (rows are independent).
  const int64_t rows = RowBlock(sh.T), blocks = (sh.T + rows - 1) / rows;
  ParallelFor(sh.B * blocks, [&](int64_t task) {
    const int64_t b = task / blocks, r0 = task % blocks * rows;
    auto ctx = st.context[b].middleRows(r0, std::min(rows, sh.T - r0));
    MatrixOf<S> y(ctx.rows(), st.out_proj_W.cols());
    MultiplyInto(Numerics::Product::kEigen, ctx, st.out_proj_W, y);
    Store(y);
    if (st.out_proj_bias.size() > 0) {  // out_proj.bias false: the product alone
      y.rowwise() += st.out_proj_bias;
      Store(y);
    }
    ctx = y;
  });
}

template <typename S>
void Engine::ComputeContext() {
  StageTensors<S>& st = Tensors<S>();
  const MatrixStackOf<S>& used = st.weights_dropped.empty() ? st.weights : st.weights_dropped;
  PrepareContext<S>();
  PackHeads<S>(false, true);
  const RowBlocks blocks(stages_.shape.T);
  ParallelFor(static_cast<int64_t>(used.size()) * blocks.blocks, [&](int64_t task) {
    ContextRows<S>(used, blocks.Matrix(task), blocks.First(task), blocks.Count(task),
                   blocks.Block(task));
  });
  FinishContext<S>();
}

template void Engine::Compute<float>(const Scenario&, int);
template void Engine::Compute<double>(const Scenario&, int);

}  // namespace attnlab
