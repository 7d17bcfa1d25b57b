/*
 * serve_moe_gate.h: the kernels an engine runs to pick an MoE layer's experts from the router's logits, where they are
 * more than the one fused top-k kernel every row is charged for (serve_cost.c route_and_quantize's routing pass).
 *
 * sglang-0.5 (SGLang 0.5.6, its PyPI wheel; issue 45, wave 43). A router with a score-correction bias (DeepSeek-V3's
 * noaux_tc, GLM-4.5/4.6, Kimi K2: the model's router_groups > 0, its n_group) goes through
 * python/sglang/srt/layers/moe/topk.py select_experts -> biased_grouped_topk_gpu (l. 793-877), which takes
 *   - sgl_kernel's moe_fused_gate, one kernel, where experts / n_group <= 32 and the experts are a power of two
 *     (l. 808-823: DeepSeek-V3's 256 / 8);
 *   - kimi_k2_moe_fused_gate, one kernel, at 384 experts in one group (l. 853-863);
 *   - else biased_grouped_topk_impl (l. 693-767), a function under @torch.compile(dynamic=True): GLM-4.6's 160
 *     experts. A softmax router (router_groups 0: Qwen3-MoE, Mixtral) runs fused_topk's topk_softmax, one kernel
 *     (l. 508-548), as does every row here.
 * biased_grouped_topk_impl under Inductor: torch.topk is a fallback Inductor does not lower (pytorch/pytorch
 * torch/_inductor/lowering.py, "Sorting / Sorting-like": make_fallback(aten.topk)), so the function runs as Triton
 * kernels between three ATen topk calls; ATen's CUDA topk (aten/src/ATen/native/cuda/TensorTopK.cu) runs its gather
 * kernel and, where sorted and k > 1, a sort of the k results (sortKeyValueInplace), one kernel each. The passes, t
 * tokens, E routed experts, G groups, k = top_k + the fused shared experts (glm4_moe.py
 * determine_num_fused_shared_experts: on CUDA from sm80 without EP, num_fused_shared_experts = n_shared_experts):
 *    1. sigmoid, + correction_bias (Triton): t x E bf16 logits read, scores and scores_for_choice written (fp32);
 *    2-3. topk(2) of each group (sorted): gather, sort;
 *    4. the two best summed per group (Triton);
 *    5. topk(topk_group) of the groups (sorted=False): gather;
 *    6-8. zeros_like, scatter_ of the chosen groups, masked_fill of the scores (Triton): a fill, the scatter, and the
 *         masked copy of t x E scores (ESTIMATE: Inductor's scatter is a kernel of its own after its buffer's fill);
 *    9-10. topk(k) of the masked scores, sorted when shared experts are fused (l. 737): gather, and the sort;
 *    11. with fused shared experts, the seeds of torch.randint (Inductor's random ops take a seeds kernel);
 *    12. gather of the weights, the shared expert's id and weight, the renormalization (Triton).
 * ESTIMATE: how Inductor partitions the Triton parts (one kernel a region between fallbacks, the scatter and seeds
 * apart) was not read from a generated graph; the ATen kernels are certain. Bytes: fp32 scores, fp32 values and
 * int64 indices out of ATen's topk. Every pass is launch-bound at these sizes.
 * CUDA only: on HIP both fused branches are off (_is_cuda, l. 808-813, 853-863) and SGLANG_USE_AITER runs aiter's
 * one-kernel biased_grouped_topk for every shape (l. 838-851), else biased_grouped_topk_impl for every shape; the
 * engine rows apply this table on CUDA hardware only (serve_engine_apply.c), so ROCm keeps the one routing pass.
 * Known inconsistency: the passes count the fused shared expert (k = top_k + 1, sorted, seeds) while serve_cost.c
 * still prices GLM-4.6's shared expert as its own MLP (wave 43 review; the fusion of the shared expert not built).
 *
 * Invariants: rows end with a NULL name; a time is >= 0 and 0 where the row runs one fused kernel (NULL row, no
 * router bias, a fused gate applies, no tokens).
 */
#ifndef STRATA_SERVE_MOE_GATE_H
#define STRATA_SERVE_MOE_GATE_H

#include <glib.h>
#include <stdint.h>
#include "serve/serve_model.h"
#include "serve/serve_pass.h"

typedef struct strata_serve_moe_gate strata_serve_moe_gate;

/* The row called name ("sglang-0.5"); NULL name: NULL (the one fused kernel); unknown: NULL with an error listing
 * the known ones. */
const strata_serve_moe_gate *strata_serve_moe_gate_find(const char *name, GError **err);

/* The time of the routing kernels of one MoE layer on t tokens beyond the one routing pass the caller charges, each
 * pass priced by `pass` (serve_pass.h). */
double strata_serve_moe_gate_extra_s(const strata_serve_moe_gate *g, const strata_serve_model *m, uint64_t t,
                                     strata_serve_pass_fn pass, const void *ctx);

#endif
