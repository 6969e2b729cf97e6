#!/usr/bin/env bash
# Builds the app alone (installing the Debian packages it needs, if missing) and starts it; the
# tests and their packages are ./test.sh's. Arguments go to the app,
# e.g. ./run.sh show dog-attacks-cat  or  ./run.sh dump karpathy-head -o out.json
set -euo pipefail
cd "$(dirname "$0")"
tools/build.sh app
exec build/app/attention-lab "$@"
