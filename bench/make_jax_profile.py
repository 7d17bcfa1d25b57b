#!/usr/bin/env python3
"""make_jax_profile.py FILE N: writes a synthetic jax.profiler trace of N XLA ops.

The CPU backend's form (TSL's trace-event JSON, as tests/data/jax/profile
holds a real one): one process, one executor thread, N `X` events with
args.hlo_op, back to back, each 1 to 20 us long with a fraction of a
microsecond, as measured durations are, so that every `time=` and `at=`
the import writes needs most of a double's digits. It measures how
`strata import jax-profile` streams and writes, nothing else.
"""
import random
import sys

def main():
    out, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(46)
    names = ["fusion", "copy", "dot", "all-reduce", "transpose", "reduce"]
    with open(out, "w") as f:
        f.write('{"displayTimeUnit":"ns","traceEvents":[')
        f.write('{"ph":"M","pid":701,"name":"process_name","args":{"name":"/host:CPU"}},')
        f.write('{"ph":"M","pid":701,"tid":5,"name":"thread_name","args":{"name":"tf_XLAPjRtCpuClient/1"}}')
        ts = 116.393
        for i in range(n):
            dur = rng.randint(1000, 20000) / 1000.0
            name = "%s.%d" % (names[i % len(names)], i % 997)
            f.write(',{"ph":"X","pid":701,"tid":5,"ts":%r,"dur":%r,"name":"%s",'
                    '"args":{"hlo_op":"%s","hlo_module":"jit_step","device_ordinal":0}}'
                    % (ts, dur, name, name))
            ts += dur + rng.randint(0, 999) / 1000.0
        f.write("]}\n")

if __name__ == "__main__":
    main()
