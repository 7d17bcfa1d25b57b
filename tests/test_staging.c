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

/* The shipped jax case through the engine: validation/hw/h100-pcie.ini =
 * configs/hw/h100-pcie.ini: 10 GiB from HBM to pageable memory crosses
 * pcie (Gen5 x16 at 256 B: r_d = 51.977 GB/s, test_pcie.c; 2 us) then
 * staging (CPU copy at 307.2 / 2 = 153.6 GB/s, 5 us, 2 MiB buffer: chunks of
 * 1 MiB, n = 10240). The route alone: 5 us + 2 us + B / r_d. The pipeline:
 * the DMA binds (1 MiB takes 20.2 us there, 6.8 us on the CPU), so
 * c / 153.6e9 + n (2 us + c / r_d); the extra over the route is
 * c / 153.6e9 + (n - 1) x 2 us. */
START_TEST(pageable_copy_through_the_engine)
{
    char *dir = strata_test_source_path("validation");
    strata_published *set = strata_published_new();
    char *file = g_build_filename(dir, "jax-device-put.ini", NULL);
    GError *err = NULL;
    ck_assert_msg(strata_published_load(set, file, &err), "%s", err ? err->message : "");
    const strata_published_case *c = strata_published_case_at(set, 0);
    double value = 0;
    ck_assert_msg(strata_published_simulate(c, &value, &err), "%s", err ? err->message : "");
    strata_pcie_config gen5 = {5, 16, 256, 512, 0};
    double r_d = strata_pcie_data_rate(&gen5), chunk = 1048576, bytes = 10737418240.0;
    ck_assert_double_eq_tol(r_d, 4 * 12.994293e9, 1e4);
    double want = 5e-6 + 2e-6 + bytes / r_d + chunk / 153.6e9 + (bytes / chunk - 1) * 2e-6;
    ck_assert_double_eq_tol(value, want, 1e-9);
    strata_published_free(set);
    g_free(file);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("staging");
    TCase *tc = tcase_create("staging");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, dma_bound_by_hand);
    tcase_add_test(tc, cpu_bound_by_hand);
    tcase_add_test(tc, pageable_copy_through_the_engine);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
