#!/usr/bin/env bash
# ci-schedulers.sh: runs the README's sweep commands on real schedulers and
# checks that they give the same results as a local sweep, byte for byte.
#
#   bash scripts/ci-schedulers.sh [BUILD_DIR]     (default build/; .ci/run calls it after scripts/test.sh)
#
# 1. Reads the two command blocks of README.md marked `<!-- ci: parallel -->`
#    and `<!-- ci: slurm -->` (section "Sweeps on more than one machine"):
#    the commands a user copies are the commands run here, as written.
# 2. GNU parallel (Debian `parallel`): runs the parallel block's lines in a
#    fresh folder; checks that every point was written by the parallel jobs
#    (before the collecting sweep, which would run a missing point itself),
#    then that results.csv and results.json equal a local `strata sweep`.
# 3. Slurm (Debian `slurm-wlm`, `munge`): starts a one-node cluster by hand,
#    as a container without systemd needs (munged on a private socket and
#    key, slurmctld and slurmd with proctrack/linuxproc, task/none, no
#    cgroups, on ports of their own), runs the slurm block's lines (waiting
#    for the `sbatch --array` job before the next line), checks the points
#    and the results as above, and stops the daemons it started.
# Where a scheduler cannot run here (packages missing and not installable,
# a daemon that does not start), it prints "SKIP: <scheduler>: <why>" and
# goes on: exit 0. A scheduler that runs and gives different results, or a
# README block that is missing, fails (exit 1).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
[ -x "$BUILD/strata" ] || { echo "ci-schedulers: no $BUILD/strata (build first)" >&2; exit 1; }
export PATH="$BUILD:$PATH"
EXP=configs/experiments/devices-sharding.ini # the experiment the README's blocks name
WORK=$(mktemp -d /tmp/strata-ci-sched.XXXXXX)
chmod 700 "$WORK"
PIDS=()
cleanup() {
    local pid t
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do
        for ((t = 0; t < 50; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
say() { echo "ci-schedulers: $*"; }
indent() { local line; while IFS= read -r line; do printf '%s%s\n' "$1" "$line"; done; }
fail() { echo "ci-schedulers: FAIL: $*" >&2; exit 1; }

# The lines of the ```sh block after the README line holding MARKER.
readme_block() {
    awk -v marker="$1" '
        index($0, marker) { armed = 1; next }
        armed && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$ROOT/README.md"
}

# A fresh folder where the README's relative paths (configs/...) resolve.
fresh_dir() {
    local d="$WORK/$1"
    mkdir -p "$d"
    ln -s "$ROOT/configs" "$d/configs"
    echo "$d"
}

# The local sweep every scheduler must match.
REF=$(fresh_dir reference)
(cd "$REF" && strata sweep "$EXP" --out sw --quiet >/dev/null)
N=$(cd "$REF" && strata sweep "$EXP" --count)
say "reference: strata sweep $EXP: $N points"

# Every point's result file exists (written by the scheduler's jobs).
check_points() {
    local dir=$1 who=$2
    local written
    written=$(find "$dir/sw/points" -name '[0-9]*.json' -size +0 2>/dev/null | wc -l)
    [ "$written" -eq "$N" ] || fail "$who: the $who jobs wrote $written of the $N points ($dir/sw/points)"
}

# results.csv and results.json equal the reference's, byte for byte.
check_results() {
    local dir=$1 who=$2
    for f in results.csv results.json; do
        cmp "$REF/sw/$f" "$dir/sw/$f" || fail "$who: $f differs from the local sweep's"
    done
    say "$who: $N points; results.csv and results.json equal the local sweep's byte for byte"
}

need_packages() {
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "not installed: ${missing[*]} (and not root to install them)"
        return 1
    fi
    say "installing ${missing[*]} (scripts/install-deps.sh --schedulers)"
    if ! bash "$ROOT/scripts/install-deps.sh" --schedulers >"$WORK/apt.log" 2>&1; then
        echo "scripts/install-deps.sh --schedulers failed: $(tail -1 "$WORK/apt.log")"
        return 1
    fi
}

# ---- GNU parallel ----
run_parallel() {
    local block why dir
    block=$(readme_block '<!-- ci: parallel -->')
    [ -n "$block" ] || fail "README.md has no block after '<!-- ci: parallel -->'"
    if ! why=$(need_packages parallel); then
        echo "SKIP: GNU parallel: $why"
        return 0
    fi
    dir=$(fresh_dir parallel)
    say "GNU parallel: running the README's lines in $dir:"
    indent "    " <<<"$block"
    local line first=1
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        if [ $first -eq 0 ]; then check_points "$dir" "GNU parallel"; fi
        (cd "$dir" && eval "$line") >"$WORK/parallel.out" 2>&1 || { # no variables: one subshell a line
            cat "$WORK/parallel.out" >&2
            fail "GNU parallel: '$line' failed"
        }
        first=0
    done <<<"$block"
    check_results "$dir" "GNU parallel"
}

# ---- Slurm ----
# Starts munged, slurmctld and slurmd; prints why not and returns 1 when it cannot.
start_slurm() {
    local S=$WORK/slurm host cpus
    mkdir -p "$S/spool" "$S/state" "$S/log"
    host=$(hostname -s)
    cpus=$(nproc)
    if ! mungekey --create --keyfile="$S/munge.key" >/dev/null 2>&1; then
        dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null
    fi
    chmod 400 "$S/munge.key"
    munged --force --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
        --log-file="$S/log/munged.log" --seed-file="$S/munged.seed" >"$S/log/munged.out" 2>&1 || {
        echo "munged did not start: $(tail -1 "$S/log/munged.log" 2>/dev/null || cat "$S/log/munged.out")"
        return 1
    }
    cat >"$S/slurm.conf" <<EOF
# One node, no systemd, no cgroups (scripts/ci-schedulers.sh).
ClusterName=strata-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
SchedulerType=sched/builtin
# the default 10 s for an RPC (sbatch, squeue) is short for a loaded CI machine
MessageTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$S/slurm.conf
    slurmctld -i >"$S/log/slurmctld.out" 2>&1 || {
        echo "slurmctld did not start: $(tail -2 "$S/log/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
        return 1
    }
    sleep 1
    slurmd >"$S/log/slurmd.out" 2>&1 || {
        echo "slurmd did not start: $(tail -2 "$S/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
        return 1
    }
    sleep 1
    local t
    for ((t = 0; t < 30; t++)); do
        if sinfo -h -o '%t' 2>/dev/null | grep -q -E '^(idle|mix|alloc)'; then
            return 0
        fi
        sleep 1
    done
    echo "the node did not come up in 30 s: sinfo says '$(sinfo -h -o '%t %E' 2>&1 | head -1)'; slurmd.log:" \
        "$(tail -2 "$S/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
    return 1
}

run_slurm() {
    local block why dir
    block=$(readme_block '<!-- ci: slurm -->')
    [ -n "$block" ] || fail "README.md has no block after '<!-- ci: slurm -->'"
    if ! why=$(need_packages slurm-wlm munge); then
        echo "SKIP: Slurm: $why"
        return 0
    fi
    local started=0 f
    why=$(start_slurm) && started=1
    # start_slurm ran in a subshell: read back what it started (stopped on exit, started or not)
    for f in munged slurmctld slurmd; do
        if [ -s "$WORK/slurm/$f.pid" ]; then PIDS+=("$(cat "$WORK/slurm/$f.pid")"); fi
    done
    if [ $started -eq 0 ]; then
        echo "SKIP: Slurm: $why"
        return 0
    fi
    export SLURM_CONF=$WORK/slurm/slurm.conf
    say "Slurm: one node up ($(sinfo -h -o '%P %D %t %c CPUs' | head -1))"
    dir=$(fresh_dir slurm)
    say "Slurm: running the README's lines in $dir:"
    indent "    " <<<"$block"
    local line out job t q
    # the lines share one shell, as in a user's terminal (the first sets n), in the job's folder
    pushd "$dir" >/dev/null
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        eval "$line" >"$WORK/slurm.out" 2>&1 || { cat "$WORK/slurm.out" >&2; fail "Slurm: '$line' failed"; }
        out=$(cat "$WORK/slurm.out")
        if [ -n "$out" ]; then indent "    > " <<<"$out"; fi
        job=$(echo "$out" | sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p')
        if [ -n "$job" ]; then
            # done once squeue answers with none of the job's tasks, or no longer knows
            # the job; an error (a busy slurmctld's timeout) prints nothing either, and
            # is waited on (before: taken for done, and the points checked too early)
            for ((t = 0; t < 900; t++)); do
                if q=$(squeue -h -j "$job" 2>"$WORK/squeue.err"); then
                    [ -z "$q" ] && break
                elif grep -q "Invalid job id" "$WORK/squeue.err"; then
                    break
                fi
                sleep 1
            done
            [ $t -lt 900 ] || fail "Slurm: job $job still queued or running after 900 s"
            say "Slurm: job array $job done in about ${t} s"
            check_points "$dir" "Slurm"
        fi
    done <<<"$block"
    popd >/dev/null
    check_results "$dir" "Slurm"
}

run_parallel
run_slurm
say "done"
