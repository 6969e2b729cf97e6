#!/usr/bin/env bash
# Installs the Debian 12 packages Attention Lab builds with, if any is missing. Idempotent:
# when everything is there it only checks (a second or so) and changes nothing. Run as root.
set -euo pipefail

packages=(
  # toolchain
  g++ make cmake pkg-config
  # core and command line
  libeigen3-dev nlohmann-json3-dev libcli11-dev
  # figures: the font; stb for the app's screenshots and the tests' PNG reading
  libstb-dev fonts-dejavu-core
  # figures: PDF drawn by cairo with text shaped by pango; PDF text checked by pdftotext in tests
  libcairo2-dev libpng-dev
  libpango1.0-dev
  poppler-utils
  # tests: SVG figures checked as XML by xmllint
  libxml2-utils
  # the window: Dear ImGui 1.86 (GLFW + OpenGL3 backends), GLFW, glad 2 (loader made at build time);
  # not needed for the core and its tests alone (cmake -DATTNLAB_BUILD_APP=OFF)
  libimgui-dev libglfw3-dev python3-glad libgl-dev
  # tests and benchmarks (built when libbenchmark-dev is found); the GUI tests run under a
  # virtual X server with Mesa's llvmpipe
  libgtest-dev libbenchmark-dev xvfb xauth libgl1-mesa-dri
  # install and package (cpack -G DEB, tools/make_deb.sh): dependencies from the linked libraries,
  # the package check, the icon's PNG sizes, the desktop entry and AppStream checks
  dpkg-dev fakeroot file lintian librsvg2-bin desktop-file-utils appstream
  # the sanitizer and fuzz step of test.sh (tools/sanitize.sh): clang with libFuzzer
  clang-14 libclang-rt-14-dev
)

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
