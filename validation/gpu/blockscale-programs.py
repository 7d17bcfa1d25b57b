# Run on a GPU host with PyTorch and Triton (docs/serving.md, "SGLang 0.5's block-FP8 Linears on gfx942: aiter's
# Triton GEMM (wave 37)"): python3 validation/gpu/blockscale-programs.py
# Not yet run. Times the K loop of aiter's Triton gemm_a8w8_blockscale (ROCm/aiter v0.1.7.post1 @44610f47,
# _triton_kernels/gemm_a8w8_blockscale.py l. 179-201, written out here without its XCD remap) at the MI300X
# config's tile (128 x 128 x 128, num_warps 4, num_stages 2, no split-K) on whatever GPU runs it, at decode shapes
# whose programs number fewer than the SMs: what one program's K step costs against the SM's share of the FP8 peak
# (serve_triton_gemm.h charges one CU's share plus the dequantization). Prints shape, programs, us a call, ns a step.
import torch
import triton
import triton.language as tl


@triton.jit
def k_loop(a, b, c, sa, sb, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    npn = tl.cdiv(N, BN)
    pm, pn = pid // npn, pid % npn
    om = (pm * BM + tl.arange(0, BM)) % M
    on = (pn * BN + tl.arange(0, BN)) % N
    ok = tl.arange(0, BK)
    ap = a + om[:, None] * K + ok[None, :]
    bp = b + ok[:, None] + on[None, :] * K  # W is N x K, read as K x N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(ap)
        w = tl.load(bp)
        xs = tl.load(sa + om * tl.cdiv(K, BK) + k)
        ws = tl.load(sb + (on // BN) * tl.cdiv(K, BK) + k)
        acc += tl.dot(x, w) * xs[:, None] * ws[None, :]
        ap += BK
        bp += BK
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * N + cn[None, :], acc.to(tl.bfloat16), mask=(cm[:, None] < M) & (cn[None, :] < N))


for m, n, k in [(8, 2112, 7168), (8, 512, 7168), (8, 7168, 2048), (8, 3072, 1536), (1024, 2112, 7168)]:
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    sa = torch.rand(m, triton.cdiv(k, 128), device="cuda")
    sb = torch.rand(triton.cdiv(n, 128), triton.cdiv(k, 128), device="cuda")
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    progs = triton.cdiv(m, 128) * triton.cdiv(n, 128)
    run = lambda: k_loop[(progs,)](a, b, c, sa, sb, m, n, k, BM=128, BN=128, BK=128, num_warps=4, num_stages=2)
    us = triton.testing.do_bench_cudagraph(run) * 1e3
    print(f"M={m} N={n} K={k} programs={progs} {us:.2f} us, {us * 1e3 / triton.cdiv(k, 128):.1f} ns a K step")
