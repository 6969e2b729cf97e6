// codegen_train.cpp: the PyTorch loop that TrainAttentionHead runs (train.h), as a short
// notebook-style program that leaves `losses` (one float per step) as a variable.
//
// [SECTION] the head, drawn as the scenario draws it
// [SECTION] the task and the loop
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "attnlab/lessons/train.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/python/codegen.h"

namespace attnlab {
namespace {

// The shortest Python float literal that reads back as the same float32 (or double).
template <typename T>
std::string FloatLiteral(T v) {
  char buf[40];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string MatrixLiteral(const Matrix& m) {
  std::string out = "[";
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    out += r ? ",\n     [" : "[";
    for (Eigen::Index c = 0; c < m.cols(); ++c) out += (c ? ", " : "") + FloatLiteral(m(r, c));
    out += "]";
  }
  return out + "]";
}

// ---------------------------------------------------------------------------------------------
// [SECTION] the head
// ---------------------------------------------------------------------------------------------

// The scenario's input draws, replayed only to leave the generator where the engine's
// projections start (the program trains on the task's own inputs).
void ReplayInputDraws(std::ostringstream& py, const Scenario& s, const Shape& sh) {
  const InputSpec& in = s.input;
  if (in.source == InputSource::kRandn) {
    py << "torch.manual_seed(" << in.seed << ")\n_ = torch.randn(" << in.batch << ", " << sh.T
       << ", " << sh.d_in << ")  # the scenario's X: drawn to advance the generator\n";
  } else if (in.source == InputSource::kText) {
    py << "torch.manual_seed(" << in.seed << ")\n_ = nn.Embedding(" << sh.vocab << ", " << sh.d_in
       << ")  # the scenario's embedding: drawn to advance the generator\n";
  } else {
    py << "torch.manual_seed(" << DefaultSeed(Generator::kTorch)
       << ")  # PyTorch's default seed, where the unseeded scenario starts\n";
  }
}

// Writes W_query, W_key, W_value in the scenario's draw order; returns whether they are
// nn.Linear modules (else nn.Parameter tensors of d_in x d_k used as X @ W).
bool WriteHead(std::ostringstream& py, const Scenario& s, const TrainRun& run) {
  const Shape sh = ValidateScenario(s);
  const ProjectionSpec& p = s.projections;
  const bool torch_draws = ProjectionInitDraws(p.init) && s.input.generator == Generator::kTorch;
  py << "# The head, as the scenario draws it\n";
  if (!torch_draws) {
    py << "# (the scenario's W are not torch draws: written as numbers, x @ W)\n";
    for (int w = 0; w < 3; ++w)
      py << "W_" << Name(static_cast<Projection>(w)) << " = nn.Parameter(torch.tensor("
         << MatrixLiteral(run.initial.W[w]) << "))\n";
    return false;
  }
  if (p.seed)
    py << "torch.manual_seed(" << *p.seed << ")\n";
  else
    ReplayInputDraws(py, s, sh);
  const bool linear = p.init == ProjectionInit::kLinear;
  for (Projection name : p.order) {
    py << "W_" << Name(name) << " = ";
    if (linear)
      py << "nn.Linear(d_in, d_k, bias=" << (p.bias ? "True" : "False") << ")\n";
    else
      py << "nn.Parameter(torch." << (p.init == ProjectionInit::kRandn ? "randn" : "rand")
         << "(d_in, d_k))\n";
  }
  return linear;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] the task and the loop
// ---------------------------------------------------------------------------------------------

void WriteTask(std::ostringstream& py, TrainTask task) {
  if (task == TrainTask::kAssociativeRecall) {
    py << "# The task's fixed parts: value symbols, key symbols, a fixed readout\n"
          "torch.manual_seed(data_seed)\n"
          "E = torch.randn(vocab, d_in)\n"
          "Kemb = torch.randn(T - 1, d_in)\n"
          "readout = torch.randn(d_k, vocab) / math.sqrt(d_k)\n\n"
          "def make_batch():\n"
          "    # T - 1 pairs key:value (each key once), then a key: its value is the answer\n"
          "    keys = torch.rand(batch, T - 1).argsort(dim=1, stable=True)\n"
          "    values = torch.randint(0, vocab, (batch, T - 1))\n"
          "    which = torch.randint(0, T - 1, (batch,))\n"
          "    query = keys.gather(1, which[:, None])\n"
          "    X = torch.cat([Kemb[keys] + E[values], Kemb[query]], dim=1)\n"
          "    return X, values.gather(1, which[:, None]).squeeze(1)\n\n"
          "def scored(out):\n"
          "    return out[:, -1]  # only the last token answers\n\n";
    return;
  }
  py << "# The task's fixed parts: symbol and position embeddings, a fixed readout\n"
        "torch.manual_seed(data_seed)\n"
        "E = torch.randn(vocab, d_in)\n"
        "P = torch.randn(T, d_in)\n"
        "readout = torch.randn(d_k, vocab) / math.sqrt(d_k)\n\n"
        "def make_batch():\n"
        "    ids = torch.randint(0, vocab, (batch, T))\n"
        "    X = E[ids] + P\n";
  if (task == TrainTask::kPreviousToken)
    py << "    return X, ids[:, :-1]  # token i must output the symbol of token i - 1\n\n"
          "def scored(out):\n"
          "    return out[:, 1:]  # token 0 has no previous token\n\n";
  else
    py << "    return X, ids[:, :1].expand(batch, T)  # every token outputs token 0's symbol\n\n"
          "def scored(out):\n"
          "    return out\n\n";
}

}  // namespace

std::string GenerateTrainingCode(const Scenario& scenario, const TrainOptions& options) {
  TrainOptions one = options;
  one.steps = 1;  // validates everything and gives the initial head and the shapes
  const TrainRun run = TrainAttentionHead(scenario, one);
  std::ostringstream py;
  py << "# Train one attention head on \"" << Name(options.task) << "\" with Adam, "
     << (options.scale ? "scaled by 1/sqrt(d_k)" : "unscaled")
     << " (attention-lab code --train).\n# losses[i] is the loss of step i, as "
        "`attention-lab train` reports it.\n"
        "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";
  py << "d_in, d_k, T = " << run.d_in << ", " << run.d_k << ", " << run.T << "\n";
  py << "vocab, batch, steps, lr = " << kTrainVocab << ", " << options.batch << ", "
     << options.steps << ", " << FloatLiteral(options.lr) << "\n";
  py << "data_seed = " << options.data_seed << "\n";
  py << "scale = " << (options.scale ? "True" : "False")
     << "  # divide the scores by sqrt(d_k)\n\n";
  const bool linear = WriteHead(py, scenario, run);
  py << "\n";
  WriteTask(py, options.task);
  auto apply = [linear](const char* w) {
    return linear ? std::string(w) + "(X)" : "X @ " + std::string(w);
  };
  py << "def head(X):\n"
     << "    Q, K, V = " << apply("W_query") << ", " << apply("W_key") << ", " << apply("W_value")
     << "\n"
        "    scores = Q @ K.transpose(1, 2)\n"
        "    if scale:\n"
        "        scores = scores / math.sqrt(d_k)\n"
        "    weights = torch.softmax(scores, dim=-1)\n"
        "    return weights @ V, weights\n\n";
  if (linear)
    py << "params = [*W_query.parameters(), *W_key.parameters(), *W_value.parameters()]\n";
  else
    py << "params = [W_query, W_key, W_value]\n";
  py << "optimizer = torch.optim.Adam(params, lr=lr)  # betas (0.9, 0.999), eps 1e-8\n"
        "losses = []\n"
        "for step in range(steps):\n"
        "    X, target = make_batch()\n"
        "    context, weights = head(X)\n"
        "    out = scored(context @ readout)\n"
        "    loss = F.cross_entropy(out.reshape(-1, vocab), target.reshape(-1))\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
        "    losses.append(loss.item())\n\n"
        "print(f\"loss {losses[0]:.4f} at step 0, {losses[-1]:.4f} at step {steps - 1}\")\n";
  return py.str();
}

}  // namespace attnlab
