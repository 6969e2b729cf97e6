#!/usr/bin/python3
"""`attention-lab circuits --code` runs in PyTorch and prints the app's lines (ctest
codegen_runs_circuits_in_pytorch; skipped, exit 77, without torch).

Usage: /usr/bin/python3 tools/check_circuits_codegen.py ATTENTION_LAB [STEPS]

For each task, the program of a STEPS-step run (default 200) is run here, and its lines are
compared with the app's own `circuits` lines for the same options: the step numbers exactly,
the losses within 2e-3 and the scores within 0.01 (float32 training, whose products sum in
another order than PyTorch's, agrees to rounding at first and the differences grow over the
steps: measured at 200 steps, every printed line identical; the default run's lines first differ
at step 400, by 3e-4 on a loss). Both columns are
printed, the app's first.
"""
import re
import subprocess
import sys

try:
    import torch  # noqa: F401
except ImportError:
    print("no torch in this Python: skipped")
    sys.exit(77)

LOSS_TOLERANCE, SCORE_TOLERANCE = 2e-3, 0.01


def numbers(line):
    return [float(x) for x in re.findall(r"-?\d+\.\d+|\d+", line)]


def main():
    app = sys.argv[1]
    steps = sys.argv[2] if len(sys.argv) > 2 else "200"
    failed = False
    for task in ("variable", "fixed", "planted"):
        args = [app, "circuits", "--task", task, "--steps", steps, "--seed", "1"]
        mine = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()
        program = subprocess.run(args + ["--code"], check=True, capture_output=True,
                                 text=True).stdout
        theirs = subprocess.run([sys.executable, "-c", program], check=True, capture_output=True,
                                text=True).stdout.splitlines()
        print(f"--- {task}: the app, then PyTorch")
        if len(mine) != len(theirs):
            print(f"FAIL: {len(mine)} lines against {len(theirs)}")
            failed = True
            continue
        for a, b in zip(mine, theirs):
            print("  app   " + a)
            print("  torch " + b)
            na, nb = numbers(a), numbers(b)
            if len(na) != len(nb) or na[0] != nb[0]:
                print("FAIL: the lines differ in shape")
                failed = True
                continue
            worst_loss = max(abs(x - y) for x, y in zip(na[1:3], nb[1:3]))
            worst_score = max(abs(x - y) for x, y in zip(na[3:], nb[3:]))
            if worst_loss > LOSS_TOLERANCE or worst_score > SCORE_TOLERANCE:
                print(f"FAIL: loss differs by {worst_loss:.2e}, a score by {worst_score:.3f}")
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
