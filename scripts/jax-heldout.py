#!/usr/bin/env python3
"""jax-heldout.py: a held-out set of JAX programs for strata's XLA importer
(issue #41: "held-out sets from JAX releases and programs you have not been
shown"). None of these programs is in scripts/jax-corpus.py; the importer was
not developed on them. Run them, once, under several JAX releases and check
the dumps with tests/jax/check_versions.py (the corpus's checker), plus
`strata check` on every imported trace.

The dumping is jax-corpus.py's own (imported from beside this file): the
same XLA flags (CPU backend, 8 host devices), the same files per program
and the same memory-analysis.json / versions.json, so check_versions.py
reads the output as it reads a corpus version directory. A program a
release cannot build or compile (an API it lacks, memory kinds on the CPU
backend before 0.10) is left out with the reason in versions.json.

Usage: python3 scripts/jax-heldout.py OUT
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
shard_map = jc.shard_map_fn


def bf16(*shape, seed=0):
    return f32(*shape, seed=seed).astype(jnp.bfloat16)


def ring_ppermute_bidir():
    """shard_map over 8 devices in a ring: each device sends its block to
    both neighbours (two ppermutes, forward and backward), adds them, and
    the gradient of the sum w.r.t. the input (the transposes: ppermutes the
    other way)."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("r",))
    fwd = [(i, (i + 1) % DEVICES) for i in range(DEVICES)]
    bwd = [(i, (i - 1) % DEVICES) for i in range(DEVICES)]

    def body(x):
        y = jnp.sin(x) + jax.lax.ppermute(x, "r", fwd) * 2.0 + jax.lax.ppermute(x, "r", bwd)
        return jax.lax.psum(jnp.sum(y * y), "r")

    f = shard_map()(body, mesh=mesh, in_specs=(P("r"),), out_specs=P())
    x = jax.device_put(f32(64, 8, seed=1), NamedSharding(mesh, P("r")))
    return jax.grad(f), (x,), {}


def scatter_all_to_all():
    """shard_map with psum_scatter (reduce-scatter, tiled) and all_to_all on
    a 4x2 (x, y) mesh: an expert-style exchange over 'x' then a
    reduce-scatter of the product over 'y', and an all_gather back."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]).reshape(4, 2), ("x", "y"))

    def body(a, w):  # a [8, 16] per device, w [16, 16]
        b = jax.lax.all_to_all(a, "x", 0, 0, tiled=True)
        c = jnp.tanh(b @ w)
        d = jax.lax.psum_scatter(c, "y", scatter_dimension=0, tiled=True)
        return jax.lax.all_gather(d * 2.0, "y", axis=0, tiled=True)

    f = shard_map()(body, mesh=mesh, in_specs=(P("x", "y"), P()), out_specs=P("x", "y"))
    a = jax.device_put(f32(32, 32, seed=1), NamedSharding(mesh, P("x", "y")))
    w = jax.device_put(f32(16, 16, seed=2), NamedSharding(mesh, P()))
    return f, (a, w), {}


def scan_remat_policy():
    """grad through a scan of 6 layers whose body is checkpointed with
    dots_with_no_batch_dims_saveable (matmul outputs saved, the rest
    recomputed), plus a nested checkpoint(prevent_cse=False) inside."""
    policy = jax.checkpoint_policies.dots_with_no_batch_dims_saveable

    def inner(h):
        return jnp.sin(h) * jnp.cos(h)

    def layer(x, w):
        h = x @ w
        h = jax.checkpoint(inner, prevent_cse=False)(h)
        return jnp.tanh(h) + x, None

    def loss(ws, x):
        y, _ = jax.lax.scan(jax.checkpoint(layer, policy=policy), x, ws)
        return jnp.mean(y ** 2)

    return jax.grad(loss), (f32(6, 24, 24, seed=1), f32(12, 24, seed=2)), {}


def donate_tuple():
    """donate_argnums on a tuple pytree argument and a dict: (m, v) and
    {'w': w, 'b': b} donated, outputs of the same shapes (aliased), plus
    an undonated extra argument and an extra output that aliases nothing."""
    def step(state, params, x):
        m, v = state
        g = jax.grad(lambda p: jnp.sum(jnp.tanh(x @ p["w"] + p["b"])))(params)
        m = 0.9 * m + g["w"]
        v = 0.99 * v + g["w"] ** 2
        params = {"w": params["w"] - 0.01 * m / (jnp.sqrt(v) + 1e-6), "b": params["b"] - 0.01 * g["b"]}
        return (m, v), params, jnp.sum(m)

    state = (f32(16, 16, seed=1), f32(16, 16, seed=2))
    params = {"w": f32(16, 16, seed=3), "b": f32(16, seed=4)}
    return step, (state, params, f32(8, 16, seed=5)), {"donate_argnums": (0, 1)}


def mesh3_subgroups():
    """A 2x2x2 (a, b, c) mesh: x sharded on ('a', 'c') and w on 'b'; a
    matmul, a sum over x's first dim (all-reduce over the a and c axes:
    groups of non-adjacent devices) and a psum over ('a', 'b') inside a
    shard_map: collectives on sub-groups of a 3-axis mesh."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]).reshape(2, 2, 2), ("a", "b", "c"))
    xs = NamedSharding(mesh, P(("a", "c"), None))
    ws = NamedSharding(mesh, P(None, "b"))

    def body(y):
        return jax.lax.psum(y, ("a", "b"))

    inner = shard_map()(body, mesh=mesh, in_specs=(P("c", None),), out_specs=P("c", None))

    def f(x, w):
        h = jnp.tanh(x @ w)          # [16, 8] sharded (a,c) x b
        s = jnp.sum(h, axis=0)       # all-reduce over a, c
        return inner(h[:4] * s[None, :])

    return f, (jax.device_put(f32(16, 12, seed=1), xs), jax.device_put(f32(12, 8, seed=2), ws)), {}


def vmap_attention():
    """vmap over 4 heads of single-head attention (softmax(q k^T) v) with
    a causal mask, and its gradient w.r.t. q, k, v."""
    def attn(q, k, v):
        s = q @ k.T / jnp.sqrt(q.shape[-1])
        mask = jnp.tril(jnp.ones((q.shape[0], k.shape[0]), bool))
        return jax.nn.softmax(jnp.where(mask, s, -1e9), -1) @ v

    mh = jax.vmap(attn)

    def loss(q, k, v):
        return jnp.sum(mh(q, k, v) ** 2)

    return jax.grad(loss, argnums=(0, 1, 2)), tuple(f32(4, 16, 8, seed=i) for i in range(3)), {}


def while_loop_newton():
    """lax.while_loop with a data-dependent trip count (Newton iterations
    on x^2 = a until converged or 50 steps), then a matmul of the result."""
    def f(a, w):
        def cond(s):
            i, x, err = s
            return jnp.logical_and(i < 50, err > 1e-6)

        def body(s):
            i, x, _ = s
            nx = 0.5 * (x + a / x)
            return i + 1, nx, jnp.max(jnp.abs(nx - x))

        _, x, _ = jax.lax.while_loop(cond, body, (0, jnp.ones_like(a), jnp.float32(1.0)))
        return x @ w

    return f, (jnp.abs(f32(16, 16, seed=1)) + 1.0, f32(16, 16, seed=2)), {}


def cond_switch():
    """lax.cond and lax.switch on traced predicates, branches of different
    temporaries (a matmul chain, an elementwise op, a reduction)."""
    def f(i, x, w):
        y = jax.lax.cond(jnp.sum(x) > 0, lambda x: jnp.tanh(x @ w) @ w, lambda x: x * 2.0, x)
        return jax.lax.switch(i, [lambda y: y + 1.0, lambda y: y @ w.T, lambda y: jnp.cumsum(y, 0)], y)

    return f, (jnp.int32(1), f32(16, 16, seed=1), f32(16, 16, seed=2)), {}


def custom_vjp_clip():
    """A custom_vjp function (forward tanh(x @ w), backward with a clipped
    gradient and saved residuals), its grad in a training step."""
    @jax.custom_vjp
    def layer(x, w):
        return jnp.tanh(x @ w)

    def fwd(x, w):
        y = jnp.tanh(x @ w)
        return y, (x, w, y)

    def bwd(res, g):
        x, w, y = res
        gy = jnp.clip(g * (1 - y * y), -1.0, 1.0)
        return gy @ w.T, x.T @ gy

    layer.defvjp(fwd, bwd)

    def loss(w1, w2, x):
        return jnp.mean(layer(layer(x, w1), w2) ** 2)

    return jax.grad(loss, argnums=(0, 1)), (f32(16, 32, seed=1), f32(32, 16, seed=2), f32(8, 16, seed=3)), {}


def int8_bf16_mix():
    """Weight-only int8 quantisation: int8 weights and f32 per-column
    scales dequantised to bf16, a bf16 matmul accumulated in f32
    (preferred_element_type), the result in bf16; int32 token ids gather
    a bf16 embedding."""
    def f(wq, scale, emb, tok):
        x = emb[tok]                                     # [8, 32] bf16
        w = (wq.astype(jnp.float32) * scale).astype(jnp.bfloat16)
        y = jax.lax.dot(x, w, preferred_element_type=jnp.float32)
        return jax.nn.relu(y).astype(jnp.bfloat16), jnp.argmax(y, -1).astype(jnp.int8)

    wq = jax.random.randint(jax.random.PRNGKey(1), (32, 48), -127, 127, jnp.int32).astype(jnp.int8)
    tok = jax.random.randint(jax.random.PRNGKey(2), (8,), 0, 64, jnp.int32)
    return f, (wq, f32(48, seed=3), bf16(64, 32, seed=4), tok), {}


def device_slice():
    """A data-parallel step on devices 4..7 of the 8 (a mesh that does not
    start at device 0): batch over 'd', weights replicated and donated,
    gradients all-reduced."""
    mesh = Mesh(np.array(jax.devices()[4:8]), ("d",))
    rep = NamedSharding(mesh, P())
    xs = NamedSharding(mesh, P("d", None))
    return jc.sgd_step(jc.mlp_loss, jax.device_put(f32(16, 24, seed=1), rep),
                       jax.device_put(f32(24, 16, seed=2), rep), jax.device_put(f32(16, 16, seed=3), xs), rep)


def out_pinned_host():
    """An output placed in pinned_host memory by out_shardings only (the
    inputs on the device): the activations of a layer written to the host,
    the loss kept on the device."""
    dev = jax.devices()[0]
    on_host = jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host")
    on_dev = jax.sharding.SingleDeviceSharding(dev, memory_kind="device")

    def step(w, x):
        h = jnp.tanh(x @ w)
        return h, jnp.sum(h @ w.T)

    return step, (f32(16, 32, seed=1), f32(8, 16, seed=2)), {"out_shardings": (on_host, on_dev)}


PROGRAMS = {
    "ring_ppermute_bidir": ring_ppermute_bidir,
    "scatter_all_to_all": scatter_all_to_all,
    "scan_remat_policy": scan_remat_policy,
    "donate_tuple": donate_tuple,
    "mesh3_subgroups": mesh3_subgroups,
    "vmap_attention": vmap_attention,
    "while_loop_newton": while_loop_newton,
    "cond_switch": cond_switch,
    "custom_vjp_clip": custom_vjp_clip,
    "int8_bf16_mix": int8_bf16_mix,
    "device_slice": device_slice,
    "out_pinned_host": out_pinned_host,
}


def normalise(text, script_path):
    """jax-corpus.py's normalisation, for this file's path too."""
    text = text.replace(os.path.abspath(__file__), "jax-heldout.py")
    return re.sub(r'"[^"\n]*/jax-heldout\.py"', '"jax-heldout.py"', text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    assert not set(PROGRAMS) & set(jc.PROGRAMS), "a held-out program is in the corpus"
    jc.PROGRAMS = PROGRAMS
    jc.normalise = normalise
    jc.main(sys.argv[1:])
