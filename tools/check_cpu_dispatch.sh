#!/usr/bin/env bash
# check_cpu_dispatch.sh ARCHIVE_OR_OBJECT...: the per-level kernels (cmake/CpuDispatch.cmake)
# are kept apart from the rest of the program. For each object (each member of an archive):
#  - a per-level object (named *_default.o, *_avx2.o or *_avx512.o and defining its entry
#    attnlab_*_<level>) has no COMDAT group and no global, weak or unique symbol but its entry
#    points: the linker cannot hand its AVX copy of an inline function to anyone else;
#  - in every other object, no global or weak function uses an AVX register (ymm, zmm) or an
#    AVX-512 mask register: what uses them there is local, behind its own CPUID test (rng.cpp's
#    AVX2 uniform_ scaling), so the baseline code runs on any x86-64.
# Prints what it checked, and each offence; exits 1 if there is one. Needs binutils.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 ARCHIVE_OR_OBJECT..." >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0 levels=0 others=0 wide_local=0
for input in "$@"; do
  dir="$work/$(basename "$input")"
  mkdir -p "$dir"
  case "$input" in
    *.a) abs=$(realpath "$input") && (cd "$dir" && ar x "$abs") ;;
    *) cp "$input" "$dir/" ;;
  esac
  for obj in "$dir"/*.o; do
    name=$(basename "$obj")
    level=""
    [[ $name =~ _(default|avx2|avx512)\.o$ ]] && level=${BASH_REMATCH[1]}
    if [ -n "$level" ] && nm --defined-only -g "$obj" | grep " T attnlab_.*_${level}$" >/dev/null; then
      levels=$((levels + 1))
      others_global=$(nm --defined-only -g "$obj" | grep -v " T attnlab_.*_${level}$" || true)
      if [ -n "$others_global" ]; then
        echo "$input($name): global symbols besides its entry points:" >&2
        echo "$others_global" | head -20 >&2
        bad=$((bad + 1))
      fi
      if readelf -g "$obj" | grep "COMDAT group" >/dev/null; then
        echo "$input($name): COMDAT groups left" >&2
        bad=$((bad + 1))
      fi
    else
      others=$((others + 1))
      # The functions using AVX registers; each must be local to its object (a function with
      # its own target attribute and CPUID test, as rng.cpp's AVX2 uniform_ scaling), never a
      # global or weak one the linker could hand to another caller.
      objdump -d --no-show-raw-insn "$obj" |
        awk '/^[0-9a-f]+ <.*>:$/ { f = substr($2, 2, length($2) - 3) }
             /%(ymm|zmm)[0-9]|%k[0-7]([^0-9]|$)/ { print f }' | sort -u >"$work/wide"
      nm --defined-only -g "$obj" | awk '{ print $3 }' | sort -u >"$work/global"
      exposed=$(comm -12 "$work/wide" "$work/global")
      if [ -n "$exposed" ]; then
        echo "$input($name): global or weak functions with AVX instructions outside the per-level kernels:" >&2
        echo "$exposed" | head -20 >&2
        bad=$((bad + 1))
      fi
      wide_local=$((wide_local + $(wc -l <"$work/wide")))
    fi
  done
done
echo "check_cpu_dispatch: $levels per-level objects, $others baseline objects" \
     "($wide_local local functions with their own AVX dispatch), $bad offences"
[ "$levels" -gt 0 ] || { echo "no per-level object found" >&2; exit 1; }
[ "$bad" -eq 0 ]
