# Run on a GPU with PyTorch (docs/validation.md, "An 8B forward on a real H100
# and H200, wave 20"): python3 validation/gpu/gemm-clock.py OUT.json
# The SM clock and a GEMM's rate, isolated and sustained, on the lent GPU.
# Isolated: one GEMM after 300 ms idle (x8). Sustained: Llama-3-8B's four
# prefill GEMMs at M=7854 back to back for 15 s. nvidia-smi samples the SM
# clock and power every 20 ms; each GEMM is CUDA-event timed with its host
# wall time, so samples and GEMMs can be matched.
import sys, json, subprocess, time, torch
import torch.nn.functional as F
dev, dt = "cuda", torch.bfloat16
torch.set_grad_enabled(False); torch.manual_seed(0)
def rnd(*s): return torch.randn(*s, device=dev, dtype=dt) * 0.02
M = 7854
shapes = [(M, 4096, 6144), (M, 4096, 4096), (M, 4096, 28672), (M, 14336, 4096)]
ops = [(rnd(m, k), rnd(n, k), (m, k, n)) for (m, k, n) in shapes]
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "20"],
                       stdout=subprocess.PIPE, text=True)
time.sleep(1.0)
def run(a, w):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    t = time.time(); s.record(); F.linear(a, w); e.record(); e.synchronize()
    return t, s.elapsed_time(e)
rows = []
for a, w, shp in ops: run(a, w)  # warm (cuBLAS heuristics, workspace)
torch.cuda.synchronize(); time.sleep(1.0)
for rep in range(6):
    for a, w, shp in ops:
        time.sleep(0.3); t, ms = run(a, w); rows.append(("isolated", rep, shp, t, ms))
t0 = time.time(); it = 0
while time.time() - t0 < 15:
    for a, w, shp in ops:
        t, ms = run(a, w); rows.append(("sustained", it, shp, t, ms))
    it += 1
time.sleep(0.3); smi.terminate(); log = smi.stdout.read().strip().splitlines()
json.dump(dict(gpu=torch.cuda.get_device_name(0), rows=rows, smi=log), open(sys.argv[1], "w"))
import statistics
for kind in ("isolated", "sustained"):
    for shp in shapes:
        ms = [r[4] for r in rows if r[0] == kind and r[2] == shp]
        if kind == "sustained": ms = ms[len(ms) // 3:]
        med = statistics.median(ms); m, k, n = shp
        print(kind, shp, "median %.1f us, %.0f TFLOP/s (n=%d)" % (med * 1e3, 2 * m * k * n / med / 1e9, len(ms)))
