#!/usr/bin/env bash
# Builds the Debian package with CPack into a temporary folder, checks its name and control
# fields (dependencies from the linked libraries, fonts-dejavu-core), extracts it with dpkg-deb
# and runs the extracted binary: the subcommands, and the window under Xvfb (a screenshot). Then
# lintian, which must report no error (E:). Needs dpkg-dev (dpkg-shlibdeps), xvfb and lintian
# (tools/install_deps.sh installs them); exits 77 (skipped) without them.
# usage: tools/check_deb.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
for tool in cpack dpkg-deb dpkg-shlibdeps lintian xvfb-run; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool is not installed"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
(cd "$build" && cpack -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; exit 1; }
deb="$tmp/out/attention-lab_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "no $deb" >&2; ls "$tmp/out" >&2; exit 1; }

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for dep in fonts-dejavu-core libglfw3 libc6 libstdc++6; do
  grep -q "$dep" <<<"$depends" || { echo "missing dependency $dep" >&2; exit 1; }
done

recommends=$(dpkg-deb -f "$deb" Recommends)
for rec in fonts-wqy-microhei fonts-symbola; do
  grep -q "$rec" <<<"$recommends" || { echo "missing recommendation $rec" >&2; exit 1; }
done

dpkg-deb -x "$deb" "$tmp/root"
app="$tmp/root/usr/bin/attention-lab"
mkdir "$tmp/run"
cd "$tmp/run"
[ "$(env -u DISPLAY "$app" --version | sed -n 1p)" = "attention-lab $version" ]
env -u DISPLAY "$app" presets | grep "^raschka-journey " >/dev/null
env -u DISPLAY "$app" show karpathy-trick --stage context | grep "^tensor" >/dev/null
XDG_CONFIG_HOME="$tmp/config" xvfb-run -a -s "-screen 0 1280x800x24" \
  "$app" --preset raschka-journey --size 1280x800 --screenshot shot.png --frames 3 --no-autosave
file shot.png | grep "PNG image data, 1280 x 800" >/dev/null

lintian --tag-display-limit 0 "$deb" >"$tmp/lintian.txt" 2>&1 || true
cat "$tmp/lintian.txt"
if grep -q "^E:" "$tmp/lintian.txt"; then
  echo "lintian reports errors" >&2
  exit 1
fi
echo "$(basename "$deb"): extracted binary runs (command line and window); lintian: no errors"
