#!/usr/bin/python3
"""Runs the PyTorch program `attention-lab code` writes for each scenario and checks that it
computes the same stages as `attention-lab dump` (X, Q, K, V, scores, logits, weights,
weights_dropped, context), to |a - b| <= 1e-5 + 1e-5 |b| (float32 summation order).

Registered as a ctest; exits 77 (skipped) when this Python has no torch, since the suite must
run without it. Run with Debian's interpreter: /usr/bin/python3 tools/check_codegen.py CLI
SCENARIO_OR_PRESET...
"""
import contextlib
import io
import json
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("torch is not installed for", sys.executable, "- skipped")
    sys.exit(77)

STAGES = ("X", "Q", "K", "V", "scores", "logits", "weights", "weights_dropped", "context")


def tensor(v):
    def conv(x):  # "inf", "-inf" and "nan" are strings in a dump; float() reads them
        return [conv(y) for y in x] if isinstance(x, list) else float(x)
    return torch.tensor(conv(v), dtype=torch.float64)


def check(cli, scenario):
    if scenario.endswith(".json"):
        # A golden file of tests/golden/scenarios wraps the scenario: unwrap it.
        doc = json.load(open(scenario))
        if "scenario" in doc:
            tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(doc["scenario"], tmp)
            tmp.close()
            scenario = tmp.name
    code = subprocess.run([cli, "code", scenario], check=True, capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([cli, "dump", scenario, "-o", f.name], check=True)
        dump = json.load(open(f.name))
    env = {}
    exec(compile(code, scenario + " (generated)", "exec"), env)
    bad = []
    for name in STAGES:
        if name not in dump:
            if name in env:
                bad.append(f"{name}: the program defines it but the app has no such stage")
            continue
        if name not in env:
            bad.append(f"{name}: missing from the program")
            continue
        got = env[name].detach().to(torch.float64).squeeze()
        want = tensor(dump[name]).squeeze()
        if got.shape != want.shape:
            bad.append(f"{name}: shape {tuple(got.shape)}, app {tuple(want.shape)}")
            continue
        same_nonfinite = torch.equal(torch.isnan(got), torch.isnan(want)) and torch.equal(
            torch.isinf(got), torch.isinf(want))
        fin = torch.isfinite(want)
        close = torch.allclose(got[fin], want[fin], rtol=1e-5, atol=1e-5)
        if not (same_nonfinite and close):
            diff = (got[fin] - want[fin]).abs().max().item() if fin.any() else float("nan")
            bad.append(f"{name}: differs (largest difference {diff:.3g})")
    return bad


def main():
    cli, scenarios = sys.argv[1], sys.argv[2:]
    failures = 0
    torch.set_printoptions(profile="short")
    for s in scenarios:
        # The generated program prints; keep the output of the check readable.
        with contextlib.redirect_stdout(io.StringIO()):
            bad = check(cli, s)
        print(("FAIL " if bad else "ok   ") + s + ("".join("\n     " + b for b in bad)))
        failures += bool(bad)
    print(f"{len(scenarios) - failures}/{len(scenarios)} generated programs reproduce the app's stages")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
