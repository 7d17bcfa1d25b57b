/* test_minheap.c: the generic binary min-heap (core/minheap.h), on hand-picked sequences. */
#include <stdbool.h>
#include "testutil.h"
#include "core/minheap.h"

/* An element: a key, and the order it was pushed in. */
typedef struct item {
    int key;
    int seq;
} item;

/* By key, ties by push order (a total order, as the timeline's lanes). */
static bool key_seq_before(const item *a, const item *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

/* By key alone (ties left to the heap, as spmd_fill's levels). */
static bool key_before(const item *a, const item *b)
{
    return a->key < b->key;
}

STRATA_HEAP_DEFINE(total, item, key_seq_before)
STRATA_HEAP_DEFINE(partial, item, key_before)

/* The header's invariant: no element before its parent. */
static void assert_heap(const GArray *h, bool (*before)(const item *, const item *))
{
    for (guint i = 1; i < h->len; i++)
        ck_assert_msg(!before(&g_array_index(h, item, i), &g_array_index(h, item, (i - 1) / 2)),
                      "element %u is before its parent", i);
}

START_TEST(pops_in_order_ties_by_the_comparison)
{
    static const int keys[] = {5, 3, 8, 3, 1, 9, 5, 2, 7, 3};
    GArray *h = g_array_new(FALSE, FALSE, sizeof(item));
    for (int i = 0; i < (int)G_N_ELEMENTS(keys); i++) {
        total_push(h, (item){keys[i], i});
        assert_heap(h, key_seq_before);
    }
    /* Sorted by key, then by push order: the 3s were pushed 2nd, 4th and
     * 10th (seq 1, 3, 9), the 5s 1st and 7th (seq 0, 6). */
    static const item want[] = {{1, 4}, {2, 7}, {3, 1}, {3, 3}, {3, 9}, {5, 0}, {5, 6}, {7, 8}, {8, 2}, {9, 5}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        item got = total_pop(h);
        ck_assert_msg(got.key == want[i].key && got.seq == want[i].seq, "pop %zu: (%d, %d), expected (%d, %d)", i,
                      got.key, got.seq, want[i].key, want[i].seq);
        assert_heap(h, key_seq_before);
    }
    ck_assert_uint_eq(h->len, 0);
    g_array_free(h, TRUE);
}
END_TEST

START_TEST(ties_left_to_the_heap_are_fixed_by_its_moves)
{
    /* Three equal keys pushed a, b, c: none moves up (b and c are not
     * before their parent a), so the array is [a, b, c]. The first pop
     * takes a and moves c to the top; b is not before c, so c stays: the
     * pops give a, c, b. A smaller key pushed later still comes out first. */
    GArray *h = g_array_new(FALSE, FALSE, sizeof(item));
    partial_push(h, (item){4, 0});
    partial_push(h, (item){4, 1});
    partial_push(h, (item){4, 2});
    ck_assert_int_eq(partial_pop(h).seq, 0);
    partial_push(h, (item){2, 3});
    ck_assert_int_eq(partial_pop(h).seq, 3);
    ck_assert_int_eq(partial_pop(h).seq, 2);
    ck_assert_int_eq(partial_pop(h).seq, 1);
    ck_assert_uint_eq(h->len, 0);
    g_array_free(h, TRUE);
}
END_TEST

START_TEST(sift_down_after_the_top_grows)
{
    /* The timeline's use: the top is changed in place (made later), then
     * sifted down. Keys 1, 4, 6, 5: [1, 4, 6, 5] (5 under 4). The top
     * becomes 7: it swaps with 4 (the lesser child), then with 5. */
    GArray *h = g_array_new(FALSE, FALSE, sizeof(item));
    static const int keys[] = {1, 4, 6, 5};
    for (int i = 0; i < 4; i++)
        total_push(h, (item){keys[i], i});
    g_array_index(h, item, 0).key = 7;
    total_sift_down(h, 0);
    assert_heap(h, key_seq_before);
    static const int want_keys[] = {4, 5, 6, 7};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(g_array_index(h, item, (guint)i).key, want_keys[i]);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(total_pop(h).key, want_keys[i]);
    g_array_free(h, TRUE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("minheap");
    TCase *tc = tcase_create("minheap");
    tcase_add_test(tc, pops_in_order_ties_by_the_comparison);
    tcase_add_test(tc, ties_left_to_the_heap_are_fixed_by_its_moves);
    tcase_add_test(tc, sift_down_after_the_top_grows);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
