# Run on a GPU with PyTorch (docs/validation.md, "An 8B forward on a real H100
# and H200, wave 20"): python3 validation/gpu/kinds-clock.py OUT.json
# Sustained SM clock for more kinds of compute-bound work (H100): cuDNN's
# fused attention (SDPA's CUDNN_ATTENTION backend: Hopper wgmma kernels, the
# FlashAttention-3 class), FlashAttention-2 (SDPA FLASH), an FP8 prefill
# GEMM (7854 x 4096 x 28672, torch._scaled_mm) and the bf16 one; 4 s each back
# to back, the last half's median time and clock.
import sys, json, subprocess, time, statistics, datetime, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
torch.set_grad_enabled(False); torch.manual_seed(0)
dev = "cuda"
q = torch.randn(4, 32, 4096, 128, device=dev, dtype=torch.bfloat16)
k = torch.randn_like(q); v = torch.randn_like(q)
M, K, N = 7854, 4096, 28672
a16 = torch.randn(M, K, device=dev, dtype=torch.bfloat16) * 0.02
w16 = torch.randn(N, K, device=dev, dtype=torch.bfloat16) * 0.02
a8 = (torch.randn(M, K, device=dev) * 0.5).to(torch.float8_e4m3fn)
w8 = (torch.randn(N, K, device=dev) * 0.5).to(torch.float8_e4m3fn)
one = torch.tensor(1.0, device=dev)
def sdpa(be):
    def f():
        with sdpa_kernel(be):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return f
af = 4 * 4 * 32 * 4096 * 4096 * 128 / 2
kinds = [("cudnn_attn_causal", sdpa(SDPBackend.CUDNN_ATTENTION), af),
         ("fa2_attn_causal", sdpa(SDPBackend.FLASH_ATTENTION), af),
         ("fp8_gemm_7854x4096x28672", lambda: torch._scaled_mm(a8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), 2 * M * K * N),
         ("bf16_gemm_7854x4096x28672", lambda: F.linear(a16, w16), 2 * M * K * N)]
def timed(f):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); f(); e.record(); e.synchronize(); return s.elapsed_time(e)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "20"],
                       stdout=subprocess.PIPE, text=True)
marks = []; out = dict(gpu=torch.cuda.get_device_name(0), runs=[])
for name, f, flops in kinds:
    try:
        for _ in range(3): f()
    except Exception as e:
        print(name, "failed:", str(e).splitlines()[0][:200]); continue
    torch.cuda.synchronize(); time.sleep(1.0)
    t0 = time.time(); ts = []
    while time.time() - t0 < 4: ts.append(timed(f))
    marks.append((name, t0, time.time()))
    sus = statistics.median(ts[len(ts) // 2:])
    r = dict(kind=name, sustained_ms=sus, sustained_tflops=flops / sus / 1e9, first_ms=statistics.median(ts[:5]), n=len(ts))
    out["runs"].append(r)
time.sleep(0.3); smi.terminate()
rows = []
for l in smi.stdout.read().strip().splitlines():
    p = [x.strip() for x in l.split(",")]
    try: rows.append((datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp(), float(p[1]), float(p[2])))
    except Exception: pass
for r, (name, t0, t1) in zip(out["runs"], marks):
    w = [(c, p) for t, c, p in rows if (t0 + t1) / 2 <= t <= t1]
    if w: r["clock"] = statistics.median(c for c, p in w); r["power"] = statistics.median(p for c, p in w)
    print(json.dumps(r)); sys.stdout.flush()
json.dump(out, open(sys.argv[1], "w"), indent=1)
