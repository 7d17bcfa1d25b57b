/* test_ecmp.c: the expected share of a leaf's uplinks under static flow
 * placement (hw/ecmp.h), against occupancy counts worked by hand. */
#include <math.h>
#include "testutil.h"
#include "hw/ecmp.h"

static void near(double got, double want)
{
    ck_assert_msg(fabs(got - want) < 1e-12, "got %.15f, want %.15f", got, want);
}

START_TEST(hand_counts)
{
    /* nothing to place, or one uplink: the leaf's whole uplink bandwidth */
    near(strata_ecmp_expected_share(0, 4), 1);
    near(strata_ecmp_expected_share(8, 1), 1);
    /* one key sits on one of 8 uplinks: M = 1, 1 / (8 x 1) */
    near(strata_ecmp_expected_share(1, 8), 1.0 / 8);
    /* 2 keys, 2 uplinks: 4 placements; apart in 2 (M = 1: 2 / 2 = 1), together
     * in 2 (M = 2: 2 / 4 = 1/2): (1 + 1/2) / 2 = 3/4 */
    near(strata_ecmp_expected_share(2, 2), 0.75);
    /* 3 keys, 2 uplinks: 8 placements; 2 + 1 in 6 (M = 2: 3 / 4), all on one in
     * 2 (M = 3: 3 / 6 = 1/2): 6/8 x 3/4 + 2/8 x 1/2 = 11/16 */
    near(strata_ecmp_expected_share(3, 2), 11.0 / 16);
    /* 4 keys, 4 uplinks, 256 placements by the busiest uplink's M:
     * M = 1: 4! = 24 (each its own); M = 4: 4 (all on one);
     * M = 3: 4 uplinks x C(4,3) x 3 others = 48; M = 2: 256 - 24 - 4 - 48 = 180
     * (e.g. 3 distinct uplinks, as 2 + 1 + 1: the ring at 4 / (4 x 2) = 1/2).
     * E[4 / (4 M)] = (24 x 1 + 180 / 2 + 48 / 3 + 4 / 4) / 256 = 131 / 256 */
    near(strata_ecmp_expected_share(4, 4), 131.0 / 256);
}
END_TEST

START_TEST(bounds_and_repeats)
{
    /* in [1/U, 1], and the same value on every call (no random numbers) */
    for (uint32_t k = 1; k <= 40; k += 3)
        for (uint32_t u = 1; u <= 40; u += 7) {
            double s = strata_ecmp_expected_share(k, u);
            ck_assert(s >= 1.0 / u - 1e-12 && s <= 1 + 1e-12);
            ck_assert(s == strata_ecmp_expected_share(k, u));
        }
    /* many keys on few uplinks spread almost evenly: more than 0.9 of them */
    ck_assert(strata_ecmp_expected_share(400, 2) > 0.9);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ecmp");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hand_counts);
    tcase_add_test(tc, bounds_and_repeats);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(suite()); }
