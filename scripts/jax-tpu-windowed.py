#!/usr/bin/env python3
"""jax-tpu-windowed.py: does XLA on TPU loop the tensor-axis collectives of
MaxText's 128B v5e-256 step as windowed einsums (collective matmul)?
(issue 42; docs/validation.md, "Training steps").

Compiles, for a TPU topology without its devices (deviceless AOT, as
scripts/jax-tpu-aot.py), one MLP block of MaxText's 128B shape (embed 10240,
MLP 65536, seq 2048, global batch B, default 256) forward and backward
under jax.checkpoint, sharded as MaxText's base.yml shards it over
fsdp:16 x tensor:16 (activations [batch: fsdp, length, embed: tensor];
wi [embed: fsdp, mlp: tensor], wo [mlp: tensor, embed: fsdp]), with
LIBTPU_INIT_ARGS as the caller sets them (the 128b.sh script's flags), and
prints how many windowed-einsum loop bodies (windowed_dot_general_body_ag /
_rs) and async collective fusions the optimized HLO holds.

Seen with jax/jaxlib 0.10.2 and libtpu 0.0.51 from PyPI (pip install
--target DIR; PYTHONPATH=DIR:LIBTPU_DIR), B = 256: 4 windowed-einsum loops,
3 ag (bidirectional collective-permutes over the tensor axis, 8 trips of
2 shards) and 1 rs, and 2 async collective starts (the remaining
all-gathers, over the tensor axis too, run inside the compute fusions
scheduled between start and done); no collective over the tensor axis is
left synchronous. B = 112, 96 and 16 window the same dots. The v5p row
(B=384 MESH=16x4 SHAPE=8192x28672 on v5p:4x4x4, without the two
xla_tpu_enable_async_collective_fusion* flags, which libtpu 0.0.51 refuses
on v5p): 1 rs loop, the tensor-axis ag loops unrolled (collective-permute
start/done pairs over the tensor axis beside per-shard dots), one
tensor-axis all-gather left synchronous.

Usage: LIBTPU_INIT_ARGS="..." [B=256] [MESH=16x16] [SHAPE=10240x65536] \
         python3 scripts/jax-tpu-windowed.py DUMP_DIR [TOPOLOGY]
(MESH: fsdp x tensor; SHAPE: embed x MLP; the v5p-64 32B row: B=384
MESH=16x4 SHAPE=8192x28672 TOPOLOGY v5p:4x4x4)
"""
import glob
import os
import re
import sys

DUMP = sys.argv[1]
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text --xla_dump_hlo_pass_re=^$"

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import topologies  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402


def main():
    topo = topologies.get_topology_desc(platform="tpu", topology_name=sys.argv[2] if len(sys.argv) > 2 else "v5e:16x16")
    fsdp, tensor = (int(n) for n in os.environ.get("MESH", "16x16").split("x"))
    mesh = Mesh(np.array(topo.devices).reshape(fsdp, tensor), ("fsdp", "tensor"))
    b, s = int(os.environ.get("B", 256)), 2048
    d, f = (int(n) for n in os.environ.get("SHAPE", "10240x65536").split("x"))
    act = NamedSharding(mesh, P("fsdp", None, "tensor"))

    def layer(wi, wo, x):
        h = jnp.einsum("bsd,df->bsf", x, wi)
        h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("fsdp", None, "tensor")))
        y = jnp.einsum("bsf,fd->bsd", jax.nn.relu(h), wo)
        return jax.lax.with_sharding_constraint(y, act)

    def loss(wi, wo, x):
        return jnp.sum(jax.checkpoint(layer)(wi, wo, x).astype(jnp.float32))

    wi = jax.ShapeDtypeStruct((d, f), jnp.bfloat16, sharding=NamedSharding(mesh, P("fsdp", "tensor")))
    wo = jax.ShapeDtypeStruct((f, d), jnp.bfloat16, sharding=NamedSharding(mesh, P("tensor", "fsdp")))
    x = jax.ShapeDtypeStruct((b, s, d), jnp.bfloat16, sharding=act)
    jax.jit(jax.grad(loss, argnums=(0, 1)), out_shardings=(wi.sharding, wo.sharding)).lower(wi, wo, x).compile()
    hlo = open(glob.glob(os.path.join(DUMP, "*jit_loss*after_optimizations.txt"))[0]).read()
    loops = re.findall(r"^%wide\.windowed_dot_general_body_(ag|rs)", hlo, re.M)
    print(f"B={b}: windowed-einsum loops {len(loops)} (ag {loops.count('ag')}, rs {loops.count('rs')}), "
          f"async collective starts {len(re.findall(r'^  %async-collective-start', hlo, re.M))}")


if __name__ == "__main__":
    main()
