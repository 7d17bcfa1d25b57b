#!/usr/bin/env bash
# valgrind-cli.sh: the CLI's end-to-end cases under valgrind's memcheck.
#
# Usage: tests/valgrind-cli.sh BUILD/strata
#
# Runs each case below as `valgrind ... strata ARGS` and fails when
#   - valgrind reports a memory error (invalid read/write, use of an
#     uninitialised value, bad free, ...) or a definitely lost block that
#     tests/valgrind.supp does not cover (valgrind exits 99 then), or
#   - strata's exit status is not the one the case expects (0 done, 1 out of
#     memory, 2 bad input), or a case that must write a file did not.
# The cases: strata run on every traces/examples/*.trace against tpu-v5e and
# test-simple with --json (one with --timeline and a policy), strata alloc
# with several allocators, strata import minimalloc + the offline planner,
# strata check, strata import torch on a small snapshot (when python3 is
# present), strata gen + transform, strata export/import chakra, and bad
# input that must exit 2.
# "Still reachable" and "possibly lost" blocks are not errors: GLib, GObject
# and SimGrid keep one-time state until exit.
#
# tests/valgrind.supp holds suppressions for third-party libraries only;
# a leak or error in strata's own code is a bug to fix, never to suppress.
#
# Environment: VALGRIND_JOBS (default: nproc) cases run at once;
# VALGRIND_KEEP=1 keeps the temporary directory with every log.
# Exit status: 0 every case clean; 1 otherwise (the failing logs are printed).
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 BUILD/strata" >&2
    exit 2
fi
strata=$(realpath -e "$1") || { echo "$0: $1: no such file" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/strata-valgrind-XXXXXX")
if [ "${VALGRIND_KEEP:-0}" = 1 ]; then
    echo "logs kept in $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
jobs=${VALGRIND_JOBS:-$(nproc)}

vg=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --num-callers=30
    --suppressions="$root/tests/valgrind.supp")

# vg_case NAME WANT [--creates FILE]... -- ARGS...: runs `strata ARGS` under
# valgrind; WANT is the exit status expected (e.g. 0, or 0/1 for either).
# Writes $tmp/NAME.result: "ok" or the reason it failed.
vg_case() {
    local name=$1 want=$2
    shift 2
    local creates=()
    while [ "$1" != "--" ]; do
        creates+=("$2")
        shift 2
    done
    shift
    local start=$SECONDS rc
    "${vg[@]}" --log-file="$tmp/$name.vg" "$strata" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    local why=""
    if [ $rc -eq 99 ]; then
        why="valgrind reported errors or definite leaks"
    elif ! [[ "/$want/" == */$rc/* ]]; then
        why="exit status $rc, want $want"
    elif grep -q "definitely lost: [1-9]" "$tmp/$name.vg"; then
        why="definite leaks"
    else
        local f
        for f in "${creates[@]}"; do
            [ -s "$f" ] || why="${why:+$why; }did not write $f"
        done
    fi
    if [ -z "$why" ]; then
        echo "ok ($((SECONDS - start))s)" >"$tmp/$name.result"
    else
        echo "$why" >"$tmp/$name.result"
    fi
}

names=()
running=0
# case NAME WANT [--creates FILE]... -- ARGS...: queue one case (at most $jobs at once).
case_() {
    names+=("$1")
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    vg_case "$@" &
    running=$((running + 1))
}

d=$tmp/files
mkdir -p "$d"

# --- strata run: every example trace on two machines -------------------------
for t in traces/examples/*.trace; do
    b=$(basename "$t" .trace)
    for hw in tpu-v5e test-simple; do
        case_ "run-$b-$hw" 0/1 --creates "$d/run-$b-$hw.json" -- \
            run --hw "configs/hw/$hw.ini" --trace "$t" --json "$d/run-$b-$hw.json"
    done
done
case_ run-timeline-prefetch 0/1 --creates "$d/tl.json" --creates "$d/tl-results.json" -- \
    run --hw configs/hw/tpu-v5e.ini --trace traces/examples/train-step-offload.trace \
    --policy prefetch=2 --timeline "$d/tl.json" --json "$d/tl-results.json" -q

# --- strata alloc: several allocators on one trace ----------------------------
for a in best-fit first-fit buddy bfc caching; do
    case_ "alloc-$a" 0/1 --creates "$d/alloc-$a.json" -- \
        alloc --trace traces/examples/train-step-offload.trace --allocator "$a" \
        --capacity 16GiB --json "$d/alloc-$a.json"
done

# --- strata check ---------------------------------------------------------------
case_ check-trace 0 -- check --trace traces/examples/format-tour.trace
case_ check-hw 0 -- check --trace traces/examples/train-step-offload.trace --hw configs/hw/tpu-v5e.ini

# --- strata gen + transform (+ run the rewritten trace) -------------------------
# gen and transform run one after the other inside one job: each needs the last one's file.
gen_transform() {
    vg_case gen-transformer 0 --creates "$d/tf.trace" -- \
        gen transformer layers=2 d_model=128 heads=4 seq=64 batch=2 vocab=512 -o "$d/tf.trace"
    vg_case transform-transformer 0 --creates "$d/tf-x.trace" -- \
        transform --trace "$d/tf.trace" --policy offload=optstate --policy prefetch=2 \
        --policy pad --policy donate -o "$d/tf-x.trace"
    vg_case run-transformed 0/1 --creates "$d/tf-x.json" -- \
        run --hw configs/hw/tpu-v5e.ini --trace "$d/tf-x.trace" --json "$d/tf-x.json" -q
}
gen_matmul() {
    vg_case gen-matmul 0 --creates "$d/mm.trace" -- \
        gen matmul m=1024 n=1024 k=1024 bm=256 bn=256 bk=256 buffers=2 -o "$d/mm.trace"
    vg_case transform-matmul 0 --creates "$d/mm-x.trace" -- \
        transform --trace "$d/mm.trace" --hw configs/hw/tpu-v5e.ini \
        --policy transfer-guard=log --policy nbuffer=3 -o "$d/mm-x.trace"
}
# a MiniMalloc CSV through the importer, then the offline planner on its trace.
printf 'id,lower,upper,size\n0,0,10,4096\n1,5,20,8192\n2,10,30,4096\n3,20,40,16384\n4,25,35,2048\n5,30,50,8192\n' \
    >"$d/small.csv"
minimalloc_offline() {
    vg_case import-minimalloc 0 --creates "$d/small.trace" -- \
        import minimalloc "$d/small.csv" -o "$d/small.trace"
    vg_case alloc-offline 0 --creates "$d/offline.json" -- \
        alloc --trace "$d/small.trace" --allocator offline --capacity 64KiB --json "$d/offline.json"
}
for job in gen_transform gen_matmul minimalloc_offline; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    $job &
    running=$((running + 1))
done
names+=(gen-transformer transform-transformer run-transformed gen-matmul transform-matmul
        import-minimalloc alloc-offline)

# --- strata import torch ----------------------------------------------------------
if command -v python3 >/dev/null; then
    python3 tests/helpers/make_snapshot.py "$d/basic.pickle" --scenario basic
    python3 tests/helpers/make_snapshot.py "$d/random.pickle" --scenario random --events 300 --seed 7
    case_ import-torch-basic 0 --creates "$d/basic.trace" -- \
        import torch "$d/basic.pickle" -o "$d/basic.trace"
    case_ import-torch-random 0 --creates "$d/random.trace" -- \
        import torch "$d/random.pickle" --fidelity -o "$d/random.trace"
else
    echo "SKIP import torch: python3 is not installed"
fi

# --- strata export chakra + import chakra (a round trip), and a graph of every node kind ---
chakra_round_trip() {
    vg_case export-chakra 0 --creates "$d/ck.0.et" -- \
        export chakra --trace traces/examples/train-step-offload.trace -o "$d/ck"
    vg_case import-chakra-export 0 --creates "$d/ck.trace" -- import chakra "$d/ck" -o "$d/ck.trace"
}
if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
fi
chakra_round_trip &
running=$((running + 1))
names+=(export-chakra import-chakra-export)
case_ import-chakra-graph 0 --creates "$d/graph.trace" -- \
    import chakra tests/fuzz/corpus/chakra/graph-every-node-kind.et -o "$d/graph.trace"
printf '\000\200' >"$d/bad.et"
case_ bad-chakra 2 -- import chakra "$d/bad.et" -o "$d/bad-chakra.trace"

# --- bad input: exit 2, no crash, no leak ---------------------------------------
printf 'strata-trace 1\nalloc a 12XB\n' >"$d/bad-size.trace"
printf 'strata-trace 1\nalloc a 1KiB\nfree b\n' >"$d/bad-free.trace"
printf 'strata-trace 1\nalloc a 1KiB\ncopy a a bytes=2KiB\nfree a\n' >"$d/bad-copy.trace"
{ cat configs/hw/test-simple.ini; printf '\n[memory extra]\nkind = device\ncapacity = 1GiB\nbandwith = 1GB/s\n'; } \
    >"$d/bad-key.ini"
printf 'not a pickle at all\n' >"$d/bad.pickle"
printf 'id,lower,upper,size\n0,10,5,4096\n' >"$d/bad.csv"
t=traces/examples/pcie-copy.trace
case_ bad-trace-size 2 -- run --hw configs/hw/test-simple.ini --trace "$d/bad-size.trace"
case_ bad-trace-free 2 -- check --trace "$d/bad-free.trace"
case_ bad-trace-copy 2 -- run --hw configs/hw/test-simple.ini --trace "$d/bad-copy.trace"
case_ bad-trace-missing 2 -- run --hw configs/hw/test-simple.ini --trace "$d/no-such.trace"
case_ bad-hw-key 2 -- run --hw "$d/bad-key.ini" --trace "$t"
case_ bad-policy 2 -- run --hw configs/hw/test-simple.ini --trace "$t" --policy no-such-policy
case_ bad-output-path 2 -- run --hw configs/hw/test-simple.ini --trace "$t" --json /nonexistent-dir/out.json
case_ bad-allocator 2 -- alloc --trace "$t" --allocator no-such-allocator
case_ bad-workload 2 -- gen no-such-workload
case_ bad-gen-param 2 -- gen matmul bm=300
case_ bad-pickle 2 -- import torch "$d/bad.pickle" -o "$d/bad-pickle.trace"
case_ bad-csv 2 -- import minimalloc "$d/bad.csv" -o "$d/bad-csv.trace"
case_ bad-command 2 -- no-such-command

wait
fail=0
for n in "${names[@]}"; do
    r=$(cat "$tmp/$n.result" 2>/dev/null || echo "did not run")
    if [[ "$r" == ok* ]]; then
        echo "ok    $n ${r#ok }"
    else
        fail=1
        echo "FAIL  $n: $r"
        echo "----- strata's standard error:"
        head -c 4000 "$tmp/$n.err" 2>/dev/null
        if grep -qE "ERROR SUMMARY: [1-9]|definitely lost: [1-9]" "$tmp/$n.vg" 2>/dev/null; then
            echo "----- valgrind:"
            grep -v "^==[0-9]*== *$" "$tmp/$n.vg" | head -c 20000
        fi
        echo "-----"
    fi
done
if [ $fail -ne 0 ]; then
    echo "valgrind-cli: FAILED"
    exit 1
fi
echo "valgrind-cli: all ${#names[@]} cases clean"
