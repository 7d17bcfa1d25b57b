/*
 * test_nccl.c: NCCL as the collective implementation (sim/hw/
 * nccl_tuning.h, hw/coll_impl_nccl.c; algo=nccl in
 * models/collective/algo_nccl.c): NCCL's choice of algorithm, protocol
 * and channels at its crossover sizes, derived by hand
 * from NCCL's tables; an LL all-reduce and an NVLS all-reduce simulated,
 * their times derived by hand; a ring reduce-scatter reducing as it
 * receives; the hardware file's collectives= key.
 *
 * NCCL's model on one node of 8 GPUs (tuning.cc, NVLink latencies, "N1"
 * columns; bw = graph channels x per-channel GB/s; ring algorithm
 * bandwidth = bus x n / (2(n-1)) = bus x 8/14 for an all-reduce):
 *   A100 (ampere, 12 x 20 GB/s = 240):
 *     ring LL      6.6 + 14 x 0.6 = 15.0 us, min(87.7, 240 x .5) x 8/14 = 50.1143 GB/s
 *     ring LL128   14 + 14 x 1.9 = 40.6 us, min(240 x .92, 12 x 20) x 8/14 = 126.1714 GB/s
 *     ring Simple  8.4 + 14 x 3.4 = 56.0 us, 240 x 8/14 = 137.1429 GB/s
 *   LL = LL128 at 25.6 us / (1/50114.3 - 1/126171.4 us/B) = 2,128,249 B;
 *   LL128 = Simple at 15.4 / (1/126171.4 - 1/137142.9) = 24,288,000 B.
 *   The tree's estimates stay above the ring's there (its bandwidth is
 *   halved and cut by its correction factor: LL128 at 2 MiB, 31.5 us +
 *   B / (171.7 x .5 x .6 GB/s) = 72 us against the ring's 57 us).
 *   H100 (hopper, 12 x 30 GB/s = 360, NVLS):
 *     NVLS graph   8 channels (one per GPU) at 40 GB/s: search.cc's
 *                  sm90SpeedArrayIntra {60, 50, 40, ...}, the first speed s
 *                  with (8 + 1) s <= 360 (9 x 50 = 450 does not fit)
 *     ring LL      15.0 us, min(141, 180) x 8/14 = 80.5714 GB/s
 *     NVLS Simple  25 us (its whole latency), 40 x .85 x 7/8 x 2 x 8 = 476
 *                  GB/s of busbw (NCCL's maintainer: "a peak busBw of
 *                  ~480GB/s (algbw ~275GB/s)", nccl-tests#212), x 8/14 = 272 GB/s
 *   LL = NVLS at 10 us / (1/80571.4 - 1/272000) = 1,144,836 B; LL128 and
 *   Simple ring (40.6, 56 us; 189.3, 205.7 GB/s) never beat NVLS.
 */
#include <inttypes.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "hw/hw.h"
#include "collective/coll_algo.h"
#include "hw/coll_impl.h"
#include "hw/nccl_tuning.h"

static const strata_nccl_comm a100 = {.arch = STRATA_NCCL_AMPERE, .ranks = 8, .graph_channels = 12,
                                      .channel_gbs = 20.0, .nvls = false};
static const strata_nccl_comm h100 = {.arch = STRATA_NCCL_HOPPER, .ranks = 8, .graph_channels = 12,
                                      .channel_gbs = 30.0, .nvls = true};

static strata_nccl_choice choose(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes)
{
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(c, kind, bytes, &ch));
    return ch;
}

START_TEST(model_figures_are_nccls)
{
    double lat, bw;
    ck_assert(strata_nccl_model(&a100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 15.0, 1e-9);
    ck_assert_double_eq_tol(bw, 87.7 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_model(&a100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 40.6, 1e-9);
    ck_assert_double_eq_tol(bw, 220.8 * 8 / 14, 1e-9);
    ck_assert(strata_nccl_model(&a100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 56.0, 1e-9);
    ck_assert_double_eq_tol(bw, 240.0 * 8 / 14, 1e-9);
    /* no NVLS on the A100, none but Simple on the H100; no tree all-gather */
    ck_assert(!strata_nccl_model(&a100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert(!strata_nccl_model(&h100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_LL, &lat, &bw));
    ck_assert(!strata_nccl_model(&h100, STRATA_OP_ALL_GATHER, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert(strata_nccl_model(&h100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 25.0, 1e-9);
    ck_assert_double_eq_tol(bw, 272.0, 1e-4);
    uint32_t nvls_channels;
    double nvls_gbs;
    ck_assert(strata_nccl_nvls_graph(&h100, &nvls_channels, &nvls_gbs));
    ck_assert_uint_eq(nvls_channels, 8);
    ck_assert_double_eq_tol(nvls_gbs, 40.0, 1e-12);
    ck_assert(!strata_nccl_nvls_graph(&a100, &nvls_channels, &nvls_gbs));
    /* 8 ranks on 1 x 2 GB/s of NVLink: 9 x 3 GB/s, the slowest speed, does
     * not fit, so no NVLS graph and no NVLS */
    const strata_nccl_comm thin = {.arch = STRATA_NCCL_HOPPER, .ranks = 8, .graph_channels = 1, .channel_gbs = 2.0,
                                   .nvls = true};
    ck_assert(!strata_nccl_nvls_graph(&thin, &nvls_channels, &nvls_gbs));
    ck_assert(!strata_nccl_model(&thin, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    /* all-gather on NVLS: busBw = 8 x 40 x .85 x 7/8 x 7/8 = 208.25 GB/s,
     * not converted to algorithm bandwidth (tuning.cc) */
    ck_assert(strata_nccl_model(&h100, STRATA_OP_ALL_GATHER, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 208.25, 1e-4);
    /* the estimate: 15 us + 1 MB / 50.1143 GB/s */
    ck_assert_double_eq_tol(strata_nccl_time_us(&a100, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_LL, 1000000),
                            15.0 + 1e6 / (87.7 * 8 / 14 * 1000), 1e-6);
    ck_assert(!strata_nccl_choose(&a100, STRATA_OP_ALL_TO_ALL, 1 << 20, &(strata_nccl_choice){0}));
}
END_TEST

START_TEST(protocol_choice_at_the_crossovers)
{
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    strata_nccl_choice c = choose(&a100, ar, 2100000); /* below 2,128,249 */
    ck_assert(c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_LL);
    c = choose(&a100, ar, 2160000);
    ck_assert(c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_LL128);
    c = choose(&a100, ar, 24200000); /* below 24,288,000 */
    ck_assert(c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_LL128);
    c = choose(&a100, ar, 24400000);
    ck_assert(c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(c.time_us, 56.0 + 24400000 / (240.0 * 8 / 14 * 1000), 1e-6);
    c = choose(&h100, ar, 1140000); /* below 1,144,836 */
    ck_assert(c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_LL);
    ck_assert_uint_eq(c.chunk_bytes, 0);
    c = choose(&h100, ar, 1150000);
    ck_assert(c.algo == STRATA_NCCL_NVLS && c.proto == STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(c.channels, 16); /* nvls.cc NVLS_NCHANNELS_SM90 */
    ck_assert_double_eq_tol(c.nvls_efficiency, 0.85, 1e-6);
    /* calcCollChunking: 16 channels x 8 heads = 128 concurrent ops; 1.15
     * MB < 2 x 128 x 32 KiB = 8 MiB, so 128 KiB -> 64 KiB -> 32 KiB -> 16 KiB */
    ck_assert_uint_eq(c.chunk_bytes, 16384);
    /* 64 MiB < 64 x 128 x 128 KiB = 1 GiB: 64 KiB; not < 8 x 128 x 64 KiB
     * = 64 MiB: stays 64 KiB */
    ck_assert_uint_eq(choose(&h100, ar, 64ull << 20).chunk_bytes, 65536);
    c = choose(&h100, ar, 16ull << 30); /* not < 1 GiB: 128 KiB */
    ck_assert(c.algo == STRATA_NCCL_NVLS);
    ck_assert_uint_eq(c.chunk_bytes, 131072);
}
END_TEST

/* enqueue.cc: nc = 24 (2 x 12 graph channels) lowered while bytes < nc x
 * nt x threshold. Ring LL: nt 512, threshold 8 x 8 ranks = 64, so nc x
 * 32 KiB: 32 KiB -> 1 channel (and nt stays 512: 32 KiB is not below 1 x
 * 512 x 64); 512 KiB -> 16; 8 KiB -> 1 channel, nt 512 -> 256 -> 128
 * (8 KiB < 512 x 64 and < 256 x 64, not < 128 x 64). Simple: nt 512,
 * threshold 64: 24 channels from 24 x 32 KiB = 768 KiB. */
START_TEST(channels_follow_enqueue)
{
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    ck_assert_uint_eq(choose(&a100, ar, 32768).channels, 1);
    ck_assert_uint_eq(choose(&a100, ar, 32768).threads, 512);
    ck_assert_uint_eq(choose(&a100, ar, 524288).channels, 16);
    ck_assert_uint_eq(choose(&a100, ar, 8192).channels, 1);
    ck_assert_uint_eq(choose(&a100, ar, 8192).threads, 128);
    ck_assert_uint_eq(choose(&a100, ar, 64ull << 20).channels, 24);
}
END_TEST

/* NCCL's ring reduce-scatter on Simple (what it runs for 64 MiB on an 8x
 * A100: LL128 = Simple at (32.2 - 27.3) us / (1/252.3 - 1/274.3 B/us),
 * about 15.4 MB): ring's 7 rounds of 8 steps, each moving one 64 MiB / 8 =
 * 8 MiB chunk; every copy carries it as NVLink packets, 10 MiB, with a
 * flag after it (Simple), and reduces it as it arrives (fused: on the
 * next lane, alongside the copy), as NCCL's recvReduceSend does. */
START_TEST(ring_reduce_scatter_reduces_as_it_receives)
{
    strata_nccl_choice ch = choose(&a100, STRATA_OP_REDUCE_SCATTER, 64ull << 20);
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    strata_coll_shape sh = {.kind = STRATA_OP_REDUCE_SCATTER, .algo = strata_coll_algo_find("nccl"), .n_dims = 1, .dims = {8},
                            .in_bytes = 64ull << 20, .channels = ch.channels,
                            .tune = {.algo = ch.algo, .proto = ch.proto}};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 7);
    ck_assert_uint_eq(steps->len, 56);
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert(st->reduce && st->fused && st->handshake);
        ck_assert_uint_eq(st->bytes, 8ull << 20);
        ck_assert_uint_eq(st->wire_bytes, 10ull << 20);
    }
    g_array_free(steps, TRUE);
}
END_TEST

/* Simple's wait per step inside a node (nccl_simple_sync): a100-8.ini sets
 * 3.336 us (NVIDIA/nccl-tests#123's `-t` table: Simple's 4.79 us a ring
 * step less its data's and flag's flight, 2 x 0.725 us). tune hands it to
 * the Simple protocol only (64 MiB: Simple, 8 KiB: LL, the choices above),
 * and the schedule puts it before every handshake copy (the ring
 * reduce-scatter's 56, all inside the node); LL128 waits none. */
START_TEST(simple_waits_its_sync_per_step)
{
    strata_hw *hw = strata_test_load_hw("a100-8", NULL);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 64ull << 20, 0, &t, NULL));
    ck_assert(t.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t.simple_sync_s, 3.336e-6, 1e-15);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 8192, 0, &t, NULL));
    ck_assert(t.proto == STRATA_NCCL_LL);
    ck_assert_double_eq(t.simple_sync_s, 0);
    strata_hw_free(hw);
    for (int proto = 0; proto < 2; proto++) {
        strata_coll_shape sh = {.kind = STRATA_OP_REDUCE_SCATTER, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                                .dims = {8}, .in_bytes = 64ull << 20, .channels = 24,
                                .tune = {.algo = STRATA_NCCL_RING,
                                         .proto = proto ? STRATA_NCCL_LL128 : STRATA_NCCL_SIMPLE,
                                         .simple_sync_s = 3.336e-6}};
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 7);
        ck_assert_uint_eq(steps->len, 56);
        for (guint i = 0; i < steps->len; i++) {
            const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
            ck_assert(st->handshake == !proto);
            ck_assert_double_eq(st->delay_s, proto ? 0 : 3.336e-6);
        }
        g_array_free(steps, TRUE);
    }
}
END_TEST

static double run_collective(const char *hw, const char *text, char **algo)
{
    return strata_test_run_collective(hw, text, algo, NULL);
}

/* An all-reduce of 8 KiB on a100-8.ini, no algo= (collectives = nccl):
 * NCCL picks ring LL, its cut 1 channel (above); its cells (enqueue.cc
 * scheduleCollTasksToPlan, v2.30: trafficPerByte 2 x 4 on LL, 4,096 B a
 * cell, trafficPerChannel 16,384 = one cell) put the 2 cells on 2
 * channels. ring_loops: a loop would be 2 channels x 8 ranks x 32 KiB, so
 * each channel and rank's chunk shrinks to 8 KiB / 16 = 512 B, 1 KiB a
 * rank over both; 14 steps of one round each, no separate flag (LL's flags ride
 * in its lines). A step's copy carries 1 KiB as LL lines (2x) in NVLink
 * packets (5/4): 2560 bytes, over two links of 0.3625 us at 300 GB/s;
 * its fused reduction (1 KiB) ends first. Before the first round, NCCL's
 * base latency of ring LL, 6.6 us. LL waits no nccl_simple_sync. T = 6.6
 * us + 14 x (0.725 us + 2560 B / 300 GB/s) = 16.8695 us. */
START_TEST(ll_all_reduce_of_8_kib)
{
    char *algo = NULL, *nccl = NULL;
    double t = strata_test_run_collective("configs/hw/a100-8.ini",
                                   "strata-trace 1\noption mesh=data:8\nalloc buf 8KiB dtype=f32\n"
                                   "all-reduce buf axis=data\nfree buf\n", &algo, &nccl);
    ck_assert_str_eq(algo, "nccl");
    ck_assert_str_eq(nccl, "Ring/LL/2"); /* the results say what NCCL chose */
    g_free(nccl);
    ck_assert_double_eq_tol(t, 6.6e-6 + 14 * (0.725e-6 + 2560 / 300e9), 1e-10);
    g_free(algo);
}
END_TEST

/* The time of the trace's one collective on hw (a path under the source
 * tree) with NCCL_ALGO=algo, NCCL_PROTO=proto and the extra `--set`s of
 * sets (NULL-terminated; NULL: none); *nccl is "ALGO/PROTO/CHANNELS". */
static double forced_time(const char *hw_file, const char *trace_text, const char *algo, const char *proto,
                          const char *const *sets, char **nccl)
{
    char *trace = strata_test_write_temp("hop-XXXXXX.trace", trace_text);
    char *json = g_strconcat(trace, ".json", NULL), *hw = strata_test_source_path(hw_file);
    char *set = g_strdup_printf("interconnect.nvlink.nccl_proto=%s", proto);
    char *algo_set = g_strdup_printf("interconnect.nvlink.nccl_algo=%s", algo);
    const char *argv[] = {"run", "--hw", hw, "--trace", trace, "--set", algo_set,
                          "--set", set, "--json", json, "-q", NULL};
    strata_cli_result r = strata_test_run_cli_sets(argv, sets);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *c = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "collectives"), 0);
    JsonObject *n = json_object_get_object_member(c, "nccl");
    *nccl = g_strdup_printf("%s/%s/%" G_GINT64_FORMAT, json_object_get_string_member(n, "algorithm"),
                            json_object_get_string_member(n, "protocol"), json_object_get_int_member(n, "channels"));
    double t = json_object_get_double_member(c, "time_s");
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_unlink(json);
    g_unlink(trace);
    g_free(set);
    g_free(algo_set);
    g_free(hw);
    g_free(json);
    g_free(trace);
    return t;
}

/* forced_time with NCCL_ALGO=Ring. */
static double ring_time(const char *hw_file, const char *trace_text, const char *proto, const char *const *sets,
                        char **nccl)
{
    return forced_time(hw_file, trace_text, "Ring", proto, sets, nccl);
}

/* collective 0's time of an 8 B all-reduce over 8 ranks on dgx-h100.ini
 * with NCCL held to Ring and `proto` (the run's --set, as NCCL_ALGO and
 * NCCL_PROTO would hold it), and the results' ALGORITHM/PROTOCOL/CHANNELS */
static double dgx_h100_ring_8_bytes(const char *proto, char **nccl)
{
    return ring_time("configs/hw/dgx-h100.ini",
                     "strata-trace 1\noption mesh=data:8\nalloc buf 8 dtype=f32\nall-reduce buf axis=data\nfree buf\n",
                     proto, NULL, nccl);
}

/* One ring hop per step on dgx-h100.ini: what a step of NCCL's ring costs
 * in latency, by protocol (NVIDIA/nccl @5067397 src/device/prims_ll.h,
 * prims_ll128.h, prims_simple.h). LL: storeLL writes data and flag in one
 * 16-byte st.volatile, the receiver's readLL polls that line; LL128: the
 * flag thread's 8 bytes ride in each 128-byte line (store128). Their
 * credits (postRecv: the receiver's head += 1 a step) are returned every
 * step but waited for only NCCL_STEPS (8) steps later (waitSend: head + 8
 * < step + 1), long after they arrive: so a step costs one store's flight,
 * the route GPU -> NVSwitch -> GPU, 2 links x 0.5 us = 1 us. Simple: the
 * data's stores, then (postPeer, after a fence) the tail flag: two
 * flights. An 8 B all-reduce over 8 ranks on one channel is 2(8-1) = 14
 * steps of 1 B a rank, one after the other; before them NCCL's base
 * latency of Ring (tuning.cc baseLat: LL 6.6 us, LL128 14, Simple 8.4);
 * no nccl_simple_sync in the file. LL 6.6 + 14 x 1 = 20.6 us, LL128 14 +
 * 14 x 1 = 28.0 us, Simple 8.4 + 14 x 2 x 1 = 36.4 us. The bytes (at
 * most 4 a copy, 28 copies at 450 GB/s: < 0.25 ns) are inside the 1 ns
 * tolerance; a flight more or less a step moves a time by 14 us. */
START_TEST(ring_step_pays_one_flight_on_ll_two_on_simple)
{
    static const struct {
        const char *proto;
        double base_s, flights;
    } want[] = {{"LL", 6.6e-6, 1}, {"LL128", 14e-6, 1}, {"Simple", 8.4e-6, 2}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        char *nccl = NULL;
        double t = dgx_h100_ring_8_bytes(want[i].proto, &nccl);
        char *label = g_strdup_printf("Ring/%s/1", want[i].proto);
        ck_assert_str_eq(nccl, label);
        ck_assert_double_eq_tol(t, want[i].base_s + 14 * want[i].flights * (2 * 0.5e-6), 1e-9);
        g_free(label);
        g_free(nccl);
    }
}
END_TEST

/* One ring step across the network (docs/clusters.md, "One step across
 * the network"): an all-gather of 8 B a rank over two H100s, each alone in
 * its node (h100-2x8-ib.ini with devices = 2, devices_per_host = 1,
 * domain = 1), NCCL held to Ring: the one step of the ring crosses between
 * the nodes once (rank 0's chunk to rank 1 and rank 1's to rank 0, at
 * once). With one GPU a node NCCL's model takes the network step from the
 * Tree row ("With ppn=1 latencies are fully exposed", v2.28.7-1
 * tuning.cc l. 355-356): hwLatencies[NET][TREE] = LL 5.0, LL128 8.5,
 * Simple 14 us. That figure is the whole crossing, from the sender's
 * stores to the receiver's poll: the route between the two NICs (two
 * links of the rail, 1 us each, ESTIMATE) is part of it, and the schedule
 * waits the rest (coll_impl_nccl.c: net_step_s = hwLat - route). Before
 * it, the Ring base latency (baseLat: LL 6.6, LL128 14, Simple 8.4 us).
 * LL 6.6 + 5.0 = 11.6 us, LL128 14 + 8.5 = 22.5 us, Simple 8.4 + 14 =
 * 22.4 us; the bytes (16 B of LL lines at 50 GB/s: 0.3 ns) are inside the
 * 1 ns tolerance. The same with the NIC links at 0.5 us: the route is
 * inside the step, never on top of it (charged twice, LL would take 13.6
 * us at 1 us a link; at the Ring row's 2.7 us, 9.3 us). */
START_TEST(net_step_is_nccls_exposed_latency)
{
    static const struct {
        const char *proto;
        double base_s, net_s;
    } want[] = {{"LL", 6.6e-6, 5.0e-6}, {"LL128", 14e-6, 8.5e-6}, {"Simple", 8.4e-6, 14e-6}};
    static const char *const trace = "strata-trace 1\noption mesh=data:2\nalloc s 8\nalloc r 16\n"
                                     "all-gather r s axis=data\n";
    static const char *const links[] = {"network.ib.latency=1us", "network.ib.latency=0.5us"};
    for (size_t l = 0; l < G_N_ELEMENTS(links); l++)
        for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
            const char *sets[] = {"hardware.devices=2", "hardware.devices_per_host=1", "interconnect.nvlink.domain=1",
                                  links[l], NULL};
            char *nccl = NULL;
            double t = ring_time("configs/hw/h100-2x8-ib.ini", trace, want[i].proto, sets, &nccl);
            char *label = g_strdup_printf("Ring/%s/", want[i].proto);
            ck_assert_msg(g_str_has_prefix(nccl, label), "%s", nccl);
            ck_assert_double_eq_tol(t, want[i].base_s + want[i].net_s, 1e-9);
            g_free(label);
            g_free(nccl);
        }
}
END_TEST

/* An all-reduce of 64 MiB on dgx-h100.ini (nvls = true): NCCL picks NVLS
 * on 16 channels, chunks of 64 KiB (calcCollChunking, above). Pieces of
 * 16 x 8 x 64 KiB = 8 MiB: 8 pieces, 11 rounds. torch's and
 * nccl-tests' buffers are not registered, so NCCL's kernel scatters each
 * piece into its NVLS buffer and gathers it out (all_reduce.h's copy
 * path): round k copies piece k in place through the GPU's HBM (8 MiB
 * read and 8 written at 3.35 TB/s: 5.008 us), round k+1 reduces it, k+2
 * multicasts it, k+3 copies it out. Round 0 is the first scatter alone,
 * round 1 the first reduction (and a scatter), rounds 2-8 reduce piece
 * k-1 and multicast piece k-2, round 9 multicasts piece 7 (and gathers),
 * round 10 is the last gather alone. Every copy carries ceil(ceil(ceil(8 MiB x 9 / 112) x 5/4) x
 * 1000/850) = 991,303 bytes (the per-link load of NVLink SHARP, (n+1)/n
 * of the piece per direction, over 2(n-1) copies, in NVLink packets, at
 * NCCL's NVLS efficiency 0.85). Each GPU's link to the switch (450 GB/s a
 * direction, 0.5 us) carries 7 copies each way in rounds 1 and 9 and 14
 * in rounds 2-8, all at once; a route crosses 2 links (1 us); the fused
 * reductions (7 x 3 x 1 MiB through the 3.35 TB/s HBM) and the local
 * copies beside them end first. Before it, 25 us (NVLS's latency in
 * NCCL's model, its whole fixed cost). The copy warps keep their pace
 * (algo_nccl.c nvls_pace): the 8 scatter warps copy a step of 8 heads x
 * 64 KiB in 8 x ceil(16 hunks / 8) = 16 load latencies from HBM (500 ns,
 * the file's ESTIMATE): 8 us, so round 0 takes 8 us, not the 5.008 us of
 * its copy (in round 1 the reduction takes longer); the 7 gather warps'
 * 8 x 3 loads from the L2 (150 ns) take 3.6 us, less than the last
 * gather's copy. Every switch copy is a step of NCCL's Simple protocol,
 * which posts its flag after the data (prims_simple.h postPeer: a fence,
 * then the tail store the next role polls), so an 8-byte flag follows it
 * on its route: 1 us more and 7 or 14 x 8 bytes on a link in rounds 1-9.
 * The reducer polls its flag in the ranks' own memory through the switch
 * (transport/nvls.cc: the multicast credit, NCCL_NVLS_MIN_POLL), a round
 * trip: its flag crosses the route again, 1 us more and 7 x 8 bytes on a
 * link (the multicast's flags have ended) in rounds 1-8. T = 25 us + 8 us
 * + 16 MiB / 3.35 TB/s + (7 (w + 16) / 450 GB/s + 3 us) + 7 x ((14 w +
 * 21 x 8) / 450 GB/s + 3 us) + (7 (w + 8) / 450 GB/s + 2 us) = 310.735 us
 * (302.734 us with one flight a flag, 293.733 us without the flags,
 * 290.741 us without the pace either, 280.724 us without the copy path):
 * busbw 378 GB/s, where the ring on Simple reaches at most 450 x 4/5. */
START_TEST(nvls_all_reduce)
{
    char *algo = NULL, *nccl = NULL;
    double t = strata_test_run_collective("configs/hw/dgx-h100.ini",
                                   "strata-trace 1\noption mesh=data:8\nalloc buf 64MiB dtype=f32\n"
                                   "all-reduce buf axis=data\nfree buf\n", &algo, &nccl);
    ck_assert_str_eq(algo, "nccl");
    ck_assert_str_eq(nccl, "NVLS/Simple/16");
    g_free(nccl);
    const double w = 991303, bw = 450e9;
    /* NVLS's fixed cost: its latency in NCCL's model, hwLatencies[NVLINK][NVLS] = 25 us (its base is 0) */
    /* the copy path's first scatter and last gather: 8 MiB read and written in place */
    const double local = 2 * 8388608 / 3.35e12;
    /* the first scatter at the scatter warps' pace: 8 heads x 2 hunks a warp x 500 ns */
    const double scatter = 8 * 2 * 500e-9;
    /* each switch copy's Simple flag after it, on its route: 8 bytes; the
     * reduction's there and back (polled) */
    const double flag = 8;
    const double first = 7 * w / bw + 1e-6 + 2 * (7 * flag / bw + 1e-6);
    const double both = 14 * w / bw + 1e-6 + 14 * flag / bw + 1e-6 + 7 * flag / bw + 1e-6;
    const double last = 7 * w / bw + 1e-6 + 7 * flag / bw + 1e-6;
    ck_assert_double_eq_tol(t, 25e-6 + scatter + local + first + 7 * both + last, 1e-9);
    g_free(algo);
}
END_TEST

/* NVLS's all-gather and reduce-scatter on dgx-h100.ini, NCCL_ALGO=NVLS
 * (NCCL's own pick there is the ring), 8 MiB a rank: round 0 copies the
 * rank's own 8 MiB through its HBM (8 MiB read and 8 written at 3.35
 * TB/s: 5.008 us), round 1 the 7 switch copies into each rank at once,
 * each of w = ceil(ceil(ceil(64 MiB / 7) x 5/4) x 1000/850) = 14,098,503
 * wire bytes (algo_nccl.c: the link's whole load, 64 MiB, in NVLink
 * packets at NVLS's efficiency), over 2 links (1 us) at 450 GB/s; 25 us
 * before (NVLS's latency in NCCL's model). Each switch copy is a step
 * of NCCL's Simple protocol (all_gather.h's bcast role, reduce_scatter.h's
 * reduce role: prims.send, prims.recv), so its flag follows it: 8 bytes
 * on its route, 7 x 8 on a link. All-gather: T = 25 us + 5.008 us +
 * 7 (w + 8) / 450 GB/s + 2 x 1 us = 251.318 us (250.318 us without the
 * flag). The reduce-scatter's reducer polls its flag in the ranks' own
 * memory through the switch (polled: there and back): 7 (w + 16) / 450
 * GB/s + 3 x 1 us, 252.318 us. */
START_TEST(nvls_all_gather_and_reduce_scatter_carry_the_flag)
{
    static const char *const traces[] = {
        "strata-trace 1\noption mesh=data:8\nalloc s 8MiB dtype=f32\nalloc r 64MiB dtype=f32\n"
        "all-gather r s axis=data\n",
        "strata-trace 1\noption mesh=data:8\nalloc s 64MiB dtype=f32\nalloc r 8MiB dtype=f32\n"
        "reduce-scatter r s axis=data\n"};
    const double w = 14098503, bw = 450e9, local = 2 * 8388608 / 3.35e12, flag = 8;
    for (size_t i = 0; i < G_N_ELEMENTS(traces); i++) {
        char *nccl = NULL;
        double t = forced_time("configs/hw/dgx-h100.ini", traces[i], "NVLS", "Simple", NULL, &nccl);
        ck_assert_str_eq(nccl, "NVLS/Simple/16");
        double trips = i == 1 ? 2 : 1; /* the reduce-scatter's flag is polled */
        ck_assert_double_eq_tol(t, 25e-6 + local + 7 * (w + trips * flag) / bw + (1 + trips) * 1e-6, 1e-9);
        g_free(nccl);
    }
}
END_TEST

/* xla on validation/hw/tpu-v5e-ring16.ini (16 chips in a ring, 45 GB/s
 * a link and direction, 1 us: the scaling book's figures): an all-gather
 * of OUT = 16 MiB with no algo= runs bidir-torus, on one axis a ring each
 * way on half of every 1 MiB chunk: 15 rounds of 1 us + 512 KiB / 45 GB/s
 * = 189.763 us (the rank's own chunk copied IN to OUT through its HBM in
 * round 0, 1 MiB at 819 GB/s, ends first). */
START_TEST(xla_all_gather_is_bidirectional)
{
    char *algo = NULL;
    double t = run_collective("validation/hw/tpu-v5e-ring16.ini",
                              "strata-trace 1\noption mesh=data:16\nalloc s 1MiB dtype=f32\nalloc r 16MiB dtype=f32\n"
                              "all-gather r s axis=data\nfree r\nfree s\n", &algo);
    ck_assert_str_eq(algo, "bidir-torus");
    char *nccl = (char *)"unset", *again = NULL;
    strata_test_run_collective("validation/hw/tpu-v5e-ring16.ini",
                        "strata-trace 1\noption mesh=data:16\nalloc s 1MiB dtype=f32\nalloc r 16MiB dtype=f32\n"
                        "all-gather r s axis=data\nfree r\nfree s\n", &again, &nccl);
    ck_assert_ptr_null(nccl); /* no NCCL choice where NCCL does not run */
    g_free(again);
    ck_assert_double_eq_tol(t, 15 * (1e-6 + 524288 / 45e9), 1e-10);
    g_free(algo);
}
END_TEST

/* xla on configs/hw/tpu-v5e-256.ini (16x16 torus with its wrap-around
 * links, 45 GB/s a link and direction, 1 us): an all-gather of OUT = 64
 * MiB over mesh data:256 (devices numbered along a row first) lays the
 * group out as the torus' 16 x 16 (spmd_coll_shape) and runs both
 * dimensions at once (coll_kit_axes.c; the scaling book's
 * V / (W_ici n_axes)): each shard S = 256 KiB in 4 slices of 64 KiB (2
 * rotations x 2 directions). Rounds 1-15, every part's first ring: a link
 * direction carries one part's one slice, 65536 B; rounds 16-30, the
 * last rings, along the other dimension: a row's 16 slices, 1 MiB. So
 * 30 x 1 us + 15 x (65536 + 1048576) B / 45 GB/s = 401.3707 us (the
 * ranks' own shards, IN to OUT at 819 GB/s, end in the first round).
 * One dimension after the other it would be 15 x 1 us + 15 x 128 KiB /
 * 45 GB/s plus 15 x 1 us + 15 x 2 MiB / 45 GB/s = 772.7 us; one ring of
 * 256 (the group as one mesh axis: before spmd_coll_shape split it) about
 * twice that again, its row-to-row steps two links long. */
START_TEST(xla_all_gather_uses_both_torus_axes)
{
    char *algo = NULL;
    double t = run_collective("configs/hw/tpu-v5e-256.ini",
                              "strata-trace 1\noption mesh=data:256\nalloc s 256KiB dtype=bf16\n"
                              "alloc r 64MiB dtype=bf16\nall-gather r s axis=data\nfree r\nfree s\n",
                              &algo);
    ck_assert_str_eq(algo, "bidir-torus");
    ck_assert_double_eq_tol(t, 30 * 1e-6 + 15 * (65536 + 1048576) / 45e9, 1e-10);
    g_free(algo);
}
END_TEST

/* The hardware file: collectives= picks the default; nccl needs its keys. */
START_TEST(hw_declares_the_implementation)
{
    strata_hw *hw = strata_test_load_hw("a100-8", NULL);
    ck_assert_str_eq(strata_hw_coll_impl(hw)->name, "nccl");
    ck_assert_ptr_nonnull(strata_hw_coll_params(hw));
    /* its block as NCCL's model reads it: 12 channels x 20 GB/s, Ampere,
     * no NVLS (nccl_tuning.h): 8 KiB all-reduce over 8 ranks on LL */
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 8192, 0, &t, NULL));
    strata_nccl_choice ch = choose(&a100, STRATA_OP_ALL_REDUCE, 8192);
    /* the tuning's channels: those NCCL's cells fill (run_channels) */
    ck_assert(t.algo == ch.algo && t.proto == ch.proto && t.channels == ch.run_channels);
    ck_assert_double_eq(t.launch_s, ch.base_us * 1e-6);
    strata_hw_free(hw);
    hw = strata_test_load_hw("tpu-v5p-64", NULL);
    ck_assert_str_eq(strata_hw_coll_impl(hw)->name, "xla");
    ck_assert_ptr_null(strata_hw_coll_params(hw));
    strata_hw_free(hw);
    hw = strata_test_load_hw("test-switch8", NULL);
    ck_assert_str_eq(strata_hw_coll_impl(hw)->name, "ideal");
    strata_hw_free(hw);
    static const char *const bad[][2] = {
        {"interconnect.nvlink.collectives=mpi", "expected nccl, rccl, xla or ideal, got 'mpi'"},
        {"interconnect.nvlink.nccl_arch=kepler", "expected volta, ampere, hopper or blackwell, got 'kepler'"},
        {"interconnect.nvlink.nccl_channels=0", "nccl_channels"},
        {"interconnect.nvlink.nvls=maybe", "expected true or false, got 'maybe'"},
        {"interconnect.nvlink.nccl_simple_sync=soon", "nccl_simple_sync"},
    };
    char *path = strata_test_source_path("configs/hw/a100-8.ini");
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *set[] = {bad[i][0], NULL};
        GError *err = NULL;
        ck_assert(!strata_hw_load(path, set, &err));
        ck_assert_msg(strstr(err->message, bad[i][1]) && strstr(err->message, "[interconnect nvlink]"), "%s",
                      err->message);
        g_error_free(err);
    }
    /* nccl without its graph names the missing key */
    path = (g_free(path), strata_test_source_path("configs/hw/test-switch8.ini"));
    const char *set[] = {"interconnect.nvlink.collectives=nccl", NULL};
    GError *err = NULL;
    ck_assert(!strata_hw_load(path, set, &err));
    ck_assert_msg(strstr(err->message, "collectives = nccl: expected nccl_arch too"), "%s", err->message);
    g_error_free(err);
    g_free(path);
}
END_TEST

/* enqueue.cc calcCollChunking (v2.30.7-1 l. 2222-2281, the same from
 * v2.25.1-1): NVLS's chunk starts at the Simple step, buffSizes[SIMPLE] /
 * NCCL_STEPS, and is cut to nvlsChunkSize: min(buffer / 8, NVLS chunk);
 * NVLS_TREE's starts at nvlsChunkSize (no buffer cap). H100, one node of
 * 8: 16 channels x 8 heads = 128 concurrent ops; at 32 GiB no halving row
 * binds for chunks up to 4 MiB (64 x 128 x 4 MiB = 32 GiB, not <):
 *   NCCL_NVLS_CHUNKSIZE 2 MiB, buffer unset (4 MiB): 4 MiB / 8 = 512 KiB
 *   (without the cap: 2 MiB);
 *   2 MiB, NCCL_BUFFSIZE 8 MiB: 1 MiB; 16 MiB: 2 MiB (the cap does not
 *   bind); 256 KiB with the default buffer: 256 KiB (nor here).
 * v2.19.3-1 (computeColl l. 1360): min(buffer / 8, 131072), no
 * NCCL_NVLS_CHUNKSIZE: 2 MiB set gives 128 KiB; with a 512 KiB buffer the
 * step, 64 KiB. */
START_TEST(nvls_chunk_is_capped_by_the_simple_step)
{
    const struct {
        const char *version;
        uint64_t nvls_chunk, buff, chunk;
    } rows[] = {{NULL, 2u << 20, 0, 512u << 10},        {NULL, 2u << 20, 8u << 20, 1u << 20},
                {NULL, 2u << 20, 16u << 20, 2u << 20},  {NULL, 256u << 10, 0, 256u << 10},
                {NULL, 0, 0, 128u << 10},               {"2.19", 2u << 20, 0, 128u << 10},
                {"2.19", 0, 512u << 10, 64u << 10},     {"2.25", 2u << 20, 0, 512u << 10},
                {"2.28", 2u << 20, 8u << 20, 1u << 20}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_nccl_comm c = h100;
        c.version = rows[i].version ? strata_nccl_version_find(rows[i].version) : NULL;
        ck_assert(!rows[i].version || c.version);
        c.nvls_chunk_bytes = rows[i].nvls_chunk;
        c.simple_buff_bytes = rows[i].buff;
        strata_nccl_choice ch = choose(&c, STRATA_OP_ALL_REDUCE, 32ull << 30);
        ck_assert_int_eq(ch.algo, STRATA_NCCL_NVLS);
        ck_assert_msg(ch.chunk_bytes == rows[i].chunk, "row %zu: chunk %" PRIu64 ", want %" PRIu64, i,
                      ch.chunk_bytes, rows[i].chunk);
    }
}
END_TEST

/* NVLS_TREE across 2 nodes of 8 H100s (h100-16x8-ib; 16 channels x 8 NIC
 * heads = 128 ops): chunkSize = min(nvlsChunkSize, the tree's maximum,
 * unset at 2 nodes: the chunk), no buffer cap, so NCCL_NVLS_CHUNKSIZE 2
 * MiB with the default 4 MiB buffer runs 2 MiB at 16 GiB (not < 32 x 128
 * x 2 MiB = 8 GiB), not the NVLS step cap's 512 KiB. */
START_TEST(nvls_tree_chunk_is_not_capped_by_the_buffer)
{
    const char *env[] = {"interconnect.nvlink.nccl_nvls_chunksize=2MiB", NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", env);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 16ull << 30,
                                            1u << STRATA_NCCL_NVLS_TREE, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS_TREE);
    ck_assert_uint_eq(t.chunk_bytes, 2u << 20);
    strata_hw_free(hw);
}
END_TEST


/* NCCL 2.27.7's choice at 8 GiB on 4 to 8 GPUs of one node, as its log
 * shows on a p6-b200 and an H200 node (validation/nccl-tests.ini, the
 * "8GiB Ngpu" cases). By hand from tuning.cc (v2.27.7-1) and search.cc:
 * the ring's graph is the node's whatever the GPUs used (the GPU's NVLink
 * to the NVSwitch): B200 16 x 45 = 720 GB/s, H200 12 x 30 = 360. Ring
 * Simple: busBw = that, algbw = busBw x n / (2(n - 1)), latency 8.4 +
 * 2(n - 1) x 3.4 us. NVLS: n channels (one per GPU) at the first speed s
 * of search.cc's array for the arch with (n + 1) s within the NVLink (the
 * NVLS graph as model_figures_are_nccls has it for 8 H100s), busBw = n x
 * s, algbw = busBw x 5/6, latency 25 us. LL128 (x .92) and the tree (x .92 x .5)
 * stay below the ring Simple's bandwidth, so at 8 GiB (where 25 to 56 us
 * of latency is 0.3% of the time) the larger algbw wins:
 *   B200 (sm100 {90, 80, ...}): n = 4: NVLS 4 x 90 x 5/6 = 300 < ring
 *     720 x 4/6 = 480; n = 5: 375 < 450; n = 6: 450 > 432 (NVLS
 *     19,113.7 us against the ring's 19,926.5); n = 7: 525 > 420; n = 8
 *     (9 x 90 = 810 > 720, so 80): 533.3 > 411.4.
 *   H200 (sm90 {60, 50, 40, ...}): n = 4: 4 x 60 x 5/6 = 200 < 240;
 *     n = 5 (6 x 60 = 360 fits): 250 > 225; n = 6 (7 x 50): 250 > 216;
 *     n = 7 (8 x 40): 233.3 > 210; n = 8 (9 x 40): 266.7 > 205.7.
 * NCCL's log: the ring at 4 and 5 B200s and NVLS from 6; the ring at 4
 * H200s and NVLS from 5. */
START_TEST(nvls_by_gpu_count_at_8_gib)
{
    const strata_nccl_version *v = strata_nccl_version_find("2.27");
    ck_assert_ptr_nonnull(v);
    const uint64_t gib8 = 8ull << 30;
    for (uint32_t n = 4; n <= 8; n++) {
        strata_nccl_comm b200 = {.arch = STRATA_NCCL_BLACKWELL, .ranks = n, .graph_channels = 16,
                                 .channel_gbs = 45.0, .nvls = true, .version = v};
        strata_nccl_comm h200 = {.arch = STRATA_NCCL_HOPPER, .ranks = n, .graph_channels = 12,
                                 .channel_gbs = 30.0, .nvls = true, .version = v};
        strata_nccl_choice cb = choose(&b200, STRATA_OP_ALL_REDUCE, gib8);
        strata_nccl_choice ch = choose(&h200, STRATA_OP_ALL_REDUCE, gib8);
        ck_assert_msg(cb.algo == (n >= 6 ? STRATA_NCCL_NVLS : STRATA_NCCL_RING), "B200 x %u: %s", n,
                      strata_nccl_algo_name(cb.algo));
        ck_assert_msg(ch.algo == (n >= 5 ? STRATA_NCCL_NVLS : STRATA_NCCL_RING), "H200 x %u: %s", n,
                      strata_nccl_algo_name(ch.algo));
        ck_assert(cb.proto == STRATA_NCCL_SIMPLE && ch.proto == STRATA_NCCL_SIMPLE);
        double lat, bw;
        ck_assert(strata_nccl_model(&b200, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
        ck_assert_double_eq_tol(bw, n * (n == 8 ? 80.0 : 90.0) * 5 / 6, 1e-9);
        ck_assert(strata_nccl_model(&h200, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
        ck_assert_double_eq_tol(lat, 8.4 + 2.0 * (n - 1) * 3.4, 1e-9);
        ck_assert_double_eq_tol(bw, 360.0 * n / (2.0 * (n - 1)), 1e-9);
    }
    /* the two sides of the B200's switch, by their estimates */
    strata_nccl_comm b6 = {.arch = STRATA_NCCL_BLACKWELL, .ranks = 6, .graph_channels = 16, .channel_gbs = 45.0,
                           .nvls = true, .version = v};
    ck_assert_double_eq_tol(strata_nccl_time_us(&b6, STRATA_OP_ALL_REDUCE, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, gib8),
                            25.0 + 8589934592.0 / 450e3, 1e-6);
    ck_assert_double_eq_tol(strata_nccl_time_us(&b6, STRATA_OP_ALL_REDUCE, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, gib8),
                            42.4 + 8589934592.0 / 432e3, 1e-6);
}
END_TEST

static Suite *nccl_suite(void)
{
    Suite *s = suite_create("nccl");
    TCase *tc = tcase_create("nccl");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, model_figures_are_nccls);
    tcase_add_test(tc, protocol_choice_at_the_crossovers);
    tcase_add_test(tc, nvls_by_gpu_count_at_8_gib);
    tcase_add_test(tc, nvls_chunk_is_capped_by_the_simple_step);
    tcase_add_test(tc, nvls_tree_chunk_is_not_capped_by_the_buffer);
    tcase_add_test(tc, channels_follow_enqueue);
    tcase_add_test(tc, ring_reduce_scatter_reduces_as_it_receives);
    tcase_add_test(tc, simple_waits_its_sync_per_step);
    tcase_add_test(tc, ll_all_reduce_of_8_kib);
    tcase_add_test(tc, ring_step_pays_one_flight_on_ll_two_on_simple);
    tcase_add_test(tc, net_step_is_nccls_exposed_latency);
    tcase_add_test(tc, nvls_all_reduce);
    tcase_add_test(tc, nvls_all_gather_and_reduce_scatter_carry_the_flag);
    tcase_add_test(tc, xla_all_gather_is_bidirectional);
    tcase_add_test(tc, xla_all_gather_uses_both_torus_axes);
    tcase_add_test(tc, hw_declares_the_implementation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_suite()); }
