# Run on a GPU host with PyTorch and NumPy (docs/serving.md, "vLLM 0.6 and
# the FP8 KV cache (wave 21)"): python3 validation/gpu/vllm06-prefill-inputs.py OUT.json
# Times, on the host's CPU, the per-token Python that vLLM 0.6.0 runs to
# prepare a prefill step's inputs before the step can launch (the
# statements written out here after the vllm-0.6.0 wheel's
# worker/model_runner.py ModelInputForGPUBuilder._compute_lens and build,
# attention/backends/utils.py compute_slot_mapping (a Python loop under 256
# tokens, NumPy at or above, extended into a list), attention/backends/
# flash_attn.py FlashAttentionMetadataBuilder.build and utils.py
# async_tensor_h2d: torch.tensor of each list, pinned, copied
# non-blocking), for prefill steps of n prompts of L tokens, block size 16.
import sys, json, time, statistics
import numpy as np
import torch

BLOCK = 16


def slot_mapping_python(slots, table, start, end):
    for i in range(start, end):
        slots.append(table[i // BLOCK] * BLOCK + i % BLOCK)


def slot_mapping_numpy(slots, table, start, end):
    t = np.array(table)
    idx = np.arange(start, end)
    off = idx % BLOCK
    idx //= BLOCK
    s = t[idx]
    s *= BLOCK
    s += off
    slots.extend(s)


def h2d(data, dtype):
    return torch.tensor(data, dtype=dtype, pin_memory=True, device="cpu").to("cuda", non_blocking=True)


def prepare(prompts, tables):
    per_tokens, per_positions, slots, seq_lens = [], [], [], []
    for ids, table in zip(prompts, tables):  # _compute_lens, _add_seq_group
        toks, pos = [], []
        toks.extend(ids)
        pos.extend(range(0, len(ids)))
        per_tokens.append(toks)
        per_positions.append(pos)
        seq_lens.append(len(ids))
        if len(ids) < 256:
            slot_mapping_python(slots, table, 0, len(ids))
        else:
            slot_mapping_numpy(slots, table, 0, len(ids))
    tokens, positions = [], []  # build
    for t in per_tokens:
        tokens.extend(t)
    for p in per_positions:
        positions.extend(p)
    out = [h2d(tokens, torch.long), h2d(positions, torch.long), h2d(seq_lens, torch.int),
           h2d(seq_lens, torch.long), h2d(slots, torch.long)]
    return out


def time_step(n, L, reps=30):
    prompts = [list(range(1000 + 7 * j, 1000 + 7 * j + L)) for j in range(n)]
    tables = [list(range(j * 64, j * 64 + (L + BLOCK - 1) // BLOCK)) for j in range(n)]
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        prepare(prompts, tables)
        ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return statistics.median(ts)


def time_tensor(n, kind, reps=30):
    data = list(range(n)) if kind == "int" else list(np.arange(n))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.tensor(data, dtype=torch.long, pin_memory=True, device="cpu")
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


out = dict(torch=torch.__version__, numpy=np.__version__, python=sys.version.split()[0], steps=[], tensors=[])
for n, L in ((1, 462), (4, 462), (8, 462), (17, 462), (40, 202), (1, 7854)):
    s = time_step(n, L)
    out["steps"].append(dict(prompts=n, tokens=L, total=n * L, median_s=s, per_token_s=s / (n * L)))
for n in (1000, 8000):
    for kind in ("int", "numpy-int64"):
        s = time_tensor(n, kind)
        out["tensors"].append(dict(elements=n, kind=kind, median_s=s, per_element_s=s / n))
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out, indent=1))
