#!/usr/bin/python3
"""PyTorch CPU reference timing for the single-head causal attention pipeline.

Measured cases (float32, d = 64, batch 1, under torch.no_grad()):

  * "full recompute T=<T>" for T in {64, 256, 1024, 2048}: seed the RNG, draw
    x ~ randn(1, T, d), create three bias-free nn.Linear(d, d) layers (query,
    key, value -- their initialisation is part of the timed work, mirroring
    the C++ engine which redraws them), project Q/K/V, scores = Q @ K^T,
    divide by sqrt(d), apply the causal mask (masked_fill with -inf), softmax
    over the last dim, and context = weights @ V. The T x T lower-triangular
    mask is constant, so it is built once outside the timed region.

  * "multiplier change only T=2048": starting from precomputed scores and V,
    logits = scores * 1.5 / sqrt(d), then mask, softmax and context.

Each case is warmed up, then run repeatedly; the median wall time (ms) is
reported, once with torch.set_num_threads(1) and once with 2 threads.
The result is printed as a markdown table.

Run with Debian's interpreter (the one that has torch installed):

    /usr/bin/python3 tools/bench_torch.py

The whole run takes well under two minutes on a 2-core machine.
"""

import math
import statistics
import time

import torch
from torch import nn

D = 64
SEQ_LENS = (64, 256, 1024, 2048)
MULT_T = 2048
THREAD_COUNTS = (1, 2)
WARMUP = 3
REPEATS = 30


def full_recompute(T, mask):
    """One complete pass: inputs, weights, projections, attention."""
    torch.manual_seed(0)
    x = torch.randn(1, T, D)
    q_proj = nn.Linear(D, D, bias=False)
    k_proj = nn.Linear(D, D, bias=False)
    v_proj = nn.Linear(D, D, bias=False)
    q = q_proj(x)
    k = k_proj(x)
    v = v_proj(x)
    scores = q @ k.transpose(-2, -1)
    logits = scores / math.sqrt(D)
    logits = logits.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(logits, dim=-1)
    return weights @ v


def multiplier_only(scores, v, mask):
    """Rescale existing scores and redo only mask, softmax and context."""
    logits = scores * 1.5 / math.sqrt(D)
    logits = logits.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(logits, dim=-1)
    return weights @ v


def median_ms(fn, warmup=WARMUP, repeats=REPEATS):
    """Median wall-clock time of fn() in milliseconds after warm-up calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def build_cases():
    """Return an ordered list of (label, zero-arg callable)."""
    cases = []
    for T in SEQ_LENS:
        mask = torch.tril(torch.ones(T, T))
        cases.append((f"full recompute T={T}",
                      lambda T=T, mask=mask: full_recompute(T, mask)))

    # Precompute scores and V for the multiplier case (not timed).
    mask = torch.tril(torch.ones(MULT_T, MULT_T))
    torch.manual_seed(0)
    x = torch.randn(1, MULT_T, D)
    q_proj = nn.Linear(D, D, bias=False)
    k_proj = nn.Linear(D, D, bias=False)
    v_proj = nn.Linear(D, D, bias=False)
    scores = q_proj(x) @ k_proj(x).transpose(-2, -1)
    v = v_proj(x)
    cases.append((f"multiplier change only T={MULT_T}",
                  lambda: multiplier_only(scores, v, mask)))
    return cases


def main():
    torch.set_default_dtype(torch.float32)
    original_threads = torch.get_num_threads()
    results = {}
    with torch.no_grad():
        cases = build_cases()
        for n in THREAD_COUNTS:
            torch.set_num_threads(n)
            for label, fn in cases:
                results[(label, n)] = median_ms(fn)
    torch.set_num_threads(original_threads)

    header = "| case | " + " | ".join(f"threads={n} ms" for n in THREAD_COUNTS) + " |"
    print(f"torch {torch.__version__}, float32, d={D}, "
          f"median of {REPEATS} runs after {WARMUP} warm-up")
    print()
    print(header)
    print("|" + "---|" * (len(THREAD_COUNTS) + 1))
    for label, _ in cases:
        cells = " | ".join(f"{results[(label, n)]:.3f}" for n in THREAD_COUNTS)
        print(f"| {label} | {cells} |")


if __name__ == "__main__":
    main()
