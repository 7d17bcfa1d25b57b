#!/usr/bin/env python3
"""make_host_snapshot.py: writes the tests/data/torch-host/ snapshots, which
hold the pinned host allocator's part of a PyTorch memory snapshot.

PyTorch 2.14 and later write `host_segments` and `host_traces` beside
`segments` and `device_traces` when
torch.cuda.memory._record_memory_history(record_pinned_host_memory=True)
recorded CachingHostAllocatorImpl (aten/src/ATen/core/CachingHostAllocator.h).
No PyTorch without CUDA can write one, so these dicts are written by hand in
the layout of the 2.15.0 wheel (torch 2.15.0+cu132, git d0f2af8b):
torch/csrc/cuda/Module.cpp's THCPModule_memorySnapshot, read from
libtorch_python.so, makes each host segment

    {device: -1, address, total_size, allocated_size (total_size if
     allocated, else 0), active_size (total_size if allocated or waiting for
     its streams' events, else 0), requested_size (= total_size), stream: 0,
     segment_type: 'small', segment_pool_id: (0, 0), is_expandable: False,
     frames, blocks: [{address, size, requested_size, state, frames}]}

(every pinned block is its own cudaHostAlloc: one block per segment), and
`host_traces` one flat list of trace entries with the device traces' keys,
written by the same code (stream 0).

The run (docs/torch-import.md derives its figures): before recording, a
cached 1 MiB block P0 and a live 4096-byte block P1; then pin_memory() of
600000 bytes reuses P0 (1 MiB, the request rounded to a power of two);
segment_alloc P2 (2 MiB) and its alloc; P0 and P2 freed (free_requested,
free_completed); torch._C._host_emptyCache() frees both (two segment_free);
segment_alloc P3 (8 MiB), alloc, free, and its segment_free right after (a
block above pinned_max_cached_size is not cached). The device part is
make_snapshot.py's basic().

Usage: make_host_snapshot.py OUTDIR   (writes pinned.pickle, pinned-only.pickle,
                                       pinned-newer.pickle, pinned-bad.pickle)
"""
import copy
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_snapshot as ms  # noqa: E402

HB = 0x7E0000000000
MiB = ms.MiB
P0, P1, P2, P3 = HB, HB + 0x200000, HB + 0x400000, HB + 0x800000


def host_event(action, addr, size, t, label="loader", line=21):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t,
            "frames": ms.frames(label, line)}


def host_segment(addr, size, state):
    allocated = size if state == "active_allocated" else 0
    active = size if state in ("active_allocated", "active_pending_free") else 0
    return {"device": -1, "address": addr, "total_size": size, "allocated_size": allocated,
            "active_size": active, "requested_size": size, "stream": 0, "segment_type": "small",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
            "blocks": [{"address": addr, "size": size, "requested_size": size, "state": state,
                        "frames": []}]}


def host_part():
    ev = [
        host_event("alloc", P0, MiB, 900),
        host_event("segment_alloc", P2, 2 * MiB, 1150),
        host_event("alloc", P2, 2 * MiB, 1150, line=22),
        host_event("free_requested", P0, MiB, 1300),
        host_event("free_completed", P0, MiB, 1350),
        host_event("free_requested", P2, 2 * MiB, 1450),
        host_event("free_completed", P2, 2 * MiB, 1450),
        host_event("segment_free", P0, MiB, 1700, label="empty_cache"),
        host_event("segment_free", P2, 2 * MiB, 1700, label="empty_cache"),
        host_event("segment_alloc", P3, 8 * MiB, 1800),
        host_event("alloc", P3, 8 * MiB, 1800, line=23),
        host_event("free_requested", P3, 8 * MiB, 1900),
        host_event("free_completed", P3, 8 * MiB, 1900),
        host_event("segment_free", P3, 8 * MiB, 1900),
    ]
    return [host_segment(P1, 4096, "active_allocated")], ev


def pinned():
    snap = ms.basic()
    snap["host_segments"], snap["host_traces"] = host_part()
    return snap


def pinned_only():
    """record_cuda=False: no device history, the host's alone."""
    segs, ev = host_part()
    return {"segments": [], "device_traces": [[]], "host_segments": segs, "host_traces": ev}


def pinned_newer():
    """pinned with a key this importer does not know on a host segment, a
    host block and a host event, and an unknown host action: read past and
    counted."""
    snap = pinned()
    snap["host_segments"][0]["future_key"] = 1
    snap["host_segments"][0]["blocks"][0]["future_block_key"] = "x"
    snap["host_traces"][0]["future_key"] = [1, 2]
    snap["host_traces"].insert(1, {"action": "future_action", "addr": 0, "size": 0, "stream": 0,
                                   "time_us": 950})
    return snap


def pinned_bad():
    """A known key with a bad value: refused, naming it."""
    snap = pinned()
    snap["host_segments"][0]["total_size"] = "4096"
    return snap


def main():
    out = sys.argv[1]
    for name, fn in (("pinned", pinned), ("pinned-only", pinned_only),
                     ("pinned-newer", pinned_newer), ("pinned-bad", pinned_bad)):
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(copy.deepcopy(fn()), f, protocol=4)


if __name__ == "__main__":
    main()
