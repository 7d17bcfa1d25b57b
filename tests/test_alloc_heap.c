/*
 * test_alloc_heap.c: the indexes behind the flat-heap allocators against
 * brute force: the augmented block tree (blocktree.h), the id map
 * (core/idmap.h), and first-fit, next-fit and best-fit against a reference
 * that keeps the blocks in a plain array and scans it, on random sequences:
 * the same addresses, the same failures and the same stats after every op.
 */
#include <check.h>
#include "alloc/alloc.h"
#include "alloc/blocktree.h"
#include "core/idmap.h"
#include "testutil.h"

/* ---- the block tree ---- */

#define TREE_KEYS 600

/* Brute force over the present keys (k1 = i, value = values[i]). */
static int brute_fit_from(const bool *present, const uint64_t *values, uint64_t from, uint64_t need)
{
    for (int i = (int)from; i < TREE_KEYS; i++)
        if (present[i] && values[i] >= need)
            return i;
    return -1;
}

/* The key a query answered, or -1 for none. */
static int key_of(const strata_tnode *n)
{
    return n ? (int)n->k1 : -1;
}

/* Random inserts, removes and rekeys of keys 0..599 with random values;
 * after each, the fit queries, floor, lower bound and maxima agree with a
 * scan. node_at[k]: the node holding key k while present; spare: the
 * nodes out of the tree. */
START_TEST(test_blocktree_random)
{
    static strata_tnode nodes[TREE_KEYS];
    strata_tnode *node_at[TREE_KEYS] = {NULL}, *spare[TREE_KEYS];
    int n_spare = 0;
    for (int i = 0; i < TREE_KEYS; i++)
        spare[n_spare++] = &nodes[i];
    bool present[TREE_KEYS] = {false};
    uint64_t values[TREE_KEYS] = {0};
    strata_blocktree t;
    strata_blocktree_init(&t);
    GRand *rng = g_rand_new_with_seed(7);
    for (int step = 0; step < 20000; step++) {
        int k = g_rand_int_range(rng, 0, TREE_KEYS), to = g_rand_int_range(rng, 0, TREE_KEYS);
        values[to] = present[to] ? values[to] : (uint64_t)g_rand_int_range(rng, 1, 1000);
        if (present[k] && !present[to] && g_rand_boolean(rng)) {
            strata_blocktree_rekey(&t, node_at[k], (uint64_t)to, 0, values[to]);
            node_at[to] = node_at[k];
            present[k] = false;
            present[to] = true;
        } else if (present[k]) {
            strata_blocktree_remove(&t, node_at[k]);
            spare[n_spare++] = node_at[k];
            present[k] = false;
        } else {
            values[k] = (uint64_t)g_rand_int_range(rng, 1, 1000);
            node_at[k] = spare[--n_spare];
            *node_at[k] = (strata_tnode){.k1 = (uint64_t)k, .k2 = 0, .value = values[k]};
            strata_blocktree_insert(&t, node_at[k]);
            present[k] = true;
        }
        uint64_t need = (uint64_t)g_rand_int_range(rng, 1, 1000);
        uint64_t from = (uint64_t)g_rand_int_range(rng, 0, TREE_KEYS);
        ck_assert_int_eq(key_of(strata_blocktree_fit_from(&t, 0, need)), brute_fit_from(present, values, 0, need));
        ck_assert_int_eq(key_of(strata_blocktree_fit_from(&t, from, need)),
                         brute_fit_from(present, values, from, need));
        int floor = -1, lower = -1, last = -1;
        uint64_t count = 0;
        for (int i = 0; i < TREE_KEYS; i++) {
            if (!present[i])
                continue;
            count++;
            if (i <= (int)from)
                floor = i;
            if (i >= (int)from && lower < 0)
                lower = i;
            last = i;
        }
        uint64_t but_last = 0;
        for (int i = 0; i < last; i++)
            if (present[i] && values[i] > but_last)
                but_last = values[i];
        ck_assert_int_eq(key_of(strata_blocktree_floor(&t, from, UINT64_MAX)), floor);
        ck_assert_int_eq(key_of(strata_blocktree_lower_bound(&t, from, 0)), lower);
        ck_assert_int_eq(key_of(strata_blocktree_last(&t)), last);
        ck_assert_uint_eq(strata_blocktree_max_but_last(&t), but_last);
        ck_assert_uint_eq(t.count, count);
    }
    g_rand_free(rng);
}
END_TEST

/* Keys ordered by k1, then k2: (5, 9) < (6, 0); lower_bound (6, 0) is (6, 0). */
START_TEST(test_blocktree_two_part_key)
{
    strata_tnode n[3] = {{.k1 = 6, .k2 = 3, .value = 6}, {.k1 = 5, .k2 = 9, .value = 5}, {.k1 = 6, .k2 = 0, .value = 6}};
    strata_blocktree t;
    strata_blocktree_init(&t);
    for (int i = 0; i < 3; i++)
        strata_blocktree_insert(&t, &n[i]);
    ck_assert_ptr_eq(strata_blocktree_lower_bound(&t, 0, 0), &n[1]);
    ck_assert_ptr_eq(strata_blocktree_lower_bound(&t, 6, 0), &n[2]);
    ck_assert_ptr_eq(strata_blocktree_lower_bound(&t, 6, 1), &n[0]);
    ck_assert_ptr_null(strata_blocktree_lower_bound(&t, 6, 4));
    ck_assert_ptr_eq(strata_blocktree_floor(&t, 5, UINT64_MAX), &n[1]);
}
END_TEST

/* ---- the id map ---- */

static void count_visit(uint64_t id, void *value, void *user)
{
    ck_assert_uint_eq(GPOINTER_TO_SIZE(value), id + 1);
    (*(size_t *)user)++;
}

/* Dense ids, ids that share their low bits, and huge ids, against a
 * GHashTable; removals in random order keep every other id findable. */
START_TEST(test_idmap_random)
{
    strata_idmap *m = strata_idmap_new();
    GHashTable *ref = g_hash_table_new(g_int64_hash, g_int64_equal);
    uint64_t *keys = g_new(uint64_t, 3000);
    for (int i = 0; i < 3000; i++)
        keys[i] = i < 1000 ? (uint64_t)i : i < 2000 ? (uint64_t)i << 32 : UINT64_MAX - (uint64_t)i;
    GRand *rng = g_rand_new_with_seed(11);
    for (int step = 0; step < 100000; step++) {
        uint64_t *k = &keys[g_rand_int_range(rng, 0, 3000)];
        if (g_rand_boolean(rng)) {
            strata_idmap_put(m, *k, GSIZE_TO_POINTER(*k + 1));
            g_hash_table_insert(ref, k, k);
        } else {
            void *got = strata_idmap_take(m, *k);
            gboolean had = g_hash_table_remove(ref, k);
            ck_assert_ptr_eq(got, had ? GSIZE_TO_POINTER(*k + 1) : NULL);
        }
        uint64_t *probe = &keys[g_rand_int_range(rng, 0, 3000)];
        ck_assert_ptr_eq(strata_idmap_get(m, *probe),
                         g_hash_table_contains(ref, probe) ? GSIZE_TO_POINTER(*probe + 1) : NULL);
        ck_assert_uint_eq(strata_idmap_size(m), g_hash_table_size(ref));
    }
    size_t visited = 0;
    strata_idmap_foreach(m, count_visit, &visited);
    ck_assert_uint_eq(visited, g_hash_table_size(ref));
    g_rand_free(rng);
    g_free(keys);
    g_hash_table_destroy(ref);
    strata_idmap_free(m);
}
END_TEST

/* ---- the flat-heap allocators against a scan ---- */

typedef struct ref_block {
    uint64_t offset, size, id;
    bool used;
} ref_block;

typedef enum { REF_FIRST, REF_NEXT, REF_BEST } ref_policy;

/* The reference heap: blocks in address order in an array. */
typedef struct ref_heap {
    GArray *blocks; /* ref_block */
    ref_policy policy;
    uint64_t rover;
} ref_heap;

#define REF(h, i) (&g_array_index((h)->blocks, ref_block, (i)))

/* Index of the block the policy takes for `size`, or -1. */
static int ref_choose(const ref_heap *h, uint64_t size)
{
    int found = -1;
    for (guint i = 0; i < h->blocks->len; i++) {
        const ref_block *b = REF(h, i);
        if (b->used || b->size < size)
            continue;
        if (h->policy == REF_FIRST)
            return (int)i;
        if (h->policy == REF_BEST) {
            if (found < 0 || b->size < REF(h, found)->size)
                found = (int)i;
        } else if (b->offset + b->size > h->rover) {
            return (int)i; /* next-fit: the first fit ending above the rover */
        } else if (found < 0) {
            found = (int)i; /* ... else the first fit from address 0 */
        }
    }
    return found;
}

static bool ref_alloc(ref_heap *h, uint64_t id, uint64_t size, uint64_t *offset)
{
    int i = ref_choose(h, size);
    if (i < 0)
        return false;
    ref_block *b = REF(h, i);
    if (b->size > size) {
        ref_block rest = {b->offset + size, b->size - size, 0, false};
        b->size = size;
        g_array_insert_val(h->blocks, (guint)i + 1, rest);
        b = REF(h, i);
    }
    b->used = true;
    b->id = id;
    *offset = b->offset;
    h->rover = b->offset + size;
    return true;
}

static void ref_free(ref_heap *h, uint64_t id)
{
    guint i = 0;
    while (!(REF(h, i)->used && REF(h, i)->id == id))
        i++;
    REF(h, i)->used = false;
    if (i + 1 < h->blocks->len && !REF(h, i + 1)->used) {
        REF(h, i)->size += REF(h, i + 1)->size;
        g_array_remove_index(h->blocks, i + 1);
    }
    if (i > 0 && !REF(h, i - 1)->used) {
        REF(h, i - 1)->size += REF(h, i)->size;
        g_array_remove_index(h->blocks, i);
    }
}

/* Reserved (the span below a free tail) and the largest free block in it. */
static void ref_stats(const ref_heap *h, uint64_t capacity, uint64_t *reserved, uint64_t *largest)
{
    guint n = h->blocks->len;
    bool tail_free = n > 0 && !REF(h, n - 1)->used;
    *reserved = tail_free ? REF(h, n - 1)->offset : capacity;
    *largest = 0;
    for (guint i = 0; i + (tail_free ? 1 : 0) < n; i++)
        if (!REF(h, i)->used && REF(h, i)->size > *largest)
            *largest = REF(h, i)->size;
}

/* One policy over a random sequence: sizes of 1..40 units of 256 B, so
 * the 1 MiB heap fills (some allocs fail, identically) and fragments. */
static void replay_against_reference(const char *spec, ref_policy policy, guint32 seed)
{
    const uint64_t capacity = UINT64_C(1) << 20, unit = 256;
    GError *err = NULL;
    strata_allocator *a = strata_allocator_new(spec, capacity, unit, &err);
    ck_assert_msg(a != NULL, "%s", err ? err->message : "");
    ref_heap ref = {g_array_new(FALSE, FALSE, sizeof(ref_block)), policy, 0};
    ref_block all = {0, capacity, 0, false};
    g_array_append_val(ref.blocks, all);
    GRand *rng = g_rand_new_with_seed(seed);
    GArray *live = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    uint64_t next_id = 0, failures = 0;
    for (int step = 0; step < 20000; step++) {
        if (live->len > 0 && g_rand_int_range(rng, 0, 100) < 48) {
            guint k = (guint)g_rand_int_range(rng, 0, (gint32)live->len);
            uint64_t id = g_array_index(live, uint64_t, k);
            g_array_remove_index_fast(live, k);
            strata_allocator_free_block(a, id);
            ref_free(&ref, id);
        } else {
            uint64_t size = unit * (uint64_t)g_rand_int_range(rng, 1, 41), got = 0, want = 0;
            bool ok = strata_allocator_alloc(a, next_id, size - (uint64_t)g_rand_int_range(rng, 0, 256), 0, &got);
            ck_assert_int_eq(ok, ref_alloc(&ref, next_id, size, &want));
            if (ok) {
                ck_assert_msg(got == want, "%s step %d: offset %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT,
                              spec, step, got, want);
                g_array_append_val(live, next_id);
            } else {
                failures++;
            }
            next_id++;
        }
        strata_alloc_stats s;
        strata_allocator_stats(a, &s);
        uint64_t reserved, largest;
        ref_stats(&ref, capacity, &reserved, &largest);
        ck_assert_uint_eq(s.reserved, reserved);
        ck_assert_uint_eq(s.largest_free, largest);
        if (step % 1000 == 0)
            ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
    }
    ck_assert_uint_gt(failures, 0); /* the heap did fill */
    g_array_free(live, TRUE);
    g_array_free(ref.blocks, TRUE);
    g_rand_free(rng);
    strata_allocator_free(a);
}

START_TEST(test_first_fit_matches_scan)
{
    replay_against_reference("first-fit", REF_FIRST, 1);
    replay_against_reference("first-fit", REF_FIRST, 2);
}
END_TEST

START_TEST(test_next_fit_matches_scan)
{
    replay_against_reference("next-fit", REF_NEXT, 3);
    replay_against_reference("next-fit", REF_NEXT, 4);
}
END_TEST

START_TEST(test_best_fit_matches_scan)
{
    replay_against_reference("best-fit", REF_BEST, 5);
    replay_against_reference("best-fit", REF_BEST, 6);
}
END_TEST

static Suite *alloc_heap_suite(void)
{
    Suite *s = suite_create("alloc_heap");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_blocktree_random);
    tcase_add_test(tc, test_blocktree_two_part_key);
    tcase_add_test(tc, test_idmap_random);
    tcase_add_test(tc, test_first_fit_matches_scan);
    tcase_add_test(tc, test_next_fit_matches_scan);
    tcase_add_test(tc, test_best_fit_matches_scan);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(alloc_heap_suite());
}
