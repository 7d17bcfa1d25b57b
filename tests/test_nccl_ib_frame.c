/*
 * test_nccl_ib_frame.c: the packets of NCCL's IB transport on the wire
 * (hw/ib_frame.h; the nccl row's nccl_ib_link_layer and nccl_ib_mtu,
 * hw/coll_impl_nccl.c; models/collective/coll_kit_tiers.c coll_wire_apply):
 * a network step's message is cut into packets of the path MTU, each
 * carrying its link layer's headers, the message its RDMA write's RETH and
 * immediate. Values worked by hand below.
 */
#include <check.h>
#include <string.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "collective/coll_sched.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/ib_frame.h"

#define NVL "interconnect.nvlink."

/* InfiniBand: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 bytes a packet; RoCE
 * v2 over Ethernet: preamble 8 + MAC 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC
 * 4 + FCS 4 + gap 12 = 82; a message's RETH 16 + ImmDt 4 = 20 on both.
 * 4096 B at MTU 4096: one packet, 4096 + 26 + 20 = 4142 (IB). 4097 B: two
 * packets, 4097 + 52 + 20 = 4169. 1 MiB on RoCE at 4096: 256 packets,
 * 1048576 + 256 x 82 + 20 = 1069588; at MTU 1024 1024 packets, 1048576 +
 * 83968 + 20 = 1132564. 8 B: one packet, 8 + 82 + 20 = 110. */
START_TEST(a_packet_carries_its_link_layers_headers)
{
    const strata_ib_frame *ib = strata_ib_frame_find("infiniband"), *roce = strata_ib_frame_find("roce-v2");
    ck_assert_ptr_nonnull(ib);
    ck_assert_ptr_nonnull(roce);
    ck_assert_ptr_null(strata_ib_frame_find("ethernet"));
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(ib, 4096, 4096), 4142);
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(ib, 4096, 4097), 4169);
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(roce, 4096, 1u << 20), 1069588);
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(roce, 1024, 1u << 20), 1132564);
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(roce, 4096, 8), 110);
    /* no link layer, no MTU, no bytes: the bytes as they are */
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(NULL, 4096, 4096), 4096);
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(ib, 0, 4096), 4096);
    ck_assert_uint_eq(strata_ib_frame_wire_bytes(ib, 4096, 0), 0);
    ck_assert(strata_ib_frame_mtu_ok(256) && strata_ib_frame_mtu_ok(4096));
    ck_assert(!strata_ib_frame_mtu_ok(1500) && !strata_ib_frame_mtu_ok(8192) && !strata_ib_frame_mtu_ok(128));
}
END_TEST

static strata_coll_tuning tune(strata_hw *hw, strata_op_kind kind, uint64_t bytes)
{
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert_msg(strata_hw_coll_impl(hw)->tune(hw, kind, 16, 8, bytes, 0, &t, &err), "%s",
                  err ? err->message : "");
    return t;
}

/* The files NCCL's IB transport runs on name their link layer: the H100
 * pair over InfiniBand, OCI's A100 pair over RoCE; the path MTU is 4096
 * unless the file sets another; an all-to-all's network parts carry the
 * same. A file without the key (A3 Mega, GPUDirect-TCPXO) frames nothing. */
START_TEST(the_file_names_its_link_layer)
{
    strata_hw *hw = strata_test_load_hw("h100-2x8-ib", NULL);
    strata_coll_tuning t = tune(hw, STRATA_OP_ALL_REDUCE, 1u << 20);
    ck_assert_ptr_eq(t.net_frame, strata_ib_frame_find("infiniband"));
    ck_assert_uint_eq(t.net_mtu, 4096);
    t = tune(hw, STRATA_OP_ALL_TO_ALL, 1u << 20);
    ck_assert_ptr_eq(t.net_frame, strata_ib_frame_find("infiniband"));
    strata_hw_free(hw);
    const char *const small[] = {NVL "nccl_ib_mtu=1024", NULL};
    hw = strata_test_load_hw("h100-2x8-ib", small);
    ck_assert_uint_eq(tune(hw, STRATA_OP_ALL_REDUCE, 1u << 20).net_mtu, 1024);
    strata_hw_free(hw);
    const char *const two[] = {"hardware.devices=16", NULL};
    hw = strata_test_load_hw_file("validation/held-out/hw/oci-a100-40gb-roce.ini", two);
    ck_assert_ptr_eq(tune(hw, STRATA_OP_ALL_REDUCE, 1u << 20).net_frame, strata_ib_frame_find("roce-v2"));
    strata_hw_free(hw);
    hw = strata_test_load_hw_file("validation/held-out/hw/a3-mega-tcpxo.ini", two);
    ck_assert_ptr_null(tune(hw, STRATA_OP_ALL_REDUCE, 1u << 20).net_frame);
    strata_hw_free(hw);
}
END_TEST

/* The schedule of a 1 MiB Ring/Simple all-reduce over the H100 pair: with
 * the link layer every copy between the nodes carries its packets'
 * headers, ceil(W / 4096) x 26 + 20 bytes beyond the W it carries
 * without them; a copy inside a node carries the same bytes either way
 * (NVLink's own format). By hand for one copy: NCCL's rings move the 1 MiB
 * in chunks of a channel's share, 1 MiB / (16 ranks x the tune's
 * channels) each, so every copy across carries that share W and
 * ceil(W / 4096) x 26 + 20 more. */
START_TEST(a_copy_between_the_nodes_carries_the_frames)
{
    const char *const ring[] = {NVL "nccl_algo=Ring", NVL "nccl_proto=Simple", NULL};
    strata_hw *hw = strata_test_load_hw("h100-2x8-ib", ring);
    strata_coll_tuning t = tune(hw, STRATA_OP_ALL_REDUCE, 1u << 20);
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                            .dims = {16}, .in_bytes = 1u << 20, .domain_ranks = 8, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    GArray *framed = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    GArray *plain = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_gt(strata_coll_schedule(&sh, framed), 0);
    sh.tune.net_frame = NULL;
    ck_assert_uint_gt(strata_coll_schedule(&sh, plain), 0);
    ck_assert_uint_eq(framed->len, plain->len);
    uint64_t share = (1u << 20) / (16ull * t.channels);
    uint32_t across = 0;
    for (guint i = 0; i < framed->len; i++) {
        const strata_coll_step *f = &g_array_index(framed, strata_coll_step, i);
        const strata_coll_step *p = &g_array_index(plain, strata_coll_step, i);
        uint64_t pw = p->wire_bytes ? p->wire_bytes : p->bytes;
        if (f->src / 8 == f->dst / 8) {
            ck_assert_uint_eq(f->wire_bytes, p->wire_bytes);
            continue;
        }
        ck_assert_uint_eq(pw, share);
        ck_assert_uint_eq(f->wire_bytes, share + (share + 4095) / 4096 * 26 + 20);
        across++;
    }
    ck_assert_uint_gt(across, 0);
    g_array_free(framed, TRUE);
    g_array_free(plain, TRUE);
    strata_hw_free(hw);
}
END_TEST

static void refused_in(const char *file, const char *const *overrides, const char *want)
{
    char *path = strata_test_source_path(file);
    GError *err = NULL;
    ck_assert(strata_hw_load(path, overrides, &err) == NULL);
    ck_assert_msg(err && strstr(err->message, want), "%s", err ? err->message : "(no error)");
    g_clear_error(&err);
    g_free(path);
}

static void refused(const char *const *overrides, const char *want)
{
    refused_in("configs/hw/dgx-h100.ini", overrides, want);
}

/* An unknown link layer is refused with the rows strata has; an MTU that
 * is no RDMA path MTU, an MTU without a link layer, or a link layer in a
 * file without a network, likewise. */
START_TEST(a_bad_link_layer_or_mtu_is_refused)
{
    const char *const eth[] = {NVL "nccl_ib_link_layer=ethernet", NULL};
    refused(eth, "nccl_ib_link_layer: expected a link layer strata has the frames of: infiniband, roce-v2");
    const char *const jumbo[] = {NVL "nccl_ib_link_layer=roce-v2", NVL "nccl_ib_mtu=9000", NULL};
    refused(jumbo, "nccl_ib_mtu: expected 256, 512, 1024, 2048 or 4096 bytes");
    const char *const odd[] = {NVL "nccl_ib_link_layer=roce-v2", NVL "nccl_ib_mtu=1500", NULL};
    refused(odd, "nccl_ib_mtu: expected 256, 512, 1024, 2048 or 4096 bytes");
    const char *const alone[] = {NVL "nccl_ib_mtu=4096", NULL};
    refused(alone, "nccl_ib_mtu: expected nccl_ib_link_layer beside it");
    /* one DGX H100 has no [network]: no step would carry the packets */
    const char *const one_node[] = {NVL "nccl_ib_link_layer=infiniband", NULL};
    refused(one_node, "nccl_ib_link_layer: expected no such key in a file with no [network NAME]");
    /* a measured payload rate already leaves out the headers: framing
     * beside it would count them twice (H100 2x8 IB sets infiniband) */
    const char *const payload[] = {"network.ib.payload_bandwidth=48GB/s", NULL};
    refused_in("configs/hw/h100-2x8-ib.ini", payload, "nccl_ib_link_layer: expected no InfiniBand or RoCE framing "
               "beside [network ib] payload_bandwidth");
}
END_TEST

static Suite *nccl_ib_frame_suite(void)
{
    Suite *s = suite_create("nccl_ib_frame");
    TCase *tc = tcase_create("frame");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_packet_carries_its_link_layers_headers);
    tcase_add_test(tc, the_file_names_its_link_layer);
    tcase_add_test(tc, a_copy_between_the_nodes_carries_the_frames);
    tcase_add_test(tc, a_bad_link_layer_or_mtu_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_ib_frame_suite()); }
