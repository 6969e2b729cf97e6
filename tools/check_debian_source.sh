#!/usr/bin/env bash
# Checks the Debian source package's files (debian/) without building it (dpkg-buildpackage -b
# builds the whole app, minutes; see debian/rules): the changelog's version is the project's,
# control names the maintainer, the hardening and the fonts the window recommends, and the
# copyright file is DEP-5 with the notices of what is linked in. Exit 77 (skipped) without
# dpkg-parsechangelog (dpkg-dev).
# usage: tools/check_debian_source.sh SOURCE_DIR PROJECT_VERSION
set -euo pipefail
src=$1 version=$2
command -v dpkg-parsechangelog >/dev/null || { echo "dpkg-dev is not installed"; exit 77; }
cd "$src"
fail() { echo "debian/: $*" >&2; exit 1; }
got=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "$got" = "$version" ] || fail "changelog version $got, the project is $version"
[ "$(cat debian/source/format)" = "3.0 (native)" ] || fail "source format is not 3.0 (native)"
grep -q '^Maintainer: .*<.*@.*>' debian/control || fail "control has no Maintainer address"
grep -q '^Recommends: fonts-wqy-microhei, fonts-symbola$' debian/control ||
  fail "control does not recommend the window's fallback fonts"
grep -q 'set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "fonts-wqy-microhei, fonts-symbola")' \
  packaging/CMakeLists.txt || fail "the CPack package recommends other fonts than debian/control"
grep -q '^export DEB_BUILD_MAINT_OPTIONS = hardening=+all$' debian/rules || fail "no hardening=+all"
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$' \
  debian/copyright || fail "copyright is not DEP-5"
for notice in "Dear ImGui" "glad 2" "ColorBrewer" "License: Apache-2.0" "License: CC0-1.0"; do
  grep -q "$notice" debian/copyright || fail "copyright misses $notice"
done
echo "debian/ ok (version $version)"
