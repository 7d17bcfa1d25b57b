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

static const strata_serve_sampler rows[] = {
    {"trtllm-decoder", "TensorRT-LLM's C++ runtime decoder, greedy: penalties, softmax, top-k 1 over float32 logits",
     trtllm_decoder, G_N_ELEMENTS(trtllm_decoder)},
    {NULL, NULL, NULL, 0},
};

const strata_serve_sampler *strata_serve_sampler_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_sampler), name, STRATA_ERROR_INPUT, err,
                              "sampler '%s': expected one of %s");
}
