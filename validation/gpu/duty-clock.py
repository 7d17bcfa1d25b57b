# Run on a GPU with PyTorch (docs/validation.md, "The same checks again
# (wave 21), and the clock at part load"): python3 validation/gpu/duty-clock.py OUT.json
# The SM clock under the power limit at several duty cycles: an 8B prefill
# GEMM (M=7854, K=4096, N=28672, ~2.5 ms) back to back, then with idle gaps
# so the GPU is busy 75, 50 and 25% of the time, 4 s each, after 2 s idle.
# nvidia-smi samples the clock and power every 20 ms; each GEMM is CUDA-event
# timed with its host wall time.
import sys, json, subprocess, time, statistics, torch
import torch.nn.functional as F
dev, dt = "cuda", torch.bfloat16
torch.set_grad_enabled(False); torch.manual_seed(0)
a = torch.randn(7854, 4096, device=dev, dtype=dt) * 0.02
w = torch.randn(28672, 4096, device=dev, dtype=dt) * 0.02
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE, text=True)
def run():
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    t = time.time(); s.record(); F.linear(a, w); e.record(); e.synchronize()
    return t, s.elapsed_time(e)
for _ in range(3): run()
rows = []
for duty in (1.0, 0.75, 0.5, 0.25, 1.0):
    time.sleep(2.0); t0 = time.time(); n = 0
    while time.time() - t0 < 4.0:
        t, ms = run(); rows.append((duty, n, t - t0, ms)); n += 1
        if duty < 1.0:
            gap = ms * 1e-3 * (1 - duty) / duty; g0 = time.perf_counter()
            while time.perf_counter() - g0 < gap: pass
time.sleep(0.3); smi.terminate(); log = smi.stdout.read().strip().splitlines()
json.dump(dict(gpu=torch.cuda.get_device_name(0), rows=rows, smi=log), open(sys.argv[1], "w"))
phases = (1.0, 0.75, 0.5, 0.25, 1.0)
start = [0] + [i for i in range(1, len(rows)) if rows[i][1] == 0]
for p, duty in enumerate(phases):
    end = start[p + 1] if p + 1 < len(start) else len(rows)
    rs = rows[start[p]:end]
    for lo, hi in ((0, 0.05), (0.05, 0.1), (0.1, 0.2), (0.2, 0.5), (0.5, 1), (1, 2), (2, 4)):
        ms = [r[3] for r in rs if lo <= r[2] < hi]
        if ms:
            med = statistics.median(ms)
            print("duty %.2f  %.2f-%.2f s: median %.3f ms  %.0f TFLOP/s (n=%d)" % (duty, lo, hi, med, 2 * 7854 * 4096 * 28672 / med / 1e9, len(ms)))
