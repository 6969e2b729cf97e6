#!/usr/bin/env bash
# Builds Attention Lab and its Debian package: build/attention-lab_VERSION_ARCH.deb (CPack DEB;
# the dependencies come from the linked libraries through dpkg-shlibdeps, plus fonts-dejavu-core).
# Install it with:  apt install ./build/attention-lab_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
cd build
cpack -G DEB
ls -1 "$PWD"/attention-lab_*.deb
