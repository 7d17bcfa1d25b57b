/*
 * test_spmd.c: multi-device runs of SPMD traces (spmd/spmd.h) against
 * times derived by hand from the hardware files, and the bad inputs of a
 * multi-device trace.
 *
 * The teaching models (configs/hw/test-*.ini) have round numbers: HBM
 * 1 TB/s, a 100 TFLOP/s unit, interconnect links of bandwidth W and
 * latency a = 1 us. A reduction of c bytes of f32 reads two chunks and
 * writes one through the HBM port: 3c / 1 TB/s (its c/4 flops take
 * c/4 / 100 TFLOP/s, far less). Writing B for the per-device buffer and N
 * for the group:
 *   ring all-reduce      2(N-1)(a + B/(N W)) + (N-1) 3(B/N)/HBM
 *   bidir-ring           2(N-1)(a + B/(2N W)) + (N-1) 3(B/N)/HBM (two
 *                        half-chunk reductions at once share the port)
 *   tree (binomial)      2 log2(N) (a_route + B/W_route) + log2(N) 3B/HBM
 *   2D torus X x Y       ring reduce-scatter along X, ring all-reduce along
 *                        Y on B/X, ring all-gather along X
 *   all-gather           (N-1)(a + (B/N)/W), B = size(OUT)
 *   reduce-scatter       (N-1)(a + (B/N)/W) + (N-1) 3(B/N)/HBM, B = size(IN)
 *   bidir-ring gather,   (N-1)(a + B/(2N W)), reduce-scatter adding
 *   reduce-scatter       (N-1) 3(B/N)/HBM (the two halves share the port)
 *   nccl-ring all-reduce per loop (24 channels x N x 2 MiB), 2(N-1) steps of
 *                        2 slices, a round each: a + 5/4 s / W (the slice s
 *                        with NVLink's packet overhead) + a + 8 B / W (the
 *                        flag); its reduction (3s/HBM) runs alongside
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "testutil.h"

#define MIB (1024.0 * 1024.0)
#define HBM 1e12
#define A_US 1e-6

typedef struct run_out {
    JsonObject *root; /* owned by parser */
    JsonParser *parser;
} run_out;

/* Runs `body` (after the version line) on hw (a path under configs/hw/) with
 * extra `set` (or NULL), returns the parsed results. */
static run_out run_trace(const char *hw, const char *set, const char *body)
{
    char *text = g_strconcat("strata-trace 1\n", body, NULL);
    char *trace = strata_test_write_temp("spmd-XXXXXX.trace", text);
    char *json = g_strconcat(trace, ".json", NULL);
    char *hw_path = strata_test_source_path(hw);
    strata_cli_result r = set ? strata_test_cli("run", "--hw", hw_path, "--set", set, "--trace", trace, "--json",
                                                json, "-q", NULL)
                              : strata_test_cli("run", "--hw", hw_path, "--trace", trace, "--json", json, "-q", NULL);
    ck_assert_msg(r.status == 0, "run failed: %s", r.err);
    run_out out = {.parser = json_parser_new()};
    ck_assert(json_parser_load_from_file(out.parser, json, NULL));
    out.root = json_node_get_object(json_parser_get_root(out.parser));
    strata_cli_result_clear(&r);
    g_unlink(json);
    g_unlink(trace);
    g_free(hw_path);
    g_free(json);
    g_free(trace);
    g_free(text);
    return out;
}

static JsonObject *collective(const run_out *o, guint i)
{
    JsonArray *a = json_object_get_array_member(o->root, "collectives");
    ck_assert_uint_gt(json_array_get_length(a), i);
    return json_array_get_object_element(a, i);
}

static void assert_near(double got, double want, const char *what)
{
    ck_assert_msg(got > want * (1 - 1e-6) && got < want * (1 + 1e-6), "%s: %.9g s, derived %.9g s", what, got, want);
}

static double red(double chunk) { return 3 * chunk / HBM; }

/* Runs body on hw and checks the time of collective 0 against t. */
static void assert_time(const char *hw, const char *body, double t, const char *what)
{
    run_out o = run_trace(hw, NULL, body);
    assert_near(json_object_get_double_member(collective(&o, 0), "time_s"), t, what);
    g_object_unref(o.parser);
}

START_TEST(ring_all_reduce_is_2_n_minus_1_steps_plus_reductions)
{
    const double b = 64 * MIB, w = 100e9;
    for (uint32_t n = 4; n <= 8; n += 4) {
        char *set = g_strdup_printf("hardware.devices=%u", n);
        char *body = g_strdup_printf("option mesh=data:%u\nalloc g 64MiB dtype=f32\nall-reduce g axis=data algo=ring\n"
                                     "free g\n", n);
        run_out o = run_trace("configs/hw/test-ring8.ini", set, body);
        double t = 2.0 * (n - 1) * (A_US + b / (n * w)) + (n - 1) * red(b / n);
        JsonObject *c = collective(&o, 0);
        assert_near(json_object_get_double_member(c, "time_s"), t, "ring all-reduce");
        assert_near(json_object_get_double_member(o.root, "makespan_s"), t, "makespan");
        ck_assert_str_eq(json_object_get_string_member(c, "op"), "all-reduce");
        ck_assert_str_eq(json_object_get_string_member(c, "algo"), "ring");
        ck_assert_int_eq(json_object_get_int_member(c, "group_size"), n);
        ck_assert_int_eq(json_object_get_int_member(c, "bytes"), (gint64)b);
        assert_near(json_object_get_double_member(c, "algbw_Bps"), b / t, "algbw");
        assert_near(json_object_get_double_member(c, "busbw_Bps"), b / t * 2 * (n - 1) / n, "busbw");
        ck_assert_int_eq(json_object_get_int_member(o.root, "devices"), n);
        g_object_unref(o.parser);
        g_free(body);
        g_free(set);
    }
}
END_TEST

START_TEST(bidir_ring_halves_the_link_time)
{
    const double b = 64 * MIB, w = 100e9, n = 8;
    assert_time("configs/hw/test-ring8.ini",
                "option mesh=data:8\nalloc g 64MiB dtype=f32\nall-reduce g axis=data algo=bidir-ring\n",
                2 * (n - 1) * (A_US + b / (2 * n * w)) + (n - 1) * red(b / n), "bidir-ring all-reduce");
    /* all-gather and reduce-scatter: half of each chunk each way on the
     * full-duplex links, B = size(OUT) and size(IN). */
    run_out o = run_trace("configs/hw/test-ring8.ini", NULL,
                          "option mesh=data:8\nalloc i 8MiB dtype=f32\nalloc o 64MiB dtype=f32\n"
                          "all-gather o i axis=data algo=bidir-ring\nreduce-scatter i o axis=data algo=bidir-ring\n");
    double ag = (n - 1) * (A_US + b / (2 * n * w));
    assert_near(json_object_get_double_member(collective(&o, 0), "time_s"), ag, "bidir-ring all-gather");
    assert_near(json_object_get_double_member(collective(&o, 1), "time_s"), ag + (n - 1) * red(b / n),
                "bidir-ring reduce-scatter");
    ck_assert_str_eq(json_object_get_string_member(collective(&o, 0), "algo"), "bidir-ring");
    g_object_unref(o.parser);
}
END_TEST

/* nccl-ring on 4 devices: a loop is 24 x 4 x 2 MiB = 192 MiB. 96 MiB is one
 * loop of 1 MiB chunks per channel: 6 steps of 2 slices of 24 x 1 MiB / 2 =
 * 12 MiB, 15 MiB on the wire; a round is a + 15 MiB / W + a + 8 B / W (the
 * reductions, 3 x 12 MiB through the 1 TB/s port, take 38 us of the
 * copy's 157 us and end first). 288 MiB is a full loop (slices of 24 MiB,
 * 30 MiB on the wire) and then the same 96 MiB loop. */
START_TEST(nccl_ring_is_loops_of_sliced_steps)
{
    const double w = 100e9, flag = 2 * A_US + 8 / w;
    const double small = 12 * (flag + 15 * MIB / w), full = 12 * (flag + 30 * MIB / w);
    static const char *const sizes[] = {"96MiB", "288MiB"};
    for (int i = 0; i < 2; i++) {
        char *body = g_strdup_printf("option mesh=data:4\nalloc g %s dtype=f32\nall-reduce g axis=data algo=nccl-ring\n"
                                     "free g\n", sizes[i]);
        run_out o = run_trace("configs/hw/test-ring8.ini", "hardware.devices=4", body);
        JsonObject *c = collective(&o, 0);
        assert_near(json_object_get_double_member(c, "time_s"), i ? full + small : small, "nccl-ring all-reduce");
        ck_assert_str_eq(json_object_get_string_member(c, "algo"), "nccl-ring");
        g_object_unref(o.parser);
        g_free(body);
    }
}
END_TEST

START_TEST(tree_is_2_log2_n_whole_buffer_steps)
{
    /* test-switch8: a route I -> J is nvlink@I then nvlink@J (2 us), each
     * 2 links_per_chip x 100 GB/s. */
    const double b = 64 * MIB, w = 200e9, levels = 3;
    assert_time("configs/hw/test-switch8.ini",
                "option mesh=data:8\nalloc g 64MiB dtype=f32\nall-reduce g axis=data algo=tree\n",
                2 * levels * (2 * A_US + b / w) + levels * red(b), "tree all-reduce");
}
END_TEST

START_TEST(torus_2d_rings_along_each_dimension)
{
    /* test-torus16: 4 x 4, 50 GB/s links. */
    const double b = 64 * MIB, w = 50e9;
    assert_time("configs/hw/test-torus16.ini",
                "option mesh=x:4,y:4\nalloc g 64MiB dtype=f32\nall-reduce g axis=x,y algo=torus\n",
                2 * 3 * (A_US + b / (4 * w)) + 3 * red(b / 4) + 2 * 3 * (A_US + b / (16 * w)) + 3 * red(b / 16),
                "2D torus all-reduce");
    /* Without algo=: torus when the group's axes are the torus's dimensions, else ring. */
    run_out o = run_trace("configs/hw/test-torus16.ini", NULL,
                          "option mesh=x:4,y:4\nalloc g 64MiB dtype=f32\nall-reduce g axis=x,y\n");
    ck_assert_str_eq(json_object_get_string_member(collective(&o, 0), "algo"), "torus");
    g_object_unref(o.parser);
    o = run_trace("configs/hw/test-torus16.ini", NULL,
                  "option mesh=x:2,y:8\nalloc g 64MiB dtype=f32\nall-reduce g axis=x,y\n");
    ck_assert_str_eq(json_object_get_string_member(collective(&o, 0), "algo"), "ring");
    g_object_unref(o.parser);
    o = run_trace("configs/hw/test-ring8.ini", NULL,
                  "option mesh=x:4,y:2\nalloc g 64MiB dtype=f32\nall-reduce g axis=x,y\n");
    ck_assert_str_eq(json_object_get_string_member(collective(&o, 0), "algo"), "ring");
    g_object_unref(o.parser);
}
END_TEST

START_TEST(gather_and_scatter_are_n_minus_1_steps)
{
    const double b = 64 * MIB, w = 100e9, n = 8;
    run_out o = run_trace("configs/hw/test-ring8.ini", NULL,
                          "option mesh=data:8\nalloc i 8MiB dtype=f32\nalloc o 64MiB dtype=f32\n"
                          "all-gather o i axis=data\nreduce-scatter i o axis=data\n");
    double ag = (n - 1) * (A_US + b / (n * w));
    assert_near(json_object_get_double_member(collective(&o, 0), "time_s"), ag, "all-gather");
    assert_near(json_object_get_double_member(collective(&o, 1), "time_s"), ag + (n - 1) * red(b / n), "reduce-scatter");
    assert_near(json_object_get_double_member(collective(&o, 0), "busbw_Bps"), b / ag * (n - 1) / n, "busbw");
    g_object_unref(o.parser);
}
END_TEST

START_TEST(summary_and_timeline_show_devices)
{
    char *trace = strata_test_source_path("traces/spmd/collectives.trace");
    char *hw = strata_test_source_path("configs/hw/test-ring8.ini");
    char *dir = strata_test_temp_dir();
    char *tl = g_build_filename(dir, "tl.json", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--timeline", tl, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(strstr(r.out, "devices   8, mesh data:4,model:2; below: device 0 (the highest device-memory peak)"));
    ck_assert(strstr(r.out, "\nhbm@0 ") && !strstr(r.out, "\nhbm@1 "));
    ck_assert(strstr(r.out, "collective line   op"));
    ck_assert(strstr(r.out, "\n4          17     collective-permute data         direct     4 "));
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, tl, NULL));
    JsonArray *ev = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "traceEvents");
    guint devices = 0;
    for (guint i = 0; i < json_array_get_length(ev); i++) {
        JsonObject *e = json_array_get_object_element(ev, i);
        if (strcmp(json_object_get_string_member(e, "name"), "process_name") != 0)
            continue;
        const char *name = json_object_get_string_member(json_object_get_object_member(e, "args"), "name");
        if (g_str_has_prefix(name, "device ")) {
            ck_assert_int_eq(json_object_get_int_member(e, "pid"), 10 + atoi(name + 7));
            devices++;
        }
    }
    ck_assert_uint_eq(devices, 8);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_unlink(tl);
    g_rmdir(dir);
    g_free(tl);
    g_free(dir);
    g_free(hw);
    g_free(trace);
}
END_TEST

/* ---- bad input ----------------------------------------------------------- */

static void assert_bad(const char *hw, const char *set, const char *body, const char *where, const char *expect)
{
    char *dir = strata_test_temp_dir();
    char *trace = g_build_filename(dir, "bad.trace", NULL);
    char *json = g_build_filename(dir, "out.json", NULL);
    char *text = g_strconcat("strata-trace 1\n", body, NULL);
    ck_assert(g_file_set_contents(trace, text, -1, NULL));
    char *hw_path = strata_test_source_path(hw);
    strata_cli_result r = set ? strata_test_cli("run", "--hw", hw_path, "--set", set, "--trace", trace, "--json",
                                                json, NULL)
                              : strata_test_cli("run", "--hw", hw_path, "--trace", trace, "--json", json, NULL);
    char *at = g_strconcat(trace, where, NULL);
    ck_assert_msg(r.status == 2, "'%s': status %d, stderr %s", body, r.status, r.err);
    ck_assert_msg(strstr(r.err, at) && strstr(r.err, expect), "'%s': stderr '%s', expected '%s' and '%s'", body,
                  r.err, at, expect);
    ck_assert(!g_file_test(json, G_FILE_TEST_EXISTS));
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_rmdir(dir);
    g_free(at);
    g_free(hw_path);
    g_free(text);
    g_free(json);
    g_free(trace);
    g_free(dir);
}

/* The time of the first collective of `body` (after its mesh option) on
 * those 2 nodes of m, NCCL's ring forced, each NIC's latency `latency`,
 * under --collectives `mode`, with --set `extra` (NULL: none); *channels
 * (may be NULL): NCCL's channels. */
static double ring_2xm_ch(const char *body, const char *proto, const char *latency, const char *mode, uint32_t m,
                          const char *extra, uint32_t *channels)
{
    char *head = g_strdup_printf("strata-trace 1\noption mesh=data:%u\n", 2 * m);
    char *devs = g_strdup_printf("hardware.devices=%u", 2 * m), *host = g_strdup_printf("hardware.devices_per_host=%u", m);
    char *dom = g_strdup_printf("interconnect.nvlink.domain=%u", m);
    char *text = g_strconcat(head, body, NULL);
    char *trace = strata_test_write_temp("ring2x2-XXXXXX.trace", text);
    char *json = g_strconcat(trace, ".json", NULL);
    char *hw = strata_test_source_path("configs/hw/h100-2x8-ib.ini");
    char *lat = g_strconcat("network.ib.latency=", latency, NULL);
    char *pr = g_strconcat("interconnect.nvlink.nccl_proto=", proto, NULL);
    char *md = g_strconcat("--collectives=", mode, NULL);
    const char *algo = "interconnect.nvlink.nccl_algo=Ring";
    strata_cli_result r = extra ? strata_test_cli("run", "--hw", hw, "--set", devs, "--set", host, "--set", dom, "--set",
                                                  algo, "--set", pr, "--set", lat, "--set", extra, md, "--trace", trace,
                                                  "--json", json, "-q", NULL)
                                : strata_test_cli("run", "--hw", hw, "--set", devs, "--set", host, "--set", dom, "--set",
                                                  algo, "--set", pr, "--set", lat, md, "--trace", trace, "--json", json,
                                                  "-q", NULL);
    ck_assert_msg(r.status == 0, "run failed: %s", r.err);
    run_out o = {.parser = json_parser_new()};
    ck_assert(json_parser_load_from_file(o.parser, json, NULL));
    o.root = json_node_get_object(json_parser_get_root(o.parser));
    double t = json_object_get_double_member(collective(&o, 0), "time_s");
    if (channels)
        *channels = (uint32_t)json_object_get_int_member(
            json_object_get_object_member(collective(&o, 0), "nccl"), "channels");
    g_object_unref(o.parser);
    strata_cli_result_clear(&r);
    g_unlink(json);
    g_unlink(trace);
    g_free(md);
    g_free(pr);
    g_free(lat);
    g_free(hw);
    g_free(json);
    g_free(trace);
    g_free(text);
    g_free(dom);
    g_free(host);
    g_free(devs);
    g_free(head);
    return t;
}

static double ring_2xm(const char *body, const char *proto, const char *latency, const char *mode, uint32_t m)
{
    return ring_2xm_ch(body, proto, latency, mode, m, NULL, NULL);
}

static double ring_2x2(const char *body, const char *proto, const char *latency, const char *mode)
{
    return ring_2xm(body, proto, latency, mode, 2);
}

static double ring_2x2_time(const char *latency)
{
    return ring_2x2("alloc buf 64KiB dtype=f32\nall-reduce buf axis=data\nfree buf\n", "Simple", latency, "steps");
}

/* NCCL's connections (coll_sched.h slotted; prims_ll.h: a rank's send of
 * step k waits for its receipt of step k-1 and a free slot, not for its
 * send of step k-1 to arrive). All-gather over the rail ring 0 1 | 3 2 (|
 * the network, route 2L; with two channels also ring 1 0 | 2 3): 3
 * rounds; in each ring two chunks walk net, NVLink, net, the other two
 * NVLink, net, NVLink. So the collective ends after 2 network hops and 1
 * NVLink hop: 2 x 2L grows by 4 us from L = 8 to 9 us (NCCL's network
 * step, at most 14 us less the route, is then 0). Were each round to wait
 * for every send of the one before (rounds as barriers, before wave 23),
 * all 3 rounds would pay 2L: 6 us. 1 KiB a rank takes one ring (LL and
 * Simple). 256 KiB on LL takes two, and a step waits for its source's
 * whole round k-1, both rings' receipts (coll_sched.h slotted: NCCL waits
 * for its own ring's only): each rank receives over the network in one of
 * them, so every round pays 2L again: 6 us. Every mode of --collectives
 * agrees with the steps (slotted steps take no phases). */
START_TEST(ring_all_gather_chain_pays_two_network_hops)
{
    static const char *const small = "alloc in 1KiB dtype=f32\nalloc out 4KiB dtype=f32\n"
                                     "all-gather out in axis=data\nfree out\nfree in\n";
    static const char *const two_rings = "alloc in 256KiB dtype=f32\nalloc out 1MiB dtype=f32\n"
                                         "all-gather out in axis=data\nfree out\nfree in\n";
    static const struct {
        const char *body, *proto;
    } cases[] = {{small, "LL"}, {small, "Simple"}, {two_rings, "LL"}};
    static const double grows[] = {4e-6, 4e-6, 6e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        double t8 = ring_2x2(cases[i].body, cases[i].proto, "8us", "steps");
        double t9 = ring_2x2(cases[i].body, cases[i].proto, "9us", "steps");
        ck_assert_msg(fabs(t9 - t8 - grows[i]) <= 1e-12, "case %zu: %.17g", i, t9 - t8);
        const char *const modes[] = {"phases", "classes", "fast"};
        for (size_t m = 0; m < G_N_ELEMENTS(modes); m++)
            ck_assert_double_eq_tol(ring_2x2(cases[i].body, cases[i].proto, "9us", modes[m]), t9, 1e-15);
    }
}
END_TEST

/* A ring all-reduce's LL and LL128 steps on NCCL's connections (wave 32;
 * coll_sched.h slotted): in runRing (NVIDIA/nccl v2.25.1-1
 * src/device/all_reduce.h) a rank's step k reads the flags of the data its
 * predecessor sent at step k-1 (prims_ll.h LLGenericOp, readLL) and waits
 * for a free slot (waitSend), never for the ring's whole round. 2 nodes of
 * 2, rail ring 0 1 | 3 2 (| the network, route 2L: the hops 1 -> 3 and
 * 2 -> 0), one channel, 2 (n - 1) = 6 rounds, 8 slots (none reused). 64 B
 * is 4 chunks of 16 B (v2.25's last loop: alignUp(divUp(16 floats, 4), 4)
 * = 4 floats), one a rank: each chunk walks 6 consecutive hops of the
 * 4-hop ring, whose hops alternate NVLink and network, so its path crosses
 * the network 3 times, whichever chunk: 1 us more of L costs 3 x 2 = 6 us.
 * Rounds in lockstep (each round waiting for every send of the one before,
 * as before wave 32) paid 2L in each of the 6 rounds: 12 us. 16 B is chunk
 * 0 alone (the other steps empty: none), whose path is the same 6 hops:
 * 6 us either way. From L = 8 us NCCL's LL and LL128 network step, less
 * the route, is 0. Every mode of --collectives equals the steps (slotted
 * steps take no phases). */
START_TEST(ll_ring_all_reduce_pays_a_chunks_path)
{
    static const struct {
        const char *body, *proto;
    } cases[] = {{"alloc b 64 dtype=f32\nall-reduce b axis=data\nfree b\n", "LL"},
                 {"alloc b 64 dtype=f32\nall-reduce b axis=data\nfree b\n", "LL128"},
                 {"alloc b 16 dtype=f32\nall-reduce b axis=data\nfree b\n", "LL"}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        double t8 = ring_2x2(cases[i].body, cases[i].proto, "8us", "steps");
        double t9 = ring_2x2(cases[i].body, cases[i].proto, "9us", "steps");
        ck_assert_msg(fabs(t9 - t8 - 6e-6) <= 1e-12, "case %zu: %.17g", i, t9 - t8);
        const char *const modes[] = {"phases", "classes", "fast"};
        for (size_t m = 0; m < G_N_ELEMENTS(modes); m++)
            ck_assert_double_eq_tol(ring_2x2(cases[i].body, cases[i].proto, "9us", modes[m]), t9, 1e-15);
    }
}
END_TEST

/* Each ring's steps wait for their own ring only (wave 33; coll_sched.h
 * src_lane), under nccl_ring_wait = channel: NCCL's channels run apart
 * (NVIDIA/nccl v2.25.1-1 src/device/all_reduce.h runRing l. 14, 29-30: a
 * channel's primitives on its own ring's prev and next), so a step of ring
 * g reads its predecessor's data of ring g's step k-1 and nothing of
 * another ring's. 2 nodes of 2 (route 2L on the network), LL and LL128,
 * all-reduce of B: 8 KiB runs 2 channels (NCCL's thread threshold: 1 at 4
 * KiB), 64 KiB 4 (LL128), 256 KiB 8 (LL). Ring 0 is 0 1 | 3 2 (its network
 * hops 1 -> 3 and 2 -> 0), ring 1 is 1 0 | 2 3 (0 -> 2, 3 -> 1), and rings
 * 2k and 2k+1 repeat them: each directed link carries the hops of one
 * pattern. Each rank receives over the network in one of the two patterns
 * and over NVLink in the other. A chunk walks 6 consecutive hops of its
 * 4-hop ring, which alternates NVLink and network: 3 network hops
 * whichever chunk. So with each ring waiting on its own ring's receipts,
 * 1 us more of L costs 3 x 2 us = 6 us (as one ring does:
 * ll_ring_all_reduce_pays_a_chunks_path). Under the default (round), a
 * step waits for its source's whole round (every ring's receipt), so every
 * one of the 6 rounds pays 2L: 12 us (main at 0436a2b4, before the key:
 * 12.000 us in each case). From L = 8 us NCCL's network step, less the
 * route, is 0. The classes mode simulates one device a node (symmetry
 * data+1/2~lanes: swapping a node's two GPUs maps ring 0 onto ring 1, so
 * device 1's ring-1 lanes are device 0's ring-0 lanes, spmd_classes_lane_maps)
 * and must give the steps' time, as must phases and fast. */
START_TEST(ring_steps_wait_for_their_own_ring)
{
    static const struct {
        const char *body, *proto;
        uint32_t channels;
    } cases[] = {{"alloc b 8KiB dtype=f32\nall-reduce b axis=data\nfree b\n", "LL", 2},
                 {"alloc b 64KiB dtype=f32\nall-reduce b axis=data\nfree b\n", "LL128", 4},
                 {"alloc b 256KiB dtype=f32\nall-reduce b axis=data\nfree b\n", "LL", 8}};
    static const char *const waits[] = {"interconnect.nvlink.nccl_ring_wait=channel", NULL};
    static const double grows[] = {6e-6, 12e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
        for (size_t w = 0; w < G_N_ELEMENTS(waits); w++) {
            uint32_t channels = 0;
            double t8 = ring_2xm_ch(cases[i].body, cases[i].proto, "8us", "steps", 2, waits[w], &channels);
            double t9 = ring_2xm_ch(cases[i].body, cases[i].proto, "9us", "steps", 2, waits[w], NULL);
            ck_assert_uint_eq(channels, cases[i].channels);
            ck_assert_msg(fabs(t9 - t8 - grows[w]) <= 1e-12, "case %zu, %s: %.17g", i, waits[w], t9 - t8);
            const char *const modes[] = {"phases", "classes", "fast"};
            for (size_t m = 0; m < G_N_ELEMENTS(modes); m++)
                ck_assert_double_eq_tol(ring_2xm_ch(cases[i].body, cases[i].proto, "9us", modes[m], 2, waits[w], NULL),
                                        t9, 1e-15);
        }
}
END_TEST

/* A connection's steps in order (wave 32; coll_sched.h conn_lane): NCCL's
 * send proxy isends a connection's step s + 1 only after step s
 * (NVIDIA/nccl v2.25.1-1 src/transport/net.cc sendProxyProgress l.
 * 1131-1182), up to NCCL_STEPS in flight. 2 nodes of 1 (every hop on the
 * network: 50 GB/s a direction, route R = 2 x 0.1 us), LL all-reduce of B
 * bytes: 4 rings 0 -> 1 -> 0 (4 channels), 2 rounds, each ring's 2 chunks
 * of B / 8 (LL's wire: twice that). Each ring's chunk 0 pays the network
 * step, D = NCCL's hwLat[NET][TREE][LL] (2 ranks on 2 nodes: its Tree
 * row, 5.0 us) less R = 4.8 us, on both of its hops; chunk 1 none. So with
 * w = B / 50 GB/s (the 4 rings' wire of a round over one link): round 0
 * puts chunk 1 on 0 -> 1 at once (arrives R + w) and chunk 0 on 1 -> 0
 * after D. Round 1's chunk 1 on 1 -> 0 (ready at R + w) is the step after
 * chunk 0's on its connection: in order it starts with it at D, and the
 * 8 copies share the link, both arrive at D + R + 2w; chunk 0's round 1 on
 * 0 -> 1 then waits D again: the end is 2D + 2R + 3w. Had it overtaken
 * (before this wave), its bytes left the link by 2R + 2w <= D + R (at 64
 * KiB R + 2w = 2.82 us <= D), chunk 0 crossed alone: 2D + 2R + 2w. The fixed
 * costs are the same at every size, so 16 to 64 KiB grows by 3 x 48 KiB
 * / 50 GB/s = 2.94912 us (overtaking: 1.96608, measured with main at
 * 76addf49). Every mode of --collectives the same.
 * Since wave 46 the proxy paces each connection's steps (nccl_proxy_floor.h:
 * ceil(2 x 2 nodes x 4 channels / 2 ranks) = 8 connections a rank, x 1 us
 * of NCCL's post overhead = 8 us at least between two steps of one
 * connection), above D + R + 2w = 4.8 + 0.2 + 2.62 = 7.62 us at 64 KiB: every
 * step of a connection starts a pace after the one before whatever the size,
 * in order as before, and only the last step's wire grows: 16 to 64 KiB
 * grows by 48 KiB / 50 GB/s = 0.98304 us. The order itself is no longer
 * visible on this layout under the pace. */
START_TEST(ring_connection_keeps_its_steps_in_order)
{
    static const char *const small = "alloc b 16KiB dtype=f32\nall-reduce b axis=data\nfree b\n";
    static const char *const large = "alloc b 64KiB dtype=f32\nall-reduce b axis=data\nfree b\n";
    double grows = ring_2xm(large, "LL", "0.1us", "steps", 1) - ring_2xm(small, "LL", "0.1us", "steps", 1);
    ck_assert_msg(fabs(grows - 49152 / 50e9) <= 1e-12, "grows %.17g", grows);
    const char *const modes[] = {"phases", "classes", "fast"};
    for (size_t m = 0; m < G_N_ELEMENTS(modes); m++)
        ck_assert_double_eq_tol(ring_2xm(large, "LL", "0.1us", modes[m], 1) - ring_2xm(small, "LL", "0.1us", modes[m], 1),
                                grows, 1e-15);
}
END_TEST

/* A connection's slots on Simple (coll_nccl_ring_slots): NCCL's Simple
 * ring chunk takes 4 of a connection's 8 slots, so 2 ring steps are in
 * flight, where LL's chunk takes 1 (8 steps). All-gather of 1 KiB a rank
 * over 2 nodes of 4 (one rail ring A0 A1 A2 A3 | B0 B1 B2 B3 |, | the
 * network, route R = 2L), 7 rounds; the NVLink hops and the bytes' time
 * are small beside R, and from L = 8 us NCCL's network step (14 us at
 * most, less R) is 0. On LL A3 sends its rounds 0-3 (chunks of A3, A2,
 * A1, A0) at once and rounds 4-6 (chunks of B3, B2, B1, which crossed
 * B3 -> A0 in rounds 0-2) once they have crossed, R later: the last
 * arrives at B0 after 2R, and so on B3 -> A0: 1 us more of L costs 4 us.
 * On Simple B0 takes round k only once its copy of round k - 2 has
 * arrived (the slot it reuses), and so does A0 from B3: rounds 0-1 arrive
 * at R, 2-3 at 2R, 4-5 at 3R (their chunks, B3's and B2's, crossed by R;
 * their slots free at 2R), 6 at 4R (B1's chunk crossed by 2R; its slot,
 * round 4's, frees at 3R): 1 us more of L costs 8 us (4 us with 8 slots).
 * In every mode of --collectives the same. */
START_TEST(simple_ring_holds_two_steps_in_flight)
{
    static const char *const body = "alloc in 1KiB dtype=f32\nalloc out 8KiB dtype=f32\n"
                                    "all-gather out in axis=data\nfree out\nfree in\n";
    static const struct {
        const char *proto;
        double grows;
    } cases[] = {{"LL", 4e-6}, {"Simple", 8e-6}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        double t8 = ring_2xm(body, cases[i].proto, "8us", "steps", 4);
        double t9 = ring_2xm(body, cases[i].proto, "9us", "steps", 4);
        ck_assert_msg(fabs(t9 - t8 - cases[i].grows) <= 1e-12, "%s: %.17g", cases[i].proto, t9 - t8);
        const char *const modes[] = {"phases", "classes", "fast"};
        for (size_t m = 0; m < G_N_ELEMENTS(modes); m++)
            ck_assert_double_eq_tol(ring_2xm(body, cases[i].proto, "9us", modes[m], 4), t9, 1e-15);
    }
}
END_TEST

/* NCCL's network step on a ring chunk's path, simulated step by step on 2
 * nodes of 2 (h100-2x8-ib.ini sliced: NICs on rails, each with latency L;
 * NCCL_ALGO=Ring, NCCL_PROTO=Simple). 64 KiB is one loop of the ring:
 * 2 x 3 steps of 2 slices, 12 rounds, each waiting for its slowest copy
 * (its all-reduce's steps are not slotted, coll_sched.h),
 * one across the network whose route (NIC, rail switch, NIC: two links)
 * takes 2L. NCCL's network step (hwLatencies[NET][Ring][Simple], 14 us)
 * less that route, 14 - 2L, is paid on the 3 network hops of one chunk's
 * path (test_collective.c derives them). So the time is
 * T0 + 12 x 2L + 3 x max(0, 14 us - 2L): from 5 to 6 us it grows by
 * 24 - 6 = 18 us, from 7 to 8 us (no step cost left) by 24 us. */
START_TEST(ring_pays_the_network_step_on_a_chunks_path)
{
    double t5 = ring_2x2_time("5us"), t6 = ring_2x2_time("6us");
    double t7 = ring_2x2_time("7us"), t8 = ring_2x2_time("8us");
    ck_assert_double_eq_tol(t6 - t5, 18e-6, 1e-12);
    ck_assert_double_eq_tol(t7 - t6, 18e-6, 1e-12);
    ck_assert_double_eq_tol(t8 - t7, 24e-6, 1e-12);
}
END_TEST

START_TEST(bad_multi_device_input_is_exit_2_at_its_line)
{
    const char *ring8 = "configs/hw/test-ring8.ini";
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc g 1MiB\nall-reduce g axis=model\n", ":4:",
               "expected axis= to name distinct axes of the mesh data:8, got 'model'");
    /* issue 41: a mesh of fewer devices than the hardware's runs on a
     * slice of its first devices, with a note; with hardware.devices given
     * the mismatch stays an error. */
    {
        char *trace = strata_test_write_temp("slice-XXXXXX.trace",
                                             "strata-trace 1\noption mesh=data:4\nalloc g 1MiB\nall-reduce g axis=data\n");
        char *hw_path = strata_test_source_path(ring8);
        strata_cli_result r = strata_test_cli("run", "--hw", hw_path, "--trace", trace, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.err, "the program's mesh has 4 devices, the hardware") &&
                          strstr(r.err, "8: it runs on a slice, devices 0-3 (as --set hardware.devices=4)"),
                      "%s", r.err);
        strata_cli_result_clear(&r);
        g_unlink(trace);
        g_free(trace);
        g_free(hw_path);
    }
    assert_bad(ring8, "hardware.devices=8", "option mesh=data:4\nalloc g 1MiB\n", ":2:",
               "expected a mesh of 8 devices (the hardware's), got mesh=data:4 (4 devices)");
    assert_bad(ring8, "hardware.devices=4", "option mesh=data:2,model:4\n", ":2:", "expected a mesh of 4 devices");
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc g 1MiB hbm@8\n", ":3:",
               "expected a memory of a device 0..7, got 'hbm@8'");
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc g 1MiB device=9\n", ":3:", "expected device= a device 0..7");
    assert_bad(ring8, NULL, "alloc g 1MiB\nfree g device=8\n", ":3:", "expected device= a device 0..7, got 8");
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc i 1MiB\nalloc o 4MiB\nall-gather o i axis=data\n", ":5:",
               "expected size(OUT) = 8 x size(IN) = 8388608 bytes for all-gather over data, got 4194304");
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc i 4MiB\nalloc o 1MiB\nreduce-scatter o i axis=data\n", ":5:",
               "expected size(IN) = 8 x size(OUT)");
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc i 1001\nalloc o 1001\nall-to-all o i axis=data\n", ":5:",
               "expected a size divisible by the group size 8");
    assert_bad(ring8, NULL, "option mesh=data:8\nalloc i 8MiB\nalloc o 64MiB\nall-gather o i axis=data algo=tree\n",
               ":5:", "expected algo= one of ring, bidir-ring, direct, torus, nccl, bidir-torus, nccl-pat, rccl for all-gather, got 'tree'");
    /* a permute with device=0 is device 0's send: OUT is the receiver's (device 1's) */
    assert_bad(ring8, NULL,
               "option mesh=data:8\nalloc x 1MiB device=0\nalloc y 1MiB device=0\n"
               "collective-permute y x shift=+1 axis=data device=0\n",
               ":5:", "expected a live buffer as OUT of collective-permute");
    assert_bad("configs/hw/test-simple.ini", NULL, "option mesh=data:2\nalloc g 1MiB\nall-reduce g axis=data\n",
               ":4:", "this hardware model has one device (a slice of one, --set hardware.devices=1, is one), and "
               "collectives and device= run over the devices of a model with devices = 2 or more, the trace's mesh");
}
END_TEST

static Suite *spmd_suite(void)
{
    Suite *s = suite_create("spmd");
    TCase *tc = tcase_create("derived");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ring_all_reduce_is_2_n_minus_1_steps_plus_reductions);
    tcase_add_test(tc, bidir_ring_halves_the_link_time);
    tcase_add_test(tc, nccl_ring_is_loops_of_sliced_steps);
    tcase_add_test(tc, tree_is_2_log2_n_whole_buffer_steps);
    tcase_add_test(tc, torus_2d_rings_along_each_dimension);
    tcase_add_test(tc, gather_and_scatter_are_n_minus_1_steps);
    tcase_add_test(tc, summary_and_timeline_show_devices);
    tcase_add_test(tc, ring_pays_the_network_step_on_a_chunks_path);
    tcase_add_test(tc, ring_all_gather_chain_pays_two_network_hops);
    tcase_add_test(tc, simple_ring_holds_two_steps_in_flight);
    tcase_add_test(tc, ll_ring_all_reduce_pays_a_chunks_path);
    tcase_add_test(tc, ring_connection_keeps_its_steps_in_order);
    tcase_add_test(tc, ring_steps_wait_for_their_own_ring);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad");
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, bad_multi_device_input_is_exit_2_at_its_line);
    suite_add_tcase(s, bad);
    return s;
}

int main(void) { return strata_test_main(spmd_suite()); }
