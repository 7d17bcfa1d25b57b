#!/usr/bin/env python3
"""grow_snapshot.py IN.pickle OUT.pickle SIZE_MB: a bigger snapshot, same shape.

For bench/bench_import.c (memory must not grow with the file). IN is a
protocol-4 snapshot written by Python's pickle (tests/helpers/make_snapshot.py
--scenario big). OUT holds the same document with the first batch of device
0's events (the first MARK ... APPENDS of 1000 events) repeated as often as
it takes to reach SIZE_MB megabytes, so it reads as a longer run:

  - frames (FRAME opcodes, a hint Python's unpickler can do without) are
    removed, so the copies need no frame bookkeeping;
  - in the copies the MEMOIZE opcodes are dropped: every memo key keeps its
    number, and a GET in a copy reads the object its original stored, which
    has the same value. Python's pickle.load reads OUT.

Output: one line, the size of OUT in bytes.
"""
import pickletools
import sys

src, dst, size_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = open(src, "rb").read()
if data[:2] != b"\x80\x04":
    sys.exit("grow_snapshot: %s is not a protocol-4 pickle" % src)

# Unframe: PROTO, then FRAME + length + payload, ..., possibly a small tail.
parts, pos = [data[:2]], 2
while pos < len(data) and data[pos] == 0x95:
    n = int.from_bytes(data[pos + 1:pos + 9], "little")
    parts.append(data[pos + 9:pos + 9 + n])
    pos += 9 + n
parts.append(data[pos:])
flat = b"".join(parts)

# The first batch of device 0's events: after 'device_traces', two lists.
ops = pickletools.genops(flat)
state, depth, start, end = 0, 0, None, None
for op, arg, at in ops:
    if state == 0 and op.name in ("SHORT_BINUNICODE", "BINUNICODE") and arg == "device_traces":
        state = 1
    elif state == 1 and op.name == "MARK":
        state, start, depth = 2, at, 0
    if state == 2:
        if op.name == "MARK":
            depth += 1
        elif op.name in ("APPENDS", "SETITEMS", "TUPLE", "LIST", "DICT", "POP_MARK",
                         "ADDITEMS", "FROZENSET"):
            depth -= 1
        if depth == 0:
            end = at + 1
            break
if end is None or flat[end - 1] != ord("e"):
    sys.exit("grow_snapshot: no batch of events found in %s" % src)
region = list(pickletools.genops(flat[start:end] + b"."))
batch = bytearray()
for (op, _, at), (_, _, after) in zip(region, region[1:]):
    if op.name != "MEMOIZE":
        batch += flat[start + at:start + after]
copies = max(0, -(-(int(size_mb * 1e6) - len(flat)) // len(batch)))
with open(dst, "wb") as f:
    f.write(flat[:end])
    for _ in range(copies):
        f.write(batch)
    f.write(flat[end:])
    print(f.tell())
