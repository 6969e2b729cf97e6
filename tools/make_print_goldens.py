#!/usr/bin/python3
"""Writes tests/golden/print/: the text `print(tensor)` gives in real PyTorch (Debian's
python3-torch 1.13, default print options), for attention-lab's `show` and torch_print.h.

Run with Debian's interpreter, which has torch:   /usr/bin/python3 tools/make_print_goldens.py
The tests read the committed goldens and never need torch.

  tests/golden/print/scenarios/NAME.json  for each tests/golden/scenarios/NAME.json: every stage
                                          of its "expected" (the PyTorch oracle's values) as a
                                          float32 tensor in the shape the generated program
                                          (`attention-lab code`) holds it, and str() of it:
                                          {"X": {"shape": [...], "text": "tensor(...)"}, ...}
  tests/golden/print/edge_cases.json      targeted cases: [{"name", "shape", "bits" (float32 bit
                                          patterns, so nan and -0.0 are exact), "text"}]
  tests/golden/print/float64_cases.json   float64 arrays (dtype float64 scenarios): [{"name",
                                          "shape", "bits" (float64 bit patterns), "torch" (str()
                                          of the torch.float64 tensor), "numpy" (repr() of the
                                          ndarray with NumPy's default print options, null for
                                          0-d and empty arrays)}]
  tests/golden/print/float32_numpy_cases.json  the same arrays as float32 ndarrays (input.generator
                                          "numpy" scenarios in float32) and a few float32 edges:
                                          [{"name", "shape", "bits" (float32 bit patterns),
                                          "numpy" (repr(), ending in "dtype=float32)")}]
  tests/golden/print/float64_scalars.json repr(np.float64(x)), what a cell shows for q.var():
                                          [{"bits" (float64 bit pattern), "repr"}]
"""
import glob
import json
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(os.path.dirname(HERE), "tests", "golden")

PER_TOKEN = ("X", "Q", "K", "V", "Q_rot", "K_rot", "context")
PER_HEAD = ("scores", "logits", "weights", "weights_dropped", "sink")
MATRICES = ("W_query", "W_key", "W_value", "mask")


def floats(v):
    """Nested lists of numbers or "nan" / "inf" / "-inf" strings as a float32 tensor."""
    def conv(x):
        return [conv(y) for y in x] if isinstance(x, list) else float(x)
    return torch.tensor(conv(v), dtype=torch.float32)


LOW_PRECISION = {"bfloat16": torch.bfloat16, "float16": torch.float16}


# The stages scaling.softmax_dtype "float32" keeps in float32 in a low-precision scenario.
UPCAST = ("weights", "weights_dropped", "sink")


def scenario_stages(expected, dtype="float32", upcast=False):
    """Each stage of an oracle's output, shaped as the generated program holds it: B x T x d
    and B x H x T x T, without the batch and head dimensions when B = 1 and H = 1, and
    B x T x T (no head dimension) when H = 1."""
    B, H = len(expected["X"]), len(expected["scores"][0])
    flat = B == 1 and H == 1
    out = {}
    for name in PER_TOKEN:
        if name not in expected:  # Q_rot and K_rot: RoPE only
            continue
        t = floats(expected[name])
        out[name] = t[0] if flat else t
    for name in PER_HEAD:
        if name not in expected:
            continue
        t = floats(expected[name])
        out[name] = t[0, 0] if flat else t[:, 0] if H == 1 else t
    for name in MATRICES:
        out[name] = floats(expected[name])
    if dtype in LOW_PRECISION:  # every stage a torch.bfloat16 / torch.float16 tensor, not the mask
        out = {name: t if name == "mask" or (upcast and name in UPCAST) else t.to(LOW_PRECISION[dtype])
               for name, t in out.items()}
    return out


def edge_cases():
    g = torch.Generator().manual_seed(0)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    nan, inf = float("nan"), float("inf")
    t = torch.tensor
    cases = {
        "notebook_fixed": t([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]]),
        "dog_sci": t([[3.4023e-04, 0.5, 0.2], [0.1, 0.25, 0.125]]),
        "tiny_sci": t([[1e-5, 2e-6], [3e-7, -4e-8]]),
        "just_above_1e-4": t([[1.0001e-4, 0.05]]),
        "ratio_over_1000": t([[0.001, 1.5], [2.0, -0.0009]]),
        "big_sci": t([[1.5e9, 2.5], [3.25, 4.0]]),
        "big_fixed": t([[1234567.5, 2345678.25], [-3456789.0, 1000000.125]]),
        "over_1e8_fixed_ratio": t([[1.25e8, 2.5e8]]),
        "ints": t([[1.0, 2.0], [3.0, 4.0]]),
        "ints_negative": t([[-1.0, 20.0], [300.0, -4.0]]),
        "ints_ratio_sci": t([[1.0, 5000.0], [2.0, 3.0]]),
        "ints_big_sci": t([[2e8, 4e8]]),
        "tril_ones": torch.tril(torch.ones(5, 5)),
        "all_zero": torch.zeros(2, 3),
        "all_nan": t([[nan, nan]]),
        "nan_inf_fixed": t([[nan, 1.5], [inf, -inf]]),
        "nan_inf_ints": t([[nan, 1.0], [-inf, 0.0]]),
        "nan_inf_sci": t([[nan, 1e-6], [inf, 0.5]]),
        "masked_logits": t([[0.5, -inf, -inf], [0.25, -1.75, -inf], [1.0, 2.0, 3.0]]),
        "neg_zero_fixed": t([[-0.0, 0.5], [0.25, -0.0]]),
        "neg_zero_ints": t([[-0.0, 1.0], [2.0, 0.0]]),
        "neg_zero_only": t([[-0.0, -0.0]]),
        "neg_zero_sci": t([[-0.0, 1e-7], [0.5, 2.0]]),
        "rounds_to_neg_zero": t([[-0.00001, 0.5]]),
        "round_half": t([[0.00005, 0.12345, 0.99995, 1.00005]]),
        "wide_row_wraps": randn(2, 20),
        "wide_row_sci_wraps": randn(3, 15, scale=1e-3) * torch.tensor([1.0, 1e3] * 7 + [1.0]),
        "wide_3d_wraps": randn(2, 3, 16),
        "wide_4d_wraps": randn(2, 2, 2, 14),
        "wide_ints_wrap": torch.arange(60, dtype=torch.float32).reshape(2, 30),
        "stack_3d": randn(2, 3, 4),
        "stack_4d": randn(1, 2, 3, 3),
        "summarised_2000": randn(40, 50),
        "summarised_rows_only": randn(1001, 1),
        "summarised_cols_only": randn(2, 501),
        "summarised_3d": randn(4, 20, 30),
        "summarised_4d": randn(2, 2, 20, 20),
        "summarised_few_rows": randn(5, 5, 41),
        "summarised_hidden_tiny": torch.cat([randn(1, 600).abs() + 0.5, t([[1e-9]]),
                                             randn(1, 600).abs() + 0.5], 1),
        "exactly_1000": randn(10, 100, scale=10.0),
        "summarised_wide_values": randn(30, 40, scale=1e4),
        "vector": t([0.5, -1.25, 3.0]),
        "scalar": t(1.5),
        "empty_rows": torch.zeros(0, 3),
        "empty_vector": torch.zeros(0),
    }
    # A summarised print picks its format from the shown elements only: 1e-9 above sits in a
    # hidden column, so the print stays fixed-point.
    out = []
    for name, x in cases.items():
        x = x.to(torch.float32).contiguous()
        out.append({
            "name": name,
            "shape": list(x.shape),
            "bits": x.numpy().view(np.uint32).ravel().tolist(),
            "text": str(x),
        })
    return out


def float64_cases():
    """float64 arrays as torch prints them (", dtype=torch.float64") and as NumPy's repr()
    writes them (precision 8, maxprec, linewidth 75): digits a float32 cannot hold, NumPy's
    positional and scientific modes, padding, nan/inf, -0.0, wrapping and summaries."""
    cases = float64_arrays(np.random.RandomState(3))
    out = []
    for name, x in cases.items():
        x = np.ascontiguousarray(x, dtype=np.float64)
        out.append({
            "name": name,
            "shape": list(x.shape),
            "bits": x.view(np.uint64).ravel().tolist(),
            "torch": str(torch.from_numpy(x)),
            "numpy": repr(x) if x.ndim > 0 and x.size > 0 else None,
        })
    return out


def float32_numpy_cases():
    """float32 ndarrays as NumPy's repr() writes them: each value's shortest float32 digits,
    ", dtype=float32)" after the last bracket (on its own line when the last line is full).
    The float64 cases rounded to float32, then edges of float32's own."""
    cases = float64_arrays(np.random.RandomState(3))
    rs = np.random.RandomState(4)
    cases.update({
        "f32_tenths": np.array([[0.1, 0.2, 0.3], [0.7, 1.1, -2.2]]),
        "f32_notebook_weights_4x4": rs.rand(4, 4),
        "f32_dtype_fits_last_line": rs.randn(2, 5),
        "f32_dtype_wraps": rs.randn(2, 7),
        "f32_dtype_wraps_3d": rs.randn(2, 2, 7),
        "f32_ratio_near_1000": np.array([0.001, 1.0000001]),
        "f32_min_near_1e-4": np.array([0.0001, 0.05]),  # float32(1e-4) < 1e-4: scientific
        "f32_8_decimals_cut": np.array([[0.123456789, 1e-3 + 1e-9], [12.345678, 0.5]]),
        "f32_big": np.array([3e38, -1.0]),
    })
    out = []
    for name, x in cases.items():
        with np.errstate(over="ignore"):
            x = np.ascontiguousarray(x, dtype=np.float32)
        if x.ndim == 0 or x.size == 0:
            continue
        out.append({"name": name, "shape": list(x.shape),
                    "bits": x.view(np.uint32).ravel().tolist(), "numpy": repr(x)})
    return out


def float64_scalars():
    """np.float64 scalars around repr's switch between positional and scientific."""
    rs = np.random.RandomState(5)
    xs = [0.9583443565030865, 8.173378769074978, 1e-05, 0.0001, 0.00015, 9.99e-05, 1e16,
          9999999999999998.0, 1234567890123456.8, 123456789012345.6, 8.0, 0.0, -0.0, -2.5,
          1e300, -3e-300, 5e-324, float("nan"), float("inf"), -float("inf")]
    xs += list(rs.randn(10) * 10.0 ** rs.randint(-8, 20, 10))
    return [{"bits": int(np.float64(x).view(np.uint64)), "repr": repr(np.float64(x))}
            for x in xs]


def float64_arrays(rs):
    """The float64 cases, drawn from `rs` in a fixed order."""
    nan, inf = float("nan"), float("inf")
    a = np.array
    return {
        "notebook_q": rs.randn(4, 8),
        "notebook_weights": a([[1.0, 0.0, 0.0], [0.2277465012, 0.7722534988, 0.0],
                               [0.05635516, 0.70688764, 0.2367572]]),
        "mask_0_neginf": a([[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]),
        "logits_neginf": a([[0.98677191, -inf], [-1.62519173, -0.40411205]]),
        "short_digits": a([[0.5, 0.25], [1.0, 0.125]]),
        "ints": a([[1.0, 2.0], [30.0, -4.0]]),
        "sci_small_min": a([[9.24653097e-04, 1.18304853, -0.3136]]),
        "sci_tiny": a([[1e-5, 2.5e-7], [3.0, -4.0]]),
        "sci_big": a([[1.5e9, 2.5], [3.25, 4.0]]),
        "sci_exp_3_digits": a([[1e-120, 1.0], [2.5e200, 3.0]]),
        "mixed_lengths_sci": a([1e-05, 1.0, 123.5]),
        "round_at_8": a([[0.123456785, 0.999999996, 1.000000004]]),
        "big_fixed": a([[1234567.123456789, -2345678.5], [10.0, 99999999.9]]),
        "nan_inf": a([[nan, 1.5], [2.0, inf]]),
        "nan_inf_sci": a([[nan, 1e-6], [-inf, 0.5]]),
        "neg_zero": a([[-0.0, 0.5], [0.25, -0.0]]),
        "all_zero": np.zeros((2, 3)),
        "all_nan": a([[nan, nan]]),
        "vector": a([0.5, -1.25, 3.0]),
        "wide_row_wraps": rs.randn(2, 20),
        "wide_scaled": rs.randn(3, 12) * 10,
        "stack_3d": rs.randn(2, 3, 4),
        "stack_4d": rs.randn(1, 2, 3, 3),
        "wide_3d_wraps": rs.randn(2, 3, 16),
        "summarised": rs.randn(40, 30),
        "summarised_3d": rs.randn(4, 20, 30),
        "exactly_1000": rs.randn(10, 100),
    }


def main():
    torch.set_printoptions(profile="default")
    os.makedirs(os.path.join(GOLDEN, "print", "scenarios"), exist_ok=True)
    for path in sorted(glob.glob(os.path.join(GOLDEN, "scenarios", "*.json"))):
        golden = json.load(open(path))
        dtype = golden["scenario"].get("dtype", "float32")
        upcast = golden["scenario"].get("scaling", {}).get("softmax_dtype") == "float32"
        doc = {name: {"shape": list(t.shape), "text": str(t)}
               for name, t in scenario_stages(golden["expected"], dtype, upcast).items()}
        out = os.path.join(GOLDEN, "print", "scenarios", os.path.basename(path))
        with open(out, "w") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
    with open(os.path.join(GOLDEN, "print", "edge_cases.json"), "w") as f:
        json.dump(edge_cases(), f, indent=1)
        f.write("\n")
    with open(os.path.join(GOLDEN, "print", "float64_cases.json"), "w") as f:
        json.dump(float64_cases(), f, indent=1)
        f.write("\n")
    with open(os.path.join(GOLDEN, "print", "float64_scalars.json"), "w") as f:
        json.dump(float64_scalars(), f, indent=1)
        f.write("\n")
    with open(os.path.join(GOLDEN, "print", "float32_numpy_cases.json"), "w") as f:
        json.dump(float32_numpy_cases(), f, indent=1)
        f.write("\n")
    print("torch", torch.__version__, "wrote", os.path.join(GOLDEN, "print"))


if __name__ == "__main__":
    main()
