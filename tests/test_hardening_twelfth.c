/*
 * test_hardening_twelfth.c: the twelfth hardening pass (wave 32;
 * docs/reliability.md, "The twelfth pass"), a row per case: each refused
 * row was a silent default, an ignored key or a wrong message at exit 0
 * (or a refusal of what is valid); the rows at 0 are what stays taken.
 *
 *  - the eleventh pass's leftovers: a flush time in a file with no
 *    [network]; a request CSV's quoted header; gen's message printing a
 *    shift the op refuses; --preemption swap recomputing a victim the swap
 *    space could not hold; config.json's max_position_embeddings holding
 *    no request to it; a serving case's serve= errors naming the case's
 *    first line; --allocator caching: (no parameter) taken; an empty
 *    minimalloc import written at exit 0;
 *  - what the pass found besides (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

#define HELD_HW "\"$H/../../validation/held-out/hw/"
#define RUN_ON(hw) HR_TRACE "\"$S\" run -q --trace t.trace --json out.json --hw " hw " "

/* rccl_gdr_flush (and nccl_gdr_flush) set in a file with no [network] was
 * taken and did nothing: the flush is of a step received across nodes,
 * and with no network no receive crosses them. */
STRATA_ROWS_TEST(flush_needs_network,
    {RUN_ON("\"$H/mi300x-8.ini\"") "--set interconnect.xgmi.rccl_gdr_flush=2us", 2,
     "mi300x-8.ini (override interconnect.xgmi.rccl_gdr_flush=2us): [interconnect xgmi] rccl_gdr_flush: expected no "
     "flush time in a file with no [network NAME]: the flush is of a step received across nodes, and with no "
     "network no receive crosses nodes; remove the key or add the [network]"},
    {RUN_ON("\"$H/a100-8.ini\"") "--set interconnect.nvlink.nccl_gdr_flush=0", 2,
     "[interconnect nvlink] nccl_gdr_flush: expected no flush time in a file with no [network NAME]"},
    /* what stays taken: a file with a [network]; the keys unset */
    {RUN_ON(HELD_HW "mi300x-roce.ini\"") "--set interconnect.xgmi.rccl_gdr_flush=3us", 0, NULL},
    {RUN_ON(HELD_HW "a100-40gb-hdr-ib.ini\"") "--set interconnect.nvlink.nccl_gdr_flush=0", 0, NULL},
    {RUN_ON("\"$H/mi300x-8.ini\""), 0, NULL},
)

/* Found by the hunt: the other keys of transfers across nodes were taken
 * the same way on a file with no [network], each read by nothing: the
 * nccl row's nccl_net_latency, nccl_nic_group, nccl_net_plugin and
 * nccl_p2p_net_chunksize, the rccl row's rccl_net_rings. */
STRATA_ROWS_TEST(network_keys_need_network,
    {RUN_ON("\"$H/a100-8.ini\"") "--set interconnect.nvlink.nccl_p2p_net_chunksize=128KiB", 2,
     "[interconnect nvlink] nccl_p2p_net_chunksize: expected no such key in a file with no [network NAME]: it is of "
     "transfers across nodes, and with no network none crosses nodes; remove the key or add the [network]"},
    {RUN_ON("\"$H/dgx-h100.ini\"") "--set interconnect.nvlink.nccl_net_latency=75us", 2,
     "nccl_net_latency: expected no such key in a file with no [network NAME]"},
    {RUN_ON("\"$H/dgx-h100.ini\"") "--set interconnect.nvlink.nccl_nic_group=2", 2,
     "nccl_nic_group: expected no such key in a file with no [network NAME]"},
    {RUN_ON("\"$H/dgx-h100.ini\"") "--set interconnect.nvlink.nccl_net_plugin=aws-ofi-p5", 2,
     "nccl_net_plugin: expected no such key in a file with no [network NAME]"},
    {RUN_ON("\"$H/mi300x-8.ini\"") "--set 'interconnect.xgmi.rccl_net_rings=0 1 2 3 4 5 6 7'", 2,
     "rccl_net_rings: expected no such key in a file with no [network NAME]"},
    /* what stays taken: the same keys where a network joins the nodes (an EFA plugin row's on a file without
     * InfiniBand's framing: the seventeenth pass) */
    {RUN_ON("\"$H/../../tests/data/hw/h100-2x8-efa.ini\"") "--set interconnect.nvlink.nccl_p2p_net_chunksize=128KiB "
     "--set interconnect.nvlink.nccl_net_plugin=aws-ofi-p5", 0, NULL},
)

#define SERVE_CSV(text) "printf '" text "' > r.csv; " HR_SERVE("h100.ini") "--model llama-3-8b --requests r.csv " \
                        "--json out.json"

/* A request CSV whose header was quoted ("arrival_s","prompt_tokens",...,
 * as Python's csv.QUOTE_ALL and pandas' to_csv(quoting=QUOTE_NONNUMERIC)
 * write it) was refused as a header naming none of the columns. RFC 4180's
 * quoting is read: a quoted field may hold commas and "" for a quote. */
STRATA_ROWS_TEST(request_csv_quoting,
    {SERVE_CSV("\"arrival_s\",\"prompt_tokens\",\"output_tokens\"\\n\"0\",\"100\",\"8\"\\n\"0.5\",\"200\",\"4\"\\n")
     " && grep -q '\"completed\" : 2' out.json", 0, NULL},
    {SERVE_CSV("\"TIMESTAMP\",\"ContextTokens\",\"GeneratedTokens\",\"note\"\\n"
               "\"2023-11-16 18:15:46.6805900\",374,44,\"a, b \"\"c\"\"\"\\n")
     " 2>&1 | grep -q \"column 'note' not read\"", 0, NULL},
    /* a quote left open, text after a closing one */
    {SERVE_CSV("\"arrival_s,prompt_tokens,output_tokens\\n0,1,1\\n"), 2,
     "r.csv:1: field 1: expected a closing quote, the line ended inside a quoted field"},
    {SERVE_CSV("arrival_s,prompt_tokens,output_tokens\\n0,\"12\"3,1\\n"), 2,
     "r.csv:2: field 2: expected a comma or the line's end after the closing quote, got '3'"},
    /* a quoted comma is one field: two fields where the header names three */
    {SERVE_CSV("arrival_s,prompt_tokens,output_tokens\\n0,\"1,1\"\\n"), 2,
     "r.csv:2: expected 3 comma-separated fields as the header names, got 2"},
    {SERVE_CSV("arrival_s,prompt_tokens,output_tokens\\n0,\"\",1\\n"), 2,
     "r.csv:2: prompt tokens: expected a token count from 1 to 10^8, got ''"},
)

/* gen collective's refusal printed shift=1 for an op that reads no shift
 * (and refuses one given): the shift is printed for collective-permute
 * alone. */
STRATA_ROWS_TEST(gen_message_names_read_keys,
    {"\"$S\" gen collective op=all-reduce bytes=0 -o out.trace", 2,
     "collective: expected bytes a positive whole number of elements of dtype, got op=all-reduce bytes=0 devices=8 "
     "dtype=f32 axis=data\n"},
    {"\"$S\" gen collective op=collective-permute bytes=0 -o out.trace", 2,
     "got op=collective-permute bytes=0 devices=8 dtype=f32 axis=data shift=1"},
    /* a width on a model that reads none: moe_ffn without experts, the MLA widths without kv_lora_rank, each
     * taken at -1 (the twenty-ninth pass refuses such a key at any value: test_hardening_twentyninth; here the
     * widths where read) */
    {"\"$S\" gen transformer experts=4 top_k=2 moe_ffn=-1 -o out.trace", 2, "transformer: expected moe_ffn >= 1 "
     "(moe_ffn, experts), got -1 and 4"},
    {"\"$S\" gen transformer kv_lora_rank=16 v_head_dim=-1 -o out.trace", 2, "expected qk_nope_head_dim and "
     "v_head_dim >= 1, got 64 and -1"},
    {"\"$S\" gen transformer kv_lora_rank=16 qk_nope_head_dim=0 -o out.trace", 2, "expected qk_nope_head_dim and "
     "v_head_dim >= 1"},
    /* what stays taken: the widths given where read, or not given */
    {"\"$S\" gen transformer experts=4 top_k=2 moe_ffn=512 -o out.trace", 0, NULL},
)

/* Three requests of 4,000 tokens on a pool of 300 blocks (4,800 tokens):
 * the second is preempted at 2.561 s holding 150 blocks of 16 tokens x
 * 131072 B = 314572800 B (llama-3-8b, 2 x 32 layers x 8 KV heads x 128 x
 * 2 B a token). */
#define SWAP HR_SWAP "--preemption swap "

/* --preemption swap with room for a block but not for the victim's
 * blocks recomputed the victim, exit 0, where vLLM v0's _swap_out raises
 * "Aborted due to the lack of CPU swap space" (can_swap_out false): the
 * run stops there, naming the time, the request and the bytes. */
STRATA_ROWS_TEST(swap_without_room_aborts,
    /* 2.652 s: 2.561 s before wave 45, plus the default row's (vllm-v1) receive hop of 5.07952 ms (2.566 s), then
     * wave 49's gemm_stream_curve on h100.ini (llama-3-8b's Linears, 32 MiB to 1 GiB, stream at 0.76-0.85 of HBM, not
     * 0.85; with --hw-set compute.sm.gemm_stream_curve=none the run is still at 2.566 s) */
    {SWAP "--swap-space 2097152", 2,
     "--preemption swap: at 2.652 s request 1 (r.csv:3) is preempted holding 314572800 B of KV a rank and "
     "--swap-space 2097152 B has 2097152 B free: vLLM v0 aborts the engine there (\"Aborted due to the lack of CPU "
     "swap space\", vllm/core/scheduler.py _swap_out); expected a larger --swap-space, or --preemption recompute"},
    {SWAP "--swap-space 100MiB", 2, "holding 314572800 B of KV a rank and --swap-space 104857600 B has 104857600 B"},
    /* what stays taken: room for the victims (300 MiB each, 2 of them) */
    {SWAP "--swap-space 600MiB && grep -q '\"swaps_out\" : 2' out.json", 0, NULL},
)

#define UNSWAPPED HR_CSV("0,2000,2000\n0,2000,2000\n") HR_SERVE("h100.ini") "--model llama-3-8b --requests r.csv " \
                  "--kv-blocks 300 --json out.json --preemption "

/* Found by the hunt: --preemption swap was modelled under every scheduler,
 * where only vLLM v0's swap: v1's Scheduler._preempt_request frees the
 * request's blocks and resets its computed tokens (recompute), and the
 * other engines' rows preempt their own way. */
STRATA_ROWS_TEST(swap_needs_v0,
    {UNSWAPPED "swap", 2,
     "--preemption swap: the scheduler vllm-v1 does not swap (only vLLM v0's do: v1 preempts by recompute, the "
     "other engines their own way); expected --scheduler vllm-v0 or vllm-v0-chunked (or --engine vllm-v0), or "
     "--preemption recompute"},
    {UNSWAPPED "swap --engine trtllm-cpp", 2, "the scheduler trtllm-no-evict-unchunked does not swap"},
    {UNSWAPPED "swap --engine sglang-v0.4", 2, "the scheduler sglang-v0.4 does not swap"},
    /* what stays taken: vLLM v0's schedulers, by name or through its engine row; recompute anywhere */
    {UNSWAPPED "swap --scheduler vllm-v0-chunked", 0, NULL},
    {UNSWAPPED "swap --engine vllm-v0", 0, NULL},
    {UNSWAPPED "recompute --engine trtllm-cpp", 0, NULL},
)

#define YARN ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0, \"original_max_position_embeddings\": 2048}"
#define SERVE_CONFIG HR_SERVE_LENGTHS

/* A config.json's max_position_embeddings held no request to it: with 2048
 * a 3,008-token request was served (strata's max_model_len 8192), where
 * vLLM derives max_model_len 2048 from the file and refuses the request;
 * and --set max_model_len=4096 above it was taken, which vLLM refuses
 * ("User-specified max_model_len ... is greater than the derived
 * max_model_len", vllm/config.py _get_and_verify_max_len). A scaling
 * rope_scaling (yarn) lengthens vLLM's derived length: strata leaves the
 * length unbound there. */
STRATA_ROWS_TEST(max_positions_bound_the_length,
    {HR_CONFIG(", \"max_position_embeddings\": 2048") SERVE_CONFIG
     "&& grep -q '\"rejected\" : 1' out.json && grep -q '\"completed\" : 1' out.json", 0, NULL},
    {HR_CONFIG(", \"max_position_embeddings\": 2048") SERVE_CONFIG "--set max_model_len=4096", 2,
     "--set max_model_len=4096: c.json gives a derived max_model_len of 2048 (its max_position_embeddings and "
     "rope_scaling, model_max_len.h), and vLLM and SGLang refuse a length above "
     "the one they derive from it (\"User-specified max_model_len ... is greater than the derived max_model_len\", "
     "vllm/config.py): expected at most 2048"},
    {HR_CONFIG(", \"max_position_embeddings\": 2048, \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}")
     SERVE_CONFIG "--set max_model_len=2049", 2, "expected at most 2048"},
    {HR_CONFIG(", \"max_position_embeddings\": 2048") SERVE_CONFIG "--engine sglang-v0.4 --set max_model_len=4096", 2,
     "expected at most 2048"},
    /* what stays taken: the length itself; a scaling rope_scaling; a TensorRT-LLM row's own length; no key */
    {HR_CONFIG(", \"max_position_embeddings\": 2048") SERVE_CONFIG "--set max_model_len=2048", 0, NULL},
    {HR_CONFIG(", \"max_position_embeddings\": 2048" YARN) SERVE_CONFIG "--set max_model_len=4096 "
     "&& grep -q '\"completed\" : 2' out.json", 0, NULL},
    {HR_CONFIG(", \"max_position_embeddings\": 2048") SERVE_CONFIG "--engine trtllm-cpp --set max_model_len=4096", 0,
     NULL},
    {HR_CONFIG("") SERVE_CONFIG "&& grep -q '\"completed\" : 2' out.json", 0, NULL},
)

#define SERVE_CASE(opts) "printf '[case a]\\nsource = s\\nsetup = s\\nmetric = output-throughput\\n" \
                         "serve = --model llama-3-8b --poisson n=2 " opts "\\nmeasured = 300tok/s\\n" \
                         "hw = %s/h100.ini\\n' \"$H\" > v.ini; \"$S\" validate --published v.ini"

/* An error of a serving case's serve= named the case's first line
 * ("v.ini:1: serve: ..."), not the serve= line (here line 5). */
STRATA_ROWS_TEST(serve_errors_name_their_line,
    {SERVE_CASE("--sweep tp=1,2"), 2, "v.ini:5: serve: --sweep: a case is one run on its hw= and writes no file"},
    {SERVE_CASE("--tp 3"), 2, "v.ini:5: serve: "},
    {SERVE_CASE("--max-num-seqs 0"), 2, "v.ini:5: serve: "},
    /* a case's own fields still name their lines */
    {"printf '[case a]\\nsource = s\\nsetup = s\\nserve = --model llama-3-8b --poisson n=2\\nmetric = nosuch\\n"
     "measured = 300tok/s\\nhw = %s/h100.ini\\n' \"$H\" > v.ini; \"$S\" validate --published v.ini", 2,
     "v.ini:5: [case a] metric: "},
)

/* An allocator or policy spec of a name, a colon and nothing ("caching:")
 * was taken as the name alone: a parameter list meant and left out. */
STRATA_ROWS_TEST(spec_colon_needs_parameters,
    {HR_TRACE "\"$S\" alloc --trace t.trace --allocator caching: -c 1GiB --json out.json", 2,
     "allocator: expected key=value,... after ':', got nothing; write 'caching' alone for its defaults"},
    {HR_TRACE "\"$S\" alloc --trace t.trace --allocator 'bfc: ' -c 1GiB --json out.json", 2,
     "write 'bfc' alone for its defaults"},
    {HR_TRACE "\"$S\" transform --trace t.trace --policy prefetch: -o out.trace", 2,
     "policy: expected key=value,... after ':', got nothing; write 'prefetch' alone for its defaults"},
    /* what stays taken: the name alone, and a list */
    {HR_TRACE "\"$S\" alloc --trace t.trace --allocator caching -c 1GiB --json out.json", 0, NULL},
    {HR_TRACE "\"$S\" alloc --trace t.trace --allocator caching:max_split_size=200MiB -c 1GiB --json out.json", 0,
     NULL},
)

/* import minimalloc of a header and no rows wrote an empty trace at exit
 * 0: a problem of no buffers has none to place (MiniMalloc's benchmarks
 * have a buffer a row). */
STRATA_ROWS_TEST(minimalloc_needs_rows,
    {"printf 'id,lower,upper,size\\n' > m.csv; \"$S\" import minimalloc m.csv -o out.trace", 2,
     "m.csv:2: expected at least one buffer row 'id,lower,upper,size' after the header, got none"},
    {"printf 'id,lower,upper,size\\n\\n' > m.csv; \"$S\" import minimalloc m.csv -o out.trace", 2,
     "expected at least one buffer row"},
    /* what stays taken: one row */
    {"printf 'id,lower,upper,size\\nb0,0,10,64\\n' > m.csv; \"$S\" import minimalloc m.csv -o out.trace", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        flush_needs_network,
        network_keys_need_network,
        request_csv_quoting,
        gen_message_names_read_keys,
        swap_without_room_aborts,
        swap_needs_v0,
        max_positions_bound_the_length,
        serve_errors_name_their_line,
        spec_colon_needs_parameters,
        minimalloc_needs_rows,
        NULL,
    };
    return strata_hardening_main("twelfth", tests);
}
