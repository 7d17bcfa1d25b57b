# Run on a GPU with PyTorch (docs/validation.md, "An 8B forward on a real H100
# and H200, wave 20"): python3 validation/gpu/torch-8b-forward.py OUT.json
# A Llama-3-8B-shaped forward in PyTorch eager (bf16, random weights, no
# download) on the lent GPU: prefill steps of B x 462 tokens (the vLLM 0.6
# blog's sonnet prompts) and a decode step at batch 256, timed whole and by
# part (the GEMMs alone, the attention alone), and a sustained run of back-to-back
# prefills with the SM clock and power sampled. Median of CUDA-event timings.
import sys, json, subprocess, time, torch
import torch.nn.functional as F
torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
L, H, NH, KVH, HD, I, V = 32, 4096, 32, 8, 128, 14336, 128256
res = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__}

def rnd(*s):
    return (torch.randn(*s, device=dev, dtype=dt) * 0.02)

W = [dict(qkv=rnd((NH + 2 * KVH) * HD, H), o=rnd(H, NH * HD), gu=rnd(2 * I, H), d=rnd(H, I),
          n1=torch.ones(H, device=dev, dtype=dt), n2=torch.ones(H, device=dev, dtype=dt)) for _ in range(L)]
lm = rnd(V, H); nf = torch.ones(H, device=dev, dtype=dt)

def timeit(fn, n=10, warm=3):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(n):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts) // 2]

def rope_tables(pos):
    inv = 1.0 / (500000.0 ** (torch.arange(0, HD, 2, device=dev, dtype=torch.float32) / HD))
    f = pos.float()[:, None] * inv[None, :]
    return f.cos().to(dt), f.sin().to(dt)

def rope(x, cos, sin):  # x [..., S, heads, HD]; cos/sin [S, HD/2]
    x1, x2 = x.chunk(2, -1); c = cos[:, None, :]; s = sin[:, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), -1)

def forward(x, B, S, kv_len=None, kv=None, parts="all"):
    """parts: all | gemm | attn. Prefill when kv is None (causal over S), else decode (S == 1)."""
    T = B * S
    pos = torch.arange(S, device=dev) if kv is None else torch.full((1,), kv_len - 1, device=dev)
    cos, sin = rope_tables(pos)
    for w in W:
        if parts == "attn":
            q = x["q"]; k, v = (x["k"], x["v"]) if kv is None else kv
            F.scaled_dot_product_attention(q, k, v, is_causal=kv is None, enable_gqa=True)
            continue
        if parts == "gemm":  # x: dict of inputs of each GEMM's shape
            F.linear(x["h"], w["qkv"]); F.linear(x["h"], w["o"]); F.linear(x["h"], w["gu"]); F.linear(x["i"], w["d"])
            continue
        h = F.rms_norm(x, (H,), w["n1"], 1e-5)
        qkv = F.linear(h, w["qkv"])
        q, k, v = qkv.split([NH * HD, KVH * HD, KVH * HD], -1)
        q = rope(q.view(B, S, NH, HD), cos, sin).transpose(1, 2)
        k = rope(k.view(B, S, KVH, HD), cos, sin).transpose(1, 2)
        v = v.view(B, S, KVH, HD).transpose(1, 2)
        if kv is not None:
            k, v = kv  # decode: the cache (this step's k/v would be written into it)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=kv is None, enable_gqa=True)
        o = o.transpose(1, 2).reshape(T, NH * HD)
        x = x + F.linear(o, w["o"])
        h = F.rms_norm(x, (H,), w["n2"], 1e-5)
        g, u = F.linear(h, w["gu"]).chunk(2, -1)
        x = x + F.linear(F.silu(g) * u, w["d"])
    if parts == "attn": return None
    if parts == "gemm":
        return F.linear(x["h"][:B], lm)
    x = F.rms_norm(x.view(B, S, H)[:, -1], (H,), nf, 1e-5)
    return F.linear(x, lm)

out = []
import traceback
def guarded(fn):
    try: fn()
    except Exception: traceback.print_exc(); sys.stdout.flush()
torch.set_grad_enabled(False)
def prefills():
    for B in [1, 4, 17]:
        S = 462; T = B * S
        x = rnd(T, H)
        full = timeit(lambda: forward(x, B, S))
        gx = dict(h=rnd(T, H), i=rnd(T, I))
        gemm = timeit(lambda: forward(gx, B, S, parts="gemm"))
        att = dict(q=rnd(B, NH, S, HD), k=rnd(B, KVH, S, HD), v=rnd(B, KVH, S, HD))
        attn = timeit(lambda: forward(att, B, S, parts="attn"))
        r = dict(kind="prefill", B=B, S=S, tokens=T, full_ms=full, gemm_ms=gemm, attn_ms=attn)
        print(json.dumps(r)); sys.stdout.flush(); out.append(r)
def decodes():
    for B, ctx in [(256, 600), (64, 600), (1, 600)]:
        x = rnd(B, H)
        kv = (rnd(B, KVH, ctx, HD), rnd(B, KVH, ctx, HD))
        full = timeit(lambda: forward(x, B, 1, kv_len=ctx, kv=kv), n=20, warm=5)
        gx = dict(h=rnd(B, H), i=rnd(B, I))
        gemm = timeit(lambda: forward(gx, B, 1, parts="gemm"), n=20, warm=5)
        qd = dict(q=rnd(B, NH, 1, HD))
        attn = timeit(lambda: forward(qd, B, 1, kv_len=ctx, kv=kv, parts="attn"), n=20, warm=5)
        r = dict(kind="decode", B=B, ctx=ctx, full_ms=full, gemm_ms=gemm, attn_ms=attn)
        print(json.dumps(r)); sys.stdout.flush(); out.append(r)
def sustained():
    # sustained: back-to-back 7854-token prefills for about 20 s, clock and power sampled
    B, S = 17, 462; x = rnd(B * S, H)
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu",
                            "--format=csv,noheader", "-lms", "200"], stdout=subprocess.PIPE, text=True)
    smi2 = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks_event_reasons.active",
                             "--format=csv,noheader", "-lms", "500"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    ts = []; t0 = time.time()
    while time.time() - t0 < 20:
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); forward(x, B, S); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    time.sleep(0.5); smi.terminate(); smi2.terminate()
    log = smi.stdout.read().strip().splitlines() + smi2.stdout.read().strip().splitlines()
    r = dict(kind="sustained", B=B, S=S, n=len(ts), first5=ts[:5], last5=ts[-5:],
             median=sorted(ts)[len(ts) // 2], smi=log)
    print(json.dumps(r)); out.append(r)
for f in (prefills, decodes, sustained): guarded(f)
res["runs"] = out
json.dump(res, open(sys.argv[1] if len(sys.argv) > 1 else "prefill.json", "w"), indent=1)
