#!/usr/bin/env python3
"""jax-corpus.py: the corpus of real XLA dumps that strata's XLA importer is
checked against (issue #27), for any JAX from 0.4.20 to the newest (issue #41).

Runs JAX on the CPU backend, over 8 host devices, for a set of small programs
and writes, per program, under OUT (default tests/data/jax):

  OUT/NAME/                 the dump files of the program's module:
                            *-buffer-assignment.txt, *-live-range.txt,
                            *-memory-usage-report.txt, the optimized HLO
                            (*after_optimizations.txt); what the version
                            writes (0.4.30 writes no memory-usage report,
                            before 0.10 the live ranges end the
                            buffer-assignment file)
  OUT/memory-analysis.json  per program, XLA's own figures from
                            jax.jit(f).lower(...).compile().memory_analysis():
                            every integer field the version has (argument,
                            output, alias, temp, host_*; peak_memory_in_bytes
                            from 0.7; peak_unpadded_heap_bytes,
                            total_allocation_bytes, indefinite_allocations
                            from 0.11), less the generated code sizes (they
                            depend on the host CPU) and the serialized protos
  OUT/versions.json         the JAX, jaxlib and Python versions used, and
                            under "skipped" each program this version could
                            not build or compile, with the exception's first
                            line (memory kinds on the CPU backend before 0.10,
                            for example)

Shapes are tiny on purpose (the files are committed). The output is a pure
function of the JAX version: module numbers and source paths are stripped
from file names and dumps (module_0012.jit_step -> jit_step, the script's
path -> jax-corpus.py) so a regeneration with the same JAX compares equal.

Usage: python3 scripts/jax-corpus.py [OUT] [--profile]
  --profile  also writes OUT/profile/: a jax.profiler trace of three steps
             of 'scan_mlp', made in a child process (--profile-only) that
             compiles nothing else: every trace file the version writes,
             named after the program: scan_mlp.perfetto_trace.json.gz,
             scan_mlp.trace.json.gz (trace-event JSON) and scan_mlp.xplane.pb
             (XProf's protobuf), for strata import jax-profile. Before JAX
             0.7 the CPU backend records no per-op events in them.
"""
import json
import os
import re
import shutil
import sys
import tempfile

DEVICES = 8
_dump_root = tempfile.mkdtemp(prefix="strata-jax-corpus-")
os.environ["XLA_FLAGS"] = (
    f"--xla_dump_to={_dump_root} --xla_dump_hlo_as_text "
    f"--xla_force_host_platform_device_count={DEVICES} "
    "--xla_dump_hlo_pass_re=^$"
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.ad_checkpoint import checkpoint_name  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

KEEP_SUFFIXES = (
    "after_optimizations-buffer-assignment.txt",
    "after_optimizations-live-range.txt",
    "after_optimizations-memory-usage-report.txt",
    "after_optimizations.txt",
)


# ---- programs ---------------------------------------------------------------
# Each returns (function, args, jit keyword arguments). The names match
# strata's generators where one exists (scan-mlp, adam-mlp, transformer, matmul).

def f32(*shape, seed=0):
    return jax.random.normal(jax.random.PRNGKey(seed), shape, jnp.float32)


def scanned_grad(layer):
    """grad of sum(scan(layer)) w.r.t. the weights (w1, w2), with its
    arguments: the JAX offloading tutorial's scanned MLP at strata gen
    scan-mlp batch=8 dim=16 hidden=32 layers=4 dtype=f32.
    layer(x, (w1, w2)) -> (y, None) is one layer of the scan."""
    batch, dim, hidden, layers = 8, 16, 32, 4

    def loss(w1, w2, x):
        y, _ = jax.lax.scan(layer, x, (w1, w2))
        return jnp.sum(y)

    args = (f32(layers, dim, hidden, seed=1), f32(layers, hidden, dim, seed=2), f32(batch, dim, seed=3))
    return jax.grad(loss, argnums=(0, 1)), args, {}


def scan_mlp(remat):
    """The tutorial's scanned MLP: grad of sum(scan(x@w1@w2)) w.r.t. the
    weights, with remat: every layer recomputed in the backward pass."""
    def layer(x, w):
        w1, w2 = w
        return jnp.tanh(x @ w1) @ w2, None

    return scanned_grad(jax.checkpoint(layer) if remat else layer)


def scan_mlp_offload():
    """The tutorial's scanned MLP whose saved activations go to pinned host
    memory (checkpoint policy offloading its dots), where the CPU backend
    accepts memory kinds."""
    policy = jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=[], names_which_can_be_offloaded=["h"],
        offload_src="device", offload_dst="pinned_host")

    def layer(x, w):
        w1, w2 = w
        h = checkpoint_name(jnp.tanh(x @ w1), "h")
        return h @ w2, None

    return scanned_grad(jax.checkpoint(layer, policy=policy))


def host_offload_params():
    """Parameters kept in pinned host memory, brought to the device inside
    the step (jax.device_put to a memory kind): host-to-device copies."""
    dev = jax.devices()[0]
    on_host = jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host")
    on_dev = jax.sharding.SingleDeviceSharding(dev, memory_kind="device")

    def step(w, x):
        wd = jax.device_put(w, on_dev)
        y = jnp.tanh(x @ wd)
        return jax.device_put(y, on_host), y.sum()

    w = jax.device_put(f32(16, 32, seed=1), on_host)
    return step, (w, f32(8, 16, seed=2)), {"out_shardings": (on_host, on_dev)}


def adam_mlp():
    """The tutorial's MLP training step (seed 002) as strata gen adam-mlp
    dim=16 layers=2 batch=16 dtype=f32 models it: GELU layers, MSE (against
    the input) plus 0.001 L2, optax.chain(clip_by_global_norm(1.0),
    adam(0.1)) written out (optax is not needed): Adam's state is an int32
    count and mu, nu per layer; parameters and state donated."""
    dim, layers, batch = 16, 2, 16
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8

    def loss(params, x):
        h = x
        for w in params:
            h = jax.nn.gelu(h @ w)
        return jnp.mean((h - x) ** 2) + 0.001 * sum(jnp.sum(w * w) for w in params)

    def step(params, state, x):
        count, mu, nu = state
        g = jax.grad(loss)(params, x)
        gnorm = jnp.sqrt(sum(jnp.sum(gi * gi) for gi in g))
        g = [gi * jnp.minimum(1.0, 1.0 / gnorm) for gi in g]
        count = count + 1
        mu = [b1 * m + (1 - b1) * gi for m, gi in zip(mu, g)]
        nu = [b2 * v + (1 - b2) * gi * gi for v, gi in zip(nu, g)]
        c1, c2 = 1 - b1 ** count.astype(jnp.float32), 1 - b2 ** count.astype(jnp.float32)
        params = [p - lr * (m / c1) / (jnp.sqrt(v / c2) + eps) for p, m, v in zip(params, mu, nu)]
        return params, (count, mu, nu)

    params = [f32(dim, dim, seed=i) for i in range(layers)]
    state = (jnp.zeros((), jnp.int32), [jnp.zeros((dim, dim)) for _ in range(layers)],
             [jnp.zeros((dim, dim)) for _ in range(layers)])
    return step, (params, state, f32(batch, dim, seed=9)), {"donate_argnums": (0, 1)}


def transformer(mesh=None):
    """One decoder layer's training step (embeddings tied, attention, MLP,
    layernorm, SGD); strata gen transformer layers=1 d_model=16 heads=2
    seq=8 batch=2 vocab=32 dtype=f32."""
    d, heads, seq, batch, vocab = 16, 2, 8, 2, 32

    def ln(x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)

    def fwd(p, tok):
        x = p["emb"][tok]
        h = ln(x)
        q, k, v = (h @ p["wqkv"]).reshape(batch, seq, 3, heads, d // heads).transpose(2, 0, 3, 1, 4)
        a = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(d // heads), -1) @ v
        x = x + a.transpose(0, 2, 1, 3).reshape(batch, seq, d) @ p["wo"]
        x = x + jax.nn.gelu(ln(x) @ p["w1"]) @ p["w2"]
        logits = ln(x) @ p["emb"].T
        return -jnp.mean(jax.nn.log_softmax(logits)[..., 0])

    def step(p, tok):
        loss, g = jax.value_and_grad(fwd)(p, tok)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g), loss

    p = {"emb": f32(vocab, d, seed=1), "wqkv": f32(d, 3 * d, seed=2), "wo": f32(d, d, seed=3),
         "w1": f32(d, 4 * d, seed=4), "w2": f32(4 * d, d, seed=5)}
    tok = jax.random.randint(jax.random.PRNGKey(7), (batch, seq), 0, vocab)
    return step, (p, tok), {"donate_argnums": (0,)}


def matmul():
    """C = A @ B; strata gen matmul m=64 n=64 k=64 dtype=f32 (XLA's whole
    matmul, not the generator's Pallas blocking)."""
    return (lambda a, b: a @ b), (f32(64, 64, seed=1), f32(64, 64, seed=2)), {}


def mesh_2x4():
    return Mesh(np.array(jax.devices()[:DEVICES]).reshape(2, 4), ("data", "model"))


def sgd_step(loss, w1, w2, x, out_sharding):
    """A step of SGD (rate 0.1) on the weights w1, w2 of loss(w1, w2, x),
    the arguments placed as given (device_put): the program, its arguments
    and its jit options (the weights donated, the new ones sharded as the
    old, the loss as out_sharding)."""
    def step(w1, w2, x):
        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2, x)
        return w1 - 0.1 * g1, w2 - 0.1 * g2, l

    return step, (w1, w2, x), {"out_shardings": (w1.sharding, w2.sharding, out_sharding),
                               "donate_argnums": (0, 1)}


def fsdp_step():
    """An FSDP step over 8 devices: each weight sharded over all 8 on its
    first dimension, gathered for use (all-gather), the gradient
    reduce-scattered back to the shards, the loss all-reduced."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("fsdp",))
    ws = NamedSharding(mesh, P("fsdp", None))
    xs = NamedSharding(mesh, P("fsdp", None))

    def loss(w1, w2, x):
        return jnp.mean(jnp.tanh(x @ w1) @ w2)

    return sgd_step(loss, jax.device_put(f32(64, 128, seed=1), ws), jax.device_put(f32(128, 64, seed=2), ws),
                    jax.device_put(f32(32, 64, seed=3), xs), NamedSharding(mesh, P()))


def mlp_loss(w1, w2, x):
    """The loss tp_step and two_devices shard: mean((tanh(x @ w1) @ w2)^2)."""
    return jnp.mean((jnp.tanh(x @ w1) @ w2) ** 2)


def tp_step():
    """A tensor-parallel MLP step on a 2x4 (data, model) mesh: w1 split by
    columns and w2 by rows over 'model' (Megatron), the batch over 'data':
    all-reduce over 'model' after w2, gradients all-reduced over 'data'."""
    mesh = mesh_2x4()
    w1s = NamedSharding(mesh, P(None, "model"))
    w2s = NamedSharding(mesh, P("model", None))
    xs = NamedSharding(mesh, P("data", None))
    return sgd_step(mlp_loss, jax.device_put(f32(32, 128, seed=1), w1s), jax.device_put(f32(128, 32, seed=2), w2s),
                    jax.device_put(f32(16, 32, seed=3), xs), NamedSharding(mesh, P()))


# ---- issue 41: forms the first nine do not have -----------------------------

def shard_map_fn():
    """jax.shard_map (JAX 0.6 on) or jax.experimental.shard_map.shard_map
    (0.4, 0.5; removed later): the same function, called with mesh=,
    in_specs=, out_specs= only (the replication check's keyword was renamed,
    check_rep -> check_vma, and is left at its default)."""
    if hasattr(jax, "shard_map"):
        return jax.shard_map
    from jax.experimental.shard_map import shard_map
    return shard_map


def donate_update():
    """A donated state written back in place: s (32x32 f32, 4 KiB) is read
    once (its mean) before two matmuls of x, and the result, of s's shape,
    is the output aliased to s (donate_argnums): XLA's live ranges leave s's
    buffer free between that read and the output's write."""
    def step(s, x):
        m = jnp.mean(s)
        h = jnp.tanh(x @ x.T)
        return jnp.tanh(h @ h) * m

    return step, (f32(32, 32, seed=1), f32(32, 32, seed=2)), {"donate_argnums": (0,)}


def pipeline_ppermute():
    """A GPipe pipeline in shard_map on a 4x2 (stage, data) mesh: stage i
    holds layer i's weight, 4 micro-batches go through the 4 stages in 7
    ticks, each tick's activations sent to the next stage with
    lax.ppermute over 'stage' (collective-permutes; the gradient sends them
    back the other way); loss psum'd over both axes, grad w.r.t. the weights."""
    stages, micro, batch, d = 4, 4, 4, 16
    mesh = Mesh(np.array(jax.devices()[:DEVICES]).reshape(stages, DEVICES // stages), ("stage", "data"))
    perm = [(i, (i + 1) % stages) for i in range(stages)]

    def stage_loss(w, x):  # w [1,d,d] this stage's layer; x [micro, batch/2, d]
        w = w[0]
        me = jax.lax.axis_index("stage")
        state = jnp.zeros_like(x[0])
        outs = []
        for t in range(micro + stages - 1):
            y = jnp.tanh(jnp.where(me == 0, x[min(t, micro - 1)], state) @ w)
            outs.append(y)
            state = jax.lax.ppermute(y, "stage", perm)
        last = jnp.stack(outs[stages - 1:])
        return jax.lax.psum(jnp.sum(jnp.where(me == stages - 1, last * last, 0.0)), ("stage", "data"))

    loss = shard_map_fn()(stage_loss, mesh=mesh, in_specs=(P("stage"), P(None, "data")), out_specs=P())
    ws = NamedSharding(mesh, P("stage"))
    xs = NamedSharding(mesh, P(None, "data"))
    w = jax.device_put(f32(stages, d, d, seed=1), ws)
    x = jax.device_put(f32(micro, batch, d, seed=2), xs)
    return jax.value_and_grad(loss), (w, x), {}


def two_devices():
    """A data-parallel step on a 2-device mesh of the 8-device host (the
    module's num_partitions is 2: a file of fewer devices than the host's):
    the batch split in two, the gradients and loss all-reduced, weights
    replicated and donated."""
    mesh = Mesh(np.array(jax.devices()[:2]), ("data",))
    rep = NamedSharding(mesh, P())
    xs = NamedSharding(mesh, P("data", None))
    return sgd_step(mlp_loss, jax.device_put(f32(16, 32, seed=1), rep), jax.device_put(f32(32, 16, seed=2), rep),
                    jax.device_put(f32(8, 16, seed=3), xs), rep)


def subaxis_reduce():
    """A 4x2 (batch, feats) mesh and a reshape that splits the batch axis:
    x [8,16] sharded (batch, feats) is reshaped to [2,4,16], so its first
    two dimensions are sharded on the sub-axes batch:(1)2 and batch:(2)2
    (the mesh as 2x2x2), and summed over the second: an all-reduce over the
    sub-axis batch:(2)2 (Shardy writes it {'batch':(2)2}; GSPMD as device
    groups)."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]).reshape(4, 2), ("batch", "feats"))
    xs = NamedSharding(mesh, P("batch", "feats"))

    def f(x):
        return jnp.sum(jnp.tanh(x.reshape(2, 4, 16)), axis=1)

    return f, (jax.device_put(f32(8, 16, seed=1), xs),), {}


def host_offload_sharded():
    """host_offload over 8 devices: w [64,16] sharded over 'x' in
    pinned_host memory (NamedSharding with memory_kind), brought to the
    device inside the step, the result written back to pinned_host."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("x",))
    on_host = NamedSharding(mesh, P("x", None), memory_kind="pinned_host")
    on_dev = NamedSharding(mesh, P("x", None), memory_kind="device")

    def step(w, x):
        y = jnp.tanh(jax.device_put(w, on_dev) * x)
        return jax.device_put(y, on_host), jnp.sum(y)

    w = jax.device_put(f32(64, 16, seed=1), on_host)
    x = jax.device_put(f32(64, 16, seed=2), on_dev)
    return step, (w, x), {"out_shardings": (on_host, NamedSharding(mesh, P()))}


PROGRAMS = {
    "scan_mlp": lambda: scan_mlp(False),
    "scan_mlp_remat": lambda: scan_mlp(True),
    "scan_mlp_offload": scan_mlp_offload,
    "host_offload": host_offload_params,
    "adam_mlp": adam_mlp,
    "transformer": transformer,
    "matmul": matmul,
    "fsdp_step": fsdp_step,
    "tp_step": tp_step,
    "donate_update": donate_update,
    "pipeline_ppermute": pipeline_ppermute,
    "two_devices": two_devices,
    "subaxis_reduce": subaxis_reduce,
    "host_offload_sharded": host_offload_sharded,
}


# ---- dumping ----------------------------------------------------------------

def newest_module(before):
    """The module dumped by the last compile: the jit_ module files new since `before`."""
    new = sorted(set(os.listdir(_dump_root)) - before)
    stems = sorted({m.group(1) for n in new
                    if (m := re.match(r"(module_\d+\.jit_[^.]+)\..*after_optimizations-buffer-assignment\.txt$", n))})
    return stems[-1] if stems else None, new


def normalise(text, script_path):
    text = text.replace(script_path, "jax-corpus.py")
    return re.sub(r'"[^"\n]*/jax-corpus\.py"', '"jax-corpus.py"', text)


# Fields of memory_analysis() left out: the size of the generated machine
# code depends on the host CPU's features, so it would make the corpus differ
# between machines with the same JAX.
MA_LEFT_OUT = ("generated_code_size_in_bytes", "host_generated_code_size_in_bytes")


def memory_figures(ma):
    """Every integer field of memory_analysis() this version has (the set
    grows: 0.7 adds peak_memory_in_bytes; 0.11 peak_unpadded_heap_bytes,
    total_allocation_bytes, indefinite_allocations), less MA_LEFT_OUT (the
    bytes fields, serialized_hlo_proto or serialized_buffer_assignment_proto,
    are not integers)."""
    figures = {}
    for k in dir(ma):
        if k.startswith("_") or k in MA_LEFT_OUT:
            continue
        v = getattr(ma, k)
        if isinstance(v, int) and not isinstance(v, bool):
            figures[k] = v
    return figures


def run_program(name, out_dir, script_path):
    fn, args, jit_kw = PROGRAMS[name]()
    before = set(os.listdir(_dump_root))
    compiled = jax.jit(fn, **jit_kw).lower(*args).compile()
    ma = compiled.memory_analysis()
    stem, new = newest_module(before)
    if stem is None:
        raise SystemExit(f"jax-corpus: {name}: no module dumped under {_dump_root}")
    dst = os.path.join(out_dir, name)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    module = stem.split(".", 1)[1]
    for n in new:
        if not n.startswith(stem + "."):
            continue
        suffix = n[len(stem) + 1:]
        if not any(suffix.endswith(s) for s in KEEP_SUFFIXES) or "before_optimizations" in suffix:
            continue
        with open(os.path.join(_dump_root, n), encoding="utf-8") as f:
            text = normalise(f.read(), script_path)
        with open(os.path.join(dst, f"{module}.{suffix}"), "w", encoding="utf-8") as f:
            f.write(text)
    figures = {"module": module, "devices": max(len(s.device_set) for s in jax.tree_util.tree_leaves(compiled.input_shardings))}
    figures.update(memory_figures(ma))
    return figures, (fn, args, jit_kw)


def profile_child(out_dir):
    """--profile-only: the profile, in a process of its own that compiles
    nothing else. The .xplane.pb holds the HLO of every module the process
    compiled (1.4 MB after the whole corpus and its jax.random calls), so
    the arguments are made with NumPy here (no jax.random module) and only
    the profiled program is compiled: its values do not matter."""
    global f32

    def f32(*shape, seed=0):  # noqa: F811 (NumPy in place of jax.random in this process)
        return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))

    kept = write_profile(out_dir, PROGRAMS["scan_mlp"]())
    print(f"jax-corpus: profile: {', '.join(kept)}", file=sys.stderr)


def write_profile(out_dir, program):
    """A jax.profiler trace of a few steps of `program` (create_perfetto_trace=True).
    Keeps every trace file the version writes, renamed after the program
    (the profiler names them after the host): perfetto_trace.json.gz (Perfetto
    JSON), HOST.trace.json.gz (TensorBoard's trace-event JSON, not written by
    newer versions) and HOST.xplane.pb (XProf's protobuf). Returns the names kept."""
    fn, args, jit_kw = program
    f = jax.jit(fn, **{k: v for k, v in jit_kw.items() if k != "donate_argnums"})
    jax.block_until_ready(f(*args))
    tmp = tempfile.mkdtemp(prefix="strata-jax-profile-")
    with jax.profiler.trace(tmp, create_perfetto_trace=True):
        for _ in range(3):
            jax.block_until_ready(f(*args))
    dst = os.path.join(out_dir, "profile")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    kept, other = [], []
    for root, _, files in os.walk(tmp):
        for n in sorted(files):
            for suffix in ("perfetto_trace.json.gz", ".trace.json.gz", ".xplane.pb"):
                if n == suffix or (suffix[0] == "." and n.endswith(suffix)):
                    name = "scan_mlp." + suffix.lstrip(".")
                    shutil.copy(os.path.join(root, n), os.path.join(dst, name))
                    kept.append(name)
                    break
            else:
                other.append(n)
    if other:
        print(f"jax-corpus: profile: also written and not kept: {', '.join(other)}", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    if os.path.exists(os.path.join(dst, "scan_mlp.xplane.pb")):
        drop_hostnames(os.path.join(dst, "scan_mlp.xplane.pb"))
    return sorted(kept)


def drop_hostnames(path):
    """Removes XSpace.hostnames (field 4 of the top-level message,
    tsl/profiler/protobuf/xplane.proto) from an .xplane.pb, so the corpus
    names no machine; the other top-level fields are copied byte for byte."""
    def varint(b, i):
        r = shift = 0
        while True:
            c = b[i]
            r |= (c & 0x7F) << shift
            i, shift = i + 1, shift + 7
            if c < 0x80:
                return r, i

    data = open(path, "rb").read()
    out, i = bytearray(), 0
    while i < len(data):
        start = i
        key, i = varint(data, i)
        wire = key & 7
        if wire == 0:
            _, i = varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(data, i)
            i += n
        else:
            raise SystemExit(f"jax-corpus: {path}: unexpected protobuf wire type {wire} at byte {start}")
        if key >> 3 != 4:
            out += data[start:i]
    with open(path, "wb") as f:
        f.write(out)


def main(argv):
    profile = "--profile" in argv
    profile_only = "--profile-only" in argv
    argv = [a for a in argv if a not in ("--profile", "--profile-only")]
    out_dir = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "jax")
    os.makedirs(out_dir, exist_ok=True)
    if profile_only:
        profile_child(out_dir)
        shutil.rmtree(_dump_root, ignore_errors=True)
        return
    script_path = os.path.abspath(__file__)
    analysis = {}
    skipped = {}
    for name in PROGRAMS:
        # A program this version cannot build or compile (an API it lacks,
        # a memory kind its CPU backend refuses) is left out and said why,
        # in versions.json and on standard error; the others go on.
        try:
            analysis[name], _ = run_program(name, out_dir, script_path)
        except Exception as e:  # noqa: BLE001 (reported, not hidden)
            first = (str(e).strip().splitlines() or [""])[0][:300]
            skipped[name] = f"{type(e).__name__}: {first}"
            shutil.rmtree(os.path.join(out_dir, name), ignore_errors=True)
            print(f"jax-corpus: {name}: left out: {skipped[name]}", file=sys.stderr)
            continue
        print(f"jax-corpus: {name}: {analysis[name]['module']}, argument {analysis[name]['argument_size_in_bytes']} "
              f"output {analysis[name]['output_size_in_bytes']} alias {analysis[name]['alias_size_in_bytes']} "
              f"temp {analysis[name]['temp_size_in_bytes']}", file=sys.stderr)
    with open(os.path.join(out_dir, "memory-analysis.json"), "w", encoding="utf-8") as f:
        json.dump(analysis, f, indent=1, sort_keys=True)
        f.write("\n")
    import jaxlib
    import platform
    versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "python": platform.python_version(),
                "backend": jax.default_backend(), "devices": DEVICES}
    if skipped:
        versions["skipped"] = skipped
    with open(os.path.join(out_dir, "versions.json"), "w", encoding="utf-8") as f:
        json.dump(versions, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(_dump_root, ignore_errors=True)
    if profile:
        # The child runs this file compiled under the name jax-corpus.py, so
        # the HLO the .xplane.pb holds names no path (as normalise() does
        # for the dumps).
        import subprocess
        child = ("import sys; p = sys.argv[1]; sys.argv = [p] + sys.argv[2:]; "
                 "exec(compile(open(p, encoding='utf-8').read(), 'jax-corpus.py', 'exec'), "
                 "{'__name__': '__main__', '__file__': p})")
        subprocess.run([sys.executable, "-c", child, script_path, out_dir, "--profile-only"], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
