#!/usr/bin/env python3
"""Writes validation/kernels.ini and validation/kernels-heldout.ini (group
`kernels`) and their traces under validation/traces/kernels/, from
  - validation/data/aiconfigurator-gemm-bf16.csv (A100 and H100 GEMMs),
  - validation/data/aiconfigurator-gemm-fp8.csv (H100 FP8 GEMMs with the
    dynamic activation quantization TensorRT-LLM runs before them),
  - validation/data/flash-attention-readme.csv (the flash-attention README's
    figures: FlashAttention-2 fwd+bwd on A100 and H100, FlashAttention-2 and -3
    forward on H100),
  - the TPU v6e GEMM sweep, whose rows are listed below with their source,
  - validation/data/xla-matmul-sm90-bf16.csv (XLA's own H100 matmul table),
    every row held out, into kernels-xla-heldout.ini.
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
FA = ("https://github.com/Dao-AILab/flash-attention/blob/0251105a2fb19d2957484b7f023cd8c115286ced/assets/%s "
      "(README figure, bar labels; BSD-3-Clause)")
FA_FIGURE = {("a100", "fwd_bwd"): "flash2_a100_fwd_bwd_benchmark.png",
             ("h100", "fwd_bwd"): "flash2_h100_fwd_bwd_benchmark.png",
             ("h100", "fwd"): "flash3_fp16_fwd.png"}
# The kernel= of each FlashAttention version's forward and backward.
FA_KERNELS = {"fa2": ("flash-attention", "flash-attention-bwd")}


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


def gemm_fp8(train, held):
    """validation/data/aiconfigurator-gemm-fp8.csv: each row is what TRT-LLM's FP8QDQLinearMethod.apply runs
    without an input_scale (quantize_e4m3_per_tensor, then cublas_scaled_mm): a memset of the f32 scale, the
    amax pass over x (M x K bf16 read), the quantize pass (x read, its f8 copy written), the FP8 GEMM."""
    with open(os.path.join(V, "data", "aiconfigurator-gemm-fp8.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    for r in rows:
        m, k, n = int(r["m"]), int(r["k"]), int(r["n"])
        x = m * k
        name = "h100-gemm-f8-%dx%dx%d.trace" % (m, k, n)
        tr = write_trace(name, [
            "# TensorRT-LLM quantize_e4m3_per_tensor (cudaFp8Utils.cu, PER_TENSOR): cudaMemsetAsync of the scale,",
            "# computeFP8QuantizeScale (amax of x), invokeQuantizeMatrix (x to e4m3); then cublas_scaled_mm",
            "compute scale_memset kernel=elementwise dims=1 bytes=4 dtype=f32",
            "compute amax kernel=elementwise dims=%d bytes=%d dtype=bf16" % (x, 2 * x),
            "compute quantize kernel=elementwise dims=%d bytes=%d dtype=bf16" % (x, 3 * x),
            "compute gemm kernel=gemm dims=%dx%dx%d dtype=f8" % (m, k, n)])
        case(held if r["held_out"] == "yes" else train, "h100 gemm f8 %dx%dx%d" % (m, k, n),
             AIC % ("h100_sxm", "1.3.0rc20") + "; row gemm_dtype=fp8 m=%d n=%d k=%d, latency %s ms" %
             (m, n, k, r["latency_ms"]),
             "TRT-LLM Linear QuantAlgo.FP8 without input_scale: dynamic per-tensor quantization of x, then "
             "cuBLASLt FP8 (x M x K times W^T, bf16 out), CUDA-graph replay, H100 80GB HBM3",
             "%.4fus" % (float(r["latency_ms"]) * 1000), "../configs/hw/h100.ini", tr,
             "validation/data/aiconfigurator-gemm-fp8.csv row %s" % r["row"])


XLA = ("https://github.com/openxla/xla/blob/71feeddf7cc3c9c7878eee18ea43c983631e6e84/"
       "xla/service/gpu/model/matmul_interpolator_data.h (sm_90, bf16xbf16->bf16; Apache-2.0)")


def gemm_xla(held):
    """validation/data/xla-matmul-sm90-bf16.csv: XLA's H100 table, all held out (a check of the bf16 GEMM
    model made once, never tuned on); each row is one batched dot, b x (m x k) times (k x n)."""
    with open(os.path.join(V, "data", "xla-matmul-sm90-bf16.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    for r in rows:
        b, m, n, k = int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"])
        name = "h100-xla-gemm-%dx%dx%dx%d.trace" % (b, m, k, n)
        tr = write_trace(name, ["compute dot kernel=gemm dims=%dx%dx%dx%d dtype=bf16" % (b, m, k, n)])
        case(held, "h100 xla dot %dx%dx%dx%d BxMxKxN" % (b, m, k, n),
             XLA + "; entry b=%d m=%d n=%d k=%d, %s flop/s" % (b, m, n, k, r["flops_per_s"]),
             "XLA dot bf16 [b,m,k] x [b,k,n] -> bf16 as XLA compiles it, median CUPTI kernel time of 5 runs "
             "(xla/tools/matmul_perf_table_gen.cc), sm_90", "%sus" % r["time_us"], "../configs/hw/h100.ini", tr,
             "validation/data/xla-matmul-sm90-bf16.csv; held out")


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
    """validation/data/flash-attention-readme.csv: a forward+backward row is a fwd and a bwd op, a
    forward row one op; held_out as the CSV marks it (id a multiple of 3)."""
    with open(os.path.join(V, "data", "flash-attention-readme.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    for r in rows:
        if r["kernel"] not in FA_KERNELS:
            continue
        dev, ver, mode, causal = r["device"], r["kernel"], r["mode"], r["causal"] == "yes"
        b, s, h, d, tf = int(r["batch"]), int(r["seqlen"]), int(r["nheads"]), int(r["headdim"]), float(r["tflops"])
        both = mode == "fwd_bwd"
        flops = 4 * b * s * s * h * d / (2 if causal else 1) * (3.5 if both else 1)
        mask = " mask=causal" if causal else ""
        dims = "%dx%dx%dx%dx%d" % (b, h, s, s, d)
        dtype = "bf16" if both else "f16"
        fwd, bwd = FA_KERNELS[ver]
        ops = ["compute fwd kernel=%s dims=%s%s dtype=%s" % (fwd, dims, mask, dtype)]
        if both:
            ops.append("compute bwd kernel=%s dims=%s%s dtype=%s" % (bwd, dims, mask, dtype))
        what = "fwd+bwd" if both else "fwd"
        name = "%s-%s-%s%s%s.trace" % (dev, ver, "" if both else "fwd-", dims, "-causal" if mask else "")
        tr = write_trace(name, ops)
        held_out = r["held_out"] == "yes"
        case(held if held_out else train, "%s %s %s %s%s" % (dev, ver, what, dims, " causal" if mask else ""),
             FA % FA_FIGURE[(dev, mode)] + "; %g TFLOP/s" % tf,
             "FlashAttention-%s %s, %s, batch %d, seqlen %d, %d heads of dim %d%s; time = %s4 B S^2 H D%s / "
             "TFLOP/s (benchmark_flash_attention.py)" %
             (ver[-1], "forward and backward" if both else "forward", dtype, b, s, h, d, ", causal" if mask else "",
              "3.5 x " if both else "", " / 2" if mask else ""),
             "%.4fus" % (flops / tf / 1e6), "../configs/hw/%s.ini" % dev, tr,
             "validation/data/flash-attention-readme.csv id %s, %s" % (r["id"], "held out" if held_out else "tuned on"))


def main():
    os.makedirs(T, exist_ok=True)
    train, held = [], []
    gemm_gpu(train, held)
    gemm_v6e(train, held)
    flash(train, held)
    gemm_fp8(train, held)
    xla = []
    gemm_xla(xla)
    head = ("# %s: kernel timings as published (group `kernels`), against one op of the kernel's model\n"
            "# (models/kernel, docs/validation.md \"Kernels\"). Written by scripts/kernel-cases.py: edit that.\n")
    for name, cases in (("kernels.ini", train), ("kernels-heldout.ini", held), ("kernels-xla-heldout.ini", xla)):
        with open(os.path.join(V, name), "w") as f:
            f.write(head % name + ("# Held out: checked last, never tuned on.\n" if "held" in name else "") + "\n")
            f.write("\n".join(cases))


main()
