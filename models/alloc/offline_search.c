/*
 * offline_search.c: the exact half of the offline planner (see offline.h):
 * while the height is above the lower bound, a bounded exact search
 * (MiniMalloc, below) for plans within target heights from a ladder: the
 * lower bound, then 0.5% steps up to 8% above it, then 9, 10, 12, 15, 20,
 * 25, 30 and 40%. The search runs in rounds with a node budget per try that
 * doubles per round (from 2 nodes per buffer). A round walks the ladder
 * down from the best plan so far, trying each step with every rank in turn
 * (MiniMalloc's WAT, TAW and TWA, four more, then the best plan's own
 * order) until one reaches it; a plan found moves the walk below it, and
 * the round ends after three steps in a row were missed. Then the lower
 * bound itself, with MiniMalloc's ranks and the best plan's order (a
 * perfect packing is often found fast). After a round (from 16 nodes per
 * buffer a try) that found no better plan, short restarts (2 nodes per
 * buffer) with randomly perturbed ranks, from a fixed seed, get twice the
 * nodes that round spent. Which target and which rank a
 * depth-first search reaches fast is erratic (one rank finds in a few
 * thousand nodes what another misses in millions; D of MiniMalloc's
 * challenging set reaches 4.5% above its bound in 7k nodes and not 5% in
 * 20M), so many short tries beat a few long ones. The search stops when
 * `search_nodes` are spent (a node with m candidates costs 1 + m/512), so
 * the planner always finishes with the best plan found. A target that a
 * complete search proves out of reach is dropped with those below it. The
 * search is off above 4096 buffers (its candidate lists would pass about
 * 128 MiB).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc/offline.h"


/* The exact search keeps a candidate list per level of its depth-first
 * path: up to n^2/2 entries of 16 bytes. Above this many buffers (about
 * 128 MiB of lists) the planner keeps its heuristic plan. */
#define OFFLINE_SEARCH_MAX_BUFFERS 4096

/* ---- exact search (after MiniMalloc, Moffitt, ASPLOS 2023) ----
 *
 * A decision procedure for one target height T, by depth-first search:
 *  - time is cut into sections (maximal intervals where the set of live
 *    buffers is constant); each section keeps a floor (no unplaced buffer
 *    of it can go lower) and the total size of its unplaced buffers;
 *  - each unplaced buffer has a minimum offset: the top of the placed
 *    buffers overlapping it in time;
 *  - at each node the unplaced buffers are tried in order of (minimum
 *    offset, static rank), each at its minimum offset, keeping placements
 *    in non-decreasing (offset, rank) order (canonical solutions only);
 *  - dominance: a buffer is not placed at or above the lowest top any
 *    unplaced buffer could reach (that would leave a needless gap);
 *  - inference: a node fails when, in some section, max(offset, floor) +
 *    total of its unplaced buffers passes T. Only the sections whose floor
 *    or total changed are summed again; for the others the check reduces
 *    to offset + their largest total, so a placement must cover every
 *    section where that passes T;
 *  - decomposition: when no unplaced buffer crosses a section boundary any
 *    more, the pieces on either side are solved apart, each ranked afresh
 *    with the totals of its own unplaced buffers (as MiniMalloc does).
 * The search has a node budget, so it improves the heuristic plan and is
 * never required to finish; a search that ends within its budget without a
 * plan proves the target out of reach. No allocation per node: candidate
 * lists, undo records and cut points live on stacks reused by every node.
 */
typedef struct offline_search {
    const offline_buf *bufs;
    size_t n, n_sections;
    uint64_t target;
    const uint32_t *adj_start, *adj;   /* time-overlap graph, CSR */
    const uint32_t *sec_lo, *sec_hi;   /* buffer -> its sections [lo, hi) */
    const uint32_t *sec_start, *sec_bufs; /* section -> its buffers, CSR */
    uint64_t *min_offset, *offset, *solution;
    bool *placed;
    uint64_t *sec_floor, *sec_total;
    /* per section, an unplaced buffer last seen at or below the section's
     * floor or slack (a hint, checked before use: it spares the scan) */
    uint32_t *witness;
    uint32_t *cuts;                    /* unplaced buffers crossing boundary q|q+1 */
    int64_t nodes_left;
    uint32_t *rank;
    int rerank; /* heuristic to re-rank each piece by after a decomposition; -1: keep */
    const uint64_t *guide; /* offsets of the best plan so far, for RANK_GUIDE */
    /* Stacks reused by every node (no allocation per node): candidate
     * lists, undo records and cut points, each node pushing on entry and
     * popping on return. Addressed by index: they grow by reallocation. */
    struct offline_cand *cand;
    size_t cand_top, cand_cap;
    uint64_t *undo; /* pairs: (buffer | section with bit 63, old value) */
    size_t undo_top, undo_cap;
    uint32_t *cutpts;
    size_t cut_top, cut_cap;
    /* progress: the best height so far against the lower bound */
    strata_progress *progress;
    uint64_t best_height, lower_bound;
} offline_search;

/* A set of unplaced buffers over a range of sections that no other
 * unplaced buffer crosses: solved independently of the rest. */
typedef struct offline_part {
    uint32_t *bufs;
    size_t n;
    uint32_t lo, hi;
} offline_part;

typedef struct offline_cand {
    uint64_t offset;
    uint32_t rank, buf;
} offline_cand;

static int offline_cmp_cand(const void *a, const void *b)
{
    const offline_cand *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank ? 1 : 0;
}

enum { SEARCH_FOUND = 1, SEARCH_NOT_FOUND = 0, SEARCH_ABORTED = -1 };

#define OFFLINE_SECTION_BIT (UINT64_C(1) << 63)

static void offline_reserve(void **data, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t cap2 = *cap ? *cap : 1024;
    while (cap2 < need)
        cap2 *= 2;
    *data = g_realloc_n(*data, cap2, elem);
    *cap = cap2;
}

static void offline_push_undo(offline_search *s, uint64_t what, uint64_t old)
{
    offline_reserve((void **)&s->undo, &s->undo_cap, 2 * (s->undo_top + 1), sizeof *s->undo);
    s->undo[2 * s->undo_top] = what;
    s->undo[2 * s->undo_top + 1] = old;
    s->undo_top++;
}

/* The largest unplaced total over the part's sections. */
static uint64_t offline_max_total(const offline_search *s, const offline_part *part)
{
    uint64_t m = 0;
    for (uint32_t q = part->lo; q < part->hi; q++)
        if (s->sec_total[q] > m)
            m = s->sec_total[q];
    return m;
}

static int offline_dfs(offline_search *s, const offline_part *part, size_t parent, size_t n_parent,
                       uint64_t last_offset, uint32_t last_rank, uint64_t total_bound);
static void offline_rank_subset(const offline_buf *bufs, const uint32_t *sec_lo,
                                const uint32_t *sec_hi, const uint64_t *totals, int how,
                                const uint64_t *guide, GRand *noise, const uint32_t *which,
                                size_t count, uint32_t *rank);

/* Split [lo, hi) at the given cut points and solve each piece. */
static int offline_solve_pieces(offline_search *s, const offline_part *part, size_t cuts,
                                size_t n_cuts)
{
    int status = SEARCH_FOUND;
    for (size_t c = 0; c + 1 < n_cuts && status == SEARCH_FOUND; c++) {
        uint32_t lo = s->cutpts[cuts + c], hi = s->cutpts[cuts + c + 1];
        offline_part sub = {.bufs = g_new(uint32_t, part->n ? part->n : 1), .n = 0, .lo = lo,
                            .hi = hi};
        for (size_t i = 0; i < part->n; i++) {
            uint32_t v = part->bufs[i];
            if (!s->placed[v] && s->sec_lo[v] < hi && lo < s->sec_hi[v])
                sub.bufs[sub.n++] = v;
        }
        if (sub.n > 0 && s->rerank < 0) { /* a restart keeps its own ranks */
            status = offline_dfs(s, &sub, SIZE_MAX, 0, 0, 0, offline_max_total(s, &sub));
        } else if (sub.n > 0) {
            /* as MiniMalloc, rank a piece afresh: section totals now count
             * only its unplaced buffers */
            uint32_t *saved = g_new(uint32_t, sub.n);
            for (size_t i = 0; i < sub.n; i++)
                saved[i] = s->rank[sub.bufs[i]];
            offline_rank_subset(s->bufs, s->sec_lo, s->sec_hi, s->sec_total, s->rerank,
                                s->guide, NULL, sub.bufs, sub.n, s->rank);
            status = offline_dfs(s, &sub, SIZE_MAX, 0, 0, 0, offline_max_total(s, &sub));
            for (size_t i = 0; i < sub.n; i++)
                s->rank[sub.bufs[i]] = saved[i];
            g_free(saved);
        }
        g_free(sub.bufs);
    }
    return status;
}

/* Places buffer b at off: raises the minimum offsets of the unplaced
 * buffers it overlaps, sets the floors of its sections, drops their totals,
 * and raises the floors of sections whose unplaced buffers all sit higher
 * now. Records undo entries; returns false when some section's floor plus
 * its unplaced total passes the target (the checks on every other section
 * are done by the caller with the max-total bound). */
static bool offline_place_buf(offline_search *s, uint32_t b, uint64_t off)
{
    const offline_buf *bb = &s->bufs[b];
    uint64_t top = off + bb->size, T = s->target;
    bool ok = true;
    s->placed[b] = true;
    s->offset[b] = off;
    uint32_t span_lo = s->sec_lo[b], span_hi = s->sec_hi[b];
    for (uint32_t e = s->adj_start[b]; e < s->adj_start[b + 1]; e++) {
        uint32_t u = s->adj[e];
        if (s->placed[u] || s->min_offset[u] >= top)
            continue;
        offline_push_undo(s, u, s->min_offset[u]);
        s->min_offset[u] = top;
        if (s->sec_lo[u] < span_lo)
            span_lo = s->sec_lo[u];
        if (s->sec_hi[u] > span_hi)
            span_hi = s->sec_hi[u];
    }
    for (uint32_t q = s->sec_lo[b]; q < s->sec_hi[b]; q++) {
        offline_push_undo(s, q | OFFLINE_SECTION_BIT, s->sec_floor[q]);
        s->sec_floor[q] = top;
        s->sec_total[q] -= bb->size;
        ok = ok && top + s->sec_total[q] <= T;
    }
    /* Sections of raised buffers: floor >= the lowest minimum offset of
     * their unplaced buffers. Every such section holds a buffer raised to
     * `top`, so that lowest offset is at most top: a floor can only fail a
     * check when it passes the slack (target - total), so a section whose
     * floor or slack is already >= top needs no scan. */
    for (uint32_t q = span_lo; q < span_hi && ok; q++) {
        uint64_t slack = s->sec_total[q] < T ? T - s->sec_total[q] : 0;
        uint64_t enough = s->sec_floor[q] > slack ? s->sec_floor[q] : slack;
        if (top <= enough)
            continue;
        uint32_t w = s->witness[q];
        if (w != UINT32_MAX && !s->placed[w] && s->min_offset[w] <= enough)
            continue; /* the scan would stop at a buffer this low: no floor to raise */
        uint64_t low = UINT64_MAX;
        bool exact = true;
        for (uint32_t e = s->sec_start[q]; e < s->sec_start[q + 1]; e++) {
            uint32_t v = s->sec_bufs[e];
            if (!s->placed[v] && s->min_offset[v] < low) {
                low = s->min_offset[v];
                if (low <= enough) {
                    exact = false;
                    s->witness[q] = v;
                    break;
                }
            }
        }
        if (exact && low != UINT64_MAX && s->sec_floor[q] < low) {
            offline_push_undo(s, q | OFFLINE_SECTION_BIT, s->sec_floor[q]);
            s->sec_floor[q] = low;
            ok = low + s->sec_total[q] <= T;
        }
    }
    return ok;
}

static void offline_unplace_buf(offline_search *s, uint32_t b, size_t undo_mark)
{
    while (s->undo_top > undo_mark) {
        s->undo_top--;
        uint64_t what = s->undo[2 * s->undo_top], old = s->undo[2 * s->undo_top + 1];
        if (what & OFFLINE_SECTION_BIT)
            s->sec_floor[what & ~OFFLINE_SECTION_BIT] = old;
        else
            s->min_offset[what] = old;
    }
    for (uint32_t q = s->sec_lo[b]; q < s->sec_hi[b]; q++)
        s->sec_total[q] += s->bufs[b].size;
    s->placed[b] = false;
}

/* Fills the node's candidates at s->cand + base: the unplaced buffers of
 * the part by (minimum offset, rank). parent: index in s->cand of the
 * parent's candidates (SIZE_MAX at the root of a part), whose order,
 * re-keyed, is nearly sorted: insertion sort. Returns their count. */
static size_t offline_candidates(offline_search *s, const offline_part *part, size_t parent,
                                 size_t n_parent, size_t base)
{
    size_t m = 0;
    offline_reserve((void **)&s->cand, &s->cand_cap,
                    base + (parent == SIZE_MAX ? part->n : n_parent) + 1, sizeof *s->cand);
    offline_cand *cand = s->cand + base;
    if (parent == SIZE_MAX) {
        for (size_t i = 0; i < part->n; i++) {
            uint32_t v = part->bufs[i];
            if (!s->placed[v])
                cand[m++] = (offline_cand){s->min_offset[v], s->rank[v], v};
        }
        qsort(cand, m, sizeof *cand, offline_cmp_cand);
        return m;
    }
    for (size_t i = 0; i < n_parent; i++) {
        uint32_t v = s->cand[parent + i].buf;
        if (s->placed[v])
            continue;
        offline_cand c = {s->min_offset[v], s->rank[v], v};
        size_t j = m++;
        while (j > 0 && offline_cmp_cand(&cand[j - 1], &c) > 0) {
            cand[j] = cand[j - 1];
            j--;
        }
        cand[j] = c;
    }
    return m;
}

/* Sections where off + total passes the target, for the offset of the
 * current candidate (offsets only grow along a node's loop): a placement
 * must cover all of them, since it lowers only its own sections. */
typedef struct offline_violation {
    uint64_t off;   /* the offset they were found for; UINT64_MAX: none yet */
    uint32_t lo, hi; /* [lo, hi) of violating sections, empty when lo >= hi */
} offline_violation;

/* Whether placing b at off can keep every section of the part within the
 * target: each section b does not cover keeps its floor and total, so it
 * only needs max(floor, off) + total <= target (the floor part held at the
 * parent). Tightens *total_bound to the exact largest total. */
static bool offline_covers(const offline_search *s, const offline_part *part, uint32_t b,
                           uint64_t off, offline_violation *viol, uint64_t *total_bound)
{
    if (off + *total_bound <= s->target)
        return true;
    if (off != viol->off) {
        viol->off = off;
        viol->lo = part->hi;
        viol->hi = part->lo;
        uint64_t exact = 0;
        for (uint32_t q = part->lo; q < part->hi; q++) {
            if (s->sec_total[q] > exact)
                exact = s->sec_total[q];
            if (off + s->sec_total[q] > s->target) {
                if (q < viol->lo)
                    viol->lo = q;
                viol->hi = q + 1;
            }
        }
        *total_bound = exact;
    }
    return viol->lo >= viol->hi || (s->sec_lo[b] <= viol->lo && s->sec_hi[b] >= viol->hi);
}

/* Places candidate b at off and searches below: on the same part, or on
 * the pieces the placement cuts it into (dynamic decomposition: boundaries
 * no unplaced buffer crosses now). The node's candidates are at base, m. */
static int offline_branch(offline_search *s, const offline_part *part, uint32_t b, uint64_t off,
                          uint32_t rank, size_t base, size_t m, uint64_t total_bound)
{
    int status = SEARCH_NOT_FOUND;
    size_t undo_mark = s->undo_top;
    if (offline_place_buf(s, b, off)) {
        size_t cuts = s->cut_top, n_cuts = 1;
        offline_reserve((void **)&s->cutpts, &s->cut_cap, cuts + 1, sizeof *s->cutpts);
        s->cutpts[cuts] = part->lo;
        for (uint32_t q = s->sec_lo[b]; q + 1 < s->sec_hi[b]; q++) {
            if (--s->cuts[q] == 0 && q + 1 > part->lo && q + 1 < part->hi) {
                offline_reserve((void **)&s->cutpts, &s->cut_cap, cuts + n_cuts + 2,
                                sizeof *s->cutpts);
                s->cutpts[cuts + n_cuts++] = q + 1;
            }
        }
        if (n_cuts == 1) {
            status = offline_dfs(s, part, base, m, off, rank, total_bound);
        } else {
            offline_reserve((void **)&s->cutpts, &s->cut_cap, cuts + n_cuts + 1,
                            sizeof *s->cutpts);
            s->cutpts[cuts + n_cuts++] = part->hi;
            s->cut_top = cuts + n_cuts;
            status = offline_solve_pieces(s, part, cuts, n_cuts);
            s->cut_top = cuts;
        }
        for (uint32_t q = s->sec_lo[b]; q + 1 < s->sec_hi[b]; q++)
            s->cuts[q]++;
    }
    /* restore (the solution, when found, is already in s->solution) */
    offline_unplace_buf(s, b, undo_mark);
    if (status == SEARCH_FOUND)
        s->solution[b] = off;
    return status;
}

/* parent: index in s->cand of the parent's candidates (SIZE_MAX at the root
 * of a part); total_bound: an upper bound on the part's largest unplaced
 * section total (totals only drop down a path). */
static int offline_dfs(offline_search *s, const offline_part *part, size_t parent, size_t n_parent,
                       uint64_t last_offset, uint32_t last_rank, uint64_t total_bound)
{
    if (--s->nodes_left < 0)
        return SEARCH_ABORTED;
    if ((s->nodes_left & 0xffff) == 0) {
        char stage[64];
        g_snprintf(stage, sizeof stage, "searching for height %" G_GUINT64_FORMAT " B", s->target);
        offline_show(s->progress, s->n, s->best_height, s->lower_bound, stage);
    }
    size_t base = s->cand_top;
    size_t m = offline_candidates(s, part, parent, n_parent, base);
    if (m == 0) {
        for (size_t i = 0; i < part->n; i++)
            s->solution[part->bufs[i]] = s->offset[part->bufs[i]];
        return SEARCH_FOUND;
    }
    s->cand_top = base + m;
    s->nodes_left -= (int64_t)(m / 512); /* large nodes cost more of the budget */
    uint64_t min_height = UINT64_MAX;
    for (size_t i = 0; i < m; i++) {
        uint32_t v = s->cand[base + i].buf;
        if (s->min_offset[v] + s->bufs[v].size < min_height)
            min_height = s->min_offset[v] + s->bufs[v].size;
    }
    int status = SEARCH_NOT_FOUND;
    offline_violation viol = {UINT64_MAX, 0, 0};
    for (size_t k = 0; k < m && status == SEARCH_NOT_FOUND; k++) {
        const offline_cand *c = s->cand + base + k; /* the stack may have moved */
        uint64_t off = c->offset;
        uint32_t b = c->buf, rank = c->rank;
        if (off < last_offset || (off == last_offset && rank < last_rank))
            continue;
        if (off >= min_height)
            break; /* and so are the rest: candidates go by offset */
        if (off + s->bufs[b].size > s->target)
            continue;
        if (!offline_covers(s, part, b, off, &viol, &total_bound))
            continue;
        status = offline_branch(s, part, b, off, rank, base, m, total_bound);
    }
    s->cand_top = base;
    return status;
}

/* Static structure of the search: overlap graph and sections. */
typedef struct offline_problem {
    size_t n, n_sections;
    uint32_t *adj_start, *adj, *sec_lo, *sec_hi, *sec_start, *sec_bufs;
    uint64_t *sec_total;
} offline_problem;

static void offline_problem_clear(offline_problem *p)
{
    g_free(p->adj_start);
    g_free(p->adj);
    g_free(p->sec_lo);
    g_free(p->sec_hi);
    g_free(p->sec_start);
    g_free(p->sec_bufs);
    g_free(p->sec_total);
    *p = (offline_problem){0};
}

static int offline_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static size_t offline_time_index(const uint64_t *times, size_t n_times, uint64_t t)
{
    size_t lo = 0, hi = n_times;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (times[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* False when the problem is too large for the search. */
static bool offline_problem_build(const offline_buf *bufs, size_t n, uint64_t max_edges,
                                  offline_problem *p)
{
    *p = (offline_problem){.n = n};
    uint64_t *times = g_new(uint64_t, 2 * n);
    for (size_t i = 0; i < n; i++) {
        times[2 * i] = bufs[i].start;
        times[2 * i + 1] = bufs[i].end;
    }
    qsort(times, 2 * n, sizeof *times, offline_cmp_u64);
    size_t n_times = 0;
    for (size_t i = 0; i < 2 * n; i++)
        if (n_times == 0 || times[n_times - 1] != times[i])
            times[n_times++] = times[i];
    p->n_sections = n_times > 0 ? n_times - 1 : 0;
    p->sec_lo = g_new(uint32_t, n);
    p->sec_hi = g_new(uint32_t, n);
    uint64_t incidences = 0;
    for (size_t i = 0; i < n; i++) {
        p->sec_lo[i] = (uint32_t)offline_time_index(times, n_times, bufs[i].start);
        p->sec_hi[i] = (uint32_t)offline_time_index(times, n_times, bufs[i].end);
        incidences += p->sec_hi[i] - p->sec_lo[i];
    }
    g_free(times);
    if (incidences > max_edges) {
        offline_problem_clear(p);
        return false;
    }
    /* section -> buffers */
    p->sec_start = g_new0(uint32_t, p->n_sections + 1);
    p->sec_total = g_new0(uint64_t, p->n_sections ? p->n_sections : 1);
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = p->sec_lo[i]; q < p->sec_hi[i]; q++) {
            p->sec_start[q + 1]++;
            p->sec_total[q] += bufs[i].size;
        }
    for (size_t q = 0; q < p->n_sections; q++)
        p->sec_start[q + 1] += p->sec_start[q];
    p->sec_bufs = g_new(uint32_t, incidences ? incidences : 1);
    uint32_t *fill = g_new0(uint32_t, p->n_sections ? p->n_sections : 1);
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = p->sec_lo[i]; q < p->sec_hi[i]; q++)
            p->sec_bufs[p->sec_start[q] + fill[q]++] = (uint32_t)i;
    g_free(fill);
    /* overlap graph */
    GArray *edges = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    p->adj_start = g_new(uint32_t, n + 1);
    for (size_t i = 0; i < n; i++) {
        p->adj_start[i] = edges->len;
        for (size_t j = 0; j < n; j++) {
            if (j != i && offline_overlap(&bufs[i], &bufs[j])) {
                uint32_t v = (uint32_t)j;
                g_array_append_val(edges, v);
            }
        }
        if (edges->len > max_edges) {
            g_array_free(edges, TRUE);
            offline_problem_clear(p);
            return false;
        }
    }
    p->adj_start[n] = edges->len;
    p->adj = (uint32_t *)g_array_free(edges, FALSE);
    return true;
}

/* Static ranks (preorderings): MiniMalloc's WAT, TAW and TWA (W: the
 * lifetime's width, in real time when the trace has it; A: area, size x
 * width; T: the largest section total the buffer sits in) and a few more:
 * area then total, size then width, sections then area, steps then area;
 * the restarts also perturb total then size then width, and start then
 * area. */
enum { RANK_WAT, RANK_TAW, RANK_TWA, RANK_AREA_TOTAL, RANK_SIZE_WIDTH, RANK_SECTIONS_AREA,
       RANK_STEPS_AREA, RANK__ROUNDS, RANK_TOTAL_SIZE_WIDTH = RANK__ROUNDS, RANK_START_AREA,
       RANK__COUNT, RANK_GUIDE = RANK__COUNT };

/* A key that orders as x (>= 0) does, at full precision: the bits of a
 * non-negative double order as its value. Widths are relative to the
 * shortest lifetime, and truncating them to whole units would tie most. */
static uint64_t offline_order_key(double x)
{
    uint64_t bits;
    x = x > 0 ? x : 0.0;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

/* Ranks the buffers listed in `which` (count of them; NULL: all of 0..n-1)
 * by heuristic `how`, with section totals `totals`: rank[which[i]] is the
 * buffer's position in that order. */
static void offline_rank_subset(const offline_buf *bufs, const uint32_t *sec_lo,
                                const uint32_t *sec_hi, const uint64_t *totals, int how,
                                const uint64_t *guide, GRand *noise, const uint32_t *which,
                                size_t count, uint32_t *rank)
{
    offline_key *keys = g_new0(offline_key, count ? count : 1);
    for (size_t k = 0; k < count; k++) {
        size_t i = which ? which[k] : k;
        uint64_t total = 0;
        for (uint32_t q = sec_lo[i]; q < sec_hi[i]; q++)
            if (totals[q] > total)
                total = totals[q];
        double width = bufs[i].width;
        uint64_t life = offline_order_key(width);
        uint64_t area = offline_order_key((double)bufs[i].size * width);
        uint64_t steps = bufs[i].end - bufs[i].start;
        keys[k].index = i;
        switch (how) {
        case RANK_WAT: keys[k].k1 = life; keys[k].k2 = area; keys[k].k3 = total; break;
        case RANK_TAW: keys[k].k1 = total; keys[k].k2 = area; keys[k].k3 = life; break;
        case RANK_TWA: keys[k].k1 = total; keys[k].k2 = life; keys[k].k3 = area; break;
        case RANK_AREA_TOTAL: keys[k].k1 = area; keys[k].k2 = total; break;
        case RANK_SIZE_WIDTH: keys[k].k1 = bufs[i].size; keys[k].k2 = life; break;
        case RANK_SECTIONS_AREA: keys[k].k1 = sec_hi[i] - sec_lo[i]; keys[k].k2 = area; break;
        case RANK_STEPS_AREA: keys[k].k1 = steps; keys[k].k2 = bufs[i].size * steps; keys[k].k3 = total; break;
        case RANK_TOTAL_SIZE_WIDTH: keys[k].k1 = total; keys[k].k2 = bufs[i].size; keys[k].k3 = life; break;
        case RANK_START_AREA: keys[k].k1 = UINT64_MAX - bufs[i].start; keys[k].k2 = area; break;
        default: /* RANK_GUIDE: the order of a plan found before, lowest first */
            keys[k].k1 = UINT64_MAX - guide[i]; keys[k].k2 = bufs[i].size; keys[k].k3 = total; break;
        }
        if (noise && how == RANK_GUIDE) {
            keys[k].k1 = g_rand_int(noise); /* a restart: a random order */
        } else if (noise) {
            /* a restart: the first key scaled by 0.7 to 1.3; a key scaled
             * past 2^64 (only RANK_START_AREA's) drops to 0, last */
            double scaled = (double)keys[k].k1 * g_rand_double_range(noise, 0.7, 1.3);
            keys[k].k1 = scaled < 0x1p64 ? (uint64_t)scaled : 0;
        }
    }
    qsort(keys, count, sizeof *keys, offline_cmp_key);
    for (size_t k = 0; k < count; k++)
        rank[keys[k].index] = (uint32_t)k;
    g_free(keys);
}

static void offline_ranks(const offline_buf *bufs, const offline_problem *p, int how,
                          const uint64_t *guide, GRand *noise, uint32_t *rank)
{
    offline_rank_subset(bufs, p->sec_lo, p->sec_hi, p->sec_total, how, guide, noise, NULL, p->n,
                        rank);
}

/* One depth-first search from scratch with the given ranks and budget. */
static int offline_search_once(offline_search *s, const offline_problem *p, const offline_part *all,
                               uint32_t *rank, int rerank, int64_t budget)
{
    size_t n = p->n, ns = p->n_sections;
    memset(s->min_offset, 0, n * sizeof *s->min_offset);
    memset(s->placed, 0, n * sizeof *s->placed);
    memset(s->sec_floor, 0, ns * sizeof *s->sec_floor);
    memcpy(s->sec_total, p->sec_total, ns * sizeof *s->sec_total);
    memset(s->cuts, 0, ns * sizeof *s->cuts);
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = p->sec_lo[i]; q + 1 < p->sec_hi[i]; q++)
            s->cuts[q]++;
    s->nodes_left = budget;
    s->rank = rank;
    s->rerank = rerank;
    /* the initial pieces: boundaries no buffer crosses */
    s->cand_top = s->undo_top = s->cut_top = 0;
    size_t n_cuts = 0;
    offline_reserve((void **)&s->cutpts, &s->cut_cap, ns + 2, sizeof *s->cutpts);
    s->cutpts[n_cuts++] = 0;
    for (uint32_t q = 0; q + 1 < ns; q++)
        if (s->cuts[q] == 0)
            s->cutpts[n_cuts++] = q + 1;
    s->cutpts[n_cuts++] = (uint32_t)ns;
    s->cut_top = n_cuts;
    int status = offline_solve_pieces(s, all, 0, n_cuts);
    return status;
}

/* ---- the schedule: rounds over targets and ranks ---- */

static const double offline_ladder[] = {
    1.000, 1.005, 1.010, 1.015, 1.020, 1.025, 1.030, 1.035, 1.040, 1.045, 1.050, 1.055, 1.060,
    1.065, 1.070, 1.075, 1.080, 1.090, 1.100, 1.120, 1.150, 1.200, 1.250, 1.300, 1.400};
#define OFFLINE_LADDER G_N_ELEMENTS(offline_ladder)
/* a round's walk down the ladder ends after this many steps in a row
 * missed */
#define OFFLINE_NEAREST 3
/* After a round with a per-try budget of at least OFFLINE_RESTART_FROM
 * nodes per buffer that found no better plan, restarts get
 * OFFLINE_RESTART_SHARE times the nodes that round spent, in tries of
 * OFFLINE_RESTART_NODES nodes per buffer. */
#define OFFLINE_RESTART_FROM 16
#define OFFLINE_RESTART_SHARE 2
#define OFFLINE_RESTART_NODES 2

/* The highest ladder step above the lower bound and below `limit` (0:
 * none). */
static uint64_t offline_nearest_step(uint64_t lower_bound, uint64_t limit)
{
    uint64_t target = 0;
    for (size_t k = 1; k < OFFLINE_LADDER; k++) {
        uint64_t t = (uint64_t)((double)lower_bound * offline_ladder[k]);
        if (t < limit)
            target = t;
    }
    return target;
}

typedef struct offline_schedule {
    const offline_buf *bufs;
    const offline_problem *prob;
    size_t n;
    offline_search s;
    offline_part all;
    int hows[RANK__COUNT + 1], n_hows;
    uint32_t *ranks[RANK__COUNT + 1];
    uint64_t proven; /* targets at or below it are out of reach (0: none proved) */
    int64_t search_nodes, spent;
    uint64_t *height, *offsets; /* the best plan */
} offline_schedule;

static void offline_schedule_init(offline_schedule *c, const offline_buf *bufs,
                                  const offline_problem *p, uint64_t lower_bound,
                                  int64_t search_nodes, uint64_t *height, uint64_t *offsets,
                                  strata_progress *progress)
{
    size_t n = p->n, ns = p->n_sections;
    *c = (offline_schedule){.bufs = bufs, .prob = p, .n = n, .search_nodes = search_nodes,
                            .height = height, .offsets = offsets};
    /* MiniMalloc's three first, then the others, then the best plan's order */
    for (int how = 0; how < RANK__ROUNDS; how++)
        c->hows[c->n_hows++] = how;
    c->hows[c->n_hows++] = RANK_GUIDE;
    for (int h = 0; h < c->n_hows; h++) {
        c->ranks[h] = g_new(uint32_t, n);
        offline_ranks(bufs, p, c->hows[h], offsets, NULL, c->ranks[h]);
    }
    offline_search *s = &c->s;
    *s = (offline_search){.bufs = bufs, .n = n, .n_sections = ns, .guide = offsets,
                          .adj_start = p->adj_start, .adj = p->adj, .sec_lo = p->sec_lo,
                          .sec_hi = p->sec_hi, .sec_start = p->sec_start, .sec_bufs = p->sec_bufs,
                          .progress = progress, .best_height = *height,
                          .lower_bound = lower_bound};
    s->min_offset = g_new0(uint64_t, n);
    s->offset = g_new0(uint64_t, n);
    s->solution = g_new0(uint64_t, n);
    s->placed = g_new0(bool, n);
    s->sec_floor = g_new0(uint64_t, ns ? ns : 1);
    s->sec_total = g_new0(uint64_t, ns ? ns : 1);
    s->cuts = g_new0(uint32_t, ns ? ns : 1);
    s->witness = g_new(uint32_t, ns ? ns : 1);
    memset(s->witness, 0xff, (ns ? ns : 1) * sizeof *s->witness);
    c->all = (offline_part){.bufs = g_new(uint32_t, n), .n = n, .lo = 0, .hi = (uint32_t)ns};
    for (size_t i = 0; i < n; i++)
        c->all.bufs[i] = (uint32_t)i;
}

static void offline_schedule_clear(offline_schedule *c)
{
    offline_search *s = &c->s;
    g_free(c->all.bufs);
    g_free(s->min_offset);
    g_free(s->offset);
    g_free(s->solution);
    g_free(s->placed);
    g_free(s->sec_floor);
    g_free(s->sec_total);
    g_free(s->cuts);
    g_free(s->witness);
    g_free(s->cand);
    g_free(s->undo);
    g_free(s->cutpts);
    for (int h = 0; h < c->n_hows; h++)
        g_free(c->ranks[h]);
}

/* One search for `target` with ranks `rank` (pieces re-ranked by
 * heuristic `rerank`) and `budget` nodes; a plan found becomes
 * the best (and the guide's order). */
static int offline_schedule_try(offline_schedule *c, uint64_t target, uint32_t *rank, int rerank,
                                int64_t budget)
{
    offline_search *s = &c->s;
    s->target = target;
    int status = offline_search_once(s, c->prob, &c->all, rank, rerank, budget);
    c->spent += budget - (s->nodes_left > 0 ? s->nodes_left : 0);
    if (status == SEARCH_NOT_FOUND && target > c->proven)
        c->proven = target;
    if (status != SEARCH_FOUND)
        return status;
    uint64_t height = 0;
    for (size_t i = 0; i < c->n; i++)
        if (s->solution[i] + c->bufs[i].size > height)
            height = s->solution[i] + c->bufs[i].size;
    if (height < *c->height) {
        *c->height = height;
        s->best_height = height;
        memcpy(c->offsets, s->solution, c->n * sizeof *c->offsets);
        offline_ranks(c->bufs, c->prob, RANK_GUIDE, c->offsets, NULL, c->ranks[c->n_hows - 1]);
    }
    return status;
}

/* Tries `target` with each rank in turn (the first `n_hows` of them) until
 * one reaches it or proves it out of reach: the status of the last. */
static int offline_schedule_target(offline_schedule *c, uint64_t target, int n_hows,
                                   int64_t budget)
{
    int status = SEARCH_ABORTED;
    for (int h = 0; h < n_hows && status == SEARCH_ABORTED; h++) {
        int64_t b = MIN(budget, c->search_nodes - c->spent);
        if (target >= *c->height || target <= c->proven || b <= 0)
            break;
        status = offline_schedule_try(c, target, c->ranks[h], c->hows[h], b);
    }
    return status;
}

/* One round with `budget` nodes per search: the ladder steps below the
 * best plan from the nearest down, every rank on each, until
 * OFFLINE_NEAREST steps in a row were missed (a plan found starts the count
 * again below it), then the lower bound with MiniMalloc's ranks and the
 * guide. Returns whether any target was left to try. */
static bool offline_schedule_round(offline_schedule *c, uint64_t lower_bound, int64_t budget)
{
    uint64_t ceiling = *c->height;
    bool any = false;
    for (int missed = 0; missed < OFFLINE_NEAREST && c->spent < c->search_nodes;) {
        uint64_t target = offline_nearest_step(lower_bound, MIN(ceiling, *c->height));
        if (target <= c->proven || target <= lower_bound)
            break;
        any = true;
        int status = offline_schedule_target(c, target, c->n_hows, budget);
        if (status == SEARCH_NOT_FOUND)
            break;
        missed = status == SEARCH_FOUND ? 0 : missed + 1;
        ceiling = status == SEARCH_FOUND ? *c->height : target;
    }
    if (lower_bound < *c->height && lower_bound > c->proven) {
        any = true;
        if (offline_schedule_target(c, lower_bound, 3, budget) == SEARCH_ABORTED)
            offline_schedule_try(c, lower_bound, c->ranks[c->n_hows - 1], RANK_GUIDE,
                                 MIN(budget, c->search_nodes - c->spent));
    }
    return any;
}

/* Restarts for the nearest ladder step below the best plan, `nodes` in
 * all, OFFLINE_RESTART_NODES per buffer each: the even ones in a random
 * order, the odd ones by each rank in turn with its first key scaled by a
 * random factor (0.7 to 1.3); pieces keep these ranks. *r counts the
 * restarts made, so the sequence goes on across calls. */
static void offline_schedule_restarts(offline_schedule *c, uint64_t lower_bound, int64_t nodes,
                                      GRand *rng, int *r)
{
    uint32_t *noisy = g_new(uint32_t, c->n);
    int64_t stop = MIN(c->spent + nodes, c->search_nodes);
    int64_t each = (int64_t)c->n * OFFLINE_RESTART_NODES;
    while (c->spent < stop) {
        uint64_t target = offline_nearest_step(lower_bound, *c->height);
        if (target <= c->proven || target <= lower_bound)
            break;
        int how = *r % 2 == 0 ? RANK_GUIDE : (*r / 2) % RANK__COUNT;
        offline_ranks(c->bufs, c->prob, how, c->offsets, rng, noisy);
        (*r)++;
        offline_schedule_try(c, target, noisy, -1, MIN(each, stop - c->spent));
    }
    g_free(noisy);
}

/* Exact search, bounded by search_nodes in all: rounds with a budget per
 * try doubling from 2 nodes per buffer (see the top of the file). */
void offline_exact(const offline_buf *bufs, size_t n, uint64_t lower_bound,
                   int64_t search_nodes, uint64_t *height, uint64_t *offsets,
                   strata_progress *progress)
{
    offline_problem prob;
    if (search_nodes <= 0 || n <= 1 || n > OFFLINE_SEARCH_MAX_BUFFERS || *height <= lower_bound ||
        !offline_problem_build(bufs, n, 20000000, &prob))
        return;
    offline_schedule c;
    offline_schedule_init(&c, bufs, &prob, lower_bound, search_nodes, height, offsets, progress);
    GRand *rng = g_rand_new_with_seed(0x0ff11e); /* fixed: the same plan every run */
    int restarts = 0;
    for (int64_t budget = (int64_t)n * 2; c.spent < search_nodes && *height > lower_bound;
         budget *= 2) {
        uint64_t before = *height;
        int64_t spent = c.spent;
        if (!offline_schedule_round(&c, lower_bound, budget))
            break;
        if (*height == before && budget >= (int64_t)n * OFFLINE_RESTART_FROM)
            offline_schedule_restarts(&c, lower_bound,
                                      (c.spent - spent) * OFFLINE_RESTART_SHARE, rng, &restarts);
    }
    g_rand_free(rng);
    offline_schedule_clear(&c);
    offline_problem_clear(&prob);
}
