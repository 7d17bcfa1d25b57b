#!/usr/bin/env python3
"""jax-tpu-aot.py: a TPU buffer assignment with host memory (S(5)) made on a
machine without a TPU (issue 41, "memory kinds as XLA accounts them").

JAX compiles for a TPU topology without its devices (deviceless AOT:
jax.experimental.topologies.get_topology_desc), given libtpu: seen with
jax/jaxlib 0.12.0.1 and libtpu 0.0.51 from PyPI (`pip install --target DIR
libtpu==0.0.51`, then PYTHONPATH=DIR). libtpu warns that it cannot find
TPU_ACCELERATOR_TYPE and TPU_WORKER_HOSTNAMES, and compiles anyway.

The program, over the 4 chips of a v5e:2x2: h = tanh(x @ w) with x [64,256]
sharded over the chips and w [256,256] replicated, h written to pinned_host
by out_shardings and sum(h) kept on the device. Writes into OUT the four
dump files (as scripts/jax-corpus.py keeps them, this script's path
normalised) and memory-analysis.json ({"step": figures}); `strata import
xla OUT` reads the dump.

Usage: PYTHONPATH=LIBTPU_DIR python3 scripts/jax-tpu-aot.py OUT [TOPOLOGY]
"""
import glob
import json
import os
import shutil
import sys
import tempfile

_dump = tempfile.mkdtemp(prefix="strata-jax-tpu-")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={_dump} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import topologies  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

SUFFIXES = ("after_optimizations-buffer-assignment.txt", "after_optimizations-live-range.txt",
            "after_optimizations-memory-usage-report.txt", "after_optimizations.txt")


def main(out, topology):
    topo = topologies.get_topology_desc(platform="tpu", topology_name=topology)
    mesh = Mesh(np.array(topo.devices), ("x",))
    on_dev = NamedSharding(mesh, P("x", None), memory_kind="device")
    on_host = NamedSharding(mesh, P("x", None), memory_kind="pinned_host")

    def step(w, x):
        h = jnp.tanh(x @ w)
        return h, jnp.sum(h)

    w = jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, P()))
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=on_dev)
    compiled = jax.jit(step, out_shardings=(on_host, NamedSharding(mesh, P()))).lower(w, x).compile()
    ma = compiled.memory_analysis()
    figures = {k: getattr(ma, k) for k in dir(ma) if not k.startswith("_") and "generated_code" not in k
               and isinstance(getattr(ma, k), int) and not isinstance(getattr(ma, k), bool)}
    figures.update({"jax": jax.__version__, "topology": topology, "devices": len(topo.devices)})
    dst = out
    os.makedirs(dst, exist_ok=True)
    me = os.path.abspath(__file__)
    for suffix in SUFFIXES:
        src = glob.glob(os.path.join(_dump, f"module_*.jit_step.*.{suffix}"))[0]
        with open(src, encoding="utf-8") as f:
            text = f.read().replace(me, "jax-tpu-aot.py")
        with open(os.path.join(dst, f"jit_step.{suffix}"), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(out, "memory-analysis.json"), "w", encoding="utf-8") as f:
        json.dump({"step": figures}, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(_dump, ignore_errors=True)
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "v5e:2x2")
