#!/usr/bin/env bash
# find-python.sh: prints a Python interpreter that imports jax, or fails.
# Looks at $STRATA_JAX_PYTHON, the venv scripts/install-deps.sh --test makes
# (/opt/strata-jax as root, else ~/.local/share/strata-jax), then python3.
for py in "${STRATA_JAX_PYTHON:-}" /opt/strata-jax/bin/python "$HOME/.local/share/strata-jax/bin/python" python3; do
  [ -n "$py" ] || continue
  if "$py" -c 'import jax' >/dev/null 2>&1; then echo "$py"; exit 0; fi
done
exit 1
