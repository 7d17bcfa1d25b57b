#!/usr/bin/env python3
"""Writes validation/serving/serving.ini and validation/serving/serving-heldout.ini
(published serving measurements as `strata validate --published` cases with
serve=, docs/serving.md "Validation") from validation/data/serving-results.csv
(72 rows transcribed with their sources; its held_out column marks whole
series, chosen by a hash of the series id before any model output).

Each row becomes one case per figure it publishes (output tokens/s, requests/s,
median or mean TPOT/ITL and TTFT). What the rows do not say is set the same
way for all and never to fit a figure: vLLM's defaults (max_num_seqs 1024,
max_num_batched_tokens 8192, block 16, gpu_memory_utilization 0.9) unless the
row's engine documents others (vLLM v0.6.0: max_num_seqs 256); ShareGPT
lengths exponential around the published means, sonnet and synthetic sets
fixed (the FP8-KV blog's +-15%: uniform); FP8 weights with the KV cache in the
weights' dtype unless the row names it. Rows left out, and why, are listed at
the end of each file. Run from the repository root; rerun after editing."""
import csv, os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "validation", "serving")
# dgx-h100.ini is h100.ini (its base) with the node's NVLink: the same kernel-model figures.
H100 = "../../configs/hw/h100.ini"
DGX = "../../configs/hw/dgx-h100.ini"
MODELS = {
    "Llama-3.1-8B": "--model llama-3-8b --set max_model_len=32768",
    "Llama-3-8B-Instruct": "--model llama-3-8b",
    "Llama-3-70B-Instruct": "--model llama-3-70b",
    "Llama-3.3-70B": "--model llama-3-70b --set max_model_len=32768",
    "Llama-3.1-405B": "--model llama-3-405b --set max_model_len=32768",
    # The MoE models as `--model-file` files (paths from the case file's folder, as validate --published
    # resolves them), each citing its Hugging Face config.json: Qwen/Qwen3-235B-A22B's, and
    # meta-llama/Llama-4-Maverick-17B-128E's text_config (MoE every other layer, a shared expert in each).
    "Qwen3-235B-A22B": "--model-file models/qwen3-235b-a22b.model",
    "Llama-4-Maverick": "--model-file models/llama-4-maverick.model",
}


def model_args(r):
    for k, v in MODELS.items():
        if r["model"].startswith(k):
            args = v
            break
    else:
        return None
    if r["weights_dtype"].startswith("fp8"):
        args += " --set dtype=f8"
    if r["kv_dtype"] == "fp8":
        args += " --set kv_dtype=f8"
    elif r["kv_dtype"].startswith("bf16"):
        args += " --set kv_dtype=bf16"
    return args


def stream_args(r):
    ds, load = r["dataset"], r["load_mode"]
    isl, osl = r["input_tokens"], r["output_tokens"]
    if not isl or not osl:
        return None
    n = r["num_requests"]
    dist = "fixed"
    if ds.startswith("ShareGPT"):
        dist = "exp"
    elif "15%" in ds:
        dist = "uniform,spread=0.15"
    conc = r["concurrency"]
    if not n:
        n = str(max(16, 4 * int(conc))) if conc else None
    if not n:
        return None
    s = "--poisson n=%s,rate=0,prompt=%s,output=%s,dist=%s" % (n, isl, osl, dist)
    if load == "fixed concurrency":
        s += " --concurrency " + conc
    return s


# The CUDA graph batch sizes of TensorRT-LLM's performance overview (docs/source/performance/perf-overview.md,
# "llm_options.yml", NVIDIA/TensorRT-LLM@00f37686), captured with enable_padding: true.
TRTLLM_GRAPH_SIZES = "1,2,4,8,16,32,64,128,256,384,512,1024,2048,4096,8192"


def engine_args(r):
    """The engine's CPU time per step (docs/serving.md, "The engine's CPU time"): vLLM v0.6.0 as the
    blog ran it (--num-scheduler-steps 10), SGLang v0.3.0's synchronous loop; trtllm-bench's
    TensorRT-LLM (overlap scheduler, GUARANTEED_NO_EVICT admission: --engine trtllm; its decode
    batches padded to the overview's CUDA graph sizes); NIM's TensorRT-LLM profiles run the C++
    executor on a TensorRT engine: --engine trtllm-cpp (GUARANTEED_NO_EVICT and context chunking off,
    executor.h SchedulerConfig and ExecutorConfig; XQA decode; its KV pool a fraction of the free
    memory, kvCacheManager.cpp calculateMaxNumBlocks; host work not modelled); the MLPerf harness none."""
    if r["framework"].startswith("TensorRT-LLM (PyTorch backend, trtllm-bench"):
        # perf-overview.md's llm_options.yml (dense and MoE alike): cuda_graph_config enable_padding: true
        return " --engine trtllm --cuda-graph-batch-sizes " + TRTLLM_GRAPH_SIZES
    if r["framework"] == "vLLM" and r["framework_version"] == "v0.6.0":
        return " --max-num-seqs 256 --engine vllm-v0 --num-scheduler-steps 10"
    if r["framework"].startswith("NVIDIA NIM"):
        return " --engine trtllm-cpp"
    if r["framework"] == "SGLang":
        # SGLang 0.3.0's own max_running_requests: min(max_total_num_tokens // 2, req_to_token_pool.size - 1)
        # (managers/tp_worker.py), the pool min(max(int(max_total_num_tokens / context_len * 512), 2048), 5120)
        # requests (model_executor/model_runner.py init_memory_pool): 5120 for any KV pool of at least
        # 81,920 tokens at context 8192, which the 8B on one H100 and the 70B on four both hold
        # (mem_fraction_static 0.88, server_args.py); docs/serving.md, wave 13.
        return " --max-num-seqs 5119 --engine sglang-v0.3"
    return ""


def hw_args(r):
    tp = int(r["tp"] or "1")
    if tp == 1:
        return H100, ""
    # TensorRT-LLM's perf overview runs its MoE models with enable_attention_dp: true (the row's note)
    dp = " --attention-dp" if "MoE" in r["model"] and "enable_attention_dp" in r["notes"] else ""
    return DGX, "--tp %d%s" % (tp, dp)


FIGURES = [  # column, metric, unit formatter
    ("output_tok_per_s", "output-throughput", lambda v: "%stok/s" % v),
    ("req_per_s", "request-throughput", lambda v: "%sreq/s" % v),
    ("tpot_p50_ms", "tpot-p50", lambda v: "%sms" % v),
    ("itl_p50_ms", "itl-p50", lambda v: "%sms" % v),
    ("tpot_mean_ms", "tpot-mean", lambda v: "%sms" % v),
    ("itl_mean_ms", "itl-mean", lambda v: "%sms" % v),
    ("ttft_p50_ms", "ttft-p50", lambda v: "%sms" % v),
    ("ttft_mean_ms", "ttft-mean", lambda v: "%sms" % v),
]


def cases(r):
    m, s = model_args(r), stream_args(r)
    if not m or not s:
        return None, "lengths or model not published in the row (%s)" % (r["dataset"][:60])
    hw, extra = hw_args(r)
    serve = "%s %s%s%s" % (m, s, engine_args(r), (" " + extra) if extra else "")
    out = []
    for col, metric, fmt in FIGURES:
        if not r[col]:
            continue
        note = r["notes"].replace("\n", " ")
        out.append("[case %s %s]\nsource = %s (%s)\nsetup = %s, %s, %s on %s x%s, %s %s, %s\nmeasured = %s\n"
                   "metric = %s\ngroup = %s\nhw = %s\nserve = %s\nnote = %s\n" % (
                       r["id"], metric, r["source_url"], r["source_ref"], r["model"], r["weights_dtype"],
                       r["dataset"], r["gpu"], r["gpu_count"], r["framework"], r["framework_version"],
                       r["load_mode"], fmt(r[col]), metric, r["group"], hw, serve, note[:400]))
    return out, None


def main():
    rows = list(csv.DictReader(open(os.path.join(ROOT, "validation", "data", "serving-results.csv"))))
    os.makedirs(OUT, exist_ok=True)
    for held, name in (("no", "serving.ini"), ("yes", "serving-heldout.ini")):
        text, left = [], []
        for r in rows:
            if r["held_out"] != held:
                continue
            c, why = cases(r)
            if c:
                text += c
            else:
                left.append("#   %s: %s" % (r["id"], why))
        head = ("# %s: published serving measurements as strata serve runs (docs/serving.md \"Validation\").\n"
                "# Written by scripts/serving-cases.py from validation/data/serving-results.csv: edit that.\n"
                "# %s\n# Run: strata validate --published validation/serving/%s\n\n" % (
                    name, "Held out: checked last, never tuned on." if held == "yes" else "Tuned-on rows.", name))
        tail = "\n# Rows left out:\n" + "\n".join(left) + "\n" if left else ""
        open(os.path.join(OUT, name), "w").write(head + "\n".join(text) + tail)


main()
