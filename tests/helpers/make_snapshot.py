#!/usr/bin/env python3
"""make_snapshot.py: writes PyTorch-memory-snapshot-shaped pickles without torch.

The dicts have the shape of torch.cuda.memory._snapshot(): `segments` (the
allocator's final state, with blocks), `device_traces` (one list of events per
device) and optionally `allocator_settings`. Python's standard pickle writes
them, so the tests and the benchmark exercise exactly what a real snapshot
holds (memo, frames, long ints) in the chosen protocol.

Scenarios:
  basic     a small hand-made run whose converted trace the tests check line
            by line (see tests/test_torch_import.c for the derivation);
  settings  basic plus allocator_settings with non-default values;
  settings2 settings plus per-interval divisions, a garbage collection
            threshold and settings only PYTORCH_CUDA_ALLOC_CONF holds;
  oomretry  the allocator frees a cached segment to retry a failed one;
  odd       legal but unusual values (0-byte alloc, odd names, odd segments);
  twodev    two devices: a short random run on 0, basic on 1;
  limit     retries at a 100 MiB process limit (two runs of segment_free,
            each ending in the segment_alloc that had failed);
  emptycache  two empty_cache() calls between allocations;
  otherdev  a snapshot marker on device 0, the history on device 1;
  statedump segments and live blocks, no history (device_traces [[]]);
  expandable  an expandable segment that grows (segment_map) and shrinks
            (segment_unmap) during the events;
  cycles    empty_cache() every step, 12 steps: each release told from a
            retry by the allocator's rule; cyclesframes: by the frames;
  oomdump   the dump an OOM observer writes (ends at an oom);
  legacy    basic in the PyTorch 1.13/2.0 format (no block addresses);
  expandable1  expandable on device 1 of two;
  bigdev    basic's history on device 5000;
  bare      torch.cuda.memory_snapshot() pickled: a list of segments;
  bigint    basic with an alloc of 2^64 bytes (refused);
  hugesegs  two segments of 2^62 bytes (refused: 2^63 in all);
  longnames basic with a 2 MiB frame file name and 2 MiB settings;
  newer     newer fields (user_metadata, compile_context, a user_defined
            annotation), an unknown action and an oom event;
  random    a simulated caching-allocator run (large pool, 20 MiB segments,
            first fit) with --events events, deterministic for a --seed;
  big       random, sized to at least --size-mb megabytes (for bench/).

Usage: make_snapshot.py OUT.pickle [--protocol N] [--scenario S]
                        [--events N] [--size-mb M] [--seed K]
"""
import argparse
import pickle
import random

MiB = 1 << 20
BASE = 0x7F0000000000


def frames(label, line):
    """A stack like real snapshots: C++ frames first, then Python ones. The
    label "empty_cache" is a call of torch.cuda.empty_cache() (torch/cuda/
    memory.py), whose stack the allocator's frees carry."""
    stack = [
        {"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
        {"name": "torch::CapturedTraceback::gather(bool, bool, bool)", "filename": "??", "line": 0},
        {"name": label, "filename": "/home/user/model.py", "line": line},
        {"name": "<module>", "filename": "/home/user/train.py", "line": 7},
    ]
    if label == "empty_cache":
        stack[2] = {"name": "empty_cache", "filename": "/usr/lib/python3/site-packages/torch/cuda/memory.py",
                    "line": 192}
    return stack


def event(action, addr, size, t, stream=0, label="forward", line=10):
    return {"action": action, "addr": addr, "size": size, "stream": stream,
            "time_us": t, "frames": frames(label, line)}


def segment(addr, total, blocks, stream=0, kind="large"):
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    return {"device": 0, "address": addr, "total_size": total, "allocated_size": allocated,
            "active_size": allocated, "requested_size": allocated, "stream": stream,
            "segment_type": kind, "segment_pool_id": (0, 0), "is_expandable": False,
            "blocks": blocks}


def block(addr, size, requested, state):
    return {"address": addr, "size": size, "requested_size": requested, "state": state,
            "frames": []}


def basic():
    """Segment A (20 MiB, large) holds X (4000000 B) before the trace starts;
    segment S (2 MiB, small) holds V (1000 B). During the trace: alloc Y
    (3 MiB) in A after X; free X; segment_alloc B (40 MiB) and alloc Z
    (40 MiB) in it; free Z; segment_free B (empty_cache: no segment_alloc
    follows); alloc W (5 MiB) after Y. Final state: A with Y and W, S with V."""
    A, S, B = BASE, BASE + 0x2000000, BASE + 0x10000000
    x_size = 4000000
    x_block = (x_size + 511) // 512 * 512
    ev = [
        event("alloc", A + x_block, 3 * MiB, 1000, label="embed", line=11),
        event("free_requested", A, x_size, 1100),
        event("free_completed", A, x_size, 1100),
        event("segment_alloc", B, 40 * MiB, 1200),
        event("alloc", B, 40 * MiB, 1200, label="attention", line=42),
        event("free_requested", B, 40 * MiB, 1400),
        event("free_completed", B, 40 * MiB, 1400),
        event("segment_free", B, 40 * MiB, 1500),
        {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 1550},
        event("alloc", A + x_block + 3 * MiB, 5 * MiB, 1600, label="mlp", line=77),
    ]
    w = A + x_block + 3 * MiB
    segs = [
        segment(A, 20 * MiB, [block(A, x_block, 0, "inactive"),
                              block(A + x_block, 3 * MiB, 3 * MiB, "active_allocated"),
                              block(w, 5 * MiB, 5 * MiB, "active_allocated"),
                              block(w + 5 * MiB, A + 20 * MiB - w - 5 * MiB, 0, "inactive")]),
        segment(S, 2 * MiB, [block(S, 1024, 1000, "active_allocated"),
                             block(S + 1024, 2 * MiB - 1024, 0, "inactive")], kind="small"),
    ]
    return {"segments": segs, "device_traces": [ev]}


def oomretry():
    """Segment A (20 MiB) is cached and free, segment B (20 MiB) holds L
    (15 MiB). The program asks for Z (40 MiB): the device is full, so the
    allocator frees A (segment_free) and retries (segment_alloc C, 40 MiB).
    Reserved: 40 MiB, 20 MiB, then 60 MiB, the peak."""
    A, B, C = BASE, BASE + 0x4000000, BASE + 0x8000000
    ev = [
        event("segment_free", A, 20 * MiB, 1000),
        event("segment_alloc", C, 40 * MiB, 1000),
        event("alloc", C, 40 * MiB, 1000, label="big", line=5),
    ]
    segs = [
        segment(B, 20 * MiB, [block(B, 15 * MiB, 15 * MiB, "active_allocated"),
                              block(B + 15 * MiB, 5 * MiB, 0, "inactive")]),
        segment(C, 40 * MiB, [block(C, 40 * MiB, 40 * MiB, "active_allocated")]),
    ]
    return {"segments": segs, "device_traces": [ev]}


def odd():
    """Legal but unusual input: a 0-byte alloc and its free, a stream id of
    -1, a frame file name with blanks, ',' '=' and '#', a segment that says
    small but is 1 TiB, a segment of 0 bytes."""
    A, B, Z = BASE, BASE + (1 << 41), BASE + (1 << 42)
    ev = [
        event("alloc", A + 4096, 0, 10),
        event("free_requested", A + 4096, 0, 11),
        event("free_completed", A + 4096, 0, 11),
        {"action": "alloc", "addr": A, "size": 3 * MiB, "stream": -1, "time_us": 12,
         "frames": [{"name": "f", "filename": "/my dir/a,b=c#d.py", "line": 3}]},
        event("free_completed", A, 3 * MiB, 13, stream=-1),
    ]
    segs = [
        segment(A, 1 << 40, [block(A, 1 << 40, 0, "inactive")], stream=-1, kind="small"),
        segment(Z, 0, [], kind="large"),
        segment(B, 20 * MiB, [block(B, 20 * MiB, 20 * MiB, "active_allocated")]),
    ]
    return {"segments": segs, "device_traces": [ev]}


def twodev():
    """Two GPUs: device 0 a short simulated run, device 1 the basic run."""
    d0 = simulate(40, 7)
    d1 = basic()
    for seg in d1["segments"]:
        seg["device"] = 1
    return {"segments": d0["segments"] + d1["segments"],
            "device_traces": [d0["device_traces"][0], d1["device_traces"][0]]}


def settings():
    snap = basic()
    snap["allocator_settings"] = {
        "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:200",
        "max_split_size": 200 * MiB, "garbage_collection_threshold": 0.0,
        "expandable_segments": False, "pinned_num_register_threads": 1,
        "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
        "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)},
    }
    return snap


def run(steps):
    """Events and final segments of a hand-made run: steps are
    (action, name, size) with action seg (segment_alloc), unseg
    (segment_free), alloc or free; a block is placed at the start of the
    segment named with it ("A" or "A:a1" for a block a1 at A's start)."""
    ev, segs, blocks, where, t, nxt = [], {}, {}, {}, 1000, BASE
    for step in steps:
        action, name, size = step[:3]
        label = step[3] if len(step) > 3 else "forward"
        t += 10
        if action == "seg":
            segs[name] = (nxt, size)
            nxt += size + 2 * MiB
            blocks[name] = 0
            ev.append(event("segment_alloc", segs[name][0], size, t))
        elif action == "unseg":
            addr, total = segs.pop(name)
            ev.append(event("segment_free", addr, total, t, label=label))
        elif action == "oom":
            ev.append(event("oom", name, size, t))
        elif action == "alloc":
            seg, blk = name.split(":")
            where[blk] = (segs[seg][0] + blocks.get(seg, 0), size, seg)
            blocks[seg] = blocks.get(seg, 0) + (size + 511) // 512 * 512
            ev.append(event("alloc", where[blk][0], size, t))
        else:
            addr, sz, seg = where.pop(name)
            ev.append(event("free_requested", addr, sz, t))
            ev.append(event("free_completed", addr, sz, t))
    final = []
    for seg, (addr, total) in segs.items():
        live = [b for b in where.values() if b[2] == seg]
        kind = "small" if total <= 2 * MiB else "large"
        bl = [block(a, (s + 511) // 512 * 512, s, "active_allocated") for a, s, _ in sorted(live)]
        final.append(segment(addr, total, bl, kind=kind))
    return {"segments": final, "device_traces": [ev]}


def limit():
    """A process that may hold 100 MiB (other processes have the rest). A and
    B (40 MiB each) are cached when c1 (50 MiB) comes: 80 + 50 > 100, so the
    allocator frees both and retries (bound: limit < 130 MiB). D (30) and E
    (20) fill the 100 MiB; both cached, h1 (40 MiB) fails (140 > 100), they
    are freed (E first: the pool is ordered by size) and H is allocated.
    Reserved: 40, 80, 40, 0, 50, 80, 100, 80, 50, 90; peak 100 MiB."""
    return run([("seg", "A", 40 * MiB), ("alloc", "A:a1", 40 * MiB),
                ("seg", "B", 40 * MiB), ("alloc", "B:b1", 40 * MiB),
                ("free", "a1", 0), ("free", "b1", 0),
                ("unseg", "A", 0), ("unseg", "B", 0),
                ("seg", "C", 50 * MiB), ("alloc", "C:c1", 50 * MiB),
                ("seg", "D", 30 * MiB), ("alloc", "D:d1", 30 * MiB),
                ("seg", "E", 20 * MiB), ("alloc", "E:e1", 20 * MiB),
                ("free", "d1", 0), ("free", "e1", 0),
                ("unseg", "E", 0), ("unseg", "D", 0),
                ("seg", "H", 40 * MiB), ("alloc", "H:h1", 40 * MiB)])


def emptycache():
    """A (30 MiB), B (20 MiB) and a small segment S; b1 freed, then
    empty_cache() frees B; an alloc in S follows (no retry). C (40 MiB); a1
    and c1 freed, empty_cache() frees A and C. Reserved: 30, 50, 52, 32, 72,
    42, 2; peak 72 MiB."""
    return run([("seg", "A", 30 * MiB), ("alloc", "A:a1", 30 * MiB),
                ("seg", "B", 20 * MiB), ("alloc", "B:b1", 20 * MiB),
                ("seg", "S", 2 * MiB), ("alloc", "S:s1", 1000),
                ("free", "b1", 0), ("unseg", "B", 0),
                ("alloc", "S:s2", 1000),
                ("seg", "C", 40 * MiB), ("alloc", "C:c1", 40 * MiB),
                ("free", "a1", 0), ("free", "c1", 0),
                ("unseg", "A", 0), ("unseg", "C", 0),
                ("alloc", "S:s3", 1000)])


def cycles(n=12, by_frames=False):
    """torch.cuda.empty_cache() called every step (n steps): a step reserves
    A (30 MiB) for a (30 MiB) and B (20 MiB) for b (20 MiB), frees both,
    then empty_cache() frees A and B; the next step's a comes right after.
    Each run of segment_free is followed by a segment_alloc, and reserved
    before it plus that segment (50 + 30) exceeds the peak (50): read as a
    retry, it would imply a limit below 80 MiB that never existed. But a
    freed segment (A, 30 MiB, same stream) could have served the 30 MiB
    request that follows, so no cudaMalloc had failed: the program's.
    The last step keeps a. Reserved per step: 30, 50, 0; peak 50, final 30.
    by_frames: the next request is 40 MiB (nothing freed could serve it)
    and the frees' frames name empty_cache, which alone tells."""
    steps = []
    for k in range(n):
        first = 40 * MiB if by_frames and k > 0 else 30 * MiB
        steps += [("seg", "A", first), ("alloc", "A:a%d" % k, first),
                  ("seg", "B", 20 * MiB), ("alloc", "B:b%d" % k, 20 * MiB),
                  ("free", "a%d" % k, 0), ("free", "b%d" % k, 0),
                  ("unseg", "A", 0, "empty_cache" if by_frames else "step"),
                  ("unseg", "B", 0, "empty_cache" if by_frames else "step")]
    steps += [("seg", "A", 30 * MiB), ("alloc", "A:last", 30 * MiB)]
    return run(steps)


def cyclesframes():
    return cycles(by_frames=True)


def oomdump():
    """What an OOM observer dumps (torch._C._cuda_attach_out_of_memory_observer
    calling torch.cuda.memory._dump_snapshot): a process that may hold
    100 MiB holds a (40 MiB in A) and b (40 MiB in B); b is freed; c asks
    for 64 MiB: cudaMalloc fails (80 + 64 > 100), release_cached_blocks()
    frees B, the retry fails too (40 + 64 > 100) and the allocator records
    the oom (addr: the device's free bytes, 60 MiB; size: 64 MiB), then
    calls the observer. Reserved: 40, 80, 40; peak 80 MiB. Implied: at
    most 40 + 60 = 100 MiB, below 40 + 64 = 104 MiB."""
    return run([("seg", "A", 40 * MiB), ("alloc", "A:a", 40 * MiB),
                ("seg", "B", 40 * MiB), ("alloc", "B:b", 40 * MiB),
                ("free", "b", 0), ("unseg", "B", 0, "matmul"),
                ("oom", 60 * MiB, 64 * MiB)])


def legacy():
    """basic in the format of PyTorch 1.13 and 2.0: blocks without `address`,
    `requested_size` or `frames`, with `history` [{addr, real_size,
    frames}] on live blocks; segments without segment_pool_id or
    is_expandable; events without time_us."""
    snap = basic()
    for seg in snap["segments"]:
        del seg["segment_pool_id"], seg["is_expandable"]
        for b in seg["blocks"]:
            addr, req = b.pop("address"), b.pop("requested_size")
            del b["frames"]
            if b["state"] == "active_allocated":
                b["history"] = [{"addr": addr, "real_size": req, "frames": frames("old", 1)}]
    for e in snap["device_traces"][0]:
        e.pop("time_us", None)
    return snap


def expandable1():
    """expandable on device 1 of a two-device file, device 0 holding a
    shorter history of its own (an expandable segment at another address
    that maps 20 MiB), as every GPU of a multi-GPU run has its own."""
    snap = expandable()
    for seg in snap["segments"]:
        seg["device"] = 1
    E0 = BASE + (1 << 40)
    seg0 = segment(E0, 20 * MiB, [block(E0, 20 * MiB, 20 * MiB, "active_allocated")])
    seg0["is_expandable"] = True
    ev0 = [event("segment_map", E0, 20 * MiB, 900), event("alloc", E0, 20 * MiB, 900)]
    snap["segments"] = [seg0] + snap["segments"]
    snap["device_traces"] = [ev0, snap["device_traces"][0]]
    return snap


def bigdev():
    """basic's history on device 5000 (device_traces holds 5001 lists)."""
    snap = basic()
    for seg in snap["segments"]:
        seg["device"] = 5000
    snap["device_traces"] = [[] for _ in range(5000)] + snap["device_traces"]
    return snap


def longnames():
    """basic with a 2 MiB frame file name on its allocs and a 2 MiB
    allocator setting: the trace's lines must stay under the 1 MiB its
    reader takes."""
    snap = settings()
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            e["frames"][2]["filename"] = "/home/" + "n" * (2 << 20) + ".py"
    snap["allocator_settings"]["PYTORCH_CUDA_ALLOC_CONF"] = "x" * (2 << 20)
    snap["allocator_settings"]["y" * (2 << 20)] = 1
    return snap


def hugesegs():
    """two segments of 2^62 bytes: 2^63 in all, more than a size holds."""
    return {"segments": [segment(0, 1 << 62, []), segment(1 << 62, 1 << 62, [])],
            "device_traces": [[]]}


def bare():
    """torch.cuda.memory_snapshot() pickled: legacy's segments as a list."""
    return legacy()["segments"]


def bigint():
    """basic with an alloc of 2^64 bytes (a pickle int past int64)."""
    snap = basic()
    snap["device_traces"][0][0]["size"] = 1 << 64
    return snap


def otherdev():
    """Device 0 holds only a snapshot marker; device 1 the basic run."""
    snap = basic()
    for seg in snap["segments"]:
        seg["device"] = 1
    marker = {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 1}
    return {"segments": snap["segments"], "device_traces": [[marker], snap["device_traces"][0]]}


def statedump():
    """basic's final state with no history recorded."""
    snap = basic()
    return {"segments": snap["segments"], "device_traces": [[]]}


def expandable():
    """An expandable segment E at BASE: 20 MiB mapped at the first event,
    holding p (15 MiB). q (25 MiB) needs more: 20 MiB mapped at E + 20 MiB,
    q at E + 15 MiB; p is freed; r (1 MiB + 1) takes E; s (20 MiB) maps
    20 MiB more at E + 40 MiB; s is freed and empty_cache() unmaps that page.
    Final: 40 MiB mapped, r and q live. Reserved: 20, 40, 60, 40 MiB."""
    E = BASE
    r_size = MiB + 512
    ev = [
        event("segment_map", E + 20 * MiB, 20 * MiB, 1000),
        event("alloc", E + 15 * MiB, 25 * MiB, 1000),
        event("free_requested", E, 15 * MiB, 1100),
        event("free_completed", E, 15 * MiB, 1100),
        event("alloc", E, MiB + 1, 1200),
        event("segment_map", E + 40 * MiB, 20 * MiB, 1300),
        event("alloc", E + 40 * MiB, 20 * MiB, 1300),
        event("free_requested", E + 40 * MiB, 20 * MiB, 1400),
        event("free_completed", E + 40 * MiB, 20 * MiB, 1400),
        event("segment_unmap", E + 40 * MiB, 20 * MiB, 1500),
    ]
    seg = segment(E, 40 * MiB, [block(E, r_size, MiB + 1, "active_allocated"),
                                block(E + r_size, 15 * MiB - r_size, 0, "inactive"),
                                block(E + 15 * MiB, 25 * MiB, 25 * MiB, "active_allocated")])
    seg["is_expandable"] = True
    return {"segments": [seg], "device_traces": [ev],
            "allocator_settings": {"expandable_segments": True}}


def newer():
    """basic with newer fields on its events, a user_defined annotation, an
    unknown action and an oom (device free: 3 MiB) after the last event."""
    snap = basic()
    ev = snap["device_traces"][0]
    for e in ev:
        e["user_metadata"] = "step=1"
        e["compile_context"] = "N/A"
    ev.insert(1, {"action": "user_defined", "addr": 0, "size": 0, "stream": 0,
                  "time_us": 1050, "frames": [], "user_metadata": "mark"})
    ev.insert(2, {"action": "future_action", "addr": 0, "size": 0, "stream": 0, "time_us": 1060})
    ev.append({"action": "oom", "addr": 3 * MiB, "size": 64 * MiB, "stream": 0, "time_us": 1700,
               "frames": []})
    return snap


def settings2():
    """basic with the settings of newer PyTorch: roundup_power2_divisions
    [64:8] (intervals 1 to 64 MiB: 8), garbage_collection_threshold 0.6,
    max_non_split_rounding_mb and large_segment_size_mb in the conf."""
    snap = settings()
    st = snap["allocator_settings"]
    st["PYTORCH_CUDA_ALLOC_CONF"] = ("max_split_size_mb:200,roundup_power2_divisions:[64:8],"
                                     "max_non_split_rounding_mb:256,large_segment_size_mb:12")
    st["garbage_collection_threshold"] = 0.6
    st["roundup_power2_divisions"] = {str(1 << i): (8 if i <= 6 else 0) for i in range(16)}
    return snap


def simulate(n_events, seed):
    """First-fit over 20 MiB segments (larger requests get their own segment),
    so the final segments and the events agree as in a real snapshot."""
    rng = random.Random(seed)
    segs = []  # [addr, total, {addr: (size, requested)}]
    live = {}  # addr -> (seg index, size, requested)
    ev = []
    next_addr = BASE
    t = 1_700_000_000_000_000
    labels = [("forward", 10), ("backward", 20), ("optimizer_step", 30), ("attention", 40)]
    while len(ev) < n_events:
        t += rng.randint(1, 50)
        label, line = labels[rng.randrange(len(labels))]
        if live and (rng.random() < 0.45 or len(live) > 400):
            addr = rng.choice(list(live))
            si, size, req = live.pop(addr)
            del segs[si][2][addr]
            ev.append(event("free_requested", addr, req, t, label=label, line=line))
            ev.append(event("free_completed", addr, req, t, label=label, line=line))
            continue
        req = rng.choice([rng.randint(1, 1 << 20), rng.randint(1 << 20, 8 << 20),
                          rng.randint(8 << 20, 64 << 20)])
        size = (req + 511) // 512 * 512
        placed = None
        for si, (base, total, blocks) in enumerate(segs):
            cursor = base
            for a in sorted(blocks):
                if a - cursor >= size:
                    break
                cursor = a + blocks[a][0]
            if base + total - cursor >= size:
                placed = (si, cursor)
                break
        if placed is None:
            total = 20 * MiB if size <= 20 * MiB else (size + 2 * MiB - 1) // (2 * MiB) * 2 * MiB
            segs.append([next_addr, total, {}])
            ev.append(event("segment_alloc", next_addr, total, t, label=label, line=line))
            placed = (len(segs) - 1, next_addr)
            next_addr += total + 2 * MiB
        si, addr = placed
        segs[si][2][addr] = (size, req)
        live[addr] = (si, size, req)
        ev.append(event("alloc", addr, req, t, label=label, line=line))
    final = []
    for base, total, blocks in segs:
        bl, cursor = [], base
        for a in sorted(blocks):
            if a > cursor:
                bl.append(block(cursor, a - cursor, 0, "inactive"))
            bl.append(block(a, blocks[a][0], blocks[a][1], "active_allocated"))
            cursor = a + blocks[a][0]
        if cursor < base + total:
            bl.append(block(cursor, base + total - cursor, 0, "inactive"))
        final.append(segment(base, total, bl))
    return {"segments": final, "device_traces": [ev]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--protocol", type=int, default=4)
    ap.add_argument("--scenario", default="basic",
                    choices=["basic", "settings", "settings2", "oomretry", "odd", "twodev", "limit", "emptycache",
                             "otherdev", "statedump", "expandable", "newer", "random", "big", "cycles",
                             "cyclesframes", "oomdump", "legacy", "expandable1", "bigdev", "longnames", "hugesegs", "bigint", "bare"])
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--size-mb", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.scenario == "basic":
        snap = basic()
    elif a.scenario == "settings":
        snap = settings()
    elif a.scenario == "oomretry":
        snap = oomretry()
    elif a.scenario == "odd":
        snap = odd()
    elif a.scenario in ("settings2", "twodev", "limit", "emptycache", "otherdev", "statedump", "expandable",
                        "newer", "cycles", "cyclesframes", "oomdump", "legacy", "expandable1", "bigdev",
                        "longnames", "hugesegs", "bigint", "bare"):
        snap = globals()[a.scenario]()
    elif a.scenario == "random":
        snap = simulate(a.events, a.seed)
    else:
        # About 230 bytes per event in protocol 4: start there, grow until big enough.
        n = int(a.size_mb * 1e6 / 200)
        while True:
            snap = simulate(n, a.seed)
            data = pickle.dumps(snap, protocol=a.protocol)
            if len(data) >= a.size_mb * 1e6:
                break
            n = int(n * a.size_mb * 1e6 / len(data) * 1.05) + 1
        with open(a.out, "wb") as f:
            f.write(data)
        return
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=a.protocol)


if __name__ == "__main__":
    main()
