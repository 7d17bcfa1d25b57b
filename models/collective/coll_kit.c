/*
 * coll_kit.c: the building blocks of the algorithms' schedules (contract
 * in coll_kit.h).
 *
 * Ring and torus share one machinery: a group laid out as dims (dimensions
 * of size 1 dropped; a FLAT layout is one dimension of n) and, per
 * rank, the segment of the buffer it works on at each level: level 0 is
 * the whole buffer; level k+1 is the chunk of level k that the rank's
 * position along dimension k owns. A reduce-scatter along dimension k
 * leaves every rank with its level k+1 chunk reduced over the dimension;
 * an all-gather along k, from level k+1 chunks, rebuilds level k. Along a
 * dimension of size d the ring takes d-1 rounds; at round s the rank at
 * position p receives from position p-1 (p+1 when the direction is -1):
 * in a reduce-scatter the chunk of position (p-s-2) mod d, in an
 * all-gather the chunk of position (p-s-1) mod d, so that every position
 * finishes owning its own chunk. A rank's chunk is numbered by its
 * coordinate along the dimension, whatever the direction. With `parts` = 2
 * (bidir-ring all-gather and reduce-scatter) a ring moves only one half of
 * each chunk: the first half in direction +1, the second in direction -1.
 *
 * NCCL's ring kernel (coll_ring_loops): the buffer in loops of L =
 * channels x n x chunk bytes; in each loop the chunk shrinks to c =
 * min(chunk, ceil(rest / (channels x n))), and chunk p of the loop is the
 * channels' chunks p together, [grid + p c channels, grid + (p+1) c
 * channels) cut at the buffer's end (NCCL interleaves them by channel; the
 * channels run in lockstep, so the bytes per round are the same). The
 * loop's 2(n-1) steps are those of ring, each cut in `slices` slices, one
 * round per slice.
 *
 * Invariants: those of coll_kit.h.
 */
#include "collective/coll_kit.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"
#include "hw/coll_impl.h"

uint64_t coll_chunk_off(uint64_t len, uint32_t d, uint32_t i)
{
    assert(d > 0 && i <= d); /* invariant: chunk i of d lies in [0, L] */
    if (len <= UINT64_MAX / d) /* the same quotient without 128-bit division (a pod's rings call this n^2 times) */
        return len * i / d;
    return (uint64_t)((unsigned __int128)len * i / d);
}

void coll_add(strata_coll_sched *s, const strata_coll_step *st)
{
    if (st->bytes > 0)
        g_array_append_val(s->steps, *st);
}

/* The same move, bytes aside: ranks, lane, buffers and kind. */
static bool same_move_but_bytes(const strata_coll_step *a, const strata_coll_step *b)
{
    return a->src == b->src && a->dst == b->dst && a->lane == b->lane && a->src_buf == b->src_buf &&
           a->dst_buf == b->dst_buf && a->own_buf == b->own_buf && a->reduce == b->reduce &&
           a->handshake == b->handshake && a->polled == b->polled && a->fused == b->fused && !a->wire_bytes &&
           !b->wire_bytes && a->pieces <= 1 && b->pieces <= 1 && a->src_lane == b->src_lane && !a->src_lane;
}

bool coll_cut(const strata_coll_sched *s, uint32_t r) { return s->cut && r < s->n_cut && s->cut[r]; }

/* With s->fold: folds the round just appended, steps[at..], into the one
 * before it, steps[prev..at), when they are the same moves bytes aside
 * (same count, in order): the earlier steps then stand for one round more
 * and carry the bytes of both. Returns where the last round starts. */
static guint fold_round(strata_coll_sched *s, guint prev, guint at)
{
    guint width = s->steps->len - at;
    if (!s->fold || at == prev || at - prev != width || coll_cut(s, g_array_index(s->steps, strata_coll_step, at).round))
        return at;
    strata_coll_step *v = (strata_coll_step *)(void *)s->steps->data;
    for (guint j = 0; j < width; j++)
        if (!same_move_but_bytes(&v[prev + j], &v[at + j]))
            return at;
    for (guint j = 0; j < width; j++) {
        strata_coll_step *a = &v[prev + j];
        const strata_coll_step *b = &v[at + j];
        a->max_bytes = MAX(a->rounds > 1 ? a->max_bytes : a->bytes, b->bytes);
        a->bytes += b->bytes;
        a->rounds = (a->rounds ? a->rounds : 1) + 1;
    }
    g_array_set_size(s->steps, at);
    return prev;
}

/* Per-rank segment at each level 0..m, for a buffer segment [base, base+len). */
typedef struct levels {
    uint64_t *base; /* (m + 1) x n */
    uint64_t *len;
} levels;

static levels levels_new(const strata_coll_sched *s, uint64_t base, uint64_t len)
{
    levels l = {g_new(uint64_t, (size_t)(s->m + 1) * s->n), g_new(uint64_t, (size_t)(s->m + 1) * s->n)};
    for (uint32_t r = 0; r < s->n; r++) {
        l.base[r] = base;
        l.len[r] = len;
        for (uint32_t k = 0; k < s->m; k++) {
            size_t at = (size_t)k * s->n + r, next = at + s->n;
            uint32_t p = coll_coord(s, r, k);
            l.base[next] = l.base[at] + coll_chunk_off(l.len[at], s->dims[k], p);
            l.len[next] = coll_chunk_off(l.len[at], s->dims[k], p + 1) - coll_chunk_off(l.len[at], s->dims[k], p);
        }
    }
    return l;
}

static void levels_free(levels *l)
{
    g_free(l->base);
    g_free(l->len);
}

/* The bytes that the ring of direction dir moves of chunk i (of d) of a
 * segment [base, base + len): [off, off + bytes), at `in_part` from the
 * chunk's start. */
typedef struct piece {
    uint64_t off, bytes, in_part;
} piece;

static piece piece_in(const strata_coll_sched *s, uint64_t base, uint64_t len, uint32_t d, uint32_t i,
                      int dir)
{
    uint64_t lo = coll_chunk_off(len, d, i), clen = coll_chunk_off(len, d, i + 1) - lo;
    uint32_t part = dir > 0 ? 0 : s->parts - 1;
    uint64_t plo = coll_chunk_off(clen, s->parts, part);
    return (piece){base + lo + plo, coll_chunk_off(clen, s->parts, part + 1) - plo, plo};
}

/* The chunk that rank q receives at `step` of its ring along k (steps
 * past d - 2 continue the ring: the chunks repeat every d steps; step <=
 * 2d - 2). */
static uint32_t chunk_at(const strata_coll_sched *s, uint32_t q, uint32_t k, int dir, uint32_t step,
                         bool reduce)
{
    uint32_t d = s->dims[k];
    uint32_t p = (coll_position(s, q, k, dir) + 2 * d - step - (reduce ? 2 : 1)) % d;
    return dir > 0 ? p : (d - p) % d;
}

/* One ring along dimension k in direction dir: its lane and first round,
 * what it does (reduce) and the buffers at its edges (see ring()). */
typedef struct ring_at {
    const levels *l;
    uint32_t k, lane, round0;
    int dir;
    bool reduce, edge;
    strata_coll_buf buf;
} ring_at;

static bool ring_from_in(const ring_at *r, uint32_t step) { return !r->reduce && r->edge && step == 0; }
static bool ring_last(const strata_coll_sched *s, const ring_at *r, uint32_t step)
{
    return r->reduce && r->edge && step + 2 == s->dims[r->k];
}

/* Rank q's step at `step` of the ring, and with *local (when the step
 * reads IN) the copy of its own chunk from IN into OUT. */
static strata_coll_step ring_step(const strata_coll_sched *s, const ring_at *r, uint32_t q, uint32_t step,
                                  strata_coll_step *local)
{
    uint32_t d = s->dims[r->k];
    size_t at = (size_t)r->k * s->n + q;
    piece c = piece_in(s, r->l->base[at], r->l->len[at], d, chunk_at(s, q, r->k, r->dir, step, r->reduce), r->dir);
    bool last = ring_last(s, r, step), from_in = ring_from_in(r, step);
    if (from_in) {
        piece own = piece_in(s, r->l->base[at], r->l->len[at], d, coll_coord(s, q, r->k), r->dir);
        *local = (strata_coll_step){.round = r->round0, .lane = r->lane + 1, .src = q, .dst = q,
                                    .src_buf = STRATA_COLL_IN, .src_off = own.in_part,
                                    .dst_buf = STRATA_COLL_OUT, .dst_off = own.off, .bytes = own.bytes};
    }
    return (strata_coll_step){.round = r->round0 + step, .lane = r->lane, .src = coll_previous(s, q, r->k, r->dir),
                              .dst = q, .src_buf = from_in ? STRATA_COLL_IN : r->buf,
                              .src_off = from_in ? c.in_part : c.off, .dst_buf = last ? STRATA_COLL_OUT : r->buf,
                              .dst_off = last ? c.in_part : c.off, .own_buf = r->buf, .own_off = c.off,
                              .reduce = r->reduce, .bytes = c.bytes};
}

/* The sizes of the d pieces a ring moves of a segment of len bytes: their
 * sum, the largest and how many are, and the smallest. */
typedef struct piece_sizes {
    uint64_t len, sum, max, min;
    uint32_t n_max;
} piece_sizes;

/* The index in `known` of the sizes for len (added when new). */
static guint sizes_of(const strata_coll_sched *s, GArray *known, uint64_t len, uint32_t d, int dir)
{
    for (guint i = 0; i < known->len; i++)
        if (g_array_index(known, piece_sizes, i).len == len)
            return i;
    piece_sizes z = {.len = len, .min = UINT64_MAX};
    for (uint32_t i = 0; i < d; i++) {
        uint64_t b = piece_in(s, 0, len, d, i, dir).bytes;
        z.sum += b;
        z.n_max = b > z.max ? 1 : z.n_max + (b == z.max);
        z.max = MAX(z.max, b);
        z.min = MIN(z.min, b);
    }
    g_array_append_val(known, z);
    return known->len - 1;
}

/* The bytes rank q's ring moves over steps [a, b], their sum and largest.
 * The run's chunks are d - (b - a + 1) short of all d: where the run is
 * the longer part, the sum is the segment's less the chunks it skips
 * (steps b + 1 .. a + d - 1), and the largest is the segment's while a
 * chunk of that size is left in the run. */
static void run_bytes(const strata_coll_sched *s, const ring_at *r, const piece_sizes *z, uint32_t q, uint32_t a,
                      uint32_t b, uint64_t *sum, uint64_t *max)
{
    uint32_t d = s->dims[r->k];
    size_t at = (size_t)r->k * s->n + q;
    if (b - a + 1 > a + d - 1 - b) {
        uint64_t skipped = 0;
        uint32_t max_skipped = 0;
        for (uint32_t step = b + 1; step <= a + d - 1; step++) {
            uint64_t x = piece_in(s, 0, r->l->len[at], d, chunk_at(s, q, r->k, r->dir, step, r->reduce), r->dir).bytes;
            skipped += x;
            max_skipped += x == z->max;
        }
        *sum = z->sum - skipped;
        if (max_skipped < z->n_max) {
            *max = z->max;
            return;
        }
    }
    *sum = 0;
    *max = 0;
    for (uint32_t step = a; step <= b; step++) {
        uint64_t x = piece_in(s, 0, r->l->len[at], d, chunk_at(s, q, r->k, r->dir, step, r->reduce), r->dir).bytes;
        *sum += x;
        *max = MAX(*max, x);
    }
}

/* With s->fold, the ring's folded runs written at once: where no piece of
 * the ring is empty, every round has one step per rank (and round 0 of an
 * all-gather's first dimension its local copies too), and fold_round
 * would join every round to the one before it but round 1 after those
 * local copies (their round is wider) and a reduce-scatter's last round
 * into OUT (another buffer). So each run of rounds between those edges is
 * one step per rank, its bytes summed by run_bytes: O(n) steps and time
 * for a ring of n ranks, where generating its rounds to fold them is
 * O(n^2). Returns false, writing nothing, where some piece is empty. */
static bool ring_folded(strata_coll_sched *s, const ring_at *r)
{
    uint32_t d = s->dims[r->k];
    GArray *known = g_array_new(FALSE, FALSE, sizeof(piece_sizes));
    guint *z = g_new(guint, s->n);
    bool empty = false;
    for (uint32_t q = 0; q < s->n && !empty; q++) {
        z[q] = sizes_of(s, known, r->l->len[(size_t)r->k * s->n + q], d, r->dir);
        empty = g_array_index(known, piece_sizes, z[q]).min == 0;
    }
    for (uint32_t a = 0, b; !empty && a + 1 < d; a = b + 1) {
        for (b = a; !ring_from_in(r, a) && b + 2 < d && !ring_last(s, r, b + 1) && !coll_cut(s, r->round0 + b + 1);)
            b++;
        for (uint32_t q = 0; q < s->n; q++) {
            strata_coll_step local = {0};
            strata_coll_step st = ring_step(s, r, q, a, &local);
            if (b > a) {
                st.rounds = b - a + 1;
                run_bytes(s, r, &g_array_index(known, piece_sizes, z[q]), q, a, b, &st.bytes, &st.max_bytes);
            }
            coll_add(s, &st);
            if (ring_from_in(r, a))
                coll_add(s, &local);
        }
    }
    g_free(z);
    g_array_free(known, TRUE);
    return !empty;
}

/* One ring along dimension k: a reduce-scatter (reduce) from level k to
 * k+1, or an all-gather from level k+1 to k. `edge`: for a reduce-scatter,
 * the last round writes OUT (reduce-scatter's last dimension); for an
 * all-gather, the sources of round 0 are IN (all-gather's first
 * dimension), which each rank also copies into its own chunk of OUT.
 * Buffers otherwise: IN (reduce-scatter, all-reduce), OUT (all-gather). */
static void ring(strata_coll_sched *s, const levels *l, uint32_t k, int dir, uint32_t lane, uint32_t round0,
                 bool reduce, bool edge)
{
    ring_at r = {.l = l, .k = k, .lane = lane, .round0 = round0, .dir = dir, .reduce = reduce, .edge = edge,
                 .buf = reduce || s->kind == STRATA_OP_ALL_REDUCE ? STRATA_COLL_IN : STRATA_COLL_OUT};
    if (s->fold && ring_folded(s, &r))
        return;
    guint prev = s->steps->len;
    for (uint32_t step = 0; step + 1 < s->dims[k]; step++) {
        guint at = s->steps->len;
        for (uint32_t q = 0; q < s->n; q++) {
            strata_coll_step local = {0};
            strata_coll_step st = ring_step(s, &r, q, step, &local);
            coll_add(s, &st);
            if (ring_from_in(&r, step))
                coll_add(s, &local);
        }
        prev = fold_round(s, prev, at);
    }
}

uint32_t coll_torus(strata_coll_sched *s, uint64_t base, uint64_t len, int dir, uint32_t lane, uint32_t round0,
                    bool rs, bool ag)
{
    levels l = levels_new(s, base, len);
    uint32_t round = round0;
    for (uint32_t k = 0; rs && k < s->m; k++) {
        ring(s, &l, k, dir, lane, round, true, s->kind == STRATA_OP_REDUCE_SCATTER && k + 1 == s->m);
        round += s->dims[k] - 1;
    }
    for (uint32_t k = s->m; ag && k-- > 0;) {
        ring(s, &l, k, dir, lane, round, false, s->kind == STRATA_OP_ALL_GATHER && k + 1 == s->m);
        round += s->dims[k] - 1;
    }
    levels_free(&l);
    return round - round0;
}

uint32_t coll_rings(strata_coll_sched *s, uint64_t in_bytes, bool bidir)
{
    if (bidir && s->kind == STRATA_OP_ALL_REDUCE) { /* half the buffer each way */
        uint32_t rounds = coll_torus(s, 0, in_bytes / 2, 1, 0, 0, true, true);
        coll_torus(s, in_bytes / 2, in_bytes - in_bytes / 2, -1, 1, 0, true, true);
        return rounds;
    }
    s->parts = bidir ? 2 : 1;
    bool ag = s->kind == STRATA_OP_ALL_GATHER, rs = s->kind == STRATA_OP_REDUCE_SCATTER;
    uint64_t len = ag ? in_bytes * s->n : in_bytes;
    uint32_t rounds = coll_torus(s, 0, len, 1, 0, 0, !ag, !rs);
    if (bidir) /* lane 2: an all-gather's local copy takes lane 1 */
        coll_torus(s, 0, len, -1, 2, 0, !ag, !rs);
    return rounds;
}

/* NCCL's ring all-reduce on [0, bytes): loops of channels x n chunks, each
 * a ring of 2(n-1) steps, each step a round per slice, every copy
 * carrying num/den of its bytes and, with handshake, a flag after it;
 * returns the rounds. A loop's chunk per channel and rank is its even
 * share, or (grain > 0) NCCL v2.19's runRing realChunkSize, min(chunk,
 * divUp(rest, channels x n x grain) x grain): rank p's chunk of the loop
 * starts at p x channels x that, so the last ranks' hold less or none,
 * and a step moves the chunks' bytes as they are. */
uint32_t coll_ring_loops(strata_coll_sched *s, uint64_t b, uint64_t channels, uint64_t chunk, uint64_t grain,
                         uint32_t slices, uint64_t num, uint64_t den, bool handshake)
{
    uint32_t n = s->n, round = 0;
    uint64_t g = grain ? grain : 1;
    for (uint64_t grid = 0; grid < b; grid += channels * n * chunk) {
        uint64_t c = MIN(chunk, (b - grid + channels * n * g - 1) / (channels * n * g) * g) * channels;
        for (uint32_t step = 0; step < 2 * (n - 1); step++) {
            bool reduce = step + 1 < n;
            for (uint32_t k = 0; k < slices; k++, round++)
                for (uint32_t q = 0; q < n; q++) {
                    uint32_t p = (q + 2 * n - (reduce ? step + 2 : step - (n - 1) + 1)) % n;
                    uint64_t lo = MIN(grid + p * c, b), len = MIN(lo + c, b) - lo;
                    uint64_t off = lo + coll_chunk_off(len, slices, k);
                    uint64_t bytes = lo + coll_chunk_off(len, slices, k + 1) - off;
                    uint64_t wire = (uint64_t)(((unsigned __int128)bytes * num + den - 1) / den);
                    strata_coll_step st = {.round = round, .src = (q + n - 1) % n, .dst = q, .src_off = off,
                                           .dst_off = off, .own_off = off, .reduce = reduce, .handshake = handshake,
                                           .fused = reduce, .bytes = bytes, .wire_bytes = wire};
                    coll_add(s, &st);
                }
        }
    }
    return round;
}

/* Binomial tree: reduce into rank 0 (round j: ranks r with r mod 2^(j+1) =
 * 2^j send to r - 2^j), then broadcast back down the same edges. */
uint32_t coll_tree(strata_coll_sched *s, uint64_t bytes)
{
    uint32_t levels = 0;
    while ((1ull << levels) < s->n)
        levels++;
    for (uint32_t j = 0; j < levels; j++) {
        uint32_t half = 1u << j;
        for (uint32_t r = half; r < s->n; r += 2 * half) {
            strata_coll_step up = {.round = j, .src = r, .dst = r - half, .bytes = bytes, .reduce = true};
            coll_add(s, &up);
        }
    }
    for (uint32_t j = levels; j-- > 0;) {
        uint32_t half = 1u << j;
        for (uint32_t r = half; r < s->n; r += 2 * half) {
            strata_coll_step down = {.round = 2 * levels - 1 - j, .src = r - half, .dst = r, .bytes = bytes};
            coll_add(s, &down);
        }
    }
    return 2 * levels;
}


bool coll_library_is(const strata_coll_shape *shape, const strata_hw *hw, const char *library, GError **err)
{
    const strata_coll_impl *impl = strata_hw_coll_impl(hw);
    if (!impl->tune || strcmp(impl->name, library) == 0) /* no tuning model: coll_library_tune says so */
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "algo=%s: expected a hardware model whose [interconnect] "
                "declares collectives = %s (the op pins that library's choice), got collectives = %s on %s; give "
                "no algo= for the hardware's own library", shape->algo->name, library, impl->name,
                strata_hw_name(hw));
    return false;
}

bool coll_library_tune(strata_coll_shape *shape, const strata_hw *hw, uint32_t algos, GError **err)
{
    const strata_coll_impl *impl = strata_hw_coll_impl(hw);
    if (!impl->tune) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "algo=%s: expected a hardware model whose [interconnect] declares a library with its own "
                    "tuning model (collectives = nccl or rccl: its GPUs' architecture and graph), got %s",
                    shape->algo->name, strata_hw_name(hw));
        return false;
    }
    strata_coll_tuning t;
    if (!impl->tune(hw, shape->kind, strata_coll_ranks(shape), shape->domain_ranks, shape->in_bytes, algos, &t, err))
        return false;
    shape->tuned = true;
    shape->tune = t;
    shape->channels = t.channels;
    shape->chunk_bytes = t.chunk_bytes;
    return true;
}
