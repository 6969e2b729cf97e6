// train.cpp: one attention head trained with Adam on a synthetic task (see train.h).
//
// [SECTION] tasks: names, tables, batches
// [SECTION] the head: forward, loss, backward
// [SECTION] Adam
// [SECTION] the run
// [SECTION] output: JSON, CSV, scenario
#include "attnlab/lessons/train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "attnlab/model/pipeline.h"
#include "attnlab/random/rng.h"
#include "base/float_exp.h"
#include "lessons/adam.h"

namespace attnlab {

// ---------------------------------------------------------------------------------------------
// [SECTION] tasks
// ---------------------------------------------------------------------------------------------

const std::vector<TrainTaskInfo>& TrainTasks() {
  static const std::vector<TrainTaskInfo> tasks = {
      {TrainTask::kPreviousToken, "previous-token",
       "each token must output the symbol of the token before it"},
      {TrainTask::kCopyFirst, "copy-first", "every token must output the first token's symbol"},
      {TrainTask::kAssociativeRecall, "associative-recall",
       "key:value pairs, then a key; the last token must output that key's value"},
  };
  return tasks;
}

std::optional<TrainTask> ParseTrainTask(const std::string& name) {
  for (const TrainTaskInfo& t : TrainTasks())
    if (name == t.name) return t.task;
  return std::nullopt;
}

const char* Name(TrainTask task) {
  for (const TrainTaskInfo& t : TrainTasks())
    if (t.task == task) return t.name;
  return "?";
}

namespace {

std::string SymbolName(int64_t s) { return std::string(1, static_cast<char>('A' + s)); }

// The task's fixed tensors, drawn right after torch.manual_seed(data_seed).
struct TaskTables {
  Matrix E;    // vocab x d_in: symbol embeddings
  Matrix Pos;  // T x d_in positions, or (T - 1) x d_in key embeddings (associative recall)
  Matrix R;    // d_k x vocab: the fixed readout
};

TaskTables DrawTables(TorchGenerator& gen, TrainTask task, int64_t T, int64_t d_in, int64_t d_k) {
  TaskTables t;
  t.E = MatrixFromFlat(gen.Normal(kTrainVocab * d_in), kTrainVocab, d_in);
  const int64_t rows = task == TrainTask::kAssociativeRecall ? T - 1 : T;
  t.Pos = MatrixFromFlat(gen.Normal(rows * d_in), rows, d_in);
  // randn(d_k, vocab) / math.sqrt(d_k): a float32 division by the rounded divisor.
  t.R = MatrixFromFlat(gen.Normal(d_k * kTrainVocab), d_k, kTrainVocab);
  t.R /= static_cast<float>(std::sqrt(static_cast<double>(d_k)));
  return t;
}

// One step's data: X is (B*T) x d_in, example after example; the scored rows of X (indices
// into its rows, in the order PyTorch's loss lists them) and their target symbols.
struct Batch {
  Matrix X;
  std::vector<int64_t> rows, target;
  std::vector<std::string> labels;  // B*T token labels
};

void DrawSymbolBatch(TorchGenerator& gen, const TaskTables& t, TrainTask task, int64_t B, int64_t T,
                     Batch& b) {
  const std::vector<int64_t> ids = gen.Randint(0, kTrainVocab, B * T);
  b.X.resize(B * T, t.E.cols());
  for (int64_t r = 0; r < B * T; ++r) {
    b.X.row(r) = t.E.row(ids[r]) + t.Pos.row(r % T);
    b.labels.push_back(SymbolName(ids[r]));
  }
  for (int64_t e = 0; e < B; ++e)
    for (int64_t i = 0; i < T; ++i) {
      if (task == TrainTask::kPreviousToken && i == 0) continue;
      b.rows.push_back(e * T + i);
      b.target.push_back(task == TrainTask::kPreviousToken ? ids[e * T + i - 1] : ids[e * T]);
    }
}

void DrawRecallBatch(TorchGenerator& gen, const TaskTables& t, int64_t B, int64_t T, Batch& b) {
  const int64_t pairs = T - 1;
  const std::vector<float> u = gen.Uniform(B * pairs);
  const std::vector<int64_t> values = gen.Randint(0, kTrainVocab, B * pairs);
  const std::vector<int64_t> which = gen.Randint(0, pairs, B);
  b.X.resize(B * T, t.E.cols());
  std::vector<int64_t> keys(static_cast<size_t>(pairs));
  for (int64_t e = 0; e < B; ++e) {
    // argsort(dim=1, stable=True): a random permutation of the key symbols.
    std::iota(keys.begin(), keys.end(), 0);
    const float* ue = u.data() + e * pairs;
    std::stable_sort(keys.begin(), keys.end(),
                     [ue](int64_t a, int64_t c) { return ue[a] < ue[c]; });
    for (int64_t i = 0; i < pairs; ++i) {
      const int64_t v = values[e * pairs + i];
      b.X.row(e * T + i) = t.Pos.row(keys[i]) + t.E.row(v);
      b.labels.push_back("k" + std::to_string(keys[i]) + ":" + SymbolName(v));
    }
    const int64_t w = which[e];
    b.X.row(e * T + pairs) = t.Pos.row(keys[w]);
    b.labels.push_back("k" + std::to_string(keys[w]) + "?");
    b.rows.push_back(e * T + pairs);
    b.target.push_back(values[e * pairs + w]);
  }
}

// Draws the next batch into `b` (its buffers are reused from step to step).
void DrawBatch(TorchGenerator& gen, const TaskTables& t, TrainTask task, int64_t B, int64_t T,
               Batch& b) {
  b.rows.clear();
  b.target.clear();
  b.labels.clear();
  if (task == TrainTask::kAssociativeRecall)
    DrawRecallBatch(gen, t, B, T, b);
  else
    DrawSymbolBatch(gen, t, task, B, T, b);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] the head
// ---------------------------------------------------------------------------------------------

// Everything the backward pass needs of one forward pass over B examples of T tokens.
struct Forward {
  std::array<Matrix, 3> QKV;  // (B*T) x d_k each
  MatrixStack weights;        // B of T x T
  Matrix context;             // (B*T) x d_k
  // The backward pass's buffers, kept from step to step (no allocation per step).
  Matrix C, out, dC_rows, dA;
  std::array<Matrix, 3> dQKV;
};

void HeadForward(const HeadParams& p, const Matrix& X, int64_t B, int64_t T, bool scale,
                 Forward& f) {
  for (int w = 0; w < 3; ++w) {
    f.QKV[w].noalias() = X * p.W[w];  // nn.Linear: x @ weight.T, then + bias
    if (p.b[w].size() > 0) f.QKV[w].rowwise() += p.b[w];
  }
  const int64_t d_k = p.W[0].cols();
  const float div = static_cast<float>(std::sqrt(static_cast<double>(d_k)));
  f.weights.resize(B);
  f.context.resize(B * T, d_k);
  for (int64_t e = 0; e < B; ++e) {
    Matrix& a = f.weights[e];
    a.noalias() = f.QKV[0].middleRows(e * T, T) * f.QKV[1].middleRows(e * T, T).transpose();
    if (scale) a /= div;
    RowVector logits(T);
    for (int64_t i = 0; i < T; ++i) {  // softmax(dim=-1), stable
      logits = a.row(i);
      detail::ShiftedExp(logits.data(), logits.maxCoeff(), a.data() + i * T, T);
      a.row(i) *= 1.0f / a.row(i).sum();
    }
    f.context.middleRows(e * T, T).noalias() = a * f.QKV[2].middleRows(e * T, T);
  }
}

// cross_entropy(context[rows] @ R, target), mean; writes d loss / d context into dC.
float LossAndGrad(Forward& f, const Batch& batch, const Matrix& R, Matrix& dC) {
  const int64_t n = static_cast<int64_t>(batch.rows.size());
  Matrix& C = f.C;
  C.resize(n, f.context.cols());
  for (int64_t k = 0; k < n; ++k) C.row(k) = f.context.row(batch.rows[k]);
  Matrix& out = f.out;
  out.noalias() = C * R;  // n x vocab
  double total = 0;
  for (int64_t k = 0; k < n; ++k) {
    auto o = out.row(k);
    const float mx = o.maxCoeff();
    const float logsum = std::log((o.array() - mx).exp().sum());
    const int64_t t = batch.target[k];
    total += -static_cast<double>(o[t] - mx - logsum);
    // log_softmax backward: exp(log p) - one-hot, times 1/n of the mean.
    o = ((o.array() - mx - logsum).exp()).matrix();
    o[t] -= 1.0f;
    o /= static_cast<float>(n);
  }
  f.dC_rows.noalias() = out * R.transpose();
  dC.setZero(f.context.rows(), f.context.cols());
  for (int64_t k = 0; k < n; ++k) dC.row(batch.rows[k]) = f.dC_rows.row(k);
  return static_cast<float>(total / static_cast<double>(n));
}

// Gradients of the parameters from d loss / d context.
void HeadBackward(const HeadParams& p, const Matrix& X, Forward& f, const Matrix& dC, int64_t B,
                  int64_t T, bool scale, HeadParams& grad) {
  const int64_t d_k = p.W[0].cols();
  const float div = static_cast<float>(std::sqrt(static_cast<double>(d_k)));
  std::array<Matrix, 3>& dQKV = f.dQKV;
  for (Matrix& m : dQKV) m.resize(B * T, d_k);
  Matrix& dA = f.dA;
  dA.resize(T, T);
  for (int64_t e = 0; e < B; ++e) {
    const Matrix& a = f.weights[e];
    const auto dc = dC.middleRows(e * T, T);
    dQKV[2].middleRows(e * T, T).noalias() = a.transpose() * dc;  // d V
    dA.noalias() = dc * f.QKV[2].middleRows(e * T, T).transpose();
    // softmax backward: (d weights - rowsum(d weights * weights)) * weights
    for (int64_t i = 0; i < T; ++i) {
      const float s = dA.row(i).dot(a.row(i));
      dA.row(i) = ((dA.row(i).array() - s) * a.row(i).array()).matrix();
    }
    if (scale) dA /= div;  // d scores
    dQKV[0].middleRows(e * T, T).noalias() = dA * f.QKV[1].middleRows(e * T, T);
    dQKV[1].middleRows(e * T, T).noalias() = dA.transpose() * f.QKV[0].middleRows(e * T, T);
  }
  for (int w = 0; w < 3; ++w) {
    grad.W[w].noalias() = X.transpose() * dQKV[w];
    if (p.b[w].size() > 0) grad.b[w] = dQKV[w].colwise().sum();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Adam
// ---------------------------------------------------------------------------------------------

// Adam's state for the six (or three) parameter tensors.
struct AdamState {
  HeadParams m, v;
  int64_t step = 0;
  explicit AdamState(const HeadParams& p) : m(p), v(p) {
    for (int w = 0; w < 3; ++w) {
      m.W[w].setZero();
      v.W[w].setZero();
      m.b[w].setZero();
      v.b[w].setZero();
    }
  }
  void Step(HeadParams& p, const HeadParams& g, double lr) {
    ++step;
    for (int w = 0; w < 3; ++w) {
      detail::AdamUpdate(p.W[w].data(), g.W[w].data(), m.W[w].data(), v.W[w].data(), p.W[w].size(),
                         step, lr);
      detail::AdamUpdate(p.b[w].data(), g.b[w].data(), m.b[w].data(), v.b[w].data(), p.b[w].size(),
                         step, lr);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// [SECTION] the run
// ---------------------------------------------------------------------------------------------

void CheckOptions(const TrainOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (o.steps < 1 || o.steps > 100000)
    bad("--steps " + std::to_string(o.steps) + " is outside 1..100000");
  if (o.batch < 1 || o.batch > 256)
    bad("--batch " + std::to_string(o.batch) + " is outside 1..256");
  if (o.d_k < 0 || o.d_k > 1024) bad("--d-k " + std::to_string(o.d_k) + " is outside 1..1024");
  if (!(o.lr > 0 && o.lr <= 10)) bad("--lr must be in (0, 10]");
  if (o.example < 0 || o.example >= o.batch) bad("--example must be in [0, batch)");
  if (o.snapshot_every < 0) bad("--snapshot-every must be >= 0");
}

// The head as the engine draws it for `s`, with d_out = d_k and one head.
HeadParams InitialHead(const Scenario& s, const Shape& shape, int64_t d_k) {
  Scenario h = s;
  h.projections.heads = 1;
  h.projections.kv_heads = 0;  // one head: its K and V are its own
  h.projections.out_proj = false;
  h.mask = MaskSpec{};
  h.dropout = DropoutSpec{};
  if (d_k != shape.d_out) {
    if (!ProjectionInitDraws(s.projections.init))
      throw ScenarioError("projections.init", std::string("init ") + Name(s.projections.init) +
                                                  " fixes d_out = " + std::to_string(shape.d_out) +
                                                  "; --d-k cannot change it");
    h.projections.d_out = d_k;
  }
  const Stages st = RunScenario(h);
  HeadParams p;
  for (int w = 0; w < 3; ++w) {
    p.W[w] = st.W[w];
    p.b[w] = st.bias[w].size() > 0 ? st.bias[w] : RowVector();
  }
  return p;
}

}  // namespace

TrainRun TrainAttentionHead(const Scenario& scenario, const TrainOptions& options,
                            const TrainProgress& progress) {
  if (!progress) return TrainAttentionHeadObserved(scenario, options, {});
  return TrainAttentionHeadObserved(scenario, options, [&progress](const TrainRun& so_far) {
    return progress(static_cast<int64_t>(so_far.loss.size()));
  });
}

std::array<TrainRun, 2> TrainScaledAndUnscaled(const Scenario& scenario, TrainOptions options,
                                               const TrainProgress& progress) {
  std::array<TrainRun, 2> runs;
  for (int r = 0; r < 2; ++r) {
    options.scale = r == 0;
    const int64_t before = r * options.steps;  // steps done by the runs before this one
    TrainProgress over_both;
    if (progress) over_both = [&progress, before](int64_t done) { return progress(before + done); };
    runs[r] = TrainAttentionHead(scenario, options, over_both);
    if (runs[r].cancelled) {
      runs[1].cancelled = true;  // the unscaled run never started
      break;
    }
  }
  return runs;
}

double EstimateTrainBytes(int64_t T, int64_t d_in, const TrainOptions& options, int64_t d_k) {
  const double BT = static_cast<double>(options.batch) * static_cast<double>(T);
  const double din = static_cast<double>(d_in), dk = static_cast<double>(d_k);
  const double tt = static_cast<double>(T) * static_cast<double>(T);
  const double floats = 2 * BT * din + 12 * BT * dk + 3 * BT * static_cast<double>(T) +
                        20 * din * dk + (kTrainVocab + T) * din + 2 * dk * kTrainVocab + 201 * tt;
  return 4.0 * floats;
}

TrainRun TrainAttentionHeadObserved(const Scenario& scenario, const TrainOptions& options,
                                    const TrainObserver& observe) {
  CheckOptions(options);
  const Shape shape = ValidateScenario(scenario);
  if (scenario.input.source == InputSource::kQkv)
    throw ScenarioError("input.source", "qkv input has no W_query, W_key, W_value to train");
  if (shape.T < 3 || shape.T > 128)
    throw ScenarioError(
        "input", "training needs 3..128 tokens, the scenario has " + std::to_string(shape.T));
  TrainRun run;
  run.options = options;
  run.T = shape.T;
  run.d_in = shape.d_in;
  run.d_k = options.d_k > 0 ? options.d_k : shape.d_out;
  CheckCommandMemory(scenario, shape, "training",
                     EstimateTrainBytes(run.T, run.d_in, options, run.d_k));
  run.initial = InitialHead(scenario, shape, run.d_k);
  HeadParams p = run.initial, grad = run.initial;
  AdamState adam(p);

  TorchGenerator gen(options.data_seed);
  const TaskTables tables = DrawTables(gen, options.task, run.T, run.d_in, run.d_k);
  const int64_t B = options.batch, T = run.T;
  const int64_t every = options.snapshot_every > 0
                            ? options.snapshot_every
                            : std::max<int64_t>(1, (options.steps + 199) / 200);
  Forward f, probe;
  Matrix dC;
  auto snapshot = [&](int64_t step) {
    HeadForward(p, run.example_X, 1, T, options.scale, probe);
    run.snapshots.push_back({step, probe.weights[0]});
  };
  Batch batch;
  for (int64_t step = 0; step < options.steps; ++step) {
    DrawBatch(gen, tables, options.task, B, T, batch);
    if (step == 0) {
      run.example_X = batch.X.middleRows(options.example * T, T);
      run.example_tokens.assign(batch.labels.begin() + options.example * T,
                                batch.labels.begin() + (options.example + 1) * T);
    }
    if (step % every == 0) snapshot(step);
    HeadForward(p, batch.X, B, T, options.scale, f);
    run.loss.push_back(LossAndGrad(f, batch, tables.R, dC));
    HeadBackward(p, batch.X, f, dC, B, T, options.scale, grad);
    adam.Step(p, grad, options.lr);
    if (observe && !observe(run)) {
      run.cancelled = step + 1 < options.steps;
      break;
    }
  }
  const int64_t done = static_cast<int64_t>(run.loss.size());
  if (run.snapshots.back().step != done) snapshot(done);
  run.trained = p;
  return run;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] output
// ---------------------------------------------------------------------------------------------

namespace {
const char* const kProjectionNames[3] = {"query", "key", "value"};
}

std::string TrainRunJson(const TrainRun& run) {
  nlohmann::ordered_json j;
  j["format"] = "attention-lab/train@1";
  j["task"] = Name(run.options.task);
  j["steps"] = run.options.steps;
  j["scale"] = run.options.scale;
  j["d_k"] = run.d_k;
  j["lr"] = run.options.lr;
  j["batch"] = run.options.batch;
  j["data_seed"] = run.options.data_seed;
  j["T"] = run.T;
  j["d_in"] = run.d_in;
  j["cancelled"] = run.cancelled;
  j["loss"] = run.loss;
  for (int w = 0; w < 3; ++w) {
    const Matrix& W = run.trained.W[w];
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (Eigen::Index r = 0; r < W.rows(); ++r)
      rows.push_back(std::vector<float>(W.row(r).data(), W.row(r).data() + W.cols()));
    j[std::string("W_") + kProjectionNames[w]] = rows;
  }
  for (int w = 0; w < 3; ++w)
    if (run.trained.b[w].size() > 0) {
      const RowVector& b = run.trained.b[w];
      j[std::string("b_") + kProjectionNames[w]] =
          std::vector<float>(b.data(), b.data() + b.size());
    }
  // One line per field: the loss list and each weight matrix stay compact.
  std::string out = "{";
  for (auto it = j.begin(); it != j.end(); ++it)
    out += std::string(it == j.begin() ? "\n" : ",\n") + " " + nlohmann::json(it.key()).dump() +
           ": " + it.value().dump();
  return out + "\n}\n";
}

std::string LossCurvesCsv(const std::vector<const TrainRun*>& runs,
                          const std::vector<std::string>& names) {
  std::string out = "step";
  size_t longest = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    out += "," + (r < names.size() ? names[r] : "loss" + std::to_string(r));
    longest = std::max(longest, runs[r]->loss.size());
  }
  out += "\n";
  char buf[32];
  for (size_t s = 0; s < longest; ++s) {
    out += std::to_string(s);
    for (const TrainRun* run : runs) {
      out += ",";
      if (s < run->loss.size()) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(run->loss[s]));
        out += buf;
      }
    }
    out += "\n";
  }
  return out;
}

Scenario TrainedHeadScenario(const TrainRun& run) {
  Scenario s;
  s.title = std::string("Trained head: ") + Name(run.options.task) + ", " +
            std::to_string(run.loss.size()) + " Adam steps, d_k = " + std::to_string(run.d_k) +
            (run.options.scale ? ", scaled" : ", unscaled");
  const bool biased = run.trained.b[0].size() > 0;
  Matrix X = run.example_X;
  if (biased) {  // x @ W + b == [x, 1] @ [W; b]
    X.conservativeResize(Eigen::NoChange, X.cols() + 1);
    X.col(X.cols() - 1).setOnes();
    s.title += " (the last input column, 1, carries the biases)";
  }
  s.input.source = InputSource::kMatrix;
  s.input.values = {X};
  s.input.tokens = run.example_tokens;
  s.projections.init = ProjectionInit::kMatrix;
  s.projections.d_out = run.d_k;
  for (int w = 0; w < 3; ++w) {
    Matrix W = run.trained.W[w];
    if (biased) {
      W.conservativeResize(W.rows() + 1, Eigen::NoChange);
      W.row(W.rows() - 1) = run.trained.b[w];
    }
    s.projections.W[w] = W;
  }
  s.scaling.sqrt_dk = run.options.scale;
  return s;
}

}  // namespace attnlab
