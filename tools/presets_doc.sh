#!/bin/sh
# presets_doc.sh BINARY: writes docs/presets.md from `BINARY presets`, the preset registry's list
# (core/src/model/presets.cpp kRegistry) by course and chapter. cli_test's PresetsListsIdThenTitle
# fails when the page and the list differ.
set -eu
bin=${1:-build/app/attention-lab}
here=$(dirname "$0")/..
out="$here/docs/presets.md"
tmp="$out.tmp"
{
  echo "# The presets, by course and chapter"
  echo
  echo "The shipped scenarios in reading order, as \`attention-lab presets\` lists them and the"
  echo "window's Presets menu and Input picker show them: Raschka's chapter 3 section by section,"
  echo "the NumPy notebook, the dog-attacks-cat notebook, Karpathy's lecture, then today's attention,"
  echo "inference and training. The bug gallery's presets open from Presets > Bug gallery or the"
  echo "Compare view's Bug gallery, each beside its fix. Open one with \`attention-lab --preset ID\`."
  echo "Loaded from the menu or the picker, a preset of today's attention or of the gallery opens"
  echo "with the stage that makes its point in focus (Esc shows every stage again)."
  echo
  echo '```'
  "$bin" presets
  echo '```'
} >"$tmp"
mv "$tmp" "$out"
