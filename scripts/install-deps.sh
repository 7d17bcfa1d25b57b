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
  # clang: libFuzzer targets, sanitizer runtime and the layer probes (test.sh); valgrind: memcheck of the CLI;
  # chromium: the HTML report's page test.
  pkgs+=(clang valgrind chromium)
  # python3-venv: the venv for JAX (below), whose dumps the XLA importer's tests compare.
  pkgs+=(python3-venv)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  # a flaky mirror is retried; a dpkg lock held by another apt (a fresh CI
  # machine's unattended upgrades) is waited for instead of failing at once
  apt_opts=(-o Acquire::Retries=3 -o DPkg::Lock::Timeout=300)
  $SUDO apt-get "${apt_opts[@]}" update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: everything is installed"
fi

# JAX (CPU) for the XLA corpus tests (tests/jax/, scripts/jax-corpus.py): the
# version the corpus was made with (tests/data/jax/versions.json), into a venv
# (Debian 12's pip is externally managed), only where PyPI is reachable.
if [ "${1:-}" = "--test" ]; then
  jax_version=0.10.2
  if [ "$(id -u)" -eq 0 ]; then venv=/opt/strata-jax; else venv="$HOME/.local/share/strata-jax"; fi
  if "$venv/bin/python" -c "import jax, sys; sys.exit(jax.__version__ != '$jax_version')" 2>/dev/null; then
    echo "install-deps: JAX $jax_version is installed in $venv"
  elif python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check --retries 2 --timeout 20 \
         "jax==$jax_version" "jaxlib==$jax_version"; then
    echo "install-deps: installed JAX $jax_version in $venv"
  else
    echo "install-deps: JAX not installed (PyPI unreachable?): the JAX corpus regeneration test will skip"
  fi
fi
