# Run on a GPU with PyTorch (docs/validation.md, "An 8B forward on a real H100
# and H200, wave 20"): python3 validation/gpu/decode-clock.py OUT.json
# Decode steps of a Llama-3-8B-shaped model (bf16, random weights) captured
# in a CUDA graph (as vLLM and TensorRT-LLM run them): the GPU's own step
# time at batch 1, 64, 256 (context 600), and the SM clock and power while
# batch-256 and batch-64 steps run back to back for 8 s each.
import sys, json, subprocess, time, statistics, torch
import torch.nn.functional as F
torch.set_grad_enabled(False); torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
L, H, NH, KVH, HD, I, V = 32, 4096, 32, 8, 128, 14336, 128256
def rnd(*s): return torch.randn(*s, device=dev, dtype=dt) * 0.02
W = [dict(qkv=rnd((NH + 2 * KVH) * HD, H), o=rnd(H, NH * HD), gu=rnd(2 * I, H), d=rnd(H, I),
          n1=torch.ones(H, device=dev, dtype=dt), n2=torch.ones(H, device=dev, dtype=dt)) for _ in range(L)]
lm = rnd(V, H); nf = torch.ones(H, device=dev, dtype=dt)
def step(x, kv, cos, sin):
    B = x.shape[0]
    for w, (k, v) in zip(W, kv):
        h = F.rms_norm(x, (H,), w["n1"], 1e-5)
        q, kk, vv = F.linear(h, w["qkv"]).split([NH * HD, KVH * HD, KVH * HD], -1)
        q = q.view(B, NH, HD); q1, q2 = q.chunk(2, -1)
        q = torch.cat((q1 * cos - q2 * sin, q2 * cos + q1 * sin), -1).view(B, NH, 1, HD)
        o = F.scaled_dot_product_attention(q, k, v, enable_gqa=True).reshape(B, NH * HD)
        x = x + F.linear(o, w["o"])
        g, u = F.linear(F.rms_norm(x, (H,), w["n2"], 1e-5), w["gu"]).chunk(2, -1)
        x = x + F.linear(F.silu(g) * u, w["d"])
    return F.linear(F.rms_norm(x, (H,), nf, 1e-5), lm)
out = dict(gpu=torch.cuda.get_device_name(0), runs=[])
graphs = {}
for B in (1, 64, 256):
    ctx = 600
    x = rnd(B, H); kv = [(rnd(B, KVH, ctx, HD), rnd(B, KVH, ctx, HD)) for _ in range(L)]
    cos = rnd(1, 1, HD // 2); sin = rnd(1, 1, HD // 2)
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): step(x, kv, cos, sin)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g): y = step(x, kv, cos, sin)
    for _ in range(5): g.replay()
    torch.cuda.synchronize(); ts = []
    for _ in range(30):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    r = dict(B=B, ctx=ctx, graph_ms=statistics.median(ts), min_ms=min(ts))
    print(json.dumps(r)); sys.stdout.flush(); out["runs"].append(r)
    graphs[B] = (g, x, kv)
for B, secs in ((256, 8), (64, 6)):
    g = graphs[B][0]
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)
    time.sleep(0.5); ts = []; t0 = time.time()
    while time.time() - t0 < secs:
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    time.sleep(0.2); smi.terminate()
    rows = [tuple(float(v) for v in l.split(",")) for l in smi.stdout.read().strip().splitlines() if l.count(",") == 1]
    loaded = rows[len(rows) // 4:]
    r = dict(B=B, sustained_s=secs, n=len(ts), first_ms=statistics.median(ts[:10]), last_ms=statistics.median(ts[-len(ts) // 2:]),
             clock_median=statistics.median(c for c, p in loaded), power_median=statistics.median(p for c, p in loaded),
             clock_min=min(c for c, p in loaded))
    print(json.dumps(r)); sys.stdout.flush(); out["runs"].append(r)
json.dump(out, open(sys.argv[1], "w"), indent=1)
