/* test_timeline_live.c: a timeline's live buffers (results/timeline_live.h), on hand-picked keys. */
#include "testutil.h"
#include "results/timeline_live.h"

static strata_tl_buffer buffer(uint32_t memory, uint64_t id, uint64_t size)
{
    return (strata_tl_buffer){.start = 0.5, .offset = 64, .size = size, .id = id, .memory = memory,
                              .tag = STRATA_TAG_NONE};
}

static void put(strata_tl_live *l, uint32_t memory, uint64_t id, uint64_t size)
{
    strata_tl_buffer b = buffer(memory, id, size);
    strata_tl_live_put(l, &b);
}

START_TEST(a_key_held_once_the_later_buffer_kept)
{
    strata_tl_live *l = strata_tl_live_new();
    put(l, 0, 1, 100);
    put(l, 1, 1, 200); /* another memory: another key */
    ck_assert_uint_eq(strata_tl_live_count(l), 2);
    put(l, 0, 1, 300); /* the 100 is dropped */
    ck_assert_uint_eq(strata_tl_live_count(l), 2);
    strata_tl_buffer got;
    ck_assert(strata_tl_live_take(l, strata_tl_live_key(0, 1), &got));
    ck_assert_uint_eq(got.size, 300);
    ck_assert_double_eq(got.start, 0.5);
    ck_assert_uint_eq(got.offset, 64);
    ck_assert(!strata_tl_live_take(l, strata_tl_live_key(0, 1), &got));
    ck_assert(!strata_tl_live_has(l, strata_tl_live_key(0, 1)));
    ck_assert(strata_tl_live_has(l, strata_tl_live_key(1, 1)));
    ck_assert_uint_eq(strata_tl_live_count(l), 1);
    /* 1 << 48 ^ 1 = (1 << 48) | 1 in memory 0 has the key of id 1 in memory 1. */
    uint64_t alias = ((uint64_t)1 << 48) | 1;
    ck_assert_uint_eq(strata_tl_live_key(0, alias), strata_tl_live_key(1, 1));
    put(l, 0, alias, 7);
    ck_assert_uint_eq(strata_tl_live_count(l), 1);
    ck_assert(strata_tl_live_take(l, strata_tl_live_key(1, 1), &got));
    ck_assert_uint_eq(got.size, 7);
    ck_assert_uint_eq(got.id, alias);
    ck_assert_uint_eq(got.memory, 0);
    ck_assert_uint_eq(strata_tl_live_count(l), 0);
    strata_tl_live_free(l);
}
END_TEST

/* 1000 keys of ids base to base + 999: taking the even ids, then putting
 * 500 more into the freed slots (their free list kept in them), leaves the
 * odd buffers untouched. */
static void grow_and_take_back(uint64_t base)
{
    strata_tl_live *l = strata_tl_live_new();
    for (uint64_t id = 0; id < 1000; id++)
        put(l, 2, base + id, id + 1);
    ck_assert_uint_eq(strata_tl_live_count(l), 1000);
    for (uint64_t id = 0; id < 1000; id += 2) {
        strata_tl_buffer b;
        ck_assert_msg(strata_tl_live_take(l, strata_tl_live_key(2, base + id), &b) && b.size == id + 1 &&
                          b.id == base + id,
                      "id %" G_GUINT64_FORMAT, id);
    }
    ck_assert_uint_eq(strata_tl_live_count(l), 500);
    for (uint64_t id = 0; id < 1000; id++)
        ck_assert_msg(strata_tl_live_has(l, strata_tl_live_key(2, base + id)) == (id % 2 == 1),
                      "id %" G_GUINT64_FORMAT, id);
    for (uint64_t id = 1000; id < 1500; id++)
        put(l, 3, base + id, 5);
    for (uint64_t id = 1; id < 1000; id += 2) {
        strata_tl_buffer b;
        ck_assert_msg(strata_tl_live_take(l, strata_tl_live_key(2, base + id), &b) && b.size == id + 1 &&
                          b.memory == 2,
                      "id %" G_GUINT64_FORMAT, id);
    }
    ck_assert_uint_eq(strata_tl_live_count(l), 500);
    strata_tl_live_free(l); /* checks the invariants */
}

START_TEST(many_keys_grow_and_shift_back)
{
    /* Ids from 2^26 up, in the hashed index: it grows from 16 buckets to
     * 2048 (at most half full), and taking the even ids shifts the odd ones
     * back along their runs. Ids from 0, in the direct index: pages of 64
     * ids (0 to 1,499: 24 pages), each freed when its last id is taken. */
    grow_and_take_back((uint64_t)1 << 26);
    grow_and_take_back(0);
}
END_TEST

/* The two indexes (timeline_live.h): id 5 of memory 0 in the direct one,
 * id 5 of memory 1 in the hashed one (the direct entry is 0's), id 2^26
 * hashed; once 0's is taken, 1's is found in the hashed index, and put
 * again it is replaced there, not held twice (invariants 3 and 5). */
START_TEST(direct_and_hashed_keys)
{
    strata_tl_live *l = strata_tl_live_new();
    uint64_t big = (uint64_t)1 << 26;
    put(l, 0, 5, 10);
    put(l, 1, 5, 20);
    put(l, 0, big, 30);
    ck_assert_uint_eq(strata_tl_live_count(l), 3);
    strata_tl_buffer got;
    ck_assert(strata_tl_live_take(l, strata_tl_live_key(0, 5), &got));
    ck_assert_uint_eq(got.size, 10);
    ck_assert(!strata_tl_live_has(l, strata_tl_live_key(0, 5)));
    ck_assert(strata_tl_live_has(l, strata_tl_live_key(1, 5)));
    put(l, 1, 5, 21);
    ck_assert_uint_eq(strata_tl_live_count(l), 2);
    ck_assert(strata_tl_live_take(l, strata_tl_live_key(1, 5), &got));
    ck_assert_uint_eq(got.size, 21);
    ck_assert(!strata_tl_live_take(l, strata_tl_live_key(1, 5), &got));
    ck_assert(strata_tl_live_take(l, strata_tl_live_key(0, big), &got));
    ck_assert_uint_eq(got.size, 30);
    ck_assert_uint_eq(got.id, big);
    ck_assert_uint_eq(strata_tl_live_count(l), 0);
    /* A page freed when it holds none, made again: ids 0 to 63 share one. */
    for (uint64_t id = 0; id < 64; id++)
        put(l, 0, id, id + 1);
    for (uint64_t id = 0; id < 64; id++)
        ck_assert(strata_tl_live_take(l, strata_tl_live_key(0, id), &got) && got.size == id + 1);
    put(l, 0, 63, 99);
    ck_assert(strata_tl_live_take(l, strata_tl_live_key(0, 63), &got) && got.size == 99);
    ck_assert_uint_eq(strata_tl_live_count(l), 0);
    strata_tl_live_free(l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline_live");
    TCase *tc = tcase_create("timeline_live");
    tcase_add_test(tc, a_key_held_once_the_later_buffer_kept);
    tcase_add_test(tc, many_keys_grow_and_shift_back);
    tcase_add_test(tc, direct_and_hashed_keys);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
