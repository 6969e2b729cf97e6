#!/usr/bin/env python3
"""check_layers.py: every include in the core points down (or within its own layer).

The core's layers, lowest first: base <- random <- model <- lessons <- python, figures (python
and figures stand side by side and include neither each other). A file in core/src/<layer>/ or
core/include/attnlab/<layer>/ may include "attnlab/<lower or same>/..." or "<lower or same>/..."
(core/src's internal headers). Prints each include that points up or sideways, and exits 1 if
there is one. Usage: check_layers.py [REPO]
"""
import pathlib
import re
import sys

RANK = {"base": 0, "random": 1, "model": 2, "lessons": 3, "python": 4, "figures": 4}
INCLUDE = re.compile(r'\s*#\s*include\s+"(?:attnlab/)?([a-z_]+)/')


def main() -> int:
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = [p for root in ("core/src", "core/include/attnlab") for p in (repo / root).glob("*/*")]
    if not files:
        print(f"check_layers: no core files under {repo}", file=sys.stderr)
        return 2
    bad = 0
    for path in sorted(files):
        layer = path.parent.name
        if layer not in RANK:
            print(f"{path}: folder {layer!r} is no layer of the core")
            bad += 1
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) not in RANK:
                continue
            target = m.group(1)
            if RANK[target] > RANK[layer] or (RANK[target] == RANK[layer] and target != layer):
                print(f"{path}:{n}: {layer} includes {target}: {line.strip()}")
                bad += 1
    print(f"check_layers: {len(files)} files, {bad} includes that do not point down")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
