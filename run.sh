#!/usr/bin/env bash
# Builds Attention Lab (installing missing Debian packages) and starts it. Arguments go to the
# app, e.g. ./run.sh show dog-attacks-cat  or  ./run.sh dump karpathy-head -o out.json
set -euo pipefail
cd "$(dirname "$0")"
tools/build.sh
exec build/app/attention-lab "$@"
