// codegen_circuits.cpp: the PyTorch program of an induction-head run (codegen_circuits.h). The
// program is one text with the run's options written in at its top; it follows circuits.h's
// model, draws and scores step for step.
#include "attnlab/python/codegen_circuits.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace attnlab {
namespace {

// Everything after the options: the model, the tasks, the scores, the loop.
constexpr const char* kProgram = R"PY(
VOCAB, T, EVAL = 28, 31, 64  # symbols A..Z . , (BOS is id 28); tokens; evaluation sequences
BOS = VOCAB


class AttnOnly(nn.Module):
    """Token and position embeddings, attention-only layers, residual stream, unembedding."""

    def __init__(self, d_model, heads, layers=2):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(VOCAB + 1, d_model)  # the symbols, then BOS
        self.pos = nn.Embedding(T, d_model)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            layer = nn.Module()
            layer.q = nn.Linear(d_model, d_model, bias=False)
            layer.k = nn.Linear(d_model, d_model, bias=False)
            layer.v = nn.Linear(d_model, d_model, bias=False)
            layer.o = nn.Linear(d_model, d_model, bias=False)
            self.layers.append(layer)
        self.unembed = nn.Linear(d_model, VOCAB, bias=False)

    def forward(self, ids):
        B, D = ids.shape[0], self.embed.weight.shape[1]
        H, dh = self.heads, D // self.heads
        x = self.embed(ids) + self.pos.weight  # the residual stream, B x T x D
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        patterns = []
        for layer in self.layers:
            q, k, v = (m(x).view(B, T, H, dh).transpose(1, 2) for m in (layer.q, layer.k, layer.v))
            scores = (q @ k.transpose(-1, -2) / math.sqrt(dh)).masked_fill(causal, float("-inf"))
            weights = torch.softmax(scores, dim=-1)  # B x H x T x T
            patterns.append(weights)
            z = (weights @ v).transpose(1, 2).reshape(B, T, D)
            x = x + layer.o(z)
        return self.unembed(x), patterns


def make_batch(n, generator=None):
    """n sequences of the task, with the first copy's and the second copy's target positions
    and the (query, previous occurrence) pairs the prefix-matching score looks at."""
    ids = torch.randint(0, VOCAB, (n, T), generator=generator)
    first, second, pairs = [], [], []
    if TASK == "planted":  # one [A][B] ... [A] pair: A at p and q, B at p + 1 and q + 1
        half = (T - 1) // 2
        p = torch.randint(1, half - 1, (n,), generator=generator)
        q = torch.randint(half, T - 1, (n,), generator=generator)
        rows = torch.arange(n)
        ids[rows, q] = ids[rows, p]
        ids[rows, q + 1] = ids[rows, p + 1]
        for e in range(n):
            first.append([int(p[e]) + 1])
            second.append([int(q[e]) + 1])
            pairs.append([(int(q[e]), int(p[e]))])
    else:  # random filler, then N random tokens from `start`, repeated to the end
        if TASK == "fixed":
            N = torch.full((n,), (T - 1) // 2, dtype=torch.long)
            start = torch.ones(n, dtype=torch.long)
        else:
            N = torch.randint(4, 16, (n,), generator=generator)
            start = 1 + torch.randint(0, 1 << 24, (n,), generator=generator) % (T - 2 * N)
        pos = torch.arange(T)
        s, N_ = start[:, None], N[:, None]
        # from start + N on, the sequence repeats with period N to the end
        ids = ids.gather(1, torch.where(pos >= s + N_, s + (pos - s) % N_, pos))
        for e in range(n):
            s_, n_ = int(start[e]), int(N[e])
            first.append(list(range(s_ + 1, s_ + n_)))
            second.append(list(range(s_ + n_ + 1, s_ + 2 * n_)))
            pairs.append([(q_, q_ - n_) for q_ in range(s_ + n_, s_ + 2 * n_)])
    ids[:, 0] = BOS
    return ids, first, second, pairs


def evaluate(model, ids, first, second, pairs):
    """Loss on each copy; previous-token (layer 0), prefix-matching and copying (layer 1)."""
    with torch.no_grad():
        logits, patterns = model(ids)
        logp = torch.log_softmax(logits, dim=-1)

        def mean_loss(targets):  # target t is predicted at row t - 1
            vals = [-logp[e, t - 1, ids[e, t]] for e in range(len(targets)) for t in targets[e]]
            return float(torch.stack(vals).double().mean())

        # weights[q, q - 1]: each token's attention to the one before it
        prev = [float(patterns[0][:, h].diagonal(-1, -2, -1).double().mean()) for h in range(HEADS)]
        # weights[q, p + 1]: the token AFTER the previous occurrence (q - N + 1), not q - N
        prefix = [float(torch.stack([patterns[1][e, h, q, p + 1] for e in range(len(pairs))
                                     for q, p in pairs[e]]).double().mean()) for h in range(HEADS)]
        # the OV circuit W_E W_V^h W_O^h W_U: does attending to t raise t's logit most?
        dh, layer = D_MODEL // HEADS, model.layers[1]
        copying = []
        for h in range(HEADS):
            ov = (model.embed.weight[:VOCAB] @ layer.v.weight[h * dh:(h + 1) * dh].T
                  @ layer.o.weight[:, h * dh:(h + 1) * dh].T @ model.unembed.weight.T)
            copying.append(float((ov.argmax(dim=1) == torch.arange(VOCAB)).double().mean()))
    return mean_loss(first), mean_loss(second), prev, prefix, copying


def line(step, loss_first, loss_second, prev, prefix, copying):
    numbers = lambda v: " ".join(f"{x:.3f}" for x in v)
    return (f"step {step:5d}  loss first {loss_first:.4f} second {loss_second:.4f}"
            f"  prev-token {numbers(prev)}  prefix-match {numbers(prefix)}"
            f"  copying {numbers(copying)}")


torch.set_num_threads(1)
torch.manual_seed(SEED)
model = AttnOnly(D_MODEL, HEADS)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
evalset = make_batch(EVAL, torch.Generator().manual_seed(SEED + 1))
print(line(0, *evaluate(model, *evalset)))
for step in range(1, STEPS + 1):
    ids, *_ = make_batch(BATCH)
    logits, _ = model(ids)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % EVAL_EVERY == 0 or step == STEPS:
        print(line(step, *evaluate(model, *evalset)))
)PY";

// x as Python's repr writes a float: the shortest of 15..17 significant digits that reads back.
std::string PythonFloat(double x) {
  char buf[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

}  // namespace

std::string GenerateCircuitsCode(const CircuitOptions& o) {
  CheckCircuitOptions(o);
  std::string s =
      "# An induction head forming: a two-layer attention-only transformer (Attention Lab,\n"
      "# `attention-lab circuits`). It prints the lines the app prints, from the same weights\n"
      "# and batches (PyTorch's CPU generator).\n"
      "import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";
  s += std::string("TASK = \"") + Name(o.task) + "\"  # variable, fixed (the trap) or planted\n";
  s += "STEPS, SEED, HEADS, D_MODEL = " + std::to_string(o.steps) + ", " + std::to_string(o.seed) +
       ", " + std::to_string(o.heads) + ", " + std::to_string(o.d_model) + "\n";
  s += "BATCH, LR, WEIGHT_DECAY, EVAL_EVERY = " + std::to_string(o.batch) + ", " +
       PythonFloat(o.lr) + ", " + PythonFloat(o.weight_decay) + ", " +
       std::to_string(o.eval_every) + "\n";
  return s + kProgram;
}

}  // namespace attnlab
