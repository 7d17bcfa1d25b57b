/* test_staging.c: pageable copies through the driver's pinned staging
 * buffer (hw/staging.h), by hand, and one through the engine. */
#include <math.h>
#include "testutil.h"
#include "hw/hw.h"
#include "hw/pcie.h"
#include "hw/staging.h"
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
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
