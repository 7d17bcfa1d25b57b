/*
 * test_nccl_net_plugin.c: the network plugins' rows (sim/hw/
 * nccl_net_plugin.h) as the nccl row's nccl_net_plugin key applies them:
 * the plugin's latency, NIC groups and NCCL environment where the run sets
 * none of its own (aws-ofi-nccl inserts its environment without
 * overwriting), and NCCL_P2P_NET_CHUNKSIZE (nccl_p2p_net_chunksize).
 */
#include <string.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_net_plugin.h"

#define NV "interconnect.nvlink."

/* The plugins' rows run over EFA, so the file is tests/data/hw/h100-2x8-efa.ini (h100-2x8-ib.ini's network without
 * InfiniBand's framing, refused beside a protocol over EFA); "16x8" makes it 128 GPUs, as h100-16x8-ib.ini. */
static strata_coll_tuning tune(const char *const *set, strata_op_kind kind, uint64_t bytes, uint32_t algos)
{
    const char *sets[8] = {"hardware.devices=128"};
    bool big = strcmp(set[0], "16x8") == 0;
    size_t n = big ? 1 : 0;
    for (const char *const *s = set + 1; *s; s++) {
        ck_assert_uint_lt(n, G_N_ELEMENTS(sets) - 1);
        sets[n++] = *s;
    }
    sets[n] = NULL;
    strata_hw *hw = strata_test_load_hw_file("tests/data/hw/h100-2x8-efa.ini", sets);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, kind, 16, 8, bytes, algos, &t, NULL));
    strata_hw_free(hw);
    return t;
}

/* aws-ofi-p4d (platform-aws.cpp, "p4d.24xlarge": NCCL_BUFFSIZE 8 MiB,
 * NCCL_P2P_NET_CHUNKSIZE 512 KiB) on 2 nodes of 8 H100 at NCCL 2.28:
 *   - an all-to-all's p2p step across nodes (init.cc computeBuffSizes:
 *     P2P_NET_CHUNKSIZE, at most NCCL_BUFFSIZE / NCCL_STEPS): NCCL's own
 *     min(128 KiB, 4 MiB / 8) = 128 KiB; the plugin's min(512 KiB, 8 MiB /
 *     8 = 1 MiB) = 512 KiB; the run's 2 MiB buffer with the plugin min(512
 *     KiB, 256 KiB) = 256 KiB; the run's 64 KiB chunk with the plugin 64
 *     KiB;
 *   - Simple's step of a collective: 8 MiB / 8 = 1 MiB (0: NCCL's buffer);
 *   - the latency, 75 us, moves NCCL's choice for a 32 MiB all-reduce from
 *     NVLS_TREE/Simple to Ring/LL128 (test_nccl_plugin.c
 *     net_latency_steers_the_choice derives both on this communicator);
 *     the run's nccl_net_latency = 0 keeps NVLS_TREE. */
START_TEST(p4d_row_sets_what_the_run_does_not)
{
    const char *plain[] = {"2x8", NV "nccl_version=2.28", NULL};
    const char *p4d[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d", NULL};
    const char *p4d_buff[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d", NV "nccl_buffsize=2MiB",
                              NULL};
    const char *p4d_chunk[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d",
                               NV "nccl_p2p_net_chunksize=64KiB", NULL};
    const char *p4d_lat0[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d",
                              NV "nccl_net_latency=0us", NV "nccl_proto=LL,LL128,Simple", NULL};
    /* the row's NCCL_PROTO=simple (p4d_row_runs_simple_only) yields to the run's own list here */
    const char *p4d_all[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d",
                             NV "nccl_proto=LL,LL128,Simple", NULL};
    ck_assert_uint_eq(tune(plain, STRATA_OP_ALL_TO_ALL, 64u << 20, 0).chunk_bytes, 128u << 10);
    ck_assert_uint_eq(tune(p4d, STRATA_OP_ALL_TO_ALL, 64u << 20, 0).chunk_bytes, 512u << 10);
    ck_assert_uint_eq(tune(p4d_buff, STRATA_OP_ALL_TO_ALL, 64u << 20, 0).chunk_bytes, 256u << 10);
    ck_assert_uint_eq(tune(p4d_chunk, STRATA_OP_ALL_TO_ALL, 64u << 20, 0).chunk_bytes, 64u << 10);
    strata_coll_tuning t = tune(plain, STRATA_OP_ALL_REDUCE, 32u << 20, 0);
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS_TREE);
    ck_assert_uint_eq(t.simple_step_bytes, 0);
    t = tune(p4d_all, STRATA_OP_ALL_REDUCE, 32u << 20, 0);
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    ck_assert_uint_eq(t.simple_step_bytes, 1u << 20);
    ck_assert_int_eq(tune(p4d_lat0, STRATA_OP_ALL_REDUCE, 32u << 20, 0).algo, STRATA_NCCL_NVLS_TREE);
}
END_TEST

/* aws-ofi-p4d's NCCL_PROTO=simple (aws-ofi-nccl v1.13.2-aws src/platform-aws.c
 * configure_nccl_proto l. 233-250: p4d's EFA refuses SENDRECV's 128-byte
 * in-order option, as p4d logs print, issues #715 and #889). The mask admits
 * Simple alone, so whatever NCCL's model would pick, the protocol is Simple:
 *   - a 4 KiB all-reduce over 2 x 8, which NCCL's model without the plugin
 *     runs on LL (the smallest sizes' protocol: LL's latency is the lowest
 *     and its bandwidth's share of 4 KiB is nothing), runs on Simple with it;
 *   - the run's own nccl_proto (NCCL_PROTO, which the plugin does not
 *     overwrite) wins: LL,LL128,Simple gives LL back;
 *   - aws-ofi-p5 sets none (RDMA on p5: PR #280): LL stays. */
START_TEST(p4d_row_runs_simple_only)
{
    const char *plain[] = {"2x8", NV "nccl_version=2.28", NULL};
    const char *p4d[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d", NULL};
    const char *p4d_own[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4d",
                             NV "nccl_proto=LL,LL128,Simple", NULL};
    const char *p5[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p5", NULL};
    ck_assert_int_eq(tune(plain, STRATA_OP_ALL_REDUCE, 4096, 0).proto, STRATA_NCCL_LL);
    ck_assert_int_eq(tune(p4d, STRATA_OP_ALL_REDUCE, 4096, 0).proto, STRATA_NCCL_SIMPLE);
    ck_assert_int_eq(tune(p4d, STRATA_OP_ALL_GATHER, 1u << 20, 0).proto, STRATA_NCCL_SIMPLE);
    ck_assert_int_eq(tune(p4d_own, STRATA_OP_ALL_REDUCE, 4096, 0).proto, STRATA_NCCL_LL);
    ck_assert_int_eq(tune(p5, STRATA_OP_ALL_REDUCE, 4096, 0).proto, STRATA_NCCL_LL);
    ck_assert_uint_eq(strata_nccl_net_plugin_find("aws-ofi-p4d")->protos, 1u << STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(strata_nccl_net_plugin_find("aws-ofi-p5")->protos, 0);
    ck_assert_uint_eq(strata_nccl_net_plugin_find("aws-ofi-p4de-v1.8")->protos, 1u << STRATA_NCCL_SIMPLE);
}
END_TEST

/* aws-ofi-p5 (v1.16.3, "p5/p5e": also NCCL_NVLS_CHUNKSIZE and
 * NCCL_NVLSTREE_MAX_CHUNKSIZE 512 KiB) gives what test_nccl_plugin.c
 * platform_env_sets_the_chunks derives from the three keys set by hand:
 * NVLS_TREE over 16 ranks at 8 GiB runs 512 KiB chunks (128 KiB without),
 * Simple's step 1 MiB; its NICs grouped by 4, as p5's RDMA protocol
 * shows them (nic_group; the run's own nccl_nic_group wins). Unknown
 * names and bad chunk sizes are refused. */
START_TEST(p5_row_and_refusals)
{
    const char *p5[] = {"16x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p5", NV "nccl_nic_group=1", NULL};
    strata_coll_tuning t = tune(p5, STRATA_OP_ALL_REDUCE, 8ull << 30, 1u << STRATA_NCCL_NVLS_TREE);
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS_TREE);
    ck_assert_uint_eq(t.chunk_bytes, 512u << 10);
    ck_assert_uint_eq(t.simple_step_bytes, 1u << 20);
    const strata_nccl_net_plugin *row = strata_nccl_net_plugin_find("aws-ofi-p5");
    ck_assert_uint_eq(row->nic_group, 4);
    ck_assert_double_eq_tol(row->latency_s, 75e-6, 1e-15);
    ck_assert_uint_eq(strata_nccl_net_plugin_find("aws-ofi-p4d")->nic_group, 1);
    ck_assert_ptr_null(strata_nccl_net_plugin_find("efa"));
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_net_plugin = efa\n",
                                "t.ini:15: [interconnect x] nccl_net_plugin: expected a network plugin strata has "
                                "the rows of: aws-ofi-p4d, aws-ofi-p5, aws-ofi-p4de-v1.8");
    strata_test_hw_text_refused(head, "nccl_p2p_net_chunksize = 1000\n",
                                "t.ini:15: [interconnect x] nccl_p2p_net_chunksize:");
}
END_TEST

/* aws-ofi-p4de-v1.8 (tag v1.8.1-aws, "p4de.24xlarge": latency 75.0,
 * SENDRECV, of the environment only NCCL_NVLSTREE_MAX_CHUNKSIZE 512 KiB,
 * set on every NVIDIA platform) on the same 2 nodes of 8 H100 at 2.28:
 *   - the all-to-all's p2p step stays NCCL's own, min(128 KiB, 4 MiB / 8)
 *     = 128 KiB (p4d's later block gives 512 KiB, above);
 *   - Simple's step is NCCL's own buffer's (simple_step_bytes 0, where
 *     p4d's 8 MiB gives 1 MiB);
 *   - the 75 us alone moves the 32 MiB all-reduce from NVLS_TREE/Simple to
 *     Ring/LL128, as p4d's row does: NCCL's model reads no buffer size
 *     (test_nccl_plugin.c net_latency_steers_the_choice);
 *   - each NIC its own device (nic_group 1). */
START_TEST(p4de_v1_8_row_sets_the_latency_only)
{
    /* the run's own nccl_proto restores LL128 (the plugin inserts NCCL_PROTO=simple without overwrite) */
    const char *p4de[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4de-v1.8",
                          NV "nccl_proto=LL,LL128,Simple", NULL};
    ck_assert_uint_eq(tune(p4de, STRATA_OP_ALL_TO_ALL, 64u << 20, 0).chunk_bytes, 128u << 10);
    strata_coll_tuning t = tune(p4de, STRATA_OP_ALL_REDUCE, 32u << 20, 0);
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    const char *p4de_simple[] = {"2x8", NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4de-v1.8", NULL};
    ck_assert_int_eq(tune(p4de_simple, STRATA_OP_ALL_REDUCE, 32u << 20, 0).proto, STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(t.simple_step_bytes, 0);
    const strata_nccl_net_plugin *row = strata_nccl_net_plugin_find("aws-ofi-p4de-v1.8");
    ck_assert_uint_eq(row->nic_group, 1);
    ck_assert_double_eq_tol(row->latency_s, 75e-6, 1e-15);
    ck_assert_uint_eq(row->buffsize + row->p2p_net_chunk + row->nvls_chunk, 0);
    ck_assert_uint_eq(row->nvlstree_max, 512u << 10);
}
END_TEST

static Suite *nccl_net_plugin_suite(void)
{
    Suite *s = suite_create("nccl_net_plugin");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, p4d_row_sets_what_the_run_does_not);
    tcase_add_test(tc, p4d_row_runs_simple_only);
    tcase_add_test(tc, p5_row_and_refusals);
    tcase_add_test(tc, p4de_v1_8_row_sets_the_latency_only);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_net_plugin_suite()); }
