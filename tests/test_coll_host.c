/*
 * test_coll_host.c: the host side of a collective's launch when one
 * process drives several GPUs (sim/hw/coll_host.h): the keys
 * (`rccl_ranks_per_process`, `_host_launch`, `_host_plan`, `_host_channel`,
 * `_host_overlap`, `_launch`, `_host_call`; the nccl row's alike), each GPU's start delay,
 * and the all-reduce's time derived by hand.
 *
 * doLaunches (NCCL's src/group.cc; RCCL's is NCCL's) prepares every
 * communicator's plan, then launches their kernels one after another, on
 * the one thread, each launch after its plan's work structs, one a channel,
 * are copied into the work FIFO (enqueue.cc uploadWork). With N GPUs per
 * process, host_plan P and a launch L = host_launch + C x host_channel (C
 * the call's channels), one call alone (`_host_overlap = false`) starts
 * device d (N - 1) P + (d mod N) L after one rank per GPU would.
 *
 * 8 MI300X (mi300x-8.ini), an 8-byte all-reduce: RCCL's tuning model runs
 * Ring/LL on one channel (8 B is 2 floats, not a multiple of MSCCL's 256
 * chunks: no MSCCL), a fixed cost of 12 us (RCCL's LL base latency) and
 * 14 ring steps (2 x 7) of the xGMI link's 0.8 us: 23.2 us, plus 1 ps of
 * bytes (23.2013 us, the simulation's). The ring's every output needs
 * every rank's input, and the last rank's first send leaves when it starts:
 * the whole schedule runs after the last GPU starts. With the file's
 * host_launch 5 us, host_channel 0.05 us and host_set_device 0.12 us (one
 * hipSetDevice in each of doLaunches' three loops; RCCL makes no stream op
 * of its own), one channel: the plan loop P = 0.12 us a communicator, the
 * launch loop L = 0.12 + 5 + 0.05 = 5.17 us, and one call alone takes
 *   one rank per GPU           23.2013 us
 *   -g 8                       23.2013 + 7 x 0.12 + 7 x 5.17 = 60.2313 us
 *   -g 8, host_plan 1 us       60.2313 + 7 x 1 = 67.2313 us
 *   4 GPUs per process         23.2013 + 3 x 0.12 + 3 x 5.17 = 39.0713 us
 *                              (two processes of 4: devices 3 and 7 start
 *                              last)
 *
 * The runtime's scratch reclaim (`rccl_scratch_reclaim`, coll_impl_rccl.c:
 * ROCr re-sets-up a kernel's scratch at every dispatch where
 * HSA_NO_SCRATCH_RECLAIM is unset and RCCL's validHsaScratchEnvSetting
 * fails) is a fixed cost of every rank's launch, added to RCCL's base
 * latency: R = 150 us gives
 *   one rank per GPU           23.2013 + 150 = 173.2013 us
 *   -g 8, one call alone       60.2313 + 150 = 210.2313 us (the host's
 *                              delay and the runtime's add up)
 * and over 2 nodes of 8 MI325X (validation/hw/mi325x-roce.ini: RCCL's tree
 * on LL) the same 150 us more: an all-reduce's every output needs every
 * rank's input, and every rank starts R later.
 *
 * MSCCL and the process layout (coll_impl_rccl.c rccl_releases): RCCL 2.20
 * runs no MSCCL on a communicator two of whose ranks share a process
 * (msccl_lifecycle.cc mscclCommCompatible), 2.21 on runs it there too. A
 * 1 KiB all-reduce (256 floats, MSCCL's LL allpairs where it runs): one
 * rank per GPU the same on both; -g 8 (host_channel 0) on 2.21 the
 * allpairs' time + 7 x 0.12 + 7 x 5.12 us; -g 8 on 2.20 RCCL's ring on LL,
 * one channel (1 KiB < 8 x 8 x 256 x 16 bytes): 23.2 us + 14 steps of 128
 * x 2 x 4/3 bytes at 64 GB/s + 36.68 us = 59.9547 us.
 *
 * Calls back to back (`rccl_host_overlap`, coll_host.h, the default where
 * ranks_per_process is above 1): nccl-tests and rccl-tests time `iters`
 * calls issued one after another (common.cu BenchTime), so the host
 * launches call k+1 while the GPUs run call k; in steady state a call
 * takes max(H, T), H = N (P + L + F) the host's time a call (F the finish
 * loop's, one hipSetDevice: 0.12 us) and T the simulated call's time
 * (every GPU started at once, the call ending no earlier than H after).
 *
 * A call timed alone from a framework (`_host_call`, coll_host.h, wave
 * 46): every GPU's kernel starts host_call later, on top of the layout's
 * delay: with rccl_host_call = 20 us the 8-byte all-reduce takes
 *   one rank per GPU           23.2013 + 20 = 43.2013 us
 *   -g 8, one call alone       60.2313 + 20 = 80.2313 us
 * and no calls back to back nor a graph replay take it (refused).
 */
#include "testutil.h"
#include <glib/gstdio.h>
#include <string.h>
#include "hw/coll_host.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/rccl_tuning.h"

/* One call alone, the single-call form of the delays. */
#define ALONE "interconnect.xgmi.rccl_host_overlap=false"

/* mi300x-8.ini's plan loop a communicator: one hipSetDevice (0.12 us),
 * host_plan 0, no stream op (RCCL) */
#define P 0.12e-6

#define TRACE "strata-trace 1\noption mesh=data:8\nalloc buf 8 tag=input dtype=f32 shape=2\nall-reduce buf axis=data\nfree buf\n"

/* strata run's makespan (s, as it prints it: to the ns) of an all-reduce
 * of `floats` f32 over the `devices` GPUs of hardware file `hw_file` (a
 * path in the source tree), with the overrides `sets` (NULL-terminated;
 * NULL: none). */
static double all_reduce_on(const char *hw_file, int devices, int floats, const char *const *sets)
{
    char *text = g_strdup_printf("strata-trace 1\noption mesh=data:%d\nalloc buf %d tag=input dtype=f32 shape=%d\n"
                                 "all-reduce buf axis=data\nfree buf\n", devices, 4 * floats, floats);
    char *trace = strata_test_write_temp("ar-XXXXXX.trace", text);
    char *hw = strata_test_source_path(hw_file);
    const char *const argv[] = {"run", "--trace", trace, "--hw", hw, NULL};
    strata_cli_result r = strata_test_run_cli_sets(argv, sets);
    ck_assert_msg(r.status == 0, "%s", r.err);
    const char *m = strstr(r.out, "makespan");
    ck_assert_msg(m, "%s", r.out);
    double us = g_ascii_strtod(m + strlen("makespan"), NULL);
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_free(trace);
    g_free(hw);
    g_free(text);
    return us * 1e-6;
}

/* ... over the 8 MI300X of configs/hw/mi300x-8.ini. */
static double all_reduce_8b(const char *const *sets)
{
    return all_reduce_on("configs/hw/mi300x-8.ini", 8, 2, sets);
}

START_TEST(the_last_gpu_starts_after_the_others_launches)
{
    const double one = all_reduce_8b(NULL);
    ck_assert_double_eq_tol(one, 23.2e-6, 2e-9); /* printed to the ns */
    const char *const g8[] = {"interconnect.xgmi.rccl_ranks_per_process=8", ALONE, NULL};
    ck_assert_double_eq_tol(all_reduce_8b(g8), one + 7 * P + 7 * 5.17e-6, 2e-9);
    const char *const plan[] = {"interconnect.xgmi.rccl_ranks_per_process=8", "interconnect.xgmi.rccl_host_plan=1us",
                                ALONE, NULL};
    ck_assert_double_eq_tol(all_reduce_8b(plan), one + 7 * 5.17e-6 + 7 * (1e-6 + P), 2e-9);
    const char *const g4[] = {"interconnect.xgmi.rccl_ranks_per_process=4", ALONE, NULL};
    ck_assert_double_eq_tol(all_reduce_8b(g4), one + 3 * P + 3 * 5.17e-6, 2e-9);
    /* no channel's cost: the launch alone */
    const char *const free_channels[] = {"interconnect.xgmi.rccl_ranks_per_process=8",
                                         "interconnect.xgmi.rccl_host_channel=0", ALONE, NULL};
    ck_assert_double_eq_tol(all_reduce_8b(free_channels), one + 7 * P + 7 * 5.12e-6, 2e-9);
    /* every collective mode the same */
    char *trace = strata_test_write_temp("ar-XXXXXX.trace", TRACE);
    char *hw = strata_test_source_path("configs/hw/mi300x-8.ini");
    static const char *const modes[] = {"steps", "phases", "fast"};
    for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
        const char *const argv[] = {"run", "--trace", trace, "--hw", hw, "--collectives", modes[i], NULL};
        strata_cli_result r = strata_test_run_cli_sets(argv, g8);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.out, "makespan  60.231 us"), "%s: %s", modes[i], r.out);
        strata_cli_result_clear(&r);
    }
    g_unlink(trace);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* MSCCL where one process drives the GPUs (the header's last part): a
 * 1 KiB all-reduce (256 floats) on 8 MI300X. */
START_TEST(rccl_2_20_runs_no_msccl_where_ranks_share_a_process)
{
    const char *const v20[] = {"interconnect.xgmi.rccl_version=2.20", NULL};
    const char *const v21[] = {"interconnect.xgmi.rccl_version=2.21", NULL};
    const char *const v20g8[] = {"interconnect.xgmi.rccl_version=2.20", "interconnect.xgmi.rccl_ranks_per_process=8",
                                 "interconnect.xgmi.rccl_host_channel=0", ALONE, NULL};
    const char *const v21g8[] = {"interconnect.xgmi.rccl_version=2.21", "interconnect.xgmi.rccl_ranks_per_process=8",
                                 "interconnect.xgmi.rccl_host_channel=0", ALONE, NULL};
    const double msccl = all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, v21);
    /* one rank per GPU: MSCCL in either release */
    ck_assert_double_eq_tol(all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, v20), msccl, 1e-12);
    /* -g 8 from 2.21: MSCCL's allpairs after the last GPU's launch */
    ck_assert_double_eq_tol(all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, v21g8), msccl + 7 * P + 7 * 5.12e-6,
                            2e-9);
    /* -g 8 on 2.20: the ring on LL, one channel, 23.2 us and 14 steps of a
     * 128-byte chunk as LL (x 2) over xGMI (x 4 / 3) at 64 GB/s (5.33 ns),
     * after the last GPU's launch */
    ck_assert_double_eq_tol(all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, v20g8),
                            23.2e-6 + 14 * (128 * 2 * 4 / 3.0) / 64e9 + 7 * P + 7 * 5.12e-6, 2e-9);
}
END_TEST

/* Calls back to back (rccl_host_overlap, the header's last part; the
 * default with -g 8): 8 B on 8 MI300X, -g 8, one channel: P = F = 0.12 us
 * (one hipSetDevice each), L = 0.12 + 5 + 0.05 us: RCCL's estimate of its
 * ring on LL is 23.2 us + 8 B at 15.36 GB/s; the host's 8 x (0.12 + 5.17
 * + 0.12) = 43.28 us a call is above its simulated 23.2013 us, so the
 * call takes 43.28 us. 4 MiB
 * (RCCL 2.20, MSCCL off: its ring on LL, estimate 76.5 us, above the
 * host's 8 x (5.36 + C x 0.05) for its C channels, at most 56): no GPU
 * waits, the one-rank-per-GPU time. */
START_TEST(back_to_back_calls_take_the_hosts_pace_or_the_gpus)
{
    const double one = all_reduce_8b(NULL);
    const char *const b2b[] = {"interconnect.xgmi.rccl_ranks_per_process=8", NULL};
    const char *const on[] = {"interconnect.xgmi.rccl_ranks_per_process=8", "interconnect.xgmi.rccl_host_overlap=true",
                              NULL};
    ck_assert(one < 43.28e-6);
    ck_assert_double_eq_tol(all_reduce_8b(b2b), 43.28e-6, 2e-9);
    ck_assert_double_eq(all_reduce_8b(on), all_reduce_8b(b2b));
    const char *const g1[] = {"interconnect.xgmi.rccl_version=2.20", "interconnect.xgmi.msccl=false", NULL};
    const char *const g8[] = {"interconnect.xgmi.rccl_version=2.20", "interconnect.xgmi.msccl=false",
                              "interconnect.xgmi.rccl_ranks_per_process=8", NULL};
    const double big = all_reduce_on("configs/hw/mi300x-8.ini", 8, 1 << 20, g1);
    ck_assert_double_eq_tol(all_reduce_on("configs/hw/mi300x-8.ini", 8, 1 << 20, g8), big, 1e-12);
    ck_assert(big > 40e-6);
}
END_TEST

/* An all-to-all back to back takes the host's floor as a collective does
 * (until wave 27 its host cost had no estimate to subtract, and the call
 * took H + its GPUs' time). a100-8.ini, NCCL's p2p plan for 8 KiB a peer
 * on one node: its 8 rounds on channels of their own, one part each, so
 * the kernel's grid has 8 channels: P = F = 0.12 + 2 x 0.25 = 0.62 us,
 * L = 0.12 + 2.74 + 8 x 0.1 = 3.66 us; and (wave 46) nccl-tests' 2 x 8
 * grouped ncclSend / ncclRecv calls a communicator, the first inside L,
 * E = 15 x 0.25 = 3.75 us: H = 8 x (3.75 + 4.9) = 69.2 us, above the
 * one-rank-per-GPU call (about 1.2 us). Every collective mode alike, and
 * the 8-byte all-reduce of the test above too (one call: no E). */
START_TEST(an_all_to_all_back_to_back_takes_the_hosts_floor)
{
    const char *const g8[] = {"interconnect.nvlink.nccl_ranks_per_process=8", NULL};
    strata_hw *hw = strata_test_load_hw("a100-8", g8);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 64u << 10, 0, &t, NULL));
    strata_hw_free(hw);
    ck_assert_uint_eq(t.host.channels, 8);
    ck_assert_uint_eq(t.host.calls, 16);
    ck_assert_double_eq_tol(t.host.p2p_call_s, 0.25e-6, 1e-15);
    ck_assert_double_eq_tol(strata_coll_host_floor(&t.host), 69.2e-6, 1e-15);
    char *trace = strata_test_write_temp("a2a-XXXXXX.trace", "strata-trace 1\noption mesh=data:8\n"
                                         "alloc a 65536 dtype=f32\nalloc b 65536 dtype=f32\n"
                                         "all-to-all b a axis=data\nfree a\nfree b\n");
    char *ar = strata_test_write_temp("ar-XXXXXX.trace", TRACE);
    char *a100 = strata_test_source_path("configs/hw/a100-8.ini"), *mi = strata_test_source_path("configs/hw/mi300x-8.ini");
    const char *const rccl8[] = {"interconnect.xgmi.rccl_ranks_per_process=8", NULL};
    static const char *const modes[] = {"classes", "steps", "phases", "fast"};
    for (size_t i = 0; i < G_N_ELEMENTS(modes); i++) {
        const char *const argv[] = {"run", "--trace", trace, "--hw", a100, "--collectives", modes[i], NULL};
        strata_cli_result r = strata_test_run_cli_sets(argv, g8);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.out, "makespan  69.200 us"), "%s: %s", modes[i], r.out);
        strata_cli_result_clear(&r);
        const char *const argv_ar[] = {"run", "--trace", ar, "--hw", mi, "--collectives", modes[i], NULL};
        r = strata_test_run_cli_sets(argv_ar, rccl8);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.out, "makespan  43.280 us"), "%s: %s", modes[i], r.out);
        strata_cli_result_clear(&r);
    }
    g_unlink(trace);
    g_unlink(ar);
    g_free(trace);
    g_free(ar);
    g_free(a100);
    g_free(mi);
}
END_TEST

/* ... over the 16 GPUs of validation/hw/mi325x-roce.ini (2 nodes). */
static double all_reduce_8b_2nodes(const char *const *sets)
{
    return all_reduce_on("validation/hw/mi325x-roce.ini", 16, 2, sets);
}

/* The runtime's scratch reclaim: R more on every rank's fixed cost (the
 * header's derivation). */
START_TEST(the_runtime_scratch_reclaim_is_paid_at_every_launch)
{
    const double one = all_reduce_8b(NULL);
    const char *const r150[] = {"interconnect.xgmi.rccl_scratch_reclaim=150us", NULL};
    ck_assert_double_eq_tol(all_reduce_8b(r150), one + 150e-6, 2e-9);
    ck_assert_double_eq_tol(all_reduce_8b(r150), 173.2013e-6, 2e-9);
    const char *const g8[] = {"interconnect.xgmi.rccl_ranks_per_process=8",
                              "interconnect.xgmi.rccl_scratch_reclaim=150us", ALONE, NULL};
    ck_assert_double_eq_tol(all_reduce_8b(g8), one + 7 * P + 7 * 5.17e-6 + 150e-6, 2e-9);
    const double two = all_reduce_8b_2nodes(NULL);
    ck_assert_double_eq_tol(all_reduce_8b_2nodes(r150), two + 150e-6, 2e-9);
    /* the tuning carries it in the fixed cost, not in RCCL's estimate */
    strata_hw *hw = strata_test_load_hw("mi300x-8", r150);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 8, 0, &t, NULL));
    ck_assert_double_eq_tol(t.launch_s, 12e-6 + 150e-6, 1e-15);
    ck_assert_double_eq_tol(t.estimate_s, 23.2e-6 + 8 / 15360e6, 1e-12); /* Ring/LL: 12 + 14 x 0.8 us */
    strata_hw_free(hw);
}
END_TEST

/* The delay by device: (N - 1) P + (d mod N) L. */
START_TEST(delay_by_device)
{
    strata_coll_host h = {.ranks_per_process = 8, .launch_s = 5e-6, .plan_s = 1e-6};
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 0), 7e-6, 1e-15);
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 7e-6 + 35e-6, 1e-15);
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 9), 7e-6 + 5e-6, 1e-15); /* process 1, its second GPU */
    ck_assert_double_eq(strata_coll_host_floor(&h), 0); /* one call alone: no floor */
    /* back to back (overlap): no delay, every GPU at once, and a floor of
     * H = 8 x (1 + 5) = 48 us from the call's start */
    h.overlap = true;
    ck_assert_double_eq(strata_coll_host_delay(&h, 0), 0);
    ck_assert_double_eq(strata_coll_host_delay(&h, 7), 0);
    ck_assert_double_eq_tol(strata_coll_host_floor(&h), 48e-6, 1e-15);
    /* 24 channels of 0.1 us: L = 5 + 2.4 = 7.4 us; H = 8 x (1 + 7.4) =
     * 67.2 us */
    h.channel_s = 0.1e-6;
    h.channels = 24;
    ck_assert_double_eq_tol(strata_coll_host_floor(&h), 67.2e-6, 1e-15);
    h.overlap = false; /* one call alone: 7 x 1 + 7 x 7.4 */
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 7e-6 + 51.8e-6, 1e-15);
    h.channels = 0; /* read as one channel: L = 5.1 */
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 7e-6 + 35.7e-6, 1e-15);
    h.ranks_per_process = 1;
    h.overlap = true;
    ck_assert_double_eq(strata_coll_host_delay(&h, 7), 0);
    ck_assert_double_eq(strata_coll_host_floor(&h), 0);
    ck_assert_double_eq(strata_coll_host_delay(NULL, 7), 0);
    ck_assert_double_eq(strata_coll_host_floor(NULL), 0);
    /* 16 grouped calls a communicator at 0.5 us, the first inside L: E =
     * 15 x 0.5 = 7.5 us, every communicator's before the first launch:
     * one call alone, device 7 starts 8 x 7.5 + 7 x 1 + 7 x 5.1 = 102.7
     * us late; back to back H = 8 x (7.5 + 1 + 5.1) = 108.8 us */
    h = (strata_coll_host){.ranks_per_process = 8, .launch_s = 5e-6, .plan_s = 1e-6, .channel_s = 0.1e-6,
                           .p2p_call_s = 0.5e-6, .calls = 16};
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 102.7e-6, 1e-15);
    h.overlap = true;
    ck_assert_double_eq_tol(strata_coll_host_floor(&h), 108.8e-6, 1e-15);
    h.calls = 1; /* one call (a collective): E = 0, H = 8 x 6.1 */
    ck_assert_double_eq_tol(strata_coll_host_floor(&h), 48.8e-6, 1e-15);
    /* the file's figures reach the tuning */
    const char *const g8[] = {"interconnect.xgmi.rccl_ranks_per_process=8", NULL};
    strata_hw *hw = strata_test_load_hw("mi300x-8", g8);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 8, 0, &t, NULL));
    ck_assert_uint_eq(t.host.ranks_per_process, 8);
    ck_assert_double_eq_tol(t.host.launch_s, 5e-6, 1e-15);
    ck_assert_double_eq(t.host.plan_s, 0);
    ck_assert_double_eq_tol(t.host.channel_s, 0.05e-6, 1e-15);
    ck_assert_double_eq_tol(t.host.set_device_s, 0.12e-6, 1e-15);
    ck_assert_uint_eq(t.host.plan_stream_ops, 0); /* RCCL: doneEvent rides the launch */
    ck_assert_uint_eq(t.host.finish_stream_ops, 0);
    ck_assert_uint_eq(t.host.channels, 1); /* 8 B: RCCL's ring on one channel */
    ck_assert(t.host.overlap);             /* -g 8: back to back by default */
    strata_hw_free(hw);
    hw = strata_test_load_hw("a100-8", NULL); /* one rank per GPU by default */
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 1u << 20, 0, &t, NULL));
    ck_assert_uint_eq(t.host.ranks_per_process, 1);
    ck_assert(!t.host.overlap);
    ck_assert_double_eq(strata_coll_host_delay(&t.host, 7), 0);
    strata_hw_free(hw);
}
END_TEST

/* The A100 `-g 8` floor (a100-8.ini: host_launch 2.74 us, host_channel
 * 0.1 us, host_set_device 0.12 us, host_stream_op 0.25 us: a GPU's plan
 * loop 0.12 + 2 x 0.25 = 0.62 us, launch loop 0.12 + 2.74 + C x 0.1 us,
 * finish loop 0.62 us, nccl-tests#123's 4.2 us a GPU at one channel),
 * NCCL 2.19, calls back to back. 32 KiB: ring/LL on one channel
 * (getChannnelThreadInfo: 32768 B < nc x 512 threads x 64 B for any nc
 * above 1), H = 8 x 4.2 = 33.6 us. 1 MiB: ring/LL on the node's 24
 * channels (1 MiB >= 24 x 32 KiB), H = 8 x (4.1 + 24 x 0.1) = 52 us.
 * Both above the simulated call (one rank per GPU), so back to back the
 * call takes H exactly: 33.6 and 52.0 us. (Until wave 27 the last GPU
 * waited H less NCCL's estimate T of the call, so a call simulated
 * faster than T ended below H: 45.0 us at 1 MiB; one simulated slower,
 * above it: 34.9 us at 32 KiB.) */
static double a100_all_reduce(uint64_t bytes, bool g8, strata_coll_tuning *t)
{
    const char *const one[] = {"interconnect.nvlink.nccl_version=2.19", NULL};
    const char *const gpus8[] = {"interconnect.nvlink.nccl_version=2.19", "interconnect.nvlink.nccl_ranks_per_process=8",
                                 NULL};
    const char *const *sets = g8 ? gpus8 : one;
    strata_hw *hw = strata_test_load_hw("a100-8", sets);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, bytes, 0, t, NULL));
    strata_hw_free(hw);
    return all_reduce_on("configs/hw/a100-8.ini", 8, (int)(bytes / 4), sets);
}

START_TEST(the_hosts_floor_counts_the_calls_channels)
{
    strata_coll_tuning t;
    const double small = a100_all_reduce(32768, false, &t);
    const double small8 = a100_all_reduce(32768, true, &t);
    ck_assert_uint_eq(t.channels, 1);
    ck_assert_uint_eq(t.host.channels, 1);
    ck_assert(small < 33.6e-6);
    ck_assert_double_eq_tol(small8, 33.6e-6, 2e-9);
    const double big = a100_all_reduce(1u << 20, false, &t);
    const double big8 = a100_all_reduce(1u << 20, true, &t);
    ck_assert_uint_eq(t.channels, 24);
    ck_assert_double_eq_tol(strata_coll_host_floor(&t.host), 52e-6, 1e-15);
    ck_assert_double_eq(strata_coll_host_delay(&t.host, 7), 0);
    ck_assert(big < 52e-6);
    ck_assert_double_eq_tol(big8, 52e-6, 2e-9);
}
END_TEST

/* NCCL's runtime calls around each communicator's launch, counted in its
 * sources (coll_host.h): one cudaSetDevice in each of doLaunches' three
 * loops, a cudaEventRecord + cudaStreamWaitEvent pair in ncclLaunchPrepare
 * and another in ncclLaunchFinish. With S = 0.12 us, O = 0.25 us,
 * host_launch 2.74 us and no channel cost (dgx-h100.ini's figures): the
 * plan loop P = 0.12 + 2 x 0.25 = 0.62 us, the launch loop L = 0.12 +
 * 2.74 = 2.86 us, the finish loop F = 0.62 us, by hand:
 *   one call alone, device 7    7 x 0.62 + 7 x 2.86 = 24.36 us
 *   back to back, H             8 x (0.62 + 2.86 + 0.62) = 32.8 us
 * RCCL's (no stream op): P = F = 0.12 us, H = 8 x 3.1 = 24.8 us. And an
 * 8-byte all-reduce on dgx-h100.ini's 8 H100, NCCL's ring (one channel),
 * whose one-rank-per-GPU time is below 32.8 us: -g 8 takes H. */
START_TEST(nccls_runtime_calls_priced_by_the_sources_counts)
{
    strata_coll_host h = {.ranks_per_process = 8, .launch_s = 2.74e-6, .set_device_s = 0.12e-6,
                          .stream_op_s = 0.25e-6, .plan_stream_ops = 2, .finish_stream_ops = 2};
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 24.36e-6, 1e-15);
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 0), 7 * 0.62e-6, 1e-15);
    h.overlap = true;
    ck_assert_double_eq_tol(strata_coll_host_floor(&h), 32.8e-6, 1e-15);
    h.plan_stream_ops = h.finish_stream_ops = 0; /* RCCL's counts */
    ck_assert_double_eq_tol(strata_coll_host_floor(&h), 24.8e-6, 1e-15);
    /* the loader gives the nccl row NCCL's counts, the file its figures */
    const char *const g1[] = {"interconnect.nvlink.nccl_algo=Ring", NULL};
    const char *const g8[] = {"interconnect.nvlink.nccl_algo=Ring", "interconnect.nvlink.nccl_ranks_per_process=8",
                              NULL};
    strata_hw *hw = strata_test_load_hw("dgx-h100", g8);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 8, 0, &t, NULL));
    strata_hw_free(hw);
    ck_assert_uint_eq(t.host.plan_stream_ops, 2);
    ck_assert_uint_eq(t.host.finish_stream_ops, 2);
    ck_assert_double_eq_tol(t.host.launch_s, 2.74e-6, 1e-15);
    ck_assert_double_eq_tol(t.host.set_device_s, 0.12e-6, 1e-15);
    ck_assert_double_eq_tol(t.host.stream_op_s, 0.25e-6, 1e-15);
    ck_assert_double_eq(t.host.channel_s, 0);
    const double one = all_reduce_on("configs/hw/dgx-h100.ini", 8, 2, g1);
    ck_assert(one < 32.8e-6);
    ck_assert_double_eq_tol(all_reduce_on("configs/hw/dgx-h100.ini", 8, 2, g8), 32.8e-6, 2e-9);
}
END_TEST

/* A graph launch (`rccl_launch = graph`, nccl-tests / rccl-tests -G N,
 * coll_host.h): the timed calls are captured once and replayed, so no
 * host work is paid a call. By hand, 8 B on 8 MI300X (the header's
 * figures): -g 8 back to back took H = 8 x (0.12 + 5.17 + 0.12) = 43.28
 * us, one call alone 60.2313 us; replayed, both take the GPUs' own time,
 * one rank per GPU's 23.2013 us, and no host_launch is needed. One rank
 * per GPU already pays no host term: the graph leaves its 23.2013 us (12
 * us RCCL base latency, 14 x 0.8 us ring steps, kept: the tuning model's
 * kernel). NCCL likewise: dgx-h100.ini's -g 8 floor of 32.8 us is gone,
 * the call takes its one-rank-per-GPU time. What this pins is the host
 * terms only: that one rank per GPU keeps 23.2 us under a graph is a known
 * gap, not a property (held-out set 18 measured 6.0-7.4 us at 32-512 B:
 * RCCL's base latency, fitted to calls launched one by one, holds launch
 * cost a replay removes; docs/clusters.md, "Graph launches"). */
START_TEST(a_graph_replay_pays_no_host_work_a_call)
{
    strata_coll_host h = {.ranks_per_process = 8, .launch_s = 5e-6, .plan_s = 1e-6, .overlap = true, .graph = true};
    ck_assert_double_eq(strata_coll_host_floor(&h), 0); /* was 8 x (1 + 5) = 48 us */
    h.overlap = false;
    ck_assert_double_eq(strata_coll_host_delay(&h, 7), 0); /* was 7 x 1 + 7 x 5 = 42 us */
    const double one = all_reduce_8b(NULL);
    const char *const g1[] = {"interconnect.xgmi.rccl_launch=graph", NULL};
    const char *const g8[] = {"interconnect.xgmi.rccl_ranks_per_process=8", "interconnect.xgmi.rccl_launch=graph",
                              NULL};
    const char *const g8_alone[] = {"interconnect.xgmi.rccl_ranks_per_process=8",
                                    "interconnect.xgmi.rccl_launch=graph", ALONE, NULL};
    const char *const stream[] = {"interconnect.xgmi.rccl_ranks_per_process=8", "interconnect.xgmi.rccl_launch=stream",
                                  NULL};
    ck_assert_double_eq_tol(one, 23.2e-6, 2e-9);
    ck_assert_double_eq(all_reduce_8b(g1), one);
    ck_assert_double_eq(all_reduce_8b(g8), one);
    ck_assert_double_eq(all_reduce_8b(g8_alone), one);
    ck_assert_double_eq_tol(all_reduce_8b(stream), 43.28e-6, 2e-9); /* the default, named */
    strata_hw *hw = strata_test_load_hw("mi300x-8", g8);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 8, 0, &t, NULL));
    strata_hw_free(hw);
    ck_assert(t.host.graph);
    ck_assert_double_eq_tol(t.launch_s, 12e-6, 1e-15); /* RCCL's LL base latency stays */
    const char *const n1[] = {"interconnect.nvlink.nccl_algo=Ring", NULL};
    const char *const n8[] = {"interconnect.nvlink.nccl_algo=Ring", "interconnect.nvlink.nccl_ranks_per_process=8",
                              "interconnect.nvlink.nccl_launch=graph", NULL};
    const double h100 = all_reduce_on("configs/hw/dgx-h100.ini", 8, 2, n1);
    ck_assert(h100 < 32.8e-6);
    ck_assert_double_eq(all_reduce_on("configs/hw/dgx-h100.ini", 8, 2, n8), h100);
    /* -g 4 replayed from a graph needs no host_launch */
    GError *err = NULL;
    hw = strata_test_load_hw_text(STRATA_TEST_NCCL_HW_HEAD, "nccl_ranks_per_process = 4\nnccl_launch = graph\n",
                                  &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_hw_free(hw);
}
END_TEST

/* MSCCL++ (hw/rccl_tuning.h): RCCL 2.21 on, gfx942, the topology's MSCCL
 * on, one process a GPU and the call captured into a graph: an all-reduce
 * of 32 B to 1 MiB whose bytes are a multiple of 32 runs MSCCL++'s
 * allreduce7 (msccl_lifecycle.cc l. 524-540), blocks 28 (56 from 8192
 * floats) over 7 peers: 4 (8) a peer, LL-like packets, MSCCL's allpairs
 * form; 8 B (not a multiple of 32) and 2 MiB (above the 1 MiB threshold)
 * do not. Its fixed cost is the GPU's kernel start, mi300x.ini's
 * kernel_launch 1.9 us, where MSCCL's allpairs (the same schedule, the
 * same 4 channels a peer at 1 KiB = 256 floats) pays RCCL's LL base
 * latency, 12 us: so 1 KiB on 8 MI300X replayed from a graph, one rank a
 * GPU, takes 12 - 1.9 = 10.1 us less with MSCCL++ than without
 * (rccl_mscclpp = false), and 1 KiB without a graph (stream launch: no
 * MSCCL++) MSCCL's time. */
START_TEST(mscclpp_runs_small_captured_all_reduces)
{
    strata_rccl_comm c = {.ranks = 8, .graph_channels = 28, .channel_gbs = 12, .msccl = true, .mscclpp = true};
    strata_rccl_choice ch;
    const struct {
        uint64_t bytes;
        bool mscclpp, msccl;
        uint32_t channels;
    } rows[] = {{8, false, false, 1},         {32, true, true, 4},        {32736, true, true, 4},
                {32768, true, true, 8},       {1048576, true, true, 8},   {2097152, false, true, 8}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        ck_assert(strata_rccl_choose(&c, STRATA_OP_ALL_REDUCE, rows[i].bytes, &ch));
        ck_assert_msg(ch.mscclpp == rows[i].mscclpp && ch.msccl == rows[i].msccl && ch.channels == rows[i].channels,
                      "%zu: mscclpp %d msccl %d channels %u", i, ch.mscclpp, ch.msccl, ch.channels);
    }
    ck_assert(ch.proto == STRATA_NCCL_SIMPLE); /* 2 MiB: MSCCL's Simple allpairs */
    ck_assert(strata_rccl_choose(&c, STRATA_OP_ALL_REDUCE, 64, &ch) && ch.proto == STRATA_NCCL_LL && ch.base_us == 0);
    strata_rccl_comm two = c, four = c, pinned = c;
    two.nodes = 2;
    four.ranks = 4;
    pinned.protos = 1u << STRATA_NCCL_LL;
    ck_assert(!strata_rccl_choose(&two, STRATA_OP_ALL_REDUCE, 1024, &ch) || !ch.mscclpp);
    ck_assert(!strata_rccl_choose(&four, STRATA_OP_ALL_REDUCE, 1024, &ch) || !ch.mscclpp);
    ck_assert(!strata_rccl_choose(&pinned, STRATA_OP_ALL_REDUCE, 1024, &ch) || !ch.mscclpp);
    ck_assert(!strata_rccl_choose(&c, STRATA_OP_ALL_GATHER, 1024, &ch) || !ch.mscclpp);

    const char *const graph[] = {"interconnect.xgmi.rccl_launch=graph", NULL};
    const char *const off[] = {"interconnect.xgmi.rccl_launch=graph", "interconnect.xgmi.rccl_mscclpp=false", NULL};
    const char *const old[] = {"interconnect.xgmi.rccl_launch=graph", "interconnect.xgmi.rccl_version=2.20", NULL};
    const char *const g8[] = {"interconnect.xgmi.rccl_launch=graph", "interconnect.xgmi.rccl_ranks_per_process=8",
                              NULL};
    const struct {
        const char *const *sets;
        double launch_s;
    } tunes[] = {{graph, 1.9e-6}, {off, 12e-6}, {old, 12e-6}, {g8, 12e-6}, {NULL, 12e-6}};
    for (size_t i = 0; i < G_N_ELEMENTS(tunes); i++) {
        strata_hw *hw = strata_test_load_hw("mi300x-8", tunes[i].sets);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 1024, 0, &t, NULL));
        strata_hw_free(hw);
        ck_assert_msg(t.msccl && t.channels == 4, "%zu", i);
        ck_assert_double_eq_tol(t.launch_s, tunes[i].launch_s, 1e-15);
    }
    const double with = all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, graph);
    const double without = all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, off);
    ck_assert_double_eq_tol(without - with, 10.1e-6, 2e-9);
    ck_assert_double_eq_tol(all_reduce_on("configs/hw/mi300x-8.ini", 8, 256, NULL), without, 2e-9);
}
END_TEST

/* RCCL's all-to-all as grouped p2p (no MSCCL: msccl = false; coll_impl_rccl.c
 * a2a_tune) pays the GPU's kernel start, mi300x.ini's kernel_launch 1.9 us,
 * which no RCCL latency prices (its model has no p2p entry), plus the
 * runtime's scratch reclaim where set: 150 us more gives 151.9 us. */
START_TEST(rccl_p2p_pays_the_kernel_start)
{
    const char *const p2p[] = {"interconnect.xgmi.msccl=false", NULL};
    const char *const reclaim[] = {"interconnect.xgmi.msccl=false", "interconnect.xgmi.rccl_scratch_reclaim=150us",
                                   NULL};
    const char *const *sets[] = {p2p, reclaim};
    const double want[] = {1.9e-6, 151.9e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
        strata_hw *hw = strata_test_load_hw("mi300x-8", sets[i]);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 128, 0, &t, NULL));
        strata_hw_free(hw);
        ck_assert(!t.msccl);
        ck_assert_double_eq_tol(t.launch_s, want[i], 1e-15);
    }
}
END_TEST

/* The program's host path a call timed alone (the header's last part). */
START_TEST(a_call_timed_alone_pays_the_programs_path)
{
    /* one rank per GPU: every device host_call late, no floor */
    strata_coll_host h = {.ranks_per_process = 1, .call_s = 21.1e-6};
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 0), 21.1e-6, 1e-15);
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 21.1e-6, 1e-15);
    ck_assert_double_eq(strata_coll_host_floor(&h), 0);
    /* -g 8 alone (launch 5 us, plan 1 us, one channel): device 7 at
     * 21.1 + 7 x 1 + 7 x 5 = 63.1 us, device 0 at 21.1 + 7 = 28.1 us */
    h = (strata_coll_host){.ranks_per_process = 8, .launch_s = 5e-6, .plan_s = 1e-6, .call_s = 21.1e-6};
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 7), 63.1e-6, 1e-15);
    ck_assert_double_eq_tol(strata_coll_host_delay(&h, 0), 28.1e-6, 1e-15);
    h.graph = true; /* a replay has no host path a call */
    ck_assert_double_eq(strata_coll_host_delay(&h, 7), 0);
    /* end to end on mi300x-8.ini (the header's figures) */
    const double one = all_reduce_8b(NULL);
    const char *const call[] = {"interconnect.xgmi.rccl_host_call=20us", NULL};
    ck_assert_double_eq_tol(all_reduce_8b(call), one + 20e-6, 2e-9);
    const char *const g8[] = {"interconnect.xgmi.rccl_ranks_per_process=8", ALONE,
                              "interconnect.xgmi.rccl_host_call=20us", NULL};
    ck_assert_double_eq_tol(all_reduce_8b(g8), one + 7 * P + 7 * 5.17e-6 + 20e-6, 2e-9);
    /* refused where calls queue or replay */
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_ranks_per_process = 4\nnccl_host_launch = 5us\nnccl_host_call = 20us\n",
                                "t.ini:17: [interconnect x] nccl_host_call: expected 0 with nccl_host_overlap");
    strata_test_hw_text_refused(head, "nccl_launch = graph\nnccl_host_call = 20us\n",
                                "t.ini:16: [interconnect x] nccl_host_call: expected 0 with nccl_launch");
    strata_test_hw_text_refused(head, "nccl_host_call = 2s\n",
                                "t.ini:15: [interconnect x] nccl_host_call: expected a time from 0 to 1 s");
    /* RCCL's grouped calls are not priced: a p2p call time on its rows is refused, not ignored */
    GError *err = NULL;
    char *mi300x = strata_test_source_path("configs/hw/mi300x-8.ini");
    const char *const p2p[] = {"interconnect.xgmi.rccl_host_p2p_call=1us", NULL};
    ck_assert(!strata_hw_load(mi300x, p2p, &err));
    ck_assert_msg(err && strstr(err->message, "rccl_host_p2p_call: expected 0: rccl's grouped send/receive calls"),
                  "%s", err ? err->message : "");
    g_clear_error(&err);
    g_free(mi300x);
}
END_TEST

/* Bad values are refused at their line. */
START_TEST(bad_values_at_their_line)
{
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_ranks_per_process = 0\n",
                                "t.ini:15: [interconnect x] nccl_ranks_per_process: expected a whole number of GPUs "
                                "per process from 1 to 64 (1: one rank per GPU), got '0'");
    strata_test_hw_text_refused(head, "nccl_ranks_per_process = 65\n", "t.ini:15: [interconnect x] "
                                "nccl_ranks_per_process: expected a whole number");
    strata_test_hw_text_refused(head, "nccl_ranks_per_process = 4\n",
                                "t.ini:15: [interconnect x] nccl_ranks_per_process: nccl_ranks_per_process = 4: "
                                "expected nccl_host_launch too");
    strata_test_hw_text_refused(head, "nccl_ranks_per_process = 4\nnccl_host_launch = fast\n",
                                "t.ini:16: [interconnect x] nccl_host_launch");
    strata_test_hw_text_refused(head, "nccl_host_plan = -1us\n", "t.ini:15: [interconnect x] nccl_host_plan");
    strata_test_hw_text_refused(head, "rccl_ranks_per_process = 4\n",
                                "t.ini:15: [interconnect x] rccl_ranks_per_process: expected only with collectives = rccl");
    strata_test_hw_text_refused(head, "rccl_scratch_reclaim = 150us\n",
                                "t.ini:15: [interconnect x] rccl_scratch_reclaim: expected only with "
                                "collectives = rccl");
    static const char rccl[] = "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n[interconnect x]\ntopology = full\nbandwidth = 1GB/s\n"
                               "collectives = rccl\nrccl_channels = 4\nrccl_channel_bandwidth = 1GB/s\n";
    strata_test_hw_text_refused(rccl, "rccl_scratch_reclaim = 2s\n",
                                "t.ini:14: [interconnect x] rccl_scratch_reclaim: expected a time from 0 to 1 s");
    strata_test_hw_text_refused(rccl, "rccl_scratch_reclaim = soon\n",
                                "t.ini:14: [interconnect x] rccl_scratch_reclaim");
    strata_test_hw_text_refused(head, "nccl_host_channel = 2s\n",
                                "t.ini:15: [interconnect x] nccl_host_channel: expected a time from 0 to 1 s");
    strata_test_hw_text_refused(head, "nccl_host_set_device = 2s\n",
                                "t.ini:15: [interconnect x] nccl_host_set_device: expected a time from 0 to 1 s");
    strata_test_hw_text_refused(rccl, "rccl_host_stream_op = -1us\n", "t.ini:14: [interconnect x] rccl_host_stream_op");
    strata_test_hw_text_refused(rccl, "rccl_host_overlap = yes\n",
                                "t.ini:14: [interconnect x] rccl_host_overlap: expected true or false, got 'yes'");
    strata_test_hw_text_refused(head, "nccl_launch = capture\n",
                                "t.ini:15: [interconnect x] nccl_launch: expected stream (each call launched by the "
                                "host) or graph (the calls replayed from a CUDA/HIP graph, nccl-tests/rccl-tests -G N), "
                                "got 'capture'");
    strata_test_hw_text_refused(rccl, "rccl_launch = 1\n", "t.ini:14: [interconnect x] rccl_launch: expected stream");
    strata_test_hw_text_refused(rccl, "rccl_mscclpp = maybe\n",
                                "t.ini:14: [interconnect x] rccl_mscclpp: expected true or false, got 'maybe'");
    strata_test_hw_text_refused(head, "rccl_launch = graph\n",
                                "t.ini:15: [interconnect x] rccl_launch: expected only with collectives = rccl");
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, "nccl_ranks_per_process = 4\nnccl_host_launch = 5us\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_hw_free(hw);
}
END_TEST

static Suite *coll_host_suite(void)
{
    Suite *s = suite_create("coll_host");
    TCase *tc = tcase_create("coll_host");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_last_gpu_starts_after_the_others_launches);
    tcase_add_test(tc, the_runtime_scratch_reclaim_is_paid_at_every_launch);
    tcase_add_test(tc, rccl_2_20_runs_no_msccl_where_ranks_share_a_process);
    tcase_add_test(tc, back_to_back_calls_take_the_hosts_pace_or_the_gpus);
    tcase_add_test(tc, an_all_to_all_back_to_back_takes_the_hosts_floor);
    tcase_add_test(tc, delay_by_device);
    tcase_add_test(tc, the_hosts_floor_counts_the_calls_channels);
    tcase_add_test(tc, nccls_runtime_calls_priced_by_the_sources_counts);
    tcase_add_test(tc, a_graph_replay_pays_no_host_work_a_call);
    tcase_add_test(tc, mscclpp_runs_small_captured_all_reduces);
    tcase_add_test(tc, rccl_p2p_pays_the_kernel_start);
    tcase_add_test(tc, a_call_timed_alone_pays_the_programs_path);
    tcase_add_test(tc, bad_values_at_their_line);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(coll_host_suite()); }
