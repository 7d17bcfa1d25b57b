/*
 * serve_engine.c: the engine table (serve_engine.h), one row per engine,
 * each row's sources, and its lookup by name (strata_serve_engine_find,
 * strata_serve_engine_row). What acts on a row (its kernels set on a step's
 * cost model, per platform; its length rule; its CPU time and step; vLLM
 * V1's input copies) is serve_engine_apply.c, which cites those mechanisms.
 *
 * Invariants: the table ends with a NULL name; every row sets hold_rule
 * (serve_holdings.h), an alias row its engine's; the default row (vllm_v1)
 * is not in the table.
 *
 * vllm-v0: vLLM's v0 engine (0.6.0 to 0.8.5, with or without
 *   --num-scheduler-steps; 0.5.x has its own row, vllm-v0.5, below); it
 *   runs the vllm-v0 scheduling policy (serve_sched_v0.c).
 *   Fixed part 4 ms: the GPU bubble between two decode steps of Llama-3-8B
 *   on one H100 in the multi-step RFC's Nsight profile ("each highlighted
 *   redbox is about 4ms of GPU bubble", vllm-project/vllm issue #6854:
 *   the D2H copy of the sampled tokens, detokenisation and pythonising the
 *   outputs, preparing the next step's input metadata, the scheduler).
 *   Per request 35 us: ESTIMATE of the part that grows with the batch (per-sequence Python objects built each step:
 *   sequence-group metadata, block tables, the sampler's output, stop checks), from the same RFC's range of "5-13ms of
 *   GPU bubble" spread over vLLM's default batch of 256 sequences ((13 - 4) ms / 256); not a measurement of that term.
 *   The v0.6.0 blog (blog.vllm.ai/2024/09/05/perf-update.html) puts scheduling at 29% and GPU execution at 38% of
 *   v0.5.3's time for that model and GPU (a ratio of 0.76), the same order. Per prefilled token 0.3 us: ESTIMATE, the
 *   Python that vLLM 0.6.0 runs per prompt token before a prefill step launches (vllm-0.6.0 wheel:
 *   worker/model_runner.py ModelInputForGPUBuilder._compute_lens and build, the token and position lists;
 *   attention/backends/utils.py compute_slot_mapping, a Python loop under 256 tokens and NumPy extended into a list
 *   above; utils.py async_tensor_h2d, torch.tensor of each list, pinned), those statements timed on a lent H200 host's
 *   CPU (PyTorch 2.11, NumPy 2.5, CPython 3.12; validation/gpu/vllm06-prefill-inputs.py): 2.43 ms for 17 prompts of
 *   462 tokens, 309 ns a token (293-342 ns from 1,848 to 8,080 tokens; docs/serving.md, "vLLM 0.6 and the FP8 KV cache
 *   (wave 21)"). Not the blog's host, torch (2.4) or Python. These figures are charged to every release the row stands
 *   for, 0.6.0 to 0.8.5 (the held-out sets' V0 rows), though from 0.6.0 the output processing (_process_model_outputs:
 *   detokenising, the stop checks, the RequestOutputs) runs while the GPU runs the next forward (vllm-0.6.5 sdist,
 *   engine/llm_engine.py:1401-1403 hands the step an async_callback; worker/model_runner.py:1735-1736 calls it once
 *   the forward and the logits are launched, before the sampler's synchronisation; off only for eager mode, pipeline
 *   parallelism, Ray SPMD and speculative decoding, config.py:589-626, platforms/cuda.py: 96-103, rocm.py:76-83). No
 *   public figure splits a 0.6+ step's host time into the serial part (schedule(), prepare_model_input, the sampler's
 *   pythonisation, _advance_to_next_step) and the overlapped part, so the row is left as it was (docs/serving.md,
 *   "vLLM's host time per sequence (wave 33)"). An MLA model's decodes run V0's absorbed weights W_Q_UK and W_UV_O
 *   (mla_absorb: the MLA backend's matrix absorption, serve_cost.h strata_serve_cost_set_mla_absorb), on CUDA and ROCm
 *   alike (MLACommonImpl is the V0 MLA backends' base, TRITON_MLA's and FLASHMLA's; which one 0.7.3's ROCm build
 *   selects was not checked); 0.6's V0, before MLA, ran DeepSeek as MHA: not modelled (only
 *   serving-heldout-18 runs an MLA model on this row). The absorbed weights are 0.7.1's (PR #12528) to 0.7.x's:
 *   vllm-project/vllm PR #14770 ("MLA get rid of materialization", March 2025, for 0.8) runs W_UK_T and W_UV as
 *   bmms again, so an 0.8.x V0 MLA run on this row is charged 0.7's larger weight reads (known, not split).
 * vllm-v0.5: vLLM 0.5.x's v0 engine, before 0.6.0's asynchronous output
 *   processor (vllm-project/vllm PR #7049, merged 2024-08-26, after
 *   v0.5.5): every step's host work is serial with the GPU. Its figures
 *   are the published ones measured on vLLM main of late July 2024
 *   (between v0.5.3.post1 and v0.5.4): 4 ms a step, #6854's bubble
 *   (above); 103.2 us a request, the slope of #6913's (vllm-project/vllm
 *   issue, "[RFC]: Asynchronous Output Processor", 2024-07-29) time of
 *   LLMEngine._process_model_outputs, 0.2 ms at 1 request and 3.4 ms at
 *   32 (Llama-3-70B-Instruct FP8 on 4 x H100, 128 prompt tokens; no CPU
 *   named; the table's third row, 0.2 ms at 1,024, contradicts the first
 *   two and the issue marks its numbers as to be updated: not used). That
 *   is the output processing alone, so a lower bound of the work a
 *   request adds (the scheduler's, the input preparation's and the
 *   sampler's per-request Python have no published split); at 200
 *   requests it gives 4 + 20.6 ms, where vllm-project/vllm issue #6801
 *   (2024-08-08, no hardware named) puts sampling, input preparation,
 *   output processing and the scheduler together at "20ms". The prefill
 *   term (0.3 us a token) is vllm-v0's ESTIMATE, its kernels vllm-v0's.
 *   No validation row runs 0.5.
 * sglang-v0.3: SGLang before 0.4, a synchronous loop (the scheduler waits
 *   for each step's tokens; detokenisation runs in its own process).
 *   ESTIMATE 1 ms per step: its v0.4 release's overlap of that CPU work
 *   with the GPU "1.1x increase in throughput"
 *   (lmsys.org/blog/2024-12-04-sglang-v0-4), i.e. CPU time near a tenth
 *   of a decode step of ~10 ms. Per request 1.6 us + 5.4 ns a prompt
 *   token + 25 ns a token it has generated: ESTIMATE, the Python SGLang
 *   0.3.0 runs for every request of a step before the next step can
 *   launch (sglang-0.3.0 wheel: tp_worker.py forward_decode_batch's loop,
 *   req.check_finished(); handle_finished_requests, which with streaming
 *   builds every request's meta_info dict and its
 *   init_incremental_detokenize() list, prompt + outputs concatenated and
 *   sliced from 5 before the prompt's end, each step; io_struct.py
 *   BatchTokenIDOut.__post_init__'s copy.deepcopy of the meta_info list;
 *   controller_single.py's send_pyobj pickling it, the sliced ids
 *   included, for the detokenizer; schedule_batch.py prepare_for_decode's
 *   input list), those statements timed in CPython 3.11 on this
 *   project's build host at 500 requests, prompts of 100, 462 and 2,000
 *   tokens and 1 to 512 outputs, least squares over the 15 timings (each
 *   within 1.4 us of the line; 4.5 us at 462 / 1, 10.1 us at 462 / 255;
 *   docs/serving.md, "SGLang 0.3's per-request loop"). A lower bound: its
 *   torch and FlashInfer calls and the tokenizer's eos_token_id property
 *   are not in it. It runs the sglang-v0.3 scheduling policy
 *   (serve_sched_sglang.c).
 * sglang-v0.4: SGLang 0.4.0 (its PyPI wheel, tag v0.4.0), whose overlap
 *   scheduler is on by default (disable_overlap_schedule False,
 *   server_args.py:128; off for embedding and multimodal models,
 *   scheduler.py:173-182, and under --enable-dp-attention, server_args.py:
 *   206, neither modelled here). event_loop_overlap (scheduler.py:399-434)
 *   forms and launches step n+1 (get_next_batch_to_run, run_batch: the
 *   batch goes to TpModelWorkerClient's forward thread,
 *   tp_worker_overlap_thread.py:97-147, which launches it on its own
 *   stream, the next step's input ids resolved on the GPU from the
 *   future_token_ids_map), then processes step n's results
 *   (process_batch_result: resolve_batch_result waits for step n's token
 *   copy, then the finish checks, the radix cache and stream_output), so
 *   the host's work for a step runs while the GPU runs the step before:
 *   OVERLAP, step = max(gpu, cpu). What still serialises: with a grammar
 *   (constrained decoding, not the benchmarks') step n+1's sampling waits
 *   for step n's results to be processed (model_runner.py:689-693,
 *   sampling_info_done, set at the end of process_batch_result,
 *   scheduler.py:1059, 1134); the first step after an idle server (nothing
 *   to overlap, not modelled); and the results are one step behind, so a
 *   request done at step n is in
 *   step n+1's decode batch, its token freed unread (process_batch_result_
 *   decode, :1109-1112): overlap_lag. And a request is received a step
 *   late: each pass of the loop receives (recv_requests, :491-506: every
 *   request the tokenizer has sent by then, ZMQ NOBLOCK) just before it
 *   forms a step, and it forms step n+1 right after processing step n-1's
 *   results, i.e. once step n-1's GPU work is done and its CPU work run,
 *   while the GPU runs step n: a request that arrives after that joins
 *   step n+2, not n+1 (recv_lag: step n's start + cpu, at most the step's
 *   length; a CPU-bound step forms the next at its end, as a synchronous
 *   loop does). An idle loop receives at once (batch None: it polls). The
 *   cpu here is the whole step's; SGLang receives after the results'
 *   part of it, before the scheduling and launch part (not split: the
 *   row's figures are mostly per request, the results' loop). Both
 *   threads run Python under one GIL, so cpu is their sum: sglang-v0.3's figures, ESTIMATE, reused
 *   because the same per-request code runs each step (stream_output,
 *   :1228-1329: the output lists, the meta_info dict and
 *   init_incremental_detokenize's prompt + outputs list, schedule_batch.py:
 *   331-341, pickled to the detokenizer) less BatchTokenIDOut's deepcopy of
 *   meta_info (gone from io_struct.py in 0.4.0), and the 1 ms a step is
 *   the 0.4 release's own account of the host work it hid. It runs the
 *   sglang-v0.4 scheduling policy (serve_sched_sglang04.c). Its kernels as
 *   sglang-v0.3's: FlashInfer attention (the default where installed,
 *   server_args.py:185-188; decode through the flash-attention row, the
 *   KV group's query heads reading each KV head once), the kernels around
 *   it as sglang-0.4-flashinfer (serve_attn_aux.c: 0.3's, the ragged
 *   prefill taken at 4096 prefill tokens), vLLM's custom all-reduce
 *   (model_runner.py:24-29, 197: vllm.distributed, set_custom_all_reduce(
 *   not disable_custom_all_reduce); vllm >= 0.6.3.post1 in its METADATA:
 *   the vllm-0.6.4.post1 wheel's custom_all_reduce.py:50-56, 242-254 has
 *   0.6.0's world sizes 2, 4, 6, 8, max_size 8 MiB and selection, its
 *   compiled kernels' 1-/2-stage choice not re-read),
 *   CUDA graphs for decode batches up to 160 padded to 1, 2, 4 or a
 *   multiple of 8 (SGLANG_V03_GRAPH_MAX), the last rows' logits
 *   all-gathered at tp > 1 (LogitsProcessor, srt/layers/logits_processor.
 *   py:183-184) and the embedding all-reduced (its own VocabParallel
 *   Embedding.forward, srt/layers/vocab_parallel_embedding.py:457-476).
 *   Its KV pool (pool_of_static, default_utilization): profile_max_num_token
 *   (model_runner.py:445-470) takes the memory free after loading the
 *   weights less (1 - mem_fraction_static) of the device, no forward run
 *   first, mem_fraction_static 0.88, 0.87, 0.85, 0.81, 0.79 from TP 1, 2,
 *   4, 8, 16 (server_args.py:157-168). Requests (SERVE_LENGTH_SGLANG_04):
 *   the tokenizer refuses input_ids of context_len or more but not text
 *   (tokenizer_manager.py:222-243; sglang.bench_serving sends text,
 *   bench_serving.py:239, 316); the scheduler cuts a prompt over
 *   max_req_input_len = max_req_len - 5, max_req_len = min(context_len - 1,
 *   max_total_num_tokens - 1) (tp_worker.py:100-104), and sets
 *   max_new_tokens to min(itself, max_req_len - prompt - 1) (scheduler.py:
 *   620-632). Where --max-num-seqs is not given, max_running_requests'
 *   default (default_max_running): min(pool tokens // 2, the request
 *   pool, min(max(pool tokens / context_len x 512, 2048), 4096) + 1;
 *   tp_worker.py:92-99, model_runner.py:505-517). CUDA graphs to
 *   cuda_graph_max_bs 160, 8 under 25,000 MiB (serve_graph_limit.c's
 *   sglang-0.4). Not modelled: chunked_prefill_size 2048 there
 *   (server_args.py:171-176), FlashInfer's tensor-core decode for large
 *   GQA groups.
 * sglang-v0.5: SGLang 0.5.6 (its PyPI wheel, the v0.5.6 tag; wave 35),
 *   sglang-v0.4's overlap loop and scheduler (event_loop_overlap and the
 *   PrefillAdder are kept; disable_overlap_schedule False, server_args.py:
 *   500), host figures and kernels, with what 0.5.6 changed on NVIDIA:
 *   its DeepSeek-V3/R1 decode layer's kernels as sglang-0.5-mla on Hopper
 *   (fa3 MLA backend) and sglang-0.5-mla-sm100 on Blackwell (trtllm_mla;
 *   serve_mla_kernels_sgl05.c with their sources); on Blackwell the
 *   block-FP8 experts run FlashInfer's TensorRT-LLM MoE (moe_runner_backend
 *   flashinfer_trtllm, server_args.py:1028-1057 for DeepSeek, :1214-1232
 *   for Qwen3-MoE FP8): the grouped path, not Triton's fused_moe (which
 *   set_kernels keeps to Hopper and ROCm for every row); CUDA graphs up to
 *   cuda_graph_max_bs by the GPU's memory and TP (serve_graph_limit.c's
 *   sglang-0.5: 512 on an H100/H200 at TP >= 4 and on a B200, 256 below TP
 *   4 there, 160 on an A100 40 GB at TP >= 4), padded to its capture list
 *   ([1, 2, 4, 8, 12] + 16..256 by 8 + 272..496 by 16 + 512 on by 32). Not
 *   modelled: mem_fraction_static from the GPU's memory (:700-720; 0.4's
 *   by TP kept), the FlashInfer all-reduce + RMSNorm fusion on Blackwell,
 *   the shared expert on a second stream, Qwen3-MoE's q/k norms on two.
 * vllm-v0 and sglang-v0.3 run the small kernels around their attention
 *   as vLLM 0.6.0's FLASH_ATTN backend and SGLang 0.3.0's FlashInfer path
 *   do (serve_attn_aux.h: RoPE, the cache write, layout copies).
 * vllm-v0 and sglang-v0.3 run their TP all-reduces as vLLM's custom all-reduce (serve_allreduce.h: vllm-custom; on
 *   by default in both, SGLang 0.3 through vllm.distributed). vLLM 0.6 captures CUDA graphs for every decode-only
 *   batch up to max_num_seqs padded to 8 (worker/model_runner.py _get_max_graph_batch_size, _use_captured_graph;
 *   prefill steps run eagerly); SGLang 0.3 up to 160 (graph_max); both pad a captured decode batch to the next
 *   captured size (graph_align).
 * trtllm: TensorRT-LLM's PyTorch backend as trtllm-bench runs it
 *   (tensorrt_llm/bench/benchmark/utils/general.py, get_llm_args, NVIDIA/
 *   TensorRT-LLM@c0b2ee6edd6b86235350271d2c99b4e5f6c1222d: the overlap
 *   scheduler on, capacity_scheduler_policy GUARANTEED_NO_EVICT): the
 *   trtllm-no-evict scheduling policy (serve_sched_trtllm.c), its XQA
 *   decode attention kernel (serve_decode.h: an FP8 cache on Hopper, as
 *   every TensorRT-LLM case runs it) and its own TP all-reduce
 *   (serve_allreduce.h: trtllm-auto, one-shot / two-shot kernels over
 *   NVLink, NCCL past its thresholds); its host
 *   work runs one step ahead of the GPU and is taken as hidden (no CPU
 *   time, as the TensorRT-LLM cases had with `none`; not measured).
 *   Its KV pool is free_gpu_memory_fraction (trtllm-bench's
 *   --kv_cache_free_gpu_mem_fraction, 0.90 by default; strata's
 *   gpu_memory_utilization) of the memory the profile run leaves free:
 *   tensorrt_llm/_torch/pyexecutor/_util.py, KvCacheCreator._cal_max_memory,
 *   available_kv_mem = (total_gpu_memory - peak_memory + allocated_bytes)
 *   x fraction, peak_memory being the weights, the profile run's torch
 *   peak and what is used outside torch (NCCL, CUDA graphs), the
 *   estimation's own KV blocks added back (the same expression in every
 *   PyTorch-backend release read, 2025-2026). The other rows take
 *   vLLM's gpu_memory_utilization of the whole device (serve_run.c).
 *   Its overlap scheduler launches step n+1 before it has read step n's
 *   tokens, so a request that sampled its last token in step n is still in
 *   step n+1's batch: one decode more, its token dropped, its slot and
 *   blocks freed after it (docs/source/features/overlap-scheduler.md,
 *   "Tradeoff: The optimization introduces one extra decoding step",
 *   read at NVIDIA/TensorRT-LLM's main of 2025-2026; PyExecutor.
 *   _executor_loop_overlap: _schedule, _forward_step, _sample_async, then
 *   _process_previous_batch for step n-1): overlap_lag. Its tokens leave
 *   at step n's end, so a request's finish time is that step's.
 *   Its vocabulary layers are split over the TP ranks and joined by a
 *   collective each step (no attention DP): LlamaModel's embed_tokens is an
 *   Embedding with TensorParallelMode.COLUMN, whose forward all-reduces
 *   the masked lookup (tensorrt_llm/_torch/modules/embedding.py,
 *   Embedding.forward: "Reduce across all the model parallel GPUs",
 *   @06d0733f; _torch/models/modeling_llama.py LlamaModel @012cf909), and
 *   DecoderModelForCausalLM's lm_head is an LMHead with COLUMN and
 *   gather_output=True (_torch/models/modeling_utils.py), all-gathering
 *   each rank's vocab / tp logits (bf16, config.torch_dtype) of the rows
 *   that sample: embed_allreduce and logits_gather. Under attention DP
 *   both are whole on each rank (no collective), as the pool's paragraph
 *   of docs/serving.md says.
 * trtllm-cpp: TensorRT-LLM's C++ executor running a TensorRT engine, the
 *   runtime of NIM for LLMs 1.x's optimized profiles (GPU, precision and
 *   TP tagged, e.g. H100 FP8 TP2: docs.nvidia.com/nim/large-language-
 *   models/1.5.0/profiles.html). Scheduling: the executor's defaults,
 *   GUARANTEED_NO_EVICT admission and context chunking off (executor.h:
 *   SchedulerConfig, ExecutorConfig enableChunkedContext = false), the
 *   trtllm-no-evict-unchunked policy. Decode attention: the GPT attention
 *   plugin's generation phase dispatches to XQA where XQA supports the
 *   shape (an FP8 or bf16 paged cache, GQA, head 128 on Hopper), the xqa
 *   row. KV pool: KVCacheManager::calculateMaxNumBlocks
 *   (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp) takes
 *   maxTokens = freeGpuMemoryFraction x (free device memory + the buffer
 *   manager's free pool) / bytes per token, measured after the engine (its
 *   weights and its activation workspace) is loaded, freeGpuMemoryFraction
 *   defaulting to KvCacheConfig::kDefaultGpuMemFraction (0.9): strata's
 *   pool_of_free with gpu_memory_utilization 0.9. Its host work and its
 *   TP all-reduce plugin are not modelled (no CPU time, NCCL's all-reduce;
 *   docs/serving.md "NIM's executor"). Its LM head is a ColumnLinear with
 *   gather_output=True (tensorrt_llm/models/llama/model.py,
 *   LLaMAForCausalLM, @027cd518): logits_gather; its embedding is whole on
 *   every rank unless the checkpoint was converted with
 *   use_parallel_embedding (False by default, the same file), so no
 *   embedding all-reduce. The C++ executor overlaps nothing of the kind
 *   unless ExecutorConfig's enableTrtOverlap is set (false by default,
 *   cpp/include/tensorrt_llm/executor/executor.h): no lag. After each
 *   engine step its decoder (GptDecoderBatched, one fused
 *   DynamicDecodeLayer) runs penalties, softmax and top-k over every
 *   sampled row's float32 logits on each rank: the trtllm-decoder row of
 *   serve_sampler.h (44 bytes a logit in four kernels, serve_sampler.c).
 * trtllm-cpp-0.11: trtllm-cpp as TensorRT-LLM v0.11's C++ runtime
 *   (gptManagerBenchmark's rows of the v0.11.0 performance page), whose
 *   decoder allocates float32 buffers over the whole vocabulary for every
 *   slot of the engine's max_batch_size before the KV pool is sized: the
 *   trtllm-decoder-0.11 row of serve_sampler.h (its passes trtllm-decoder's;
 *   20 bytes a slot and logit and 64 KiB a slot kept from the pool,
 *   serve_sampler.c). The later GptDecoderBatched read (with v0.13's
 *   lookahead decoding) allocates the same bytes a slot, so the row also
 *   models those engines given their max_batch_size as --max-num-seqs
 *   (docs/serving.md, "TensorRT-LLM's decoder buffers after v0.11").
 * trtllm-cpp-0.9: trtllm-cpp as TensorRT-LLM v0.9 runs its decodes (the
 *   gptSessionBenchmark rows of the v0.9.0 performance page). Its GPT
 *   attention plugin builds the XQA runner when plugin_config.enable_xqa
 *   (True by default, tensorrt_llm/plugin/plugin.py) and the activations
 *   are fp16/bf16 (GPTAttentionPluginCommon::initialize), then tries XQA
 *   first in enqueueGeneration ("Try XQA optimization first") where the
 *   runner takes the shape, otherwise runs the masked MHA kernel
 *   (fusedQKV_masked_attention_dispatch): the xqa-v0.9 row of
 *   serve_decode.h, whose comment gives the conditions (8 query heads a KV
 *   head among them: Llama 2 70B runs XQA, Llama 2 7B, Mistral 7B and
 *   Mixtral masked MHA). Read at tag v0.9.0 (250d9c29, version.py
 *   "0.9.0"). TRTLLM_ENABLE_XQA, which the v0.9.0 performance page sets
 *   for its 70B runs, is read nowhere in that tree's sources (only
 *   TRTLLM_FORCE_XQA, envUtils.cpp:28). The rest as trtllm-cpp, but for
 *   its decoder's kernels: v0.9.0's layers were not read (no sampler).
 * trtllm-cpp-0.6: trtllm-cpp-0.9 as TensorRT-LLM v0.6.1 runs the FP8-cache
 *   rows of its performance page (NVIDIA/TensorRT-LLM@138f96d4, docs/
 *   source/performance.md: build.py --enable_fp8 --fp8_kv_cache,
 *   gptSessionBenchmark): every decode through the masked MHA kernel (the
 *   mmha row of serve_decode.h), a CTA per query head and sequence, since
 *   v0.6.1 has no XQA at all (tag v0.6.1, 9b3e12db, in the WhiteD2125/
 *   TensorRT-LLM mirror: no decoderXQARunner; it first appears at v0.7.0),
 *   for any cache type.
 * trtllm-cpp-0.7: trtllm-cpp-0.9 as TensorRT-LLM v0.7.0 / v0.7.1 runs a
 *   static batch on a non-paged cache with TRTLLM_ENABLE_XQA=1 in the
 *   environment (the only switch that builds its XQA runner): the xqa-v0.7
 *   row of serve_decode.h (read at tags v0.7.0 and v0.7.1; XQA for fp16
 *   activations, 8 query heads a KV head, head 128, launched in
 *   micro-batches of min(144, SMs) sequences, else masked MHA). Without
 *   the variable v0.7 decodes every layer as trtllm-cpp-0.6 (the masked MHA
 *   kernel's grid is v0.6.1's at both tags). v0.8.0 needs no row of its
 *   own: its XQA dispatch (shouldUse, mayHavePerfGain, one launch,
 *   multi-block off, enable_xqa True) is v0.9.0's and its sm_90 cubins are
 *   byte-identical to v0.9.0's (git blob c979368a for the fp16 / E4M3
 *   kernel at both tags): trtllm-cpp-0.9.
 * lmdeploy-turbomind (alias turbomind, the name LMDeploy's --backend gives
 *   it): LMDeploy's TurboMind engine as of v0.1.0a1 (InternLM/lmdeploy
 *   @9c46b27ce0358b8bc645633442b7810f715997d7; src/turbomind/). Its loop
 *   is C++ (LlamaBatch<T>::InternalThreadEntry, models/llama/
 *   LlamaBatch.cc:1379-1467, one thread a rank): no Python a step. Its
 *   scheduler is the lmdeploy-turbomind policy (serve_sched_turbomind.c:
 *   whole prompts, sub-batched context passes, then one decoder pass of
 *   every active sequence: context_passes). Its decode attention is the
 *   turbomind-v0.1 row (serve_decode.h: LlamaDecoderSelfAttentionLayer.cc
 *   :196 calls DispatchDecoderMultiheadAttention, RoPE and the cache
 *   append fused in). Its context attention is its copy of
 *   FlashAttention-2's sm80 forward (models/llama/flash_attention2/,
 *   flash_fwd_hdim128_fp16_sm80.cu; LlamaContextAttentionLayer.cc:
 *   324-367) over K and V first copied from the blocks into a linear
 *   buffer (ConvertKvCacheBlocksToLinear2, :234; that copy and
 *   invokeExtendKVCache's write, :214, not modelled: the default fused
 *   QKV pass stands for invokeAddFusedQKVBiasTranspose, :176): fa2_attention.
 *   All-reduce: NCCL's, ftNcclAllReduceSum (utils/nccl_utils.cc:58-69,
 *   ncclAllReduce in a group) after the attention's and the FFN's output
 *   GEMMs (LlamaDecoderSelfAttentionLayer.cc:218-222, LlamaFfnLayer.cc:116,
 *   LlamaContextAttentionLayer.cc:301); the custom all-reduce
 *   communicators LlamaTritonModel.cc:388 creates are not called by the
 *   layers (enable_custom_all_reduce defaults to 0 there, :47): the
 *   default row. LM head: each rank's vocab / tp columns of logits,
 *   all-gathered (ftNcclAllGather, LlamaV2.cc:366-395; in float32 there,
 *   strata's gather counts the activations' dtype): logits_gather; the
 *   embedding table is whole on every rank (LlamaWeight.cc): no embedding
 *   all-reduce. No CUDA graphs (no cudaGraph call in src/turbomind at that
 *   tag): graph_align 0, every kernel launched each step. KV pool: the
 *   memory rule of the default row; cache_max_entry_count > 1 is a count
 *   of blocks (BlockManager.cc:16-21; --kv-blocks N), under 1 a fraction
 *   of the device's total memory (GetBlockCount, :84-90; total x ratio /
 *   block bytes, weights not subtracted: not modelled, pass the pool by
 *   --kv-blocks); cache_block_seq_len 128 by default (LlamaTritonModel.cc
 *   :99-102; --block-size 128). Requests longer than session_len:
 *   refused when the prompt exceeds it (LlamaBatch.cc:73), the output cut
 *   to session_len - 1 - prompt (:245-246): the TRTLLM rule (its cut is
 *   one token longer). Host time, SYNC (Finish synchronises the stream,
 *   :1242-1258, before the next iteration launches anything):
 *   ESTIMATE 50 us a step: the host work between that synchronisation and
 *   the next iteration's first launch (two Barrier::wait of the rank
 *   threads, the request queue, Materialize's walk, the block-pointer and
 *   length copies to the device, about ten cudaMemcpyAsync at ~5 us each);
 *   ESTIMATE 1 us a request: Finish's copy of each sequence's session_len
 *   int32 output ids to the host (:1258; 4,104 x 4 B = 16 KB at ~25 GB/s,
 *   PCIe 4.0 x16) and its per-sequence loop. Its sampler
 *   (DynamicDecodeLayer, FasterTransformer's) is not modelled.
 * vllm-v1, the row behind no --engine (not in the table: --engine cannot
 *   name it): vLLM v1, no CPU time per step, and the one row with
 *   fa3_prefill, its FLASH_ATTN backend running FlashAttention-3 on Hopper
 *   (serve_cost.c's fa3_prefill_bytes); the rows above run their own
 *   prefill kernels (vLLM 0.6's FlashAttention-2, SGLang 0.3's FlashInfer,
 *   TensorRT-LLM's FMHA), timed by the flash-attention row's count. Its
 *   input copies: serve_engine_apply.c. The rows' ROCm kernels, the
 *   vocabulary's collectives of the vLLM and SGLang rows and the length
 *   rules: serve_engine_apply.c.
 */
#include "serve/serve_engine.h"
#include <math.h>
#include "core/error.h"
#include "serve/serve_names.h"

/* SGLang 0.3.0's largest captured decode batch (model_executor/
 * model_runner.py init_cuda_graphs: batch_size_list [1, 2, 4] + 8 x (1..20)
 * with padding, the default) */
enum { SGLANG_V03_GRAPH_MAX = 160 };
/* Both capture 1, 2, 4, then multiples of 8 (vLLM 0.6 _BATCH_SIZES_TO_CAPTURE,
 * _BATCH_SIZE_ALIGNMENT = 8, _get_graph_batch_size; SGLang 0.3's list
 * above) and pad a decode batch to the next captured size. */
enum { GRAPH_ALIGN = 8 };

/* What both vLLM V0 rows share: the multi-step mode, 0.3 us a prefilled token, the vllm-v0 scheduler, vLLM's custom
 * all-reduce (ROCm's on RCCL hardware), ROCm's paged attention and per-tensor FP8 Linears there, graphs padded to
 * multiples of 8, 0.6's FA2 kernels, the logits gathered to rank 0, the embedding all-reduced. */
#define VLLM_V0_SHARED                                                                                             \
    .mode = SERVE_ENGINE_MULTI_STEP, .per_prefill_token_s = 0.3e-6, .lengths = SERVE_LENGTH_VLLM_SERVER,           \
    .scheduler = "vllm-v0", .allreduce = "vllm-custom", .allreduce_rocm = "vllm-custom-rocm",                      \
    .decode_rocm = "paged-attention-rocm", .graph_align = GRAPH_ALIGN, .attn_aux = "vllm-0.6-flash-attn",          \
    .fa2_attention = true, .logits_gather = true, .logits_to_root = true, .embed_allreduce = true,                \
    .triton_moe = true

/* What the SGLang rows share: the CPU figures above, vLLM's custom all-reduce, graphs padded to multiples of 8, the
 * logits gathered and the embedding all-reduced, the server's hops (each row names its eager prefill's calls). */
#define SGLANG_SHARED                                                                                              \
    .step_s = SGLANG_STEP_S, .per_seq_s = SGLANG_PER_SEQ_S, .per_prompt_token_s = SGLANG_PER_PROMPT_TOKEN_S,       \
    .per_output_token_s = SGLANG_PER_OUTPUT_TOKEN_S, .allreduce = "vllm-custom", .graph_align = GRAPH_ALIGN,     \
    .logits_gather = true, .embed_allreduce = true, .triton_moe = true, .frontend = "sglang"

/* SGLang's overlap loop as 0.4 and 0.5 run it: sglang-v0.4's scheduler, its
 * FlashInfer GQA path, the one-step lag, the pool of mem_fraction_static. */
#define SGLANG_OVERLAP                                                                                             \
    .mode = SERVE_ENGINE_OVERLAP, .scheduler = "sglang-v0.4", .attn_aux = "sglang-0.4-flashinfer",                 \
    .overlap_lag = true, .recv_lag = true, .lengths = SERVE_LENGTH_SGLANG_04, SGLANG_SHARED,                       \
    .default_utilization = sglang_v04_mem_fraction, .default_max_running = sglang_v04_max_running,                 \
    .pool_of_static = true

/* TensorRT-LLM's C++ executor on a TensorRT engine, by release: what
 * differs is its decode kernel's dispatch and its decoder (serve_sampler.h;
 * NULL: none charged). */
#define TRTLLM_CPP(row, about, decode_kernel, decoder)                                                            \
    {.name = row,                                                                                                \
     .mode = SERVE_ENGINE_SYNC,                                                                                  \
     .what = about,                                                                                              \
     .scheduler = "trtllm-no-evict-unchunked",                                                                   \
     .decode = decode_kernel,                                                                                    \
     .pool_of_free = true,                                                                                       \
     .tensorrt_runtime = true,                                                                                   \
     .lengths = SERVE_LENGTH_TRTLLM,                                                                             \
     .logits_gather = true,                                                                                      \
     .sampler = decoder,                                                                                         \
     .hold_rule = SERVE_HOLD_TRTLLM}

/* LMDeploy TurboMind 0.1, under both of its names. */
#define LMDEPLOY_TURBOMIND(alias)                                                                                \
    {.name = alias,                                                                                              \
     .mode = SERVE_ENGINE_SYNC,                                                                                  \
     .step_s = 50e-6,                                                                                            \
     .per_seq_s = 1e-6,                                                                                          \
     .what = "LMDeploy TurboMind 0.1 (C++): whole prompts in context passes, then one decoder pass; its decoder " \
             "attention, NCCL, no CUDA graphs; 50 us + 1 us a request a step (ESTIMATE)",                        \
     .scheduler = "lmdeploy-turbomind",                                                                          \
     .decode = "turbomind-v0.1",                                                                                 \
     .fa2_attention = true,                                                                                      \
     .context_passes = true,                                                                                     \
     .lengths = SERVE_LENGTH_TRTLLM,                                                                             \
     .logits_gather = true,                                                                                      \
     .hold_rule = SERVE_HOLD_NONE}

/* SGLang's CPU time a step, the sglang-v0.3 row's figures, which sglang-v0.4 reuses (the comment above gives
 * both): 1 ms a step (ESTIMATE, the v0.4 release's "1.1x"), per request 1.6 us, 5.4 ns a prompt token and 25 ns a
 * generated token (ESTIMATE, SGLang 0.3.0's per-request Python timed on the build host). */
#define SGLANG_STEP_S 1e-3
#define SGLANG_PER_SEQ_S 1.6e-6
#define SGLANG_PER_PROMPT_TOKEN_S 5.4e-9
#define SGLANG_PER_OUTPUT_TOKEN_S 25e-9

/* vllm-v0.5's CPU time per request (the vllm-v0.5 paragraph above): #6913's _process_model_outputs, 0.2 ms at 1
 * request and 3.4 ms at 32 (Llama-3-70B FP8, 4 x H100), (3.4 - 0.2) ms / 31 = 103.2258 us a request. */
#define VLLM_V05_PER_SEQ_S ((3.4e-3 - 0.2e-3) / 31.0)

/* SGLang 0.4.0's mem_fraction_static when none is given (server_args.py:
 * 157-168): 0.88 at TP1, 0.87 at TP2-3, 0.85 at TP4-7, 0.81 at TP8-15,
 * 0.79 from TP16. */
static double sglang_v04_mem_fraction(uint32_t tp)
{
    return tp >= 16 ? 0.79 : tp >= 8 ? 0.81 : tp >= 4 ? 0.85 : tp >= 2 ? 0.87 : 0.88;
}

/* SGLang 0.4.0's max_running_requests when none is given (tp_worker.py:92-99):
 * min(pool tokens // 2, the request pool's size), the request pool
 * max_num_reqs + 1 with max_num_reqs = min(max(int(pool tokens /
 * context_len x 512), 2048), 4096) (model_runner.py:505-517). */
static uint32_t sglang_v04_max_running(uint64_t pool_tokens, uint32_t max_model_len)
{
    double per = max_model_len ? floor((double)pool_tokens / max_model_len * 512.0) : 4096.0;
    uint64_t reqs = (uint64_t)fmin(fmax(per, 2048.0), 4096.0) + 1, half = pool_tokens / 2;
    uint64_t n = half < reqs ? half : reqs;
    return (uint32_t)(n ? n : 1);
}

static const strata_serve_engine engines[] = {
    {.name = "none",
     .mode = SERVE_ENGINE_SYNC,
     .what = "no CPU time per step (its work hidden or not modelled)",
     .hold_rule = SERVE_HOLD_VLLM_V1}, /* as no --engine */
    {.name = "vllm-v0",
     .step_s = 4e-3,
     .per_seq_s = 35e-6,
     .eager = "vllm-0.7",
     .seq_capture = 8192,
     .fp8_linear_rocm = "vllm-rocm-fork",
     .mla_absorb = true,
     .async_output = true, /* serve_engine.h; vLLM 0.7.3 llm_engine.py:1386-1388, model_runner.py:1778-1779 */
     .sampler = "vllm-v0-greedy", /* serve_sampler.c */
     .mla_kernels = "vllm-0.7-v0-mla", /* 0.7.3's MLA decode (serve_mla_kernels_v07.h) */
     .triton_moe_configs = "vllm-0.7.3",
     .triton_moe_configs_rocm = "vllm-0.7.3-default", /* serve_triton_moe.h */
     .what = "vLLM v0 (0.6 on; 0.5 has vllm-v0.5): 4 ms + 35 us per request a step + 0.3 us a prefilled token "
             "(ESTIMATE), once per --num-scheduler-steps decode steps",
     .hold_rule = SERVE_HOLD_VLLM_V0,
     VLLM_V0_SHARED},
    {.name = "vllm-v0.5",
     .step_s = 4e-3,
     .per_seq_s = VLLM_V05_PER_SEQ_S,
     .fused_moe_bf16 = "vllm-0.4.2",
     .eager = "vllm-0.4",
     .seq_capture = 8192, /* eager past 8,192 (serve_sched.c) */
     .fp8_linear_rocm = "vllm-0.6-rocm-scaled-mm", /* fork v0.4.3_rocm's */
     .what = "vLLM 0.5.x v0 (before 0.6's async output processor): 4 ms (#6854) + 103.2 us per request (#6913's "
             "output processing, 1 to 32 requests) a step, serial; else as vllm-v0",
     .hold_rule = SERVE_HOLD_VLLM_V0,
     VLLM_V0_SHARED},
    {.name = "sglang-v0.3",
     .mode = SERVE_ENGINE_SYNC,
     .what = "SGLang before 0.4: 1 ms a step + per request 1.6 us, 5.4 ns a prompt token, 25 ns an output token, not "
             "overlapped (ESTIMATE)",
     .scheduler = "sglang-v0.3",
     .graph_max = SGLANG_V03_GRAPH_MAX,
     .attn_aux = "sglang-0.3-flashinfer",
     .lengths = SERVE_LENGTH_SGLANG_03,
     .eager = "sglang",
     .hold_rule = SERVE_HOLD_SGLANG,
     SGLANG_SHARED},
    {.name = "sglang-v0.4",
     .what = "SGLang 0.4 (overlap scheduler): sglang-v0.3's CPU figures (ESTIMATE) run while the GPU runs the step "
             "before; a finished request decodes once more; its own scheduler; pool of mem_fraction_static by TP",
     .graph_limit = "sglang-0.4",
     .mla_kernels = "sglang-0.4.5-mla",
     .eager = "sglang",
     .hold_rule = SERVE_HOLD_SGLANG,
     SGLANG_OVERLAP},
    {.name = "sglang-v0.5",
     .what = "SGLang 0.5.6 (overlap scheduler): sglang-v0.4's loop, scheduler and CPU figures; its DeepSeek MLA "
             "decode kernels on Hopper (fa3), Blackwell (trtllm_mla) and gfx942 (aiter), TensorRT-LLM's MoE on "
             "Blackwell (FP8; BF16 experts: Triton fused_moe, GLM's shared expert fused), graphs to 512 by memory "
             "and TP; its block-FP8 Linears as aiter's Triton GEMM on gfx942",
     .graph_limit = "sglang-0.5",
     .mla_kernels = "sglang-0.5-mla",
     .mla_kernels_rocm = "sglang-0.5-rocm-mla",
     .gemm_rocm = "aiter-triton-a8w8-blockscale-gfx942",
     .eager = "sglang-0.5",
     .moe_gate = "sglang-0.5",
     .fused_moe_bf16 = "sglang-0.5",
     .hold_rule = SERVE_HOLD_SGLANG,
     SGLANG_OVERLAP},
    {.name = "overlap",
     .mode = SERVE_ENGINE_OVERLAP,
     .step_s = 4e-3,
     .per_seq_s = 35e-6,
     .what = "vllm-v0's CPU work run one step ahead of the GPU (SGLang 0.4, TensorRT-LLM, vLLM v1 async scheduling)",
     .hold_rule = SERVE_HOLD_VLLM_V1}, /* as no --engine */
    {.name = "trtllm",
     .mode = SERVE_ENGINE_OVERLAP,
     .what = "TensorRT-LLM (PyTorch backend, trtllm-bench): overlap scheduler, host work hidden; GUARANTEED_NO_EVICT "
             "admission",
     .scheduler = "trtllm-no-evict",
     .decode = "xqa",
     .allreduce = "trtllm-auto",
     .pool_of_free = true,
     .overlap_lag = true,
     .lengths = SERVE_LENGTH_TRTLLM,
     .logits_gather = true,
     .embed_allreduce = true,
     .hold_rule = SERVE_HOLD_TRTLLM},
    TRTLLM_CPP("trtllm-cpp", "TensorRT-LLM's C++ executor on a TensorRT engine (NIM 1.x): GUARANTEED_NO_EVICT, "
               "whole contexts, XQA decode, KV pool of the free memory; host time not modelled", "xqa",
               "trtllm-decoder"),
    TRTLLM_CPP("trtllm-cpp-0.11", "trtllm-cpp as TensorRT-LLM v0.11's runtime sizes its decoder: float32 buffers "
               "over the vocabulary for every slot of the engine's max batch, kept from the KV pool", "xqa",
               "trtllm-decoder-0.11"),
    TRTLLM_CPP("trtllm-cpp-0.9", "trtllm-cpp as TensorRT-LLM v0.9 dispatches its decodes: XQA for 8 query heads a "
               "KV head, else masked MHA", "xqa-v0.9", NULL),
    TRTLLM_CPP("trtllm-cpp-0.7", "trtllm-cpp-0.9 as TensorRT-LLM v0.7 decodes with TRTLLM_ENABLE_XQA=1: XQA over "
               "micro-batches of min(144, SMs), else masked MHA", "xqa-v0.7", NULL),
    TRTLLM_CPP("trtllm-cpp-0.6", "trtllm-cpp-0.9 as TensorRT-LLM v0.6.1 decodes an FP8 cache: masked MHA, a CTA per "
               "query head", "mmha", NULL),
    LMDEPLOY_TURBOMIND("lmdeploy-turbomind"),
    LMDEPLOY_TURBOMIND("turbomind"),
    {.name = NULL},
};
#undef VLLM_V0_SHARED
#undef SGLANG_SHARED
#undef TRTLLM_CPP
#undef LMDEPLOY_TURBOMIND

/* No --engine: vLLM v1 as the default scheduler (vllm-v1) runs it, no CPU time per step, its FLASH_ATTN backend's
 * FlashAttention-3 prefill (vLLM's vllm/attention/utils/fa_utils.py, get_flash_attn_version: "if hopper default to
 * FA3", device capability 9). On RCCL hardware its decodes run V1's ROCm default, TritonAttentionBackend's
 * unified_attention (serve_decode.h: triton-unified-attention; ROCm/vllm@71faa188, 0.9.0.1, platforms/rocm.py
 * get_attn_backend_cls: TritonAttentionBackend unless VLLM_ROCM_USE_AITER, envs.py default False), or under
 * VLLM_V1_USE_PREFILL_DECODE_ATTENTION=1 (--prefill-decode-attention; AMD's MI300X page exports it from vLLM 0.9.1,
 * @26a85c75, and at 0.10.0, @040de12d) chunked_prefill_paged_decode's paged_attention_rocm. */
static const strata_serve_engine vllm_v1 = {.name = "vllm-v1",
                                            .mode = SERVE_ENGINE_SYNC,
                                            .what = "vLLM v1 (no --engine): no CPU time per step, its input "
                                                    "copies, piecewise graphs' host chain, greedy sampler, FA3 prefill",
                                            .fa3_prefill = true,
                                            .triton_moe = true,
                                            .fused_moe_bf16 = "vllm-0.11-rocm", /* ROCm only (its row) */
                                            .mla_kernels = "vllm-0.8-mla",
                                            .mla_prefill_v1 = true, /* serve_mla_prefill_v1.h */
                                            .allreduce_rocm = "vllm-custom-rocm",
                                            .decode_rocm = "triton-unified-attention",
                                            .decode_rocm_pd = "paged-attention-rocm",
                                            .window_blocks = true,
                                            .logits_gather = true,
                                            .embed_allreduce = true,
                                            .input_copies = true,
                                            .frontend = "vllm-v1",
                                            .sampler = "vllm-v1-greedy",
                                            .piecewise = true,
                                            .hold_rule = SERVE_HOLD_VLLM_V1};

const strata_serve_engine *strata_serve_engine_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(engines, strata_serve_engine), name, STRATA_ERROR_INPUT, err,
                              "--engine: unknown engine '%s' (known: %s)");
}

const strata_serve_engine *strata_serve_engine_row(const strata_serve_engine *e) { return e ? e : &vllm_v1; }
