/*
 * test_hardening_twentyninth.c: the twenty-ninth hardening pass (wave 49;
 * docs/reliability.md, "The twenty-ninth pass"), a hostile but honest
 * user's hunt over wave 48's keys first (nccl_net_path, the ^ lists of
 * nccl_algo / nccl_proto, --chat-endpoint, qk_norm_tp), then the
 * generator's model keys and the collectives around them. Each refused
 * row was taken on the base (main at the wave's start, 51c5e1f2) at exit 0,
 * or named another file than the one given; the rows at 0 pin what stays
 * taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* strata gen of a one-layer transformer 64 wide (4 heads, 16 tokens, a vocabulary of 100) into out.trace, the keys
 * given after it. */
#define GEN(kv) "\"$S\" gen -o out.trace transformer layers=1 d_model=64 heads=4 seq=16 batch=1 vocab=100 " kv
/* the refusal's words for a key and its parent */
#define ORPHAN(key, parent, what) "transformer: " key ": expected " parent " > 0 beside it (it is read only with " \
    parent ": " what "), got " parent " 0: it changes nothing"

/* gen transformer resolved the MLA widths (q_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim), the MoE
 * keys (shared_experts, moe_ffn, dense_layers, moe_every) and global_every wherever given, but read them only
 * beside kv_lora_rank, experts and sliding_window (model_shape.c mla_params, strata_model_layer_is_moe,
 * strata_model_layer_window): alone each was taken at exit 0 with the trace the same as without it but for its
 * header (top_k alone was refused; serve refuses the same keys, serve_model.c orphan_needs). Now refused naming
 * the key and its parent (workload.c given_keys_read). Only keys given are checked: a config.json's parent counts
 * (mixtral's experts beside a given shared_experts), and a config's own keys are not the user's. */
STRATA_ROWS_TEST(gen_model_key_without_its_parent,
    {GEN("shared_experts=5"), 2, ORPHAN("shared_experts", "experts", "an MoE model")},
    {GEN("moe_ffn=128"), 2, ORPHAN("moe_ffn", "experts", "an MoE model")},
    {GEN("dense_layers=3"), 2, ORPHAN("dense_layers", "experts", "an MoE model")},
    {GEN("moe_every=2"), 2, ORPHAN("moe_every", "experts", "an MoE model")},
    {GEN("experts=0 moe_every=2"), 2, ORPHAN("moe_every", "experts", "an MoE model")},
    {GEN("q_lora_rank=16"), 2, ORPHAN("q_lora_rank", "kv_lora_rank", "an MLA model")},
    {GEN("qk_nope_head_dim=8"), 2, ORPHAN("qk_nope_head_dim", "kv_lora_rank", "an MLA model")},
    {GEN("qk_rope_head_dim=8"), 2, ORPHAN("qk_rope_head_dim", "kv_lora_rank", "an MLA model")},
    {GEN("v_head_dim=8"), 2, ORPHAN("v_head_dim", "kv_lora_rank", "an MLA model")},
    {GEN("global_every=2"), 2, ORPHAN("global_every", "sliding_window", "windowed attention")},
    /* beside their parents, taken */
    {GEN("experts=4 top_k=2 shared_experts=1 moe_ffn=32 moe_every=1 && test -s out.trace"), 0, NULL},
    {GEN("kv_lora_rank=16 q_lora_rank=8 qk_rope_head_dim=8 v_head_dim=16 && test -s out.trace"), 0, NULL},
    {GEN("sliding_window=4 global_every=2 && test -s out.trace"), 0, NULL},
    /* the parent from a config.json (Mixtral's 8 experts) */
    {"\"$S\" gen -o out.trace transformer config=\"$H/../models/mixtral-8x7b-v0.1.json\" layers=1 seq=16 batch=1 "
     "shared_experts=1 && test -s out.trace", 0, NULL},
)

/* dense_layers and moe_every place the MoE layers (layer l >= dense_layers is one where moe_every divides l,
 * strata_model_layer_is_moe); given so that none of the layers is one, the experts were read nowhere at exit 0
 * (left by the sixth pass "because a config.json family's defaults set them so": only the keys given are checked
 * now, as serve's model files are, serve_model.c placed_keys). 1 layer, dense_layers 1: none; 3 layers from 1,
 * moe_every 4: the multiples of 4 below 3 are 0 only, under 1: none; moe_every 2 on 1 layer: layer 0 (0 = 0 x 2). */
#define GEN3(kv) "\"$S\" gen -o out.trace transformer layers=3 d_model=64 heads=4 seq=16 batch=1 vocab=100 " kv
STRATA_ROWS_TEST(gen_moe_layers_placed_nowhere,
    {GEN("experts=4 top_k=2 dense_layers=1"), 2, "transformer: dense_layers: expected an MoE layer among the 1 "
     "(those from dense_layers 1 that moe_every 1 divides), got none: the 4 experts would be read nowhere"},
    {GEN3("experts=4 top_k=2 moe_every=4 dense_layers=1"), 2, "transformer: dense_layers: expected an MoE layer "
     "among the 3 (those from dense_layers 1 that moe_every 4 divides), got none"},
    {GEN("experts=4 top_k=2 moe_every=2 && test -s out.trace"), 0, NULL},
    {GEN3("experts=4 top_k=2 moe_every=4 dense_layers=0 && test -s out.trace"), 0, NULL},
    {GEN3("experts=4 top_k=2 moe_every=2 dense_layers=1 && test -s out.trace"), 0, NULL},
)

/* fp8 (Transformer Engine's scaling recipe) and dist_opt (Megatron's distributed optimizer) are read by the
 * pipeline's step only (transformer.c transformer_pipeline), fp8 only at dtype=f8: without a pipe axis, or fp8
 * beside bf16, each was taken at exit 0, the trace unchanged. Refused as schedule and microbatches are. */
#define PIPE(kv) "\"$S\" gen -o out.trace transformer layers=2 d_model=64 heads=4 seq=16 batch=2 vocab=100 " \
    "mesh=pipe:2 " kv
STRATA_ROWS_TEST(gen_pipeline_keys_without_a_pipe,
    {GEN("fp8=current"), 2, "transformer: fp8 and dist_opt are the pipeline step's (Megatron's): expected a pipe "
     "axis in the mesh (e.g. mesh=pipe:4,data:2) beside them, got none: they change nothing"},
    {GEN("dist_opt=on"), 2, "transformer: fp8 and dist_opt are the pipeline step's (Megatron's)"},
    {PIPE("fp8=current"), 2, "transformer: fp8 is the scaling recipe of FP8 casts: expected dtype=f8 beside it, got "
     "dtype=bf16: it changes nothing"},
    {PIPE("dtype=f8 fp8=current && test -s out.trace"), 0, NULL},
    {PIPE("dist_opt=off && test -s out.trace"), 0, NULL},
)

/* A file with base = was loaded as its base's keyfile, and the model took the base's name as its origin: check
 * --hw h100-2x8-ib.ini printed "hardware .../dgx-h100.ini (h100-2x8-ib): ok", and each message quoting the
 * hardware file (run's unknown compute unit or memory, serve's --tp refusal) named dgx-h100.ini, a file the user
 * did not give. Now the file given (hw.c hw_from_keyfile). */
STRATA_ROWS_TEST(derived_file_named_as_given,
    {HR_TRACE "\"$S\" check --hw \"$H/h100-2x8-ib.ini\" --trace t.trace | grep -q '/h100-2x8-ib.ini (h100-2x8-ib): "
     "ok'", 0, NULL},
    {HR_TRACE_OF("compute k time=1us unit=nosuch in=a out=a") "\"$S\" run -q --trace t.trace --json out.json --hw "
     "\"$H/h100-2x8-ib.ini\"", 2, "t.trace:3: expected a compute unit of "},
    {HR_TRACE_OF("compute k time=1us unit=nosuch in=a out=a") "\"$S\" run -q --trace t.trace --json out.json --hw "
     "\"$H/h100-2x8-ib.ini\"", 2, "/h100-2x8-ib.ini (one of sm@0, sm@1, "},
)

/* serve at --tp 16 on two nodes of 8 H100 all-gathers the sampled rows' logits each step (serve_cost.c
 * vocab_collectives). With nccl_algo = ^Ring NCCL has no all-gather across nodes (Ring is its only one there:
 * NVLS needs one node, PAT one GPU a node, Tree and NVLS_TREE all-reduce only; nccl_tuning.c enabled): the check
 * before the run tried the step's all-reduce only, and read the 16 ranks as one node besides, so each step's
 * all-gather was charged a closed form at exit 0 after one warning. Now refused before the run; on one node
 * (--tp 8, NVLS) and with NCCL's default list taken. */
#define TP16(more) HR_SERVE("h100-2x8-ib.ini") "--model llama-2-7b --set layers=2 --poisson n=4,prompt=64,output=4 " \
    "--json out.json " more
STRATA_ROWS_TEST(serve_logits_gather_no_algorithm,
    {TP16("--tp 16 --hw-set 'interconnect.nvlink.nccl_algo=^Ring'"), 2, "--tp 16 on "},
    {TP16("--tp 16 --hw-set 'interconnect.nvlink.nccl_algo=^Ring'"), 2, "/h100-2x8-ib.ini: algo=nccl: expected "
     "all-reduce, all-gather or reduce-scatter over 2 ranks or more that NCCL runs (nccl_algo, nccl_proto), got "
     "all-gather over 16"},
    {TP16("--tp 16 && test -s out.json"), 0, NULL},
    {TP16("--tp 8 --hw-set 'interconnect.nvlink.nccl_algo=^Ring' && test -s out.json"), 0, NULL},
)

/* nccl_nvlstree_max_chunksize sizes NVLS_TREE's chunk (nccl_tuning.c), an algorithm NCCL runs only across nodes:
 * in a file with no [network] it was read nowhere at exit 0. Refused as nccl_net_path and the other keys of
 * transfers across nodes are (hw_network_keys_unset); on two nodes taken. */
#define NVLSTREE(hw) HR_TRACE "\"$S\" run -q --trace t.trace --json out.json --hw \"$H/" hw "\" " \
    "--set interconnect.nvlink.nccl_nvlstree_max_chunksize=64KiB"
STRATA_ROWS_TEST(nvlstree_chunk_on_one_node,
    {NVLSTREE("dgx-h100.ini"), 2, "[interconnect nvlink] nccl_nvlstree_max_chunksize: expected no such key in a file "
     "with no [network NAME]: it is of transfers across nodes"},
    {NVLSTREE("h100-2x8-ib.ini") " && test -s out.json", 0, NULL},
)

/* rccl_algo read NCCL's names (hw_coll_impl_list) but the RCCL row runs Ring and Tree only (rccl_tuning.c
 * strata_rccl_model): rccl_algo = NVLS (or PAT, NVLS_TREE, ^Ring,Tree) loaded, every collective then refused at
 * the trace's line naming no key, and a trace with none ran at exit 0. Refused at the key; a ^ list keeps the one
 * of Ring and Tree it leaves (^Ring: Tree; ^NVLS: both). */
#define MI300_ALGO(v) HR_TRACE "\"$S\" run -q --trace t.trace --json out.json --hw \"$H/mi300x-8.ini\" " \
    "--set 'interconnect.xgmi.rccl_algo=" v "'"
#define RCCL_ALGO_RULE "[interconnect xgmi] rccl_algo: expected a list of Ring, Tree (the algorithms RCCL runs " \
    "here), or ^ then those it leaves out, leaving one, got "
STRATA_ROWS_TEST(rccl_algo_names_rccl_runs,
    {MI300_ALGO("NVLS"), 2, RCCL_ALGO_RULE "'NVLS'"},
    {MI300_ALGO("Ring,PAT"), 2, RCCL_ALGO_RULE "'Ring,PAT'"},
    {MI300_ALGO("^Ring,Tree"), 2, RCCL_ALGO_RULE "'^Ring,Tree'"},
    {MI300_ALGO("^Ring") " && test -s out.json", 0, NULL},
    {MI300_ALGO("^NVLS") " && test -s out.json", 0, NULL},
    {MI300_ALGO("Tree,Ring") " && test -s out.json", 0, NULL},
)

/* algo=nccl and algo=rccl pin a library's own choice, but the rows tuned by whichever library the hardware declares
 * (coll_kit.c coll_library_tune): algo=rccl on dgx-h100 ran RCCL's schedule (MSCCL's, its rings) over NCCL's
 * tuning, algo=nccl on mi300x-8 NCCL's schedule over RCCL's, each at exit 0. Refused naming both
 * (coll_library_is); each on its own library's hardware taken. The nccl-* pins (nccl-tree, nccl-nvls-tree) stay
 * the algorithm of either library, as the seventeenth pass names them. */
#define PIN(algo, hw) "\"$S\" gen -o c.trace collective op=all-reduce bytes=1MiB devices=8 algo=" algo \
    " >/dev/null && \"$S\" run -q --trace c.trace --json out.json --hw \"$H/" hw "\""
STRATA_ROWS_TEST(library_pin_on_the_other_library,
    {PIN("rccl", "dgx-h100.ini"), 2, "c.trace:6: algo=rccl: expected a hardware model whose [interconnect] declares "
     "collectives = rccl (the op pins that library's choice), got collectives = nccl on dgx-h100; give no algo= "
     "for the hardware's own library"},
    {PIN("nccl", "mi300x-8.ini"), 2, "c.trace:6: algo=nccl: expected a hardware model whose [interconnect] declares "
     "collectives = nccl (the op pins that library's choice), got collectives = rccl on mi300x-8"},
    {PIN("rccl", "mi300x-8.ini") " && test -s out.json", 0, NULL},
    {PIN("nccl", "dgx-h100.ini") " && test -s out.json", 0, NULL},
    {PIN("nccl-tree", "mi300x-8.ini") " && test -s out.json", 0, NULL},
)

/* nccl_net_path = c2c is a GPU joined to a Grace CPU by NVLink-C2C (nccl_tuning.h strata_nccl_net_path), whose
 * NCCL reads its host as ARM; beside nccl_cpu's default intel (or amd) it ran at exit 0 with an x86 host's LL cap
 * and network post overhead. Refused naming both; beside nccl_cpu = arm (as the GH200 file gives) taken. */
#define IB2X8(sets) HR_TRACE "\"$S\" run -q --trace t.trace --json out.json --hw \"$H/h100-2x8-ib.ini\" " sets
STRATA_ROWS_TEST(c2c_path_beside_an_x86_host,
    {IB2X8("--set interconnect.nvlink.nccl_net_path=c2c"), 2, "[interconnect nvlink] nccl_net_path: expected "
     "nccl_cpu = arm beside c2c (NVLink-C2C joins the GPUs to Grace CPUs), got nccl_cpu = intel"},
    {IB2X8("--set interconnect.nvlink.nccl_net_path=c2c --set interconnect.nvlink.nccl_cpu=amd"), 2,
     "got nccl_cpu = amd"},
    {IB2X8("--set interconnect.nvlink.nccl_net_path=c2c --set interconnect.nvlink.nccl_cpu=arm && test -s out.json"),
     0, NULL},
    {IB2X8("--set interconnect.nvlink.nccl_net_path=phb && test -s out.json"), 0, NULL},
)

/* export chakra writes PREFIX.0.et to PREFIX.{N-1}.et for a mesh of N devices; an 8-device export over the files
 * of a 16-device one left et.8.et to et.15.et, and `import chakra et` then read the 16 files as one program's ranks
 * at exit 0 ("16 rank files ... mesh rank:16"). Refused before any file is written (chakra_export.c no_file_past),
 * the earlier files kept; with them removed taken. */
#define EXPORTS "\"$S\" gen -o c16.trace collective op=all-reduce bytes=1MiB devices=16 >/dev/null && " \
    "\"$S\" gen -o c8.trace collective op=all-reduce bytes=1MiB devices=8 >/dev/null && " \
    "\"$S\" export chakra -t c16.trace -o et 2>/dev/null && "
STRATA_ROWS_TEST(chakra_export_over_a_larger_one,
    {EXPORTS "\"$S\" export chakra -t c8.trace -o et", 2, "strata export chakra: -o 'et': expected no et.8.et beside "
     "the 8 files this export writes (et.0.et to et.7.et): another export's, which 'strata import chakra et' would "
     "read as one more rank of this one; remove it and those above it, or choose another prefix"},
    {EXPORTS "! \"$S\" export chakra -t c8.trace -o et 2>/dev/null; test -s et.15.et", 0, NULL},
    {EXPORTS "rm et.8.et et.9.et et.1[0-5].et && \"$S\" export chakra -t c8.trace -o et 2>/dev/null && "
     "\"$S\" import chakra et -o out.trace 2>/dev/null && grep -q 'mesh=data:8' out.trace", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        gen_model_key_without_its_parent,
        gen_moe_layers_placed_nowhere,
        gen_pipeline_keys_without_a_pipe,
        derived_file_named_as_given,
        serve_logits_gather_no_algorithm,
        nvlstree_chunk_on_one_node,
        rccl_algo_names_rccl_runs,
        library_pin_on_the_other_library,
        c2c_path_beside_an_x86_host,
        chakra_export_over_a_larger_one,
        NULL,
    };
    return strata_hardening_main("twentyninth", tests);
}
