/*
 * test_alloc_models.c: the allocators of models/alloc, driven directly
 * through alloc.h, with figures derived by hand in the comments.
 */
#include <check.h>
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "testutil.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

static strata_allocator *make(const char *spec, uint64_t capacity, uint64_t alignment)
{
    GError *err = NULL;
    strata_allocator *a = strata_allocator_new(spec, capacity, alignment, &err);
    ck_assert_msg(a != NULL, "%s: %s", spec, err ? err->message : "?");
    return a;
}

static uint64_t must_alloc(strata_allocator *a, uint64_t id, uint64_t size, uint32_t stream)
{
    uint64_t off = UINT64_MAX;
    ck_assert_msg(strata_allocator_alloc(a, id, size, stream, &off), "%s: alloc %" G_GUINT64_FORMAT
                  " of %" G_GUINT64_FORMAT " failed", strata_allocator_name(a), id, size);
    GError *err = NULL;
    ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
    return off;
}

static void must_free(strata_allocator *a, uint64_t id)
{
    strata_allocator_free_block(a, id);
    GError *err = NULL;
    ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
}

static strata_alloc_stats stats(const strata_allocator *a)
{
    strata_alloc_stats s;
    strata_allocator_stats(a, &s);
    return s;
}

/* Exact peaks: 1000 B rounds to 1024 (alignment 256), 5 MiB stays. */
START_TEST(test_exact_peaks_best_fit)
{
    strata_allocator *a = make("best-fit", 64 * MiB, 0);
    ck_assert_uint_eq(must_alloc(a, 0, 1000, 0), 0);
    ck_assert_uint_eq(must_alloc(a, 1, 5 * MiB, 0), 1024);
    strata_alloc_stats s = stats(a);
    ck_assert_uint_eq(s.allocated, 1000 + 5 * MiB);
    ck_assert_uint_eq(s.reserved, 1024 + 5 * MiB);
    ck_assert_uint_eq(s.internal_waste, 24);
    must_free(a, 0);
    s = stats(a);
    ck_assert_uint_eq(s.allocated, 5 * MiB);
    ck_assert_uint_eq(s.reserved, 1024 + 5 * MiB); /* the span still ends at b */
    ck_assert_uint_eq(s.free_in_reserved, 1024);
    ck_assert_uint_eq(s.largest_free, 1024);
    strata_allocator_free(a);
}
END_TEST

/* Capacity 10 (alignment 1): A3 B1 C2 D1 E3 fill it; free A and C leaves
 * holes of 3 at 0 and 2 at 4. F(2): first-fit takes 0 (leaving 1), best-fit
 * takes the exact hole at 4. G(3) then fits only for best-fit. */
static bool fragment_then_alloc3(const char *spec)
{
    strata_allocator *a = make(spec, 10, 1);
    const uint64_t sizes[] = {3, 1, 2, 1, 3};
    for (uint64_t i = 0; i < 5; i++)
        must_alloc(a, i, sizes[i], 0);
    must_free(a, 0);
    must_free(a, 2);
    uint64_t f = must_alloc(a, 5, 2, 0);
    ck_assert_uint_eq(f, g_str_equal(spec, "best-fit") ? 4 : 0);
    uint64_t off;
    bool ok = strata_allocator_alloc(a, 6, 3, 0, &off);
    strata_allocator_free(a);
    return ok;
}

START_TEST(test_best_fit_fits_where_first_fit_fails)
{
    ck_assert(fragment_then_alloc3("best-fit"));
    ck_assert(!fragment_then_alloc3("first-fit"));
}
END_TEST

/* Free two neighbours, then allocate their sum in a full heap. */
START_TEST(test_coalescing)
{
    const char *specs[] = {"first-fit", "next-fit", "best-fit"};
    for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
        strata_allocator *a = make(specs[i], 3 * MiB, 0);
        must_alloc(a, 0, MiB, 0);
        must_alloc(a, 1, MiB, 0);
        must_alloc(a, 2, MiB, 0);
        must_free(a, 0);
        must_free(a, 1);
        ck_assert_uint_eq(stats(a).largest_free, 2 * MiB);
        ck_assert_uint_eq(must_alloc(a, 3, 2 * MiB, 0), 0);
        strata_allocator_free(a);
    }
}
END_TEST

START_TEST(test_bump_never_reuses)
{
    strata_allocator *a = make("bump", 4 * KiB, 0);
    ck_assert_uint_eq(must_alloc(a, 0, 1024, 0), 0);
    must_free(a, 0);
    ck_assert_uint_eq(must_alloc(a, 1, 1024, 0), 1024);
    ck_assert_uint_eq(stats(a).reserved, 2048);
    ck_assert_uint_eq(stats(a).largest_free, 0);
    uint64_t off;
    ck_assert(!strata_allocator_alloc(a, 2, 3 * KiB, 0, &off)); /* 2 KiB left */
    strata_allocator_free(a);
}
END_TEST

/* Next-fit resumes after the last allocation instead of the lowest hole. */
START_TEST(test_next_fit_rover)
{
    strata_allocator *a = make("next-fit", 8 * KiB, 1024);
    must_alloc(a, 0, 1024, 0);  /* 0 */
    must_alloc(a, 1, 1024, 0);  /* 1024 */
    must_free(a, 0);            /* hole at 0 */
    ck_assert_uint_eq(must_alloc(a, 2, 1024, 0), 2048); /* first-fit would take 0 */
    strata_allocator_free(a);
}
END_TEST

START_TEST(test_buddy_rounding)
{
    strata_allocator *a = make("buddy", 16 * MiB, 0);
    ck_assert_uint_eq(must_alloc(a, 0, 3 * MiB, 0), 0);
    strata_alloc_stats s = stats(a);
    ck_assert_uint_eq(s.reserved, 4 * MiB);
    ck_assert_uint_eq(s.internal_waste, MiB);
    /* its buddy [4, 8) MiB is free; a 4 MiB request takes it */
    ck_assert_uint_eq(must_alloc(a, 1, 4 * MiB, 0), 4 * MiB);
    must_free(a, 0);
    must_free(a, 1);
    /* everything merged back: 16 MiB in one block */
    ck_assert_uint_eq(must_alloc(a, 2, 16 * MiB, 0), 0);
    strata_allocator_free(a);
}
END_TEST

static uint64_t caching_reserved_for(uint64_t size)
{
    strata_allocator *a = make("caching", 1024 * MiB, 0);
    must_alloc(a, 0, size, 0);
    uint64_t r = stats(a).reserved;
    strata_allocator_free(a);
    return r;
}

START_TEST(test_caching_segment_sizes)
{
    ck_assert_uint_eq(caching_reserved_for(1000), 2 * MiB);
    ck_assert_uint_eq(caching_reserved_for(5 * MiB), 20 * MiB);
    ck_assert_uint_eq(caching_reserved_for(30 * MiB), 30 * MiB);
    /* 512-byte rounding: 1000 B holds a 1024-byte block */
    strata_allocator *a = make("caching", 1024 * MiB, 0);
    must_alloc(a, 0, 1000, 0);
    ck_assert_uint_eq(stats(a).internal_waste, 24);
    strata_allocator_free(a);
}
END_TEST

/* 40 MiB device: 5 MiB caches a 20 MiB segment; after its free a 30 MiB
 * request cannot get 30 more MiB (20 + 30 > 40) until the cached segment is
 * released; the retry then succeeds with 30 MiB reserved. */
START_TEST(test_caching_oom_release_and_retry)
{
    strata_allocator *a = make("caching", 40 * MiB, 0);
    must_alloc(a, 0, 5 * MiB, 0);
    must_free(a, 0);
    ck_assert_uint_eq(stats(a).reserved, 20 * MiB);
    must_alloc(a, 1, 30 * MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, 30 * MiB);
    ck_assert_uint_eq(stats(a).n_segments, 1);
    uint64_t off;
    ck_assert(!strata_allocator_alloc(a, 2, 11 * MiB, 0, &off)); /* 30 + 12 > 40 */
    strata_allocator_free(a);
}
END_TEST

/* Blocks cached on one stream are not handed to another. */
START_TEST(test_caching_streams)
{
    strata_allocator *a = make("caching", 1024 * MiB, 0);
    must_alloc(a, 0, 5 * MiB, 0);
    must_free(a, 0);
    must_alloc(a, 1, 5 * MiB, 1);
    ck_assert_uint_eq(stats(a).reserved, 40 * MiB);
    must_alloc(a, 2, 5 * MiB, 0); /* reuses stream 0's cached segment */
    ck_assert_uint_eq(stats(a).reserved, 40 * MiB);
    strata_allocator_release(a);  /* nothing is free as a whole segment... */
    ck_assert_uint_eq(stats(a).reserved, 40 * MiB);
    must_free(a, 1);
    strata_allocator_release(a);  /* ...now stream 1's segment is */
    ck_assert_uint_eq(stats(a).reserved, 20 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* max_split_size: an oversize cached block is not split for small requests. */
START_TEST(test_caching_max_split_size)
{
    strata_allocator *a = make("caching:max_split_size=40MiB", 1024 * MiB, 0);
    must_alloc(a, 0, 100 * MiB, 0);
    must_free(a, 0);
    must_alloc(a, 1, 12 * MiB, 0); /* may not take the 100 MiB block: new 12 MiB segment */
    ck_assert_uint_eq(stats(a).reserved, 112 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* roundup_power2_divisions=4: 1.2 MiB rounds to the next quarter step
 * between 1 and 2 MiB, i.e. 1.25 MiB. */
START_TEST(test_caching_roundup_divisions)
{
    strata_allocator *a = make("caching:roundup_power2_divisions=4", 1024 * MiB, 0);
    uint64_t size = 1258291; /* 1.2 MiB */
    must_alloc(a, 0, size, 0);
    ck_assert_uint_eq(stats(a).internal_waste, 5 * MiB / 4 - size);
    strata_allocator_free(a);
}
END_TEST

/* The rules of c10/cuda/CUDAAllocatorConfig.cpp and CUDACachingAllocator.cpp
 * that the settings control, each on a small sequence derived by hand. */

static bool caching_rejects(const char *spec, const char *word)
{
    GError *err = NULL;
    strata_allocator *a = strata_allocator_new(spec, 1024 * MiB, 0, &err);
    bool rejected = a == NULL && err && strstr(err->message, word);
    if (a)
        strata_allocator_free(a);
    g_clear_error(&err);
    return rejected;
}

/* max_split_size_mb must be more than 20; the other settings' ranges. */
START_TEST(test_caching_settings_checked)
{
    ck_assert(caching_rejects("caching:max_split_size=20MiB", "max_split_size"));
    ck_assert(caching_rejects("caching:max_split_size=8MiB", "more than 20MiB"));
    strata_allocator_free(make("caching:max_split_size=21MiB", 1024 * MiB, 0));
    ck_assert(caching_rejects("caching:max_non_split_rounding=10MiB", "max_non_split_rounding"));
    ck_assert(caching_rejects("caching:large_segment_size=11MiB", "large_segment_size"));
    ck_assert(caching_rejects("caching:per_process_memory_fraction=1.5", "fraction"));
    ck_assert(caching_rejects("caching:garbage_collection_threshold=1", "garbage"));
    ck_assert(caching_rejects("caching:roundup_power2_intervals=3:4", "roundup_power2_intervals"));
    ck_assert(caching_rejects("caching:roundup_power2_intervals=4:3", "roundup_power2_intervals"));
}
END_TEST

/* max_split_size 40 MiB, a cached 100 MiB block. A 70 MiB request may take
 * a non-split block at most max_non_split_rounding larger: by default 20 MiB
 * (100 >= 70 + 20: refused, a new 70 MiB segment, 170 MiB reserved); with
 * 40 MiB it takes the 100 MiB block whole (100 < 110: 100 MiB reserved). */
START_TEST(test_caching_max_non_split_rounding)
{
    const char *specs[] = {"caching:max_split_size=40MiB",
                           "caching:max_split_size=40MiB,max_non_split_rounding=40MiB"};
    const uint64_t reserved[] = {170 * MiB, 100 * MiB};
    for (int i = 0; i < 2; i++) {
        strata_allocator *a = make(specs[i], 1024 * MiB, 0);
        must_alloc(a, 0, 100 * MiB, 0);
        must_free(a, 0);
        must_alloc(a, 1, 70 * MiB, 0);
        ck_assert_uint_eq(stats(a).reserved, reserved[i]);
        strata_allocator_free(a);
    }
}
END_TEST

/* large_segment_size 12 MiB: a 5 MiB request gets a 12 MiB segment, not 20. */
START_TEST(test_caching_large_segment_size)
{
    strata_allocator *a = make("caching:large_segment_size=12MiB", 1024 * MiB, 0);
    must_alloc(a, 0, 5 * MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, 12 * MiB);
    must_alloc(a, 1, 30 * MiB, 0); /* at least 10 MiB: its own size, as before */
    ck_assert_uint_eq(stats(a).reserved, 42 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* roundup_power2_intervals=64:8 (PyTorch's [64:8]): intervals 1 MiB to
 * 128 MiB use 8 divisions, larger sizes none. 65 MiB + 1 lies in
 * [64, 128) MiB: steps of 8 MiB, so 72 MiB (a 72 MiB segment). 200 MiB + 1:
 * 512-byte rounding, a segment rounded to 2 MiB: 202 MiB. 1000000 B lies in
 * the first interval: steps of 512 KiB / 8 = 64 KiB, so 1 MiB (16 steps). */
START_TEST(test_caching_roundup_intervals)
{
    strata_allocator *a = make("caching:roundup_power2_intervals=64:8", 4096 * MiB, 0);
    must_alloc(a, 0, 65 * MiB + 1, 0);
    ck_assert_uint_eq(stats(a).reserved, 72 * MiB);
    must_alloc(a, 1, 200 * MiB + 1, 0);
    ck_assert_uint_eq(stats(a).reserved, 274 * MiB);
    must_alloc(a, 2, 1000000, 0);
    ck_assert_uint_eq(stats(a).internal_waste, (72 * MiB - 65 * MiB - 1) + 511 + (MiB - 1000000));
    strata_allocator_free(a);
    /* `>` sets every interval from the last one named: 1 MiB and up at 2. */
    a = make("caching:roundup_power2_intervals=1:4/>:2", 4096 * MiB, 0);
    must_alloc(a, 0, 3 * MiB + 1, 0); /* [2, 4) MiB in 2 steps: 4 MiB */
    ck_assert_uint_eq(stats(a).internal_waste, MiB - 1);
    strata_allocator_free(a);
}
END_TEST

/* device_limit 50 MiB on a 1 GiB device: 30 MiB fits, 30 MiB more does not
 * (60 > 50) and nothing is cached to release. Freed, the first segment is
 * cached; a 40 MiB request misses it, fails at the device (30 + 40 > 50),
 * releases it and retries: 40 MiB reserved. */
START_TEST(test_caching_device_limit)
{
    strata_allocator *a = make("caching:device_limit=50MiB", 1024 * MiB, 0);
    uint64_t off;
    must_alloc(a, 0, 30 * MiB, 0);
    ck_assert(!strata_allocator_alloc(a, 1, 30 * MiB, 0, &off));
    must_free(a, 0);
    must_alloc(a, 2, 40 * MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, 40 * MiB);
    ck_assert_uint_eq(stats(a).n_segments, 1);
    strata_allocator_free(a);
    /* per_process_memory_fraction 0.5 of 100 MiB: at most 50 MiB */
    a = make("caching:per_process_memory_fraction=0.5", 100 * MiB, 0);
    must_alloc(a, 0, 40 * MiB, 0);
    ck_assert(!strata_allocator_alloc(a, 1, 20 * MiB, 0, &off));
    must_alloc(a, 2, 10 * MiB, 0); /* 10 MiB is not under 10 MiB: its own size, 50 fits */
    ck_assert_uint_eq(stats(a).reserved, 50 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* garbage_collection_threshold 0.5 of a 200 MiB limit (fraction 1): 100 MiB.
 * Ages count get_free_block calls on the large pool since a block was
 * cached. A, B, C of 30 MiB (calls 1-3, 90 MiB); free A (cached at 3);
 * D 40 MiB (call 4, a miss; 90 <= 100: no collection; 130 MiB); free B
 * (cached at 4); E 50 MiB (call 5, a miss; 130 > 100: reclaim 30; ages A 2,
 * B 1, mean 1.5: A is freed, 30 MiB, enough) then a new segment: 150 MiB,
 * B still cached. Without the threshold: 180 MiB. */
START_TEST(test_caching_garbage_collection)
{
    const char *specs[] = {"caching:per_process_memory_fraction=1,garbage_collection_threshold=0.5",
                           "caching:per_process_memory_fraction=1"};
    const uint64_t reserved[] = {150 * MiB, 180 * MiB};
    for (int i = 0; i < 2; i++) {
        strata_allocator *a = make(specs[i], 200 * MiB, 0);
        must_alloc(a, 0, 30 * MiB, 0);
        must_alloc(a, 1, 30 * MiB, 0);
        must_alloc(a, 2, 30 * MiB, 0);
        must_free(a, 0);
        must_alloc(a, 3, 40 * MiB, 0);
        must_free(a, 1);
        must_alloc(a, 4, 50 * MiB, 0);
        ck_assert_uint_eq(stats(a).reserved, reserved[i]);
        ck_assert_uint_eq(stats(a).free_in_reserved, 30 * MiB * (uint64_t)(i + 1));
        strata_allocator_free(a);
    }
}
END_TEST

/* Expandable segments unmap free pages in the middle too (unmap_block of
 * every free block). Pages of 20 MiB from 0: a 30 MiB maps [0, 40); b 30
 * MiB takes the free [30, 40) and maps [40, 60); c 10 MiB maps [60, 80):
 * 80 MiB. b freed, release unmaps the whole page [40, 60) inside the free
 * [30, 60) (its 10 MiB end [30, 40) stays, as does [70, 80)): 60 MiB, where
 * unmapping only at the end would keep 80. d 25 MiB: no free block holds
 * it; the first unmapped block by address, [40, 60), with the free [30, 40)
 * before it spans 30 MiB: one page is mapped back and d lands at 30 MiB. */
START_TEST(test_caching_expandable_unmaps_middle)
{
    strata_allocator *a = make("caching:expandable_segments=true", 1024 * MiB, 0);
    ck_assert_uint_eq(must_alloc(a, 0, 30 * MiB, 0), 0);
    ck_assert_uint_eq(must_alloc(a, 1, 30 * MiB, 0), 30 * MiB);
    ck_assert_uint_eq(must_alloc(a, 2, 10 * MiB, 0), 60 * MiB);
    ck_assert_uint_eq(stats(a).reserved, 80 * MiB);
    must_free(a, 1);
    strata_allocator_release(a);
    ck_assert_uint_eq(stats(a).reserved, 60 * MiB);
    ck_assert_uint_eq(stats(a).free_in_reserved, 20 * MiB);
    ck_assert_uint_eq(must_alloc(a, 3, 25 * MiB, 0), 30 * MiB);
    ck_assert_uint_eq(stats(a).reserved, 80 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* Expandable segments map 20 MiB pages as needed: 5 MiB, then 30 MiB more. */
START_TEST(test_caching_expandable)
{
    strata_allocator *a = make("caching:expandable_segments=true", 1024 * MiB, 0);
    must_alloc(a, 0, 5 * MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, 20 * MiB);
    must_alloc(a, 1, 30 * MiB, 0); /* 15 MiB free at the end: 15 more -> one page */
    ck_assert_uint_eq(stats(a).reserved, 40 * MiB);
    must_free(a, 1);
    strata_allocator_release(a); /* unmaps whole free pages at the end */
    ck_assert_uint_eq(stats(a).reserved, 20 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* BFC with memory_fraction=1 on 1 MiB: one region of 1 MiB.
 * 1000 B -> 1024 B, split from the 1 MiB chunk (it is >= 2 x 1024).
 * 600 KiB from the 1047552-byte rest: not split (< 2 x 614400, and the
 * remainder is far below 128 MiB), so the block holds 1047552 bytes. */
START_TEST(test_bfc_split_and_coalesce)
{
    strata_allocator *a = make("bfc:memory_fraction=1", MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, MiB);
    ck_assert_uint_eq(must_alloc(a, 0, 1000, 0), 0);
    ck_assert_uint_eq(stats(a).largest_free, MiB - 1024);
    ck_assert_uint_eq(must_alloc(a, 1, 600 * KiB, 0), 1024);
    strata_alloc_stats s = stats(a);
    ck_assert_uint_eq(s.internal_waste, 24 + (MiB - 1024 - 600 * KiB));
    ck_assert_uint_eq(s.largest_free, 0);
    must_free(a, 0);
    ck_assert_uint_eq(stats(a).largest_free, 1024);
    must_free(a, 1);
    ck_assert_uint_eq(stats(a).largest_free, MiB); /* coalesced into one chunk */
    /* a 300 KiB request now splits the chunk (1 MiB >= 2 x 300 KiB) */
    must_alloc(a, 2, 300 * KiB, 0);
    ck_assert_uint_eq(stats(a).largest_free, MiB - 300 * KiB);
    strata_allocator_free(a);
}
END_TEST

/* allow_growth: regions of 2 MiB, doubling. */
START_TEST(test_bfc_growth)
{
    strata_allocator *a = make("bfc:allow_growth=true,memory_fraction=1", 64 * MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, 0);
    must_alloc(a, 0, MiB, 0);
    ck_assert_uint_eq(stats(a).reserved, 2 * MiB);
    must_alloc(a, 1, 1536 * KiB, 0); /* 1 MiB left: a new region of 4 MiB */
    ck_assert_uint_eq(stats(a).reserved, 6 * MiB);
    ck_assert_uint_eq(stats(a).n_segments, 2);
    strata_allocator_free(a);
}
END_TEST

/* Random ops through every allocator, invariants checked after each. */
START_TEST(test_invariants_random)
{
    const strata_alloc_type *const *types = strata_alloc_types();
    for (size_t t = 0; types[t]; t++) {
        if (types[t]->plan)
            continue; /* the planner is covered by test_alloc_offline */
        strata_allocator *a = make(types[t]->name, 256 * MiB, 0);
        GRand *rng = g_rand_new_with_seed(42);
        GArray *live = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        uint64_t next = 0;
        for (int i = 0; i < 3000; i++) {
            if (live->len > 0 && (g_rand_int_range(rng, 0, 3) == 0 || live->len > 60)) {
                guint k = (guint)g_rand_int_range(rng, 0, (gint32)live->len);
                must_free(a, g_array_index(live, uint64_t, k));
                g_array_remove_index_fast(live, k);
            } else {
                uint64_t size = (uint64_t)g_rand_int_range(rng, 1, 4 * 1024 * 1024);
                uint64_t off;
                if (strata_allocator_alloc(a, next, size, (uint32_t)g_rand_int_range(rng, 0, 2), &off))
                    g_array_append_val(live, next);
                GError *err = NULL;
                ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
                next++;
            }
            if (i % 500 == 499) {
                strata_allocator_release(a);
                GError *err = NULL;
                ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
            }
        }
        g_array_free(live, TRUE);
        g_rand_free(rng);
        strata_allocator_free(a);
    }
}
END_TEST

/* The offline planner gives a and b, live at [0,2) and [2,4) in program
 * order, the same offset. Used with lifetimes it was not made for (b allocated
 * while a is live), the invariant check reports the overlap. */
START_TEST(test_offline_overlap_caught)
{
    strata_allocator *a = make("offline", 16 * MiB, 0);
    strata_lifetime l[2] = {strata_lifetime_open(0, MiB, 0, false, 0), strata_lifetime_open(1, MiB, 2, false, 0)};
    strata_lifetime_close(&l[0], 2, false, 0);
    strata_lifetime_close(&l[1], 4, false, 0);
    GError *err = NULL;
    ck_assert_msg(strata_allocator_plan(a, l, 2, &err), "%s", err ? err->message : "");
    uint64_t off0, off1;
    ck_assert(strata_allocator_alloc(a, 0, MiB, 0, &off0));
    ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
    ck_assert(strata_allocator_alloc(a, 1, MiB, 0, &off1));
    ck_assert_uint_eq(off0, off1);
    ck_assert(!strata_allocator_check(a, &err));
    ck_assert_msg(strstr(err->message, "overlap"), "%s", err->message);
    g_clear_error(&err);
    must_free(a, 0);
    ck_assert_msg(strata_allocator_check(a, &err), "%s", err ? err->message : "");
    must_free(a, 1);
    strata_allocator_free(a);
}
END_TEST

START_TEST(test_unknown_names_list_known)
{
    GError *err = NULL;
    ck_assert_ptr_null(strata_allocator_new("nope", MiB, 0, &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_ptr_nonnull(strstr(err->message, "best-fit"));
    ck_assert_ptr_nonnull(strstr(err->message, "caching"));
    g_clear_error(&err);
    ck_assert_ptr_null(strata_allocator_new("caching:max_split=1", MiB, 0, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "max_split_size"));
    g_clear_error(&err);
    ck_assert_ptr_null(strata_allocator_new("best-fit", MiB, 3, &err));
    g_clear_error(&err);
    /* the spec names every parameter */
    strata_allocator *a = make("caching:max_split_size=200MiB", MiB, 0);
    ck_assert_str_eq(strata_allocator_spec(a),
                     "caching:max_split_size=200MiB,roundup_power2_divisions=0,expandable_segments=false");
    strata_allocator_free(a);
    /* base values are overridden by the spec's */
    a = strata_allocator_new_with_base("caching:roundup_power2_divisions=2",
                                       "roundup_power2_divisions=8,expandable_segments=true", MiB, 0,
                                       &err);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(strata_allocator_spec(a),
                     "caching:roundup_power2_divisions=2,expandable_segments=true");
    strata_allocator_free(a);
}
END_TEST

static Suite *alloc_models_suite(void)
{
    Suite *s = suite_create("alloc_models");
    TCase *tc = tcase_create("models");
    tcase_add_test(tc, test_exact_peaks_best_fit);
    tcase_add_test(tc, test_best_fit_fits_where_first_fit_fails);
    tcase_add_test(tc, test_coalescing);
    tcase_add_test(tc, test_bump_never_reuses);
    tcase_add_test(tc, test_next_fit_rover);
    tcase_add_test(tc, test_buddy_rounding);
    tcase_add_test(tc, test_caching_segment_sizes);
    tcase_add_test(tc, test_caching_oom_release_and_retry);
    tcase_add_test(tc, test_caching_streams);
    tcase_add_test(tc, test_caching_max_split_size);
    tcase_add_test(tc, test_caching_roundup_divisions);
    tcase_add_test(tc, test_caching_expandable);
    tcase_add_test(tc, test_caching_expandable_unmaps_middle);
    tcase_add_test(tc, test_caching_settings_checked);
    tcase_add_test(tc, test_caching_max_non_split_rounding);
    tcase_add_test(tc, test_caching_large_segment_size);
    tcase_add_test(tc, test_caching_roundup_intervals);
    tcase_add_test(tc, test_caching_device_limit);
    tcase_add_test(tc, test_caching_garbage_collection);
    tcase_add_test(tc, test_bfc_split_and_coalesce);
    tcase_add_test(tc, test_bfc_growth);
    tcase_add_test(tc, test_invariants_random);
    tcase_add_test(tc, test_offline_overlap_caught);
    tcase_add_test(tc, test_unknown_names_list_known);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(alloc_models_suite());
}
