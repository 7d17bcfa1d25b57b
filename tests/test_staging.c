/* test_staging.c: pageable copies through the driver's pinned staging
 * buffer (hw/staging.h), by hand, and one through the engine; the CPU rate
 * the pipeline inverts to, and the staging link `strata calibrate --backend
 * cuda` writes with it (backend/cuda_backend.h) run back through the engine. */
#include <math.h>
#include "testutil.h"
#include "engine/engine.h"
#include "results/results.h"
#include "hw/hw.h"
#include "hw/pcie.h"
#include "hw/staging.h"
#include "backend/cuda_backend.h"
#include "validate/published.h"

/* buffer 200 B (chunks of 100), CPU 100 B/s, DMA 50 B/s with 1 s setup,
 * 250 B = chunks 100, 100, 50:
 *   cpu1 0-1, dma1 1-4 (1 + 100/50); cpu2 1-2 (the other half), dma2 4-7;
 *   cpu3 waits for half 1 (dma1 ends at 4): 4-4.5, dma3 7-9 (1 + 50/50).
 * Pipeline 9 s; alone (1 s + 250/50) 6 s: extra 3 s. */
START_TEST(dma_bound_by_hand)
{
    strata_staging_path p = {.buffer = 200, .cpu_rate = 100, .dma_rate = 50, .dma_latency = 1};
    ck_assert_double_eq_tol(strata_staging_pipeline_time(&p, 250), 9, 1e-12);
    ck_assert_double_eq_tol(strata_staging_extra(&p, 250), 3, 1e-12);
}
END_TEST

/* CPU 10 B/s, DMA 1000 B/s, no setup, 200 B = two chunks of 100:
 * cpu1 0-10, dma1 10-10.1, cpu2 10-20, dma2 20-20.1: 20.1 s against
 * 200/10 = 20 s alone: the last chunk's DMA, 0.1 s. */
START_TEST(cpu_bound_by_hand)
{
    strata_staging_path p = {.buffer = 200, .cpu_rate = 10, .dma_rate = 1000, .dma_latency = 0};
    ck_assert_double_eq_tol(strata_staging_pipeline_time(&p, 200), 20.1, 1e-12);
    ck_assert_double_eq_tol(strata_staging_extra(&p, 200), 0.1, 1e-12);
    ck_assert_double_eq(strata_staging_extra(&p, 0), 0); /* nothing to copy */
}
END_TEST

/* The serial path (XLA's transfer manager, staging.h): buffer 200 B taken
 * whole, CPU 100 B/s, DMA 50 B/s with 1 s setup, 450 B = chunks 200, 200,
 * 50: each chunk pays 1 s + c/50 + c/100: 7, 7 and 2.5 s, 16.5 s in all;
 * alone (1 s + 450/50) 10 s: extra 6.5 s. The pipelined path of the same
 * figures (chunks of 100) takes less. */
START_TEST(serial_by_hand)
{
    strata_staging_path p = {.buffer = 200, .cpu_rate = 100, .dma_rate = 50, .dma_latency = 1, .serial = true};
    ck_assert_double_eq_tol(strata_staging_pipeline_time(&p, 450), 16.5, 1e-12);
    ck_assert_double_eq_tol(strata_staging_extra(&p, 450), 6.5, 1e-12);
    ck_assert_double_eq_tol(strata_staging_pipeline_time(&p, 400), 14, 1e-12); /* two whole chunks */
    p.serial = false;
    ck_assert(strata_staging_pipeline_time(&p, 450) < 16.5);
}
END_TEST

/* Case `index` of validation/FILE as shipped: its simulated value. */
static double simulate_case(const char *file, int index)
{
    char *dir = strata_test_source_path("validation");
    strata_published *set = strata_published_new();
    char *path = g_build_filename(dir, file, NULL);
    GError *err = NULL;
    ck_assert_msg(strata_published_load(set, path, &err), "%s", err ? err->message : "");
    double value = 0;
    ck_assert_msg(strata_published_simulate(strata_published_case_at(set, (uint32_t)index), &value, &err), "%s",
                  err ? err->message : "");
    strata_published_free(set);
    g_free(path);
    g_free(dir);
    return value;
}

/* bandwidthTest --memory=pageable on the DGX A100 (bandwidthtest-
 * pageable.ini, case _i: h2d, d2h) on configs/hw/a100.ini: 32,000,000 B
 * cross staging (5 us, a 2 MiB buffer: 30 chunks of c = 1 MiB and 542,720
 * B) and pcie (Gen4 x16 at 256 B: r_d = 25.99 GB/s, test_pcie.c; 2 us),
 * the CPU copy at 7.7 GB/s each way (cpu_copy_in, cpu_copy_out: one
 * thread's memcpy on EPYC Rome). A chunk: 136.2 us on the CPU, 2 us + 40.3
 * us of DMA, so the CPU binds: 5 us + B / 7.7e9 + 2 us + 542720 / r_d =
 * 4.1837 ms, and bandwidthTest's B / time = 7.649 GB/s either way. */
START_TEST(a100_bandwidthtest_pageable)
{
    strata_pcie_config gen4 = {4, 16, 256, 512, 0};
    double r_d = strata_pcie_data_rate(&gen4), bytes = 32e6;
    double t = 5e-6 + bytes / 7.7e9 + 2e-6 + (bytes - 30 * 1048576.0) / r_d;
    ck_assert_double_eq_tol(bytes / t, 7.6487e9, 1e5);
    ck_assert_double_eq_tol(simulate_case("bandwidthtest-pageable.ini", _i), bytes / t, 1e-3 * bytes / t * 1e-6);
}
END_TEST

/* A copy of the shipped jax case on another hardware file: the case's
 * trace (10 GiB from HBM to pageable memory) on validation/hw/NAME. */
static double simulate_on(const char *name)
{
    char *dir = strata_test_source_path("validation");
    strata_published *set = strata_published_new();
    char *file = g_build_filename(dir, "jax-device-put.ini", NULL);
    GError *err = NULL;
    ck_assert_msg(strata_published_load(set, file, &err), "%s", err ? err->message : "");
    strata_published_case c = *strata_published_case_at(set, 0);
    char *hw = g_build_filename(dir, "hw", name, NULL);
    c.hw = hw;
    double value = 0;
    ck_assert_msg(strata_published_simulate(&c, &value, &err), "%s", err ? err->message : "");
    g_free(hw);
    strata_published_free(set);
    g_free(file);
    g_free(dir);
    return value;
}

/* The CUDA driver's path through the engine: validation/hw/h100-pcie.ini =
 * configs/hw/h100-pcie.ini: 10 GiB from HBM to pageable memory crosses
 * pcie (Gen5 x16 at 256 B: r_d = 51.977 GB/s, test_pcie.c; 2 us) then
 * staging (CPU copy at 307.2 / 2 = 153.6 GB/s, 5 us, 2 MiB buffer: chunks of
 * 1 MiB, n = 10240). The route alone: 5 us + 2 us + B / r_d. The pipeline:
 * the DMA binds (1 MiB takes 20.2 us there, 6.8 us on the CPU), so
 * c / 153.6e9 + n (2 us + c / r_d); the extra over the route is
 * c / 153.6e9 + (n - 1) x 2 us. */
START_TEST(pageable_copy_through_the_engine)
{
    double value = simulate_on("h100-pcie.ini");
    strata_pcie_config gen5 = {5, 16, 256, 512, 0};
    double r_d = strata_pcie_data_rate(&gen5), chunk = 1048576, bytes = 10737418240.0;
    ck_assert_double_eq_tol(r_d, 4 * 12.994293e9, 1e4);
    double want = 5e-6 + 2e-6 + bytes / r_d + chunk / 153.6e9 + (bytes / chunk - 1) * 2e-6;
    ck_assert_double_eq_tol(value, want, 1e-9);
}
END_TEST

/* XLA's path through the engine (the shipped jax case):
 * validation/hw/h100-pcie-xla.ini's staging link copies at 4 GB/s through
 * one 128 MiB buffer, serially: 10 GiB = n = 80 chunks c. The route alone:
 * 5 us + 2 us + B / 4e9 (the CPU copy is the slower link). The serial path
 * takes n (2 us + c / r_d + c / 4e9); beyond a lone DMA (2 us + B / 4e9)
 * that is 79 x 2 us + B / r_d. In all 5 us + 80 x 2 us + B / 4e9 + B / r_d
 * = 2.8911 s. */
START_TEST(xla_copy_through_the_engine)
{
    double value = simulate_on("h100-pcie-xla.ini");
    strata_pcie_config gen5 = {5, 16, 256, 512, 0};
    double r_d = strata_pcie_data_rate(&gen5), bytes = 10737418240.0;
    double want = 5e-6 + 80 * 2e-6 + bytes / 4e9 + bytes / r_d;
    ck_assert_double_eq_tol(want, 2.8911, 1e-4);
    ck_assert_double_eq_tol(value, want, 1e-9);
}
END_TEST

/* staging_overlap = false (or no, 0: strata's one boolean rule, units.h)
 * makes the link serial; a bad value, or one on a link without a staging
 * buffer, names FILE:LINE and the key. */
START_TEST(overlap_key)
{
    static const char *head = "[hardware]\nname = t\ndefault_memory = host\n[memory host]\nkind = host\ncapacity = 1GB\nbandwidth = 10GB/s\n"
                              "[memory pageable]\nkind = host\npageable = true\ncapacity = 1GB\nbandwidth = 10GB/s\n"
                              "[link staging]\nbetween = pageable host\nbandwidth = 5GB/s\n";
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, "staging_buffer = 2MiB\nstaging_overlap = false\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert(strata_hw_link(hw, 0)->staging_serial);
    strata_hw_free(hw);
    hw = strata_test_load_hw_text(head, "staging_buffer = 2MiB\nstaging_overlap = no\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert(strata_hw_link(hw, 0)->staging_serial);
    strata_hw_free(hw);
    strata_test_hw_text_refused(head, "staging_buffer = 2MiB\nstaging_overlap = sometimes\n",
                                "t.ini:17: [link staging] staging_overlap");
    strata_test_hw_text_refused(head, "staging_overlap = false\n", "staging_overlap needs staging_buffer");
}
END_TEST

/* A CPU copy rate per direction through the engine. Hardware: pageable and
 * pinned host memory and hbm with 1 TB/s ports (never the bound); pcie D =
 * 25 GB/s, 2 us; staging 100 GB/s (what all CPU copies share), 5 us, a
 * 2 MiB buffer (chunks c = 1 MiB = 1048576 B), cpu_copy_in R_in = 8 GB/s,
 * cpu_copy_out R_out = 10 GB/s. 32,000,000 B (bandwidthTest's size) = 30
 * chunks and a rest of 32e6 - 30 c = 542720 B.
 *
 * Host to device: a chunk's CPU copy takes c / R_in = 131.072 us, its DMA
 * 2 us + c / D = 43.943 us, so the CPU binds and never waits for a half
 * (chunk i's DMA ends before chunk i+1's copy does): the pipeline is
 * B / R_in + the last chunk's DMA = 4 ms + 2 us + 542720 / 25e9 =
 * 4.0237088 ms. The engine waits the route's latency (7 us), moves B at
 * the route's slowest link (B / D) and then the extra, the pipeline less
 * (2 us + B / min(100 GB/s, D)): in all 5 us + 4.0237088 ms = 4.0287088 ms,
 * 7.943 GB/s.
 *
 * Device to host: the same at R_out: 5 us + 3.2 ms + 2 us + 21.7088 us =
 * 3.2287088 ms. Without cpu_copy_out that direction copies at the link's
 * bandwidth (100 GB/s) and the DMA binds: 5 us + B / D + 2 us + c / 100e9
 * + 30 x 2 us = 1.3575 ms (the old one-rate link, as before). */
static double run_copy(const char *rates, const char *trace)
{
    static const char *head =
        "[hardware]\nname = t\ndefault_memory = hbm\n"
        "[memory hbm]\nkind = device\ncapacity = 1GB\nbandwidth = 1TB/s\n"
        "[memory host]\nkind = host\ncapacity = 1GB\nbandwidth = 1TB/s\n"
        "[memory pageable]\nkind = host\npageable = true\ncapacity = 1GB\nbandwidth = 1TB/s\n"
        "[link pcie]\nbetween = host hbm\nbandwidth = 25GB/s\nlatency = 2us\n"
        "[link staging]\nbetween = pageable host\nbandwidth = 100GB/s\nlatency = 5us\nstaging_buffer = 2MiB\n";
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, rates, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_results *r = strata_test_run_trace_text(hw, trace, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    double t = r->makespan_s;
    strata_results_free(r);
    strata_hw_free(hw);
    return t;
}

static const char *const H2D = "strata-trace 1\nalloc s 32000000 pageable\nalloc d 32000000 hbm\ncopy d s\n";
static const char *const D2H = "strata-trace 1\nalloc s 32000000 hbm\nalloc d 32000000 pageable\ncopy d s\n";
#define REST (32e6 - 30 * 1048576.0) /* 542720 B */
static const struct {
    const char *rates;
    double want;
} RATE_ROWS[] = {
    {"cpu_copy_in = 8GB/s\ncpu_copy_out = 10GB/s\n", 5e-6 + 32e6 / 8e9 + 2e-6 + REST / 25e9},
    {"cpu_copy_in = 8GB/s\ncpu_copy_out = 10GB/s\n", 5e-6 + 32e6 / 10e9 + 2e-6 + REST / 25e9},
    {"cpu_copy_in = 8GB/s\n", 5e-6 + 32e6 / 8e9 + 2e-6 + REST / 25e9},
    /* only cpu_copy_in: device to host keeps the link's bandwidth */
    {"cpu_copy_in = 8GB/s\n", 5e-6 + 32e6 / 25e9 + 2e-6 + 1048576 / 100e9 + 30 * 2e-6},
};

/* One engine run a process (SimGrid): row _i of RATE_ROWS, H2D on even
 * rows, D2H on odd ones. */
START_TEST(rate_per_direction_by_hand)
{
    ck_assert_double_eq_tol(REST, 542720, 1e-9);
    ck_assert_double_eq_tol(RATE_ROWS[0].want, 4.0287088e-3, 1e-12);
    ck_assert_double_eq_tol(RATE_ROWS[1].want, 3.2287088e-3, 1e-12);
    ck_assert_double_eq_tol(RATE_ROWS[3].want, 1.35748576e-3, 1e-12);
    double got = run_copy(RATE_ROWS[_i].rates, _i % 2 ? D2H : H2D);
    ck_assert_msg(fabs(got - RATE_ROWS[_i].want) <= 1e-9, "row %d: got %.12g, want %.12g", _i, got,
                  RATE_ROWS[_i].want);
}
END_TEST

/* The path the engine reads off a route picks the direction's rate, and
 * keeps the link's bandwidth as the flow's: link_rate. */
START_TEST(path_picks_direction)
{
    strata_staging_path p = {.buffer = 200, .cpu_rate = 10, .link_rate = 1000, .dma_rate = 1000, .dma_latency = 0};
    /* pipeline 20.1 s (cpu_bound_by_hand); alone 200 / 1000 = 0.2 s */
    ck_assert_double_eq_tol(strata_staging_extra(&p, 200), 19.9, 1e-12);
}
END_TEST

/* cpu_copy_in and cpu_copy_out need staging_buffer, and take a bandwidth;
 * the refusals name FILE:LINE and the key. */
START_TEST(rate_keys_refused)
{
    static const char *head = "[hardware]\nname = t\ndefault_memory = host\n[memory host]\nkind = host\ncapacity = 1GB\nbandwidth = 10GB/s\n"
                              "[memory pageable]\nkind = host\npageable = true\ncapacity = 1GB\nbandwidth = 10GB/s\n"
                              "[link staging]\nbetween = pageable host\nbandwidth = 5GB/s\n";
    strata_test_hw_text_refused(head, "cpu_copy_in = 8GB/s\n", "cpu_copy_in needs staging_buffer");
    strata_test_hw_text_refused(head, "cpu_copy_out = 8GB/s\n", "cpu_copy_out needs staging_buffer");
    strata_test_hw_text_refused(head, "staging_buffer = 2MiB\ncpu_copy_out = fast\n",
                                "t.ini:17: [link staging] cpu_copy_out");
    strata_test_hw_text_refused(head, "staging_buffer = 2MiB\ncpu_copy_in = 0GB/s\n",
                                "t.ini:17: [link staging] cpu_copy_in");
    /* one copy faster than what all the host's copies share (the link's 5 GB/s) ran at 5 GB/s, unsaid */
    strata_test_hw_text_refused(head, "staging_buffer = 2MiB\ncpu_copy_in = 7.7GB/s\n",
                                "t.ini:17: [link staging] cpu_copy_in: expected at most the link's bandwidth");
    strata_test_hw_text_refused(head, "staging_buffer = 2MiB\ncpu_copy_out = 5.1GB/s\n",
                                "t.ini:17: [link staging] cpu_copy_out: expected at most the link's bandwidth");
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, "staging_buffer = 2MiB\ncpu_copy_in = 4.7GB/s\ncpu_copy_out = 5GB/s\n",
                                             &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert_double_eq(strata_hw_link(hw, 0)->cpu_copy_in, 4.7e9);
    ck_assert_double_eq(strata_hw_link(hw, 0)->cpu_copy_out, 5e9); /* the bandwidth itself stays taken */
    strata_hw_free(hw);
}
END_TEST

/* The inverse in the CPU rate (staging.h), by the closed forms: buffer 200
 * (chunks c = 100), DMA 50 B/s with 1 s setup: d = 1 + 100 / 50 = 3 s a
 * chunk; 500 B = n = 5 chunks.
 *   T = 25 s: CPU bound, x = (T - d) / n = 22 / 5 = 4.4 s >= d: 100 / 4.4 B/s;
 *   T = 17 s: n d = 15 < T <= (n + 1) d = 18: DMA bound, x = T - n d = 2 s: 50 B/s;
 *   T = 18 s: both forms, x = 3 s: 33.3 B/s;
 *   T = 15 s, 14 s: the DMAs alone take 15 s: no rate (0).
 * A last partial chunk (dma_bound_by_hand: 250 B in 9 s at 100 B/s) and the
 * serial path (serial_by_hand: 450 B in 16.5 s at 100 B/s) invert to the
 * rate they were built with. Each rate gives back its time. */
START_TEST(cpu_rate_inverted_by_hand)
{
    strata_staging_path p = {.buffer = 200, .dma_rate = 50, .dma_latency = 1};
    static const struct {
        uint64_t bytes;
        double seconds, rate;
    } rows[] = {{500, 25, 100 / 4.4}, {500, 17, 50}, {500, 18, 100 / 3.0}, {500, 15, 0}, {500, 14, 0}, {250, 9, 100}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        double got = strata_staging_cpu_rate_for(&p, rows[i].bytes, rows[i].seconds);
        ck_assert_msg(fabs(got - rows[i].rate) <= 1e-9 * rows[i].rate, "row %zu: %.12g, want %.12g", i, got,
                      rows[i].rate);
        if (got > 0) {
            p.cpu_rate = got;
            ck_assert_double_eq_tol(strata_staging_pipeline_time(&p, rows[i].bytes), rows[i].seconds, 1e-9);
        }
    }
    p.serial = true;
    ck_assert_double_eq_tol(strata_staging_cpu_rate_for(&p, 450, 16.5), 100, 1e-9);
    ck_assert_double_eq(strata_staging_cpu_rate_for(&p, 0, 1), 0); /* nothing copied */
}
END_TEST

/* `strata calibrate --backend cuda`'s [link staging] (cuda_backend.h) on a
 * calibrated head (pcie 50 GB/s, 10 us; the host 100 GB/s) from pageable
 * copies of B = 2^30 at 6.5 GB/s H2D and 11 GB/s D2H. A 1 MiB chunk's DMA:
 * d = 10 us + 2^20 / 50e9 = 30.97152 us, below either CPU copy (161 us,
 * 95 us): CPU bound, rate = B / (B / measured - d): 6.5012 GB/s in (written
 * 6.50 GB/s), 11.0035 GB/s out (11.00 GB/s). The engine then takes the
 * pipeline, B / rate + d, for each copy: the measured time, but for d and
 * the written rate's rounding (under 0.1%). Row 0 runs the H2D, row 1 the
 * D2H (one engine a process). Row 2: D2H measured at 50 GB/s, B / 50e9 =
 * 21.5 ms, below the DMAs alone (1024 d = 31.7 ms): no rate, the CPU copy
 * at the host's 100 GB/s, said in a comment; the D2H then takes the
 * DMA-bound pipeline 2^20 / 100e9 + 1024 d = 31.72532 ms. */
static const char *const CAL_HEAD =
    "[hardware]\nname = cal\ndefault_memory = hbm\n"
    "[memory hbm]\nkind = device\ncapacity = 4GiB\nbandwidth = 1TB/s\n"
    "[memory host]\nkind = host\ncapacity = 4GiB\nbandwidth = 100GB/s\n"
    "[memory pageable]\nkind = host\npageable = true\ncapacity = 4GiB\nbandwidth = 100GB/s\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 50GB/s\nlatency = 10us\nduplex = full\n";

/* calibrate's copy_engines: copies on one engine run in order, so of two
 * equal H2D copies issued at once the first ends at half the pair's time
 * (the H200 of docs/validation.md: 19.4 of 38.7 ms, 0.50); sharing the link
 * ends both together (1.0). 0.75 splits them; 0 is "not measured". */
START_TEST(calibrated_copy_engines)
{
    ck_assert_int_eq(strata_cuda_copy_engines_of(19.4 / 38.7), 1);
    ck_assert_int_eq(strata_cuda_copy_engines_of(0.74), 1);
    ck_assert_int_eq(strata_cuda_copy_engines_of(0.75), 0);
    ck_assert_int_eq(strata_cuda_copy_engines_of(0.98), 0);
    ck_assert_int_eq(strata_cuda_copy_engines_of(0), 0);
}
END_TEST

START_TEST(calibrated_staging_reproduces_each_direction)
{
    double bytes = 1073741824.0, d = 10e-6 + 1048576 / 50e9;
    double h2d = 6.5e9, d2h = _i == 2 ? 50e9 : 11e9;
    strata_cuda_pageable m = {.bytes = UINT64_C(1) << 30, .h2d = h2d, .d2h = d2h, .dma_rate = 50e9,
                              .dma_latency = 10e-6, .host_bandwidth = 100e9, .full = true};
    GString *ini = g_string_new(NULL);
    strata_cuda_write_staging(ini, &m, NULL);
    ck_assert_double_eq_tol(bytes / (bytes / h2d - d), 6.5012e9, 1e5);
    ck_assert_double_eq_tol(bytes / (bytes / 11e9 - d), 11.0035e9, 1e5);
    ck_assert_msg(strstr(ini->str, "cpu_copy_in = 6.50 GB/s\n"), "%s", ini->str);
    ck_assert_msg(strstr(ini->str, _i == 2 ? "cpu_copy_out = 100.00 GB/s\n" : "cpu_copy_out = 11.00 GB/s\n"), "%s",
                  ini->str);
    ck_assert_msg((_i == 2) == (strstr(ini->str, "no CPU rate reproduces it") != NULL), "%s", ini->str);
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(CAL_HEAD, ini->str, &err);
    ck_assert_msg(hw, "%s\n%s", err ? err->message : "", ini->str);
    static const char *const traces[2] = {
        "strata-trace 1\nalloc s 1073741824 pageable\nalloc d 1073741824 hbm\ncopy d s\n",
        "strata-trace 1\nalloc s 1073741824 hbm\nalloc d 1073741824 pageable\ncopy d s\n"};
    strata_results *r = strata_test_run_trace_text(hw, traces[_i ? 1 : 0], NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    double want = _i == 2 ? 1048576 / 100e9 + 1024 * d : bytes / (_i ? d2h : h2d);
    ck_assert_double_eq_tol(want, _i == 2 ? 31.72532e-3 : want, 1e-8);
    ck_assert_msg(fabs(r->makespan_s - want) <= (_i == 2 ? 1e-9 : 1e-3) * want, "row %d: %.9g s, want %.9g s", _i,
                  r->makespan_s, want);
    strata_results_free(r);
    strata_hw_free(hw);
    g_string_free(ini, TRUE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("staging");
    TCase *tc = tcase_create("staging");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, dma_bound_by_hand);
    tcase_add_test(tc, cpu_bound_by_hand);
    tcase_add_test(tc, serial_by_hand);
    tcase_add_test(tc, pageable_copy_through_the_engine);
    tcase_add_test(tc, xla_copy_through_the_engine);
    tcase_add_test(tc, overlap_key);
    tcase_add_loop_test(tc, rate_per_direction_by_hand, 0, (int)G_N_ELEMENTS(RATE_ROWS));
    tcase_add_test(tc, path_picks_direction);
    tcase_add_test(tc, rate_keys_refused);
    tcase_add_loop_test(tc, a100_bandwidthtest_pageable, 0, 2);
    tcase_add_test(tc, cpu_rate_inverted_by_hand);
    tcase_add_loop_test(tc, calibrated_staging_reproduces_each_direction, 0, 3);
    tcase_add_test(tc, calibrated_copy_engines);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
