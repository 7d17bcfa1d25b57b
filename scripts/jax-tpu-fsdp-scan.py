#!/usr/bin/env python3
"""jax-tpu-fsdp-scan.py: which of an FSDP decoder layer's collectives does
XLA on TPU leave synchronous in a scanned (jax.lax.scan) layer loop?
(issue 42; docs/validation.md, "Training steps").

Compiles, for a TPU topology without its devices (deviceless AOT, as
scripts/jax-tpu-aot.py), the gradient of a scanned stack of MaxText-like
decoder layers (MaxText's scan_layers=True and remat_policy=full: each
layer under jax.checkpoint with nothing saveable): RMSNorm in f32, the
fused QKV projection, rotary embedding, causal dot-product attention (XLA's,
not the Pallas kernel MaxText calls), the output projection and residual,
RMSNorm, a ReLU MLP and residual; f32 weights cast to bf16 in the layer
(MaxText's weight_dtype float32, dtype bfloat16), the weights' embed
dimension and the batch sharded over one fsdp axis of every chip (MaxText's
ici_fsdp_parallelism = chips). Prints, for each loop body of the optimized
HLO in its scheduled order, the collectives: synchronous ones by their
op (all-gather, all-reduce), asynchronous ones as their start and done
(async-collective-start/-done: XLA TPU's async collective fusions, whose
transfer runs under the compute fusions scheduled between the two).

Seen with jax/jaxlib 0.10.2 and libtpu 0.0.42.1 from PyPI (`pip install
--target DIR "jax[tpu]"`, PYTHONPATH=DIR), v5e:16x16, the 16B shape (L=4
scanned layers, global batch 1536, embed 5120, 32 heads x 256, MLP 32768),
the same HLO with LIBTPU_INIT_ARGS empty and with the v5e run scripts'
flags (v5e256.sh's: --xla_enable_async_all_gather, --xla_tpu_enable_async_collective_fusion*,
--xla_tpu_overlap_compute_collective_tc, the data-parallel all-reduce
options): the weights are cast to bf16 once, on their shards, before the
loops; in the forward loop's body the output projection's and the QKV
projection's all-gathers are synchronous (the first products of the
layer need them), the MLP's two run as async collective fusions under the
attention's fusions; in the backward loop's body (the rematerialised
forward, then the gradients) the same two are synchronous again, three
are async, and each weight gradient's reduction is a synchronous bf16
all-reduce of the whole gradient (then its shard is sliced: XLA TPU's
reduce-scatter as all-reduce and dynamic-slice).

The 32B and 64B shapes (SHAPE=10240x32x256x32768, B=1024 and B=512;
LIBTPU_INIT_ARGS empty, same jax/libtpu): one body for both, differing
only in the batch of the products' shapes. Forward: the QKV projection's
all-gather alone is synchronous; the output projection's runs async under
the QKV product and the attention, then the MLP's two one at a time, each
under the product before its first reader (w1 under the output projection,
w2 under the w1 product). Backward: the same, plus the QKV weights gathered
again (async, under the gradient products) for the input gradient; every
weight gradient still a synchronous bf16 all-reduce of the whole gradient;
no gathers combined or split (one collective per weight; only the two
RMSNorm gains' f32 all-reduces share one op). docs/validation.md lists both.

Usage: [L=4] [B=1536] [SHAPE=5120x32x256x32768] [TOPO=v5e:16x16] \\
         PYTHONPATH=DIR python3 scripts/jax-tpu-fsdp-scan.py DUMP_DIR
(SHAPE: embed x heads x head_dim x MLP)
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

L, B, S = int(os.environ.get("L", 4)), int(os.environ.get("B", 1536)), 2048
D, H, HD, F = (int(n) for n in os.environ.get("SHAPE", "5120x32x256x32768").split("x"))


def compile_step():
    topo = topologies.get_topology_desc(platform="tpu", topology_name=os.environ.get("TOPO", "v5e:16x16"))
    mesh = Mesh(np.array(topo.devices).reshape(-1), ("fsdp",))

    def sh(*spec):
        return NamedSharding(mesh, P(*spec))

    act = sh("fsdp", None, None)

    def rms(x, g):
        xf = x.astype(jnp.float32)
        y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + 1e-6)
        return (y * g).astype(jnp.bfloat16)

    def rope(x):
        pos = jnp.arange(S, dtype=jnp.float32)[None, :, None, None]
        a = pos / 10000.0 ** (2 * jnp.arange(HD // 2, dtype=jnp.float32) / HD)
        s, c = jnp.sin(a).astype(x.dtype), jnp.cos(a).astype(x.dtype)
        x1, x2 = jnp.split(x, 2, -1)
        return jnp.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)

    def layer(h, p):
        g1, wqkv, wo, g2, w1, w2 = p
        qkv = jnp.einsum("bsd,dn->bsn", rms(h, g1), wqkv.astype(jnp.bfloat16)).reshape(h.shape[0], S, 3, H, HD)
        q, k, v = rope(qkv[:, :, 0]), rope(qkv[:, :, 1]), qkv[:, :, 2]
        o = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(h.shape[0], S, H * HD)
        h = jax.lax.with_sharding_constraint(h + jnp.einsum("bsn,nd->bsd", o, wo.astype(jnp.bfloat16)), act)
        u = jax.nn.relu(jnp.einsum("bsd,df->bsf", rms(h, g2), w1.astype(jnp.bfloat16)))
        return jax.lax.with_sharding_constraint(h + jnp.einsum("bsf,fd->bsd", u, w2.astype(jnp.bfloat16)), act), None

    def loss(params, h):
        h, _ = jax.lax.scan(jax.checkpoint(layer, policy=jax.checkpoint_policies.nothing_saveable), h, params)
        return jnp.sum(h.astype(jnp.float32))

    shapes = [((L, D), sh(None, "fsdp")), ((L, D, 3 * H * HD), sh(None, "fsdp", None)),
              ((L, H * HD, D), sh(None, None, "fsdp")), ((L, D), sh(None, "fsdp")),
              ((L, D, F), sh(None, "fsdp", None)), ((L, F, D), sh(None, None, "fsdp"))]
    params = tuple(jax.ShapeDtypeStruct(s, jnp.float32, sharding=z) for s, z in shapes)
    x = jax.ShapeDtypeStruct((B, S, D), jnp.bfloat16, sharding=act)
    jax.jit(jax.grad(loss), out_shardings=tuple(p.sharding for p in params)).lower(params, x).compile()


OP = re.compile(r"\s+(?:ROOT )?%(\S+) = (.*?) (all-gather|all-reduce|reduce-scatter|fusion)\(")


def has_matmul(comps, name, depth=0):
    """Whether fused computation name (or one it calls) holds a convolution: TPU's matmuls."""
    body = comps.get(name, "")
    return "convolution(" in body or (depth < 3 and any(
        has_matmul(comps, c, depth + 1) for c in re.findall(r"calls=(%[\w.\-]+)", body)))


def census(hlo):
    """Each loop body's collectives in schedule order and, indented, the
    matmul fusions between them ("carrying" one: an async collective
    fusion's state is among its operands, so the transfer runs under it)."""
    comps = {c.partition("\n")[0].split(" ", 1)[0]: c.partition("\n")[2] for c in re.split(r"\n(?=\S)", hlo)}
    for comp in re.split(r"\n(?=\S)", hlo):
        head, _, body = comp.partition("\n")
        if "while" in body.split("\n", 1)[0] or not re.match(r"%\S*region", head):
            continue
        rows = []
        for line in body.split("\n"):
            m = OP.match(line)
            if not m:
                continue
            shape = re.search(r"(bf16|f32)\[[0-9,]+\]", m.group(2))
            shape = shape.group(0) if shape else ""
            if m.group(3) == "fusion" and not m.group(1).startswith("async-collective-"):
                called = re.search(r"calls=(%[\w.\-]+)", line)
                if called and has_matmul(comps, called.group(1)):
                    carries = " (carrying)" if m.group(2).startswith("(") and m.group(2).count("u32[]") >= 4 else ""
                    rows.append(f"    matmul {shape}{carries}")
                continue
            what = m.group(1).rsplit(".", 1)[0] if m.group(3) == "fusion" else m.group(3)
            rows.append(f"{what} {shape}")
        if any(not r.startswith(" ") for r in rows):
            print(head.split(" ", 1)[0])
            print("    " + "\n    ".join(rows))

if __name__ == "__main__":
    compile_step()
    census(open(glob.glob(os.path.join(DUMP, "*jit_loss*after_optimizations.txt"))[0]).read())
