/*
 * test_hardening_seventeenth.c: the seventeenth hardening pass (wave 37;
 * docs/reliability.md, "The seventeenth pass"), a row per case: each refused
 * row was a silent default or a false message at exit 0 or 2; the rows at 0
 * are what stays taken.
 *
 *  - the item the sixteenth pass left: InfiniBand's framing keys beside a
 *    network protocol over EFA (the tests that priced EFA's rows on the IB
 *    files now run on tests/data/hw/h100-2x8-efa.ini);
 *  - what the pass found besides, as a new user of serve, gen collective and
 *    model files (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

/* h100-2x8-ib.ini (on dgx-h100.ini, copied beside it) as d.ini, its line 49 (nccl_ib_link_layer = infiniband in
 * [interconnect nvlink]) replaced by the lines given, checked with a trace of one buffer. */
#define IB_LINE(lines) "cp \"$H/dgx-h100.ini\" .; sed 's/^nccl_ib_link_layer = infiniband$/" lines "/' " \
                       "\"$H/h100-2x8-ib.ini\" > d.ini; " HR_TRACE "\"$S\" check --hw d.ini --trace t.trace"

/* nccl_ib_link_layer and nccl_ib_mtu add InfiniBand's or RoCE v2's
 * headers to each packet of a network step (ib_frame.c). Both were taken
 * beside a network protocol over EFA (nccl_net_protocol, or the one of
 * the nccl_net_plugin row: net_protocol.h, every row EFA's), whose SRD
 * transport is neither: the packets were framed as IB's, exit 0. Refused
 * at the IB key's line (coll_impl_nccl.c ib_frame_keys). */
STRATA_ROWS_TEST(efa_is_neither_ib_nor_roce,
    {IB_LINE("&\\nnccl_net_protocol = efa-rdm-cuda"), 2,
     "(override d.ini:49): [interconnect nvlink] nccl_ib_link_layer: expected no InfiniBand or RoCE framing where "
     "the network protocol is efa-rdm-cuda (nccl_net_protocol): its messages run over EFA, which is neither "
     "(net_protocol.h); remove the key"},
    {IB_LINE("&\\nnccl_net_plugin = aws-ofi-p5"), 2,
     "(override d.ini:49): [interconnect nvlink] nccl_ib_link_layer: expected no InfiniBand or RoCE framing where "
     "the network protocol is aws-ofi-rdma (the nccl_net_plugin row's)"},
    {IB_LINE("nccl_ib_mtu = 2048\\nnccl_net_protocol = aws-ofi-rdma"), 2,
     "(override d.ini:49): [interconnect nvlink] nccl_ib_mtu: expected no InfiniBand or RoCE framing where the "
     "network protocol is aws-ofi-rdma (nccl_net_protocol)"},
    /* what stays taken: the IB file as it is, the EFA protocol without IB's keys, the EFA test file with a row */
    {IB_LINE("&"), 0, NULL},
    {IB_LINE("nccl_net_protocol = efa-rdm-cuda"), 0, NULL},
    {"cp \"$H/dgx-h100.ini\" .; sed -e 's|^base = .*|base = dgx-h100.ini|' -e 's/^domain = 8$/&\\nnccl_net_plugin "
     "= aws-ofi-p5/' \"$H/../../tests/data/hw/h100-2x8-efa.ini\" > d.ini; " HR_TRACE "\"$S\" check --hw d.ini "
     "--trace t.trace", 0, NULL},
)

/* gen collective's all-reduce of 8 ranks (unless ALGO says devices=) pinned to ALGO (the trace's algo=), run on
 * configs/hw/HW. */
#define PINNED(algo, hw) "\"$S\" gen -o t.trace collective algo=" algo " && \"$S\" run -q --trace t.trace " \
                         "--hw \"$H/" hw "\" --json out.json"

/* A trace's all-reduce pinned to an algorithm the library does not run
 * there (nccl-nvls-tree: NVLS_TREE, NVLink SHARP's, on an A100 node or an
 * MI300X) was refused, exit 2, by a message that contradicted itself:
 * "expected all-reduce, all-gather or reduce-scatter over 2 ranks or more
 * that NCCL runs (nccl_algo, nccl_proto), got all-reduce over 8" (NCCL
 * runs NVLS_TREE across nodes, none on an A100). It now
 * names the pin (coll_impl_nccl.c nccl_tune, coll_impl_rccl.c rccl_tune). */
STRATA_ROWS_TEST(pinned_algorithm_named,
    {PINNED("nccl-nvls-tree", "a100-8.ini"), 2,
     "algo=nccl: the op's algorithm pins NVLS_TREE, which NCCL does not run for all-reduce over 8 ranks on "
     "this hardware; expected an algorithm it runs here (or none: NCCL's choice)"},
    {PINNED("nccl-nvls-tree", "mi300x-8.ini"), 2,
     "algo=rccl: the op's algorithm pins NVLS_TREE, which RCCL does not run for all-reduce over 8 ranks on this "
     "hardware"},
    /* what stays taken: a pin the library runs there (NVLS_TREE across the NVLink SHARP domains of 2 nodes) */
    {PINNED("nccl-nvls-tree devices=16", "h100-2x8-ib.ini"), 0, NULL},
    {PINNED("nccl-ring", "a100-8.ini"), 0, NULL},
)

/* serve of a 2-layer llama-2-7b's Poisson stream of 8 requests at 50 a second on h100.ini (the options follow). */
#define SERVE8 HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --poisson n=8,rate=50,prompt=64,output=4 " \
               "--json out.json "

/* --swap-space (or the sweep's swap_space) sizes the host space vLLM v0
 * swaps KV blocks to, read by --preemption swap alone: under recompute
 * (the default) 1GiB gave the same JSON as the default 4GiB, exit 0.
 * Refused (serve_args.c config_of; serve_run.c strata_serve_config_set). */
STRATA_ROWS_TEST(swap_space_needs_swap,
    {SERVE8 "--swap-space 1GiB", 2,
     "--swap-space 1GiB: expected --preemption swap, which reads it (the host bytes a rank swaps KV blocks to); "
     "under recompute preemption it changes nothing"},
    {SERVE8 "--preemption recompute --swap-space 8GiB", 2, "--swap-space 8GiB: expected --preemption swap"},
    {SERVE8 "--sweep swap_space=1GiB,2GiB", 2, "swap_space: expected --preemption swap, which reads it"},
    /* what stays taken: under swap */
    {HR_SWAP "--preemption swap --swap-space 8GiB", 0, NULL},
    {HR_SWAP "--preemption swap --sweep swap_space=4GiB,8GiB", 0, NULL},
)

/* --time-scale multiplies the stream's arrival times; --concurrency N > 0
 * is a closed loop, each client sending its next request when one
 * completes, which reads no arrival time: --concurrency 2 --time-scale 2
 * gave the same JSON as --concurrency 2, exit 0. Refused (serve_args.c
 * stream_of). */
STRATA_ROWS_TEST(time_scale_needs_open_loop,
    {SERVE8 "--concurrency 2 --time-scale 2", 2,
     "--time-scale 2: expected --concurrency 0 (the stream's own arrival times, which it scales), got --concurrency "
     "2, a closed loop that reads no arrival time"},
    /* what stays taken: the open loop, given or by default */
    {SERVE8 "--concurrency 0 --time-scale 2", 0, NULL},
    {SERVE8 "--time-scale 0.5", 0, NULL},
)

/* A model file m.txt of a dense 2-layer model (lines 1-8) and the lines given (line 9 on), served. */
#define MODEL_WITH(lines) "printf 'name = x\\nlayers = 2\\nhidden = 256\\nheads = 4\\nkv_heads = 4\\nhead_dim = 64\\n" \
                          "intermediate = 512\\nvocab = 1000\\n" lines "' > m.txt; " HR_SERVE("h100.ini")           \
                          "--model-file m.txt --poisson n=2 --json out.json"

/* Model files whose keys contradict one another: experts whose
 * dense_layers leaves no MoE layer (layers l from dense_layers below
 * layers that moe_every divides, model_shape.c: dense_layers 2 of 2
 * layers, or 1 with moe_every 3, where layer 1 is not a multiple of 3),
 * sliding_window beside global_every = 1 (every layer global:
 * strata_serve_window_layers = 2 - 2 / 1 = 0). Each JSON was the dense or
 * unwindowed model's (the experts or the window read nowhere), exit 0.
 * Refused at the placing key's line (serve_model.c placed_keys). */
STRATA_ROWS_TEST(model_keys_that_cancel,
    {MODEL_WITH("experts = 8\\ntop_k = 2\\ndense_layers = 2\\n"), 2,
     "m.txt:11: dense_layers: expected an MoE layer among the 2 (those from dense_layers 2 that moe_every 1 "
     "divides), got none: the 8 experts would be read nowhere"},
    {MODEL_WITH("experts = 8\\ntop_k = 2\\nmoe_every = 3\\ndense_layers = 1\\n"), 2,
     "m.txt:12: dense_layers: expected an MoE layer among the 2 (those from dense_layers 1 that moe_every 3 "
     "divides), got none"},
    {MODEL_WITH("sliding_window = 64\\nglobal_every = 1\\n"), 2,
     "m.txt:10: global_every: expected 0 (every layer windowed) or 2 or more (every Nth layer global, the rest "
     "windowed), got 1: every layer global, sliding_window 64 read nowhere"},
    /* top_k's conflict with experts, named at a line (the sixteenth pass's leftover: the file alone) */
    {MODEL_WITH("experts = 2\\ntop_k = 4\\n"), 2,
     "m.txt:10: top_k: expected 1 <= top_k <= experts with experts (got experts 2, top_k 4)"},
    {MODEL_WITH("experts = 2\\n"), 2, "m.txt:9: experts: expected 1 <= top_k <= experts with experts (got experts 2, "
     "top_k 0)"},
    /* what stays taken: one MoE layer (layer 1), one windowed layer (layer 0; layer 1 global), all windowed */
    {MODEL_WITH("experts = 8\\ntop_k = 2\\ndense_layers = 1\\n"), 0, NULL},
    {MODEL_WITH("sliding_window = 64\\nglobal_every = 2\\n"), 0, NULL},
    {MODEL_WITH("sliding_window = 64\\nglobal_every = 0\\n"), 0, NULL},
)

/* serve of a 2-layer llama on dgx-h100.ini (8 GPUs) with two requests (the options follow). */
#define SERVE_TP HR_SERVE("dgx-h100.ini") "--set layers=2 --poisson n=2 --json out.json "

/* The TP ranks split the attention heads (vLLM's ModelConfig refuses "Total
 * number of attention heads (32) must be divisible by tensor parallel size
 * (3)"; its QKVParallelLinear divides the KV heads among the ranks, or the
 * ranks among them; SGLang, TensorRT-LLM, TurboMind the same): --tp 3 on
 * llama-3-8b (32 heads, 8 KV heads) ran 32 / 3 = 10.67 heads a rank, exit
 * 0; so did 12 heads and 4 KV heads at --tp 6 (12 / 6 = 2, but 4 KV heads
 * on 6 ranks: neither divides the other). Refused (serve_run.c
 * tp_divides_heads, at each sweep point too). */
STRATA_ROWS_TEST(tp_divides_heads,
    {SERVE_TP "--model llama-3-8b --tp 3", 2,
     "--tp 3: expected a count of ranks that divides the model's 32 attention heads and divides or is divided by "
     "its 8 KV heads"},
    {SERVE_TP "--model llama-2-7b --set heads=12 --set kv_heads=4 --tp 6", 2,
     "--tp 6: expected a count of ranks that divides the model's 12 attention heads and divides or is divided by "
     "its 4 KV heads"},
    {SERVE_TP "--model llama-3-8b --sweep tp=2,3", 2, "--tp 3: expected a count of ranks that divides"},
    /* what stays taken: 32 heads on 4 ranks (8 KV heads, 2 a rank), and on 8 (1 KV head a rank) */
    {SERVE_TP "--model llama-3-8b --sweep tp=4,8", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        efa_is_neither_ib_nor_roce, pinned_algorithm_named, swap_space_needs_swap, time_scale_needs_open_loop,
        model_keys_that_cancel,     tp_divides_heads,         NULL,
    };
    return strata_hardening_main("seventeenth", tests);
}
