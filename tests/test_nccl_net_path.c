/*
 * test_nccl_net_path.c: LL128 across nodes by the GPUs' path to their NICs
 * (nccl_net_path; hw/nccl_tuning.c ll128_net_path). NCCL enables LL128 by
 * default only where its graphs reach the NICs by `typeInter <= PATH_PXB ||
 * (minCompCap >= 90 && typeInter <= PATH_PXN)` (NVIDIA/nccl v2.22.3-1
 * src/graph/tuning.cc l. 306; v2.19.3-1 l. 290, v2.25.1-1 l. 428), from
 * v2.27 `<= PATH_PXN` from compute capability 9.0 and `<= PATH_PXB`
 * below it with NCCL_LL128_C2C's default 1 (v2.30.4-1 l. 229, 490-496),
 * PATH_P2C (a GPU on NVLink-C2C, the NIC on its CPU's PCIe) lying between
 * PXB and PXN there (v2.27.3-1 l. 460: `<= PATH_P2C`, P2C numbered after
 * PXN in that release only: the same paths) and counted PHB before v2.27
 * (v2.25.1-1 paths.cc l. 96-97). A set NCCL_PROTO enables what it lists outright (parseList
 * gives 1, not LL128's default 2: v2.22.3-1 tuning.cc l. 34-52, 268-275).
 * Every expected value below is that rule read off the source, not a run.
 */
#include <check.h>
#include <string.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_tuning.h"
#include "hw/nccl_versions.h"

#define PERLMUTTER_HW "validation/held-out/hw/perlmutter-a100-slingshot.ini"
#define NVL "interconnect.nvlink."

/* Whether NCCL's model runs `p` on the ring for a communicator of two
 * nodes of 8 on `arch` with the NICs at `path`, at `version`. */
static bool runs(strata_nccl_arch arch, strata_nccl_net_path path, const char *version, uint32_t nodes,
                 uint32_t protos, strata_nccl_algo a, strata_nccl_proto p)
{
    strata_nccl_comm c = {.arch = arch, .ranks = 8 * nodes, .graph_channels = 8, .channel_gbs = 20.0,
                          .nodes = nodes, .nics = nodes > 1 ? 4 : 0, .nic_gbs = 25.0, .nic_gpus = nodes > 1 ? 4 : 0,
                          .cpu = STRATA_NCCL_AMD, .net_path = path, .protos = protos,
                          .version = strata_nccl_version_find(version)};
    ck_assert_ptr_nonnull(c.version);
    double lat, bw;
    return strata_nccl_model(&c, STRATA_OP_ALL_REDUCE, a, p, &lat, &bw);
}

static bool ll128(strata_nccl_arch arch, strata_nccl_net_path path, const char *version)
{
    bool ring = runs(arch, path, version, 2, 0, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    ck_assert_int_eq(ring, runs(arch, path, version, 2, 0, STRATA_NCCL_TREE, STRATA_NCCL_LL128));
    /* LL and Simple run whatever the path */
    ck_assert(runs(arch, path, version, 2, 0, STRATA_NCCL_RING, STRATA_NCCL_LL));
    ck_assert(runs(arch, path, version, 2, 0, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE));
    return ring;
}

/* The rule's table, A100 (8.0) and H100 (9.0) across two nodes:
 *   path   A100 <2.27  A100 >=2.27  H100 <2.27  H100 >=2.27
 *   PIX    on          on           on          on
 *   PXB    on          on           on          on
 *   C2C    off (PHB)   off (P2C)    off (PHB)   on (P2C <= PXN)
 *   PXN    off         off          on          on
 *   PHB    off         off          off         off
 *   SYS    off         off          off         off */
START_TEST(ll128_across_nodes_follows_the_nic_path)
{
    const char *old = "2.25", *new = "2.30";
    for (int v = 0; v < 2; v++) {
        const char *ver = v ? new : old;
        ck_assert(ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PIX, ver));
        ck_assert(ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PXB, ver));
        ck_assert(!ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_C2C, ver));
        ck_assert(!ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PXN, ver));
        ck_assert(!ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PHB, ver));
        ck_assert(!ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_SYS, ver));
        ck_assert(ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_PXB, ver));
        ck_assert(ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_PXN, ver));
        ck_assert(!ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_PHB, ver));
        ck_assert(!ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_SYS, ver));
    }
    ck_assert(!ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_C2C, "2.25"));
    ck_assert(!ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_C2C, "2.26"));
    ck_assert(ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_C2C, "2.27"));
    ck_assert(ll128(STRATA_NCCL_HOPPER, STRATA_NCCL_PATH_C2C, "2.30"));
    /* 2.19 reads the pre-2.27 rule (l. 290) on Ampere nodes */
    ck_assert(!ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PHB, "2.19"));
    ck_assert(ll128(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PXB, "2.19"));
}
END_TEST

/* Not across nodes, and not under a set NCCL_PROTO: one node's graphs
 * reach no NIC (typeInter stays at its start), and NCCL_PROTO=LL128 (or a
 * list holding it) enables it outright. */
START_TEST(one_node_and_a_set_proto_keep_ll128)
{
    ck_assert(runs(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PHB, "2.25", 1, 0, STRATA_NCCL_RING, STRATA_NCCL_LL128));
    uint32_t all = 1u << STRATA_NCCL_LL | 1u << STRATA_NCCL_LL128 | 1u << STRATA_NCCL_SIMPLE;
    ck_assert(runs(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_PHB, "2.25", 2, all, STRATA_NCCL_RING, STRATA_NCCL_LL128));
    ck_assert(runs(STRATA_NCCL_AMPERE, STRATA_NCCL_PATH_SYS, "2.25", 2, 1u << STRATA_NCCL_LL128, STRATA_NCCL_TREE,
                   STRATA_NCCL_LL128));
}
END_TEST

static strata_coll_tuning tune(const char *path, const char *proto, uint64_t bytes)
{
    char *pa = path ? g_strconcat(NVL "nccl_net_path=", path, NULL) : NULL;
    char *pr = proto ? g_strconcat(NVL "nccl_proto=", proto, NULL) : NULL;
    const char *o[] = {"hardware.devices=8", NVL "nccl_version=2.25", pa ? pa : pr, pa ? pr : NULL, NULL};
    strata_hw *hw = strata_test_load_hw_file(PERLMUTTER_HW, o);
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert_msg(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 4, bytes, 0, &t, &err), "%s",
                  err ? err->message : "");
    strata_hw_free(hw);
    g_free(pa);
    g_free(pr);
    return t;
}

/* Perlmutter's file (two nodes of 4 A100, nccl_net_path = phb from NCCL's
 * own dump of the runs' nodes): NCCL's choice never takes LL128 from 1 KiB
 * to 64 MiB; the same file read with the NICs at PXB (the file's reading
 * before the key) takes Ring/LL128 at 2 MiB, and so does a run that lists
 * LL128 in NCCL_PROTO. */
START_TEST(perlmutter_runs_no_ll128_across_nodes)
{
    for (uint64_t b = 1u << 10; b <= 64u << 20; b *= 2)
        ck_assert_int_ne(tune(NULL, NULL, b).proto, STRATA_NCCL_LL128);
    strata_coll_tuning pxb = tune("pxb", NULL, 2u << 20), set = tune(NULL, "LL,LL128,Simple", 2u << 20);
    ck_assert_int_eq(pxb.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(pxb.proto, STRATA_NCCL_LL128);
    ck_assert_int_eq(set.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(set.proto, STRATA_NCCL_LL128);
}
END_TEST

/* Bad input: a path NCCL does not print, and the key in a file with no
 * network, are refused with the file, line and key. */
START_TEST(bad_paths_are_refused)
{
    strata_test_hw_text_refused(STRATA_TEST_NCCL_HW_HEAD, "nccl_net_path = phb\n",
                                "t.ini:15: [interconnect x] nccl_net_path: expected no such key in a file with no "
                                "[network NAME]");
    strata_test_hw_text_refused(STRATA_TEST_NCCL_HW_HEAD,
                                "nccl_net_path = pcie\n[network n]\nbandwidth = 25GB/s\ntopology = switch\n",
                                "t.ini:15: [interconnect x] nccl_net_path: expected pix, pxb, pxn, phb, sys or c2c, "
                                "got 'pcie'");
}
END_TEST

static Suite *nccl_net_path_suite(void)
{
    Suite *s = suite_create("nccl_net_path");
    TCase *tc = tcase_create("net_path");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ll128_across_nodes_follows_the_nic_path);
    tcase_add_test(tc, one_node_and_a_set_proto_keep_ll128);
    tcase_add_test(tc, perlmutter_runs_no_ll128_across_nodes);
    tcase_add_test(tc, bad_paths_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_net_path_suite()); }
