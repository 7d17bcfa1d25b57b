/*
 * torch_history.c: what a snapshot's segment events say, independent of any
 * model (see torch_conv.h): the ground truth (reserved bytes at the first
 * event, their peak and their final value) and which runs of segment_free
 * events the program caused (empty_cache), which become `release` ops.
 *
 * Invariant: only the initial segments and the segment events are read;
 * nothing here depends on an allocator model.
 */
#include "import/torch_conv.h"

/* The reserved bytes at the first event by the file alone: the final
 * segments' bytes, less what the events added, plus what they took away.
 * False when the events take away more than there is. */
static bool file_start(conv *c, uint64_t *out)
{
    uint64_t added = 0, taken = 0;
    for (size_t i = 0; i < c->segevs->len; i++) {
        const segev *e = &g_array_index(c->segevs, segev, i);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP)
            added = sat_add(added, e->size);
        else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP)
            taken = sat_add(taken, e->size);
    }
    uint64_t before = sat_add(c->final_reserved, taken);
    if (before < added || before == UINT64_MAX)
        return false;
    *out = before - added;
    return true;
}

/* get_allocation_size(): the bytes a failed cudaMalloc asked for. */
static uint64_t allocation_size(uint64_t size)
{
    if (size <= SMALL_REQUEST)
        return SMALL_SEGMENT;
    if (size < CACHING_MIN_LARGE_ALLOC)
        return CACHING_LARGE_BUFFER;
    return sat_add(size, CACHING_ROUND_LARGE - 1) / CACHING_ROUND_LARGE * CACHING_ROUND_LARGE;
}

static void note_oom(conv *c, const segev *e, uint64_t reserved)
{
    strata_torch_oom o = {e->index, e->size, e->addr, c->have_t0 && e->has_time && e->time_us >= c->t0,
                          0};
    if (o.has_at)
        o.at_us = e->time_us - c->t0;
    g_array_append_val(c->sum->ooms, o);
    /* the device refused reserved + the segment: the limit is below that */
    uint64_t wanted = allocation_size(e->size);
    uint64_t bound = sat_add(reserved, wanted);
    if (c->sum->limit_high == 0 || bound < c->sum->limit_high)
        c->sum->limit_high = bound;
    /* the OOM error's own figures: reserved + device_free is what the
     * process could reach (CUDACachingAllocator.cpp reports device_free
     * from cudaMemGetInfo in the OOM entry's addr) */
    c->sum->oom_reserved = reserved;
    uint64_t reach = sat_add(reserved, e->addr);
    if (e->addr < wanted && reach > c->sum->oom_implied_limit)
        c->sum->oom_implied_limit = reach;
}

/* Ground truth: reserved bytes over the events, from the reserved bytes at
 * the first event and the segment events alone. The start is the file's
 * (file_start); the rebuilt segments must agree with it, else the
 * disagreement is counted and the file wins. */
void torch_ground_truth(conv *c)
{
    strata_torch_summary *sum = c->sum;
    sum->rebuilt_reserved = sum->initial_reserved;
    uint64_t start;
    if (file_start(c, &start) && start != sum->initial_reserved) {
        c->setup_inconsistent++;
        sum->initial_reserved = start;
    }
    uint64_t reserved = sum->initial_reserved;
    sum->peak_reserved = reserved;
    for (size_t i = 0; i < c->segevs->len; i++) {
        const segev *e = &g_array_index(c->segevs, segev, i);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved = sat_add(reserved, e->size);
            if (reserved > sum->peak_reserved)
                sum->peak_reserved = reserved;
            if (e->action == EV_SEGMENT_ALLOC) {
                sum->n_segment_allocs++;
                g_array_append_val(sum->segment_alloc_sizes, e->size);
            }
        } else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP) {
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (e->action == EV_SEGMENT_FREE)
                sum->n_segment_frees++;
        } else if (e->action == EV_OOM) {
            note_oom(c, e, reserved);
        }
    }
    sum->final_reserved = reserved;
}

/* Could a cached segment freed in a run have served `request` bytes on
 * `stream`? get_free_block() in c10/cuda/CUDACachingAllocator.cpp looks
 * for a free block in the request's pool (requests up to 1 MiB: the small
 * pool of 2 MiB segments; others: the large pool) on the request's stream,
 * at least the request rounded to 512 bytes; a segment freed whole by
 * release_cached_blocks() was such a free block of its whole size. */
static bool could_serve(const segev *freed, uint64_t request, int64_t stream)
{
    uint64_t rounded = request < BLOCK_ROUND ? BLOCK_ROUND
                                             : sat_add(request, BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
    bool small_request = request <= SMALL_REQUEST, small_segment = freed->size <= SMALL_SEGMENT;
    return freed->action == EV_SEGMENT_FREE && freed->stream == stream &&
           small_request == small_segment && freed->size >= rounded;
}

/* Is the run of segment_free events starting at segevs[k] the program's
 * (empty_cache) rather than the allocator's own? In
 * c10/cuda/CUDACachingAllocator.cpp the allocator frees cached segments
 * (release_cached_blocks) only inside malloc(), after get_free_block()
 * found nothing and a cudaMalloc failed, and then retries: its run is
 * followed by an oom event, or by the segment_alloc it retries and the
 * alloc that segment was for. So the run is the program's when
 *  1. a freed segment's frames name empty_cache (torch/cuda/memory.py's
 *     empty_cache() -> emptyCache(), which passes its own stack); or
 *  2. no segment_alloc or oom follows it; or
 *  3. a freed segment could have served the alloc that follows: then
 *     get_free_block() would have found it and no cudaMalloc would have
 *     failed (no failed request came before the frees); or
 *  4. that segment_alloc could not have failed: reserved before the run
 *     plus its size is within the peak the device is seen to hold.
 * `reserved` is the reserved bytes before the run; *run_end the index of
 * the first event after it; *why 1 (frames), 3 (rule) or 0. */
static bool program_release(conv *c, size_t k, uint64_t reserved, uint64_t *run_end,
                            uint64_t *retry, int *why)
{
    const segev *ev = (const segev *)(void *)c->segevs->data;
    size_t j = k;
    bool frames = false;
    *why = 0;
    while (j < c->segevs->len && ev[j].index == ev[k].index + (j - k) &&
           (ev[j].action == EV_SEGMENT_FREE || ev[j].action == EV_SEGMENT_UNMAP ||
            ev[j].action == EV_SNAPSHOT)) {
        frames = frames || ev[j].empty_cache;
        j++;
    }
    *run_end = ev[k].index + (j - k);
    if (frames) {
        *why = 1;
        return true;
    }
    if (*run_end == c->n_events)
        return true;
    if (j == c->segevs->len || ev[j].index != *run_end)
        return true; /* an event of another kind follows */
    if (ev[j].action == EV_OOM) {
        *why = 2; /* the allocator's, and its retry failed */
        return false;
    }
    if (ev[j].action == EV_SEGMENT_ALLOC || ev[j].action == EV_SEGMENT_MAP) {
        *retry = ev[j].size;
        if (ev[j].has_request)
            for (size_t i = k; i < j; i++)
                if (could_serve(&ev[i], ev[j].request, ev[j].request_stream)) {
                    *why = 3;
                    return true;
                }
        return sat_add(reserved, ev[j].size) <= c->sum->peak_reserved;
    }
    return true;
}

/* The events that become a `release`: the first of each program's run,
 * and of each run of the allocator's that ended in an oom (releases holds
 * index << 1 | 1 for those, index << 1 for the program's).
 * Each run of the allocator's bounds the memory the process could get: its
 * first cudaMalloc failed (reserved before the run + the retried segment
 * exceeds the limit), the retry succeeded (the peak is within it). */
void torch_decide_releases(conv *c)
{
    strata_torch_summary *sum = c->sum;
    uint64_t reserved = c->sum->initial_reserved;
    uint64_t release_until = 0; /* events before this index are in a handled run */
    for (size_t k = 0; k < c->segevs->len; k++) {
        const segev *e = &g_array_index(c->segevs, segev, k);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved = sat_add(reserved, e->size);
        } else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP) {
            uint64_t run_end = 0, retry = 0;
            bool first_of_run = e->index >= release_until;
            int why = 0;
            bool program = first_of_run && program_release(c, k, reserved, &run_end, &retry, &why);
            if (first_of_run && !program && retry > 0) {
                uint64_t bound = sat_add(reserved, retry);
                sum->n_retries++;
                if (sum->limit_high == 0 || bound < sum->limit_high)
                    sum->limit_high = bound;
            }
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (first_of_run && !program && why == 2) {
                /* the allocator freed its cache and still failed: the
                 * model frees it too (a release noted oom_retry), so the
                 * state after matches the file's */
                uint64_t mark = e->index << 1 | 1;
                g_array_append_val(c->releases, mark);
                sum->n_oom_releases++;
            }
            if (program) {
                uint64_t mark = e->index << 1;
                g_array_append_val(c->releases, mark);
                sum->n_releases++;
                sum->n_releases_by_frames += why == 1;
                sum->n_releases_by_rule += why == 3;
            }
            if (first_of_run)
                release_until = run_end;
        }
    }
    if (sum->limit_high > 0)
        sum->limit_low = sum->peak_reserved;
    /* An oom's free bytes say what more the process could have held: the
     * reserved bytes then plus them, when below the segment it asked for
     * (the cudaMalloc failed for want of them). The limit is at least that. */
    if (sum->oom_implied_limit > sum->limit_low && sum->oom_implied_limit < sum->limit_high)
        sum->limit_low = sum->oom_implied_limit;
}
