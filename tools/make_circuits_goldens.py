#!/usr/bin/python3
"""Goldens for the induction-head lesson (core/include/attnlab/lessons/circuits.h), by real PyTorch.

Run with Debian's PyTorch:  /usr/bin/python3 tools/make_circuits_goldens.py [--run STEPS]

Writes tests/golden/circuits/step1_<task>.json: the first training batch (token ids), the step-1
loss and the loss with each head zero-ablated, for each task (seed 5: 2 heads, d_model 32, T 31,
batch 16); for the variable task also the initial weights, the gradient of every parameter
(autograd) and the weights after one torch.optim.AdamW step (the model is the same for every
task). tests/circuits_test.cpp draws, trains and compares.

With --run STEPS it instead trains the default run (variable task, seed 0) for STEPS steps and
prints the lines `attention-lab circuits` prints, to compare the curves by eye.

This is the oracle written independently of the app: the same model, draws and update as
circuits.h documents, in plain PyTorch (the program `attention-lab circuits --code` prints is the
app's own rendering of it, checked against the app by tests/circuits_codegen_test.sh).
"""
import json
import math
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "golden", "circuits")
VOCAB, T, BATCH, LR, WD, EVAL = 28, 31, 16, 1e-2, 0.01, 64
BOS = VOCAB


class AttnOnly(nn.Module):
    """Token and position embeddings, attention-only layers with a residual stream, unembedding."""

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

    def forward(self, ids, ablate=None):
        B, T_, D = ids.shape[0], ids.shape[1], self.embed.weight.shape[1]
        H, dh = self.heads, D // self.heads
        x = self.embed(ids) + self.pos.weight[:T_]
        causal = torch.ones(T_, T_, dtype=torch.bool).triu(1)
        patterns = []
        for l, layer in enumerate(self.layers):
            q, k, v = (m(x).view(B, T_, H, dh).transpose(1, 2) for m in (layer.q, layer.k, layer.v))
            scores = (q @ k.transpose(-1, -2) / math.sqrt(dh)).masked_fill(causal, float("-inf"))
            a = torch.softmax(scores, dim=-1)
            patterns.append(a)
            z = a @ v  # B, H, T, dh
            if ablate is not None and ablate[0] == l:
                z = z.clone()
                z[:, ablate[1]] = 0
            x = x + layer.o(z.transpose(1, 2).reshape(B, T_, D))
        return self.unembed(x), patterns


def make_batch(task, n, generator=None):
    """(ids n x T, first-copy target positions, second-copy target positions, (query, previous
    occurrence) pairs), as circuits.h draws them."""
    ids = torch.randint(0, VOCAB, (n, T), generator=generator)
    first, second, pairs = [], [], []
    if task == "planted":
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
    else:
        if task == "fixed":
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


def loss_of(logits, ids):
    return F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), ids[:, 1:].reshape(-1))


def new_model(seed, d_model, heads):
    torch.manual_seed(seed)
    return AttnOnly(d_model, heads)


def scores(model, ids, first, second, pairs):
    with torch.no_grad():
        logits, patterns = model(ids)
        logp = torch.log_softmax(logits, dim=-1)

        def mean_loss(targets):
            vals = [-logp[e, t - 1, ids[e, t]] for e in range(len(targets)) for t in targets[e]]
            return float(torch.stack(vals).double().mean())

        prev = [float(patterns[0][:, h].diagonal(-1, -2, -1).double().mean())
                for h in range(model.heads)]
        prefix = []
        for h in range(model.heads):
            vals = [patterns[1][e, h, q, p + 1] for e in range(len(pairs)) for q, p in pairs[e]]
            prefix.append(float(torch.stack(vals).double().mean()))
        D = model.embed.weight.shape[1]
        dh = D // model.heads
        copying = []
        layer = model.layers[1]
        for h in range(model.heads):
            ov = (model.embed.weight[:VOCAB] @ layer.v.weight[h * dh:(h + 1) * dh].T
                  @ layer.o.weight[:, h * dh:(h + 1) * dh].T @ model.unembed.weight.T)
            copying.append(float((ov.argmax(dim=1) == torch.arange(VOCAB)).double().mean()))
        return mean_loss(first), mean_loss(second), prev, prefix, copying


def step1(task, seed, d_model, heads, with_tensors):
    model = new_model(seed, d_model, heads)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    ids, *_ = make_batch(task, BATCH)
    with torch.no_grad():  # the loss with one head zeroed (its z before W_O), each head in turn
        ablated = [[loss_of(model(ids, (l, h))[0], ids).item() for h in range(heads)]
                   for l in range(2)]
    logits, _ = model(ids)
    loss = loss_of(logits, ids)
    opt.zero_grad()
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
    opt.step()
    # Weights as the app holds them: x @ W (the transpose of nn.Linear.weight).
    def app_form(name, t):
        return (t if "embed.weight" == name or name == "pos.weight" else t.T).tolist()
    out = {"task": task, "seed": seed, "d_model": d_model, "heads": heads, "T": T,
           "batch": BATCH, "ids": ids.tolist(), "loss": loss.item(), "zero_ablated_loss": ablated}
    if with_tensors:
        for n, p in model.named_parameters():
            out["initial/" + n] = app_form(n, initial[n])
            out["grad/" + n] = app_form(n, grads[n])
            out["updated/" + n] = app_form(n, p.detach())
    return out


def run(steps, task="variable", seed=0, d_model=32, heads=2):
    torch.set_num_threads(1)
    model = new_model(seed, d_model, heads)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
    evalset = make_batch(task, EVAL, torch.Generator().manual_seed(seed + 1))
    for step in range(steps + 1):
        if step % 100 == 0 or step == steps:
            lf, ls, prev, prefix, copying = scores(model, *evalset)
            print(f"step {step:5d}  loss first {lf:.4f} second {ls:.4f}  prev-token "
                  + " ".join(f"{x:.3f}" for x in prev) + "  prefix-match "
                  + " ".join(f"{x:.3f}" for x in prefix) + "  copying "
                  + " ".join(f"{x:.3f}" for x in copying), flush=True)
        if step == steps:
            break
        ids, *_ = make_batch(task, BATCH)
        logits, _ = model(ids)
        loss = loss_of(logits, ids)
        opt.zero_grad()
        loss.backward()
        opt.step()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--run":
        task = sys.argv[3] if len(sys.argv) > 3 else "variable"
        run(int(sys.argv[2]), task)
        return
    os.makedirs(OUT, exist_ok=True)
    for task in ("variable", "fixed", "planted"):
        out = step1(task, 5, 32, 2, with_tensors=task == "variable")
        path = os.path.join(OUT, f"step1_{task}.json")
        with open(path, "w") as f:  # float32 values: 9 significant digits read back exactly
            f.write(re.sub(r"-?\d+\.\d+(e-?\d+)?", lambda m: f"{float(m.group(0)):.9g}",
                           json.dumps(out)) + "\n")
        print("wrote", path)


if __name__ == "__main__":
    main()
