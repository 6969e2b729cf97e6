#!/usr/bin/env python3
"""check_layers.py: every include in the core and in the app points down (or within its layer).

The core's layers, lowest first: base <- random <- model <- lessons <- python, figures <-
notebook (python and figures stand side by side and include neither each other). A file in
core/src/<layer>/ or core/include/attnlab/<layer>/ may include "attnlab/<lower or same>/..." or
"<lower or same>/..." (core/src's internal headers), and never the app.

The app stands on the whole core. Its layers, lowest first:
  cli          the command line: the subcommands and the window's options (window_options.h)
  gui/gfx      OpenGL: textures, the shader, screenshots, fonts
  gui/state    what the window holds (AppState), the actions as values, the session file
  gui/widgets  drawing helpers: widgets, plots, a heatmap slot, a stage's labels, the layout
  gui/actions  what changes the state: applying actions, refreshing views, exports, workers
  gui/panels   one panel per file: draws the state and emits actions
  gui/shell    the frame (window.cpp), --script and the test hooks
  main.cpp     the entry point
A file may include its own layer and the layers below it. Prints each include that points up
or sideways, and exits 1 if there is one. Usage: check_layers.py [REPO]
check_layers.py --self-test: the check of the check (a small tree with one include up in the
core, one in the app and one into the app from the core must give exactly those three).
"""
import pathlib
import re
import sys
import tempfile

CORE_RANK = {"base": 0, "random": 1, "model": 2, "lessons": 3, "python": 4, "figures": 4,
             "notebook": 5}
CORE_INCLUDE = re.compile(r'\s*#\s*include\s+"(?:attnlab/)?([a-z_]+)/')
APP_RANK = {"cli": 0, "gui/gfx": 1, "gui/state": 2, "gui/widgets": 3, "gui/actions": 4,
            "gui/panels": 5, "gui/shell": 6, "main": 7}
APP_INCLUDE = re.compile(r'\s*#\s*include\s+"(cli|gui/[a-z_]+)/')


def check(path, layer, rank, include, line_no, line):
    """The message for an include of `path` (in `layer`) that does not point down, or None."""
    m = include.match(line)
    if not m:
        return None
    target = m.group(1)
    if target not in rank:
        return f"{path}:{line_no}: includes {target}/, which is no layer: {line.strip()}"
    if rank[target] > rank[layer] or (rank[target] == rank[layer] and target != layer):
        return f"{path}:{line_no}: {layer} includes {target}: {line.strip()}"
    return None


def find_bad(repo):
    """Every include under `repo` that does not point down, as messages; None without files."""
    core = [p for root in ("core/src", "core/include/attnlab") for p in (repo / root).glob("*/*")]
    app = [p for p in (repo / "app").rglob("*") if p.suffix in (".h", ".cpp")]
    if not core or not app:
        return None
    bad = []
    for path in sorted(core):
        layer = path.parent.name
        if layer not in CORE_RANK:
            bad.append(f"{path}: folder {layer!r} is no layer of the core")
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if APP_INCLUDE.match(line):
                bad.append(f"{path}:{n}: the core includes the app: {line.strip()}")
            m = CORE_INCLUDE.match(line)
            if m and m.group(1) in CORE_RANK:
                msg = check(path, layer, CORE_RANK, CORE_INCLUDE, n, line)
                if msg:
                    bad.append(msg)
    for path in sorted(app):
        rel = path.relative_to(repo / "app")
        layer = "main" if len(rel.parts) == 1 else "/".join(rel.parts[:-1])
        if layer not in APP_RANK:
            bad.append(f"{path}: folder app/{layer} is no layer of the app")
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            msg = check(path, layer, APP_RANK, APP_INCLUDE, n, line)
            if msg:
                bad.append(msg)
    return bad, len(core), len(app)


def self_test() -> int:
    files = {
        "core/src/model/ok.cpp": '#include "attnlab/base/text.h"\n',
        "core/src/model/up.cpp": '#include "attnlab/figures/figure.h"\n',
        "core/src/base/app.cpp": '#include "gui/state/app_state.h"\n',
        "app/gui/panels/ok.cpp": '#include "gui/actions/apply.h"\n#include "cli/cli.h"\n',
        "app/gui/state/up.cpp": '#include "gui/panels/panels.h"\n',
        "app/main.cpp": '#include "gui/shell/window.h"\n',
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            path = pathlib.Path(tmp, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        bad, _, _ = find_bad(pathlib.Path(tmp))
    want = ["app/gui/state/up.cpp:1: gui/state includes gui/panels",
            "core/src/base/app.cpp:1: the core includes the app",
            "core/src/model/up.cpp:1: model includes figures"]
    found = sorted(b.split(tmp + "/", 1)[-1] for b in bad)
    ok = len(found) == len(want) and all(f.startswith(w) for f, w in zip(found, want))
    print("check_layers --self-test: " + ("ok" if ok else "FAILED:\n" + "\n".join(found)))
    return 0 if ok else 1


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    found = find_bad(repo)
    if found is None:
        print(f"check_layers: no core or app files under {repo}", file=sys.stderr)
        return 2
    bad, cores, apps = found
    print("\n".join(bad + [f"check_layers: {cores} core and {apps} app files, "
                           f"{len(bad)} includes that do not point down"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
