#!/usr/bin/env bash
# Makes the screenshots of docs/ (docs/img/*.png) from the app's own --screenshot, under a
# virtual X server at 1280x800, so the guide shows the app as it is now. Run after a build:
#   tools/make_screenshots.sh [path/to/attention-lab]    (default: build/app/attention-lab)
# Each shot runs a short --script (the same commands the GUI tests use) in a fresh config
# folder, so no session or tour of yours is involved.
set -euo pipefail
cd "$(dirname "$0")/.."
app=$(realpath "${1:-build/app/attention-lab}")
out=docs/img
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shot NAME PRESET SCRIPT_LINES...: one window screenshot into docs/img/NAME.png
shot() {
  local name=$1 preset=$2
  shift 2
  printf '%s\n' "wait 2" "$@" "wait 4" >"$tmp/$name.script"
  XDG_CONFIG_HOME="$tmp/config" xvfb-run -a -s "-screen 0 1280x800x24" \
    "$app" --preset "$preset" --size 1280x800 --script "$tmp/$name.script" --screenshot "$out/$name.png" \
    --no-autosave
  echo "$out/$name.png"
}

shot main-window raschka-journey "hover weights 1 2"
shot causal-mask karpathy-head "mask causal" "head 1"
shot temperature raschka-journey "temperature 4" "row 1"
shot trick-view karpathy-trick "view trick"
shot compare-view raschka-journey "compare scaled" "view compare"
shot code-view dog-attacks-cat "view code"
shot tour raschka-journey "tour start" "tour next"
shot open-dialog raschka-journey "dialog open"
shot gradients-view raschka-journey "view gradients"
shot training-view train-scaling "view training" "train-run associative-recall 300 256" "train-wait" \
  "train-step 120" "hover train_unscaled 7 3"

# A figure as `attention-lab export` writes it (no window involved).
"$app" export dog-attacks-cat --stage weights -o "$out/export-weights.png"
echo "$out/export-weights.png"

# The loss curves of a head trained with and without 1/sqrt(d_k), as `attention-lab train` plots them.
"$app" train train-scaling --task associative-recall --steps 300 --d-k 256 -o "$out/training-curves.png"
echo "$out/training-curves.png"
