// circuits.cpp: the two-layer attention-only transformer of the induction-head lesson (see
// circuits.h): tasks, forward, hand-written backward, AdamW, scores, the run and its outputs.
//
// [SECTION] tasks and draws
// [SECTION] products
// [SECTION] forward
// [SECTION] backward
// [SECTION] AdamW
// [SECTION] scores
// [SECTION] the run
// [SECTION] output: line, JSON
#include "attnlab/lessons/circuits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "attnlab/random/rng.h"
#include "lessons/adam.h"
#include "model/kernels.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] tasks and draws
// ---------------------------------------------------------------------------------------------

const std::vector<CircuitTaskInfo>& CircuitTasks() {
  static const std::vector<CircuitTaskInfo> tasks = {
      {CircuitTask::kVariable, "variable",
       "random filler, then a random sequence of 4 to 15 tokens repeated to the end"},
      {CircuitTask::kFixed, "fixed",
       "the trap: BOS + 15 random tokens + the same 15 again, solvable by position alone"},
      {CircuitTask::kPlanted, "planted",
       "random tokens with one planted pair [A][B] ... [A]: the answer is B"},
  };
  return tasks;
}

std::optional<CircuitTask> ParseCircuitTask(const std::string& name) {
  for (const CircuitTaskInfo& t : CircuitTasks())
    if (name == t.name) return t.task;
  return std::nullopt;
}

const char* Name(CircuitTask task) {
  for (const CircuitTaskInfo& t : CircuitTasks())
    if (t.task == task) return t.name;
  return "?";
}

std::string CircuitTokenName(int64_t id) {
  static const char kSymbols[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ.,";
  static_assert(sizeof kSymbols - 1 == kCircuitVocab);
  if (id == kCircuitBos) return "<bos>";
  if (id < 0 || id > kCircuitBos) return "?";
  return std::string(1, kSymbols[id]);
}

void CheckCircuitOptions(const CircuitOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (o.steps < 1 || o.steps > 100000)
    bad("--steps " + std::to_string(o.steps) + " is outside 1..100000");
  if (o.heads < 1 || o.heads > 8) bad("--heads " + std::to_string(o.heads) + " is outside 1..8");
  if (o.d_model < 4 || o.d_model > 256)
    bad("--d-model " + std::to_string(o.d_model) + " is outside 4..256");
  if (o.d_model % o.heads != 0)
    bad("--d-model " + std::to_string(o.d_model) + " is not a multiple of --heads " +
        std::to_string(o.heads));
  if (o.batch < 1 || o.batch > 256)
    bad("--batch " + std::to_string(o.batch) + " is outside 1..256");
  if (!(o.lr > 0 && o.lr <= 10)) bad("--lr must be in (0, 10]");
  if (!(o.weight_decay >= 0 && o.weight_decay < 1)) bad("--weight-decay must be in [0, 1)");
  if (o.eval_every < 1) bad("--eval-every must be at least 1");
}

std::vector<Matrix*> CircuitParams::Tensors() {
  std::vector<Matrix*> t = {&W_E, &W_pos};
  for (CircuitLayer& l : layers) t.insert(t.end(), {&l.W_Q, &l.W_K, &l.W_V, &l.W_O});
  t.push_back(&W_U);
  return t;
}

std::vector<const Matrix*> CircuitParams::Tensors() const {
  std::vector<const Matrix*> t;
  for (Matrix* m : const_cast<CircuitParams*>(this)->Tensors()) t.push_back(m);
  return t;
}

namespace {

constexpr int64_t kLayers = 2;

// nn.Linear(in, out, bias=False).weight (out x in), stored transposed (in x out: x @ W).
Matrix LinearWeight(TorchGenerator& gen, int64_t in, int64_t out) {
  const TorchGenerator::LinearInit init = gen.Linear(in, out, false);
  return MatrixFromFlat(init.weight, out, in).transpose();
}

}  // namespace

CircuitParams DrawCircuitParams(TorchGenerator& gen, int64_t D) {
  CircuitParams p;
  p.W_E = MatrixFromFlat(gen.Embedding(kCircuitVocab + 1, D), kCircuitVocab + 1, D);
  p.W_pos = MatrixFromFlat(gen.Embedding(kCircuitT, D), kCircuitT, D);
  p.layers.resize(kLayers);
  for (CircuitLayer& l : p.layers) {
    l.W_Q = LinearWeight(gen, D, D);
    l.W_K = LinearWeight(gen, D, D);
    l.W_V = LinearWeight(gen, D, D);
    l.W_O = LinearWeight(gen, D, D);
  }
  p.W_U = LinearWeight(gen, D, kCircuitVocab);
  return p;
}

CircuitParams InitCircuitParams(const CircuitOptions& options) {
  CheckCircuitOptions(options);
  TorchGenerator gen(options.seed);
  return DrawCircuitParams(gen, options.d_model);
}

CircuitBatch DrawCircuitBatch(CircuitTask task, int64_t n, TorchGenerator& gen) {
  constexpr int64_t T = kCircuitT, half = (kCircuitT - 1) / 2;
  CircuitBatch b;
  b.n = n;
  b.ids = gen.Randint(0, kCircuitVocab, n * T);
  b.first.resize(n);
  b.second.resize(n);
  b.pairs.resize(n);
  if (task == CircuitTask::kPlanted) {
    const std::vector<int64_t> p = gen.Randint(1, half - 1, n);
    const std::vector<int64_t> q = gen.Randint(half, T - 1, n);
    for (int64_t e = 0; e < n; ++e) {
      int64_t* s = b.ids.data() + e * T;
      s[q[e]] = s[p[e]];
      s[q[e] + 1] = s[p[e] + 1];
      b.first[e] = {p[e] + 1};
      b.second[e] = {q[e] + 1};
      b.pairs[e] = {{q[e], p[e]}};
    }
  } else {
    std::vector<int64_t> N(n, half), start(n, 1);
    if (task == CircuitTask::kVariable) {
      N = gen.Randint(4, 16, n);
      const std::vector<int64_t> r = gen.Randint(0, int64_t{1} << 24, n);
      for (int64_t e = 0; e < n; ++e) start[e] = 1 + r[e] % (T - 2 * N[e]);
    }
    for (int64_t e = 0; e < n; ++e) {
      int64_t* s = b.ids.data() + e * T;
      const int64_t s0 = start[e], Ne = N[e];
      for (int64_t t = s0 + Ne; t < T; ++t) s[t] = s[t - Ne];  // period N to the end
      for (int64_t t = s0 + 1; t < s0 + Ne; ++t) b.first[e].push_back(t);
      for (int64_t t = s0 + Ne + 1; t < s0 + 2 * Ne; ++t) b.second[e].push_back(t);
      for (int64_t q = s0 + Ne; q < s0 + 2 * Ne; ++q) b.pairs[e].push_back({q, q - Ne});
    }
  }
  for (int64_t e = 0; e < n; ++e) b.ids[e * T] = kCircuitBos;
  return b;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] products: every matrix product goes through the engine's kernels (kernels.h: the
// CPU's best instruction-set level), on views that may be transposed or a block of columns.
// ---------------------------------------------------------------------------------------------

namespace {

using CView = kernels::View<const float>;

CView Of(const float* data, int64_t rows, int64_t cols, int64_t stride) {
  return {data, rows, cols, stride, true};
}
CView Of(const Matrix& m) { return Of(m.data(), m.rows(), m.cols(), m.cols()); }
// The transpose of a row-major rows x cols block.
CView TransposeOf(const float* data, int64_t rows, int64_t cols, int64_t stride) {
  return {data, cols, rows, stride, false};
}
CView TransposeOf(const Matrix& m) { return TransposeOf(m.data(), m.rows(), m.cols(), m.cols()); }

// out (resized) = a @ b.
void Mul(CView a, CView b, Matrix& out) {
  out.resize(a.rows, b.cols);
  kernels::Product(a, b, {out.data(), a.rows, b.cols, b.cols, true});
}
// A block of `out` (rows x cols at data, stride) = a @ b.
void MulInto(CView a, CView b, float* data, int64_t stride) {
  kernels::Product(a, b, {data, a.rows, b.cols, stride, true});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] forward
// ---------------------------------------------------------------------------------------------

void CircuitRunForward(const CircuitParams& p, const std::vector<int64_t>& ids, int64_t heads,
                       CircuitForward& f, const HeadAblation& ablation) {
  constexpr int64_t T = kCircuitT;
  const int64_t D = p.W_E.cols(), dh = D / heads;
  if (ids.empty() || ids.size() % T != 0)
    throw std::invalid_argument("the token ids are not a whole number of " + std::to_string(T) +
                                "-token sequences");
  const int64_t n = static_cast<int64_t>(ids.size()) / T;
  for (int64_t id : ids)
    if (id < 0 || id > kCircuitBos)
      throw std::invalid_argument("token id " + std::to_string(id) + " is outside 0.." +
                                  std::to_string(kCircuitBos));
  const int64_t L = static_cast<int64_t>(p.layers.size());
  f.n = n;
  f.heads = heads;
  f.x.resize(L + 1);
  f.Q.resize(L);
  f.K.resize(L);
  f.V.resize(L);
  f.z.resize(L);
  f.A.resize(L);
  Matrix& x0 = f.x[0];
  x0.resize(n * T, D);
  for (int64_t r = 0; r < n * T; ++r) x0.row(r) = p.W_E.row(ids[r]) + p.W_pos.row(r % T);
  // q @ k^T / math.sqrt(dh): a float32 division by the rounded divisor.
  const float div = static_cast<float>(std::sqrt(static_cast<double>(dh)));
  Matrix out;
  for (int64_t l = 0; l < L; ++l) {
    const CircuitLayer& w = p.layers[l];
    const Matrix& x = f.x[l];
    Mul(Of(x), Of(w.W_Q), f.Q[l]);
    Mul(Of(x), Of(w.W_K), f.K[l]);
    Mul(Of(x), Of(w.W_V), f.V[l]);
    f.z[l].resize(n * T, D);
    f.A[l].resize(n * heads);
    for (int64_t e = 0; e < n; ++e)
      for (int64_t h = 0; h < heads; ++h) {
        Matrix& a = f.A[l][e * heads + h];
        const int64_t off = e * T * D + h * dh;
        Mul(Of(f.Q[l].data() + off, T, dh, D), TransposeOf(f.K[l].data() + off, T, dh, D), a);
        for (int64_t i = 0; i < T; ++i) {  // causal softmax: keys 0..i, the rest exactly 0
          float* row = a.data() + i * T;
          float mx = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j <= i; ++j) {
            row[j] /= div;
            mx = std::max(mx, row[j]);
          }
          float sum = 0;
          for (int64_t j = 0; j <= i; ++j) {
            row[j] = std::exp(row[j] - mx);
            sum += row[j];
          }
          for (int64_t j = 0; j <= i; ++j) row[j] /= sum;
          for (int64_t j = i + 1; j < T; ++j) row[j] = 0;
        }
        MulInto(Of(a), Of(f.V[l].data() + off, T, dh, D), f.z[l].data() + off, D);
      }
    if (ablation.kind != HeadAblation::Kind::kNone && ablation.layer == l) {
      auto cols = f.z[l].middleCols(ablation.head * dh, dh);
      if (ablation.kind == HeadAblation::Kind::kZero) {
        cols.setZero();
      } else {  // the mean over the sequences, position by position
        Matrix mean = Matrix::Zero(T, dh);
        for (int64_t e = 0; e < n; ++e) mean += cols.middleRows(e * T, T);
        mean /= static_cast<float>(n);
        for (int64_t e = 0; e < n; ++e) cols.middleRows(e * T, T) = mean;
      }
    }
    Mul(Of(f.z[l]), Of(w.W_O), out);
    f.x[l + 1] = x + out;
  }
  Mul(Of(f.x[L]), Of(p.W_U), f.logits);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] backward: autograd's rules, pass by pass from the loss back to the embeddings.
// ---------------------------------------------------------------------------------------------

float CircuitBackward(const CircuitParams& p, const CircuitBatch& batch, CircuitForward& f,
                      CircuitParams& grad) {
  constexpr int64_t T = kCircuitT, V = kCircuitVocab;
  const int64_t n = f.n, heads = f.heads, D = p.W_E.cols(), dh = D / heads;
  const int64_t L = static_cast<int64_t>(p.layers.size());
  const float div = static_cast<float>(std::sqrt(static_cast<double>(dh)));
  if (grad.layers.size() != p.layers.size()) grad = p;

  // 1. cross-entropy (mean over n (T - 1) rows): d logits = (softmax - one-hot) / count; the last
  //    row of each sequence predicts nothing.
  const int64_t count = n * (T - 1);
  Matrix dlogits = Matrix::Zero(n * T, V);
  double total = 0;
  for (int64_t e = 0; e < n; ++e)
    for (int64_t t = 0; t + 1 < T; ++t) {
      const int64_t r = e * T + t, target = batch.ids[r + 1];
      const auto o = f.logits.row(r);
      const float mx = o.maxCoeff();
      const float logsum = std::log((o.array() - mx).exp().sum());
      total += -static_cast<double>(o[target] - mx - logsum);
      auto d = dlogits.row(r);
      d = (o.array() - mx - logsum).exp().matrix();
      d[target] -= 1.0f;
      d /= static_cast<float>(count);
    }

  // 2. unembedding: dW_U = x_L^T dlogits, dx = dlogits W_U^T.
  Mul(TransposeOf(f.x[L]), Of(dlogits), grad.W_U);
  Matrix dx, dz, dQ, dK, dV, dA, tmp;
  Mul(Of(dlogits), TransposeOf(p.W_U), dx);

  // 3. each layer, last first: the residual passes dx through, the layer adds its part.
  for (int64_t l = L - 1; l >= 0; --l) {
    const CircuitLayer& w = p.layers[l];
    CircuitLayer& g = grad.layers[l];
    Mul(TransposeOf(f.z[l]), Of(dx), g.W_O);
    Mul(Of(dx), TransposeOf(w.W_O), dz);
    dQ.resize(n * T, D);
    dK.resize(n * T, D);
    dV.resize(n * T, D);
    for (int64_t e = 0; e < n; ++e)
      for (int64_t h = 0; h < heads; ++h) {
        const Matrix& a = f.A[l][e * heads + h];
        const int64_t off = e * T * D + h * dh;
        const CView dzh = Of(dz.data() + off, T, dh, D);
        // An ablated head's z does not depend on its pattern or V: no gradient reaches them.
        MulInto(TransposeOf(a), dzh, dV.data() + off, D);          // d V_h = A^T d z_h
        Mul(dzh, TransposeOf(f.V[l].data() + off, T, dh, D), dA);  // d A = d z_h V_h^T
        // softmax backward: (dA - rowsum(dA * A)) * A; masked entries have A = 0. Then / sqrt(dh).
        for (int64_t i = 0; i < T; ++i) {
          float* dr = dA.data() + i * T;
          const float* ar = a.data() + i * T;
          float s = 0;
          for (int64_t j = 0; j <= i; ++j) s += dr[j] * ar[j];
          for (int64_t j = 0; j <= i; ++j) dr[j] = (dr[j] - s) * ar[j] / div;
          for (int64_t j = i + 1; j < T; ++j) dr[j] = 0;
        }
        MulInto(Of(dA), Of(f.K[l].data() + off, T, dh, D), dQ.data() + off, D);  // dS K_h
        MulInto(TransposeOf(dA), Of(f.Q[l].data() + off, T, dh, D), dK.data() + off, D);
      }
    const Matrix& x = f.x[l];
    Mul(TransposeOf(x), Of(dQ), g.W_Q);
    Mul(TransposeOf(x), Of(dK), g.W_K);
    Mul(TransposeOf(x), Of(dV), g.W_V);
    Mul(Of(dQ), TransposeOf(w.W_Q), tmp);
    dx += tmp;
    Mul(Of(dK), TransposeOf(w.W_K), tmp);
    dx += tmp;
    Mul(Of(dV), TransposeOf(w.W_V), tmp);
    dx += tmp;
  }

  // 4. embeddings: W_E[ids] scatters (index_add over the ids), W_pos adds over the sequences.
  grad.W_E.setZero(p.W_E.rows(), D);
  grad.W_pos.setZero(T, D);
  for (int64_t r = 0; r < n * T; ++r) {
    grad.W_E.row(batch.ids[r]) += dx.row(r);
    grad.W_pos.row(r % T) += dx.row(r);
  }
  return static_cast<float>(total / static_cast<double>(count));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] AdamW
// ---------------------------------------------------------------------------------------------

CircuitAdamW::CircuitAdamW(const CircuitParams& p, double lr, double weight_decay)
    : m_(p), v_(p), lr_(lr), weight_decay_(weight_decay) {
  for (Matrix* t : m_.Tensors()) t->setZero();
  for (Matrix* t : v_.Tensors()) t->setZero();
}

void CircuitAdamW::Step(CircuitParams& p, const CircuitParams& grad) {
  ++step_;
  const std::vector<Matrix*> ps = p.Tensors(), ms = m_.Tensors(), vs = v_.Tensors();
  const std::vector<const Matrix*> gs = grad.Tensors();
  for (size_t i = 0; i < ps.size(); ++i)
    detail::AdamUpdate(ps[i]->data(), gs[i]->data(), ms[i]->data(), vs[i]->data(), ps[i]->size(),
                       step_, lr_, weight_decay_);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] scores
// ---------------------------------------------------------------------------------------------

double PreviousTokenScore(const Matrix& A) {
  const int64_t T = A.rows();
  if (T < 2) return 0;
  double sum = 0;
  for (int64_t q = 1; q < T; ++q) sum += A(q, q - 1);
  return sum / static_cast<double>(T - 1);
}

double PrefixMatchScore(const Matrix& A, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                        bool duplicate_metric) {
  if (pairs.empty()) return 0;
  double sum = 0;
  for (const auto& [q, prev] : pairs) sum += A(q, duplicate_metric ? prev : prev + 1);
  return sum / static_cast<double>(pairs.size());
}

Matrix OvCircuit(const CircuitParams& p, int64_t heads, int64_t layer, int64_t head) {
  const CircuitLayer& w = p.layers.at(layer);
  const int64_t D = p.W_E.cols(), dh = D / heads;
  const Matrix ov = w.W_V.middleCols(head * dh, dh) * w.W_O.middleRows(head * dh, dh);  // D x D
  return p.W_E.topRows(kCircuitVocab) * ov * p.W_U;
}

double CopyingScore(const CircuitParams& p, int64_t heads, int64_t layer, int64_t head) {
  const Matrix M = OvCircuit(p, heads, layer, head);
  int64_t hits = 0;
  for (int64_t t = 0; t < M.rows(); ++t) {
    Eigen::Index best = 0;
    M.row(t).maxCoeff(&best);
    hits += best == t;
  }
  return static_cast<double>(hits) / static_cast<double>(M.rows());
}

CircuitEval EvaluateCircuits(const CircuitParams& p, const CircuitBatch& evalset, int64_t heads,
                             const HeadAblation& ablation, CircuitForward& f) {
  constexpr int64_t T = kCircuitT;
  CircuitRunForward(p, evalset.ids, heads, f, ablation);
  CircuitEval ev;
  // Mean cross-entropy over the listed target positions (target t predicted at row t - 1).
  auto mean_loss = [&](const std::vector<std::vector<int64_t>>& targets) {
    double sum = 0;
    int64_t count = 0;
    for (int64_t e = 0; e < evalset.n; ++e)
      for (int64_t t : targets[e]) {
        const auto o = f.logits.row(e * T + t - 1);
        const float mx = o.maxCoeff();
        const float logsum = std::log((o.array() - mx).exp().sum());
        sum += -static_cast<double>(o[evalset.ids[e * T + t]] - mx - logsum);
        ++count;
      }
    return count > 0 ? sum / static_cast<double>(count) : 0.0;
  };
  ev.loss_first = mean_loss(evalset.first);
  ev.loss_second = mean_loss(evalset.second);
  int64_t pairs = 0;
  for (const auto& pe : evalset.pairs) pairs += static_cast<int64_t>(pe.size());
  for (int64_t h = 0; h < heads; ++h) {
    double prev = 0, prefix = 0, dup = 0;
    for (int64_t e = 0; e < evalset.n; ++e) {
      prev += PreviousTokenScore(f.Pattern(0, e, h));
      const double np = static_cast<double>(evalset.pairs[e].size());
      prefix += PrefixMatchScore(f.Pattern(1, e, h), evalset.pairs[e]) * np;
      dup += PrefixMatchScore(f.Pattern(1, e, h), evalset.pairs[e], true) * np;
    }
    ev.prev_token.push_back(prev / static_cast<double>(evalset.n));
    ev.prefix_match.push_back(pairs > 0 ? prefix / static_cast<double>(pairs) : 0);
    ev.duplicate_token.push_back(pairs > 0 ? dup / static_cast<double>(pairs) : 0);
    ev.copying.push_back(CopyingScore(p, heads, 1, h));
  }
  return ev;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] the run
// ---------------------------------------------------------------------------------------------

CircuitRun TrainCircuits(const CircuitOptions& options, const CircuitObserver& observe) {
  CheckCircuitOptions(options);
  CircuitRun run;
  run.options = options;
  TorchGenerator gen(options.seed), eval_gen(options.seed + 1);
  run.initial = DrawCircuitParams(gen, options.d_model);
  run.evalset = DrawCircuitBatch(options.task, kCircuitEvalSize, eval_gen);
  CircuitParams p = run.initial, grad = run.initial;
  CircuitAdamW adam(p, options.lr, options.weight_decay);
  CircuitForward f, probe;
  auto evaluate = [&](int64_t step) {
    run.evals.push_back(EvaluateCircuits(p, run.evalset, options.heads, {}, probe));
    run.evals.back().step = step;
    run.checkpoints.push_back(p);
    return !observe || observe(run);
  };
  bool go_on = evaluate(0);
  for (int64_t step = 1; step <= options.steps && go_on; ++step) {
    const CircuitBatch batch = DrawCircuitBatch(options.task, options.batch, gen);
    CircuitRunForward(p, batch.ids, options.heads, f);
    run.loss.push_back(CircuitBackward(p, batch, f, grad));
    adam.Step(p, grad);
    if (step % options.eval_every == 0 || step == options.steps) {
      go_on = evaluate(step);
      if (!go_on) run.cancelled = step < options.steps;
    }
  }
  run.trained = p;
  return run;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] output
// ---------------------------------------------------------------------------------------------

namespace {
std::string Scores(const char* name, const std::vector<double>& v) {
  std::string s = std::string("  ") + name;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, " %.3f", x);
    s += buf;
  }
  return s;
}
}  // namespace

std::string CircuitLine(const CircuitEval& e) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "step %5lld  loss first %.4f second %.4f",
                static_cast<long long>(e.step), e.loss_first, e.loss_second);
  return buf + Scores("prev-token", e.prev_token) + Scores("prefix-match", e.prefix_match) +
         Scores("copying", e.copying);
}

std::string CircuitRunJson(const CircuitRun& run, double seconds) {
  nlohmann::ordered_json j;
  const CircuitOptions& o = run.options;
  j["format"] = "attention-lab/circuits@1";
  j["task"] = Name(o.task);
  j["seed"] = o.seed;
  j["heads"] = o.heads;
  j["d_model"] = o.d_model;
  j["batch"] = o.batch;
  j["lr"] = o.lr;
  j["weight_decay"] = o.weight_decay;
  j["cancelled"] = run.cancelled;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array(), lf = steps, ls = steps,
                         prev = steps, prefix = steps, dup = steps, copying = steps;
  for (const CircuitEval& e : run.evals) {
    steps.push_back(e.step);
    lf.push_back(e.loss_first);
    ls.push_back(e.loss_second);
    prev.push_back(e.prev_token);
    prefix.push_back(e.prefix_match);
    dup.push_back(e.duplicate_token);
    copying.push_back(e.copying);
  }
  j["steps"] = steps;
  j["loss_first"] = lf;
  j["loss_second"] = ls;
  j["prev_token"] = prev;
  j["prefix_match"] = prefix;
  j["duplicate_token"] = dup;
  j["copying"] = copying;
  j["seconds"] = seconds;
  // One line per field, as TrainRunJson writes its run.
  std::string out = "{";
  for (auto it = j.begin(); it != j.end(); ++it)
    out += std::string(it == j.begin() ? "\n" : ",\n") + " " + nlohmann::json(it.key()).dump() +
           ": " + it.value().dump();
  return out + "\n}\n";
}

}  // namespace attnlab
