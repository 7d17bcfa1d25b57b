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

/* Ground truth: reserved bytes over the events, from the initial segments
 * and the segment events alone. */
void torch_ground_truth(conv *c)
{
    uint64_t reserved = c->sum->initial_reserved;
    c->sum->peak_reserved = reserved;
    for (size_t i = 0; i < c->segevs->len; i++) {
        const segev *e = &g_array_index(c->segevs, segev, i);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved = sat_add(reserved, e->size);
            if (reserved > c->sum->peak_reserved)
                c->sum->peak_reserved = reserved;
            if (e->action == EV_SEGMENT_ALLOC) {
                c->sum->n_segment_allocs++;
                g_array_append_val(c->sum->segment_alloc_sizes, e->size);
            }
        } else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP) {
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (e->action == EV_SEGMENT_FREE)
                c->sum->n_segment_frees++;
        }
    }
    c->sum->final_reserved = reserved;
}

/* Is the run of segment_free events starting at segevs[k] the program's
 * (empty_cache) rather than the allocator's own? The allocator frees cached
 * segments only when the device cannot give it a new one: then the run is
 * followed by an oom event, or by the segment_alloc it retries, and that
 * segment_alloc could have failed, i.e. reserved before the run plus its
 * size exceeds the peak the device is seen to hold. Otherwise the program
 * asked for it. `reserved` is the reserved bytes before the run; *run_end
 * the index of the first event after it. */
static bool program_release(conv *c, size_t k, uint64_t reserved, uint64_t *run_end)
{
    const segev *ev = (const segev *)(void *)c->segevs->data;
    size_t j = k;
    while (j < c->segevs->len && ev[j].index == ev[k].index + (j - k) &&
           (ev[j].action == EV_SEGMENT_FREE || ev[j].action == EV_SEGMENT_UNMAP ||
            ev[j].action == EV_SNAPSHOT))
        j++;
    *run_end = ev[k].index + (j - k);
    if (*run_end == c->n_events)
        return true;
    if (j == c->segevs->len || ev[j].index != *run_end)
        return true; /* an event of another kind follows */
    if (ev[j].action == EV_OOM)
        return false;
    if (ev[j].action == EV_SEGMENT_ALLOC || ev[j].action == EV_SEGMENT_MAP)
        return sat_add(reserved, ev[j].size) <= c->sum->peak_reserved;
    return true;
}

/* The events that become a `release`: the first of each program's run. */
void torch_decide_releases(conv *c)
{
    uint64_t reserved = c->sum->initial_reserved;
    uint64_t release_until = 0; /* events before this index are in a handled run */
    for (size_t k = 0; k < c->segevs->len; k++) {
        const segev *e = &g_array_index(c->segevs, segev, k);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved = sat_add(reserved, e->size);
        } else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP) {
            uint64_t run_end = 0;
            bool first_of_run = e->index >= release_until;
            bool program = first_of_run && program_release(c, k, reserved, &run_end);
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (program) {
                g_array_append_val(c->releases, e->index);
                c->sum->n_releases++;
            }
            if (first_of_run)
                release_until = run_end;
        }
    }
}
