/*
 * coll_kit_axes.c: a torus collective over every dimension of its layout
 * at once (coll_kit.h coll_axes), bidir-torus's schedule where the group
 * spans two torus dimensions or more.
 *
 * Source: the scaling book (jax-ml/scaling-book sharding.md @0819a7d,
 * "What happens when we AllGather over multiple axes?"): "When we gather
 * over multiple axes, we have multiple dimensions of ICI over which to
 * perform the gather ... This increases the available bandwidth by a
 * factor of n_axes", T = max(T_min sum_i |X_i| / 2, V / (W_ici n_axes)),
 * W_ici the bidirectional bandwidth of a link; training.md applies the
 * same factor to FSDP's gathers and reductions over M_X axes ("we 3x our
 * bandwidth"). The book states the cost, not the order of the transfers;
 * the schedule here is the one a torus of rings reaches that cost with:
 * the data in 2m parts (m dimensions, two directions), part p walking the
 * dimensions in the rotation of the one-axis-after-the-other order that
 * starts p dimensions on, each dimension a ring in its direction. Every
 * part's largest ring (its last gather, its first reduction) is on a
 * dimension of its own, so the m of them run at once, each direction of
 * each link carrying 1 / (2m) of the data: an all-gather of V bytes on a
 * 16x16 torus moves, per link direction, V / 4 x 15/16 in the last
 * dimension plus V / 64 x 15/16 in the first, V / (2 W 2) x (1 + 1/16)
 * x 15/16 at W a link and direction, within 0.4% of the book's
 * V / (W_ici n_axes); its rounds, sum_i (|X_i| - 1), are the book's
 * latency term's hops (sum_i |X_i| / 2 each way) run as one-hop rounds.
 *
 * All-reduce: each part a contiguous segment of the buffer, reduced and
 * gathered by coll_torus over the rotated dimensions (which rank holds
 * which piece in between is free). All-gather and reduce-scatter: part
 * (p, dir) is the same slice of every rank's shard (chunk 2p + (dir < 0)
 * of 2m of it); after a part's rings along some dimensions a rank holds
 * the slices of the ranks that differ from it only there, which lie one
 * shard apart or more in the buffer: a step moves them as `pieces` runs at
 * a stride (coll_sched.h), and where the dimensions gathered are not
 * consecutive in the layout (three dimensions and more), one step per
 * combination of the outer ones, each on a lane of its own.
 *
 * Invariants: those of coll_kit.h; every rank ends with the op's result
 * (tests/test_collective.c replays it on values); the rounds are
 * sum_k (dims[k] - 1), a part's dimension j running from the rounds of
 * its dimensions before it.
 */
#include "collective/coll_kit.h"

/* rank with its coordinate along k set to c. */
static uint32_t with_coord(const strata_coll_sched *s, uint32_t rank, uint32_t k, uint32_t c)
{
    return rank - coll_coord(s, rank, k) * s->stride[k] + c * s->stride[k];
}

/* The coordinate along k whose data q receives at `step` of that ring
 * (coll_kit.c's convention: position p - s - 1 gathering, p - s - 2
 * reducing). */
static uint32_t origin(const strata_coll_sched *s, uint32_t q, uint32_t k, int dir, uint32_t step, bool reduce)
{
    uint32_t d = s->dims[k], pos = coll_position(s, q, k, dir);
    uint32_t p = (pos + 2 * d - step - (reduce ? 2 : 1)) % d;
    return dir > 0 ? p : (d - p) % d;
}

/* Dimension j of part p's gathers: the one-axis-after-the-other order
 * (innermost first, as coll_torus gathers) rotated by p. Its reductions
 * run the same dimensions backwards. */
static uint32_t gather_dim(const strata_coll_sched *s, uint32_t p, uint32_t j)
{
    return (2 * s->m - 1 - j - p) % s->m;
}

/* The ranks a step moves the slices of: those that share `base`'s
 * coordinates but on the dimensions of `free` (a mask). The innermost run
 * of consecutive free dimensions [a, b] is the step's pieces (stride[b]
 * ranks apart); `outer` counts the combinations of the others. */
typedef struct spread {
    uint32_t pieces, outer, a, b;
    uint64_t stride; /* ranks */
} spread;

static spread spread_of(const strata_coll_sched *s, uint32_t free)
{
    spread z = {.pieces = 1, .outer = 1, .a = s->m, .b = s->m, .stride = 1};
    for (uint32_t k = s->m; k-- > 0;)
        if (free & (1u << k)) {
            z.b = k;
            break;
        }
    for (z.a = z.b; z.b < s->m && z.a > 0 && (free & (1u << (z.a - 1)));)
        z.a--;
    for (uint32_t k = 0; k < s->m; k++)
        if (free & (1u << k)) {
            if (k >= z.a && k <= z.b)
                z.pieces *= s->dims[k];
            else
                z.outer *= s->dims[k];
        }
    if (z.b < s->m)
        z.stride = s->stride[z.b];
    return z;
}

/* Combination t of the outer free dimensions added to rank base (whose
 * coordinates on every free dimension are 0). */
static uint32_t outer_rank(const strata_coll_sched *s, uint32_t base, uint32_t free, const spread *z, uint32_t t)
{
    for (uint32_t k = s->m; k-- > 0;)
        if ((free & (1u << k)) && (k < z->a || k > z->b)) {
            base += t % s->dims[k] * s->stride[k];
            t /= s->dims[k];
        }
    return base;
}

/* base with its coordinates on the dimensions of `free` set to 0. */
static uint32_t zero_free(const strata_coll_sched *s, uint32_t base, uint32_t free)
{
    for (uint32_t k = 0; k < s->m; k++)
        if (free & (1u << k))
            base = with_coord(s, base, k, 0);
    return base;
}

/* One part's slice of every shard: [o, o + len) of S bytes, direction dir. */
typedef struct part {
    uint32_t p;
    int dir;
    uint64_t shard, o, len;
} part;

static uint32_t part_lane(const strata_coll_sched *s, const part *pt, uint32_t t)
{
    return 1 + 2 * pt->p + (pt->dir < 0) + 2 * s->m * t;
}

/* The steps of round `round` at rank q receiving from src the slices of
 * the ranks `base` spreads to over `free`. */
static void add_spread(strata_coll_sched *s, const part *pt, strata_coll_step st, uint32_t base, uint32_t free)
{
    spread z = spread_of(s, free);
    uint32_t k = st.rounds > 1 ? st.rounds : 1; /* a folded run: k rounds of the same bytes */
    for (uint32_t t = 0; t < z.outer; t++) {
        uint64_t off = (uint64_t)outer_rank(s, base, free, &z, t) * pt->shard + pt->o;
        st.lane = part_lane(s, pt, t);
        st.bytes = pt->len * z.pieces * k;
        st.max_bytes = k > 1 ? pt->len * z.pieces : 0;
        st.pieces = z.pieces > 1 ? z.pieces : 0;
        st.stride = z.pieces > 1 ? z.stride * pt->shard : 0;
        /* IN read by a gather: the sender's own shard; OUT written by a
         * reduction: the receiver's own slice; else where the slices lie */
        st.src_off = st.src_buf == STRATA_COLL_IN && !st.reduce ? pt->o : off;
        st.dst_off = st.dst_buf == STRATA_COLL_OUT && st.reduce ? pt->o : off;
        st.own_off = off;
        coll_add(s, &st);
    }
}

/* The rounds from `step` of a ring of d ranks starting at round `round`
 * that fold into one run (s->fold): up to the ring's end or the next cut
 * (coll_cut: every part's ring boundaries and the schedule's edges, so
 * every run of every part covers the same rounds); 1 without fold. Every
 * round of a part's ring along one dimension is the same moves (sender
 * prev_rank, lanes, buffers, pieces) of the same bytes (pt->len x pieces)
 * but its edges, which are cuts: only the offsets differ, and a folded
 * step keeps its first round's (as coll_kit.c fold_round does). */
static uint32_t run_of(const strata_coll_sched *s, uint32_t round, uint32_t step, uint32_t d)
{
    uint32_t b = step;
    while (s->fold && b + 2 < d && !coll_cut(s, round + b + 1))
        b++;
    return b - step + 1;
}

static uint32_t gather_part(strata_coll_sched *s, const part *pt)
{
    uint32_t round = 0, free = 0;
    for (uint32_t j = 0; j < s->m; j++) {
        uint32_t k = gather_dim(s, pt->p, j);
        for (uint32_t step = 0, runs; step + 1 < s->dims[k]; step += runs) {
            runs = run_of(s, round, step, s->dims[k]);
            for (uint32_t q = 0; q < s->n; q++) {
                bool from_in = j == 0 && step == 0; /* the sender's own slice, from IN */
                strata_coll_step st = {.round = round + step, .rounds = runs > 1 ? runs : 0,
                                       .src = coll_previous(s, q, k, pt->dir), .dst = q,
                                       .src_buf = from_in ? STRATA_COLL_IN : STRATA_COLL_OUT,
                                       .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT};
                uint32_t base = zero_free(s, with_coord(s, q, k, origin(s, q, k, pt->dir, step, false)), free);
                add_spread(s, pt, st, base, free);
            }
        }
        free |= 1u << k;
        round += s->dims[k] - 1;
    }
    return round;
}

static uint32_t reduce_part(strata_coll_sched *s, const part *pt)
{
    uint32_t round = 0, free = (1u << s->m) - 1;
    for (uint32_t j = 0; j < s->m; j++) {
        uint32_t k = gather_dim(s, pt->p, s->m - 1 - j);
        free &= ~(1u << k);
        for (uint32_t step = 0, runs; step + 1 < s->dims[k]; step += runs) {
            runs = run_of(s, round, step, s->dims[k]);
            for (uint32_t q = 0; q < s->n; q++) {
                bool last = j + 1 == s->m && step + 2 == s->dims[k]; /* q's own slice, into OUT */
                strata_coll_step st = {.round = round + step, .rounds = runs > 1 ? runs : 0,
                                       .src = coll_previous(s, q, k, pt->dir), .dst = q,
                                       .src_buf = STRATA_COLL_IN, .dst_buf = last ? STRATA_COLL_OUT : STRATA_COLL_IN,
                                       .own_buf = STRATA_COLL_IN, .reduce = true};
                uint32_t base = zero_free(s, with_coord(s, q, k, origin(s, q, k, pt->dir, step, true)), free);
                add_spread(s, pt, st, base, free);
            }
        }
        round += s->dims[k] - 1;
    }
    return round;
}

/* An all-reduce's part p, dir: its segment of the buffer through
 * coll_torus over the dimensions rotated by p (the reductions' first and
 * the gathers' last ring along dimension p). */
static uint32_t all_reduce_part(strata_coll_sched *s, uint64_t base, uint64_t len, uint32_t p, int dir, uint32_t lane)
{
    strata_coll_sched r = *s;
    for (uint32_t j = 0; j < s->m; j++) {
        r.dims[j] = s->dims[(j + p) % s->m];
        r.stride[j] = s->stride[(j + p) % s->m];
    }
    r.parts = 1;
    return coll_torus(&r, base, len, dir, lane, 0, true, true);
}

/* The rounds where a folded run must start (s->cut, with fold): where
 * some part's ring along one dimension ends and the next begins (in its
 * rotation: gather_part's or reduce_part's order; an all-reduce's parts,
 * coll_torus's reductions over the dimensions rotated by p, then its
 * gathers back), and the edges of the rings (round 1, after an
 * all-gather's reads of IN; the last round, a reduce-scatter's writes into
 * OUT). Parts walk the dimensions in different orders, so without these
 * cuts their runs would not line up and coll_sched.c would fold nothing.
 * Within a run every part moves the same bytes a round, but parts on
 * rings of different sizes move different bytes: a lane's reductions
 * follow its own copies, not the round's slowest (spmd.c lane_phase). */
static bool *cuts_new(const strata_coll_sched *s, uint32_t *n_cut)
{
    uint32_t total = 0;
    for (uint32_t k = 0; k < s->m; k++)
        total += s->dims[k] - 1;
    bool ar = s->kind == STRATA_OP_ALL_REDUCE;
    *n_cut = (ar ? 2 : 1) * total + 1;
    bool *cut = g_new0(bool, *n_cut);
    for (uint32_t p = 0; p < s->m; p++) {
        uint32_t r = 0;
        for (uint32_t j = 0; j < s->m; j++) {
            uint32_t k = ar ? (j + p) % s->m
                            : gather_dim(s, p, s->kind == STRATA_OP_REDUCE_SCATTER ? s->m - 1 - j : j);
            r += s->dims[k] - 1;
            cut[r] = true;
        }
        for (uint32_t j = 0; ar && j < s->m; j++) {
            r += s->dims[(2 * s->m - 1 - j + p) % s->m] - 1;
            cut[r] = true;
        }
    }
    if (s->kind == STRATA_OP_ALL_GATHER)
        cut[1] = true;
    if (s->kind == STRATA_OP_REDUCE_SCATTER)
        cut[total - 1] = true;
    return cut;
}

uint32_t coll_axes(strata_coll_sched *s, uint64_t in_bytes)
{
    uint32_t rounds = 0, parts = 2 * s->m;
    bool *cut = s->fold ? cuts_new(s, &s->n_cut) : NULL;
    s->cut = cut;
    uint64_t shard = s->kind == STRATA_OP_REDUCE_SCATTER ? in_bytes / s->n : in_bytes;
    for (uint32_t i = 0; i < parts; i++) {
        uint32_t p = i / 2;
        int dir = i % 2 ? -1 : 1;
        if (s->kind == STRATA_OP_ALL_REDUCE) {
            uint64_t lo = coll_chunk_off(in_bytes, parts, i), len = coll_chunk_off(in_bytes, parts, i + 1) - lo;
            uint32_t r = len > 0 ? all_reduce_part(s, lo, len, p, dir, i) : 0;
            rounds = MAX(rounds, r);
            continue;
        }
        uint64_t o = coll_chunk_off(shard, parts, i);
        part pt = {.p = p, .dir = dir, .shard = shard, .o = o, .len = coll_chunk_off(shard, parts, i + 1) - o};
        if (pt.len == 0)
            continue;
        uint32_t r = s->kind == STRATA_OP_ALL_GATHER ? gather_part(s, &pt) : reduce_part(s, &pt);
        rounds = MAX(rounds, r);
    }
    if (s->kind == STRATA_OP_ALL_GATHER) /* every rank's own shard, IN to OUT, in round 0 */
        for (uint32_t q = 0; q < s->n; q++) {
            strata_coll_step local = {.src = q, .dst = q, .src_buf = STRATA_COLL_IN, .dst_buf = STRATA_COLL_OUT,
                                      .dst_off = (uint64_t)q * shard, .bytes = shard};
            coll_add(s, &local);
        }
    s->cut = NULL;
    g_free(cut);
    return rounds;
}
