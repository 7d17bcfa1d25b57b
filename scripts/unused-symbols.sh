#!/bin/sh
# scripts/unused-symbols.sh BUILD_DIR: lists the functions and objects that
# the strata libraries export but nothing refers to.
#
# Defined: the global symbols (nm) of the static libraries BUILD_DIR/*.a.
# Referred to: every symbol named by a relocation (readelf -r) in those
# libraries or in any object of the build (the strata binary, tests,
# benches), and the identifiers the libFuzzer targets name (tests/fuzz/*.c,
# built apart). A call the compiler inlined leaves no relocation, so a
# symbol without one still counts as used when its name appears more than
# once in the C and CUDA sources (its definition and a use in its own
# file). Prints "SYMBOL LIBRARY:OBJECT" a line; exits 1 when there is any,
# 0 when there is none, 2 when nothing is built.
set -eu
B=${1:?usage: scripts/unused-symbols.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

libs=$(find "$B" -maxdepth 1 -name 'lib*.a' | sort)
objs=$(find "$B/CMakeFiles" -name '*.o' | sort)
[ -n "$libs" ] || { echo "unused-symbols: no libraries in $B (build first)" >&2; exit 2; }

# shellcheck disable=SC2086
nm -A -g --defined-only $libs 2>/dev/null |
    awk 'NF >= 3 && $(NF-1) ~ /^[TDRB]$/ {loc = $1; sub(/:[0-9a-f]*$/, "", loc); sub(/^.*\//, "", loc); print $NF, loc}' |
    sort -u >"$tmp/defined"
[ -s "$tmp/defined" ] || { echo "unused-symbols: no symbols in $libs" >&2; exit 2; }
# shellcheck disable=SC2086
readelf -rW $libs $objs 2>/dev/null |
    awk 'NF >= 5 && $1 ~ /^[0-9a-f]+$/ {s = $5; sub(/@.*/, "", s); print s}' >"$tmp/used"
cat "$ROOT"/tests/fuzz/*.c 2>/dev/null | tr -c 'A-Za-z0-9_' '\n' >>"$tmp/used"
# shellcheck disable=SC2046
cat $(find "$ROOT/sim" "$ROOT/models" "$ROOT/tests" "$ROOT/bench" -name '*.c' -o -name '*.cu') |
    tr -c 'A-Za-z0-9_' '\n' | sort | uniq -c | awk '$1 > 1 {print $2}' >>"$tmp/used"
sort -u -o "$tmp/used" "$tmp/used"

# main() and the names a preload library interposes (the CUDA runtime's,
# libc's) are called from outside; C++ anonymous namespaces are local.
join -v 1 "$tmp/defined" "$tmp/used" |
    grep -v -E '^(main|cuda[A-Za-z0-9_]*|__cuda[A-Za-z0-9_]*|malloc|free|calloc|realloc|_Z[A-Za-z0-9_]*_GLOBAL__N_[A-Za-z0-9_]*) ' \
        >"$tmp/unused" || true
if [ -s "$tmp/unused" ]; then
    cat "$tmp/unused"
    exit 1
fi
exit 0
