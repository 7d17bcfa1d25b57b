#!/usr/bin/env bash
# golden.sh: golden outputs, to prove that a behaviour-preserving change keeps
# every output of strata byte for byte.
#
#   scripts/golden.sh STRATA_BIN OUTDIR        run STRATA_BIN over a fixed set of
#                                              inputs; write every output to OUTDIR
#   scripts/golden.sh --compare DIR_A DIR_B    compare two such folders: prints
#                                              "N files identical, M differ, K missing"
#                                              and the names; exit 1 on any difference
#
# Typical use: build the old and the new tree, run this on each binary, compare:
#   scripts/golden.sh ../base/build/strata /tmp/golden/base
#   scripts/golden.sh build/strata /tmp/golden/new
#   scripts/golden.sh --compare /tmp/golden/base /tmp/golden/new
#
# Every command is one "job" with a stable name NAME (category.input.variant).
# A job writes, in OUTDIR:
#   NAME.rc   its exit status (non-zero exits are kept: errors are outputs too)
#   NAME.out  its standard output (the text summary)   NAME.err  its standard error
#   and the files it was asked to write: NAME.json (--json), NAME.timeline.json
#   (--timeline), NAME.trace (gen, import, transform), NAME.sweep/ (sweep).
#
# What is covered (inputs come from the repository holding this script, and the
# real data from ../shared/data beside it when present):
#   help      strata --help, --version, every subcommand's --help, gen --list
#   run.ex    every traces/examples/*.trace and traces/spmd/*.trace on every
#             configs/hw/*.ini (--json and --timeline; failures recorded)
#   run.opt   run --allocator (each allocator), --policy, --set (OOM), --timeline .gz
#   alloc.ex  every example trace x every allocator (--json), --min-capacity,
#             --memory host, --policy, an out-of-memory capacity
#   check     every example/spmd trace, with and without --hw; generated/imported ones
#   gen       every workload with defaults, presets, remat, matmul buffering, the
#             transformer sharded over meshes (dp, fsdp, tp, tp+sp, fsdp+tp,
#             fsdp+tp+sp) and every collective op and algorithm, each then run
#             (--json --timeline) on a fitting hardware model, up to 256 devices
#   transform each policy (and one composition) on the example traces and on
#             generated ones, each result then run on tpu-v5e
#   import    torch snapshots (--fidelity; then alloc with 6 allocators, run on
#             h100 and v100, check), kineto traces, XLA dumps (tests/data/xla),
#             MiniMalloc CSVs (then alloc best-fit and the offline planner)
#   validate  --published and --against a kineto trace (pure simulation)
#   replay    --backend cuda --plan (no GPU needed) in the three memory modes;
#             --backend host on pcie-copy, NORMALIZED (see below)
#   sweep     --count and --list-jobs of every experiment; one whole sweep
#
# Determinism rules:
#   * a fixed environment (env -i, LC_ALL=C, TZ=UTC), a fresh scratch folder as the
#     working directory and only relative paths on the command lines, so no output
#     depends on where the repository or OUTDIR is. OUTDIR is reached through the
#     symlink "out" in the scratch folder.
#   * The simulator's JSON carries no wall-clock time (sim/results/results.h), so
#     run/alloc/... outputs are kept raw. The exceptions, normalized here:
#       - replay --backend host measures real time: its JSON is reduced with
#         python3's json module to a copy without the keys ending in "_s" and
#         without "utilization" (NAME.json); its raw JSON and its stdout summary
#         (measured times) are not kept.
#       - sweep writes absolute paths (of the scratch folder, and of the binary
#         in --list-jobs) into its points, listings and summary; every
#         occurrence of the scratch folder and of the binary's path in any
#         output is replaced with @WORK@ and @STRATA@ at the end.
#   * timelines written gzip-compressed are stored decompressed (the compressed
#     bytes may change with how the writer chunks its output, the content not).
#
# Left out on purpose: replay/validate against a real backend (timing), calibrate
# (measures this machine), capture (needs CUDA and LD_PRELOAD), the 256-device
# all-to-all (aborts in SimGrid when vm.max_map_count is too low: depends on the
# machine), commands longer than ~20 s here: the offline planner on MiniMalloc D
# and J (~18 s each), 256-device transformer steps (~25 s), replay --backend host
# of every trace but pcie-copy (a minute and more: real busy waits and kernels).
#
# Runs jobs two at a time (xargs -P2; STRATA_GOLDEN_JOBS=N to change): about
# 55 s of CPU, 50 s to 90 s of wall time on a 2-core machine (4 minutes when
# other jobs load it heavily: then watch for the timeout warning at the end,
# or give each job longer with STRATA_GOLDEN_TIMEOUT=SECONDS, default 60).
# ~3070 files, ~140 MB per output folder.
set -u -o pipefail
export LC_ALL=C

SELF=$(readlink -f "$0")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd)
DATA=${STRATA_GOLDEN_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}
JOBS=${STRATA_GOLDEN_JOBS:-2}
TIMEOUT=${STRATA_GOLDEN_TIMEOUT:-60}
case $TIMEOUT in ''|*[!0-9]*|0) echo "golden: STRATA_GOLDEN_TIMEOUT must be a whole number of seconds above 0, got '$TIMEOUT'" >&2; exit 2 ;; esac

usage() {
  sed -n '2,9p' "$SELF" | sed 's/^# \{0,1\}//'
  exit 2
}

# ---------------------------------------------------------------------------
# --compare DIR_A DIR_B
# ---------------------------------------------------------------------------
compare() {
  local a=$1 b=$2 same=0 differ=0 missing=0 f
  [ -d "$a" ] && [ -d "$b" ] || { echo "golden.sh: --compare needs two folders" >&2; exit 2; }
  local diffs=() miss=()
  while IFS= read -r f; do
    if [ ! -f "$a/$f" ]; then missing=$((missing + 1)); miss+=("missing in $a: $f")
    elif [ ! -f "$b/$f" ]; then missing=$((missing + 1)); miss+=("missing in $b: $f")
    elif cmp -s "$a/$f" "$b/$f"; then same=$((same + 1))
    else differ=$((differ + 1)); diffs+=("differs: $f")
    fi
  done < <({ (cd "$a" && find . -type f); (cd "$b" && find . -type f); } | sed 's|^\./||' | sort -u)
  echo "$same files identical, $differ differ, $missing missing"
  [ ${#diffs[@]} -gt 0 ] && printf '%s\n' "${diffs[@]}"
  [ ${#miss[@]} -gt 0 ] && printf '%s\n' "${miss[@]}"
  [ $((differ + missing)) -eq 0 ]
}

# ---------------------------------------------------------------------------
# One job (run by xargs): "NAME ARG..." with @O@ standing for out/NAME.
# Arguments never contain spaces; globbing is off.
# ---------------------------------------------------------------------------
strata() {  # strata NAME ARG...: run the binary in the fixed environment
  local name=$1 t0=$EPOCHREALTIME; shift
  env -i PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C LANG=C TZ=UTC HOME="$WORK" \
    timeout "$TIMEOUT" "$BIN" "$@" >"out/$name.out" 2>"out/$name.err" </dev/null
  echo $? >"out/$name.rc"
  # The wall time of each job, for the "slowest" list (not an output).
  echo "$(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t0}") $name" >>"$WORK/times.log"
}

run_job() {
  set -f
  local line=$1 name args=()
  read -r name _ <<<"$line"
  local a
  for a in ${line#"$name"}; do args+=("${a//@O@/out/$name}"); done
  cd "$WORK" || exit 3
  strata "$name" "${args[@]}"
  # A gzip-compressed timeline is stored decompressed (see the header).
  if [ -f "out/$name.timeline.json.gz" ]; then
    gzip -dc "out/$name.timeline.json.gz" >"out/$name.timeline.json" && rm -f "out/$name.timeline.json.gz"
  fi
}

run_phase() {  # run_phase FILE: the jobs of FILE, $JOBS at a time
  local n
  n=$(wc -l <"$1")
  echo "golden: phase $(basename "$1" .jobs): $n commands"
  xargs -d '\n' -P "$JOBS" -n 1 "$SELF" --job <"$1"
}

# ---------------------------------------------------------------------------
# The fixed set of inputs, in three phases: phase 2 reads traces written by
# phase 1 (gen, import, transform of examples), phase 3 those of phase 2.
# ---------------------------------------------------------------------------
ALLOCATORS="bump first-fit next-fit best-fit buddy bfc caching caching-host cuda-async offline xla"
POLICIES="prefetch=2 prefetch=1:sched=xla nbuffer=2 pad pad=16x128 offload=activation offload=param
  offload=optstate offload=activation:ahead=1,sched=xla donate batch-copies=64MiB
  transfer-guard=allow transfer-guard=log transfer-guard=disallow"
WORKLOADS="scan-mlp adam-mlp matmul transformer collective"

safe() { printf '%s' "$1" | tr -c 'A-Za-z0-9.+-' '_'; }   # a policy as a file name part
base() { local b=${1##*/}; echo "${b%.*}"; }

write_jobs() {
  local p1=$WORK/1.jobs p2=$WORK/2.jobs p3=$WORK/3.jobs
  local t h a p w s n hw f pol jt jr
  : >"$p1"; : >"$p2"; : >"$p3"
  j1() { echo "$*" >>"$p1"; }
  j2() { echo "$*" >>"$p2"; }
  j3() { echo "$*" >>"$p3"; }

  # -- slowest first, so that the two lanes end together ----------------------
  # The MiniMalloc benchmarks: import, then the offline planner and best-fit at
  # the capacity in the file name (best-fit runs out: exit 1 is the result).
  if [ -d data/minimalloc ]; then
    for t in data/minimalloc/*.csv; do
      n=$(base "$t"); s=$(safe "$n")
      j1 "import.minimalloc.$s import minimalloc $t -o @O@.trace"
      j2 "alloc.minimalloc.$s.best-fit alloc -q -t out/import.minimalloc.$s.trace -a best-fit -c ${n#*.} --alignment 1 --json @O@.json"
      case $n in D.*|J.*) continue ;; esac   # offline planner ~18 s each: left out
      j2 "alloc.minimalloc.$s.offline alloc -q -t out/import.minimalloc.$s.trace -a offline -c ${n#*.} --alignment 1 --json @O@.json"
    done
  fi
  # PyTorch profiler traces (5 to 12 s each to import).
  if [ -d data/kineto ]; then
    for t in data/kineto/*.json.gz; do
      n=$(base "${t%.gz}")
      # --fidelity (a second pass) only where it is cheap: it doubles the big ones.
      case $n in h100-owlv2-*|hta-*) f= ;; *) f=--fidelity ;; esac
      j1 "import.kineto.$n import kineto -q $f $t -o @O@.trace"
      j2 "alloc.kineto.$n.caching alloc -q -t out/import.kineto.$n.trace -a caching -c 80GiB --json @O@.json"
      j2 "check.kineto.$n check -t out/import.kineto.$n.trace"
      case $n in h100-*) hw=h100 ;; *) hw=v100 ;; esac
      j2 "run.kineto.$n.$hw run --hw configs/hw/$hw.ini --trace out/import.kineto.$n.trace --json @O@.json"
    done
    j1 "validate.against.h100-bert-small-inference validate --hw configs/hw/h100.ini --against data/kineto/h100-bert-small-inference.json.gz"
  fi
  # PyTorch memory snapshots (and any example pickle).
  for t in data/torch-snapshots/*.pickle traces/examples/*.pickle; do
    [ -f "$t" ] || continue
    n=$(base "$t")
    j1 "import.torch.$n import torch -q --fidelity $t -o @O@.trace"
    for a in caching caching:expandable_segments=true best-fit bfc cuda-async offline; do
      j2 "alloc.torch.$n.$(safe "$a") alloc -q -t out/import.torch.$n.trace -a $a -c 80GiB --json @O@.json"
    done
    j2 "run.torch.$n.h100 run --hw configs/hw/h100.ini --trace out/import.torch.$n.trace --json @O@.json --timeline @O@.timeline.json"
    j2 "run.torch.$n.v100 run --hw configs/hw/v100.ini --trace out/import.torch.$n.trace --json @O@.json"
    j2 "check.torch.$n check -t out/import.torch.$n.trace --hw configs/hw/h100.ini"
  done
  for n in cnn-train cs336-small-segment-allocs; do
    [ -f "data/torch-snapshots/$n.pickle" ] || continue
    j2 "alloc.torch.$n.caching.min-capacity alloc -q -t out/import.torch.$n.trace -a caching --min-capacity --json @O@.json"
  done

  # -- generated workloads ----------------------------------------------------
  # gen JOB "HW..." ARGS: generate out/gen.JOB.trace, check it, run it on each
  # HW (--json, and --timeline unless NOTL=1: a timeline grows with the devices).
  gen() {
    local job=$1 hws=$2 tl="--timeline @O@.timeline.json"; shift 2
    [ "${NOTL:-0}" = 1 ] && tl=
    j1 "gen.$job gen $* -o @O@.trace"
    j2 "check.gen.$job check -t out/gen.$job.trace"
    for hw in $hws; do
      j2 "run.gen.$job.$hw run --hw configs/hw/$hw.ini --trace out/gen.$job.trace --json @O@.json $tl"
    done
  }
  gen 256dev.collective-permute "tpu-v5e-256 test-pod256" collective devices=256 bytes=1MiB op=collective-permute
  # Sharded transformer steps: 2 layers (the sharding code is the same for 12;
  # the timelines are 10-60 MB with the default 12).
  NOTL=1 gen transformer.fsdp+tp.mesh16x4 tpu-v5p-64 transformer mesh=data:16,model:4 sharding=fsdp+tp layers=2 batch=16 seq=256 d_model=512 heads=8
  gen transformer.fsdp+tp.mesh4x4 tpu-v5e-16 transformer mesh=data:4,model:4 sharding=fsdp+tp layers=2
  for s in dp fsdp; do gen "transformer.$s.mesh8" "dgx-h100 a100-8" transformer mesh=data:8 sharding=$s layers=2; done
  for s in tp tp+sp fsdp+tp fsdp+tp+sp; do
    gen "transformer.$s.mesh2x4" dgx-h100 transformer mesh=data:2,model:4 sharding=$s layers=2
  done
  gen transformer.fsdp.mesh8.prefetch2 "test-ring8 test-switch8" transformer mesh=data:8 sharding=fsdp layers=2 prefetch=2
  gen scan-mlp "tpu-v5e h100" scan-mlp
  gen adam-mlp "tpu-v5e h100" adam-mlp
  gen matmul tpu-v5e matmul
  gen transformer "tpu-v5e h100" transformer
  gen collective "test-ring8 dgx-h100 a100-8 test-switch8" collective
  gen scan-mlp.tutorial tpu-v5e scan-mlp preset=tutorial
  gen scan-mlp.remat-full tpu-v5e scan-mlp remat=full
  gen scan-mlp.remat-dots tpu-v5e scan-mlp remat=dots
  gen adam-mlp.tutorial tpu-v5e adam-mlp preset=tutorial
  gen matmul.buffers1 tpu-v5e matmul buffers=1
  gen matmul.buffers3 tpu-v5e matmul buffers=3
  gen matmul.bm256 tpu-v5e matmul bm=256
  gen transformer.remat-full h100 transformer remat=full
  gen transformer.remat-dots h100 transformer remat=dots
  for a in all-reduce all-gather reduce-scatter all-to-all collective-permute; do
    gen "collective.$a" test-ring8 collective op=$a
  done
  for a in ring bidir-ring tree direct nccl-ring; do gen "collective.algo-$a" dgx-h100 collective algo=$a; done
  gen collective.torus16 "test-torus16 tpu-v5e-16" collective devices=16 algo=torus
  gen collective.iters3 test-ring8 collective iters=3 bytes=1MiB dtype=bf16
  for w in $WORKLOADS; do j1 "gen.$w.stdout gen $w"; done   # the trace on standard output
  j1 "error.gen.overflow gen scan-mlp dim=4294967296 batch=4294967296"
  j1 "error.gen.unknown gen no-such-workload"
  j1 "error.gen.tp-without-model-axis gen transformer mesh=data:8 sharding=tp"

  # -- example traces on every hardware model ---------------------------------
  for t in traces/examples/*.trace traces/spmd/*.trace; do
    n=$(base "$t")
    for h in configs/hw/*.ini; do
      j1 "run.ex.$n.$(base "$h") run --hw $h --trace $t --json @O@.json --timeline @O@.timeline.json"
    done
    j1 "check.ex.$n check -t $t"
    for hw in tpu-v5e h100 test-ring8; do j1 "check.ex.$n.$hw check -t $t --hw configs/hw/$hw.ini"; done
    j1 "replay.plan.$n replay --backend cuda --plan --trace $t"
  done
  for m in malloc async; do
    j1 "replay.plan.train-step-offload.$m replay --backend cuda --plan -m $m --trace traces/examples/train-step-offload.trace"
  done

  # -- allocators on the example traces ----------------------------------------
  for t in traces/examples/*.trace; do
    n=$(base "$t")
    for a in $ALLOCATORS; do
      j1 "alloc.ex.$n.$a alloc -q -t $t -a $a -c 16GiB --json @O@.json"
    done
    for a in best-fit bfc offline; do
      j1 "alloc.ex.$n.$a.min-capacity alloc -q -t $t -a $a --min-capacity --json @O@.json"
    done
  done
  t=traces/examples/train-step-offload.trace
  j1 "alloc.ex.train-step-offload.host.caching-host alloc -q -t $t -m host -a caching-host -c 64GiB --json @O@.json"
  j1 "alloc.ex.train-step-offload.oom alloc -q -t $t -a best-fit -c 1GiB --json @O@.json"
  j1 "alloc.ex.train-step-offload.offload-optstate alloc -q -t $t -a caching -c 16GiB -p offload=optstate --json @O@.json"
  j1 "alloc.ex.format-tour.caching.params alloc -q -t traces/examples/format-tour.trace -a caching:max_split_size=64MiB,roundup_power2_divisions=4 -c 16GiB --json @O@.json"
  j1 "alloc.ex.format-tour.buddy.params alloc -q -t traces/examples/format-tour.trace -a buddy:min_block=4096 -c 16GiB --json @O@.json"

  # -- run options ------------------------------------------------------------
  for a in $ALLOCATORS; do
    j1 "run.opt.allocator.$a run --hw configs/hw/h100.ini --trace $t --allocator $a --json @O@.json"
  done
  for p in $POLICIES; do
    j1 "run.opt.policy.$(safe "$p") run --hw configs/hw/tpu-v5e.ini --trace $t --policy $p --json @O@.json"
  done
  j1 "run.opt.policy.offload-param+prefetch run --hw configs/hw/tpu-v5e.ini --trace $t --policy offload=param --policy prefetch=2 --json @O@.json"
  j1 "run.opt.set.oom run --hw configs/hw/tpu-v5e.ini --trace $t --set memory.hbm.capacity=1GiB --json @O@.json"
  j1 "run.opt.set.pcie run --hw configs/hw/tpu-v5e.ini --trace $t --set link.pcie.bandwidth=32GB/s --json @O@.json"
  j1 "run.opt.timeline-gz run --hw configs/hw/tpu-v5e.ini --trace $t --timeline @O@.timeline.json.gz"
  j1 "run.opt.json-stdout run -q --hw configs/hw/h100.ini --trace traces/examples/pcie-copy.trace --json -"
  j1 "run.opt.check-allocators run --hw configs/hw/h100.ini --trace traces/examples/format-tour.trace --check-allocators --json @O@.json"
  j1 "run.opt.stdin-trace run --hw configs/hw/h100.ini --trace - --json @O@.json"  # stdin is empty
  j1 "error.run.unknown-allocator run --hw configs/hw/h100.ini --trace $t --allocator no-such"
  j1 "error.run.unknown-policy run --hw configs/hw/h100.ini --trace $t --policy no-such"
  j1 "error.run.missing-trace run --hw configs/hw/h100.ini --trace traces/examples/no-such.trace"
  j1 "error.run.devices-mismatch run --hw configs/hw/test-torus16.ini --set hardware.devices=8 --trace $t"
  j1 "error.alloc.unknown-allocator alloc -t $t -a no-such -c 16GiB"
  j1 "error.transform.unknown-policy transform --trace $t --policy no-such"

  # -- transform: each policy on the example traces and on generated ones ------
  for p in $POLICIES offload=param+prefetch=2; do
    s=$(safe "$p")
    for t in traces/examples/*.trace out/gen.scan-mlp.trace out/gen.adam-mlp.trace out/gen.transformer.trace; do
      n=$(base "$t"); n=${n#gen.}
      pol="--policy $p"
      [ "$p" = offload=param+prefetch=2 ] && pol="--policy offload=param --policy prefetch=2"
      case $t in out/*) jt=j2; jr=j3 ;; *) jt=j1; jr=j2 ;; esac
      $jt "transform.$s.$n transform --trace $t $pol --hw configs/hw/tpu-v5e.ini -o @O@.trace"
      $jr "run.transform.$s.$n run --hw configs/hw/tpu-v5e.ini --trace out/transform.$s.$n.trace --json @O@.json --timeline @O@.timeline.json"
    done
  done
  j1 "transform.stdout.pad transform --trace traces/examples/format-tour.trace --policy pad"

  # -- imports of XLA dumps ------------------------------------------------------
  for d in tests/data/xla/*/; do
    n=$(base "${d%/}")
    j1 "import.xla.$n import xla $d -o @O@.trace"
    j2 "alloc.xla.$n.offline alloc -q -t out/import.xla.$n.trace -a offline --min-capacity --json @O@.json"
    j2 "run.xla.$n.h100 run --hw configs/hw/h100.ini --trace out/import.xla.$n.trace --json @O@.json --timeline @O@.timeline.json"
  done

  # -- validate (simulated side only), sweep listings, help -------------------
  j1 "validate.published validate --published"
  for e in configs/experiments/*.ini; do
    n=$(base "$e")
    j1 "sweep.$n.count sweep $e --count"
    j1 "sweep.$n.list-jobs sweep $e --list-jobs --out @O@.sweep"
    j1 "sweep.$n.list-jobs-jsonl sweep $e --list-jobs --format jsonl --out @O@.sweep"
  done
  j1 "help.top --help"
  j1 "help.version --version"
  j1 "help.none"
  j1 "help.gen-list gen --list"
  for c in run alloc import gen transform sweep replay validate calibrate capture check; do
    j1 "help.$c $c --help"
  done
  for c in torch minimalloc xla kineto; do j1 "help.import-$c import $c --help"; done
}

# ---------------------------------------------------------------------------
# Jobs that need more than one command: run sequentially after the phases.
# ---------------------------------------------------------------------------
special_jobs() {
  cd "$WORK" || exit 3
  # replay --backend host measures real time: keep a normalized JSON (no key
  # ending in _s, no utilization), not the raw one nor the stdout summary.
  local name=replay.host.pcie-copy
  echo "golden: $name (real run, normalized)"
  strata "$name" replay --backend host --trace traces/examples/pcie-copy.trace -r 1 -w 0 --json "out/$name.raw.json"
  if [ -f "out/$name.raw.json" ]; then
    python3 - "out/$name.raw.json" >"out/$name.json" <<'EOF'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not (k.endswith('_s') or k == 'utilization')}
    if isinstance(x, list):
        return [strip(e) for e in x]
    return x
json.dump(strip(json.load(open(sys.argv[1]))), sys.stdout, indent=1)
print()
EOF
  fi
  rm -f "out/$name.raw.json" "out/$name.out"

  # One whole sweep: points, tables, plots, report.
  name=sweep.buffering-matmul.run
  echo "golden: $name"
  strata "$name" sweep configs/experiments/buffering-matmul.ini -j 2 -q --out "out/$name.sweep"
}

generate() {
  BIN=$(readlink -f "$1") || true
  local outdir=$2
  [ -n "$BIN" ] && [ -x "$BIN" ] || { echo "golden.sh: $1: not an executable" >&2; exit 2; }
  if [ -e "$outdir" ] && [ -n "$(ls -A "$outdir" 2>/dev/null)" ]; then
    echo "golden.sh: $outdir exists and is not empty; give a new folder" >&2; exit 2
  fi
  mkdir -p "$outdir" || exit 2
  outdir=$(cd "$outdir" && pwd)
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/strata-golden.XXXXXX") || exit 2
  trap 'rm -rf "$WORK"' EXIT
  export BIN WORK TIMEOUT
  # The scratch folder: the inputs by relative names, and out -> OUTDIR.
  ln -s "$ROOT/configs" "$WORK/configs"
  ln -s "$ROOT/traces" "$WORK/traces"
  mkdir -p "$WORK/tests/data"
  ln -s "$ROOT/tests/data/xla" "$WORK/tests/data/xla"
  [ -d "$DATA" ] && ln -s "$DATA" "$WORK/data" || echo "golden: $DATA not found: real data left out"
  ln -s "$outdir" "$WORK/out"

  local start=$SECONDS
  echo "golden: $BIN -> $outdir"
  (cd "$WORK" && write_jobs)
  run_phase "$WORK/1.jobs"
  run_phase "$WORK/2.jobs"
  run_phase "$WORK/3.jobs"
  special_jobs

  # Absolute paths of the scratch folder and of the binary (sweep writes some)
  # become @WORK@ and @STRATA@.
  grep -rlIF -e "$WORK" -e "$BIN" "$outdir" | while IFS= read -r f; do
    sed -i -e "s|$WORK|@WORK@|g" -e "s|$BIN|@STRATA@|g" "$f"
  done
  if grep -rqIF -- "$outdir" "$outdir"; then
    echo "golden: warning: some outputs name $outdir:" >&2
    grep -rlIF -- "$outdir" "$outdir" >&2
  fi
  local files rcs slow
  files=$(find "$outdir" -type f | wc -l)
  rcs=$(cat "$outdir"/*.rc | sort | uniq -c | awk '{printf "%s exit %s, ", $1, $2}')
  slow=$(sort -rn "$WORK/times.log" | head -5 | awk '{printf "%s (%s s), ", $2, $1}')
  echo "golden: slowest: ${slow%, }"
  if grep -lx -e 124 -e 137 "$outdir"/*.rc >/dev/null; then
    echo "golden: WARNING: timed out after $TIMEOUT s (outputs not comparable; machine overloaded?):" >&2
    grep -lx -e 124 -e 137 "$outdir"/*.rc >&2
  fi
  echo "golden: $files files in $outdir (${rcs%, }) in $((SECONDS - start)) s"
}

case ${1:-} in
  --job) shift; run_job "$1" ;;
  --compare) [ $# -eq 3 ] || usage; compare "$2" "$3" ;;
  -h|--help|"") usage ;;
  *) [ $# -eq 2 ] || usage; generate "$1" "$2" ;;
esac
