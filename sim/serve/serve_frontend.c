/*
 * serve_frontend.c: the engines' server hops (serve_frontend.h), one row
 * an engine that has a figure, named by its engine rows.
 *
 * "sglang" (the sglang-v0.3, -v0.4 and -v0.5 rows). Its server is three
 * processes since 0.2: the HTTP server and TokenizerManager, the Scheduler,
 * one a TP rank, the DetokenizerManager, joined by ZMQ sockets. As read
 * in the sglang 0.4.0 wheel (docs/serving.md, "SGLang 0.4's online TTFT")
 * and again in the 0.5.6 wheel: the TokenizerManager tokenizes the text
 * and sends the request to the Scheduler (one hop); the Scheduler's
 * stream_output sends each step's new ids to the DetokenizerManager, which
 * decodes them and sends the text back to the TokenizerManager (two hops),
 * whose handle_loop wakes the request's coroutine, which writes the HTTP
 * chunk; bench_serving's TTFT ends at the first chunk with text.
 * - The whole of it, measured: tenstorrent/tt-inference-server issue
 *   #3560 (2026-05-18) runs SGLang (an 0.5-line release) on a CPU mock
 *   whose forward busy-waits 1/380 s = 2.632 ms, one client, 128-token
 *   random prompts through /v1/chat/completions (`vllm bench serve
 *   --max-concurrency 1`): median TTFT 9.54 ms, median TPOT 2.94 ms. A
 *   step's own host work is TPOT - forward = 0.308 ms, so the hops are
 *   9.54 - 2.632 - 0.308 = 6.600 ms (the chat template and the client's
 *   HTTP included; that host's CPU is not named).
 * - Tokenization: huggingface/tokenizers' README, "Takes less than 20
 *   seconds to tokenize a GB of text on a server's CPU": 50 MB/s, at 4
 *   bytes of English text a token (ESTIMATE) 0.08 us a token; 10 us of the
 *   128-token prompt above, so the fixed part is 6.590 ms.
 * - Its split (ESTIMATE): recv two of five parts (the HTTP request's end,
 *   the hop to the Scheduler) = 2.636 ms; emit three (the hops to and from
 *   the DetokenizerManager, the HTTP chunk's end) = 3.954 ms.
 * sglang-v0.4 and sglang-v0.5 name it; SGLang 0.3 is given 0.5's figure
 * (ESTIMATE: the same three processes and hops; no measurement of 0.3's).
 *
 * "vllm-v1" (the default row, no --engine: vLLM V1's OpenAI server, the
 * API server process with AsyncLLM, the tokenizer and the detokenizer,
 * one ZMQ hop each way to the EngineCore process).
 * - The whole of it outside the server's own TTFT, measured:
 *   vllm-project/vllm PR #54628 (QHarshil, "[Benchmark] Add Responses API
 *   backend to vllm bench serve"; vLLM 0.28.1rc1.dev174, Qwen2.5-0.5B on an
 *   RTX 4070 Laptop under WSL2, `vllm bench serve` random 512 in / 128
 *   out, --max-concurrency 8): each run bracketed by scrapes of
 *   vllm:time_to_first_token_seconds; the `openai` backend (/v1/completions,
 *   what the rows' `vllm bench serve` and benchmark_serving.py runs use)
 *   gives the client's TTFT +8.4 and +12.0 ms over the server's in its two
 *   rounds: 10.2 ms, their mean. The server's metric is taken in the API
 *   server's output processor, from the request's state there (made once
 *   the prompt is tokenized) to the output that carries its first token
 *   (vllm/v1/metrics/stats.py, IterationStats.update_from_output: now -
 *   last_token_time, as read at 0015f3f6, an early V1; not read at the
 *   rows' tags), so what it leaves out is the HTTP request, the prompt's
 *   tokenization, the chunk's detokenization and SSE write and the
 *   client's read; the two ZMQ hops fall inside it and are not added; a
 *   laptop's CPU under WSL2 runs the Python slower than a server's (not
 *   corrected: no figure).
 * - Tokenization as SGLang's (above): 512 x 0.08 us = 41 us of it, so the
 *   fixed part is 10.159 ms.
 * - Its split (ESTIMATE, by the parts each side crosses): recv one half
 *   (the HTTP request's end, the tokenizer's call), emit the other (the
 *   detokenization and the chunk's end) = 5.0795 ms each.
 * Why it matters beyond its 10 ms: in a closed loop (`--concurrency`) a
 * finished request's client sends its next one emit + recv after the
 * step that sampled its last token; decode-only steps of a few ms run
 * meanwhile, so the requests that finish together (fixed output lengths
 * after a burst) are all done before the first replacement is received,
 * and the replacements queue for prefill together (docs/serving.md,
 * "TTFT under load: the closed loop's round trip").
 *
 * Offline (--offline; issue 45, wave 46): no HTTP server stands between the client and the engine.
 * - "vllm-v1" has no offline row: its 10.2 ms is what the client sees beyond the server's own TTFT metric, the
 *   HTTP request, tokenization, the chunk's detokenization and SSE write and the client's read; the two ZMQ hops
 *   to and from EngineCore were inside the metric and never added. benchmark_latency.py drives LLM.generate with
 *   dummy prompt token ids (no tokenizer) and times the whole call, benchmark_throughput.py the same over its
 *   requests; LLM's output processor detokenizes in the caller's process each step (not priced, as online).
 * - "sglang-offline": sglang.Engine (what bench_offline_throughput and the offline Engine API run) keeps the
 *   TokenizerManager in the caller's process and the Scheduler and DetokenizerManager processes, so of the five
 *   parts above the HTTP request's end and the HTTP chunk's end go: recv 1/5 (the hop to the Scheduler) and
 *   the tokenizer's per-token part, emit 2/5 (the hops to and from the DetokenizerManager), ESTIMATE by the same
 *   split: 1.318 ms and 2.636 ms.
 *
 * Serial (serve_frontend_queue.h; --serial-api-server, off by default: it
 * left the serving held-out sets worse, docs/serving.md), "vllm-v1-serial":
 * the same hops, and the API server as one process whose intake and output
 * chunks share one FIFO queue.
 * - The whole of it, measured: vllm-project/vllm PR #17546 (njhill, "[Perf]
 *   API-server scaleout with many-to-many server-engine comms", 2025-05-01,
 *   which added --api-server-count; its motivation, issue #12705: "the API
 *   server runs in a single process, utilizing a single CPU"), "DP=2
 *   before": 2xA100, llama-3.2-1B, ShareGPT offered at 120 requests/s, one
 *   API server: 10000 requests in 130.74 s. 130.74 s / 10000 = 13.074 ms
 *   is an UPPER BOUND on the server's time a request, not its service
 *   time: the benchmark's whole duration, which holds the drain of the
 *   last requests after the sends stop (sending 10000 at 120 requests/s
 *   takes 83.3 s) and the pace of the one-process benchmark client; its
 *   output chunks included. The host CPU is not named (not corrected).
 * - A chunk: sgl-project/sglang issue #10186 (2025-09-09): the OpenAI API's
 *   output conversion in the TokenizerManager (one process, as vLLM's API
 *   server), "30us taken for each token" (a Kunpeng CPU). vLLM's chunk
 *   (OutputProcessor.process_outputs' incremental detokenization, the
 *   request's queue, serving_chat's ChatCompletionStreamResponse and its SSE
 *   write) is the same kind of work; no vLLM figure read: 30 us, ESTIMATE.
 * - The split: ShareGPT's outputs, PR #12287 (njhill, the same 1B model on
 *   A100, ShareGPT, --ignore-eos): 1,211,959 tokens / 6000 requests = 202
 *   chunks a request, 202 x 30 us = 6.060 ms, so intake 13.074 - 6.060 =
 *   7.014 ms (an upper bound too). PR #17546's own "Total generated tokens"
 *   (the line after its "Total input tokens: 2206428") was not readable
 *   here (the stored text of its body stops at that line), so PR #12287's
 *   202 stands; whether #17546 ignored EOS is not read.
 * A request reaches the scheduler at its intake's start + max(recv, intake)
 * (not before the server has done it: serve_frontend_queue.h), a chunk the
 * client at its start + emit.
 * sglang: 0 (its TokenizerManager is one process too; no figure read).
 *
 * Not priced (no row): vLLM V0, TensorRT-LLM, NIM and TurboMind (no figure
 * read).
 */
#include "serve/serve_frontend.h"
#include <stddef.h>
#include <string.h>
#include <glib.h>

#define SGLANG_HOPS_S 6.590e-3 /* 9.54 - 2.632 - 0.308 ms less 128 tokens' tokenization (above) */
#define SGLANG_RECV_S (SGLANG_HOPS_S * 2.0 / 5.0)
#define SGLANG_EMIT_S (SGLANG_HOPS_S * 3.0 / 5.0)
#define HF_TOKENIZE_S 0.08e-6 /* 20 s a GB, 4 bytes a token */
#define VLLM_HOPS_S ((8.4e-3 + 12.0e-3) / 2.0 - 512 * HF_TOKENIZE_S) /* PR #54628's `openai` rows less 512 tokens' */
#define VLLM_RECV_S (VLLM_HOPS_S / 2.0)
#define VLLM_EMIT_S (VLLM_HOPS_S / 2.0)
#define VLLM_SERIAL_S (130.74 / 10000) /* PR #17546: 10000 requests in 130.74 s, one API server: an upper bound */
#define VLLM_CHUNK_S 30e-6                /* sglang issue #10186: an output token's OpenAI chunk, 30 us */
#define SHAREGPT_OUTPUT 202.0             /* vllm PR #12287: ShareGPT's 1,211,959 output tokens / 6000 requests */
#define VLLM_INTAKE_S (VLLM_SERIAL_S - SHAREGPT_OUTPUT * VLLM_CHUNK_S)

static const strata_serve_frontend rows[] = {
    {"sglang", SGLANG_RECV_S, HF_TOKENIZE_S, SGLANG_EMIT_S, 0, 0},
    {"sglang-offline", SGLANG_HOPS_S / 5.0, HF_TOKENIZE_S, SGLANG_HOPS_S * 2.0 / 5.0, 0, 0},
    {"vllm-v1", VLLM_RECV_S, HF_TOKENIZE_S, VLLM_EMIT_S, 0, 0},
    {"vllm-v1-serial", VLLM_RECV_S, HF_TOKENIZE_S, VLLM_EMIT_S, VLLM_INTAKE_S, VLLM_CHUNK_S}, /* --serial-api-server */
};

const strata_serve_frontend *strata_serve_frontend_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

const strata_serve_frontend *strata_serve_frontend_served(const strata_serve_frontend *f, bool offline)
{
    if (!offline || !f)
        return f;
    char *name = g_strconcat(f->name, "-offline", NULL); /* "vllm-v1-offline": no row, no hops */
    const strata_serve_frontend *o = strata_serve_frontend_find(name);
    g_free(name);
    return o;
}
double strata_serve_frontend_recv(const strata_serve_frontend *f, uint32_t prompt)
{
    return f ? f->recv_s + f->tokenize_s * prompt : 0;
}

double strata_serve_frontend_emit(const strata_serve_frontend *f)
{
    return f ? f->emit_s : 0;
}
