#!/usr/bin/env bash
# Builds the Debian source package (debian/) into its binary .debs as a Debian 12 maintainer
# does: `dpkg-buildpackage -us -uc -b` on the committed tree (git archive of HEAD, so nothing
# uncommitted or generated leaks in) at nice 10, then lintian on the result: any error or
# warning fails (the info tags are shown). First it installs what is missing of the app's
# Build-Depends, debhelper, dpkg-dev, build-essential and lintian (tools/install_deps.sh deb;
# root needed only when something is missing).
#
# With --twice it builds the same commit a second time, in the same folder after moving the
# first build aside (the build path is the same for both), and compares the .debs byte for byte
# (dpkg-buildpackage sets SOURCE_DATE_EPOCH from debian/changelog; the build writes no time of
# its own). When they differ it unpacks both (dpkg-deb -R) and lists the files that differ.
#
# ccache: a compiler launcher from the environment (CMAKE_CXX_COMPILER_LAUNCHER=ccache, which
# CMake honours) speeds the FIRST build only; the second build of --twice runs without it, so
# the comparison is always against a plain compile. CCACHE_BASEDIR is cleared for the build:
# ccache would otherwise pass relative paths to the compiler, which end up in the binary
# (assert's __FILE__), and a build with ccache would differ from one without. The package
# itself knows nothing of ccache.
#
# A whole app build each time (docs/building.md, with the times measured), so not in ctest.
# usage: tools/build_debian_package.sh [--twice] [WORK_DIR]   (default build/debian-package)
set -euo pipefail
cd "$(dirname "$0")/.."
twice=0
if [ "${1:-}" = --twice ]; then twice=1; shift; fi
work=$(realpath -m "${1:-build/debian-package}")
first="$work.first"
tools/install_deps.sh deb
git rev-parse --verify -q HEAD >/dev/null || { echo "error: not a git checkout" >&2; exit 1; }
commit=$(git rev-parse --short HEAD)
export CCACHE_BASEDIR=

# One build of HEAD in $work/src; the .debs, .buildinfo and .changes land in $work.
build_once() {
  rm -rf "$work"
  mkdir -p "$work/src"
  git archive HEAD | tar -x -C "$work/src"
  echo "dpkg-buildpackage -us -uc -b of $commit in $work/src" \
       "(compiler launcher: ${CMAKE_CXX_COMPILER_LAUNCHER:-none}; log: $work/build.log)"
  local start=$SECONDS
  if ! (cd "$work/src" && nice -n 10 dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    echo "error: dpkg-buildpackage failed (log: $work/build.log)" >&2
    exit 1
  fi
  echo "built in $((SECONDS - start)) s"
  rm -rf "$work/src"  # the sources and the CMake build folder (a few hundred MB)
}

build_once
changes=$(ls "$work"/attention-lab_*.changes)
echo "lintian --fail-on error,warning --display-info $(basename "$changes")"
lintian_status=0
lintian --fail-on error,warning --display-info "$changes" | tee "$work/lintian.txt" ||
  lintian_status=$?
[ -s "$work/lintian.txt" ] || echo "(lintian: no tags)"
(cd "$work" && sha256sum ./*.deb)
[ "$lintian_status" = 0 ] || { echo "error: lintian reports errors or warnings" >&2; exit 1; }
[ "$twice" = 1 ] || exit 0

rm -rf "$first"
mv "$work" "$first"
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER
build_once
(cd "$work" && sha256sum ./*.deb)
status=0
for path in "$first"/*.deb; do
  deb=$(basename "$path")
  if cmp -s "$path" "$work/$deb"; then
    echo "reproducible: $deb"
  else
    echo "error: two builds of $commit differ in $deb; the files that differ:" >&2
    rm -rf "$work/unpacked"
    dpkg-deb -R "$path" "$work/unpacked/first"
    dpkg-deb -R "$work/$deb" "$work/unpacked/second"
    diff -rq "$work/unpacked/first" "$work/unpacked/second" >&2 || true
    status=1
  fi
done
[ "$(cd "$first" && ls ./*.deb)" = "$(cd "$work" && ls ./*.deb)" ] ||
  { echo "error: the two builds made different packages" >&2; status=1; }
exit $status
