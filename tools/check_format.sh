#!/usr/bin/env bash
# Every C++ source of the project (core/, app/, tests/, bench/) is as .clang-format writes it
# (the ctest `sources_formatted`). Prints the files that are not and how to fix them; exit 1 if
# there is one. Usage: tools/check_format.sh [REPO]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
format=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$format" ] || { echo "check_format: clang-format not found (apt-get install clang-format-14)" >&2; exit 2; }
mapfile -t files < <(find core app tests bench -type f \( -name '*.cpp' -o -name '*.h' \) \
                       -not -path 'tests/fuzz/corpus/*' | sort)
[ ${#files[@]} -gt 50 ] || { echo "check_format: no sources found under $PWD" >&2; exit 2; }
# One clang-format process for all files (a process per file costs minutes on a loaded machine);
# it names each file that differs in its warnings.
if ! out=$("$format" --dry-run --Werror "${files[@]}" 2>&1); then
  grep -oE '^[^:]+\.(cpp|h):' <<<"$out" | sort -u | tr -d ':'
  echo "check_format: these files differ from .clang-format; fix with: $format -i FILE..." >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
