#!/usr/bin/env python3
"""gemm-stream-curve.py: a hardware file's gemm_stream_curve from a public GEMM table (issue 45, wave 46).

Reads one of NVIDIA aiconfigurator's measured GEMM tables (github.com/ai-dynamo/aiconfigurator @095f58a5,
aic-core/src/aiconfigurator_core/systems/data/<gpu>/gemm/<framework>/<version>/gemm_perf.parquet: columns
gemm_dtype, m, n, k, latency in ms; TensorRT-LLM's Linear through cuBLAS, CUDA-graph replay, L2 defeated) and
prints, for the rows of one dtype with m at most --max-m (memory-bound: the weight is read once), the
fraction of the memory's bandwidth each row streams its operands at,

    fraction = bytes / ((latency - kernel_launch) x bandwidth),  bytes = e (MK + KN + MN)

(strata_kernel_gemm_nominal's bytes and the kernel_launch the hardware file adds to every kernel), binned
by octave of bytes from 4 MiB (below, the 40-50 MiB L2 serves repeats: not a stream), and each octave's
median at its geometric middle, the `gemm_stream_curve = SIZE:FRACTION,...` line sim/hw/hw_stream_curve.c
reads. Nothing here looks at a serving case.

--l2 BYTES (wave 49) drops the rows the collector timed out of L2. Its trtllm collector (aiconfigurator
@095f58a5 collector/trtllm/collect_gemm.py l. 176-179, 217-235; the same lines at dec5f4cd2, the commit that
added the 1.3.0rc20 tables) loops over min(5, ceil(L2 / weight)) copies of the weight, weight = n k e, so a
weight of at least L2 / 5 spans the L2 while a smaller one's five copies fit in it and repeat from it: such
rows are dropped (L2 as cudaDevAttrL2CacheSize, 50 MiB on H100 and H200 SXM, 40 MiB on A100). The A100
table (a100_sxm/gemm/trtllm/1.0.0, added at e46d9089f) came from the older collector (collect_gemm.py at
e46d9089f l. 61-63, 103-118: 5 copies for every weight, one graph replayed), the same criterion. The
smallest octave left is the smallest the table holds of an HBM stream.

Needs pyarrow (`python3 -m venv V && V/bin/pip install pyarrow`).
Usage: gemm-stream-curve.py TABLE.parquet --bandwidth 2039e9 --kernel-launch 5e-6 [--dtype bfloat16] [--max-m 16]
A100 (configs/hw/a100.ini): a100_sxm/gemm/trtllm/1.0.0/gemm_perf.parquet, 2039e9, 5e-6, --l2 41943040.
H100 (dgx-h100.ini, h100.ini): h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet, 3.35e12, 3e-6, --l2 52428800.
H200 (h200.ini): h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet, 4.8e12, 3e-6, --l2 52428800."""
import argparse, math, statistics

import pyarrow.parquet as pq


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("--bandwidth", type=float, required=True, help="the memory's bandwidth, bytes/s")
    ap.add_argument("--kernel-launch", type=float, required=True, help="the unit's kernel_launch, s")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--max-m", type=int, default=16)
    ap.add_argument("--elem-bytes", type=float, default=2.0)
    ap.add_argument("--l2", type=float, default=0.0, help="drop rows whose weight is under L2 / 5 bytes (0: keep)")
    a = ap.parse_args()
    rows = [r for r in pq.read_table(a.table).to_pylist() if r["gemm_dtype"] == a.dtype and r["m"] <= a.max_m]
    mib = 2.0 ** 20
    octaves = {}
    for r in rows:
        b = a.elem_bytes * (r["m"] * r["k"] + r["k"] * r["n"] + r["m"] * r["n"])
        t = r["latency"] * 1e-3 - a.kernel_launch
        if b < 4 * mib or t <= 0 or 5 * a.elem_bytes * r["k"] * r["n"] < a.l2:
            continue
        lo = 2 ** math.floor(math.log2(b / mib))
        octaves.setdefault(lo, []).append(b / (t * a.bandwidth))
    points = []
    for lo in sorted(octaves):
        f = octaves[lo]
        if len(f) < 10:
            continue
        mid = lo * math.sqrt(2)
        med = statistics.median(f)
        print(f"{lo:6g}-{2 * lo:6g} MiB  rows {len(f):4d}  median {med:.3f}  at {mid:.3g} MiB")
        size = f"{mid / 1024:.3g}GiB" if mid >= 1024 else f"{mid:.3g}MiB"
        points.append(f"{size}:{med:.3f}")
    print(f"rows used: {sum(len(f) for f in octaves.values())}")
    print("gemm_stream_curve = " + ",".join(points))


if __name__ == "__main__":
    main()
