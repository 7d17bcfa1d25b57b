/*
 * test_coll_monotone.c: issue 39's acceptance on the shipped hardware
 * files, "a collective's time never falls as its size grows under the same
 * algorithm" (bench/coll_sweep.h; the whole sweep is
 * bench/bench_coll_monotone, its findings docs/clusters.md, "Monotone in
 * size").
 *
 * A subset that runs in seconds: the library's default choice on one DGX
 * H100 node, on two, and RCCL's on 8 MI300X, every power of two and the
 * 1.25x, 1.5x, 1.75x sizes between them (and on one node of 4 H100s
 * joined by direct NVLink, NCCL's rings over the mesh), never falls under the same
 * library algorithm, protocol and channel count; and the falls the sweep
 * found are the libraries' own, each pinned to its mechanism by hand (so
 * that a change that removes one by departing from the library, or one
 * that brings a new fall, fails here):
 *  - enqueue.cc topoGetAlgoInfo's channel cut (nc-- while nBytes < nc x
 *    nt x threadThreshold): just below a multiple of the per-channel
 *    threshold the buffer runs on one channel fewer, each with more bytes;
 *  - enqueue.cc calcCollChunking's Tree LL128 chunk, halved while a
 *    channel's bytes / chunk < nstepsLL128 x 16 / ppn: just below that
 *    bound a channel runs twice the chunks of half the size;
 *  - enqueue.cc scheduleCollTasksToPlan's cells (hw/nccl_channels.h):
 *    where the cells outnumber the communicator's channels, the last
 *    channel takes the rest, which shrinks as the buffer grows.
 * NCCL's cells (v2.25 on; the files run v2.30) also decide the channels a
 * collective runs on: "channels" below are those that carry bytes.
 */
#include <stdio.h>
#include "testutil.h"
#include "coll_sweep.h"

static coll_sweep_point run_sets(const char *file, const char *const *sets, const char *op, uint32_t devices,
                                 uint64_t bytes)
{
    char *hw = strata_test_source_path(file);
    coll_sweep_point p;
    ck_assert(coll_sweep_run(hw, sets, op, devices, NULL, bytes, &p));
    ck_assert_msg(p.ok, "%s %s %" G_GUINT64_FORMAT ": %s", file, op, bytes, p.message);
    g_free(hw);
    return p;
}

static coll_sweep_point run(const char *file, const char *set, const char *op, uint32_t devices, uint64_t bytes)
{
    const char *sets[] = {set, NULL};
    return run_sets(file, set ? sets : NULL, op, devices, bytes);
}

/* Every fall of the series under the same algorithm, protocol and channels,
 * but those from `pinned` bytes (0: none; a fall pinned below). */
static void assert_no_fall_sets(const char *file, const char *const *sets, const char *op, uint32_t devices,
                                uint64_t lo, uint64_t hi, uint64_t pinned)
{
    size_t n = 0;
    uint64_t *sizes = coll_sweep_sizes(lo, hi, true, 4ull * devices, &n);
    coll_sweep_point *pts = g_new(coll_sweep_point, n);
    for (size_t i = 0; i < n; i++)
        pts[i] = run_sets(file, sets, op, devices, sizes[i]);
    GArray *falls = coll_sweep_falls(pts, n, 1e-9);
    guint same_channels = 0;
    for (guint k = 0; k < falls->len; k++) {
        const coll_sweep_fall *f = &g_array_index(falls, coll_sweep_fall, k);
        const coll_sweep_point *a = &pts[f->a], *b = &pts[f->b];
        if (a->channels == b->channels && a->bytes != pinned) {
            fprintf(stderr, "%s %s: %" G_GUINT64_FORMAT " B %s/%s/%u %.4f us -> %" G_GUINT64_FORMAT
                            " B %.4f us\n",
                    file, op, a->bytes, a->lib_algo, a->lib_proto, a->channels, a->time_s * 1e6, b->bytes,
                    b->time_s * 1e6);
            same_channels++;
        }
    }
    ck_assert_uint_eq(same_channels, 0);
    g_array_free(falls, TRUE);
    g_free(pts);
    g_free(sizes);
}

static void assert_no_fall(const char *file, const char *op, uint32_t devices, uint64_t lo, uint64_t hi,
                           uint64_t pinned)
{
    assert_no_fall_sets(file, NULL, op, devices, lo, hi, pinned);
}

START_TEST(one_node_default_never_falls)
{
    /* 32 B to 64 MiB on 8 ranks: every protocol NCCL's model picks on
     * one node, and the channel counts its cut gives on the way. From 256
     * B NCCL's 16-byte ring chunks (v2.25 runRing, nccl_tuning.c
     * tune_channels) fill fewer ranks: 256 B is 8 chunks of 32 B, 320 B
     * 6 of 48, one of 32 and an empty one, one copy fewer a round on one
     * channel of LL, and the time falls 3 ps (20.602492 -> 20.602489 us),
     * a latency-bound time that NCCL keeps flat there */
    assert_no_fall("configs/hw/dgx-h100.ini", "all-reduce", 8, 32, 64ull << 20, 256);
}
END_TEST

START_TEST(two_nodes_default_never_falls)
{
    /* 64 B to 16 MiB across two nodes: NCCL's picks there (its Tree on
     * LL, whose channel cut falls across channels, and NVLS_TREE); from
     * 114,688 B the cells' overflow (cells_overflow_is_ncclS) */
    assert_no_fall("configs/hw/h100-2x8-ib.ini", "all-reduce", 16, 64, 16ull << 20, 114688);
    assert_no_fall("configs/hw/h100-2x8-ib.ini", "reduce-scatter", 16, 16384, 1ull << 20, 0);
}
END_TEST

START_TEST(rccl_default_never_falls)
{
    /* RCCL on 8 MI300X, 1 KiB to 16 MiB: whatever RCCL's model picks
     * there (MSCCL's allpairs, its rings), the channel cut on the way */
    assert_no_fall("configs/hw/mi300x-8.ini", "all-reduce", 8, 1024, 16ull << 20, 0);
    /* replayed from a graph, one rank a GPU: MSCCL++'s allreduce7 to 1 MiB
     * (hw/rccl_tuning.h), MSCCL's Simple allpairs above */
    static const char *const graph[] = {"interconnect.xgmi.rccl_launch=graph", NULL};
    assert_no_fall_sets("configs/hw/mi300x-8.ini", graph, "all-reduce", 8, 256, 4ull << 20, 0);
}
END_TEST

START_TEST(nvlink_mesh_never_falls)
{
    /* NCCL's rings over a full NVLink mesh (hw/nccl_mesh.h): one Snellius
     * node of 4 H100s, as held-out set 20 runs it (NCCL 2.19's tables, one
     * process for the 4 GPUs), 1 KiB to 128 MiB of each collective */
    static const char *const sets[] = {"hardware.devices=4", "interconnect.nvlink.nccl_version=2.19",
                                       "interconnect.nvlink.nccl_ranks_per_process=4", NULL};
    static const char *const ops[] = {"all-reduce", "all-gather", "reduce-scatter"};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        assert_no_fall_sets("validation/held-out/hw/snellius-h100-ib.ini", sets, ops[i], 4, 1024, 128ull << 20, 0);
}
END_TEST

START_TEST(efa_p5_two_nodes_never_falls)
{
    /* 2 x 8 H100 over EFA (validation/hw/p5-efa.ini, aws-ofi-nccl's RDMA
     * protocol), held-out set 6's NCCL 2.25: 1 KiB to 1 MiB, Tree on LL
     * then LL128. Before wave 38 a Tree/LL step of at most 8192 wire bytes
     * paid the eager copy and a larger one not, so 4 KiB (8 KiB on the wire,
     * one channel) took 52.7 us and 5 KiB 49.0: a tree's control message
     * arrives first, and the small message is an RDMA write too
     * (net_protocol.c) */
    static const char *const sets[] = {"hardware.devices=16", "interconnect.nvlink.nccl_version=2.25",
                                       "interconnect.nvlink.nccl_nvls_chunksize=128KiB", NULL};
    assert_no_fall_sets("validation/hw/p5-efa.ini", sets, "all-reduce", 16, 1024, 1ull << 20, 0);
}
END_TEST

START_TEST(gib_one_gpu_a_node_staged_never_falls)
{
    /* Two A3 Ultra VMs of one H200 and one NIC each, the NIC on the other
     * CPU socket and NCCL's buffers in host memory (held-out set 4's 2x1
     * runs: [network] socket_link_bandwidth, hw_network.c), under gIB's
     * tuner table (Tree/LL, Ring/LL128, Ring/Simple, Tree/Simple by size):
     * 1 KiB to 64 MiB of all-reduce and all-gather */
    static const char *const sets[] = {"hardware.devices=2", "hardware.devices_per_host=1",
                                       "interconnect.nvlink.domain=1", "interconnect.nvlink.nccl_version=2.26",
                                       "network.roce.socket_link_bandwidth=40GB/s", NULL};
    static const char *const ops[] = {"all-reduce", "all-gather"};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        assert_no_fall_sets("validation/held-out/hw/gcp-a3-ultra.ini", sets, ops[i], 2, 1024, 64ull << 20, 0);
}
END_TEST

START_TEST(channel_cut_is_ncclS)
{
    /* Ring LL over 16 ranks (two nodes): nt = NCCL_LL_MAX_NTHREADS 512,
     * threadThreshold = NCCL_LL_THREAD_THRESHOLD 8 x nRanks 16 = 128
     * (tuning.cc: the ring's LL threshold times nRanks), so nc falls while
     * nBytes < nc x 65,536. A reduce-scatter's nBytes is its IN
     * (ncclFuncMaxSendRecvCount: count x nRanks), the `bytes` generated:
     * 114,688 < 2 x 65,536, one channel; 131,072 is not, two. Then the
     * cells (v2.30, trafficPerByte nRanks 16, x 4 on LL: 64; cell =
     * 32,768 / 64 = 512 B of a rank's part): 114,688 B, trafficPerChannel
     * 114,688 / 1, 14 cells of 7,168 B, divUp(114,688, 32,768) = 4 a
     * channel: 4 channels (4, 4, 4, 2 cells); 131,072 B, 65,536 a channel
     * of 2: 16 cells, 2 a channel, 8 channels. The cut still halves each
     * channel's share: the larger buffer ends sooner, in NCCL as here. */
    const char *ring = "interconnect.nvlink.nccl_algo=Ring";
    coll_sweep_point a = run("configs/hw/h100-2x8-ib.ini", ring, "reduce-scatter", 16, 114688);
    coll_sweep_point b = run("configs/hw/h100-2x8-ib.ini", ring, "reduce-scatter", 16, 131072);
    ck_assert_str_eq(a.lib_proto, "LL");
    ck_assert_str_eq(b.lib_proto, "LL");
    ck_assert_uint_eq(a.channels, 4);
    ck_assert_uint_eq(b.channels, 8);
    ck_assert_double_lt(b.time_s, a.time_s);
    /* Tree LL on one node: threshold 8 (not times nRanks), nt 512: nc
     * falls while nBytes < nc x 4,096: 14,336 B gets 3 channels, 16,384
     * 4. But the cells undo that fall (v2.30: trafficPerByte 2, x 4 on
     * LL: cell 32,768 / 8 = 4,096 B): 14,336 B, trafficPerChannel
     * divUp(28,672 / 3, 16) x 16 = 9,568, one cell a channel, 4 cells:
     * 4 channels of 4,096, 4,096, 4,096, 2,048 B; 16,384: 4 of 4,096.
     * The largest channel the same, the same time (it fell 1.3% under
     * the even split, 4,779 B a channel) */
    const char *tree = "interconnect.nvlink.nccl_algo=Tree";
    a = run("configs/hw/dgx-h100.ini", tree, "all-reduce", 8, 14336);
    b = run("configs/hw/dgx-h100.ini", tree, "all-reduce", 8, 16384);
    ck_assert_str_eq(a.lib_proto, "LL");
    ck_assert_str_eq(b.lib_proto, "LL");
    ck_assert_uint_eq(a.channels, 4);
    ck_assert_uint_eq(b.channels, 4);
    ck_assert_double_eq_tol(b.time_s, a.time_s, 1e-12);
    /* RCCL's own cut (ROCm/rccl src/enqueue.cc getChannnelThreadInfo, the
     * same loop, 256 threads): Ring LL on 8 MI300X, threshold 8 x 8 ranks
     * = 64, 16,384 B a channel; an all-gather's nBytes is its OUT: 40,960
     * B on 2 channels (20,480 each), 49,152 on 3 (16,384 each) */
    a = run("configs/hw/mi300x-8.ini", NULL, "all-gather", 8, 40960);
    b = run("configs/hw/mi300x-8.ini", NULL, "all-gather", 8, 49152);
    ck_assert_str_eq(a.lib_algo, "Ring");
    ck_assert_str_eq(b.lib_proto, "LL");
    ck_assert_uint_eq(a.channels, 2);
    ck_assert_uint_eq(b.channels, 3);
    ck_assert_double_lt(b.time_s, a.time_s);
}
END_TEST

START_TEST(tree_ll128_chunk_is_ncclS)
{
    /* Tree LL128 on one DGX H100 node, 24 channels (12 of the ring graph,
     * doubled): nstepsLL128 = 1 + log2(1) + 0.1 x 8 = 1.8, so the chunk
     * (576,000 B) halves while a channel's bytes / chunk < 14.4 and above
     * 131,072, then while < 3.6 and above 32,768 (calcCollChunking on
     * each channel's cells, nChannels = 1). Cells of 16,384 B (v2.30,
     * trafficPerByte 2: 32,768 of traffic). 3 MiB: trafficPerChannel
     * 262,144, 8 cells a channel, 192 cells: 24 channels of 131,072 B;
     * chunk 72,000, then 131,072 / 36,000 = 3 < 3.6: 18,000, 8 chunks.
     * 3.25 MiB (3,407,872): divUp(6,815,744 / 24, 16) x 16 = 284,000, 9
     * cells a channel, 208 cells: 23 of 147,456 B and one of 16,384;
     * 147,456 / 36,000 = 4: chunk 36,000, 5 chunks. Fewer, larger steps:
     * the larger buffer ends sooner, in NCCL as here. (3.5 MiB, the
     * even split's case, runs 23 channels of 163,840 B and does not fall.) */
    const char *tree = "interconnect.nvlink.nccl_algo=Tree";
    coll_sweep_point a = run("configs/hw/dgx-h100.ini", tree, "all-reduce", 8, 3145728);
    coll_sweep_point b = run("configs/hw/dgx-h100.ini", tree, "all-reduce", 8, 3407872);
    ck_assert_str_eq(a.lib_proto, "LL128");
    ck_assert_str_eq(b.lib_proto, "LL128");
    ck_assert_uint_eq(a.channels, 24);
    ck_assert_uint_eq(b.channels, 24);
    ck_assert_double_lt(b.time_s, a.time_s);
}
END_TEST

START_TEST(cells_overflow_is_ncclS)
{
    /* Tree LL across two nodes of 8 H100 (16 ranks; the communicator's 16
     * channels: the ring graph through the NICs, 8, doubled), NCCL's own
     * choice, v2.30. The cut keeps 16 channels (nBytes >= 16 x 4,096).
     * Cells: trafficPerByte 2 x 4 on LL, 4,096 B a cell. 114,688 B:
     * trafficPerChannel divUp(229,376 / 16, 16) x 16 = 14,336, one cell a
     * channel, 28 cells: more than 16 channels, so nMid = 14, cellsPerChannel
     * = 27 / 15 = 1, cellsHi = 1 + 27 % 15 = 13: the last channel carries
     * 53,248 B. 131,072 B: 16,384 a channel, 32 cells, overflow: 31 / 15 =
     * 2 cells a middle channel, cellsHi 2 + 1 = 3 (12,288 B). The last
     * channel's share shrinks: the larger buffer ends sooner. */
    coll_sweep_point a = run("configs/hw/h100-2x8-ib.ini", NULL, "all-reduce", 16, 114688);
    coll_sweep_point b = run("configs/hw/h100-2x8-ib.ini", NULL, "all-reduce", 16, 131072);
    ck_assert_str_eq(a.lib_algo, "Tree");
    ck_assert_str_eq(b.lib_algo, "Tree");
    ck_assert_str_eq(a.lib_proto, "LL");
    ck_assert_str_eq(b.lib_proto, "LL");
    ck_assert_uint_eq(a.channels, 16);
    ck_assert_uint_eq(b.channels, 16);
    ck_assert_double_lt(b.time_s, a.time_s);
}
END_TEST

static Suite *coll_monotone_suite(void)
{
    Suite *s = suite_create("coll_monotone");
    TCase *tc = tcase_create("coll_monotone");
    /* a hang guard: two_nodes_default_never_falls takes about 50 s under the
     * sanitizers on a loaded machine (estimated from CI's ASan run), past a third of 120 s */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, one_node_default_never_falls);
    tcase_add_test(tc, two_nodes_default_never_falls);
    tcase_add_test(tc, rccl_default_never_falls);
    tcase_add_test(tc, nvlink_mesh_never_falls);
    tcase_add_test(tc, efa_p5_two_nodes_never_falls);
    tcase_add_test(tc, gib_one_gpu_a_node_staged_never_falls);
    tcase_add_test(tc, channel_cut_is_ncclS);
    tcase_add_test(tc, tree_ll128_chunk_is_ncclS);
    tcase_add_test(tc, cells_overflow_is_ncclS);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(coll_monotone_suite()); }
