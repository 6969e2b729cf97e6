#!/usr/bin/env python3
"""The memory limit is a promise about the process (docs/user-guide.md, "Limits"): every command,
run on the largest scenario it accepts, peaks under the limit, and one size more is refused up
front.

For each command the largest accepted size is found by bisection on the refusal alone (a refused
command exits 2 at once, naming the limit; an accepted one, probed with ATTNLAB_MEMORY_PROBE=1,
exits 0 once its checks have passed, before it allocates), then the
command runs on that size to the end and its peak resident memory is read with
getrusage(RUSAGE_CHILDREN).ru_maxrss in a fresh process whose only child is the command.

Usage: memory_test.py ATTENTION_LAB [--only NAME,...] [--table]
  --table   print the memory table of docs/performance.md (markdown) after the checks
The window's check needs a display: ctest runs this under xvfb-run. Standard library only.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

LIMIT = 2 * 1024 ** 3  # kMaxStageBytes, core/include/attnlab/model/scenario.h


def measure(argv, env):
    """(exit status, peak RSS in bytes, seconds) of argv run as the only child of a fresh
    Python process, read there with getrusage(RUSAGE_CHILDREN)."""
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
             "sys.stderr.buffer.write(r.stderr[-2000:])\n"
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-c", probe] + argv, capture_output=True, text=True,
                       env=env)
    seconds = time.monotonic() - start
    status, kib = r.stdout.split()
    return int(status), int(kib) * 1024, seconds, r.stderr


def refused(argv, env):
    """True when argv is refused for memory (exit 2 naming the limit); False when its memory
    checks pass. The command runs with ATTNLAB_MEMORY_PROBE=1, which makes it exit 0 as soon as
    its checks have passed, before it allocates (core/include/attnlab/model/scenario.h), so the
    verdict is read from the exit status alone: how long a command takes, on a loaded machine,
    decides nothing. The timeout only catches a hung command."""
    probe_env = dict(env, ATTNLAB_MEMORY_PROBE="1")
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=probe_env,
                       timeout=900)
    text = p.stderr.decode(errors="replace")
    if p.returncode == 2 and "limit" in text:
        return True
    if p.returncode != 0:
        raise AssertionError(f"{argv[1:3]}: exit {p.returncode}, not a memory refusal: {text}")
    return False


def largest_accepted(make_argv, lo, hi, env):
    """The largest n in [lo, hi) that make_argv(n) does not refuse; make_argv(hi) must be
    refused and make_argv(lo) accepted."""
    assert refused(make_argv(hi), env), f"size {hi} was not refused"
    assert not refused(make_argv(lo), env), f"size {lo} was refused"
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refused(make_argv(mid), env):
            hi = mid
        else:
            lo = mid
    return lo


def main():
    args = sys.argv[1:]
    app = os.path.abspath(args[0])
    only = None
    if "--only" in args:
        only = set(args[args.index("--only") + 1].split(","))
    tmp = tempfile.mkdtemp(prefix="attnlab-memory-")
    env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=os.path.join(tmp, "config"))

    def scenario(T, mask="none", d_in=1, init="identity", extra=None):
        s = {"format": "attention-lab/scenario@1",
             "input": {"source": "randn", "length": T, "d_in": d_in, "seed": 1},
             "projections": {"init": init} if init == "identity" else
             {"init": init, "d_out": d_in, "seed": 1},
             "mask": {"kind": mask}}
        s.update(extra or {})
        path = os.path.join(tmp, f"s-{T}-{mask}-{d_in}-{init}.json")
        with open(path, "w") as f:
            json.dump(s, f)
        return path

    out = lambda name: os.path.join(tmp, name)
    # name: (argv for size n, bisection range [lo, hi], what n is)
    commands = {
        "show": (lambda n: [app, "show", scenario(n)], (1000, 40000), "T"),
        "show (causal)": (lambda n: [app, "show", scenario(n, "causal")], (1000, 40000), "T"),
        "dump": (lambda n: [app, "dump", scenario(n), "-o", out("d.json")], (1000, 40000), "T"),
        "dump --loss-row": (lambda n: [app, "dump", scenario(n), "--loss-row", "1", "--loss-key", "0", "-o",
                                       out("d.json")], (1000, 40000), "T"),
        "code": (lambda n: [app, "code", scenario(n), "-o", out("p.py")], (1000, 40000), "T"),
        "export png": (lambda n: [app, "export", scenario(n), "--stage", "weights", "-o",
                                  out("w.png")], (1000, 40000), "T"),
        "export svg": (lambda n: [app, "export", scenario(n), "--stage", "weights", "-o",
                                  out("w.svg")], (1000, 40000), "T"),
        "export pdf": (lambda n: [app, "export", scenario(n), "--stage", "weights", "-o",
                                  out("w.pdf")], (1000, 40000), "T"),
        "export csv": (lambda n: [app, "export", scenario(n), "--stage", "weights", "-o",
                                  out("w.csv")], (1000, 40000), "T"),
        "export npy": (lambda n: [app, "export", scenario(n), "--stage", "weights", "-o",
                                  out("w.npy")], (1000, 40000), "T"),
        "train": (lambda n: [app, "train", scenario(128, d_in=n, init="linear"), "--steps", "2",
                             "--batch", "256", "--d-k", "1024", "-o", out("r.json")],
                  (16, 65536), "d_in (T 128, batch 256, d_k 1024)"),
        "decode": (lambda n: [app, "decode", scenario(n, "causal"), "--prefill", str(n // 2),
                              "--chunk", "64", "-o", out("dec.json")], (500, 40000), "T"),
        "tiled": (lambda n: [app, "tiled", scenario(n, "causal"), "--block-q", "64", "--block-k",
                             "64", "-o", out("til.json")], (500, 40000), "T"),
        "window": (lambda n: [app, scenario(n), "--frames", "5", "--no-autosave"],
                   (1000, 40000), "T"),
    }
    rows, failures = [], []
    for name, (make, (lo, hi), what) in commands.items():
        if only and name not in only:
            continue
        # The window and code refuse through the scenario's own limit; both are found the same
        # way (the window is judged by dump's refusal: it shows no message on stderr).
        probe = (lambda n: [app, "dump", scenario(n), "-o", out("d.json")]) \
            if name == "window" else make
        n = largest_accepted(probe, lo, hi, env)
        status, peak, seconds, err = measure(make(n), env)
        ok = status == 0 and peak < LIMIT
        rows.append((name, what, n, peak, seconds))
        print(f"{name:14s} {what} = {n}: exit {status}, peak {peak / 1e9:.2f} GB "
              f"({peak / LIMIT:.0%} of the limit), {seconds:.0f} s", flush=True)
        if not ok:
            failures.append(f"{name}: exit {status}, peak {peak} bytes: {err.strip()[-300:]}")
        for f in os.listdir(tmp):
            if f.endswith((".png", ".svg", ".pdf", ".csv", ".npy", ".json", ".py")) and \
                    not f.startswith("s-"):
                os.remove(os.path.join(tmp, f))
    if "--table" in args:
        print("\n| command | largest accepted | peak RSS | time |\n| --- | --- | --- | --- |")
        for name, what, n, peak, seconds in rows:
            print(f"| `{name}` | {what} = {n} | {peak / 1e9:.2f} GB | {seconds:.0f} s |")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
