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
  oomretry  the allocator frees a cached segment to retry a failed one;
  odd       legal but unusual values (0-byte alloc, odd names, odd segments);
  twodev    two devices: a short random run on 0, basic on 1;
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
    """A stack like real snapshots: C++ frames first, then Python ones."""
    return [
        {"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
        {"name": "torch::CapturedTraceback::gather(bool, bool, bool)", "filename": "??", "line": 0},
        {"name": label, "filename": "/home/user/model.py", "line": line},
        {"name": "<module>", "filename": "/home/user/train.py", "line": 7},
    ]


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
                    choices=["basic", "settings", "oomretry", "odd", "twodev", "random", "big"])
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
    elif a.scenario == "twodev":
        snap = twodev()
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
