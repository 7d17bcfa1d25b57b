/* test_dram.c: what a DRAM's refresh and bus turnarounds leave of its pin
 * rate (hw/dram.h), by hand, from a hardware file, and through the engine. */
#include <math.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/dram.h"
#include "hw/hw.h"
#include "validate/published.h"

static void near(double got, double want, double rel)
{
    ck_assert_msg(fabs(got - want) <= rel * fabs(want), "got %.9g, want %.9g", got, want);
}

/* A made-up timing in round numbers: refresh 1 s of every 4, turnarounds
 * 3 s (writes to reads) and 1 s (back), 64-bit channels, pages of 1000 B.
 * A memory of 1000 B/s over 64 pins: 125 b/s a pin, 64 x 125 / 8 = 1000 B/s
 * a channel, a page takes 1 s: a round is 1 s of reads, 1 s of writes and
 * 4 s of turnarounds, so the copy carries data 2/6 of its time; refresh
 * leaves 3/4. Twice as many pins at the same bandwidth halve the channel's
 * rate: a page takes 2 s, 4 / (4 + 4) = 1/2. */
START_TEST(shares_by_hand)
{
    strata_dram_timing t = {.name = "t", .refresh_cycle = 1, .refresh_interval = 4, .write_to_read = 3,
                            .read_to_write = 1, .channel_bits = 64, .page_bytes = 1000};
    near(strata_dram_refresh_share(&t), 0.75, 1e-15);
    near(strata_dram_copy_share(&t, 1000, 64), 1.0 / 3, 1e-15);
    near(strata_dram_copy_share(&t, 1000, 128), 0.5, 1e-15);
    /* A copy of 300 B inside a memory whose port carries 1000 B/s and whose
     * copies carry data 1/3 of the time: 600 B cross the port, 0.6 s, and
     * the turnarounds take twice that more, 1.2 s. */
    strata_memory_spec m = {.bandwidth = 1000, .copy_share = 1.0 / 3};
    near(strata_dram_copy_extra(&m, 300), 1.2, 1e-12);
    m.copy_share = 0; /* no timing set: no turnaround */
    ck_assert_double_eq(strata_dram_copy_extra(&m, 300), 0);
}
END_TEST

/* JEDEC HBM2 (dram.c: tRFC 260 ns, tREFI 3900 ns; turnarounds 20 + 3 ns;
 * 64-bit pseudo channels, 1 KiB pages) on a V100: 900 GB/s over 4096 pins
 * is 1.7578125 Gb/s a pin, 14.0625 GB/s a pseudo channel, a page in
 * 1024 / 14.0625e9 = 72.818 ns. Refresh leaves 1 - 260/3900 = 14/15 of the
 * pin rate: 840 GB/s. A copy carries data 145.636 / (145.636 + 23) =
 * 0.86360 of its time: bandwidthTest's 2 x bytes / time is
 * 840 x 0.86360 = 725.4 GB/s. */
#define V100_PAGE (1024 / (900e9 * 8 / 4096 * 64 / 8))
#define V100_SHARE (2 * V100_PAGE / (2 * V100_PAGE + 23e-9))
START_TEST(hbm2_on_a_v100)
{
    const strata_dram_timing *t = strata_dram_find("hbm2");
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_null(strata_dram_find("hbm9"));
    near(V100_PAGE, 72.818e-9, 1e-4);
    near(strata_dram_refresh_share(t), 14.0 / 15, 1e-12);
    near(strata_dram_copy_share(t, 900e9, 4096), V100_SHARE, 1e-12);
    near(V100_SHARE, 0.86360, 1e-4);
    near(900e9 * 14.0 / 15 * V100_SHARE, 725.43e9, 1e-4);
}
END_TEST

/* JEDEC HBM3 (dram.c, Ramulator2's JESD238 spec, clocks of 0.625 ns):
 * turnarounds nWTRS + nCL = 7 + 20 clocks and nRTW + nCWL - nCL - nBL =
 * 20 + 10 - 22 = 8 clocks: 35 x 0.625 = 21.875 ns; 32-bit pseudo channels,
 * 1 KiB pages.
 * hbm3 on an H100 SXM5: 3.35 TB/s over 5 x 1024 pins is 5.234375 Gb/s a pin,
 * 20.9375 GB/s a pseudo channel, a page in 1024 / 20.9375e9 = 48.907 ns; a
 * copy carries data 97.815 / (97.815 + 21.875) = 0.81724 of its time;
 * refresh (8 Gb channels, tRFC 350 ns) leaves 1 - 350/3900 = 71/78 =
 * 0.91026: 3.0494 TB/s, and a copy counting each byte once 3.0494 x
 * 0.81724 / 2 = 1.2460 TB/s.
 * hbm3e on an H200: 4.8 TB/s over 6 x 1024 pins is 6.25 Gb/s a pin, 25 GB/s
 * a pseudo channel, a page in 40.96 ns; 81.92 / (81.92 + 21.875) = 0.78925;
 * refresh (12 Gb channels, tRFC 450 ns) leaves 1 - 450/3900 = 23/26 =
 * 0.88462: 4.2462 TB/s, a copy once 4.2462 x 0.78925 / 2 = 1.6756 TB/s. */
#define HBM3_TURN 21.875e-9
#define H100_PAGE (1024 / (3.35e12 * 8 / 5120 * 32 / 8))
#define H100_SHARE (2 * H100_PAGE / (2 * H100_PAGE + HBM3_TURN))
#define H200_PAGE (1024 / (4.8e12 * 8 / 6144 * 32 / 8))
#define H200_SHARE (2 * H200_PAGE / (2 * H200_PAGE + HBM3_TURN))
START_TEST(hbm3_on_an_h100_and_hbm3e_on_an_h200)
{
    const strata_dram_timing *t3 = strata_dram_find("hbm3"), *t3e = strata_dram_find("hbm3e");
    ck_assert_ptr_nonnull(t3);
    ck_assert_ptr_nonnull(t3e);
    near(t3->write_to_read + t3->read_to_write, HBM3_TURN, 1e-12);
    near(t3e->write_to_read + t3e->read_to_write, HBM3_TURN, 1e-12);
    near(H100_PAGE, 48.907e-9, 1e-4);
    near(strata_dram_refresh_share(t3), 71.0 / 78, 1e-12);
    near(strata_dram_copy_share(t3, 3.35e12, 5120), H100_SHARE, 1e-12);
    near(H100_SHARE, 0.81724, 1e-4);
    near(3.35e12 * 71.0 / 78 * H100_SHARE / 2, 1.2460e12, 1e-4);
    near(H200_PAGE, 40.96e-9, 1e-9);
    near(strata_dram_refresh_share(t3e), 23.0 / 26, 1e-12);
    near(strata_dram_copy_share(t3e, 4.8e12, 6144), H200_SHARE, 1e-12);
    near(H200_SHARE, 0.78925, 1e-4);
    near(4.8e12 * 23.0 / 26 * H200_SHARE / 2, 1.6756e12, 1e-4);
}
END_TEST

static const char *mem_head = "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 1GB\n"
                              "bandwidth = 900GB/s\n";

static strata_hw *load_memory(const char *keys, GError **err)
{
    return strata_test_load_hw_text(mem_head, keys, err);
}

/* The keys give the port's rate and the copy share; without them the port
 * is the pin rate; bad keys name FILE:LINE and the key. */
START_TEST(memory_keys)
{
    GError *err = NULL;
    strata_hw *hw = load_memory("dram = hbm2\nbus_width = 4096\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    const strata_memory_spec *m = strata_hw_memory(hw, 0);
    near(m->pin_bandwidth, 900e9, 1e-15);
    near(m->bandwidth, 840e9, 1e-12);
    near(m->copy_share, V100_SHARE, 1e-12);
    ck_assert_str_eq(m->dram, "hbm2");
    strata_hw_free(hw);

    hw = load_memory("", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    m = strata_hw_memory(hw, 0);
    near(m->bandwidth, 900e9, 1e-15);
    ck_assert_double_eq(m->copy_share, 0);
    ck_assert_double_eq(strata_dram_copy_extra(m, 1000000), 0);
    strata_hw_free(hw);

    /* dram = none: no timing set, a bus_width (a base file's) not read. */
    hw = load_memory("dram = none\nbus_width = 4096\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    m = strata_hw_memory(hw, 0);
    near(m->bandwidth, 900e9, 1e-15);
    ck_assert_double_eq(m->copy_share, 0);
    strata_hw_free(hw);

    const char *bad[][2] = {
        {"dram = hbm9\nbus_width = 4096\n", "t.ini:7: [memory hbm] dram"},
        {"dram = hbm2\n", "needs bus_width"},
        {"bus_width = 4096\n", "[memory hbm] bus_width: bus_width needs dram"},
        {"dram = hbm2\nbus_width = 100\n", "[memory hbm] bus_width"},
        {"dram = hbm2\nbus_width = 0\n", "a multiple of 64"},
        {"dram = hbm3\nbus_width = 96\n", "a multiple of 64"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        strata_test_hw_text_refused(mem_head, bad[i][0], bad[i][1]);
}
END_TEST

/* The shipped V100 case through the engine: one copy of 32e6 B inside HBM
 * moves 64e6 B through the port at 840 GB/s, then waits the turnarounds,
 * 64e6 / 840e9 x (1 / share - 1): bandwidthTest's 64e6 B over that time is
 * 840 GB/s x share (hbm2_on_a_v100). */
START_TEST(copy_inside_hbm_through_the_engine)
{
    char *dir = strata_test_source_path("validation");
    char *file = g_build_filename(dir, "cuda-samples-bandwidthtest.ini", NULL);
    strata_published *set = strata_published_new();
    GError *err = NULL;
    ck_assert_msg(strata_published_load(set, file, &err), "%s", err ? err->message : "");
    const strata_published_case *c = NULL;
    for (size_t i = 0; i < strata_published_count(set); i++)
        if (strcmp(strata_published_case_at(set, i)->name, "v100-sxm2 d2d 32MB") == 0)
            c = strata_published_case_at(set, i);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->bytes, 64000000u);
    double value = 0;
    ck_assert_msg(strata_published_simulate(c, &value, &err), "%s", err ? err->message : "");
    near(value, 840e9 * V100_SHARE, 1e-6);
    strata_published_free(set);
    g_free(file);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dram");
    TCase *tc = tcase_create("dram");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shares_by_hand);
    tcase_add_test(tc, hbm2_on_a_v100);
    tcase_add_test(tc, hbm3_on_an_h100_and_hbm3e_on_an_h200);
    tcase_add_test(tc, memory_keys);
    tcase_add_test(tc, copy_inside_hbm_through_the_engine);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
