#!/usr/bin/env python3
"""jax-fresh.py: a second held-out set of JAX programs for strata's XLA
importer (wave 15, "the newest jaxlib's dumps"): forms neither
scripts/jax-corpus.py nor scripts/jax-heldout.py has, chosen for the HLO
constructs they make XLA write: fp8 and bf16 element types, custom-calls
(LAPACK on the CPU backend, host callbacks), sort and top-k, random bits,
scatter and gather, reduce-window and select-and-scatter, a fori_loop with
a dynamic-update-slice, and collectives inside shard_map over 8 host
devices (all-gather untiled, pmax, psum_scatter), donated buffers.

The dumping is jax-corpus.py's own (imported from beside this file), so
tests/jax/check_versions.py reads the output as a corpus version directory.

Usage: python3 scripts/jax-fresh.py OUT
"""
import importlib.util
import os
import re
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("jax_corpus", os.path.join(_here, "jax-corpus.py"))
jc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jc)  # sets XLA_FLAGS before JAX is imported

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

f32 = jc.f32
DEVICES = jc.DEVICES


def fp8_matmul():
    """fp8 (e4m3fn weights, e5m2 activations) scaled matmul accumulated in
    f32, the output cast to bf16: the element types f8e4m3fn, f8e5m2, bf16."""
    def f(x, w, sx, sw):
        y = jax.lax.dot(x.astype(jnp.float8_e5m2), w, preferred_element_type=jnp.float32)
        return (y * sx * sw).astype(jnp.bfloat16)

    w = f32(32, 48, seed=1).astype(jnp.float8_e4m3fn)
    return f, (f32(16, 32, seed=2), w, jnp.float32(0.5), jnp.float32(2.0)), {}


def attention_bf16():
    """Causal multi-head attention in bf16 (jax.nn.dot_product_attention,
    XLA implementation) and its gradient w.r.t. q, k, v."""
    def loss(q, k, v):
        o = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
        return jnp.sum(o.astype(jnp.float32) ** 2)

    qkv = tuple(f32(2, 16, 4, 8, seed=i).astype(jnp.bfloat16) for i in range(3))
    return jax.grad(loss, argnums=(0, 1, 2)), qkv, {}


def lapack_custom_call():
    """Cholesky solve and eigh: the CPU backend's LAPACK custom-calls
    (potrf, syevd) and a triangular solve."""
    def f(a, b):
        spd = a @ a.T + 16.0 * jnp.eye(a.shape[0])
        c = jnp.linalg.cholesky(spd)
        x = jax.scipy.linalg.solve_triangular(c, b, lower=True)
        ev, vecs = jnp.linalg.eigh(spd)
        return x, ev, vecs @ b

    return f, (f32(16, 16, seed=1), f32(16, 4, seed=2)), {}


def host_callback():
    """jax.pure_callback: a host callback inside the program (a custom-call
    with a host function), between two matmuls."""
    def host_fn(x):
        return np.tanh(x).astype(np.float32)

    def f(x, w):
        h = x @ w
        h = jax.pure_callback(host_fn, jax.ShapeDtypeStruct(h.shape, h.dtype), h)
        return h @ w.T

    return f, (f32(8, 16, seed=1), f32(16, 16, seed=2)), {}


def sort_topk_rng():
    """jax.lax.top_k, a sort of key/value pairs, and random bits drawn
    inside the program from a key argument (threefry)."""
    def f(key, x):
        noise = jax.random.uniform(key, x.shape)
        vals, idx = jax.lax.top_k(x + noise, 4)
        keys, perm = jax.lax.sort_key_val(x[:, 0], jnp.arange(x.shape[0]))
        return vals, idx, keys, perm

    return f, (jax.random.PRNGKey(3), f32(32, 16, seed=1)), {}


def scatter_segment():
    """Embedding gradient: a gather of rows by token id, a segment_sum
    (scatter-add) back into a table donated and updated in place."""
    def step(table, tok, g):
        rows = table[tok]
        upd = jax.ops.segment_sum(g * rows, tok, num_segments=table.shape[0])
        return table - 0.1 * upd, jnp.sum(rows)

    tok = jax.random.randint(jax.random.PRNGKey(2), (24,), 0, 64)
    return step, (f32(64, 16, seed=1), tok, f32(24, 16, seed=3)), {"donate_argnums": (0,)}


def conv_pool_grad():
    """A conv + max-pool + mean loss and its gradient w.r.t. the kernel:
    convolution, reduce-window, select-and-scatter (the pool's transpose)."""
    def loss(k, x):
        y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        p = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.mean(jax.nn.relu(p))

    return jax.grad(loss), (f32(3, 3, 4, 8, seed=1), f32(2, 8, 8, 4, seed=2)), {}


def fori_dus():
    """A fori_loop of 6 steps writing row i of a buffer each step
    (dynamic-update-slice in a while loop), a donated buffer."""
    def f(buf, x, w):
        def body(i, s):
            b, h = s
            h = jnp.tanh(h @ w)
            return jax.lax.dynamic_update_slice(b, h[None], (i, 0, 0)), h

        b, h = jax.lax.fori_loop(0, buf.shape[0], body, (buf, x))
        return b, h

    return f, (jnp.zeros((6, 8, 16)), f32(8, 16, seed=1), f32(16, 16, seed=2)), {"donate_argnums": (0,)}


def collectives_mix():
    """shard_map over 8 devices as a 2x4 (d, m) mesh: an untiled all_gather
    over 'm', a pmax over 'd', a psum_scatter over 'm', axis_index."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]).reshape(2, 4), ("d", "m"))

    def body(x):  # [4, 8] per device
        g = jax.lax.all_gather(x, "m")                       # [4, 4, 8]
        mx = jax.lax.pmax(jnp.max(g, axis=0), "d")           # [4, 8]
        s = jax.lax.psum_scatter(mx * jax.lax.axis_index("m"), "m", scatter_dimension=0, tiled=True)
        return s                                             # [1, 8]

    f = jc.shard_map_fn()(body, mesh=mesh, in_specs=(P("d", "m"),), out_specs=P(("d", "m")))
    return f, (jax.device_put(f32(8, 32, seed=1), NamedSharding(mesh, P("d", "m"))),), {}


def sharded_attention_bf16():
    """Attention sharded over heads on 8 devices by jit's sharding
    propagation (q, k, v sharded on the head dimension, the output
    projection replicated): bf16, a reduce over heads (all-reduce)."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("h",))
    hs = NamedSharding(mesh, P(None, None, "h", None))

    def f(q, k, v, wo):
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / 4.0
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s.astype(jnp.float32), -1).astype(q.dtype), v)
        return jnp.einsum("bqhd,hde->bqe", o, wo)

    qkv = tuple(jax.device_put(f32(2, 8, 8, 16, seed=i).astype(jnp.bfloat16), hs) for i in range(3))
    wo = jax.device_put(f32(8, 16, 32, seed=5).astype(jnp.bfloat16), NamedSharding(mesh, P("h", None, None)))
    return f, (*qkv, wo), {}


PROGRAMS = {
    "fp8_matmul": fp8_matmul,
    "attention_bf16": attention_bf16,
    "lapack_custom_call": lapack_custom_call,
    "host_callback": host_callback,
    "sort_topk_rng": sort_topk_rng,
    "scatter_segment": scatter_segment,
    "conv_pool_grad": conv_pool_grad,
    "fori_dus": fori_dus,
    "collectives_mix": collectives_mix,
    "sharded_attention_bf16": sharded_attention_bf16,
}


def normalise(text, script_path):
    """jax-corpus.py's normalisation, for this file's path too."""
    text = text.replace(os.path.abspath(__file__), "jax-fresh.py")
    return re.sub(r'"[^"\n]*/jax-fresh\.py"', '"jax-fresh.py"', text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    jc.PROGRAMS = PROGRAMS
    jc.normalise = normalise
    jc.main(sys.argv[1:])
