#!/usr/bin/python3
"""Runs the program `attention-lab code` writes for each scenario and checks that it computes
the same stages as `attention-lab dump` (X, Q, K, V, Q_rot and K_rot with RoPE, scores, logits, weights, weights_dropped, sink,
context, var_K), to |a - b| <= 1e-5 + 1e-5 |b| (float32 summation order; a NumPy program computes in
float64 from the same draws). A "dtype": "float64" scenario (the dump says so) is held to
1e-12 + 1e-10 |b|, and its program's PyTorch tensors must be torch.float64. A "bfloat16" or
"float16" scenario's program computes each stage in float32 and stores it (its stored()): every
stage the app stores must hold numbers of the dtype in the program too (a stage left unstored
fails), and agree with the app's to the dtype's rounding: a float32 summation order that differs
may round a value to the neighbouring number of the dtype, and that one unit in the last place
travels on, so each stage is held to 2 units in the last place of its largest value
(2 * 2**-7 * max|b| in bfloat16, 2 * 2**-10 * max|b| in float16), and at least 90% of the
values of a stored stage must be the app's exactly.

The program is PyTorch, or NumPy for scenarios with input.generator "numpy". Registered as the
ctests codegen_runs_in_pytorch and codegen_runs_in_numpy; a scenario whose library this Python
lacks is skipped, and the run exits 77 (skipped) when every scenario was, since the suite must
run without torch and numpy. Run with Debian's interpreter: /usr/bin/python3
tools/check_codegen.py [--fresh N] CLI SCENARIO_OR_PRESET...
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    torch = None
try:
    import numpy as np
except ImportError:
    np = None

STAGES = ("X", "Q", "K", "V", "Q_rot", "K_rot", "scores", "logits", "weights", "weights_dropped", "sink", "context",
          "var_K")
# --fresh N: each program also runs N times, each in a fresh interpreter (python3 program.py),
# as a learner runs it: torch seeds its generator at random when it is imported and NumPy from
# the operating system, so only a program that pins every seed gives the app's numbers each
# time (the unseeded scenarios of issue 33).
DUMP_STAGES = """
import json as _json
def _plain(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return str(v) if v != v or v in (float("inf"), float("-inf")) else v
print("STAGES " + _json.dumps({n: _plain(v) for n, v in globals().items() if n in %r}))
""" % (STAGES,)


def array(v):
    def conv(x):  # "inf", "-inf" and "nan" are strings in a dump; float() reads them
        return [conv(y) for y in x] if isinstance(x, list) else float(x)
    return np.array(conv(v), dtype=np.float64)


def as_numpy(value):
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().to(torch.float64).numpy()
    return np.asarray(value, dtype=np.float64)


# One unit in the last place relative to a value (its largest, at the bottom of a binade).
LOW_ULP = {"bfloat16": 2.0 ** -7, "float16": 2.0 ** -10}


def stored_as(a, dtype):
    """float64 array `a` rounded to float32, then to `dtype` ("bfloat16" / "float16"), and
    widened back: by torch's own conversion, or without torch by NumPy's float16 and, for
    bfloat16, float32's bits rounded to their top 16 (nearest, ties to even)."""
    x = np.ascontiguousarray(a, dtype=np.float64).astype(np.float32)
    if torch is not None:
        return torch.from_numpy(x).to(getattr(torch, dtype)).double().numpy()
    if dtype == "float16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.view(np.uint32)
    bits = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(x), x, bits.view(np.float32)).astype(np.float64)


def compare_low(name, got, want, dtype, stored):
    """compare() for a bfloat16 / float16 stage (see the module's docstring); `stored`: the app
    stores this stage in the dtype (all but var_K and the upcast softmax's weights)."""
    # As float32: the dump writes each value's shortest float32 text.
    got, want = got.squeeze().astype(np.float32), want.squeeze().astype(np.float32)
    if got.shape != want.shape:
        return f"{name}: shape {tuple(got.shape)}, app {tuple(want.shape)}"
    if stored and not np.array_equal(got, stored_as(got, dtype), equal_nan=True):
        return f"{name}: not stored in {dtype} by the program"
    same_nonfinite = np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(
        np.isinf(got), np.isinf(want)) and np.array_equal(got[np.isinf(got)], want[np.isinf(want)])
    fin = np.isfinite(want) & np.isfinite(got)
    if not fin.any():
        return None if same_nonfinite else f"{name}: nan / inf cells differ"
    g, w = got[fin], want[fin]
    diff = np.abs(g - w).max()
    exact = np.mean(g == w)
    # A stage kept in float32 (var_K, the upcast weights) is held to the tolerance alone.
    if same_nonfinite and diff <= 2 * LOW_ULP[dtype] * np.abs(w).max() and (
            exact >= 0.9 or not stored):
        return None
    return (f"{name}: differs (largest difference {diff:.3g}, {100 * exact:.0f}% exact"
            + ("" if same_nonfinite else ", nan / inf cells differ") + ")")


def compare(name, got, want, tol=1e-5):
    got, want = got.squeeze(), want.squeeze()
    if got.shape != want.shape:
        return f"{name}: shape {tuple(got.shape)}, app {tuple(want.shape)}"
    same_nonfinite = np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(
        np.isinf(got), np.isinf(want)) and np.array_equal(got[np.isinf(got)], want[np.isinf(want)])
    fin = np.isfinite(want)
    close = np.allclose(got[fin], want[fin], rtol=tol, atol=tol * 1e-2 if tol < 1e-5 else tol)
    if same_nonfinite and close:
        return None
    diff = np.abs(got[fin] - want[fin]).max() if fin.any() else float("nan")
    return f"{name}: differs (largest difference {diff:.3g})"


def unwrap(scenario):
    """A golden file of tests/golden wraps the scenario: unwrap it into a temporary file."""
    if scenario.endswith(".json"):
        doc = json.load(open(scenario))
        if "scenario" in doc:
            tmp = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(doc["scenario"], tmp)
            tmp.close()
            return tmp.name
    return scenario


def check(cli, scenario):
    """None when the program's library is missing, else the list of differences."""
    unwrapped = unwrap(scenario)
    try:
        return check_file(cli, unwrapped)
    finally:
        if unwrapped != scenario:
            os.unlink(unwrapped)  # the temporary unwrap() made


def check_file(cli, scenario):
    """check() of a scenario file that is not wrapped."""
    code = subprocess.run([cli, "code", scenario], check=True, capture_output=True, text=True).stdout
    needs = "numpy" if "import numpy as np" in code else "torch"
    if np is None or (needs == "torch" and torch is None):
        return None
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([cli, "dump", scenario, "-o", f.name], check=True)
        dump = json.load(open(f.name))
    env = {}
    exec(compile(code, scenario + " (generated)", "exec"), env)
    # The upcast softmax's weights are float32 in a bfloat16 / float16 run, not stored.
    upcast = scenario.endswith(".json") and json.load(open(scenario)).get("scaling", {}).get(
        "softmax_dtype") == "float32"
    bad = compare_stages(env, dump, upcast)
    for run in range(FRESH):
        with tempfile.NamedTemporaryFile("w", suffix=".py") as py:
            py.write(code + DUMP_STAGES)
            py.flush()
            out = subprocess.run([sys.executable, py.name], check=True, capture_output=True,
                                 text=True).stdout
        stages = json.loads(out[out.rindex("STAGES ") + 7:])
        bad += [f"fresh run {run + 1}: {b}" for b in compare_stages(
            {n: array(v) for n, v in stages.items()}, dump, upcast)]
    return bad


def compare_stages(env, dump, upcast=False):
    """The differences between the program's variables `env` and the app's `dump`; `upcast`:
    the scenario's scaling.softmax_dtype is "float32"."""
    bad = []
    for name in STAGES:
        if name not in dump:
            if name in env:
                bad.append(f"{name}: the program defines it but the app has no such stage")
            continue
        if name not in env:
            bad.append(f"{name}: missing from the program")
            continue
        f64 = dump.get("dtype") == "float64"
        if f64 and torch is not None and isinstance(env[name], torch.Tensor) and \
                env[name].dtype != torch.float64:
            bad.append(f"{name}: {env[name].dtype} in a float64 scenario")
        low = dump.get("dtype") in LOW_ULP
        if low:
            stored = name != "var_K" and not (upcast and name in ("weights", "weights_dropped", "sink"))
            diff = compare_low(name, as_numpy(env[name]), array(dump[name]), dump["dtype"], stored)
        else:
            diff = compare(name, as_numpy(env[name]), array(dump[name]), 1e-10 if f64 else 1e-5)
        if diff:
            bad.append(diff)
    return bad


FRESH = 0


def main():
    global FRESH
    args = sys.argv[1:]
    if args[:1] == ["--fresh"]:
        FRESH, args = int(args[1]), args[2:]
    cli, scenarios = args[0], args[1:]
    failures = skipped = 0
    if torch is not None:
        torch.set_printoptions(profile="short")
    for s in scenarios:
        # The generated program prints; keep the output of the check readable.
        with contextlib.redirect_stdout(io.StringIO()):
            bad = check(cli, s)
        if bad is None:
            print("skip " + s + " (no torch or numpy for " + sys.executable + ")")
            skipped += 1
            continue
        print(("FAIL " if bad else "ok   ") + s + ("".join("\n     " + b for b in bad)))
        failures += bool(bad)
    ran = len(scenarios) - skipped
    print(f"{ran - failures}/{ran} generated programs reproduce the app's stages")
    if ran == 0:
        sys.exit(77)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
