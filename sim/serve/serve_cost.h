/*
 * serve_cost.h: the time of one scheduler step of a served model on one
 * rank, from the kernel cost models (models/kernel) on the hardware
 * model's first unit, and the times of the host link (swaps) and of the
 * TP all-reduces on the device interconnect.
 *
 * A step's time (each op: the slower of its compute and its operand bytes
 * at the memory's bandwidth, then its fixed time; ops in sequence):
 *   per layer, over the step's T tokens:
 *     attention projections: GQA gemm T x hidden x (heads + 2 kv) x
 *       head_dim / tp (QKV) and T x heads x head_dim / tp x hidden (O);
 *       MLA (DeepSeek) the down-projections T x hidden x (q_lora + kv_lora
 *       + rope), replicated, their two norms, q_b T x q_lora x heads/tp x
 *       (nope + rope) and O T x heads/tp x v x hidden
 *     attention: GQA/MHA, one flash-attention op per prefill chunk (B=1,
 *       its heads, Sq = chunk, Skv = context, causal; under vLLM v1's
 *       FlashAttention-3 its K and V read once per KV head, the tile
 *       scheduler's L2 sections: strata_serve_cost_set_fa3_prefill) and one for all
 *       decodes (B = decodes, kv heads per rank, Sq = heads / kv_heads:
 *       the query heads of a group packed as rows, as FlashAttention's
 *       pack_gqa does, Skv = their mean context), or the engine's decode
 *       kernel where it names one (serve_decode.h: TensorRT-LLM's XQA, its
 *       CTAs in waves over the SMs); MLA as vLLM's MLA
 *       backend runs it (serve_cost.c's mla_prefill, mla_decode: prefill expanded,
 *       decode absorbed over the latent cache)
 *     the MLP: gemm T x hidden x (2 or 1) inter / tp and T x inter / tp x
 *       hidden (gated or not; an MoE layer, issue 42's rule: its router,
 *       top_k experts per token spread over min(experts, T x top_k)
 *       experts, run kernel by kernel as TensorRT-LLM's CUTLASS fused MoE
 *       runs them (serve_cost.c's experts_grouped: routing, FP8 input
 *       quantization under 8-bit weights, expert maps, row expansion,
 *       strides, a grouped GEMM per weight as a batched gemm, the
 *       activation, the finalize), and its shared experts as one MLP)
 *     elementwise 4 x T x hidden (two norms, two residual adds), read and
 *       written in the activations' dtype (bf16 under 8-bit weights); in a
 *       dense layer the activation (SwiGLU reads gate and up, T x 2 inter /
 *       tp, and writes T x inter / tp in the next GEMM's input dtype); under
 *       8-bit weights TensorRT-LLM's FP8 input quantization before QKV and
 *       gate_up where it is not fused into the all-reduce (tp > 1 and
 *       hidden > 4096), a pass of T x hidden
 *     before prefill attention (GQA/MHA), the QKV preprocessing over the
 *       step's prefill tokens (RoPE, the cache write): q, k, v read in the
 *       activations' dtype and written in the cache's
 *     with tp > 1, two all-reduces of T x hidden activations (bf16 under
 *       8-bit weights) over the tp ranks of one node, each (where the engine
 *       runs the library's, serve_allreduce.h) at the time strata's
 *       collective model simulates for that size (serve_coll.h: the
 *       algorithm, protocol and channels the hardware's collective row
 *       picks, NCCL's on collectives = nccl, run step by step on the
 *       hardware's links as validate's nccl-tests cases are; NCCL's
 *       closed-form estimate_s only chooses)
 *   then the LM head: gemm S x hidden x vocab / tp for the S requests that
 *   sample a token; with tp > 1, where the engine runs them
 *   (strata_serve_cost_set_vocab_collectives), the all-gather of those
 *   logits (or their gather to rank 0)
 *   and the embedding's all-reduce.
 * With attention data parallelism (TensorRT-LLM's enable_attention_dp,
 * SGLang's --enable-dp-attention) the step's chunks are all ranks' and a
 * rank's time is its share: attention, its projections, norms, dense MLPs,
 * shared experts, router and LM head whole on its 1/tp of the tokens and
 * requests; the routed experts split over the ranks on all tokens, with a
 * gather (the quantized input, top_k ids and scales) and a reduce-scatter
 * (bf16) of T x hidden around each MoE layer, simulated likewise
 * (serve_coll.h; each rank's share of the tokens rounded up: NCCL's buffers
 * are equal), and no other collective.
 * An MLA model under an engine's row (serve_mla_kernels.h) adds the
 * row's kernels, and its step is the longer of that and the host's chain
 * of eager launches. The dense part depends on T alone and is kept per T.
 * The engine's CPU time per step is serve_engine.h's, added by the
 * scheduler.
 *
 * At the sustained clock (strata_serve_cost_set_sustained), an op whose
 * compute time at the peak's clock exceeds its bytes' time is timed on the
 * unit's sustained rates, the others on its peak's.
 *
 * Invariants: times are finite and >= 0; the same step gives the same time.
 */
#ifndef STRATA_SERVE_COST_H
#define STRATA_SERVE_COST_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "serve/serve_allreduce.h"
#include "serve/serve_attn_aux.h"
#include "serve/serve_coll.h"
#include "serve/serve_decode.h"
#include "serve/serve_fp8_linear.h"
#include "serve/serve_mla_kernels.h"
#include "serve/serve_model.h"
#include "serve/serve_moe_gate.h"
#include "serve/serve_sampler.h"
#include "serve/serve_triton_gemm.h"
#include "serve/serve_fused_moe_bf16.h"
#include "serve/serve_triton_moe.h"

/* The compute unit serve times every step on (the hardware file's first): what its --clock rule is checked
 * on, what its duty filter's floor and its sustained rates are read from (serve_args.c, serve_run.c). */
#define STRATA_SERVE_UNIT 0

typedef struct strata_serve_cost strata_serve_cost;

/* One request's part of a step: new tokens, and its context after them. */
typedef struct strata_serve_chunk {
    uint32_t id;
    uint32_t tokens;
    uint32_t context;
    bool samples; /* it produces a token this step */
} strata_serve_chunk;

/* attention_dp: the step's chunks are those of all tp ranks, each running
 * the attention of its own share whole (see strata_serve_config). */
strata_serve_cost *strata_serve_cost_new(const strata_hw *hw, const strata_serve_model *m, uint32_t tp,
                                         bool attention_dp, uint32_t max_tokens, GError **err);
void strata_serve_cost_free(strata_serve_cost *c);
/* The kernel the GQA/MHA decodes run as (serve_decode.h; NULL, the
 * default: the flash-attention op). MLA decodes keep their own path. */
void strata_serve_cost_set_decode(strata_serve_cost *c, const strata_serve_decode_kernel *k);
/* GQA/MHA prefill attention's HBM bytes as FlashAttention-3 moves them
 * (vLLM v1's FLASH_ATTN backend, the default engine: each KV head's K and
 * V once, its tile scheduler keeping them in L2; serve_cost.c's
 * fa3_prefill_bytes), else (false, the default) the flash-attention
 * row's count: K and V once per block pair and query head. */
void strata_serve_cost_set_fa3_prefill(strata_serve_cost *c, bool on);
/* GQA/MHA attention (prefill and flash-op decodes) as FlashAttention-2's
 * own kernels (models/kernel/flash_attention.c: mma.sync, L2 reuse, GQA
 * swap, split-KV), entered as vLLM 0.6's FLASH_ATTN backend enters them
 * (vllm-flash-attn 2.6.1): a prefill through flash_attn_varlen_func, with a
 * block table where the chunk has cached keys before it, a decode through
 * flash_attn_with_kvcache with one; false (the default): each engine's
 * own kernel (the flash row without FA2's launch). */
void strata_serve_cost_set_fa2_attention(strata_serve_cost *c, bool on);
/* A served step's routed experts under block-scaled FP8 (weight_block > 0) as the Triton fused_moe kernel runs
 * their two grouped GEMMs (vLLM, SGLang: serve_triton_moe.h); false (the default): TensorRT-LLM's grouped
 * kernel (models/kernel grouped-gemm). The MoE cases (strata_serve_cost_moe_experts) keep the latter. cfg: the
 * engine's release's config file (serve_triton_moe.h; NULL: vllm@645d18fa's H200 file). */
void strata_serve_cost_set_triton_moe(strata_serve_cost *c, bool on, const strata_serve_triton_moe_configs *cfg);
/* Unquantized routed experts as vLLM's or SGLang's Triton fused_moe runs them at a release's default config where it
 * ships no tuned file (serve_fused_moe_bf16.h: vLLM 0.4.2 on Ampere, SGLang 0.5.6 on Blackwell): each grouped GEMM of
 * a served step the slower of the grouped row and its small-tile K loop's chain (vLLM) or the default tile's waves
 * (SGLang), and the shared experts the release fuses into the routed ones priced there, not as their own MLP;
 * NULL (the default), or weights under 16 bits: the grouped row. */
void strata_serve_cost_set_fused_moe_bf16(strata_serve_cost *c, const strata_serve_fused_moe_bf16 *r);
/* The engine's routing kernels beyond the one fused top-k kernel every MoE layer is charged (serve_moe_gate.h; NULL:
 * none, the default). */
void strata_serve_cost_set_moe_gate(strata_serve_cost *c, const strata_serve_moe_gate *g);
/* A block-scaled FP8 model's (weight_block > 0, dtype f8) Linear layers as the engine's Triton kernel runs them
 * (serve_triton_gemm.h: SGLang 0.5's aiter gemm_a8w8_blockscale on gfx942), each the slower of its programs'
 * waves on single CUs and the gemm row; NULL (the default): the gemm row. The MoE router's GEMM keeps the row. */
void strata_serve_cost_set_triton_gemm(strata_serve_cost *c, const strata_serve_triton_gemm *g);
/* A per-tensor FP8 model's (dtype f8, no weight_block) Linear layers as the engine's ROCm build runs them
 * (serve_fp8_linear.h: vLLM 0.6.2's torch._scaled_mm branch): an input quantization before o_proj and down_proj
 * too, the MLP's activation written in bf16, the GEMM's rows padded to the row's minimum; NULL (the default), or
 * another model: TensorRT-LLM's pattern (fp8_input_quant). */
void strata_serve_cost_set_fp8_linear(strata_serve_cost *c, const strata_serve_fp8_linear *r);
/* The same hardware at its sustained clock (hw.h strata_hw_run_at_sustained_clock; NULL: none): an op whose
 * compute time at the peak's clock exceeds its bytes' time runs on it. Measured on a lent H100: Llama-3-8B
 * prefills and GEMMs back to back held 1455 MHz at the 700 W limit, decode steps 1905-1980 MHz (their
 * GEMMs stream weights; docs/validation.md, "An 8B forward on a real H100 and H200, wave 20"). */
void strata_serve_cost_set_sustained(strata_serve_cost *c, const strata_hw *sustained);
/* The engine's own kernels around GQA attention (serve_attn_aux.h), in
 * place of the one fused QKV preprocessing pass over the prefill tokens;
 * NULL: that pass. */
void strata_serve_cost_set_attn_aux(strata_serve_cost *c, const strata_serve_attn_aux *a);
/* The TP all-reduce's implementation (serve_allreduce.h; NULL, the
 * default: NCCL's, as the hardware's collective row times it). */
void strata_serve_cost_set_allreduce(strata_serve_cost *c, const strata_serve_allreduce *a);
/* The decoder's kernels over each step's sampled rows' logits (serve_sampler.h; NULL, the default: none). */
void strata_serve_cost_set_sampler(strata_serve_cost *c, const strata_serve_sampler *s);
/* An MLA model's layer kernels beyond these ops as the engine runs them, and its eager launches' host time
 * (serve_mla_kernels.h; NULL, the default: none). */
void strata_serve_cost_set_mla_kernels(strata_serve_cost *c, const strata_serve_mla_kernels *k);
/* An MLA model's decodes through vLLM V0's absorbed weights (on: its MLA backend's matrix absorption; off, the
 * default: q_b, W_UK, W_UV and o_proj as their own products). V0's MLACommonImpl (vllm/attention/backends/mla/
 * common.py, the V0 backends' base from 0.7.1; read in the search index's stored copy, not pinned to a tag)
 * process_weights_after_loading folds W_UK into the query's up-projection, W_Q_UK = einsum("qnd,lnd -> qnl", W_Q,
 * W_UK) (q_lora x heads kv_lora a rank), and W_UV into o_proj, W_UV_O = einsum("lnd,hnd -> nlh", W_UV, W_O) (heads
 * kv_lora x hidden), each requantized to the checkpoint's block-FP8 groups (scaled_quantize; an FP8 model cannot
 * run without: "Currently fp8 requires matrix absorption"), and keeps W_QR (q_lora x heads rope) in the activations'
 * dtype. forward runs a decode's query as _q_proj_and_k_up_proj (W_Q_UK, apply_fp8_linear_generic: the input
 * quantized per token group, then the block-FP8 GEMM) and torch.matmul(q_c, W_QR), its output as
 * _v_up_proj_and_o_proj (W_UV_O likewise, then the TP all-reduce o_proj's would have run); prefills keep q_proj,
 * kv_b_proj and o_proj. At DeepSeek-V3 TP8 a layer's decode reads 74.4 MB of these weights against 23.6 MB for q_b,
 * W_UK, W_UV and o_proj (docs/serving.md, wave 39). Not under attention DP; a model without q_lora_rank: unchanged.
 * The same class's prefill (0.7.3, serve_mla_prefill_v07.h): q_a_proj and kv_a_proj_with_mqa apart (kv_a as the
 * Triton block GEMM on CUDA) with a quantization each, the PyTorch RoPE, k's concatenation, v padded to q's width
 * for the flash op (its PV at nope + rope wide) and the output's slice copied, on the prefill tokens. */
void strata_serve_cost_set_mla_absorb(strata_serve_cost *c, bool on);
/* vLLM V1's MLA prefill (MLACommonImpl of vllm/v1/attention/backends/mla/common.py; serve_mla_prefill_v1.h): once a
 * step over its prefill chunks, the fused RoPE on CUDA, the cache write, k's concatenation, the prior context
 * gathered from the cache and the two attention outputs merged, and where v is padded (set_mla_pad_v) the padding and
 * the output's slice. */
void strata_serve_cost_set_mla_prefill_v1(strata_serve_cost *c, bool on);
/* Whether that prefill pads v to q's width (its PV at nope + rope wide, the output's slice copied): on with
 * set_mla_absorb (0.7.3's MLA backend always pads), off where the release's backend runs FlashAttention 3 on Hopper
 * (serve_mla_prefill_v07.h strata_serve_mla_v07_pads_v); under V1's (set_mla_prefill_v1, off until this is set:
 * serve_mla_prefill_v1.h strata_serve_mla_v1_pads_v). Only under either; set it after them. */
void strata_serve_cost_set_mla_pad_v(strata_serve_cost *c, bool on);
/* The simulated collectives' times (serve_coll.h) to use, borrowed (it
 * outlives c), in place of the model's own: one object shared by the cost
 * models of one run (the peak's and the sustained clock's) simulates each
 * size once. tp 1: ignored. */
void strata_serve_cost_set_collectives(strata_serve_cost *c, strata_serve_coll *coll);
/* Simulates the step's collectives at one size (1 MiB), so that a model
 * on which strata's collective model cannot run them is refused before
 * the run (err names the hardware and the collective) rather than warned
 * about at its first step. */
bool strata_serve_cost_check_collectives(strata_serve_cost *c, GError **err);
/* One of the two TP all-reduces a layer runs in a step of `tokens` tokens
 * (in a CUDA graph): the engine's own kernel's time where it runs one,
 * else the simulated collective's; 0 at tp 1 or under attention DP. */
double strata_serve_cost_allreduce(const strata_serve_cost *c, uint64_t tokens);
/* The collectives that join a vocabulary split over the tp ranks (tp > 1,
 * no attention DP; serve_engine.h's rows say which an engine runs), each
 * step: gather_logits, an all-gather of the sampled rows' logits, each
 * rank's ceil(vocab / tp) columns in the activations' dtype (an LM head
 * with gather_output), simulated as the all-reduces are (serve_coll.h;
 * NCCL: TensorRT-LLM's allgather op calls ncclAllGather);
 * embed_allreduce, an all-reduce of the step's tokens x hidden embedding
 * rows (a vocabulary-parallel embedding, each rank's rows masked to its
 * own vocabulary), as the engine's all-reduce runs it, no norm fused.
 * Both off by default. */
/* to_root: gather_logits's logits go to rank 0 only, each other rank
 * sending its share point to point (torch.distributed.gather on NCCL,
 * vLLM v0's LogitsProcessor on GPUs), timed as the root's inbound link
 * carrying tp - 1 shares plus the route's latency, in place of the
 * all-gather. */
void strata_serve_cost_set_vocab_collectives(strata_serve_cost *c, bool gather_logits, bool to_root,
                                             bool embed_allreduce);
/* What a step of `tokens` tokens run outside a CUDA graph adds to its
 * time (strata_serve_cost_step's assume one): its 2 x layers TP
 * all-reduces as the implementation runs them eagerly less as in a graph
 * (vllm-custom's staging copies); 0 with NCCL or under attention DP. */
double strata_serve_cost_eager_extra(const strata_serve_cost *c, uint64_t tokens);
/* The same step with pad dummy decodes more (context 1, each sampling): a
 * CUDA graph's padding of a decode batch (serve.h's graph_sizes). */
double strata_serve_cost_step_padded(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n,
                                     uint32_t pad);
static inline double strata_serve_cost_step(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n)
{
    return strata_serve_cost_step_padded(c, chunks, n, 0);
}
/* Nominal work of some ops: flops and bytes as the kernel rows count them. */
typedef struct strata_serve_work {
    double flops, bytes;
} strata_serve_work;
/* One layer's attention in a step (its time), and the flops and bytes of
 * its ops: for MLA the prefill chunks' kv_b up-projections and the
 * decodes' W_UK and W_UV products with the attention itself. window > 0:
 * a sliding-window layer's (each query sees its `window` latest keys);
 * 0: a global layer's. */
double strata_serve_cost_attention(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n, uint64_t window,
                                   strata_serve_work *work);
/* A whole step (strata_serve_cost_step's time) and the nominal flops and
 * bytes of its distinct ops, each counted once: one layer's (the
 * projections and MLP on all the step's tokens packed as GEMM rows, the
 * norms and activations, each prefill chunk's attention, the decodes'
 * together) and the LM head's, on the rows that sample only (vLLM's
 * LogitsProcessor keeps the sampled rows). No collectives. */
double strata_serve_cost_step_work(strata_serve_cost *c, const strata_serve_chunk *chunks, uint32_t n,
                                   strata_serve_work *work);
/* One MoE layer's routed experts on `tokens` tokens (every rank's under
 * attention DP) on one rank: the fused MoE op as the engines run it, from
 * the routed rows to their combine, without the router GEMM, the shared
 * experts or collectives (what aiconfigurator's fused-MoE rows time); 0 for
 * a dense model. work, if not NULL, gets its ops' nominal flops and bytes. */
double strata_serve_cost_moe_experts(strata_serve_cost *c, uint64_t tokens, strata_serve_work *work);
/* Moving `blocks` blocks of block_bytes (per rank) over the host link: one
 * copy per block and per growing tensor (vLLM v0's swap_blocks). */
double strata_serve_cost_swap(const strata_serve_cost *c, uint64_t blocks, uint64_t block_bytes, uint32_t tensors);
/* The host link's bandwidth (bytes/s) and latency (s), for reports and tests. */
void strata_serve_cost_host_link(const strata_serve_cost *c, double *bandwidth, double *latency);

#endif
