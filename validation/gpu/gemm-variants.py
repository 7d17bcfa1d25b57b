# Run on a GPU with PyTorch (docs/validation.md, "An 8B forward on a real H100
# and H200, wave 20"): python3 validation/gpu/gemm-variants.py
# Which of the call path (torch F.linear's x @ W^T against x @ W), the row
# count (7854 against 8192) and sustained running sets a prefill GEMM's rate:
# each variant runs Llama-3-8B's four GEMMs back to back for 2.5 s (after
# the GPU is already under load), the last 60% of the iterations' medians.
import sys, time, statistics, torch
import torch.nn.functional as F
dev, dt = "cuda", torch.bfloat16
torch.set_grad_enabled(False); torch.manual_seed(0)
def rnd(*s): return torch.randn(*s, device=dev, dtype=dt) * 0.02
KN = [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096)]
def variant(M, layout):
    ops = []
    for k, n in KN:
        a = rnd(M, k)
        if layout == "TN": w = rnd(n, k); f = (lambda a=a, w=w: F.linear(a, w))
        else: w = rnd(k, n); f = (lambda a=a, w=w: torch.matmul(a, w))
        ops.append(((M, k, n), f))
    return ops
def sustain(ops, secs):
    times = {s: [] for s, _ in ops}; t0 = time.time()
    while time.time() - t0 < secs:
        for s, f in ops:
            a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
            a.record(); f(); b.record(); b.synchronize(); times[s].append(b.elapsed_time(a) * -1)
    return times
warm = variant(8192, "TN"); sustain(warm, 3.0)
print("variant,M,K,N,median_us,TFLOP/s,total_TFLOP/s")
for rnd_ in range(2):
    for M in (7854, 8192):
        for layout in ("TN", "NN"):
            ops = variant(M, layout); t = sustain(ops, 2.5)
            tot_f = 0; tot_t = 0
            for (m, k, n), ms in t.items():
                ms = ms[len(ms) * 2 // 5:]; med = statistics.median(ms)
                tot_f += 2 * m * k * n; tot_t += med
                print("%s%d,%d,%d,%d,%.1f,%.0f," % (layout, rnd_, m, k, n, med * 1e3, 2 * m * k * n / med / 1e9))
            print("%s%d,%d,all,,%.1f,,%.0f" % (layout, rnd_, M, tot_t * 1e3, tot_f / tot_t / 1e9)); sys.stdout.flush()
            del ops
