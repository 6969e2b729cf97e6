// pipeline_f64.cpp: the pipeline in float64 (see pipeline_f64.h).
//
// [SECTION] torch's float64 draws
// [SECTION] input and projections
// [SECTION] scores, logits, weights, dropout, context
// [SECTION] the hook: rounding into the float stages
#include "attnlab/pipeline_f64.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attnlab/stats.h"
#include "attnlab/text.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] torch's float64 draws
// ---------------------------------------------------------------------------------------------

TorchGeneratorF64::TorchGeneratorF64(NormalKernel kernel) : kernel_(kernel) {
  Seed(TorchGenerator::kDefaultSeed);
}

void TorchGeneratorF64::Seed(uint64_t seed) {
  engine_.seed(static_cast<uint32_t>(seed & 0xFFFFFFFFu));
  cached_normal_.reset();
}

double TorchGeneratorF64::U53() {  // uniform_real_distribution<double>: random64()'s low 53 bits
  const uint64_t hi = static_cast<uint32_t>(engine_());
  const uint64_t lo = static_cast<uint32_t>(engine_());
  constexpr uint64_t kMask53 = (uint64_t{1} << 53) - 1;
  return static_cast<double>(((hi << 32) | lo) & kMask53) * (1.0 / 9007199254740992.0);
}

double TorchGeneratorF64::NormalScalar() {  // normal_distribution<double>, as rng.cpp §5A
  if (cached_normal_) {
    const double z = *cached_normal_;
    cached_normal_.reset();
    return z;
  }
  const double u1 = U53();
  const double u2 = U53();
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * M_PI * u1;
  cached_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

std::vector<double> TorchGeneratorF64::Normal(int64_t n) {
  std::vector<double> d(static_cast<size_t>(n));
  if (n < 16) {
    for (double& v : d) v = NormalScalar();
    return d;
  }
  // normal_fill<double>: n uniforms, Box-Muller on blocks of 16 (element j the radius, j + 8 the
  // angle), the tail redrawn as one more block over the last 16 elements.
  const auto block = [](double* b) {
    for (int j = 0; j < 8; ++j) {
      const double radius = std::sqrt(-2.0 * std::log(1.0 - b[j]));
      const double theta = 2.0 * M_PI * b[j + 8];
      b[j] = radius * std::cos(theta);
      b[j + 8] = radius * std::sin(theta);
    }
  };
  for (double& v : d) v = U53();
  for (int64_t k = 0; k + 16 <= n; k += 16) block(d.data() + k);
  if (n % 16 != 0) {
    double* tail = d.data() + (n - 16);
    for (int i = 0; i < 16; ++i) tail[i] = U53();
    block(tail);
  }
  return d;
}

std::vector<double> TorchGeneratorF64::Uniform(int64_t n, double low, double high) {
  const double width = high - low;
  std::vector<double> out(static_cast<size_t>(n));
  for (double& v : out)
    v = kernel_ == NormalKernel::kAvx2 ? std::fma(U53(), width, low) : U53() * width + low;
  return out;
}

TorchGeneratorF64::LinearInit TorchGeneratorF64::Linear(int64_t in_features,
                                                        int64_t out_features, bool bias) {
  // kaiming_uniform_(a=sqrt(5)) step by step in Python doubles, as TorchGenerator::Linear.
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double bound = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(in_features)));
  LinearInit init;
  init.weight = Uniform(out_features * in_features, -bound, bound);
  if (bias) {
    const double bb = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init.bias = Uniform(out_features, -bb, bb);
  }
  return init;
}

void TorchGeneratorF64::Dropout(double* x, int64_t n, double p) {
  if (!(p >= 0.0 && p < 1.0)) throw std::invalid_argument("dropout: p must be in [0, 1)");
  if (p == 0.0) return;
  const double keep = 1.0 - p;  // bernoulli_(1 - p), then noise / (1 - p), then x * noise
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * ((U53() < keep ? 1.0 : 0.0) / keep);
}

double WrittenAsDouble(float v) {
  if (!std::isfinite(v)) return v;
  const std::string text = ShortestFloat(v);
  double d = 0.0;
  std::from_chars(text.data(), text.data() + text.size(), d);
  return d;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] input and projections
// ---------------------------------------------------------------------------------------------
namespace {

// The scenario's generator in float64.
struct DrawsF64 {
  Generator kind;
  TorchGeneratorF64 torch;
  NumpyGenerator numpy;
  void Seed(uint64_t s) { kind == Generator::kNumpy ? numpy.Seed(s) : torch.Seed(s); }
  std::vector<double> Normal(int64_t n) {
    return kind == Generator::kNumpy ? numpy.Randn(n) : torch.Normal(n);
  }
  std::vector<double> Uniform(int64_t n) {
    return kind == Generator::kNumpy ? numpy.Rand(n) : torch.Uniform(n);
  }
};

// a @ b as the scenario's float64 program computes it. NumPy: as Debian's NumPy does with its
// default reference BLAS (netlib dgemm, libblas3) or its own loop where BLAS does not apply,
// both summing each element over the inner index from 0 upward, one rounding per product and
// per addition (-ffp-contract=off keeps them apart): bit for bit, checked on the NumPy
// notebook's np.matmul(q, k.T). PyTorch: Eigen's product (its BLAS order is not reproduced).
MatrixD Product(bool numpy, const MatrixD& a, const MatrixD& b) {
  if (!numpy) return a * b;
  MatrixD c = MatrixD::Zero(a.rows(), b.cols());
  const int64_t n = b.cols();
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    double* ci = c.data() + i * n;
    for (Eigen::Index l = 0; l < a.cols(); ++l) {
      const double x = a(i, l);
      const double* bl = b.data() + l * n;
      for (int64_t j = 0; j < n; ++j) ci[j] = ci[j] + x * bl[j];
    }
  }
  return c;
}

MatrixD FromFlat(const std::vector<double>& v, int64_t offset, int64_t rows, int64_t cols) {
  return Eigen::Map<const MatrixD>(v.data() + offset, rows, cols);
}

MatrixD Written(const Matrix& m) { return m.unaryExpr(&WrittenAsDouble); }

MatrixStackD Written(const MatrixStack& s) {
  MatrixStackD out;
  for (const Matrix& m : s) out.push_back(Written(m));
  return out;
}

MatrixStackD DrawStack(DrawsF64& g, int64_t B, int64_t T, int64_t d) {
  const std::vector<double> flat = g.Normal(B * T * d);
  MatrixStackD out;
  for (int64_t b = 0; b < B; ++b) out.push_back(FromFlat(flat, b * T * d, T, d));
  return out;
}

void InputF64(const Scenario& s, const Stages& st, DrawsF64& g, StagesF64& out) {
  const Shape& sh = st.shape;
  const InputSpec& in = s.input;
  switch (in.source) {
    case InputSource::kMatrix:
      out.X = Written(in.values);
      break;
    case InputSource::kText: {  // nn.Embedding(V, d_in, dtype=torch.float64), rows of the ids
      g.Seed(in.seed);
      const std::vector<double> table = g.torch.Normal(sh.vocab * sh.d_in);
      MatrixD x(sh.T, sh.d_in);
      for (int64_t t = 0; t < sh.T; ++t)
        x.row(t) = FromFlat(table, st.token_ids[t] * sh.d_in, 1, sh.d_in);
      out.X.push_back(std::move(x));
      break;
    }
    case InputSource::kRandn:
      g.Seed(in.seed);
      out.X = DrawStack(g, sh.B, sh.T, sh.d_in);
      break;
    case InputSource::kQkv:
      if (in.QkvGiven()) {
        out.Q = Written(in.Q);
        out.K = Written(in.K);
        out.V = Written(in.V);
        break;
      }
      g.Seed(in.seed);
      for (Projection name : in.order) {
        MatrixStackD* dst[3] = {&out.Q, &out.K, &out.V};
        const int64_t d = name == Projection::kValue ? sh.d_v : sh.d_out;  // V: d_v wide
        *dst[static_cast<int>(name)] = DrawStack(g, sh.B, sh.T, d);
      }
      break;
  }
}

// One draw of ProjectionDraws into columns [first_col, first_col + cols) of w (and of bias,
// for nn.Linear with bias; both already d_out wide), as DrawInto in pipeline.cpp.
void DrawIntoF64(ProjectionInit init, const WeightDraw& d, int64_t d_in, bool with_bias,
                 DrawsF64& g, MatrixD& w, RowVectorD& bias) {
  auto cols = w.middleCols(d.first_col, d.cols);
  switch (init) {
    case ProjectionInit::kTorchRand:
      cols = FromFlat(g.Uniform(d_in * d.cols), 0, d_in, d.cols);
      break;
    case ProjectionInit::kRandn:
      cols = FromFlat(g.Normal(d_in * d.cols), 0, d_in, d.cols);
      break;
    case ProjectionInit::kLinear: {
      const TorchGeneratorF64::LinearInit lin = g.torch.Linear(d_in, d.cols, with_bias);
      cols = FromFlat(lin.weight, 0, d.cols, d_in).transpose();
      if (with_bias)
        bias.segment(d.first_col, d.cols) = Eigen::Map<const RowVectorD>(lin.bias.data(), d.cols);
      break;
    }
    default:
      break;  // identity and matrix draw nothing
  }
}

void ProjectionsF64(const Scenario& s, const Shape& sh, DrawsF64& g, StagesF64& out) {
  const ProjectionSpec& p = s.projections;
  if (s.input.source == InputSource::kQkv) return;
  const bool draws = ProjectionInitDraws(p.init);
  if (draws && p.seed) g.Seed(*p.seed);
  for (int w = 0; w < 3; ++w) {
    if (p.init == ProjectionInit::kIdentity) out.W[w] = MatrixD::Identity(sh.d_in, sh.d_in);
    if (p.init == ProjectionInit::kMatrix) out.W[w] = Written(p.W[w]);
    if (!draws) continue;
    out.W[w].resize(sh.d_in, sh.d_out);
    if (p.bias && p.init == ProjectionInit::kLinear) out.bias[w].resize(sh.d_out);
  }
  // The draws in the generator's order: whole matrices, or head by head (per_head).
  for (const WeightDraw& d : ProjectionDraws(p, sh)) {
    const int w = static_cast<int>(d.name);
    DrawIntoF64(p.init, d, sh.d_in, out.bias[w].size() > 0, g, out.W[w], out.bias[w]);
  }
  if (p.out_proj) {
    const TorchGeneratorF64::LinearInit lin = g.torch.Linear(sh.d_out, sh.d_out, true);
    out.out_proj_W = FromFlat(lin.weight, 0, sh.d_out, sh.d_out).transpose();
    out.out_proj_bias = FromFlat(lin.bias, 0, 1, sh.d_out);
  }
  MatrixStackD* qkv[3] = {&out.Q, &out.K, &out.V};
  const bool numpy = s.input.generator == Generator::kNumpy;
  for (int w = 0; w < 3; ++w)
    for (int64_t b = 0; b < sh.B; ++b) {
      // identity: Q, K, V = X, X, X as the program writes it (no product to round)
      MatrixD y = p.init == ProjectionInit::kIdentity ? out.X[b]
                                                      : Product(numpy, out.X[b], out.W[w]);
      if (out.bias[w].size() > 0) y.rowwise() += out.bias[w];
      qkv[w]->push_back(std::move(y));
    }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] scores, logits, weights, dropout, context
// ---------------------------------------------------------------------------------------------

// One row of weights from one row of logits z (masked cells -inf), as PyTorch's formulas
// (pipeline.h) compute them over the whole row; NumPy's program divides by the sum where torch's
// softmax multiplies by its reciprocal.
void NormalizeRowF64(const Scenario& s, const double* z, const uint8_t* allowed, int64_t T,
                     double* w) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const bool numpy = s.input.generator == Generator::kNumpy;
  double sum = 0.0;
  switch (s.normalization) {
    case Normalization::kSoftmax: {
      double mx = -kInf;
      for (int64_t j = 0; j < T; ++j) mx = std::max(mx, z[j]);
      for (int64_t j = 0; j < T; ++j) sum += w[j] = std::exp(z[j] - mx);
      const double inv = 1.0 / sum;
      for (int64_t j = 0; j < T; ++j) w[j] = numpy ? w[j] / sum : w[j] * inv;
      return;
    }
    case Normalization::kSoftmaxNaive:
      for (int64_t j = 0; j < T; ++j) sum += w[j] = std::exp(z[j]);
      break;
    case Normalization::kSum:
      for (int64_t j = 0; j < T; ++j) sum += w[j] = allowed[j] ? z[j] : 0.0;
      break;
    case Normalization::kMean:
      for (int64_t j = 0; j < T; ++j) sum += w[j] = allowed[j] ? 1.0 : 0.0;
      break;
  }
  for (int64_t j = 0; j < T; ++j) w[j] /= sum;
}

void AttentionF64(const Scenario& s, const Stages& st, StagesF64& out) {
  const Shape& sh = st.shape;
  const int64_t T = sh.T;
  const double div = std::sqrt(static_cast<double>(sh.dh));
  const double mult = s.scaling.multiplier;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const bool numpy = s.input.generator == Generator::kNumpy;
  for (int64_t b = 0; b < sh.B; ++b)
    for (int64_t h = 0; h < sh.H; ++h) {
      const MatrixD q = out.Q[b].middleCols(h * sh.dh, sh.dh);
      const MatrixD k_t = out.K[b].middleCols(h * sh.dh, sh.dh).transpose();
      MatrixD sc = Product(numpy, q, k_t);
      MatrixD lg = sc;
      if (mult != 1.0) lg *= mult;
      if (s.scaling.sqrt_dk) lg /= div;
      MatrixD w(T, T);
      for (int64_t i = 0; i < T; ++i) {
        for (int64_t j = 0; j < T; ++j)
          if (!st.mask(i, j)) lg(i, j) = neg_inf;
        NormalizeRowF64(s, lg.data() + i * T, st.mask.data() + i * T, T, w.data() + i * T);
      }
      out.scores.push_back(std::move(sc));
      out.logits.push_back(std::move(lg));
      out.weights.push_back(std::move(w));
    }
}

void ContextF64(const Scenario& s, const Shape& sh, DrawsF64& g, StagesF64& out) {
  if (s.dropout.p > 0) {
    if (s.dropout.seed) g.Seed(*s.dropout.seed);
    out.weights_dropped = out.weights;
    for (int64_t m : DropoutDrawOrder(s.projections, sh)) {  // head by head for per_head
      MatrixD& w = out.weights_dropped[static_cast<size_t>(m)];
      g.torch.Dropout(w.data(), w.size(), s.dropout.p);
    }
  }
  const MatrixStackD& used = out.weights_dropped.empty() ? out.weights : out.weights_dropped;
  for (int64_t b = 0; b < sh.B; ++b) {
    MatrixD ctx(sh.T, sh.d_v);  // head h fills its dh_v columns
    for (int64_t h = 0; h < sh.H; ++h)
      ctx.middleCols(h * sh.dh_v, sh.dh_v) =
          Product(s.input.generator == Generator::kNumpy, used[b * sh.H + h],
                  out.V[b].middleCols(h * sh.dh_v, sh.dh_v));
    if (out.out_proj_W.size() > 0) {
      MatrixD y = ctx * out.out_proj_W;
      y.rowwise() += out.out_proj_bias;
      ctx = std::move(y);
    }
    out.context.push_back(std::move(ctx));
  }
}

}  // namespace

StagesF64 RunFloat64(const Scenario& s, const Stages& st) {
  StagesF64 out;
  DrawsF64 g{s.input.generator, TorchGeneratorF64(), NumpyGenerator()};
  InputF64(s, st, g, out);
  ProjectionsF64(s, st.shape, g, out);
  AttentionF64(s, st, out);
  ContextF64(s, st.shape, g, out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] the hook
// ---------------------------------------------------------------------------------------------
namespace {

void Round(const MatrixStackD& from, MatrixStack& to) {
  to.resize(from.size());
  for (size_t i = 0; i < from.size(); ++i) to[i] = from[i].cast<float>();
}

}  // namespace

void ComputeFloat64(const Scenario& s, Stages& st) {
  if (s.dtype != Dtype::kFloat64) {
    st.f64.reset();
    return;
  }
  auto f = std::make_shared<StagesF64>(RunFloat64(s, st));
  Round(f->X, st.X);
  for (int w = 0; w < 3; ++w) {
    if (f->W[w].size() > 0) st.W[w] = f->W[w].cast<float>();
    if (f->bias[w].size() > 0) st.bias[w] = f->bias[w].cast<float>();
  }
  if (f->out_proj_W.size() > 0) {
    st.out_proj_W = f->out_proj_W.cast<float>();
    st.out_proj_bias = f->out_proj_bias.cast<float>();
  }
  Round(f->Q, st.Q);
  Round(f->K, st.K);
  Round(f->V, st.V);
  Round(f->scores, st.scores);
  Round(f->logits, st.logits);
  Round(f->weights, st.weights);
  Round(f->weights_dropped, st.weights_dropped);
  Round(f->context, st.context);
  st.f64 = std::move(f);
  st.var_K = StackVarianceF64(st.f64->K, VarianceKindOf(st.generator));  // as pipeline.cpp
}

}  // namespace attnlab
