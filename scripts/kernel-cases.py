#!/usr/bin/env python3
"""Writes validation/kernels.ini and validation/kernels-heldout.ini (group
`kernels`) and their traces under validation/traces/kernels/, from
  - validation/data/aiconfigurator-gemm-bf16.csv (A100 and H100 GEMMs),
  - the TPU v6e GEMM sweep and the FlashAttention-2 README figures, whose
    rows are listed below with their sources.
Held-out rows (every third of each set, fixed before any model output) go to
kernels-heldout.ini. Run from the repository root; rerun after editing."""
import csv, os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
V = os.path.join(ROOT, "validation")
T = os.path.join(V, "traces", "kernels")
AIC = ("https://github.com/ai-dynamo/aiconfigurator/tree/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
       "aic-core/src/aiconfigurator_core/systems/data/%s/gemm/trtllm/%s/gemm_perf.parquet (Apache-2.0)")
V6E = ("https://github.com/yangwhale/gpu-tpu-pedia/blob/66f72bde7a188ed16b200a6cf9614c6082a660d1/"
       "tpu/v7_perf/chay_gemm_benchmark_simple/results_v6e.csv (bfloat16 rows)")
V6E_TRACE = ("https://github.com/yangwhale/gpu-tpu-pedia/blob/6744feed05af6f4e7e9dd63ed198ed8c484fafae/"
             "tpu/v7_perf/chay_gemm_benchmark_simple/results_trace_test.csv")
FA2 = ("https://github.com/Dao-AILab/flash-attention/blob/0251105a2fb19d2957484b7f023cd8c115286ced/"
       "assets/flash2_%s_fwd_bwd_benchmark.png (README 'Performance' figure, bar labels; BSD-3-Clause)")
# The v6e sweep: id, held out, m, n, k, time (us), as the source prints it.
V6E_ROWS = """1 no 128 4096 4096 150.237
2 no 256 4096 4096 157.283
3 yes 512 4096 4096 144.488
4 no 1024 4096 4096 166.48
5 no 2048 4096 4096 204.272
6 yes 4096 4096 4096 288.541
7 no 8192 4096 4096 449.117
8 no 128 8192 8192 211.661
9 yes 256 8192 8192 211.789
10 no 512 8192 8192 228.356
11 no 1024 8192 8192 297.95
12 yes 2048 8192 8192 460.88
13 no 4096 8192 8192 798.008
14 no 8192 8192 8192 1645.743
15 yes 128 4096 7168 139.631
16 no 256 4096 7168 147.624
17 no 512 4096 7168 164.771
18 yes 1024 4096 7168 209.158
19 no 2048 4096 7168 288.873
20 no 4096 4096 7168 429.831
21 yes 8192 4096 7168 754.564
22 no 128 7168 4096 135.586
23 no 256 7168 4096 142.472
24 yes 512 7168 4096 160.751
25 no 1024 7168 4096 215.608
26 no 2048 7168 4096 284.593
27 yes 4096 7168 4096 437.16
28 no 8192 7168 4096 706.14"""
# The host's cost of one jitted call with block_until_ready in the source's
# end-to-end ("legacy") timing: its 8192^3 run takes 1645.743 us end to end
# and 1510.944 us of device time in its profiler-based run.
DISPATCH_US = 1645.743 - 1510.944
# FlashAttention-2 forward+backward (fp16/bf16, hidden 2048, 16k tokens per
# batch): device, causal, batch, seqlen, heads, headdim, TFLOP/s; the rows of
# the figures that are FlashAttention-2's (not FA1 or PyTorch's).
FA2_ROWS = """a100 no 32 512 32 64 132
a100 no 8 2048 32 64 162
a100 no 4 4096 32 64 171
a100 no 2 8192 32 64 175
a100 no 1 16384 32 64 176
a100 no 8 2048 16 128 187
a100 no 4 4096 16 128 196
a100 no 2 8192 16 128 201
a100 no 1 16384 16 128 203
a100 yes 32 512 32 64 88
a100 yes 16 1024 32 64 119
a100 yes 8 2048 32 64 140"""


def write_trace(name, lines):
    with open(os.path.join(T, name), "w") as f:
        f.write("strata-trace 1\n" + "\n".join(lines) + "\n")
    return "traces/kernels/" + name


def case(out, title, source, setup, measured, hw, trace, note):
    out.append("[case %s]\nsource = %s\nsetup = %s\nmeasured = %s\nmetric = makespan\ngroup = kernels\n"
               "hw = %s\ntrace = %s\nnote = %s\n" % (title, source, setup, measured, hw, trace, note))


def gemm_gpu(train, held):
    with open(os.path.join(V, "data", "aiconfigurator-gemm-bf16.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    for r in rows:
        dev, m, k, n = r["device"], int(r["m"]), int(r["k"]), int(r["n"])
        name = "%s-gemm-%dx%dx%d.trace" % (dev, m, k, n)
        tr = write_trace(name, ["compute gemm kernel=gemm dims=%dx%dx%d dtype=bf16" % (m, k, n)])
        src = AIC % (("a100_sxm", "1.0.0") if dev == "a100" else ("h100_sxm", "1.3.0rc20"))
        case(held if r["held_out"] == "yes" else train, "%s gemm %dx%dx%d" % (dev, m, k, n),
             src + "; row m=%d n=%d k=%d, latency %s ms" % (m, n, k, r["latency_ms"]),
             "TRT-LLM Linear bf16 (cuBLAS through torch), M x K times K x N, CUDA-graph replay, %s" %
             ("A100-SXM4-80GB" if dev == "a100" else "H100 80GB HBM3"),
             "%.4fus" % (float(r["latency_ms"]) * 1000), "../configs/hw/%s.ini" % dev, tr,
             "validation/data/aiconfigurator-gemm-bf16.csv row %s" % r["row"])


def gemm_v6e(train, held):
    for line in V6E_ROWS.splitlines():
        i, h, m, n, k, t = line.split()
        name = "v6e-gemm-%sx%sx%s.trace" % (m, k, n)
        tr = write_trace(name, ["# the host's dispatch of the jitted call and its wait (block_until_ready)",
                                "compute dispatch time=%.3fus unit=scalar" % DISPATCH_US,
                                "compute gemm kernel=gemm dims=%sx%sx%s dtype=bf16" % (m, k, n)])
        case(held if h == "yes" else train, "v6e gemm %sx%sx%s" % (m, k, n), V6E + "; id %s" % i,
             "jax.lax.dot_general bf16 (M x K) @ (K x N) on one TPU v6e chip, end-to-end perf_counter per call "
             "with block_until_ready (the dispatch is a host op of %.1f us: the source's 8192^3 end-to-end time "
             "less its profiler device time, %s)" % (DISPATCH_US, V6E_TRACE), "%sus" % t, "../configs/hw/tpu-v6e.ini",
             tr, "held out" if h == "yes" else "tuned on")
    tr = write_trace("v6e-gemm-8192x8192x8192-device.trace",
                     ["compute gemm kernel=gemm dims=8192x8192x8192 dtype=bf16"])
    case(train, "v6e gemm 8192^3 device time", V6E_TRACE, "the same matmul timed from the JAX profiler's device "
         "duration (timing_mode trace), median of 100", "1510.944us", "../configs/hw/tpu-v6e.ini", tr, "device time")


def flash(train, held):
    for i, line in enumerate(FA2_ROWS.splitlines()):
        dev, causal, b, s, h, d, tf = line.split()
        b, s, h, d, tf = int(b), int(s), int(h), int(d), float(tf)
        flops = 4 * b * s * s * h * d / (2 if causal == "yes" else 1) * 3.5
        mask = " mask=causal" if causal == "yes" else ""
        dims = "%dx%dx%dx%dx%d" % (b, h, s, s, d)
        name = "%s-fa2-%s%s.trace" % (dev, dims, "-causal" if mask else "")
        tr = write_trace(name, ["compute fwd kernel=flash-attention dims=%s%s dtype=bf16" % (dims, mask),
                                "compute bwd kernel=flash-attention-bwd dims=%s%s dtype=bf16" % (dims, mask)])
        held_out = (i + 1) % 3 == 0
        case(held if held_out else train, "%s fa2 fwd+bwd %s%s" % (dev, dims, " causal" if mask else ""),
             FA2 % dev + "; %g TFLOP/s" % tf, "FlashAttention-2 forward and backward, batch %d, seqlen %d, %d heads "
             "of dim %d%s; time = 3.5 x 4 B S^2 H D%s / TFLOP/s (benchmark_flash_attention.py)" %
             (b, s, h, d, ", causal" if mask else "", " / 2" if mask else ""),
             "%.4fus" % (flops / tf / 1e6), "../configs/hw/%s.ini" % dev, tr, "held out" if held_out else "tuned on")


def main():
    os.makedirs(T, exist_ok=True)
    train, held = [], []
    gemm_gpu(train, held)
    gemm_v6e(train, held)
    flash(train, held)
    head = ("# %s: kernel timings as published (group `kernels`), against one op of the kernel's model\n"
            "# (models/kernel, docs/validation.md \"Kernels\"). Written by scripts/kernel-cases.py: edit that.\n")
    for name, cases in (("kernels.ini", train), ("kernels-heldout.ini", held)):
        with open(os.path.join(V, name), "w") as f:
            f.write(head % name + ("# Held out: checked last, never tuned on.\n" if "held" in name else "") + "\n")
            f.write("\n".join(cases))


main()
