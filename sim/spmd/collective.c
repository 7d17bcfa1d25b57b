/*
 * collective.c: the step schedules of the collective algorithms (contract
 * in collective.h).
 *
 * Ring and torus share one machinery: a group laid out as dims (dimensions
 * of size 1 dropped; ring flattens the group to one dimension) and, per
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
 * nccl-ring runs NCCL's ring kernel: the buffer in loops of L = channels x
 * n x chunk bytes; in each loop the chunk shrinks to c = min(chunk,
 * ceil(rest / (channels x n))), and chunk p of the loop is the channels'
 * chunks p together, [grid + p c channels, grid + (p+1) c channels) cut at
 * the buffer's end (NCCL interleaves them by channel; the channels run in
 * lockstep, so the bytes per round are the same). The loop's 2(n-1) steps
 * are those of ring, each cut in `slices` slices, one round per slice;
 * a slice's copy carries 5/4 of its bytes (at most the buffer's size).
 *
 * Invariants: strata_coll_schedule() leaves a collective's steps in round
 * order (each algorithm appends them in its own order; a stable sort by
 * round follows), every round below the count it returns; no step has 0
 * bytes; chunk i of a segment of L bytes over d is [L*i/d, L*(i+1)/d).
 */
#include "spmd/collective.h"
#include <assert.h>
#include <string.h>

typedef struct sched {
    GArray *steps;
    uint32_t n;                            /* ranks */
    uint32_t m;                            /* dims, all > 1 */
    uint32_t dims[STRATA_COLL_MAX_DIMS];
    uint32_t stride[STRATA_COLL_MAX_DIMS];
    strata_op_kind kind;
    uint32_t parts;                        /* 1, or 2: a ring per half chunk */
    bool fold;                             /* shape->fold, for a ring-family algorithm */
} sched;

static uint64_t chunk_off(uint64_t len, uint32_t d, uint32_t i)
{
    assert(d > 0 && i <= d); /* invariant: chunk i of d lies in [0, L] */
    if (len <= UINT64_MAX / d) /* the same quotient without 128-bit division (a pod's rings call this n^2 times) */
        return len * i / d;
    return (uint64_t)((unsigned __int128)len * i / d);
}

static uint32_t coord(const sched *s, uint32_t rank, uint32_t k) { return rank / s->stride[k] % s->dims[k]; }

/* The rank's position along dimension k in the ring of direction dir. */
static uint32_t position(const sched *s, uint32_t rank, uint32_t k, int dir)
{
    uint32_t c = coord(s, rank, k);
    return dir > 0 ? c : (s->dims[k] - c) % s->dims[k];
}

/* The rank at position p - 1 of rank's ring along k. */
static uint32_t previous(const sched *s, uint32_t rank, uint32_t k, int dir)
{
    uint32_t d = s->dims[k], c = coord(s, rank, k);
    uint32_t nc = dir > 0 ? (c + d - 1) % d : (c + 1) % d;
    return rank - c * s->stride[k] + nc * s->stride[k];
}

static void add(sched *s, const strata_coll_step *st)
{
    if (st->bytes > 0)
        g_array_append_val(s->steps, *st);
}

/* The same move, bytes aside: ranks, lane, buffers and kind. */
static bool same_move_but_bytes(const strata_coll_step *a, const strata_coll_step *b)
{
    return a->src == b->src && a->dst == b->dst && a->lane == b->lane && a->src_buf == b->src_buf &&
           a->dst_buf == b->dst_buf && a->own_buf == b->own_buf && a->reduce == b->reduce &&
           a->handshake == b->handshake && a->fused == b->fused && !a->wire_bytes && !b->wire_bytes;
}

/* With s->fold: folds the round just appended, steps[at..], into the one
 * before it, steps[prev..at), when they are the same moves bytes aside
 * (same count, in order): the earlier steps then stand for one round more
 * and carry the bytes of both. Returns where the last round starts. */
static guint fold_round(sched *s, guint prev, guint at)
{
    guint width = s->steps->len - at;
    if (!s->fold || at == prev || at - prev != width)
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

static levels levels_new(const sched *s, uint64_t base, uint64_t len)
{
    levels l = {g_new(uint64_t, (size_t)(s->m + 1) * s->n), g_new(uint64_t, (size_t)(s->m + 1) * s->n)};
    for (uint32_t r = 0; r < s->n; r++) {
        l.base[r] = base;
        l.len[r] = len;
        for (uint32_t k = 0; k < s->m; k++) {
            size_t at = (size_t)k * s->n + r, next = at + s->n;
            uint32_t p = coord(s, r, k);
            l.base[next] = l.base[at] + chunk_off(l.len[at], s->dims[k], p);
            l.len[next] = chunk_off(l.len[at], s->dims[k], p + 1) - chunk_off(l.len[at], s->dims[k], p);
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

static piece piece_in(const sched *s, uint64_t base, uint64_t len, uint32_t d, uint32_t i, int dir)
{
    uint64_t lo = chunk_off(len, d, i), clen = chunk_off(len, d, i + 1) - lo;
    uint32_t part = dir > 0 ? 0 : s->parts - 1;
    uint64_t plo = chunk_off(clen, s->parts, part);
    return (piece){base + lo + plo, chunk_off(clen, s->parts, part + 1) - plo, plo};
}

/* The chunk that rank q receives at `step` of its ring along k (steps
 * past d - 2 continue the ring: the chunks repeat every d steps; step <=
 * 2d - 2). */
static uint32_t chunk_at(const sched *s, uint32_t q, uint32_t k, int dir, uint32_t step, bool reduce)
{
    uint32_t d = s->dims[k];
    uint32_t p = (position(s, q, k, dir) + 2 * d - step - (reduce ? 2 : 1)) % d;
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
static bool ring_last(const sched *s, const ring_at *r, uint32_t step)
{
    return r->reduce && r->edge && step + 2 == s->dims[r->k];
}

/* Rank q's step at `step` of the ring, and with *local (when the step
 * reads IN) the copy of its own chunk from IN into OUT. */
static strata_coll_step ring_step(const sched *s, const ring_at *r, uint32_t q, uint32_t step, strata_coll_step *local)
{
    uint32_t d = s->dims[r->k];
    size_t at = (size_t)r->k * s->n + q;
    piece c = piece_in(s, r->l->base[at], r->l->len[at], d, chunk_at(s, q, r->k, r->dir, step, r->reduce), r->dir);
    bool last = ring_last(s, r, step), from_in = ring_from_in(r, step);
    if (from_in) {
        piece own = piece_in(s, r->l->base[at], r->l->len[at], d, coord(s, q, r->k), r->dir);
        *local = (strata_coll_step){.round = r->round0, .lane = r->lane + 1, .src = q, .dst = q,
                                    .src_buf = STRATA_COLL_IN, .src_off = own.in_part,
                                    .dst_buf = STRATA_COLL_OUT, .dst_off = own.off, .bytes = own.bytes};
    }
    return (strata_coll_step){.round = r->round0 + step, .lane = r->lane, .src = previous(s, q, r->k, r->dir),
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
static guint sizes_of(const sched *s, GArray *known, uint64_t len, uint32_t d, int dir)
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
static void run_bytes(const sched *s, const ring_at *r, const piece_sizes *z, uint32_t q, uint32_t a, uint32_t b,
                      uint64_t *sum, uint64_t *max)
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
static bool ring_folded(sched *s, const ring_at *r)
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
        for (b = a; !ring_from_in(r, a) && b + 2 < d && !ring_last(s, r, b + 1);)
            b++;
        for (uint32_t q = 0; q < s->n; q++) {
            strata_coll_step local = {0};
            strata_coll_step st = ring_step(s, r, q, a, &local);
            if (b > a) {
                st.rounds = b - a + 1;
                run_bytes(s, r, &g_array_index(known, piece_sizes, z[q]), q, a, b, &st.bytes, &st.max_bytes);
            }
            add(s, &st);
            if (ring_from_in(r, a))
                add(s, &local);
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
static void ring(sched *s, const levels *l, uint32_t k, int dir, uint32_t lane, uint32_t round0, bool reduce,
                 bool edge)
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
            add(s, &st);
            if (ring_from_in(&r, step))
                add(s, &local);
        }
        prev = fold_round(s, prev, at);
    }
}

/* Reduce-scatter over dims 0..m-1 then all-gather back, on [base,
 * base+len) in direction dir on `lane`, from round0; returns the rounds. */
static uint32_t torus(sched *s, uint64_t base, uint64_t len, int dir, uint32_t lane, uint32_t round0, bool rs,
                      bool ag)
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

/* NCCL's ring all-reduce on [0, bytes): loops of channels x n chunks, each
 * a ring of 2(n-1) steps, each step a round per slice, every copy
 * carrying num/den of its bytes and, with handshake, a flag after it;
 * returns the rounds. */
static uint32_t ring_loops(sched *s, uint64_t b, uint64_t channels, uint64_t chunk, uint32_t slices, uint64_t num,
                           uint64_t den, bool handshake)
{
    uint32_t n = s->n, round = 0;
    for (uint64_t grid = 0; grid < b; grid += channels * n * chunk) {
        uint64_t c = MIN(chunk, (b - grid + channels * n - 1) / (channels * n)) * channels;
        for (uint32_t step = 0; step < 2 * (n - 1); step++) {
            bool reduce = step + 1 < n;
            for (uint32_t k = 0; k < slices; k++, round++)
                for (uint32_t q = 0; q < n; q++) {
                    uint32_t p = (q + 2 * n - (reduce ? step + 2 : step - (n - 1) + 1)) % n;
                    uint64_t lo = MIN(grid + p * c, b), len = MIN(lo + c, b) - lo;
                    uint64_t off = lo + chunk_off(len, slices, k);
                    uint64_t bytes = lo + chunk_off(len, slices, k + 1) - off;
                    uint64_t wire = (uint64_t)(((unsigned __int128)bytes * num + den - 1) / den);
                    strata_coll_step st = {.round = round, .src = (q + n - 1) % n, .dst = q, .src_off = off,
                                           .dst_off = off, .own_off = off, .reduce = reduce, .handshake = handshake,
                                           .fused = reduce, .bytes = bytes, .wire_bytes = wire};
                    add(s, &st);
                }
        }
    }
    return round;
}

/* nccl-ring: ring_loops on the Simple protocol (a slice's copy carries
 * 5/4 of its bytes, at most the buffer's size). */
static uint32_t nccl_ring(sched *s, const strata_coll_shape *shape)
{
    uint64_t b = shape->in_bytes;
    guint from = s->steps->len;
    uint32_t rounds = ring_loops(s, b, shape->channels ? shape->channels : STRATA_COLL_NCCL_CHANNELS,
                                 shape->chunk_bytes ? shape->chunk_bytes : STRATA_COLL_NCCL_CHUNK,
                                 shape->slices ? shape->slices : STRATA_COLL_NCCL_SLICES, STRATA_COLL_WIRE_NUM,
                                 STRATA_COLL_WIRE_DEN, true);
    for (guint i = from; i < s->steps->len; i++) {
        strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        st->wire_bytes = MIN(st->wire_bytes, b);
    }
    return rounds;
}

/* Binomial tree: reduce into rank 0 (round j: ranks r with r mod 2^(j+1) =
 * 2^j send to r - 2^j), then broadcast back down the same edges. */
static uint32_t tree(sched *s, uint64_t bytes)
{
    uint32_t levels = 0;
    while ((1ull << levels) < s->n)
        levels++;
    for (uint32_t j = 0; j < levels; j++) {
        uint32_t half = 1u << j;
        for (uint32_t r = half; r < s->n; r += 2 * half) {
            strata_coll_step up = {.round = j, .src = r, .dst = r - half, .bytes = bytes, .reduce = true};
            add(s, &up);
        }
    }
    for (uint32_t j = levels; j-- > 0;) {
        uint32_t half = 1u << j;
        for (uint32_t r = half; r < s->n; r += 2 * half) {
            strata_coll_step down = {.round = 2 * levels - 1 - j, .src = r - half, .dst = r, .bytes = bytes};
            add(s, &down);
        }
    }
    return 2 * levels;
}

/* Every pair at once: lane (q - r) mod n carries rank r's data to rank q. */
static uint32_t direct(sched *s, uint64_t in_bytes, int32_t shift)
{
    uint32_t n = s->n;
    switch (s->kind) {
    case STRATA_OP_ALL_REDUCE:
        for (uint32_t phase = 0; phase < 2; phase++)
            for (uint32_t q = 0; q < n; q++)
                for (uint32_t r = 0; r < n; r++) {
                    uint32_t owner = phase == 0 ? q : r; /* the chunk reduced at its owner, then sent out */
                    uint64_t off = chunk_off(in_bytes, n, owner);
                    strata_coll_step st = {.round = phase, .lane = (q + n - r) % n, .src = r, .dst = q,
                                           .src_off = off, .dst_off = off, .own_off = off, .reduce = phase == 0,
                                           .bytes = chunk_off(in_bytes, n, owner + 1) - off};
                    if (r != q)
                        add(s, &st);
                }
        return 2;
    case STRATA_OP_COLLECTIVE_PERMUTE:
        for (uint32_t r = 0; r < n; r++) {
            int64_t to = ((int64_t)r + shift) % (int64_t)n;
            strata_coll_step st = {.src = r, .dst = (uint32_t)(to < 0 ? to + n : to), .src_buf = STRATA_COLL_IN,
                                   .dst_buf = STRATA_COLL_OUT, .bytes = in_bytes};
            add(s, &st);
        }
        return 1;
    default: {
        /* all-gather: IN of r to chunk r of OUT; all-to-all: chunk q of r's
         * IN to chunk r of q's OUT; reduce-scatter: chunk q of IN to q,
         * summed into OUT after q's own chunk is copied there (round 0). */
        bool rs = s->kind == STRATA_OP_REDUCE_SCATTER;
        uint64_t c = s->kind == STRATA_OP_ALL_GATHER ? in_bytes : in_bytes / n;
        for (uint32_t q = 0; q < n; q++)
            for (uint32_t r = 0; r < n; r++) {
                bool ag = s->kind == STRATA_OP_ALL_GATHER;
                strata_coll_step st = {.round = rs && r != q ? 1 : 0, .lane = (q + n - r) % n, .src = r, .dst = q,
                                       .src_buf = STRATA_COLL_IN, .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT,
                                       .src_off = ag ? 0 : (uint64_t)q * c, .dst_off = rs ? 0 : (uint64_t)r * c,
                                       .bytes = c, .reduce = rs && r != q};
                add(s, &st);
            }
        return rs ? 2 : 1;
    }
    }
}

/* ---- nccl: NCCL's algorithms and protocols ------------------------------ */

/* NCCL's protocols (NVIDIA/nccl @5067397). LL: a 16-byte line (union
 * ncclLLFifoLine) carries two 4-byte data words, each with its 4-byte flag,
 * so the wire carries 2x the data; the LL buffer, NCCL_LL_LINES_PER_THREAD
 * (8) x NCCL_LL_MAX_NTHREADS (512) x NCCL_STEPS (8) lines of 16 bytes
 * (init.cc DEFAULT_LL_BUFFSIZE), is 64 KiB a step, 32 KiB of data. LL128: a
 * 128-byte line carries 120 bytes of data and an 8-byte flag
 * (NCCL_LL128_LINEELEMS 16, NCCL_LL128_DATAELEMS 15, device.h); its buffer,
 * NCCL_LL128_ELEMS_PER_THREAD (120) x NCCL_LL128_MAX_NTHREADS (640) x
 * NCCL_STEPS x 8 bytes, is 614,400 bytes a step, 576,000 of data. Both
 * carry their flag inside the data, so a step needs no separate flag
 * store. Simple: nccl-ring's chunks, slices and flag stores. All three are
 * SM stores, so NVLink's packet overhead (5/4) applies on top. */
static const uint64_t proto_num[STRATA_NCCL__PROTOS] = {2 * STRATA_COLL_WIRE_NUM, 128 * STRATA_COLL_WIRE_NUM,
                                                        STRATA_COLL_WIRE_NUM};
static const uint64_t proto_den[STRATA_NCCL__PROTOS] = {STRATA_COLL_WIRE_DEN, 120 * STRATA_COLL_WIRE_DEN,
                                                        STRATA_COLL_WIRE_DEN};
static const uint64_t proto_chunk[STRATA_NCCL__PROTOS] = {32768, 576000, STRATA_COLL_NCCL_CHUNK};
static const uint32_t proto_slices[STRATA_NCCL__PROTOS] = {1, 1, STRATA_COLL_NCCL_SLICES};
/* NVLS: NCCL_NVLS_CHUNKSIZE, 128 KiB per channel (transport/nvls.cc). */
#define NVLS_CHUNK (128ull << 10)

static uint64_t ceil_frac(uint64_t x, uint64_t num, uint64_t den)
{
    return (uint64_t)(((unsigned __int128)x * num + den - 1) / den);
}

/* The size of a rank's buffer (IN holds in_bytes; OUT is the op's). */
static uint64_t buffer_size(const sched *s, uint64_t in_bytes, strata_coll_buf buf)
{
    if (buf == STRATA_COLL_IN || s->kind == STRATA_OP_ALL_REDUCE)
        return in_bytes;
    return s->kind == STRATA_OP_ALL_GATHER ? in_bytes * s->n : in_bytes / s->n;
}

/* A copy's wire bytes, at most its source buffer's size (a copy names
 * its source and its byte count, which the checker bounds). */
static uint64_t wire_of(const sched *s, uint64_t in_bytes, strata_coll_buf src_buf, uint64_t wire)
{
    return MAX(1, MIN(wire, buffer_size(s, in_bytes, src_buf)));
}

/* Steps[from..]: the protocol's wire format and, on Simple, a flag each;
 * every reduction fused with its copy, as NCCL's kernels reduce what they
 * receive as it arrives (prims' recvReduceSend, recvReduceCopy:
 * src/device/reduce_scatter.h, all_reduce.h runTreeUpDown). */
static void apply_protocol(sched *s, guint from, uint64_t in_bytes, strata_nccl_proto p)
{
    for (guint i = from; i < s->steps->len; i++) {
        strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        if (st->src == st->dst)
            continue; /* a local copy crosses no link */
        st->wire_bytes = wire_of(s, in_bytes, st->src_buf, ceil_frac(st->bytes, proto_num[p], proto_den[p]));
        st->handshake = p == STRATA_NCCL_SIMPLE;
        st->fused = st->reduce;
    }
}

/* NVLink's packet overhead (5/4) over the fraction of its data rate NVLS
 * reaches (shape->nvls_efficiency, per mille; 0: all of it). */
static uint64_t nvls_wire(uint64_t bytes, uint64_t eff_permille)
{
    uint64_t w = ceil_frac(bytes, STRATA_COLL_WIRE_NUM, STRATA_COLL_WIRE_DEN);
    return eff_permille ? ceil_frac(w, 1000, eff_permille) : w;
}

/* NVLS: the ranks' copies that put on every link, in each direction, the
 * bytes NVLink SHARP puts there. multimem.ld_reduce reads a shard from
 * every rank through the switch, which reduces it and returns one copy to
 * the rank that owns it; multimem.st sends a shard once to the switch,
 * which writes it to every rank. All-reduce pipelines the two on pieces of
 * channels x n x NVLS_CHUNK bytes (round k reduces piece k and multicasts
 * piece k-1), so a piece of P bytes loads each link with P (the rank's
 * part of every shard, reduced) + P/n (its reduced shard, multicast) one
 * way and P/n + P the other: (n+1) P / n per direction, which the 2(n-1)
 * copies per link and piece (owner q reduces shard q from each r, then
 * copies it to each r) carry at (n+1) P / (2 n (n-1)) bytes each (fewer
 * than the shard: the switch does the rest). A reduce-scatter is the
 * ld_reduce alone (a rank's whole IN goes up: B per link, each of its
 * n-1 copies B/(n-1)); an all-gather the multicast alone (n shards come
 * down). Copies to one owner run on separate lanes (fused reductions on
 * the lane after each); NVLink's packet overhead applies on top, and
 * NCCL's NVLS efficiency (tuning.cc nvlsEfficiency, 0.85 on Hopper: the
 * share of NVLink's data rate its multimem loads and stores reach, NCCL's
 * own figure for its bandwidth) scales every copy's wire bytes by 1/eff.
 * The chunk per channel and head is calcCollChunking's (shape->chunk_bytes). */
static uint32_t nvls(sched *s, const strata_coll_shape *shape)
{
    uint32_t n = s->n;
    uint64_t b = shape->in_bytes, channels = shape->channels ? shape->channels : 1;
    uint64_t eff = shape->nvls_efficiency > 0 && shape->nvls_efficiency < 1
                       ? (uint64_t)(shape->nvls_efficiency * 1000 + 0.5) : 0;
    if (s->kind == STRATA_OP_ALL_REDUCE) {
        uint64_t piece = channels * n * (shape->chunk_bytes ? shape->chunk_bytes : NVLS_CHUNK);
        uint32_t pieces = (uint32_t)((b + piece - 1) / piece);
        for (uint32_t k = 0; k <= pieces; k++)
            for (uint32_t phase = 0; phase < 2; phase++) {
                if ((phase == 0 && k == pieces) || (phase == 1 && k == 0))
                    continue;
                uint32_t at = phase == 0 ? k : k - 1;
                uint64_t lo = (uint64_t)at * piece, len = MIN(b - lo, piece);
                uint64_t wire = MAX(1, nvls_wire(ceil_frac(len, n + 1, 2ull * n * (n - 1)), eff));
                for (uint32_t q = 0; q < n; q++)
                    for (uint32_t j = 0; j + 1 < n; j++) {
                        uint32_t r = (q + n - 1 - j) % n; /* j = (q - r) mod n - 1 */
                        uint64_t off = lo + chunk_off(len, n, q), bytes = lo + chunk_off(len, n, q + 1) - off;
                        strata_coll_step st = {.round = k, .src = phase == 0 ? r : q, .dst = phase == 0 ? q : r,
                                               .lane = phase == 0 ? 2 * j : 2 * (n - 1) + j, .src_off = off,
                                               .dst_off = off, .own_off = off, .reduce = phase == 0,
                                               .fused = phase == 0, .bytes = bytes, .wire_bytes = wire};
                        add(s, &st);
                    }
            }
        return pieces + 1;
    }
    /* reduce-scatter: round 0 copies the rank's own chunk of IN to OUT,
     * round 1 reduces the others' into it; all-gather: round 0 copies IN
     * to the rank's slot of OUT, round 1 sends that slot to every other
     * rank (named by its OUT: the copy's bytes then stay within it) */
    bool rs = s->kind == STRATA_OP_REDUCE_SCATTER;
    uint64_t c = rs ? b / n : b, total = rs ? b : b * n;
    for (uint32_t q = 0; q < n; q++) {
        strata_coll_step own = {.src = q, .dst = q, .lane = 2 * (n - 1), .src_buf = STRATA_COLL_IN,
                                .dst_buf = STRATA_COLL_OUT, .src_off = rs ? (uint64_t)q * c : 0,
                                .dst_off = rs ? 0 : (uint64_t)q * c, .bytes = c};
        add(s, &own);
        for (uint32_t j = 0; j + 1 < n; j++) {
            uint32_t r = (q + n - 1 - j) % n;
            strata_coll_buf src_buf = rs ? STRATA_COLL_IN : STRATA_COLL_OUT;
            uint64_t wire = nvls_wire(ceil_frac(total, 1, n - 1), eff);
            strata_coll_step st = {.round = 1, .src = r, .dst = q, .lane = 2 * j, .src_buf = src_buf,
                                   .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT,
                                   .src_off = (uint64_t)(rs ? q : r) * c, .dst_off = rs ? 0 : (uint64_t)r * c,
                                   .reduce = rs, .fused = rs, .bytes = c,
                                   .wire_bytes = wire_of(s, b, src_buf, wire)};
            add(s, &st);
        }
    }
    return 2;
}

/* NCCL's choice (shape->nccl_algo, nccl_proto, channels): ring all-reduce
 * in the protocol's loops, chunks and slices; ring all-gather and
 * reduce-scatter as ring (one round a step) in the protocol's format;
 * tree as tree in the protocol's format; NVLS as nvls(). */
static uint32_t nccl(sched *s, const strata_coll_shape *shape)
{
    strata_nccl_proto p = shape->nccl_proto;
    uint64_t b = shape->in_bytes;
    if (shape->nccl_algo == STRATA_NCCL_NVLS)
        return nvls(s, shape);
    guint from = s->steps->len;
    if (shape->nccl_algo == STRATA_NCCL_RING && s->kind == STRATA_OP_ALL_REDUCE) {
        uint32_t rounds = ring_loops(s, b, shape->channels ? shape->channels : 1, proto_chunk[p], proto_slices[p],
                                     proto_num[p], proto_den[p], p == STRATA_NCCL_SIMPLE);
        for (guint i = from; i < s->steps->len; i++) {
            strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
            st->wire_bytes = wire_of(s, b, st->src_buf, st->wire_bytes);
        }
        return rounds;
    }
    uint32_t rounds;
    if (shape->nccl_algo == STRATA_NCCL_TREE && s->kind == STRATA_OP_ALL_REDUCE)
        rounds = tree(s, b);
    else {
        bool ag = s->kind == STRATA_OP_ALL_GATHER, rs = s->kind == STRATA_OP_REDUCE_SCATTER;
        rounds = torus(s, 0, ag ? b * s->n : b, 1, 0, 0, !ag, !rs);
    }
    apply_protocol(s, from, b, p);
    return rounds;
}

/* The table of which algorithm serves which op is the trace layer's
 * (strata_algo_supports in trace/op.c): gen and check refuse the same pairs. */
bool strata_coll_supports(strata_op_kind kind, strata_algo algo)
{
    return strata_algo_supports(kind, algo);
}

char *strata_coll_algos_of(strata_op_kind kind)
{
    return strata_algo_names_of(kind);
}

uint32_t strata_coll_ranks(const strata_coll_shape *shape)
{
    uint32_t n = 1;
    for (uint32_t k = 0; k < shape->n_dims; k++)
        n *= shape->dims[k];
    return n;
}

/* Stable sort of steps[from..] by round (a counting sort: rounds < n_rounds). */
static void sort_rounds(GArray *steps, guint from, uint32_t n_rounds)
{
    guint n = steps->len - from;
    if (n == 0)
        return;
    strata_coll_step *v = &g_array_index(steps, strata_coll_step, from);
    guint *start = g_new0(guint, n_rounds + 1);
    for (guint i = 0; i < n; i++)
        start[v[i].round + 1]++;
    for (uint32_t r = 0; r < n_rounds; r++)
        start[r + 1] += start[r];
    strata_coll_step *sorted = g_new(strata_coll_step, n);
    for (guint i = 0; i < n; i++)
        sorted[start[v[i].round]++] = v[i];
    memcpy(v, sorted, n * sizeof *v);
    g_free(sorted);
    g_free(start);
}

static uint32_t schedule(const strata_coll_shape *shape, GArray *steps)
{
    sched s = {.steps = steps, .n = strata_coll_ranks(shape), .kind = shape->kind, .parts = 1,
               .fold = shape->fold && (shape->algo == STRATA_ALGO_RING || shape->algo == STRATA_ALGO_BIDIR_RING ||
                                       shape->algo == STRATA_ALGO_TORUS || shape->algo == STRATA_ALGO_BIDIR_TORUS)};
    bool flatten = shape->algo != STRATA_ALGO_TORUS && shape->algo != STRATA_ALGO_BIDIR_TORUS;
    for (uint32_t k = 0; k < shape->n_dims; k++)
        if (!flatten && shape->dims[k] > 1)
            s.dims[s.m++] = shape->dims[k];
    if (flatten && s.n > 1)
        s.dims[s.m++] = s.n;
    for (uint32_t k = s.m, stride = 1; k-- > 0;) {
        s.stride[k] = stride;
        stride *= s.dims[k];
    }
    uint64_t b = shape->in_bytes;
    if (s.n == 1) { /* a group of one: OUT = IN */
        strata_coll_step st = {.src_buf = STRATA_COLL_IN, .dst_buf = STRATA_COLL_OUT, .bytes = b};
        if (shape->kind != STRATA_OP_ALL_REDUCE)
            add(&s, &st);
        return shape->kind != STRATA_OP_ALL_REDUCE;
    }
    switch (shape->algo) {
    case STRATA_ALGO_TREE: return tree(&s, b);
    case STRATA_ALGO_NCCL_RING: return nccl_ring(&s, shape);
    case STRATA_ALGO_NCCL: return nccl(&s, shape);
    case STRATA_ALGO_DIRECT: return direct(&s, b, shape->shift);
    case STRATA_ALGO_BIDIR_RING:
    case STRATA_ALGO_BIDIR_TORUS:
        if (shape->kind == STRATA_OP_ALL_REDUCE) {
            uint32_t rounds = torus(&s, 0, b / 2, 1, 0, 0, true, true);
            torus(&s, b / 2, b - b / 2, -1, 1, 0, true, true);
            return rounds;
        }
        s.parts = 2;
        break;
    default:
        break;
    }
    bool ag = shape->kind == STRATA_OP_ALL_GATHER, rs = shape->kind == STRATA_OP_REDUCE_SCATTER;
    uint64_t len = ag ? b * s.n : b;
    uint32_t rounds = torus(&s, 0, len, 1, 0, 0, !ag, !rs);
    if (s.parts == 2) /* lane 2: an all-gather's local copy takes lane 1 */
        torus(&s, 0, len, -1, 2, 0, !ag, !rs);
    return rounds;
}

#ifndef NDEBUG
/* The invariants over one collective's steps (steps[from..]). */
static bool steps_ok(const GArray *steps, guint from, uint32_t rounds)
{
    for (guint i = from; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->bytes == 0 || st->round >= rounds ||
            (i > from && st->round < g_array_index(steps, strata_coll_step, i - 1).round))
            return false;
    }
    return true;
}
#endif

/* True when the folded runs of steps[from..] line up: the steps that start
 * at a round all stand for the same rounds k, and the next ones start k
 * rounds later (the rings of a collective fold alike). */
static bool runs_aligned(const GArray *steps, guint from, uint32_t n_rounds)
{
    const strata_coll_step *v = (const strata_coll_step *)(void *)steps->data;
    uint32_t next = 0;
    for (guint i = from; i < steps->len; i++) {
        uint32_t k = v[i].rounds ? v[i].rounds : 1;
        if (i > from && v[i].round == v[i - 1].round) {
            if (k != (v[i - 1].rounds ? v[i - 1].rounds : 1))
                return false;
            continue;
        }
        if (v[i].round != next)
            return false;
        next = v[i].round + k;
    }
    return next <= n_rounds;
}

uint32_t strata_coll_schedule(const strata_coll_shape *shape, GArray *steps)
{
    guint from = steps->len;
    uint32_t rounds = schedule(shape, steps);
    sort_rounds(steps, from, rounds);
    if (shape->fold && !runs_aligned(steps, from, rounds)) { /* fold nothing rather than misalign */
        strata_coll_shape plain = *shape;
        plain.fold = false;
        g_array_set_size(steps, from);
        rounds = schedule(&plain, steps);
        sort_rounds(steps, from, rounds);
    }
    assert(steps_ok(steps, from, rounds)); /* invariants: round order, no empty step */
    return rounds;
}
