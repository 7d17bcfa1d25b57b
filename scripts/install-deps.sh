#!/usr/bin/env bash
# install-deps.sh: installs what strata needs on Debian 12, only what is missing.
# Usage: bash scripts/install-deps.sh [--test|--schedulers]   (--test adds the test-only tools;
#        --schedulers installs only GNU parallel, Slurm and munge, for scripts/ci-schedulers.sh)
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsimgrid-dev libglib2.0-dev libjson-glib-dev zlib1g-dev check
      python3 python3-matplotlib libprotobuf-c-dev protobuf-c-compiler)
if [ "${1:-}" = "--schedulers" ]; then
  # scripts/ci-schedulers.sh: the README's sweeps on GNU parallel and a one-node Slurm cluster
  pkgs=(slurm-wlm munge parallel)
fi
if [ "${1:-}" = "--test" ]; then
  # clang: libFuzzer targets and sanitizer runtime; valgrind: memcheck of the CLI;
  # chromium: the HTML report's page test.
  pkgs+=(clang valgrind chromium)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: everything is installed"
fi
