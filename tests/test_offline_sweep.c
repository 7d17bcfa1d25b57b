/*
 * test_offline_sweep.c: the offline planner's sweep by start time
 * (models/alloc/offline_sweep.c) on hand-made lifetimes, plans derived by
 * hand: buffers go by start, larger first; the ones ended by then are freed
 * (merged with the gaps they touch, or lowering the top); each takes the
 * smallest gap that holds it, else the top.
 */
#include "testutil.h"
#include "alloc/offline.h"

typedef struct spec {
    uint64_t start, end, size, offset; /* offset: expected */
} spec;

static void check_sweep(const spec *specs, size_t n, uint64_t height)
{
    offline_buf *bufs = g_new0(offline_buf, n);
    for (size_t i = 0; i < n; i++)
        bufs[i] = (offline_buf){.id = i, .size = specs[i].size, .start = specs[i].start,
                                .end = specs[i].end};
    size_t *order = g_new(size_t, n);
    uint64_t *offsets = g_new(uint64_t, n);
    ck_assert_uint_eq(offline_sweep(bufs, n, order, offsets), height);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(offsets[i] == specs[i].offset, "buffer %zu at %" G_GUINT64_FORMAT
                      ", expected %" G_GUINT64_FORMAT, i, offsets[i], specs[i].offset);
    ck_assert_uint_le(offline_lower_bound(bufs, n), height);
    g_free(bufs);
    g_free(order);
    g_free(offsets);
}

/* t0: A at 0, B on top at 4 (top 6); t1: C at 6 (top 7); t2: B ends, its
 * bytes [4, 6) are a gap under C, D takes it; t3: C ends at the top, the
 * top falls to 6, E goes there. Height 7, the peak of live bytes at t1. */
START_TEST(frees_merge_and_lower_the_top)
{
    const spec s[] = {
        {0, 4, 4, 0}, /* A */
        {0, 2, 2, 4}, /* B */
        {1, 3, 1, 6}, /* C */
        {2, 4, 2, 4}, /* D */
        {3, 5, 1, 6}, /* E */
    };
    check_sweep(s, G_N_ELEMENTS(s), 7);
}
END_TEST

/* t0, larger first: A 0..3, K1 3..5, C 5..7, K2 7..8. t2: A and C end,
 * leaving gaps [0, 3) and [5, 7); E (2 bytes) takes the tighter one, at 5,
 * not the lowest. */
START_TEST(best_fit_takes_the_tightest_gap)
{
    const spec s[] = {
        {0, 2, 3, 0}, /* A */
        {0, 9, 2, 3}, /* K1 */
        {0, 2, 2, 5}, /* C: after K1 (the same size, a higher index) */
        {0, 9, 1, 7}, /* K2 */
        {2, 4, 2, 5}, /* E */
    };
    check_sweep(s, G_N_ELEMENTS(s), 8);
}
END_TEST

/* A buffer freed where another starts leaves its bytes to it (end is
 * exclusive), and a gap at offset 0 counts. */
START_TEST(ends_before_starts_at_one_time)
{
    const spec s[] = {
        {0, 2, 4, 0},
        {0, 5, 4, 4},
        {2, 5, 3, 0},
        {2, 5, 1, 3},
    };
    check_sweep(s, G_N_ELEMENTS(s), 8);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("offline_sweep");
    TCase *tc = tcase_create("sweep");
    tcase_add_test(tc, frees_merge_and_lower_the_top);
    tcase_add_test(tc, best_fit_takes_the_tightest_gap);
    tcase_add_test(tc, ends_before_starts_at_one_time);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
