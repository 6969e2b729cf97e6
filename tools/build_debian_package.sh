#!/usr/bin/env bash
# Builds the Debian source package (debian/) into its binary .deb as a Debian 12 maintainer
# does: `dpkg-buildpackage -us -uc -b` on the committed tree (git archive of HEAD, so nothing
# uncommitted or generated leaks in) at nice 19, then lintian on the result (any error or
# warning fails). With --twice it builds the same commit a second time, in the same folder
# after moving the first results aside, and compares the two .debs byte for byte
# (dpkg-buildpackage sets SOURCE_DATE_EPOCH from debian/changelog; the build writes no time of
# its own). A whole app build each time: about 5 minutes on 2 idle cores, so not in ctest's
# default run (README: Packaging). Exit 77 (skipped) when dpkg-buildpackage, debhelper or
# lintian is missing (tools/install_deps.sh all installs them).
# usage: tools/build_debian_package.sh [--twice] [WORK_DIR]   (default build/debian-package)
set -euo pipefail
cd "$(dirname "$0")/.."
twice=0
if [ "${1:-}" = --twice ]; then twice=1; shift; fi
work=$(realpath -m "${1:-build/debian-package}")
for tool in dpkg-buildpackage dh lintian; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (tools/install_deps.sh all)"; exit 77; }
done

# One build of HEAD in $work/src; the .deb, .buildinfo and .changes land in $work.
build_once() {
  rm -rf "$work"
  mkdir -p "$work/src"
  git archive HEAD | tar -x -C "$work/src"
  echo "dpkg-buildpackage -us -uc -b in $work/src (log: $work/build.log)"
  if ! (cd "$work/src" && nice -n 19 dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    echo "error: dpkg-buildpackage failed (log: $work/build.log)" >&2
    exit 1
  fi
}

build_once
changes=$(ls "$work"/attention-lab_*.changes)
echo "lintian $changes"
lintian --fail-on error,warning --display-level '>=warning' "$changes"
debs=$(cd "$work" && ls ./*.deb)
echo "built:" $debs
[ "$twice" = 1 ] || exit 0

first="$work.first"
rm -rf "$first"
mkdir -p "$first"
for d in $debs; do cp "$work/$d" "$first/"; done
build_once
status=0
for d in $debs; do
  if cmp -s "$first/$d" "$work/$d"; then
    echo "reproducible: $d ($(sha256sum <"$work/$d" | cut -c1-16))"
  else
    echo "error: two builds of $(git rev-parse --short HEAD) differ in $d" >&2
    status=1
  fi
done
exit $status
