#!/usr/bin/python3
"""microgpt_reference.py: the project's own standard-library reference of Karpathy's microgpt.py
(the 200-line revision of February 2026), and the goldens of tests/microgpt_test.cpp.

It follows microgpt.py's parts, named as there: the Value class (its operators, log, exp, relu
and backward's depth-first topological order), matrix() with random.gauss(0, 0.08), linear,
softmax, rmsnorm, gpt, the training loop with Adam and the sampling loop with random.choices.
It is written to be run on chosen settings and to expose what a test compares (one step's
position losses, gradients and updated parameters), not as a copy of the script; the numbers
must nevertheless be the script's to the bit, which the default run's printed lines check
(tests/golden/microgpt/expected-default.log, from the script itself).

    python3 tools/microgpt_reference.py            # writes tests/golden/microgpt/*.json
    python3 tools/microgpt_reference.py --print [--input F] [--seed N] [--steps N] ...
                                                   # prints what the script prints

Needs CPython (3.11 as Debian's) and its standard library only.
"""
import argparse
import json
import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "tests", "golden", "microgpt")
NAMES = os.path.join(HERE, "..", "assets", "microgpt", "names.txt")

N_EMBD, N_HEAD, N_LAYER, BLOCK = 16, 4, 1, 16
HEAD_DIM = N_EMBD // N_HEAD


def bits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


class Node:
    """A scalar with its gradient (microgpt.py's Value): parents' ops record the partial
    derivative of the result with respect to each operand."""
    __slots__ = ("data", "grad", "kids", "partials")

    def __init__(self, data, kids=(), partials=()):
        self.data, self.grad, self.kids, self.partials = data, 0, kids, partials

    @staticmethod
    def lift(o):
        return o if isinstance(o, Node) else Node(o)

    def __add__(self, o):
        o = Node.lift(o)
        return Node(self.data + o.data, (self, o), (1, 1))

    def __mul__(self, o):
        o = Node.lift(o)
        return Node(self.data * o.data, (self, o), (o.data, self.data))

    def __pow__(self, k):
        return Node(self.data ** k, (self,), (k * self.data ** (k - 1),))

    def log(self):
        return Node(math.log(self.data), (self,), (1 / self.data,))

    def exp(self):
        return Node(math.exp(self.data), (self,), (math.exp(self.data),))

    def relu(self):
        return Node(max(0, self.data), (self,), (float(self.data > 0),))

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, o):
        return self + (-o)

    def __truediv__(self, o):
        return self * o ** -1

    def backward(self):
        # post-order of a depth-first walk from the loss, children in order, then the chain
        # rule from the loss back (Value.backward)
        order, seen, stack = [], set(), [(self, 0)]
        seen.add(id(self))
        while stack:
            v, i = stack.pop()
            if i < len(v.kids):
                stack.append((v, i + 1))
                c = v.kids[i]
                if id(c) not in seen:
                    seen.add(id(c))
                    stack.append((c, 0))
            else:
                order.append(v)
        self.grad = 1
        for v in reversed(order):
            for c, d in zip(v.kids, v.partials):
                c.grad += d * v.grad


def documents(path):
    with open(path) as f:
        text = f.read()
    return [line.strip() for line in text.strip().split("\n") if line.strip()]


class Run:
    def __init__(self, docs, seed):
        self.rng = random.Random(seed)
        self.docs = list(docs)
        self.rng.shuffle(self.docs)
        self.chars = sorted(set("".join(self.docs)))
        self.bos = len(self.chars)
        self.vocab = len(self.chars) + 1
        g = self.rng.gauss

        def matrix(rows, cols):
            return [[Node(g(0, 0.08)) for _ in range(cols)] for _ in range(rows)]

        self.w = {"wte": matrix(self.vocab, N_EMBD), "wpe": matrix(BLOCK, N_EMBD),
                  "lm_head": matrix(self.vocab, N_EMBD)}
        for layer in range(N_LAYER):
            for name, r, c in (("attn_wq", N_EMBD, N_EMBD), ("attn_wk", N_EMBD, N_EMBD),
                               ("attn_wv", N_EMBD, N_EMBD), ("attn_wo", N_EMBD, N_EMBD),
                               ("mlp_fc1", 4 * N_EMBD, N_EMBD), ("mlp_fc2", N_EMBD, 4 * N_EMBD)):
                self.w[f"layer{layer}.{name}"] = matrix(r, c)
        self.params = [p for m in self.w.values() for row in m for p in row]
        self.m = [0.0] * len(self.params)
        self.v = [0.0] * len(self.params)
        self.step_index = 0

    @staticmethod
    def linear(x, w):
        return [sum(wi * xi for wi, xi in zip(row, x)) for row in w]

    @staticmethod
    def softmax(logits):
        top = max(l.data for l in logits)
        e = [(l - top).exp() for l in logits]
        s = sum(e)
        return [ei / s for ei in e]

    @staticmethod
    def rmsnorm(x):
        mean_sq = sum(xi * xi for xi in x) / len(x)
        scale = (mean_sq + 1e-5) ** -0.5
        return [xi * scale for xi in x]

    def gpt(self, tok, pos, keys, vals):
        w = self.w
        x = self.rmsnorm([a + b for a, b in zip(w["wte"][tok], w["wpe"][pos])])
        for layer in range(N_LAYER):
            skip = x
            x = self.rmsnorm(x)
            q = self.linear(x, w[f"layer{layer}.attn_wq"])
            keys[layer].append(self.linear(x, w[f"layer{layer}.attn_wk"]))
            vals[layer].append(self.linear(x, w[f"layer{layer}.attn_wv"]))
            heads = []
            for h in range(N_HEAD):
                lo, hi = h * HEAD_DIM, (h + 1) * HEAD_DIM
                scores = [sum(q[lo + j] * k[lo + j] for j in range(HEAD_DIM)) / HEAD_DIM ** 0.5
                          for k in keys[layer]]
                a = self.softmax(scores)
                heads.extend(sum(a[t] * vals[layer][t][lo + j] for t in range(len(a)))
                             for j in range(HEAD_DIM))
            x = [a + b for a, b in zip(self.linear(heads, w[f"layer{layer}.attn_wo"]), skip)]
            skip = x
            x = self.linear(self.rmsnorm(x), w[f"layer{layer}.mlp_fc1"])
            x = self.linear([xi.relu() for xi in x], w[f"layer{layer}.mlp_fc2"])
            x = [a + b for a, b in zip(x, skip)]
        return self.linear(x, w["lm_head"])

    def train_step(self, num_steps):
        step = self.step_index
        doc = self.docs[step % len(self.docs)]
        toks = [self.bos] + [self.chars.index(c) for c in doc] + [self.bos]
        n = min(BLOCK, len(toks) - 1)
        keys, vals = [[] for _ in range(N_LAYER)], [[] for _ in range(N_LAYER)]
        per_pos = []
        for pos in range(n):
            probs = self.softmax(self.gpt(toks[pos], pos, keys, vals))
            per_pos.append(-probs[toks[pos + 1]].log())
        loss = (1 / n) * sum(per_pos)
        loss.backward()
        grads = [p.grad for p in self.params]
        lr = 0.01 * (1 - step / num_steps)
        b1, b2, eps = 0.85, 0.99, 1e-8
        for i, p in enumerate(self.params):
            self.m[i] = b1 * self.m[i] + (1 - b1) * p.grad
            self.v[i] = b2 * self.v[i] + (1 - b2) * p.grad ** 2
            m_hat = self.m[i] / (1 - b1 ** (step + 1))
            v_hat = self.v[i] / (1 - b2 ** (step + 1))
            p.data -= lr * m_hat / (v_hat ** 0.5 + eps)
            p.grad = 0
        self.step_index += 1
        return loss.data, [l.data for l in per_pos], grads

    def sample(self, temperature):
        keys, vals = [[] for _ in range(N_LAYER)], [[] for _ in range(N_LAYER)]
        tok, out = self.bos, []
        for pos in range(BLOCK):
            probs = self.softmax([l / temperature for l in self.gpt(tok, pos, keys, vals)])
            tok = self.rng.choices(range(self.vocab), weights=[p.data for p in probs])[0]
            if tok == self.bos:
                break
            out.append(self.chars[tok])
        return "".join(out)


def print_run(docs, seed, steps, temperature, samples):
    r = Run(docs, seed)
    print(f"num docs: {len(r.docs)}")
    print(f"vocab size: {r.vocab}")
    print(f"num params: {len(r.params)}")
    for s in range(steps):
        loss, _, _ = r.train_step(steps)
        print(f"step {s + 1:4d} / {steps:4d} | loss {loss:.4f}")
    print("\n--- inference (new, hallucinated names) ---")
    for i in range(samples):
        print(f"sample {i + 1:2d}: {r.sample(temperature)}")


SHORT = {"input": "short-input.txt", "seed": -7, "steps": 12, "temperature": 0.8, "samples": 6}


def write_goldens():
    # One step of the default run: the initial parameters' first and last, the first step's
    # position losses, every gradient and every updated parameter.
    r = Run(documents(NAMES), 42)
    init = [p.data for p in r.params]
    loss, per_pos, grads = r.train_step(1000)
    one = {"made_by": "tools/microgpt_reference.py", "seed": 42, "steps": 1000,
           "document": r.docs[0], "num_params": len(r.params),
           "init_params_bits": [bits(x) for x in init],
           "loss_bits": bits(loss), "position_loss_bits": [bits(x) for x in per_pos],
           "grads_bits": [bits(x) for x in grads],
           "params_after_bits": [bits(p.data) for p in r.params]}
    with open(os.path.join(GOLDEN, "one-step.json"), "w") as f:
        json.dump(one, f, indent=0)
        f.write("\n")
    # A short run on a small input (a long name past the block, a non-ASCII one, blank lines)
    # with a negative seed and another temperature.
    r = Run(documents(os.path.join(GOLDEN, SHORT["input"])), SHORT["seed"])
    losses = [r.train_step(SHORT["steps"])[0] for _ in range(SHORT["steps"])]
    samples = [r.sample(SHORT["temperature"]) for _ in range(SHORT["samples"])]
    short = dict(SHORT, made_by="tools/microgpt_reference.py", docs=r.docs,
                 losses_bits=[bits(x) for x in losses], losses_hex=[x.hex() for x in losses],
                 samples=samples, final_params_bits=[bits(p.data) for p in r.params])
    with open(os.path.join(GOLDEN, "short-run.json"), "w") as f:
        json.dump(short, f, indent=0, ensure_ascii=False)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--input", default=NAMES)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--temperature", type=float, default=0.5)
    ap.add_argument("--samples", type=int, default=20)
    a = ap.parse_args()
    if a.print:
        print_run(documents(a.input), a.seed, a.steps, a.temperature, a.samples)
    else:
        write_goldens()


if __name__ == "__main__":
    main()
