#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed binary run from another folder
# with nothing of the source tree: --version, show, dump, export. Checks every installed file
# (binary, desktop entry, icons, man page, AppStream metainfo, docs) and validates the desktop
# entry and the metainfo when desktop-file-utils / appstream are installed.
# usage: tools/check_install.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

for f in bin/attention-lab share/applications/attention-lab.desktop \
         share/bash-completion/completions/attention-lab \
         share/icons/hicolor/scalable/apps/attention-lab.svg \
         share/icons/hicolor/48x48/apps/attention-lab.png \
         share/icons/hicolor/256x256/apps/attention-lab.png \
         share/man/man1/attention-lab.1.gz share/mime/packages/attention-lab.xml \
         share/metainfo/io.github.attentionlab.AttentionLab.metainfo.xml \
         share/doc/attention-lab/copyright share/doc/attention-lab/README.md \
         share/doc/attention-lab/scenario-format.md share/doc/attention-lab/user-guide.md \
         share/doc/attention-lab/generator.md; do
  [ -s "$prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done
file "$prefix/share/icons/hicolor/64x64/apps/attention-lab.png" | grep "64 x 64" >/dev/null

# Run from an empty folder far from the source and build trees.
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
app="$prefix/bin/attention-lab"
[ "$("$app" --version | sed -n 1p)" = "attention-lab 0.1.0" ]
"$app" show raschka-journey --stage weights | grep "tensor(\[\[0.1551, 0.2104, 0.2059, 0.1413, 0.1074, 0.1799\]," >/dev/null
"$app" dump karpathy-head -o k.json
grep -q '"T":8' k.json
"$app" export dog-attacks-cat --stage weights -o w.png
file w.png | grep "PNG image data" >/dev/null
zcat "$prefix/share/man/man1/attention-lab.1.gz" | grep "^.SH SUBCOMMANDS" >/dev/null
# The man page and the completion come from the command line's definitions: every subcommand
# (train too) and the window's --size are in both.
for sub in dump presets variance show code train export; do
  zcat "$prefix/share/man/man1/attention-lab.1.gz" | grep -x ".SS $sub" >/dev/null
  grep -q "^    $sub) opts=" "$prefix/share/bash-completion/completions/attention-lab"
done
zcat "$prefix/share/man/man1/attention-lab.1.gz" | grep '^\\fB\\-\\-size\\fR \\fIWxH' >/dev/null
[ "$(bash -c 'source "$1"; COMP_WORDS=(attention-lab export x --for); COMP_CWORD=3
                _attention_lab; echo "${COMPREPLY[*]}"' _ \
      "$prefix/share/bash-completion/completions/attention-lab")" = --format ]

if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$prefix/share/applications/attention-lab.desktop"
fi
# The desktop entry opens scenarios, not every JSON file; the installed type recognises a
# scenario by its name (*.attn.json) and by its content (a .json the app saved), and only those.
grep -qx "MimeType=application/x-attention-lab-scenario;" \
  "$prefix/share/applications/attention-lab.desktop"
if command -v update-mime-database >/dev/null && command -v gio >/dev/null; then
  update-mime-database "$prefix/share/mime" 2>/dev/null  # (its note: the prefix is not searched)
  cp "$src/assets/presets/karpathy-head.json" saved.json
  echo '{}' > named.attn.json  # by its name alone
  echo '{"name": "not a scenario"}' > other.json
  type_of() { XDG_DATA_DIRS="$prefix/share:/usr/share" gio info -a standard::content-type "$1" |
                sed -n 's/.*standard::content-type: //p'; }
  [ "$(type_of named.attn.json)" = application/x-attention-lab-scenario ]
  [ "$(type_of saved.json)" = application/x-attention-lab-scenario ]
  [ "$(type_of other.json)" = application/json ]
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$prefix/share/metainfo/io.github.attentionlab.AttentionLab.metainfo.xml" >/dev/null
fi
echo "installed into a temporary prefix; the binary runs from $tmp/elsewhere"
