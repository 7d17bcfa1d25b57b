/*
 * serve_sampler.c: the decoders' sampling kernels (serve_sampler.h).
 *
 * trtllm-decoder: TensorRT-LLM's C++ runtime decoder (GptDecoderBatched
 * with one fused DynamicDecodeLayer over the whole batch), as the C++
 * executor runs it after each engine step for every request that samples
 * a token, greedy (trtllm-bench sets no top-k, top-p or penalties), beam
 * width 1:
 * - The logits it reads are the engine's `logits` output in the engine's
 *   logits dtype (TrtGptModelInflightBatching builds the decoder with
 *   decoderType = getTensorDataType("logits")), float32 unless the
 *   checkpoint says otherwise (PretrainedConfig logits_dtype = 'float32',
 *   tensorrt_llm/models/modeling_utils.py; DecoderModelForCausalLM marks
 *   the output in it). 4 bytes a logit below.
 * - PenaltyLayer::forwardAsync calls invokeBatchApplyPenalty every step,
 *   whatever the penalties (NVIDIA/TensorRT-LLM@05316d33 cpp/tensorrt_llm/
 *   layers/penaltyLayer.cpp); batchApplyPenalty (kernels/penaltyKernels.cu)
 *   reads each logit of the row and writes it to the runtime logits:
 *   4 + 4 bytes.
 * - SamplingLayer::forwardAsync runs invokeAddBiasSoftMax in place on the
 *   runtime logits unless skipSoftMax = skipTopP && !outputLogProbs &&
 *   !cumLogProbs, skipTopP = !mDecodingMode.isTopP()
 *   (layers/samplingLayer.cpp @03961722): the executor's decoding mode for
 *   beam width 1 is TopKTopP, whose isTopP() holds, so it runs.
 *   addBiasSoftMax (kernels/decodingCommon.cu @14e801da, one CTA a row)
 *   loops over the row three times: logits read and written (bias), then
 *   read and exp written, then read and the normalized value written:
 *   3 x (4 + 4) = 24 bytes.
 * - TopKSamplingLayer: invokeBatchTopKSampling (kernels/
 *   samplingTopKKernels.cu @03961722) with k = 1 (setupTopKRuntimeArgs:
 *   "topk = 0 and topp = 0 ... equivalent to greedy search ... topk = 1"):
 *   topKStage1 copies the row into its workspace (4 + 4 bytes), then one
 *   scan of the copy for each of the k picks (4): 12 bytes; topKStage2Sampling
 *   over the 8 blocks' k candidates a row (no vocabulary-wide pass).
 * 44 bytes a logit over the padded vocabulary, in four kernels. Not
 * counted: the top-p layer (every request has top-k 1, so it is skipped),
 * the stop criteria (a few values a row) and the host side. The softmax's
 * second and third loops reread a row its CTA has just written (513 KB at
 * Llama 3's 128,256 logits), taken as HBM traffic: with a few hundred rows
 * in flight they outgrow a 50 MB L2.
 *
 * trtllm-decoder-0.11: the same passes, and the buffers the decoder of
 * TensorRT-LLM v0.11 allocates at setup for every slot of the engine's
 * max_batch_size (the executor sizes the decoder by it: gptManagerBenchmark
 * sets no smaller batch), each over the whole vocabulary, before the KV
 * cache manager measures the free memory (TrtGptModelInflightBatching
 * creates the runtime buffers, then the decoder, then the KV cache manager
 * and logs each step's "[MemUsageChange]": read in the later open
 * trtGptModelInflightBatching.cpp; v0.11's batch manager is a binary).
 * v0.11.0's tag is over the fetch limit; the open runtime and layers were
 * read in the index's stored versions of the v0.10-v0.11 API (layers built
 * on DecoderDomain and IAllocator, SizeType, GptDecoderBatch with the
 * explicit-draft-tokens path). The decoder's dtype is the engine's logits
 * dtype, float32 (T = float, 4 bytes):
 * - GptDecoderBatch::setup (cpp/tensorrt_llm/runtime/gptDecoderBatch.cpp):
 *   the joint input's embeddingBias [maxBatchSize, vocabSizePadded] float
 *   and mDraftLogits [maxBatchSize, maxTokensPerEngineStep (1),
 *   vocabSizePadded] float, reshaped whatever the decoding mode
 *   ("speculative decoding only works for beam width == 1"): 4 + 4.
 * - PenaltyLayer::allocateBuffer (layers/penaltyLayer.cpp): the runtime
 *   logits, sizeof(T) x maxBatchSize x maxTokensPerStep x maxBeamWidth x
 *   vocabSizePadded: 4; allocateWorkspace, called at initialize for any
 *   decoding mode but None: the penalty workspace, sizeof(SizeType) x
 *   maxBatchSize x maxTokensPerStep x beamWidth x vocabSize (unpadded): 4
 *   over the vocabulary.
 * - SamplingLayer::allocateBuffer (layers/samplingLayer.cpp): one sampling
 *   workspace of the larger of its top-k and top-p layers' (the executor's
 *   beam-1 mode is TopKTopP, so it builds both). SamplingLayer constructs
 *   its TopPSamplingLayer with (decoderDomain, stream, allocator,
 *   deterministic = true) and the header's isAirTopP defaults to true
 *   (layers/topPSamplingLayer.h, every stored version from the SizeType
 *   API on), so allocateBuffer takes getAirTopPWorkspaceSize, not
 *   getTopPWorkspaceSize (wave 30's first reading counted the latter, the
 *   CUB sort's 16 B and the older size_t-era layer's id values 4 B: that
 *   layer ran the sort when deterministic; this one has no id values
 *   buffer). AIR top-p (kernels/samplingAirTopPKernels.cu
 *   getAirTopPWorkspaceSizes, deterministic, float): 2,048 buckets of
 *   uint64 and int32 histograms a slot (24 KiB) and four candidate buffers
 *   of calcBufLen = vocabSizePadded / 32 (rounded up to 256) floats or
 *   ints, 0.5 B a logit. The top-k workspace is larger at every
 *   vocabulary: getTopKWorkspaceSize(batchSize, 1, TOP_K_MAX = 1024,
 *   vocabSizePadded) (kernels/samplingTopKKernels.h
 *   getTopKWorkspaceSizes) is the float temp log probs over the padded
 *   vocabulary, 4, and 8 blocks x 1,024 candidates of an int32 id and a
 *   float value, 65,536 B a slot.
 * 4 + 4 + 4 + 4 = 16 bytes a slot and padded logit, 4 a slot and logit of
 * the vocabulary, 65,536 a slot. The same bytes in the later runtime read
 * (docs/serving.md, "TensorRT-LLM's decoder buffers after v0.11"):
 * GptDecoderBatched::setup still reshapes mDraftLogits whatever the mode,
 * the runtime logits move from PenaltyLayer to DecodingLayerWorkspace
 * (runtime/decodingLayerWorkspace.cpp) and the layers share one workspace
 * buffer, the largest layer's: top-k's. Not counted: the few values a
 * slot the layers keep (penalties, seeds, curand states, offsets, under
 * 200 B), the batch manager's own buffers (its engine logits and per-slot
 * decoder buffers: binary in v0.11) and the engine's activation memory for
 * its last tokens' logits (TensorRT's, not read). Llama 3 70B at TP8 with
 * max_batch_size 8,192: 8,192 x (128,256 x 20 + 65,536) = 21.6 GB a rank;
 * Llama 2 70B with 1,024: 1,024 x (32,000 x 20 + 65,536) = 0.72 GB.
 *
 * vllm-v0-greedy and vllm-v1-greedy: vLLM's V0 and V1 Samplers at greedy
 * sampling, each cited above its passes below.
 */
#include "serve/serve_sampler.h"
#include "core/error.h"
#include "serve/serve_names.h"

static const strata_serve_sampler_pass trtllm_decoder[] = {
    {"batchApplyPenalty: the logits read, the runtime logits written (penaltyKernels.cu)", 8.0},
    {"addBiasSoftMax: three loops over the row, each a read and a write (decodingCommon.cu)", 24.0},
    {"topKStage1: the row copied to the workspace, one scan for k = 1 (samplingTopKKernels.cu)", 12.0},
    {"topKStage2Sampling: the 8 blocks' candidates a row", 0.0},
};

/* vLLM V0's Sampler.forward at greedy sampling, read in the vllm-0.6.2 sdist (vllm/model_executor/layers/sampler.py),
 * run after the forward, the LM head and the logits' gather to rank 0 (worker/model_runner.py:1623-1633, the async
 * output callback between them) and serial with them: no penalties, top-p, top-k, min-p or logprobs asked (their
 * flags off, sampling_metadata.py:411-423; _get_logprobs skips at largest_num_logprobs -1, :996-999). The 16-bit
 * logits cast to float32 (:257: 2 B read, 4 written), divided in place by the temperatures, 1.0 at temperature 0
 * (:258, sampling_metadata.py:411-415: 8 B), softmax and log_softmax both computed (:269, :271: each one read and
 * one write, 8 B, a lower bound: a row of 128,256 float32 is over a block's shared memory, so PyTorch's kernel may
 * read it more than once), then _sample_with_torch's greedy branch, argmax over logprobs[long_sample_indices] (:783):
 * the index gather copies the rows (8 B), argmax reads them (4 B). 42 B a logit in six kernels. Random sampling
 * (temperature 1.0: benchmark_latency.py:52-58 and benchmark_throughput.py:127-133 of the same sdist) gathers probs
 * instead and adds _multinomial's exponential_ (4 B) and probs.div_(q) (12 B) before the argmax (:612-631): 16 B a
 * logit and two kernels more, not charged (strata knows no request's temperature), so the row is a lower bound
 * there. Not read: 0.6.5, 0.7.3 or 0.8.5's sampler.py (the row's later releases), nor 0.5.x's (vllm-v0.5 names
 * none). */
static const strata_serve_sampler_pass vllm_v0_greedy[] = {
    {"logits.to(torch.float): the 16-bit logits read, float32 written (sampler.py:257)", 6.0},
    {"logits.div_(temperatures): read and written in place (sampler.py:258)", 8.0},
    {"torch.softmax over the float32 row (sampler.py:269)", 8.0},
    {"torch.log_softmax over the float32 row (sampler.py:271)", 8.0},
    {"logprobs[long_sample_indices]: the sampled rows gathered (sampler.py:783)", 8.0},
    {"torch.argmax(dim=-1) over the gathered rows (sampler.py:783)", 4.0},
};

/* vLLM V1's Sampler.forward at greedy sampling (temperature 0, benchmark_serving's default: benchmarks/
 * backend_request_func.py:272, 383), read in the vllm-0.10.1.1 sdist (vllm/v1/sample/sampler.py): no logprobs asked,
 * no allowed or bad words, no penalties (apply_penalties skips them, :207), all_greedy returns greedy_sample's
 * argmax (:115-122). Run eagerly after the forward's graphs (gpu_model_runner.py:1647-1675). sampled.long() (:73)
 * launches nothing: argmax returns int64 already (vLLM's comment above it says so), so it is no pass. */
static const strata_serve_sampler_pass vllm_v1_greedy[] = {
    {"logits.to(torch.float32): the 16-bit logits read, float32 written (sampler.py:47)", 6.0},
    {"greedy_sample: logits.argmax(dim=-1) over the float32 row (sampler.py:101-102)", 4.0},
    {"sampled.to(torch.int32) (sampler.py:81)", 0.0},
};

static const strata_serve_sampler rows[] = {
    {"vllm-v1-greedy", "vLLM V1's Sampler at greedy sampling: the logits cast to float32, argmax, the ids cast to int32",
     vllm_v1_greedy, G_N_ELEMENTS(vllm_v1_greedy), 0.0, 0.0, 0.0},
    {"vllm-v0-greedy", "vLLM V0's Sampler at greedy sampling: the logits cast to float32, divided by the temperature, "
     "softmax and log_softmax, the rows gathered, argmax", vllm_v0_greedy, G_N_ELEMENTS(vllm_v0_greedy), 0.0, 0.0, 0.0},
    {"trtllm-decoder", "TensorRT-LLM's C++ runtime decoder, greedy: penalties, softmax, top-k 1 over float32 logits",
     trtllm_decoder, G_N_ELEMENTS(trtllm_decoder), 0.0, 0.0, 0.0},
    {"trtllm-decoder-0.11",
     "trtllm-decoder's kernels, and TensorRT-LLM v0.11's decoder buffers: 16 B a slot and padded logit, 4 B a "
     "slot and logit, 64 KiB a slot", trtllm_decoder, G_N_ELEMENTS(trtllm_decoder), 16.0, 4.0, 65536.0},
    {NULL, NULL, NULL, 0, 0.0, 0.0, 0.0},
};

const strata_serve_sampler *strata_serve_sampler_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_sampler), name, STRATA_ERROR_INPUT, err,
                              "sampler '%s': expected one of %s");
}

double strata_serve_sampler_buffer_bytes(const strata_serve_sampler *s, uint64_t slots, uint32_t vocab, uint32_t tp)
{
    uint64_t ranks = tp ? tp : 1, padded = (vocab + ranks - 1) / ranks * ranks; /* getVocabSizePadded */
    return (double)slots *
           ((double)padded * s->slot_bytes_padded + (double)vocab * s->slot_bytes_vocab + s->slot_bytes);
}

double strata_serve_sampler_time(const strata_serve_sampler *s, uint64_t rows, uint32_t vocab,
                                 strata_serve_pass_fn pass, const void *ctx)
{
    if (!s || !rows)
        return 0;
    double t = 0;
    uint64_t logits = rows * (uint64_t)vocab;
    for (uint32_t i = 0; i < s->n_passes; i++) {
        double b = s->passes[i].bytes_per_logit * (double)logits;
        t += pass(ctx, b > 0 ? logits : rows, b);
    }
    return t;
}
