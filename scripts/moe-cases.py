#!/usr/bin/env python3
"""Writes validation/serving/moe-layers.ini (metric moe-layer cases of
`strata validate --published`, docs/validation.md "TensorRT-LLM's fused MoE")
from validation/data/aiconfigurator-moe.csv: one case per row, aiconfigurator's
measured TensorRT-LLM fused-MoE layer against strata_serve_cost_moe_experts
for the model whose MoE layer has the row's shape, at the row's MoE TP, dtype
and tokens, on configs/hw/dgx-h100.ini. Each (shape, dtype, TP) is a group, so
the summary prints the table's cells and then the median over all rows. The
whole file is a check (the model came from TensorRT-LLM's sources, nothing was
tuned on these rows). Run from anywhere; rerun after editing."""
import csv, os, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (data, cases): the per-tensor FP8 and bf16 rows, and the block-scaled FP8 rows (a check of wave 16's
# block-scaled GEMMs, written after they were built).
SETS = [("aiconfigurator-moe.csv", "moe-layers.ini"), ("aiconfigurator-moe-fp8block.csv", "moe-layers-fp8block.ini")]
SOURCE = ("https://github.com/ai-dynamo/aiconfigurator/tree/095f58a51c4ca8e61b66ec108d86f223f8d559ce/"
          "aic-core/src/aiconfigurator_core/systems/data/h100_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet "
          "(Apache-2.0; kernel_source moe_torch_flow_cutlass, distribution balanced)")
# (hidden, inter, experts, topk) of a row -> (short name, the model serve= names).
SHAPES = {
    ("4096", "1536", "128", "8"): ("qwen3", "Qwen3-235B-A22B", "--model-file models/qwen3-235b-a22b.model"),
    ("5120", "8192", "128", "1"): ("maverick", "Llama-4-Maverick", "--model-file models/llama-4-maverick.model"),
    ("4096", "14336", "8", "2"): ("mixtral", "Mixtral-8x7B", "--model mixtral-8x7b"),
}
DTYPES = {"fp8": ("fp8", " --set dtype=f8"), "bfloat16": ("bf16", ""),
          "fp8_block": ("fp8block", " --set dtype=f8 --set weight_block=128")}


def fail(line, what):
    sys.exit("%s:%d: %s" % (DATA, line, what))


DATA = None  # the CSV being read, for fail()


def case(line, r):
    shape = SHAPES.get((r["hidden"], r["inter"], r["experts"], r["topk"]))
    if not shape:
        fail(line, "no model of this MoE shape in SHAPES (hidden, inter, experts, topk)")
    if r["dtype"] not in DTYPES or r["ep"] != "1":
        fail(line, "expected dtype fp8, bfloat16 or fp8_block and ep 1")
    short, model, args = shape
    dt, dt_args = DTYPES[r["dtype"]]
    group = "moe-%s-%s-tp%s" % (short, dt, r["tp"])
    return ("[case %s %s]\nsource = %s\n"
            "setup = one %s MoE layer (hidden %s, %s experts of width %s, top %s), %s, MoE TP %s, EP 1, "
            "%s tokens: TensorRT-LLM 1.3.0rc20's CutlassFusedMoE.forward on an H100 SXM (routing, input "
            "quantization, runMoe)\nmeasured = %sms\nmetric = moe-layer\ntokens = %s\ngroup = %s\n"
            "hw = ../../configs/hw/dgx-h100.ini\nserve = %s%s --tp %s\n" % (
                group, r["tokens"], SOURCE, model, r["hidden"], r["experts"], r["inter"], r["topk"], dt, r["tp"],
                r["tokens"], r["latency_ms"], r["tokens"], group, args, dt_args, r["tp"]))


def write(data, out):
    global DATA
    DATA = os.path.join(ROOT, "validation", "data", data)
    OUT = os.path.join(ROOT, "validation", "serving", out)
    with open(DATA) as f:
        lines = f.read().split("\n")
    first = next(i for i, l in enumerate(lines) if l and not l.startswith("#"))
    rows = csv.DictReader(lines[first:])
    text = [case(first + 2 + i, r) for i, r in enumerate(rows)]
    head = ("# %s: aiconfigurator's measured TensorRT-LLM fused-MoE layers as strata_serve_cost_moe_experts\n"
            "# cases (docs/validation.md, \"TensorRT-LLM's fused MoE\"). Written by scripts/moe-cases.py from\n"
            "# validation/data/%s: edit that. A check only: nothing was tuned on these rows.\n"
            "# Run: strata validate --published validation/serving/%s\n\n" % (out, data, out))
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + "\n".join(text))
    os.replace(tmp, OUT)
    print("%s: %d cases" % (os.path.relpath(OUT, ROOT), len(text)))


for data, out in SETS:
    write(data, out)
