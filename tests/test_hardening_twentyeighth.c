/*
 * test_hardening_twentyeighth.c: the twenty-eighth hardening pass (wave 48;
 * docs/reliability.md, "The twenty-eighth pass"), a hostile but honest
 * user's hunt over wave 47's options first (--serial-api-server,
 * --engine-release, [network] payload_bandwidth, the V0 MLA prefill rows),
 * then every subcommand's options at their edges. Each refused row was
 * taken on the base (main at the wave's start, b371b4e2) at exit 0; the rows
 * at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* serve of two requests of 64 + 4 tokens on llama-2-7b (h100.ini), results in out.json (the options follow).
 * llama-2-7b's preset gives max_model_len 4096 (serve_model.c). */
#define TWO HR_SERVE("h100.ini") "--model llama-2-7b --poisson n=2,prompt=64,output=4 --json out.json "
/* vLLM's rule, as the refusals quote it (serve_engine_apply.c strata_serve_engine_length_rule) */
#define VLLM_RULE "(vLLM's OpenAI server refuses prompt + output > max_model_len; llama-2-7b's max_model_len is 4096)"

/* --warm-prefix N is request i's first N tokens that an earlier run on the
 * same server sent (serve_stream.h): a prompt of N tokens or more with an
 * output of at least 1. --prior-run n=,prompt=,output= is that run itself
 * (serve_prior.h). Neither was held to the engine's length rule
 * (serve_engine.h): vLLM's OpenAI server refuses prompt + output >
 * max_model_len, so such a run left no blocks, yet each was replayed whole
 * at exit 0. --warm-prefix 2147483647 (taken up to 2^31 - 1) hashed
 * min(2^31 / 16, the pool's blocks) blocks a request: each request's evicted
 * the one before (prefix hits 48 tokens, one request's 3 blocks, against
 * 96 at --warm-prefix 64). Now refused naming the rule and the model's
 * max_model_len; at the bound itself taken: 4095 + 1 = 4096 <= 4096, and a
 * prior run of 4000 + 96 = 4096; 4000 + 97 = 4097 is refused. */
STRATA_ROWS_TEST(earlier_run_past_max_model_len,
    {TWO "--warm-prefix 2147483647", 2, "--warm-prefix 2147483647: expected an earlier run the server ran as sent "
     VLLM_RULE ", got a prompt of 2147483647 or more and an output of at least 1 tokens: it left no blocks in the "
     "cache"},
    {TWO "--warm-prefix 4096", 2, "--warm-prefix 4096: expected an earlier run the server ran as sent " VLLM_RULE
     ", got a prompt of 4096 or more"},
    /* 4095 taken: each 64-token prompt finds 3 of its 4 blocks (vLLM's lookup stops at its 63rd token), 48 x 2 */
    {TWO "--warm-prefix 4095 && grep -q '\"prefix_hit_tokens\" : 96' out.json", 0, NULL},
    {TWO "--prior-run n=2,prompt=4000,output=97", 2, "--prior-run n=2,prompt=4000,output=97: expected an earlier "
     "run the server ran as sent " VLLM_RULE ", got a prompt of 4000 and an output of 97 tokens: it left no blocks in "
     "the cache"},
    {TWO "--prior-run n=2,prompt=4000,output=96 && test -s out.json", 0, NULL},
    /* the second of two runs is the one named */
    {TWO "--prior-run n=2,prompt=64,output=4 --prior-run n=3,prompt=100000,output=4", 2, "--prior-run "
     "n=3,prompt=100000,output=4: expected an earlier run the server ran as sent"},
    /* TensorRT-LLM cuts an output past max_model_len (LlmRequest::validate: 4000 + 200 > 4096, output cut to 96):
     * that run left blocks, but other ones than its output= says; a prompt of 4096 it takes (prompt > L refused) */
    {TWO "--engine trtllm --prior-run n=2,prompt=4000,output=200", 2, "--prior-run n=2,prompt=4000,output=200: "
     "expected an earlier run the server ran as sent (TensorRT-LLM refuses a prompt longer than max_model_len; "
     "llama-2-7b's max_model_len is 4096), got a prompt of 4000 and an output of 200 tokens: it left other blocks in "
     "the cache"},
    {TWO "--engine trtllm --warm-prefix 4096 && test -s out.json", 0, NULL},
    /* a serving case of validate --published runs the same check, at its serve= line */
    {"printf '[case c ttft-mean]\\nsource = x\\nsetup = y\\nmeasured = 5ms\\nmetric = ttft-mean\\nhw = %s/h100.ini\\n"
     "serve = -m llama-2-7b --set layers=2 --poisson n=4,prompt=64,output=8 --warm-prefix 4096\\n' \"$H\" > c.ini; "
     "\"$S\" validate --published c.ini", 2, "c.ini:7: serve: --warm-prefix 4096: expected an earlier run the "
     "server ran as sent"},
)

/* A key read only beside another (serve_model.c orphan_needs: MLA's beside kv_lora_rank, an MoE's beside
 * experts, global_every beside sliding_window) was refused in a model file (the sixteenth pass) but taken from
 * --set on a preset that leaves its parent 0: llama-2-7b with --set qk_rope_head_dim=64, global_every=2,
 * router_groups=1, moe_intermediate=128 each wrote the JSON of the run without it (but for the echo), exit 0.
 * Refused naming the word; the parent set beside it stays taken (in either order), and a key whose parent
 * another --set turns off is refused too (deepseek-v3 with kv_lora_rank=0: its v_head_dim read nowhere). */
STRATA_ROWS_TEST(set_key_its_parent_leaves_unread,
    {TWO "--set qk_rope_head_dim=64", 2, "--set qk_rope_head_dim=64: expected kv_lora_rank > 0 in the model beside "
     "it (it is read only with kv_lora_rank: an MLA model), got llama-2-7b with kv_lora_rank 0: it changes nothing"},
    {TWO "--set global_every=2", 2, "--set global_every=2: expected sliding_window > 0 in the model beside it (it is "
     "read only with sliding_window: windowed attention), got llama-2-7b with sliding_window 0"},
    {TWO "--set router_groups=1", 2, "--set router_groups=1: expected experts > 0 in the model beside it"},
    {TWO "--set moe_intermediate=128", 2, "--set moe_intermediate=128: expected experts > 0"},
    {TWO "--set layers=2 --set sliding_window=32 --set global_every=2 && test -s out.json", 0, NULL},
    {TWO "--set layers=2 --set global_every=2 --set sliding_window=32 && test -s out.json", 0, NULL},
    {HR_SERVE("h100.ini") "--model deepseek-v3 --set layers=2 --set kv_lora_rank=0 --set v_head_dim=64 "
     "--poisson n=2,prompt=64,output=4 --json out.json", 2, "--set v_head_dim=64: expected kv_lora_rank > 0 in the "
     "model beside it (it is read only with kv_lora_rank: an MLA model), got deepseek-v3 with kv_lora_rank 0"},
    /* qk_norm_tp (the norms over the whole q and k, serve_qk_norm.h) is read only where qk_norm is true
     * (serve_cost.c qk_norm_pass): the table's fourth parent, from the merge with sglrocm. No preset has q and k
     * norms, so on llama-2-7b it is refused; with qk_norm set beside it (either order) taken. */
    {TWO "--set qk_norm_tp=1", 2, "--set qk_norm_tp=1: expected qk_norm > 0 in the model beside it (it is read only "
     "with qk_norm: q and k norms), got llama-2-7b with qk_norm 0: it changes nothing"},
    {TWO "--set layers=2 --set qk_norm=1 --set qk_norm_tp=1 && test -s out.json", 0, NULL},
    {TWO "--set layers=2 --set qk_norm_tp=1 --set qk_norm=1 && test -s out.json", 0, NULL},
)

/* router_groups is a grouped router's n_group, its scores viewed as [tokens, n_group, experts / n_group]
 * (SGLang's grouped_topk_gpu and biased_grouped_topk_impl): 3 and 9 groups of mixtral-8x7b's 8 experts were
 * taken at exit 0 (9: experts / n_group = 0 experts a group, read by serve_moe_gate.c as a fused gate). Refused
 * from --set and at a model file's line; 4 and 8 divide 8 and are taken (the model then fails for its memory on
 * one H100, as without router_groups: 93.4 GB of weights). */
STRATA_ROWS_TEST(router_groups_not_dividing_experts,
    {HR_SERVE("h100.ini") "--model mixtral-8x7b --set router_groups=3 --poisson n=2,prompt=64,output=4", 2,
     "mixtral-8x7b: expected router_groups (the router's n_group) to divide experts (8): the scores are grouped as "
     "experts / n_group a group, got 3"},
    {HR_SERVE("h100.ini") "--model mixtral-8x7b --set router_groups=9 --poisson n=2,prompt=64,output=4", 2,
     "to divide experts (8): the scores are grouped as experts / n_group a group, got 9"},
    {HR_SERVE("h100.ini") "--model mixtral-8x7b --set router_groups=4 --poisson n=2,prompt=64,output=4", 2,
     "mixtral-8x7b on h100-sxm5 with tp 1: no memory left for the KV cache"},
    /* a model file: at the key's line (11); 0 (no grouped router) taken, no division by it */
    {"printf 'name = m\\nlayers = 2\\nhidden = 512\\nheads = 8\\nkv_heads = 8\\nhead_dim = 64\\n"
     "intermediate = 1024\\nvocab = 1000\\nexperts = 8\\ntop_k = 2\\nrouter_groups = 3\\n' > m.model; "
     HR_SERVE("h100.ini") "--model-file m.model --poisson n=2,prompt=64,output=4", 2, "m.model:11: router_groups: "
     "expected a divisor of experts (8): the router's scores are grouped as experts / n_group a group, got 3"},
    {"printf 'name = m\\nlayers = 2\\nhidden = 512\\nheads = 8\\nkv_heads = 8\\nhead_dim = 64\\n"
     "intermediate = 1024\\nvocab = 1000\\nexperts = 8\\ntop_k = 2\\nrouter_groups = 0\\n' > m.model; "
     HR_SERVE("h100.ini") "--model-file m.model --poisson n=2,prompt=64,output=4 --json out.json", 0, NULL},
)

/* --engine-release took a release whose suffix ended in its separator: 0.7.3-, 0.7.3. and 0.7.3+ ran as 0.7.3 at
 * exit 0, though no PEP 440 version (nor vLLM's setuptools-scm ones: 0.6.4.dev22+g5b8a1fde) ends in '.', '+' or
 * '-' (a segment or local label is never empty). Refused naming the option and the rule; a suffix whose separators
 * each come before a letter or digit stays taken (0.7.3+rocm, the ROCm fork's image tag). */
#define RELEASE(r) TWO "--engine-release " r
#define SUFFIX_RULE                                                                                                    \
    "(after PATCH: letters, digits and '.', '+', '-' or '_', each of those followed by a letter or digit)"
STRATA_ROWS_TEST(release_suffix_ending_in_separator,
    {RELEASE("0.7.3-"), 2, "--engine-release: expected a vLLM release MAJOR.MINOR.PATCH (such as 0.6.6, v0.7.3, "
     "0.6.4.dev22+g5b8a1fde) the table knows, vLLM 0.4.0 to 0.19.x, got '0.7.3-' " SUFFIX_RULE},
    {RELEASE("0.7.3."), 2, "got '0.7.3.' " SUFFIX_RULE},
    {RELEASE("0.7.3+"), 2, "got '0.7.3+' " SUFFIX_RULE},
    {RELEASE("0.7.3+rocm."), 2, "got '0.7.3+rocm.' " SUFFIX_RULE},
    {RELEASE("0.7.3+.rocm"), 2, "got '0.7.3+.rocm' " SUFFIX_RULE},
    {RELEASE("0.7.3+rocm && test -s out.json"), 0, NULL},
    {RELEASE("0.6.4.dev22+g5b8a1fde && test -s out.json"), 0, NULL},
)

/* payload_bandwidth a hair above bandwidth was refused as "expected at most bandwidth (25.00 GB/s, ...), got
 * 25.00 GB/s": both printed to 2 decimals. Now the two print with decimals enough to differ
 * (strata_format_bandwidth_pair): 25.0000001 GB/s = 25,000,000,100 B/s against a3-high-4x8's 25 GB/s reads alike
 * to 6 decimals and differs at the 7th (25.0000000 against 25.0000001); 26 GB/s keeps the 2 decimals. */
#define A3_PAYLOAD(v) HR_TRACE "\"$S\" run -q --trace t.trace --json out.json --hw \"$H/a3-high-4x8.ini\" " \
    "--set network.gpunic.payload_bandwidth=" v
STRATA_ROWS_TEST(payload_a_hair_above_bandwidth_reads_apart,
    {A3_PAYLOAD("25.0000001GB/s"), 2, "[network gpunic] payload_bandwidth: expected at most bandwidth (25.0000000 "
     "GB/s, "},
    {A3_PAYLOAD("25.0000001GB/s"), 2, "the payload a NIC delivers cannot exceed its line rate), got 25.0000001 GB/s"},
    {A3_PAYLOAD("25.001GB/s"), 2, "(25.000 GB/s, "},
    {A3_PAYLOAD("26GB/s"), 2, "cannot exceed its line rate), got 26.00 GB/s"},
    {A3_PAYLOAD("25GB/s && test -s out.json"), 0, NULL},
)

/* A sweep's integer knobs (max_num_seqs, max_num_batched_tokens, block_size, tp, concurrency,
 * num_scheduler_steps) took up to 2^32 - 1, their options (G_OPTION_ARG_INT) up to 2^31 - 1:
 * --sweep concurrency=4294967295 ran a closed loop of 4294967295 clients where --concurrency 4294967295 is
 * refused by GLib. The knobs now share the options' range; 2^31 - 1 itself stays taken, as --concurrency's. */
STRATA_ROWS_TEST(sweep_knob_bound_is_the_option_s,
    {TWO "--sweep concurrency=4294967295", 2, "--sweep: concurrency: expected a whole number below 2^31 (the "
     "option's range), got '4294967295'"},
    {TWO "--sweep concurrency=4,2147483648", 2, "--sweep: concurrency: expected a whole number below 2^31 (the "
     "option's range), got '2147483648'"},
    {TWO "--sweep max_num_seqs=2147483648", 2, "--sweep: max_num_seqs: expected a whole number from 1 to 2^31 - 1 "
     "(the option's range), got '2147483648'"},
    {TWO "--concurrency 4294967295", 2, "--concurrency out of range"},
    {TWO "--sweep concurrency=2147483647 && test -s out.json", 0, NULL},
)

/* docs/hardware.md gives `^NVLS` as an nccl_algo value, as NCCL_ALGO takes it, but the list reader refused it
 * ("expected a list of Tree, Ring, NVLS, NVLS_TREE, PAT, got '^NVLS'"). NCCL's parseList (NVIDIA/nccl v2.27.7-1
 * src/graph/tuning.cc:79-98) reads a leading ^ as "all but these": now so here (coll_impl.c hw_coll_impl_list).
 * A list that leaves out every one would read as 0, "all": refused. A ^ further on is a name: refused. */
#define DGX_LIST(key, v) HR_TRACE "\"$S\" run -q --trace t.trace --json out.json --hw \"$H/dgx-h100.ini\" " \
    "--set 'interconnect.nvlink." key "=" v "'"
#define AR8 "\"$S\" gen -o c.trace collective op=all-reduce bytes=64MiB devices=8 >/dev/null && "
#define AR8_RUN(json, v) "\"$S\" run -q --trace c.trace --json " json " --hw \"$H/dgx-h100.ini\" " \
    "--set 'interconnect.nvlink.nccl_algo=" v "' && grep makespan_s " json " > " json ".m && "
STRATA_ROWS_TEST(nccl_list_caret_excludes,
    /* ^NVLS is the list of the other four: the same choice, to the digit; NCCL's default (all, NVLS chosen for
     * 64 MiB over one DGX H100's 8 GPUs) differs, so the row fails if ^ were read as "only" or ignored */
    {AR8 AR8_RUN("a.json", "^NVLS") AR8_RUN("b.json", "Tree,Ring,NVLS_TREE,PAT") AR8_RUN("c.json", "^PAT")
     "cmp a.json.m b.json.m && ! cmp -s a.json.m c.json.m", 0, NULL},
    {DGX_LIST("nccl_algo", "^NVLS") " && test -s out.json", 0, NULL},
    {DGX_LIST("nccl_proto", "^LL128") " && test -s out.json", 0, NULL},
    {DGX_LIST("nccl_proto", "^LL,LL128,Simple"), 2, "[interconnect nvlink] nccl_proto: expected at least one protocol "
     "left, got '^LL,LL128,Simple', which leaves out every one"},
    {DGX_LIST("nccl_algo", "^Tree,Ring,NVLS,NVLS_TREE,PAT"), 2, "nccl_algo: expected at least one algorithm left"},
    {DGX_LIST("nccl_algo", "^"), 2, "nccl_algo: expected a list of Tree, Ring, NVLS, NVLS_TREE, PAT, or ^ then those "
     "it leaves out, got '^'"},
    {DGX_LIST("nccl_algo", "Ring,^Tree"), 2, "got 'Ring,^Tree'"},
    {DGX_LIST("nccl_algo", "allreduce:Ring"), 2, "got 'allreduce:Ring'"},
)

int main(void)
{
    const TTest *const tests[] = {
        earlier_run_past_max_model_len,
        set_key_its_parent_leaves_unread,
        router_groups_not_dividing_experts,
        release_suffix_ending_in_separator,
        payload_a_hair_above_bandwidth_reads_apart,
        sweep_knob_bound_is_the_option_s,
        nccl_list_caret_excludes,
        NULL,
    };
    return strata_hardening_main("twentyeighth", tests);
}
