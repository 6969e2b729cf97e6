#!/usr/bin/env bash
# Installs the Debian 12 packages Attention Lab builds with, if any is missing. Idempotent:
# when everything is there it only checks (a second or so) and changes nothing. Run as root.

# usage: tools/install_deps.sh [app|all]   (default all)
#   app   what building and running the app needs (./run.sh)
#   all   that and what the tests, benchmarks, sanitizers and the package need (./test.sh)
set -euo pipefail
part=${1:-all}
case "$part" in app|all) ;; *) echo "usage: $0 [app|all]" >&2; exit 2 ;; esac

app_packages=(
  # toolchain
  g++ make cmake pkg-config
  # core and command line
  libeigen3-dev nlohmann-json3-dev libcli11-dev
  # figures: the font; stb for the app's screenshots, its window icon and the tests' PNG reading
  libstb-dev fonts-dejavu-core
  # the window: fallback fonts for the tokens' scripts found through fontconfig (CJK: WenQuanYi
  # Micro Hei, 5 MB; symbols and monochrome emoji: Symbola, 3 MB; Arabic is in DejaVu Sans)
  libfontconfig-dev fonts-wqy-microhei fonts-symbola
  # figures: PDF drawn by cairo with text shaped by pango
  libcairo2-dev libpng-dev libpango1.0-dev
  # the window: Dear ImGui 1.86 (GLFW + OpenGL3 backends), GLFW, glad 2 (loader made at build
  # time), Mesa's OpenGL drivers; the window icon drawn from the SVG (rsvg-convert)
  libimgui-dev libglfw3-dev python3-glad libgl-dev libgl1-mesa-dri librsvg2-bin
)
test_packages=(
  # tests: PDF text checked by pdftotext, SVG figures checked as XML by xmllint
  poppler-utils libxml2-utils
  # tests: saved notebooks checked by Jupyter's validator
  python3-nbformat
  # tests and benchmarks (each built when found); the GUI tests run under a virtual X server
  # with Mesa's llvmpipe and read the window's properties with xprop
  libgtest-dev libbenchmark-dev xvfb xauth x11-utils
  # install and package (cpack -G DEB, tools/make_deb.sh): dependencies from the linked libraries,
  # the package check, the desktop entry, MIME type and AppStream checks
  dpkg-dev fakeroot file lintian desktop-file-utils shared-mime-info libglib2.0-bin appstream
  # the sanitizer and fuzz step of test.sh (tools/sanitize.sh): clang with libFuzzer
  clang-14 libclang-rt-14-dev
)
packages=("${app_packages[@]}")
[ "$part" = app ] || packages+=("${test_packages[@]}")

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
