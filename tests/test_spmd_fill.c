/*
 * test_spmd_fill.c: a round's copies by progressive filling
 * (spmd/spmd_fill.h), against dates derived by hand.
 *
 * The tests below but the first give each copy CM02's penalty, its route
 * latency ([hardware] flow_sharing = latency); the first compares it with
 * the default, equal sharing.
 *
 * Two copies of unequal latency on one link of 100 GB/s: A (1 us, 150,000
 * bytes) alone from 1 us moves 100,000 bytes by 2 us, when B (2 us,
 * 100,000 bytes) starts; CM02 weighs them 1/1 : 1/2, so A gets 2/3 of the
 * link: its last 50,000 bytes take 0.75 us (A ends at 2.75 us), in which
 * B moves 25,000; B's other 75,000 alone take 0.75 us: 3.5 us. Shared
 * equally, A's last 50,000 bytes at 50 GB/s take 1 us (A ends at 3 us),
 * in which B moves 50,000; B's other 50,000 alone take 0.5 us: 3.5 us
 * again (the link is never idle from 1 us: 250,000 bytes end at 3.5 us).
 *
 * The busiest link direction of xla's bidir-torus all-gather of 1 MiB on
 * a 2x2x2 v5p slice (8 chips, 64 KiB a copy, 0.5 us a hop, 100 GB/s): a
 * 1-hop copy (starts 0.5 us), a 2-hop (1 us), two 3-hop (1.5 us) whose
 * second hop they share with each other alone. From 0.5 to 1 us the 1-hop
 * moves 50,000 bytes; then 2:1 against the 2-hop, its last 15,536 bytes at
 * 2/3 of the link take 0.23304 us (ends 1.23304 us) while the 2-hop moves
 * 7,768; the 2-hop alone to 1.5 us moves 26,696 more; then weights 1 :
 * 2/3 : 2/3, its last 31,072 bytes at 3/7 of the link end at 1.5 +
 * 0.725013... = 2.225013... us; the 3-hop copies then share the link
 * (50 GB/s each, their shared hop as much) and, the link never idle from
 * 0.5 us, end when its 4 x 65,536 bytes have passed: 0.5 + 2.62144 =
 * 3.12144 us, the steps' round.
 *
 * Rounds as a pipeline (spmd_fill_rounds): a ring of 4 devices, copy ci
 * from i to i + 1 (mod 4), 100,000 bytes at 100 GB/s (1 us alone); c0
 * (1.5 us of latency) and c2 (1 us) share a link, c1 and c3 (1 us) have
 * their own. A device's round ends when the copies into it and into the
 * device it sends to have: ci's next round starts at the latest end of
 * c(i-1), ci, c(i+1). Round 0 from a common start: c2 alone from 1 to 1.5
 * us (50,000 bytes), then 1 : 2/3 against c0, its last 50,000 at 3/5 of
 * the link end at 2.3333 us, c0 having moved 33,333; c0's rest alone ends
 * at 3 us (the round alone: 3 us); c1 and c3 end at 2. Round 1: c2 starts
 * at 2.3333 (c1 2, c2 2.3333, c3 2), moves from 3.3333 to 4.3333, before
 * c0 (starts 3, moves from 4.5 to 5.5): no sharing; c1, c3 end at 5.
 * Round 2: c2 starts at 5, moves from 6 to 7, c0 starts at 5.5, from 7 to
 * 8; c1, c3 end at 7.5; and so every round after, 2.5 us later (c0's
 * latency and bytes alone): 4 rounds end at 3 + 3 x 2.5 = 10.5 us, 2.625
 * us a round where the rounds from a common start would take 3; 100 rounds
 * at 3 + 99 x 2.5 = 250.5 us, which 4 rounds simulated and the pace of the
 * last 2 (2.5 us) give too. Each device's round ends at the later of its
 * copy in (c(i-1)) and its copy out (ci): devices 0 and 1 (c0's ends) at 3,
 * 5.5, 8, 10.5 us, devices 2 and 3 at 2.3333, 5, 7.5, 10 us (c1 and c3
 * end 0.5 us before c0 from round 1): 0.5 us before the last, as in every
 * round after (dev_end: 10.5, 10.5, 10, 10 us of 4 rounds; 250.5, 250.5,
 * 250, 250 of 100).
 */
#include <math.h>
#include "spmd/spmd_fill.h"
#include "testutil.h"

static void close_to(double a, double b, const char *what)
{
    ck_assert_msg(fabs(a - b) <= 1e-9 * fabs(b), "%s: %.17g, expected %.17g", what, a, b);
}

START_TEST(test_two_latencies_one_link)
{
    spmd_fill *f = spmd_fill_new(4, true);
    double ends[2];
    spmd_fill_copy(f, 0, 1e-6, 150000);
    spmd_fill_link(f, 3, 100e9);
    spmd_fill_copy(f, 0, 2e-6, 100000);
    spmd_fill_link(f, 3, 100e9);
    close_to(spmd_fill_run(f, ends), 3.5e-6, "round");
    close_to(ends[0], 2.75e-6, "A");
    close_to(ends[1], 3.5e-6, "B");
    /* cleared: B alone, after a fixed delay of 1 us */
    spmd_fill_clear(f);
    spmd_fill_copy(f, 1e-6, 2e-6, 100000);
    spmd_fill_link(f, 3, 100e9);
    close_to(spmd_fill_run(f, ends), 4e-6, "B alone");
    spmd_fill_clear(f);
    ck_assert(spmd_fill_run(f, NULL) == 0);
    spmd_fill_free(f);
}
END_TEST

START_TEST(test_two_latencies_equal_shares)
{
    spmd_fill *f = spmd_fill_new(4, false);
    double ends[2];
    spmd_fill_copy(f, 0, 1e-6, 150000);
    spmd_fill_link(f, 3, 100e9);
    spmd_fill_copy(f, 0, 2e-6, 100000);
    spmd_fill_link(f, 3, 100e9);
    close_to(spmd_fill_run(f, ends), 3.5e-6, "round");
    close_to(ends[0], 3e-6, "A");
    close_to(ends[1], 3.5e-6, "B");
    spmd_fill_free(f);
}
END_TEST

START_TEST(test_torus_round)
{
    spmd_fill *f = spmd_fill_new(8, true);
    double ends[4];
    spmd_fill_copy(f, 0, 0.5e-6, 65536); /* 1 hop */
    spmd_fill_link(f, 0, 100e9);
    spmd_fill_copy(f, 0, 1.0e-6, 65536); /* 2 hops */
    spmd_fill_link(f, 0, 100e9);
    spmd_fill_link(f, 5, 100e9);
    for (int i = 0; i < 2; i++) { /* 3 hops, the second shared */
        spmd_fill_copy(f, 0, 1.5e-6, 65536);
        spmd_fill_link(f, (uint32_t)(6 + i), 100e9);
        spmd_fill_link(f, 1, 100e9);
        spmd_fill_link(f, 0, 100e9);
    }
    close_to(spmd_fill_run(f, ends), 3.12144e-6, "round");
    close_to(ends[0], 1.23304e-6, "1 hop");
    close_to(ends[1], 1.5e-6 + 31072.0 * 7 / 3 / 100e9, "2 hops");
    close_to(ends[2], 3.12144e-6, "3 hops");
    close_to(ends[3], 3.12144e-6, "3 hops");
    spmd_fill_free(f);
}
END_TEST

/* The ring of 4 above, its copies added to f. */
static void ring_of_four(spmd_fill *f)
{
    static const double latency[4] = {1.5e-6, 1e-6, 1e-6, 1e-6};
    static const uint32_t key[4] = {0, 1, 0, 2};
    for (uint32_t i = 0; i < 4; i++) {
        spmd_fill_copy(f, 0, latency[i], 100000);
        spmd_fill_link(f, key[i], 100e9);
        spmd_fill_devices(f, i, (i + 1) % 4);
    }
}

START_TEST(test_rounds_start_apart)
{
    spmd_fill *f = spmd_fill_new(3, true);
    double ends[4];
    ring_of_four(f);
    close_to(spmd_fill_run(f, ends), 3e-6, "one round from a common start");
    close_to(ends[2], 1e-6 + 0.5e-6 + 50000 / 60e9, "c2 at 3/5 of the link");
    spmd_fill_clear(f);
    ring_of_four(f);
    close_to(spmd_fill_rounds(f, 1, 64, NULL), 3e-6, "1 round");
    close_to(spmd_fill_rounds(f, 2, 64, NULL), 5.5e-6, "2 rounds");
    close_to(spmd_fill_rounds(f, 4, 64, NULL), 10.5e-6, "4 rounds");
    close_to(spmd_fill_rounds(f, 100, 64, NULL), 250.5e-6, "100 rounds, 64 simulated");
    close_to(spmd_fill_rounds(f, 100, 4, NULL), 250.5e-6, "100 rounds, 4 simulated");
    double dev_end[4];
    static const double end4[4] = {10.5e-6, 10.5e-6, 10e-6, 10e-6};
    close_to(spmd_fill_rounds(f, 4, 64, dev_end), 10.5e-6, "4 rounds");
    for (uint32_t d = 0; d < 4; d++)
        close_to(dev_end[d], end4[d], "a device's end of 4 rounds");
    close_to(spmd_fill_rounds(f, 100, 4, dev_end), 250.5e-6, "100 rounds, 4 simulated");
    for (uint32_t d = 0; d < 4; d++)
        close_to(dev_end[d], end4[d] + 240e-6, "a device's end of 100 rounds, as far behind as in round 4");
    spmd_fill_free(f);
}
END_TEST

/* A reduce step's copy is followed on its receiver by its reduction
 * (spmd_fill_after), which the receiver's round waits for, its links free
 * from the copy's end. Two devices, c0 from 0 to 1 and c1 back, each on
 * its own link, 1 us of latency and 100,000 bytes at 100 GB/s (1 us);
 * c0 then reduces for 0.5 us. Both copies end at 2 us, device 1's
 * receipt at 2.5 us, and each device's round ends once its receipts and
 * its receiver's are in: both at 2.5 us, so 4 rounds take 10 us (without
 * the reduction, 8 us). In the ring of four above, c2 (which ends at
 * 2.3333 us) reducing for 1 us: c0 still ends at 3 us (the link is c0's
 * alone from c2's end, not from its reduction's), the round at 3.3333 us. */
START_TEST(test_reductions_hold_the_round)
{
    spmd_fill *f = spmd_fill_new(3, false);
    double ends[4];
    for (uint32_t i = 0; i < 2; i++) {
        spmd_fill_copy(f, 0, 1e-6, 100000);
        spmd_fill_link(f, i, 100e9);
        spmd_fill_devices(f, i, 1 - i);
        if (i == 0)
            spmd_fill_after(f, 0.5e-6);
    }
    close_to(spmd_fill_run(f, ends), 2.5e-6, "one round, the reduction after its copy");
    close_to(ends[0], 2e-6, "the copy's own end");
    close_to(spmd_fill_rounds(f, 4, 64, NULL), 10e-6, "4 rounds of 2.5 us");
    spmd_fill_clear(f);
    spmd_fill_free(f);
    static const double latency[4] = {1.5e-6, 1e-6, 1e-6, 1e-6};
    static const uint32_t key[4] = {0, 1, 0, 2};
    f = spmd_fill_new(3, true);
    for (uint32_t i = 0; i < 4; i++) { /* ring_of_four's copies, c2 reducing */
        spmd_fill_copy(f, 0, latency[i], 100000);
        spmd_fill_link(f, key[i], 100e9);
        spmd_fill_devices(f, i, (i + 1) % 4);
        if (i == 2)
            spmd_fill_after(f, 1e-6);
    }
    close_to(spmd_fill_run(f, ends), 1e-6 + 0.5e-6 + 50000 / 60e9 + 1e-6, "c2's reduction last");
    close_to(ends[0], 3e-6, "c0 as without the reduction");
    spmd_fill_free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spmd_fill");
    TCase *tc = tcase_create("spmd_fill");
    tcase_add_test(tc, test_two_latencies_one_link);
    tcase_add_test(tc, test_two_latencies_equal_shares);
    tcase_add_test(tc, test_torus_round);
    tcase_add_test(tc, test_rounds_start_apart);
    tcase_add_test(tc, test_reductions_hold_the_round);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
