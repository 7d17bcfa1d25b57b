#!/bin/sh
# tests/fuzz/run.sh TARGET SECONDS: build one libFuzzer target and run it.
#
# TARGET is one of: trace hw pickle experiment minimalloc xla kineto validate chakra
# spmd devices hlo groups jax_profile model_config serve
# (tests/fuzz/fuzz_TARGET.c)
# or "all" (each target for SECONDS). The build lives in build-fuzz/ (clang,
# -fsanitize=fuzzer-no-link,address,undefined for the library), apart from
# every other build. New corpus entries go to build-fuzz/corpus/TARGET; the
# seed corpus tests/fuzz/corpus/TARGET is only read. A crash is written to
# build-fuzz/crashes/TARGET-*; copy it to tests/fuzz/regressions/TARGET-NAME
# so that tests/test_fuzz_regressions.c replays it forever after.
# Prints libFuzzer's final stats (executions, new units, crashes).
# STRATA_FUZZ_RUNS=N stops a target after N executions (libFuzzer's -runs)
# if SECONDS have not passed first.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${STRATA_FUZZ_BUILD:-$ROOT/build-fuzz}
TARGET=${1:?usage: tests/fuzz/run.sh TARGET|all SECONDS}
SECONDS_TO_RUN=${2:-60}

if [ "$TARGET" = all ]; then
    status=0
    for t in trace hw pickle experiment minimalloc xla kineto validate chakra spmd devices hlo groups jax_profile model_config serve; do
        [ -f "$ROOT/tests/fuzz/fuzz_$t.c" ] || continue
        "$0" "$t" "$SECONDS_TO_RUN" || status=1
    done
    exit $status
fi
[ -f "$ROOT/tests/fuzz/fuzz_$TARGET.c" ] || { echo "run.sh: no target tests/fuzz/fuzz_$TARGET.c" >&2; exit 2; }

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if [ ! -f "$B/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSTRATA_CUDA=OFF -DSTRATA_WERROR=OFF \
        -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link $SAN" >/dev/null
fi
cmake --build "$B" -j2 --target strata_tools >/dev/null
# shellcheck disable=SC2046
clang -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 -fsanitize=fuzzer $SAN \
    -DSTRATA_SOURCE_DIR="\"$ROOT\"" -I"$ROOT/sim" -I"$ROOT/models" -I"$B/generated/chakra" -I"$B/generated/xprof" \
    $(pkg-config --cflags glib-2.0) \
    "$ROOT/tests/fuzz/fuzz_$TARGET.c" \
    "$B/libstrata_tools.a" "$B/libstrata_engine.a" "$B/libstrata_bind.a" "$B/libstrata_spmd.a" "$B/libstrata_models.a" "$B/libstrata_hw.a" \
    "$B/libstrata_ir.a" "$B/libstrata_base.a" "$B/generated/chakra/libstrata_chakra_proto.a" "$B/generated/xprof/libstrata_xprof_proto.a" \
    $(pkg-config --libs glib-2.0 json-glib-1.0 simgrid zlib libprotobuf-c) -lm -lpthread -o "$B/fuzz_$TARGET"

mkdir -p "$B/corpus/$TARGET" "$B/crashes"
RUNS=""
[ -n "${STRATA_FUZZ_RUNS:-}" ] && RUNS="-runs=$STRATA_FUZZ_RUNS"
DICT=""
[ -f "$ROOT/tests/fuzz/$TARGET.dict" ] && DICT="-dict=$ROOT/tests/fuzz/$TARGET.dict"
# Leak checking stays on (ASan's default) and unsuppressed: a leak per input is a bug.
"$B/fuzz_$TARGET" -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$B/crashes/$TARGET-" $DICT $RUNS \
    "$B/corpus/$TARGET" "$ROOT/tests/fuzz/corpus/$TARGET"
