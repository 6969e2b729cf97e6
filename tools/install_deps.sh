#!/usr/bin/env bash
# Installs the Debian 12 packages Attention Lab builds with, if any is missing. Idempotent:
# when everything is there it only checks (a second or so) and changes nothing. Run as root.

# usage: tools/install_deps.sh [app|deb|all]   (default all)
#   app   what building and running the app needs (./run.sh)
#   deb   that and what building the Debian package with dpkg-buildpackage and checking it with
#         lintian need (tools/build_debian_package.sh)
#   all   that and what the tests, benchmarks and sanitizers need (./test.sh)
set -euo pipefail
part=${1:-all}
case "$part" in app|deb|all) ;; *) echo "usage: $0 [app|deb|all]" >&2; exit 2 ;; esac

# What building the app needs is debian/control's Build-Depends, read from there (one list for
# both): the version bounds and "| alternatives" dropped, debhelper-compat (the package build's
# debhelper) only for `all`. Besides those, what Build-Depends leaves implicit or the app needs
# only to run.
build_depends() {
  awk '/^Build-Depends:/ { f = 1; sub(/^Build-Depends:/, "") } f && /^[^ \t]/ && !/^Build-Depends:/ { f = 0 }
       f { print }' "$(dirname "$0")/../debian/control" |
    tr ',' '\n' | sed -e 's/|.*//' -e 's/([^)]*)//g' -e 's/\[[^]]*\]//g' -e 's/[[:space:]]//g' |
    grep -v '^$'
}
mapfile -t control_packages < <(build_depends)
[ ${#control_packages[@]} -gt 5 ] || { echo "error: no Build-Depends read from debian/control" >&2; exit 1; }
app_packages=(
  # the compiler and make (build-essential's, which Build-Depends never names)
  g++ make
  # the window: Mesa's OpenGL drivers (a run-time library), the fallback fonts for the tokens'
  # scripts found through fontconfig (CJK: WenQuanYi Micro Hei, 5 MB; symbols and monochrome
  # emoji: Symbola, 3 MB; Arabic is in DejaVu Sans), the package's Recommends
  libgl1-mesa-dri fonts-wqy-microhei fonts-symbola
)
# dpkg-buildpackage (dpkg-dev) checks for build-essential besides Build-Depends; lintian checks
# its result. (devscripts' debuild is not needed: the script calls dpkg-buildpackage itself.)
package_build=(build-essential dpkg-dev lintian)
# debhelper-compat (= N) in Build-Depends is provided by the debhelper package
for p in "${control_packages[@]}"; do
  if [ "$p" = debhelper-compat ]; then package_build+=(debhelper); else app_packages+=("$p"); fi
done
test_packages=(
  # tests: PDF text checked by pdftotext, SVG figures checked as XML by xmllint
  poppler-utils libxml2-utils
  # tests: saved notebooks checked by Jupyter's validator
  python3-nbformat
  # tests and benchmarks (each built when found); the GUI tests run under a virtual X server
  # with Mesa's llvmpipe and read the window's properties with xprop
  libgtest-dev libbenchmark-dev xvfb xauth x11-utils
  # install and package (cpack -G DEB, tools/make_deb.sh; dpkg-dev and lintian are above):
  # the package check, the desktop entry, MIME type and AppStream checks
  fakeroot file desktop-file-utils shared-mime-info libglib2.0-bin appstream
  # the sanitizer and fuzz step of test.sh (tools/sanitize.sh): clang with libFuzzer
  clang-14 libclang-rt-14-dev
  # the formatting check (ctest sources_formatted)
  clang-format-14
)
packages=("${app_packages[@]}")
[ "$part" = app ] || packages+=("${package_build[@]}")
[ "$part" != all ] || packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "error: these packages are missing and installing them needs root: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have empty package lists: update once, then install.
if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
