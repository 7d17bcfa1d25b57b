#!/usr/bin/env python3
"""Writes validation/serving/decode-attention.ini and decode-attention-heldout.ini
(metric decode-attention cases of `strata validate --published`, docs/serving.md
"Decode attention as XQA runs it") from validation/data/aiconfigurator-xqa.csv: one
case per row, aiconfigurator's measured TensorRT-LLM decode attention (XQA, FP8
cache) against strata_serve_cost_attention for the model whose per-rank heads
have the row's shape, --engine trtllm, on configs/hw/dgx-h100.ini. The split was
fixed before any comparison: batch sizes 1, 4, 16, 64, 256, 1024 in the first
file (the XQA model's two ESTIMATEs were read there), 2, 8, 32, 128, 512, 2048 in
the held-out one. Each (shape, batch) is a group. Run from anywhere; rerun after
editing the CSV."""
import csv, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "validation", "data", "aiconfigurator-xqa.csv")
OUT = os.path.join(ROOT, "validation", "serving", "decode-attention.ini")
HELD = os.path.join(ROOT, "validation", "serving", "decode-attention-heldout.ini")
TUNED_BATCHES = {"1", "4", "16", "64", "256", "1024"}
SOURCE = ("https://github.com/ai-dynamo/aiconfigurator/tree/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
          "aic-core/src/aiconfigurator_core/systems/data/h100_sxm/attention/trtllm/1.3.0rc20/"
          "generation_attention_perf.parquet (Apache-2.0; kernel_source torch_flow, kv_cache_dtype fp8)")
# (num_heads, num_kv_heads) per rank -> (short name, the model and TP serve= names).
SHAPES = {
    ("32", "8"): ("8b-tp1", "Llama-3 8B TP1", "--model llama-3-8b --tp 1"),
    ("64", "8"): ("70b-tp1", "Llama-3 70B TP1", "--model llama-3-70b --tp 1"),
    ("32", "4"): ("70b-tp2", "Llama-3 70B TP2", "--model llama-3-70b --tp 2"),
    ("16", "2"): ("70b-tp4", "Llama-3 70B TP4", "--model llama-3-70b --tp 4"),
    ("8", "1"): ("70b-tp8", "Llama-3 70B TP8", "--model llama-3-70b --tp 8"),
    ("16", "1"): ("405b-tp8", "Llama-3.1 405B TP8", "--model llama-3-405b --tp 8"),
    ("64", "4"): ("qwen3", "Qwen3-235B-A22B (a rank under attention DP)",
                  "--model-file models/qwen3-235b-a22b.model --tp 1"),
}


def fail(line, what):
    sys.exit("%s:%d: %s" % (DATA, line, what))


def case(line, r):
    shape = SHAPES.get((r["num_heads"], r["num_kv_heads"]))
    if not shape or r["head_dim"] != "128" or r["kv_cache_dtype"] != "fp8":
        fail(line, "expected a head shape of SHAPES, head_dim 128 and an fp8 cache")
    short, model, args = shape
    ctx = int(r["step"]) + 1
    group = "xqa-%s-b%s" % (short, r["batch_size"])
    return ("[case %s ctx%d]\nsource = %s\n"
            "setup = one layer's decode attention of %s (%s query heads over %s KV heads of 128, FP8 cache), "
            "%s sequences of %d tokens: TensorRT-LLM 1.3.0rc20's TrtllmAttention.forward (XQA) on an H100 SXM, "
            "in a CUDA graph\nmeasured = %sms\nmetric = decode-attention\ntokens = %s\ncontext = %d\ngroup = %s\n"
            "hw = ../../configs/hw/dgx-h100.ini\nserve = %s --set dtype=f8 --engine trtllm\n" % (
                group, ctx, SOURCE, model, r["num_heads"], r["num_kv_heads"], r["batch_size"], ctx,
                r["latency_ms"], r["batch_size"], ctx, group, args))


def write(path, text, what):
    head = ("# %s: aiconfigurator's measured TensorRT-LLM decode attention (XQA, FP8 cache) as\n"
            "# strata_serve_cost_attention cases (docs/serving.md, \"Decode attention as XQA runs it\"). Written by\n"
            "# scripts/decode-cases.py from validation/data/aiconfigurator-xqa.csv: edit that. %s\n"
            "# Run: strata validate --published validation/serving/%s\n\n" % (
                os.path.basename(path), what, os.path.basename(path)))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + "\n".join(text))
    os.replace(tmp, path)
    print("%s: %d cases" % (os.path.relpath(path, ROOT), len(text)))


def main():
    with open(DATA) as f:
        lines = f.read().split("\n")
    first = next(i for i, l in enumerate(lines) if l and not l.startswith("#"))
    tuned, held = [], []
    for i, r in enumerate(csv.DictReader(lines[first:])):
        (tuned if r["batch_size"] in TUNED_BATCHES else held).append(case(first + 2 + i, r))
    write(OUT, tuned, "Batch sizes 1, 4, 16, 64, 256, 1024:\n# the XQA model's ESTIMATEs were read on these.")
    write(HELD, held, "Batch sizes 2, 8, 32, 128, 512, 2048:\n# held out (nothing read on them).")


main()
