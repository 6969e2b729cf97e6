#!/usr/bin/python3
"""Runs the programs `attention-lab code SCENARIO --loop decode|tiled` writes and checks that
their loops reproduce the JSON of `attention-lab decode` and `attention-lab tiled`: the decode's
context and, per step, "first", "t", "keys", "cache_len", "evicted" (equal) and "weights" (and
"sink" with a sink); the tiled pass's context, "sink" (with a sink), "skipped_tiles" and, per
tile, "batch", "head", "rows", "keys", "skipped" (equal) and "m", "l", "rescale", "O". Numbers to |a - b| <= 1e-5 + 1e-5 |b| (float32: the
program sums in its own order; a NumPy program computes in float64), 1e-12 + 1e-10 |b| for a
"dtype": "float64" scenario (as tools/check_codegen.py). The program's own printed
max_abs_diff against its full computation must be within the same tolerance when the app's is.

A bfloat16 / float16 scenario's loops store what the app stores (the program's stored()): the
decode's scores, logits, weights (unless scaling.softmax_dtype "float32") and context, the
tiles' P before P @ V and O / l. Each value is held to check_codegen.py's rule for the dtype (2
units in the last place of the largest value; at least 90% of a stored one's values the app's
exactly); the tiles' m, l, rescale and O and the sink's share (float32) to the 2 units alone. The
printed max_abs_diff must then be within 2 units of the context's largest value of the app's.
The settings: a golden of tests/golden/decode carries its P, C, Br and Bc; any other scenario
or preset runs with P = 2, C = 1, Br = 2, Bc = 3. A scenario whose library this Python lacks is
skipped; exit 77 when every one was. Registered as the ctest codegen_loops_reproduce_cli. Run
with Debian's interpreter: /usr/bin/python3 tools/check_loop_codegen.py CLI SCENARIO_OR_PRESET...
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_codegen import LOW_ULP, array, as_numpy, compare, compare_low, unwrap, np, torch  # noqa: E402

DEFAULTS = {"prefill": 2, "chunk": 1, "block_q": 2, "block_k": 3}
EXACT = {"decode": ("first", "t", "keys", "cache_len", "evicted"),
         "tiled": ("batch", "head", "rows", "keys", "skipped")}
NUMBERS = {"decode": ("weights",), "tiled": ("m", "l", "rescale", "O")}


def settings(scenario):
    """P, C, Br, Bc of a decode golden, else the defaults."""
    out = dict(DEFAULTS)
    if scenario.endswith(".json"):
        doc = json.load(open(scenario))
        for part in ("decode", "tiled"):
            out.update({k: v for k, v in doc.get(part, {}).items() if k in DEFAULTS})
    return out


def plain(value):
    """A program's value as Python lists and numbers (tensors and arrays to lists)."""
    return value.tolist() if hasattr(value, "tolist") else value


def softmax_float32(scenario):
    """Whether a scenario file keeps its weights in float32 (scaling.softmax_dtype)."""
    if not scenario.endswith(".json"):
        return False
    return json.load(open(scenario)).get("scaling", {}).get("softmax_dtype") == "float32"


def check_loop(cli, scenario, loop, opt):
    """None when the program's library is missing, else the list of differences."""
    flags = (["--prefill", str(opt["prefill"]), "--chunk", str(opt["chunk"])] if loop == "decode"
             else ["--block-q", str(opt["block_q"]), "--block-k", str(opt["block_k"])])
    proc = subprocess.run([cli, "code", scenario, "--loop", loop] + flags, capture_output=True, text=True)
    if proc.returncode != 0:
        return [f"code --loop {loop}: exit {proc.returncode}, {proc.stderr.strip()!r}"]
    code = proc.stdout
    if np is None or ("import numpy as np" not in code and torch is None):
        return None
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([cli, loop, scenario] + flags + ["-o", f.name], check=True)
        app = json.load(open(f.name))
    env = {}
    exec(compile(code, scenario + " (generated " + loop + ")", "exec"), env)
    dtype = app["dtype"]
    tol = 1e-10 if dtype == "float64" else 1e-5
    low = dtype in LOW_ULP

    def compare_as(name, got, want, stored):
        """compare(), or for bfloat16 / float16 compare_low (`stored`: the app stores it)."""
        return compare_low(name, got, want, dtype, stored) if low else compare(name, got, want, tol)

    stored = loop == "decode" and not softmax_float32(scenario)  # the decode's weights are stored
    bad = []
    diff = compare_as("context", as_numpy(env[loop + "_context"]), array(app["context"]), True)
    if diff:
        bad.append(diff)
    steps = env["decode_steps" if loop == "decode" else "tile_steps"]
    if len(steps) != len(app["steps"]):
        return bad + [f"{len(steps)} steps, app {len(app['steps'])}"]
    if "sink" in app:  # what the sink took of each row after the last tile
        diff = compare_as("sink", as_numpy(env["tiled_sink"]), array(app["sink"]), False)
        if diff:
            bad.append(diff)
    if loop == "tiled" and env["skipped_tiles"] != app["skipped_tiles"]:
        bad.append(f"skipped_tiles {env['skipped_tiles']}, app {app['skipped_tiles']}")
    for n, (got, want) in enumerate(zip(steps, app["steps"])):
        for key in EXACT[loop]:
            if plain(got[key]) != want[key]:
                bad.append(f"step {n} {key}: {plain(got[key])}, app {want[key]}")
        for key in NUMBERS[loop] + (("sink",) if "sink" in want else ()):
            diff = compare_as(f"step {n} {key}", as_numpy(got[key]), array(want[key]), stored)
            if diff:
                bad.append(diff)
    app_diff = float(app["max_abs_diff"])
    if low:
        ulps = 2 * LOW_ULP[dtype] * float(np.nanmax(np.abs(array(app["context"]))))
        if not env["max_abs_diff"] <= app_diff + ulps:
            bad.append(f"printed max_abs_diff {env['max_abs_diff']}, app {app_diff}")
    elif app_diff <= tol and not env["max_abs_diff"] <= tol:
        bad.append(f"printed max_abs_diff {env['max_abs_diff']}, app {app_diff}")
    return bad


def main():
    cli, scenarios = sys.argv[1], sys.argv[2:]
    failures = skipped = ran = 0
    for s in scenarios:
        unwrapped = unwrap(s)
        try:
            for loop in ("decode", "tiled"):
                with contextlib.redirect_stdout(io.StringIO()):
                    bad = check_loop(cli, unwrapped, loop, settings(s))
                if bad is None:
                    print("skip " + s + " (no torch or numpy for " + sys.executable + ")")
                    skipped += 1
                    continue
                ran += 1
                print(("FAIL " if bad else "ok   ") + loop + " " + s +
                      "".join("\n     " + b for b in bad))
                failures += bool(bad)
        finally:
            if unwrapped != s:
                os.unlink(unwrapped)
    print(f"{ran - failures}/{ran} generated loops reproduce the app's decode and tiled JSON")
    sys.exit(77 if ran == 0 else 1 if failures else 0)


if __name__ == "__main__":
    main()
