/*
 * test_hardening_sixteenth.c: the sixteenth hardening pass (wave 36;
 * docs/reliability.md, "The sixteenth pass"), a row per case: each refused
 * row was a silent default at exit 0; the rows at 0 are what stays taken.
 *
 *  - what the pass found checking wave 34-35's keys and options (see the
 *    tests' comments); the known item (InfiniBand's framing keys beside a
 *    network protocol over EFA) is left: docs/reliability.md says why.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

/* A hardware file d.ini on configs/hw/BASE whose [hardware] group also sets the lines given (line 4 on), served a
 * 4-layer llama-2-7b (the options follow). */
#define TPU_HW(base, lines) "printf '[hardware]\\nbase = %s/" base "\\nname = d\\n" lines "' \"$H\" > d.ini; " \
                            "\"$S\" serve -q --hw d.ini --model llama-2-7b --set layers=4 --poisson n=2 "       \
                            "--json out.json "

/* Every engine row but none names GPU kernels (its CUDA or ROCm build's:
 * TensorRT-LLM's XQA, TurboMind's decode, vLLM's custom all-reduce, which
 * SGLang's rows take too, FlashInfer around attention), and each was
 * priced on a TPU at exit 0: the TPU files named no vendor, and only AMD's
 * was told apart (the fifteenth pass). Now xla's collectives (XLA's on a
 * TPU slice, coll_impl_xla.c) say google as RCCL says amd, a vendor at odds
 * with them is refused at its line, the TPU files of one chip say vendor
 * = google, and the rows are refused there (serve_args.c scheduler_of). */
STRATA_ROWS_TEST(gpu_engines_not_on_tpus,
    {TPU_HW("tpu-v5e.ini", "") "--engine trtllm", 2,
     "--engine trtllm: its kernels are a GPU's (xqa, of its CUDA or ROCm build), and this hardware is Google's TPU "
     "(vendor = google or collectives = xla): expected --engine none there, or a GPU's hardware"},
    {TPU_HW("tpu-v5e.ini", "") "--engine turbomind", 2, "--engine turbomind: its kernels are a GPU's (turbomind-v0.1"},
    {TPU_HW("tpu-v5e-16.ini", "") "--engine sglang-v0.5", 2,
     "--engine sglang-v0.5: its kernels are a GPU's (vllm-custom, of its CUDA or ROCm build)"},
    {TPU_HW("tpu-v5e-16.ini", "vendor = nvidia\\n"), 2,
     "(override d.ini:4): [hardware] vendor: expected google, as the collectives are xla's (XLA's collectives on a "
     "TPU slice, coll_impl_xla.c), got 'nvidia'"},
    /* no --engine is vLLM v1's row, with its GPU kernels (FlashAttention-3 prefill, ...): refused too */
    {TPU_HW("tpu-v5e.ini", ""), 2, "--engine not given (vLLM v1's row): its kernels are a GPU's ("},
    /* what stays taken: the none row on a TPU, a TPU slice that says google, a row on a GPU */
    {TPU_HW("tpu-v5e.ini", "") "--engine none", 0, NULL},
    {TPU_HW("tpu-v5e-16.ini", "vendor = google\\n") "--engine none", 0, NULL},
    {TPU_HW("h100.ini", "") "--engine sglang-v0.5", 0, NULL},
)

/* --attention-dp at tp 1 (the default): each rank runs its own requests'
 * attention with whole weights, and one rank's are whole already, so the
 * flag changed nothing but the report's label, exit 0 (the JSON of a
 * 4-layer Mixtral at tp 1 with and without it differed in "attention_dp"
 * alone). Refused (serve_args.c config_of). */
STRATA_ROWS_TEST(attention_dp_needs_ranks,
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --attention-dp", 2,
     "--attention-dp: expected --tp 2 or more (each of the TP ranks runs its own requests' attention), got tp 1, "
     "where it changes nothing"},
    {HR_SERVE("dgx-h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --attention-dp --tp 1", 2,
     "got tp 1"},
    /* what stays taken: two ranks or more */
    {HR_SERVE("dgx-h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --attention-dp --tp 2", 0, NULL},
)

/* A model file m.txt of a dense 2-layer model (lines 1-8) and the lines given (line 9 on), served. */
#define MODEL_WITH(lines) "printf 'name = x\\nlayers = 2\\nhidden = 256\\nheads = 4\\nkv_heads = 4\\nhead_dim = 64\\n" \
                          "intermediate = 512\\nvocab = 1000\\n" lines "' > m.txt; " HR_SERVE("h100.ini")           \
                          "--model-file m.txt --poisson n=2 --json out.json"

/* A model file's keys read only beside another: MLA's (qk_rope_head_dim,
 * q_lora_rank, qk_nope_head_dim, v_head_dim) beside kv_lora_rank, an
 * MoE's (moe_intermediate, shared_experts, dense_layers, moe_every)
 * beside experts, global_every beside sliding_window. Alone each changed
 * nothing at exit 0 (a dense 4-layer model's JSON with each was the same
 * as without it). Refused at the key's line (serve_model.c orphan_keys). */
STRATA_ROWS_TEST(model_keys_without_their_kind,
    {MODEL_WITH("v_head_dim = 128\\n"), 2,
     "m.txt:9: v_head_dim: expected kv_lora_rank > 0 beside it (it is read only with kv_lora_rank: an MLA model), "
     "got none"},
    {MODEL_WITH("qk_rope_head_dim = 64\\n"), 2, "m.txt:9: qk_rope_head_dim: expected kv_lora_rank > 0"},
    {MODEL_WITH("experts = 0\\nshared_experts = 1\\n"), 2,
     "m.txt:10: shared_experts: expected experts > 0 beside it (it is read only with experts: an MoE model), got 0"},
    {MODEL_WITH("moe_every = 2\\n"), 2, "m.txt:9: moe_every: expected experts > 0 beside it"},
    {MODEL_WITH("global_every = 2\\n"), 2,
     "m.txt:9: global_every: expected sliding_window > 0 beside it (it is read only with sliding_window: windowed "
     "attention), got none"},
    /* what stays taken: each beside its key */
    {MODEL_WITH("sliding_window = 128\\nglobal_every = 2\\n"), 0, NULL},
    {MODEL_WITH("experts = 4\\ntop_k = 2\\nshared_experts = 1\\nmoe_every = 2\\n"), 0, NULL},
    {MODEL_WITH("kv_lora_rank = 64\\nqk_rope_head_dim = 32\\nv_head_dim = 64\\n"), 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        gpu_engines_not_on_tpus,
        attention_dp_needs_ranks,
        model_keys_without_their_kind,
        NULL,
    };
    return strata_hardening_main("sixteenth", tests);
}
