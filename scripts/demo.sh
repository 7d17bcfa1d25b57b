#!/usr/bin/env bash
# demo.sh: the README's first command. Installs what is missing, builds strata,
# and runs the default job: a training step with host offloading on a TPU v5e
# model (configs/hw/tpu-v5e.ini, traces/examples/train-step-offload.trace),
# then a what-if sweep (single, double and triple buffering of a Pallas-style
# matmul), printing where its HTML report is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
mkdir -p out
echo "== strata run --hw configs/hw/tpu-v5e.ini --trace traces/examples/train-step-offload.trace"
./build/strata run --hw configs/hw/tpu-v5e.ini --trace traces/examples/train-step-offload.trace \
  --json out/default-run.json --timeline out/default-timeline.json
echo "results: out/default-run.json; timeline (open in ui.perfetto.dev): out/default-timeline.json"
echo "== strata sweep configs/experiments/buffering-matmul.ini --out out/buffering-matmul"
./build/strata sweep configs/experiments/buffering-matmul.ini --out out/buffering-matmul
