/*
 * test_collective.c: every collective schedule (models/collective/) moves
 * the right data. The steps are replayed on values: each byte of rank r's
 * IN starts as a distinct number; a step reads its source as it stood at
 * the start of its round and writes (or adds into) its destination. After
 * the last round every rank must hold the op's result, and the bytes each
 * rank sent must be what the algorithm's cost formula counts.
 */
#include <string.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"

typedef struct world {
    uint32_t n;
    uint64_t in_len, out_len;
    int64_t *in, *out;     /* n x len: IN and OUT of every rank (all-reduce: IN only) */
    uint64_t *sent;        /* bytes each rank sent to another rank */
} world;

static int64_t *buf_of(world *w, int64_t *base_in, int64_t *base_out, strata_coll_buf b, uint32_t rank,
                       strata_op_kind kind)
{
    if (b == STRATA_COLL_IN || kind == STRATA_OP_ALL_REDUCE)
        return base_in + (size_t)rank * w->in_len;
    return base_out + (size_t)rank * w->out_len;
}

static uint32_t replay(const strata_coll_shape *sh, world *w)
{
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    uint32_t rounds = strata_coll_schedule(sh, steps);
    size_t in_sz = (size_t)w->n * w->in_len, out_sz = (size_t)w->n * w->out_len;
    int64_t *snap_in = g_new(int64_t, in_sz ? in_sz : 1), *snap_out = g_new(int64_t, out_sz ? out_sz : 1);
    uint32_t round = UINT32_MAX;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_gt(st->bytes, 0);
        ck_assert_uint_lt(st->round, rounds);
        if (st->round != round) {
            ck_assert(round == UINT32_MAX || st->round > round); /* round order */
            round = st->round;
            memcpy(snap_in, w->in, in_sz * sizeof *snap_in);
            memcpy(snap_out, w->out, out_sz * sizeof *snap_out);
        }
        int64_t *src = buf_of(w, snap_in, snap_out, st->src_buf, st->src, sh->kind) + st->src_off;
        int64_t *dst = buf_of(w, w->in, w->out, st->dst_buf, st->dst, sh->kind) + st->dst_off;
        int64_t *own = buf_of(w, w->in, w->out, st->own_buf, st->dst, sh->kind) + st->own_off;
        uint32_t pieces = st->pieces > 1 ? st->pieces : 1; /* runs of bytes / pieces, stride apart */
        ck_assert_uint_eq(st->bytes % pieces, 0);
        for (uint32_t p = 0; p < pieces; p++) {
            uint64_t at = p * st->stride, run = st->bytes / pieces;
            for (uint64_t b = 0; b < run; b++)
                dst[at + b] = st->reduce ? own[at + b] + src[at + b] : src[at + b];
        }
        if (st->src != st->dst)
            w->sent[st->src] += st->bytes;
    }
    g_free(snap_in);
    g_free(snap_out);
    g_array_free(steps, TRUE);
    return rounds;
}

static int64_t init_value(uint32_t rank, uint64_t i) { return (int64_t)(rank + 1) * 1000003 + (int64_t)i * 7; }

/* Runs `sh` on values and checks the result; returns the bytes rank 0 sent. */
static uint64_t check_op(const strata_coll_shape *sh, uint32_t *rounds)
{
    world w = {.n = strata_coll_ranks(sh)};
    uint32_t n = w.n;
    w.in_len = sh->in_bytes;
    w.out_len = sh->kind == STRATA_OP_ALL_GATHER ? sh->in_bytes * n
              : sh->kind == STRATA_OP_REDUCE_SCATTER ? sh->in_bytes / n : sh->in_bytes;
    w.in = g_new(int64_t, (size_t)n * w.in_len);
    w.out = g_new(int64_t, (size_t)n * w.out_len);
    w.sent = g_new0(uint64_t, n);
    for (uint32_t r = 0; r < n; r++) {
        for (uint64_t i = 0; i < w.in_len; i++)
            w.in[(size_t)r * w.in_len + i] = init_value(r, i);
        for (uint64_t i = 0; i < w.out_len; i++)
            w.out[(size_t)r * w.out_len + i] = -1;
    }
    *rounds = replay(sh, &w);
    uint64_t c = w.out_len / (sh->kind == STRATA_OP_ALL_GATHER ? n : 1);
    uint64_t a2a = sh->in_bytes / n;
    for (uint32_t r = 0; r < n; r++) {
        for (uint64_t i = 0; i < (sh->kind == STRATA_OP_ALL_REDUCE ? w.in_len : w.out_len); i++) {
            int64_t want = 0, got;
            switch (sh->kind) {
            case STRATA_OP_ALL_REDUCE:
                for (uint32_t k = 0; k < n; k++)
                    want += init_value(k, i);
                got = w.in[(size_t)r * w.in_len + i];
                break;
            case STRATA_OP_ALL_GATHER: want = init_value((uint32_t)(i / c), i % c); break;
            case STRATA_OP_REDUCE_SCATTER:
                for (uint32_t k = 0; k < n; k++)
                    want += init_value(k, (uint64_t)r * c + i);
                break;
            case STRATA_OP_ALL_TO_ALL: want = init_value((uint32_t)(i / a2a), (uint64_t)r * a2a + i % a2a); break;
            default: {
                int64_t from = (((int64_t)r - sh->shift) % (int64_t)n + n) % n;
                want = init_value((uint32_t)from, i);
                break;
            }
            }
            if (sh->kind != STRATA_OP_ALL_REDUCE)
                got = w.out[(size_t)r * w.out_len + i];
            ck_assert_msg(got == want, "%s algo=%s n=%u dims=%u: rank %u byte %" G_GUINT64_FORMAT ": %" G_GINT64_FORMAT
                          ", expected %" G_GINT64_FORMAT, strata_op_kind_name(sh->kind), sh->algo->name,
                          n, sh->n_dims, r, i, got, want);
        }
    }
    uint64_t sent0 = w.sent[0];
    g_free(w.in);
    g_free(w.out);
    g_free(w.sent);
    return sent0;
}

static strata_coll_shape shape1(strata_op_kind kind, const strata_coll_algo *algo, uint32_t n, uint64_t in_bytes)
{
    return (strata_coll_shape){.kind = kind, .algo = algo, .n_dims = 1, .dims = {n}, .in_bytes = in_bytes};
}

START_TEST(ring_all_reduce_moves_2_n_minus_1_over_n)
{
    static const uint32_t ns[] = {2, 3, 4, 5, 8};
    for (size_t i = 0; i < G_N_ELEMENTS(ns); i++) {
        uint32_t n = ns[i], rounds;
        uint64_t b = 40ull * n;
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("ring"), n, b);
        ck_assert_uint_eq(check_op(&sh, &rounds), 2 * (n - 1) * b / n);
        ck_assert_uint_eq(rounds, 2 * (n - 1));
    }
    /* Sizes that do not divide: chunks of floor boundaries, same result. */
    uint32_t rounds;
    strata_coll_shape odd = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("ring"), 4, 37);
    check_op(&odd, &rounds);
    strata_coll_shape tiny = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("ring"), 8, 3);
    check_op(&tiny, &rounds);
}
END_TEST

START_TEST(bidir_ring_halves_each_direction)
{
    for (uint32_t n = 2; n <= 8; n++) {
        uint32_t rounds;
        uint64_t b = 24ull * n;
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("bidir-ring"), n, b);
        ck_assert_uint_eq(check_op(&sh, &rounds), 2 * (n - 1) * b / n);
        ck_assert_uint_eq(rounds, 2 * (n - 1));
    }
}
END_TEST

/* The bytes that rank `from` sends to rank `to` in the schedule of sh. */
static uint64_t sent_to(const strata_coll_shape *sh, uint32_t from, uint32_t to)
{
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    strata_coll_schedule(sh, steps);
    uint64_t bytes = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->src == from && st->dst == to)
            bytes += st->bytes;
    }
    g_array_free(steps, TRUE);
    return bytes;
}

START_TEST(bidir_ring_gathers_and_scatters_half_each_way)
{
    /* all-gather of 7 bytes a rank: halves of 3 (to r+1) and 4 (to r-1);
     * reduce-scatter of 6n bytes: chunks of 6, halves of 3 each way. Each
     * half is passed on n-1 times. */
    static const struct {
        strata_op_kind kind;
        uint64_t chunk, per_rank, fwd, bwd;
    } cases[] = {{STRATA_OP_ALL_GATHER, 7, 0, 3, 4}, {STRATA_OP_REDUCE_SCATTER, 6, 1, 3, 3}};
    for (uint32_t n = 3; n <= 8; n++) {
        uint32_t rounds;
        for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
            uint64_t in = cases[c].chunk * (cases[c].per_rank ? n : 1);
            strata_coll_shape sh = shape1(cases[c].kind, strata_coll_algo_find("bidir-ring"), n, in);
            ck_assert_uint_eq(check_op(&sh, &rounds), cases[c].chunk * (n - 1));
            ck_assert_uint_eq(rounds, n - 1);
            for (uint32_t r = 0; r < n; r++) {
                ck_assert_uint_eq(sent_to(&sh, r, (r + 1) % n), cases[c].fwd * (n - 1));
                ck_assert_uint_eq(sent_to(&sh, r, (r + n - 1) % n), cases[c].bwd * (n - 1));
            }
        }
        /* Sizes that do not divide: same result. */
        strata_coll_shape odd = shape1(STRATA_OP_REDUCE_SCATTER, strata_coll_algo_find("bidir-ring"), n, 5ull * n);
        check_op(&odd, &rounds);
        strata_coll_shape one = shape1(STRATA_OP_ALL_GATHER, strata_coll_algo_find("bidir-ring"), n, 1);
        check_op(&one, &rounds);
    }
}
END_TEST

START_TEST(tree_reduces_to_rank_0_and_broadcasts)
{
    static const uint32_t ns[] = {2, 3, 4, 7, 8, 16};
    static const uint32_t depth[] = {1, 2, 2, 3, 3, 4};
    for (size_t i = 0; i < G_N_ELEMENTS(ns); i++) {
        uint32_t rounds;
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("tree"), ns[i], 16);
        /* Rank 0 sends the whole buffer once per level (the broadcast). */
        ck_assert_uint_eq(check_op(&sh, &rounds), 16ull * depth[i]);
        ck_assert_uint_eq(rounds, 2 * depth[i]);
    }
}
END_TEST

START_TEST(torus_rings_along_each_dimension)
{
    static const uint32_t shapes[][3] = {{4, 4, 0}, {2, 4, 0}, {4, 2, 0}, {2, 2, 2}, {3, 1, 4}, {4, 4, 4}};
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("torus")};
        uint32_t n = 1, rounds, want_rounds = 0;
        for (uint32_t k = 0; k < 3 && shapes[i][k]; k++) {
            sh.dims[sh.n_dims++] = shapes[i][k];
            n *= shapes[i][k];
            want_rounds += 2 * (shapes[i][k] - 1);
        }
        sh.in_bytes = 8ull * n;
        uint64_t sent = check_op(&sh, &rounds);
        ck_assert_uint_eq(rounds, want_rounds);
        /* 4x4: reduce-scatter rows (3 x B/4), the columns on B/4 (2 x 3 x B/16), rows back (3 x B/4). */
        if (shapes[i][0] == 4 && shapes[i][1] == 4 && !shapes[i][2])
            ck_assert_uint_eq(sent, 3 * sh.in_bytes / 4 * 2 + 6 * sh.in_bytes / 16);
        for (strata_op_kind k = STRATA_OP_ALL_GATHER; k <= STRATA_OP_REDUCE_SCATTER; k++) {
            sh.kind = k;
            sh.in_bytes = k == STRATA_OP_ALL_GATHER ? 5 : 5ull * n;
            /* Each rank sends (n - 1) chunks of the result's 1/n. */
            ck_assert_uint_eq(check_op(&sh, &rounds), 5ull * (n - 1));
        }
    }
}
END_TEST

START_TEST(ring_and_direct_gather_scatter_exchange)
{
    for (uint32_t n = 1; n <= 8; n++) {
        uint32_t rounds;
        static const char *const names[] = {"ring", "bidir-ring", "tree", "direct"};
        for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
            const strata_coll_algo *a = strata_coll_algo_find(names[i]);
            if (!strata_coll_algo_serves(a, STRATA_OP_ALL_GATHER))
                continue;
            strata_coll_shape ag = shape1(STRATA_OP_ALL_GATHER, a, n, 6);
            ck_assert_uint_eq(check_op(&ag, &rounds), 6ull * (n - 1));
            ck_assert_uint_eq(rounds, a != strata_coll_algo_find("direct") && n > 1 ? n - 1 : 1);
            strata_coll_shape rs = shape1(STRATA_OP_REDUCE_SCATTER, a, n, 6ull * n);
            ck_assert_uint_eq(check_op(&rs, &rounds), 6ull * (n - 1));
        }
        strata_coll_shape a2a = shape1(STRATA_OP_ALL_TO_ALL, strata_coll_algo_find("direct"), n, 3ull * n);
        ck_assert_uint_eq(check_op(&a2a, &rounds), 3ull * (n - 1));
        ck_assert_uint_eq(rounds, 1);
        strata_coll_shape ar = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("direct"), n, 4ull * n);
        ck_assert_uint_eq(check_op(&ar, &rounds), n > 1 ? 2 * 4ull * (n - 1) : 0);
        for (int32_t shift = -3; shift <= 3; shift++) {
            if (shift == 0)
                continue;
            strata_coll_shape p = shape1(STRATA_OP_COLLECTIVE_PERMUTE, strata_coll_algo_find("direct"), n, 5);
            p.shift = shift;
            ck_assert_uint_eq(check_op(&p, &rounds), ((shift % (int32_t)n) + n) % n ? 5 : 0);
        }
    }
}
END_TEST

/* nccl-ring with 2 channels, chunks of 4 bytes and 2 slices: a loop is
 * 2 x n x 4 bytes, its chunk p the channels' 2 x 4 bytes, a slice 4 bytes.
 * b = 20n is two full loops (16n) and a last of 4n bytes, whose chunks
 * shrink to ceil(4n / 2n) = 2 bytes a channel (slices of 2). Each loop is
 * 2(n-1) steps of 2 slices, a round each: 3 x 4(n-1) rounds; rank 0 sends
 * 2(n-1)/n of the buffer, as ring does. Every slice is a handshake step
 * carrying ceil(5/4 bytes) on the wire; the reduce-scatter half reduces
 * fused. */
START_TEST(nccl_ring_loops_steps_and_slices)
{
    static const uint32_t ns[] = {2, 3, 4, 5, 8};
    for (size_t i = 0; i < G_N_ELEMENTS(ns); i++) {
        uint32_t n = ns[i], rounds;
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl-ring"), n, 20ull * n);
        sh.channels = 2;
        sh.chunk_bytes = 4;
        sh.slices = 2;
        ck_assert_uint_eq(check_op(&sh, &rounds), 2 * (n - 1) * 20ull);
        ck_assert_uint_eq(rounds, 3 * 4 * (n - 1));
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        strata_coll_schedule(&sh, steps);
        ck_assert_uint_eq(steps->len, rounds * n);
        for (guint k = 0; k < steps->len; k++) {
            const strata_coll_step *st = &g_array_index(steps, strata_coll_step, k);
            ck_assert_uint_eq(st->bytes, st->round < 8 * (n - 1) ? 4 : 2);
            ck_assert_uint_eq(st->wire_bytes, st->round < 8 * (n - 1) ? 5 : 3);
            ck_assert_uint_eq(st->src, (st->dst + n - 1) % n);
            ck_assert(st->handshake);
            ck_assert(st->reduce == (st->round % (4 * (n - 1)) < 2 * (n - 1)));
            ck_assert(st->fused == st->reduce);
        }
        g_array_free(steps, TRUE);
    }
    /* Sizes that do not divide, and a buffer smaller than one chunk per
     * rank and channel (NCCL's defaults: 24 channels, 2 MiB, 2 slices):
     * same result; no copy carries more than the buffer. */
    uint32_t rounds;
    strata_coll_shape odd = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl-ring"), 4, 37);
    odd.channels = 3;
    odd.chunk_bytes = 2;
    check_op(&odd, &rounds);
    ck_assert_uint_eq(rounds, 2 * 3 * 2 * 2); /* loops of 24 bytes: 2 */
    for (uint32_t n = 2; n <= 8; n++) {
        strata_coll_shape tiny = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl-ring"), n, 3);
        check_op(&tiny, &rounds);
        ck_assert_uint_eq(rounds, 2 * (n - 1) * STRATA_COLL_NCCL_SLICES);
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        strata_coll_schedule(&tiny, steps);
        for (guint k = 0; k < steps->len; k++)
            ck_assert_uint_le(g_array_index(steps, strata_coll_step, k).wire_bytes, 3);
        g_array_free(steps, TRUE);
    }
}
END_TEST

/* NCCL v2.19's ring kernel on LL (tune.ring_grain): 20 bytes over 4 ranks
 * and 2 channels in grains of 2 give a channel and rank
 * min(32768, divUp(20, 2 x 4 x 2) x 2) = 4 bytes, so ranks' chunks of 8,
 * 8, 4 and 0 bytes (the even share: 6, 6, 6 and 2): each of the 6 steps
 * (one round each on LL) moves three chunks, the largest 8 bytes, 120
 * bytes in all (2 x 3 steps x 20), and every rank ends with the sum. */
START_TEST(nccl_ring_chunk_grain_leaves_the_last_ranks_less)
{
    for (int grained = 0; grained < 2; grained++) {
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 4, 20);
        sh.tune.algo = STRATA_NCCL_RING;
        sh.tune.proto = STRATA_NCCL_LL;
        sh.tune.ring_grain = grained ? 2 : 0;
        sh.channels = 2;
        uint32_t rounds;
        check_op(&sh, &rounds);
        ck_assert_uint_eq(rounds, 6);
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        strata_coll_schedule(&sh, steps);
        ck_assert_uint_eq(steps->len, grained ? 6 * 3 : 6 * 4);
        uint64_t total = 0, most = 0;
        for (guint k = 0; k < steps->len; k++) {
            uint64_t b = g_array_index(steps, strata_coll_step, k).bytes;
            ck_assert(grained ? b == 8 || b == 4 : b == 6 || b == 2);
            total += b;
            most = MAX(most, b);
        }
        ck_assert_uint_eq(total, 120);
        ck_assert_uint_eq(most, grained ? 8 : 6);
        g_array_free(steps, TRUE);
    }
}
END_TEST

/* NCCL's defaults on 4 ranks: a loop is 24 x 4 x 2 MiB = 192 MiB, so
 * 2 x 192 MiB + 1 byte is three loops of 3 x 2 steps x 2 slices; the full
 * loops' slices are 24 MiB (24 chunks of 2 MiB, halved). */
START_TEST(nccl_ring_defaults_are_nccls)
{
    strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl-ring"), 4, 2 * (192ull << 20) + 1);
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 3 * 12);
    ck_assert_uint_eq(g_array_index(steps, strata_coll_step, 0).bytes, 24ull << 20);
    ck_assert_uint_eq(g_array_index(steps, strata_coll_step, 0).wire_bytes, 30ull << 20);
    g_array_free(steps, TRUE);
}
END_TEST

START_TEST(algorithms_per_op)
{
    char *s = strata_coll_algo_names_of(STRATA_OP_ALL_REDUCE);
    ck_assert_str_eq(s, "ring, bidir-ring, tree, direct, torus, nccl-ring, nccl, bidir-torus, nccl-tree, "
                        "nccl-nvls-tree, rccl, hierarchical");
    g_free(s);
    s = strata_coll_algo_names_of(STRATA_OP_ALL_GATHER);
    ck_assert_str_eq(s, "ring, bidir-ring, direct, torus, nccl, bidir-torus, nccl-pat, rccl");
    g_free(s);
    s = strata_coll_algo_names_of(STRATA_OP_ALL_TO_ALL);
    ck_assert_str_eq(s, "direct, nccl, rccl");
    g_free(s);
    ck_assert(!strata_coll_algo_serves(strata_coll_algo_find("direct"), STRATA_OP_ALLOC));
}
END_TEST

/* algo=nccl and bidir-torus give the op's result on values for every
 * algorithm and protocol NCCL may pick (NVLS pieces of channels x n x
 * 128 KiB: 1 channel and 3 ranks make 384 KiB pieces, so 1 MiB + 5 bytes
 * is 2 pieces and a short one, 6 rounds pipelined: scatter, reduce,
 * multicast, gather). */
START_TEST(nccl_and_bidir_torus_schedules_give_the_result)
{
    static const strata_op_kind kinds[] = {STRATA_OP_ALL_REDUCE, STRATA_OP_ALL_GATHER, STRATA_OP_REDUCE_SCATTER};
    static const uint64_t sizes[] = {24, 1000};
    for (unsigned k = 0; k < 3; k++)
        for (unsigned a = 0; a < STRATA_NCCL__ALGOS; a++)
            for (unsigned p = 0; p < STRATA_NCCL__PROTOS; p++)
                for (uint32_t n = 2; n <= 4; n++)
                    for (unsigned z = 0; z < 2; z++) {
                        strata_coll_shape sh = shape1(kinds[k], strata_coll_algo_find("nccl"), n, sizes[z] * n);
                        sh.tune.algo = (strata_nccl_algo)a;
                        sh.tune.proto = (strata_nccl_proto)p;
                        sh.channels = 2;
                        uint32_t rounds;
                        check_op(&sh, &rounds);
                        ck_assert_uint_gt(rounds, 0);
                    }
    strata_coll_shape big = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 3, (1ull << 20) + 5);
    big.tune.algo = STRATA_NCCL_NVLS;
    big.channels = 1;
    uint32_t rounds;
    check_op(&big, &rounds);
    ck_assert_uint_eq(rounds, 3 + 3); /* 3 pieces, pipelined through 4 stages */
    strata_coll_shape torus = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("bidir-torus"), .n_dims = 2,
                               .dims = {3, 4}, .in_bytes = 240};
    for (unsigned k = 0; k < 3; k++) {
        torus.kind = kinds[k];
        torus.in_bytes = kinds[k] == STRATA_OP_ALL_GATHER ? 20 : 240;
        check_op(&torus, &rounds);
        ck_assert_uint_eq(rounds, kinds[k] == STRATA_OP_ALL_REDUCE ? 2 * (2 + 3) : 2 + 3);
    }
    /* three dimensions (coll_kit_axes.c: a part whose gathered dimensions
     * are not consecutive moves them as one step per outer combination),
     * slices of unequal and of no bytes (7 or 5 over 6 parts) */
    strata_coll_shape cube = {.algo = strata_coll_algo_find("bidir-torus"), .n_dims = 3, .dims = {2, 3, 2}};
    for (unsigned k = 0; k < 3; k++) {
        cube.kind = kinds[k];
        cube.in_bytes = kinds[k] == STRATA_OP_ALL_GATHER ? 7 : kinds[k] == STRATA_OP_REDUCE_SCATTER ? 60 : 100;
        check_op(&cube, &rounds);
        ck_assert_uint_eq(rounds, kinds[k] == STRATA_OP_ALL_REDUCE ? 2 * (1 + 2 + 1) : 1 + 2 + 1);
    }
}
END_TEST

/* NCCL's double binary tree (src/graph/trees.cc's illustrations): over 14
 * ranks tree 0 is rooted at 0 with 8 under it; 12's children 10 and 13;
 * over 12 ranks tree 1 is tree 0 mirrored (root 11, 3 under it), over 13
 * shifted by one (root 1, 9 under it, 0 under 9). */
START_TEST(nccl_double_binary_tree_is_nccls)
{
    uint32_t type;
    static const int32_t parent14[] = {-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12};
    for (uint32_t r = 0; r < 14; r++)
        ck_assert_int_eq(coll_dtree_parent(14, r, 0, &type), parent14[r]);
    ck_assert_int_eq(coll_dtree_parent(14, 13, 0, &type), 12);
    ck_assert_uint_eq(type, 1); /* 13 > 12: the second child */
    ck_assert_int_eq(coll_dtree_parent(12, 11, 1, &type), -1);
    ck_assert_int_eq(coll_dtree_parent(12, 3, 1, &type), 11);
    ck_assert_int_eq(coll_dtree_parent(13, 1, 1, &type), -1);
    ck_assert_int_eq(coll_dtree_parent(13, 9, 1, &type), 1);
    ck_assert_int_eq(coll_dtree_parent(13, 0, 1, &type), 9);
}
END_TEST

/* RCCL's trees (algo rccl, Tree): channel c's chain in every domain is the
 * model's ring c (with more than 32 rings, tree 0 on the first half and
 * tree 1 on the second; else tree 1 on the copies), and every schedule
 * gives the op's result: 2, 3 and 4 domains of 4 and of 8, 1 to 64
 * channels, LL and Simple. With rome_model_81's 8 distinct rings listed 8
 * times (64 channels) every ordered pair of a domain's ranks carries
 * steps: each of the 56 directed links is one chain's way up and another's
 * way down. */
START_TEST(rccl_trees_follow_the_model_rings)
{
    static const uint8_t r4[] = {0, 1, 2, 3, 1, 0, 3, 2, 2, 3, 0, 1, 3, 2, 1, 0};
    static const uint8_t r8[] = {0, 1, 2, 3, 4, 5, 6, 7, 1, 0, 2, 4, 3, 5, 7, 6, 2, 5, 0, 3, 6, 1, 7, 4,
                                 3, 7, 0, 4, 2, 1, 6, 5, 4, 6, 2, 7, 3, 0, 5, 1, 5, 4, 7, 1, 3, 2, 6, 0,
                                 6, 3, 1, 4, 0, 7, 5, 2, 7, 2, 0, 6, 4, 1, 5, 3};
    uint8_t rings[64 * 8];
    for (uint32_t m = 4; m <= 8; m += 4)
        for (uint32_t nodes = 2; nodes <= 4; nodes++)
            for (uint32_t g = 4; g <= 64; g *= 4) /* 4, 16, 64 rings: both of connectTrees' splits */
                for (uint32_t ch = 1; ch <= 64; ch *= 4)
                    for (unsigned p = 0; p < STRATA_NCCL__PROTOS; p += 2) {
                        for (uint32_t r = 0; r < g; r++)
                            memcpy(rings + r * m, (m == 4 ? r4 : r8) + (r % m) * m, m);
                        uint32_t n = nodes * m, rounds;
                        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("rccl"), n, 64ull * n);
                        sh.domain_ranks = m;
                        sh.tune.algo = STRATA_NCCL_TREE;
                        sh.tune.proto = (strata_nccl_proto)p;
                        sh.channels = ch;
                        sh.tune.rings = rings;
                        sh.tune.n_rings = g;
                        sh.tune.ring_len = m;
                        check_op(&sh, &rounds);
                    }
    for (uint32_t r = 0; r < 64; r++)
        memcpy(rings + r * 8, r8 + ((r / 8 + r % 8) % 8) * 8, 8); /* rome_model_81's order */
    strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("rccl"), 16, 1 << 20);
    sh.domain_ranks = 8;
    sh.tune.algo = STRATA_NCCL_TREE;
    sh.tune.proto = STRATA_NCCL_SIMPLE;
    sh.channels = 64;
    sh.tune.rings = rings;
    sh.tune.n_rings = 64;
    sh.tune.ring_len = 8;
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    strata_coll_schedule(&sh, steps);
    uint64_t pair[16][16] = {{0}};
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        pair[st->src][st->dst] += st->bytes;
    }
    for (uint32_t a = 0; a < 16; a++)
        for (uint32_t b = 0; b < 16; b++)
            if (a != b && a / 8 == b / 8) /* up 8 channels of 16 KiB, down 8 others' */
                ck_assert_uint_eq(pair[a][b], 2 * 8 * ((1u << 20) / 64));
    g_array_free(steps, TRUE);
}
END_TEST

/* NCCL's rings on a full NVLink mesh of 4 GPUs (hw/nccl_mesh.h: the
 * graph's 12 channels, the 6 directed rings twice, as SURF Snellius's log
 * prints them): every schedule gives the op's result, on every protocol,
 * over 1 to 24 channels (8: rings 0-5 and again 0-1, shared unevenly, one
 * group a channel). With 24 channels (4 a ring) every ordered pair of the
 * 4 GPUs carries the same bytes, as each lies on 2 of the 6 rings, each
 * ring's share 1/6: an all-reduce of B = 73,728 B (one loop: a rank's
 * chunk B / 4 = 18,432, 3,072 a ring) sends 2 (n - 1) = 6 steps x 3,072
 * on each ring, 2 rings a pair: 36,864 = B / 2; an all-gather of 384 B a
 * rank 3 steps x 64 x 2 = 384; a reduce-scatter of 1,536 B 3 x 64 x 2 =
 * 384. One ring in rank order would put it all on 4 of the 12 pairs. */
START_TEST(nccl_mesh_rings_spread_over_every_pair)
{
    static const uint8_t six[] = {0, 1, 2, 3, 0, 1, 3, 2, 0, 2, 3, 1, 0, 2, 1, 3, 0, 3, 1, 2, 0, 3, 2, 1};
    uint8_t rings[12 * 4];
    memcpy(rings, six, sizeof(six));
    memcpy(rings + sizeof(six), six, sizeof(six));
    static const strata_op_kind kinds[] = {STRATA_OP_ALL_REDUCE, STRATA_OP_ALL_GATHER, STRATA_OP_REDUCE_SCATTER};
    static const uint64_t bytes[] = {73728, 384, 1536}, per_pair[] = {36864, 384, 384};
    static const uint32_t channels[] = {1, 5, 8, 12, 24};
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++)
        for (unsigned p = 0; p < STRATA_NCCL__PROTOS; p++)
            for (size_t c = 0; c < G_N_ELEMENTS(channels); c++) {
                uint32_t rounds;
                strata_coll_shape sh = shape1(kinds[k], strata_coll_algo_find("nccl"), 4, bytes[k] * (c + 1));
                sh.domain_ranks = 4;
                sh.tune.algo = STRATA_NCCL_RING;
                sh.tune.proto = (strata_nccl_proto)p;
                sh.channels = channels[c];
                sh.tune.rings = rings;
                sh.tune.n_rings = 12;
                sh.tune.ring_len = 4;
                check_op(&sh, &rounds);
            }
    for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
        strata_coll_shape sh = shape1(kinds[k], strata_coll_algo_find("nccl"), 4, bytes[k]);
        sh.domain_ranks = 4;
        sh.tune.algo = STRATA_NCCL_RING;
        sh.tune.proto = STRATA_NCCL_SIMPLE;
        sh.channels = 24;
        sh.tune.rings = rings;
        sh.tune.n_rings = 12;
        sh.tune.ring_len = 4;
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        strata_coll_schedule(&sh, steps);
        uint64_t pair[4][4] = {{0}};
        for (guint i = 0; i < steps->len; i++) {
            const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
            pair[st->src][st->dst] += st->src == st->dst ? 0 : st->bytes;
        }
        for (uint32_t a = 0; a < 4; a++)
            for (uint32_t b = 0; b < 4; b++)
                ck_assert_uint_eq(pair[a][b], a == b ? 0 : per_pair[k]);
        g_array_free(steps, TRUE);
    }
}
END_TEST

/* Across scale-up domains (domain_ranks < n): NCCL's rail rings and trees
 * give the op's result; the rings' hops between domains join one local
 * rank (a rail) where the domains are even in number, and a tree's first
 * chunk pays the network step's cost on each hop between domains. */
START_TEST(schedules_across_domains_give_the_result)
{
    static const uint32_t shapes[][2] = {{4, 2}, {6, 2}, {8, 4}, {16, 4}, {8, 1}};
    static const strata_op_kind kinds[] = {STRATA_OP_ALL_REDUCE, STRATA_OP_ALL_GATHER, STRATA_OP_REDUCE_SCATTER};
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++)
        for (unsigned p = 0; p < STRATA_NCCL__PROTOS; p++)
            for (unsigned k = 0; k < 3; k++)
                for (uint32_t ch = 1; ch <= 8; ch *= 2) {
                    uint32_t n = shapes[i][0], rounds;
                    strata_coll_shape sh = shape1(kinds[k], strata_coll_algo_find("nccl"), n, 40ull * n);
                    sh.domain_ranks = shapes[i][1];
                    sh.tune.algo = STRATA_NCCL_RING;
                    sh.tune.proto = (strata_nccl_proto)p;
                    sh.channels = ch;
                    sh.tune.net_step_s = 1e-6;
                    sh.tune.ring_grain = ch == 2 ? 16 : 0; /* NCCL's 16-byte chunks from v2.25 */
                    check_op(&sh, &rounds);
                    if (kinds[k] != STRATA_OP_ALL_REDUCE)
                        continue;
                    sh.algo = strata_coll_algo_find("nccl-tree");
                    check_op(&sh, &rounds);
                    sh.algo = strata_coll_algo_find("nccl-nvls-tree");
                    sh.chunk_bytes = 4;
                    check_op(&sh, &rounds);
                }
    /* hierarchical: inside the domains, across, and back; the network
     * carries 1/m of the buffer each way per rank (an all-reduce of B: the
     * domain ring's 2 (m-1)/m B and the ring across's 2 (D-1)/D B/m) */
    for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
        uint32_t n = shapes[i][0], rounds;
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("hierarchical"), n, 48ull * n);
        sh.domain_ranks = shapes[i][1];
        check_op(&sh, &rounds);
    }
    strata_coll_shape h = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("hierarchical"), 8, 64);
    h.domain_ranks = 4;
    uint32_t h_rounds;
    ck_assert_uint_eq(check_op(&h, &h_rounds), 2 * 3 * 64 / 4 + 2 * 1 * 64 / 4 / 2);
    ck_assert_uint_eq(h_rounds, 2 * 3 + 2 * 1);
    /* PAT (one rank a domain): any group size, powers of two or not */
    for (uint32_t n = 2; n <= 9; n++)
        for (unsigned k = 1; k < 3; k++) {
            uint32_t rounds;
            strata_coll_shape sh = shape1(kinds[k], strata_coll_algo_find("nccl-pat"), n, 24ull * n);
            sh.domain_ranks = 1;
            ck_assert_uint_eq(check_op(&sh, &rounds), 24ull * (n - 1) * (kinds[k] == STRATA_OP_ALL_GATHER ? n : 1));
            ck_assert_uint_eq(rounds, n <= 2 ? 1 : n <= 4 ? 2 : n <= 8 ? 3 : 4);
        }
    /* 4 domains of 4: ring hops between domains stay on a rail */
    strata_coll_shape ring = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 16, 1 << 16);
    ring.domain_ranks = 4;
    ring.tune.algo = STRATA_NCCL_RING;
    ring.channels = 8;
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    strata_coll_schedule(&ring, steps);
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->src / 4 != st->dst / 4)
            ck_assert_uint_eq(st->src % 4, st->dst % 4);
    }
    /* the tree: one chunk up and down a tree 6 high: domain 1's head (4)
     * is domain 2's first child, so it feeds domain 2's chain[1] (9), below
     * its head (8), which feeds domain 0's head (0): 3 + 1 + 1 + 1 (NCCL's
     * connectTrees counts 3 + log2(4) = 5, "a good approximation"); each
     * hop between domains pays the network step's cost */
    strata_coll_shape tree = ring;
    tree.algo = strata_coll_algo_find("nccl-tree");
    tree.in_bytes = 64;
    tree.channels = 1;
    tree.tune.net_step_s = 3e-6;
    g_array_set_size(steps, 0);
    ck_assert_uint_eq(strata_coll_schedule(&tree, steps), 2 * 6);
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert(st->delay_s == (st->src / 4 != st->dst / 4 ? 3e-6 : 0));
    }
    g_array_free(steps, TRUE);
}
END_TEST

/* NVLS_TREE at the kernel's pace: 2 domains of 4, one channel, chunks of
 * 4 bytes: pieces of 1 x 4 x 4 = 16 bytes, 40 bytes in 3 (16, 16, 8); a
 * tree of height 1 between the domains, so 3 + 1 + 2 = 6 rounds. At 8 B/s
 * every rank's round takes at least a piece's 2 s while a full piece is in
 * one of its stages (rounds 0 to 4; piece 1 leaves its last stage, the
 * multicast, in round 1 + 1 + 2 = 4) and the last piece's 1 s in round 5:
 * a step per rank and round that stays on the rank (lane 3 x 3 + 12). */
START_TEST(nvls_tree_rounds_take_the_kernels_pace)
{
    strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl-nvls-tree"), 8, 40);
    sh.domain_ranks = 4;
    sh.channels = 1;
    sh.chunk_bytes = 4;
    sh.tune.stage_bw = 8;
    uint32_t rounds;
    check_op(&sh, &rounds);
    ck_assert_uint_eq(rounds, 6);
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    strata_coll_schedule(&sh, steps);
    uint32_t paced[6] = {0};
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->src != st->dst)
            continue;
        ck_assert_uint_eq(st->lane, 21);
        ck_assert_uint_eq(st->bytes, 1);
        ck_assert_double_eq_tol(st->delay_s, st->round < 5 ? 2.0 : 1.0, 1e-12);
        paced[st->round]++;
    }
    for (uint32_t r = 0; r < 6; r++)
        ck_assert_uint_eq(paced[r], 8);
    /* without a pace (one domain, or stage_bw 0): no such step */
    sh.tune.stage_bw = 0;
    g_array_set_size(steps, 0);
    strata_coll_schedule(&sh, steps);
    for (guint i = 0; i < steps->len; i++)
        ck_assert_uint_ne(g_array_index(steps, strata_coll_step, i).src, g_array_index(steps, strata_coll_step, i).dst);
    g_array_free(steps, TRUE);
}
END_TEST

/* NVLS's copy path (unregistered buffers: all_reduce.h scatters the input
 * into the NVLS buffer and gathers the result out of it): 3 ranks, one
 * channel, chunks of 4 bytes, so pieces of 1 x 3 x 4 = 12 bytes, 30 bytes
 * in 3 (12, 12, 6) and 3 + 3 rounds. Every rank copies each piece in place
 * on lane 3 x 2 = 6 in the round of its scatter (round k for piece k:
 * bytes 12, 12, 6 in rounds 0, 1, 2) and on lane 7 in the round of its
 * gather (k + 3: rounds 3, 4, 5); the switch's copies of piece k run in
 * rounds k + 1 (reduce) and k + 2 (multicast), none in rounds 0 and 5. */
START_TEST(nvls_copies_pieces_in_and_out_of_its_buffer)
{
    strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 3, 30);
    sh.tune.algo = STRATA_NCCL_NVLS;
    sh.channels = 1;
    sh.chunk_bytes = 4;
    uint32_t rounds;
    check_op(&sh, &rounds);
    ck_assert_uint_eq(rounds, 6);
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    strata_coll_schedule(&sh, steps);
    static const uint64_t want[6] = {12, 12, 6, 12, 12, 6};
    uint64_t local[6][3] = {{0}}, remote[6] = {0};
    uint32_t last_round = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_ge(st->round, last_round); /* in round order */
        last_round = st->round;
        if (st->src != st->dst) {
            remote[st->round]++;
            continue;
        }
        ck_assert_uint_eq(st->lane, st->round < 3 ? 6 : 7);
        ck_assert_uint_eq(st->src_off, st->dst_off);
        ck_assert(!st->reduce);
        local[st->round][st->src] += st->bytes;
    }
    for (uint32_t r = 0; r < 6; r++)
        for (uint32_t q = 0; q < 3; q++)
            ck_assert_uint_eq(local[r][q], want[r]);
    ck_assert_uint_eq(remote[0], 0);
    ck_assert_uint_eq(remote[5], 0);
    for (uint32_t r = 1; r < 5; r++) /* 3 owners x 2 peers per stage: reduce, multicast, or both */
        ck_assert_uint_eq(remote[r], r == 1 || r == 4 ? 6 : 12);
    g_array_free(steps, TRUE);
}
END_TEST

/* NVLS's copy warps at their pace (algo_nccl.c nvls_pace; all_reduce.h's
 * warp split: 5 reduce warps from 7 ranks, else 7; scatter (20 - r + 1)
 * / 2, gather (20 - r) / 2; a step takes heads x ceil(ceil(chunk / 4 KiB)
 * / warps) load latencies). Load latencies of 1 us (scatter) and 2 us
 * (gather).
 * - 3 ranks, 1 channel, chunks of 4 bytes, 30 bytes (pieces 12, 12, 6):
 *   7 scatter and 6 gather warps, every chunk one hunk (the last, 6 / 3 =
 *   2 bytes rounded up to 16 KiB, is cut to the 4-byte chunk): 3 x 1 x
 *   1 us = 3 us in rounds 0-2 on lane 3 x 2 + 2 = 8, 3 x 1 x 2 us = 6 us in
 *   rounds 3-5 on lane 9, a step per rank; the values still come out right.
 * - 8 ranks, 1 channel, chunks of 64 KiB (16 hunks), 1.25 MiB: pieces of
 *   8 x 64 KiB = 512 KiB, 512, 512 and 256 KiB (a 32 KiB chunk, 8
 *   hunks): scatter (8 warps) 8 x 2 x 1 = 16 us in rounds 0 and 1, 8 x 1 x
 *   1 = 8 us in round 2; gather (7 warps) 8 x 3 x 2 = 48 us in rounds 3
 *   and 4, 8 x 2 x 2 = 32 us in round 5; lanes 3 x 7 + 2 = 23 and 24.
 * - 4 ranks, one 256 KiB piece of 64 KiB chunks: 7 scatter warps, 4 x 3 x
 *   1 = 12 us in round 0; 6 gather warps, 4 x 3 x 2 = 24 us in round 3;
 *   lanes 3 x 3 + 2 = 11 and 12.
 * - A last piece of 40 KiB over 8 ranks: 5 KiB a head, rounded up to 16
 *   KiB (4 hunks): 8 x 1 x 1 = 8 us and 8 x 1 x 2 = 16 us. */
static void nvls_paced(strata_coll_shape *sh, double want[][2], uint32_t n_rounds, uint32_t lane)
{
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(sh, steps), n_rounds);
    uint32_t count[8] = {0};
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->delay_s == 0)
            continue;
        ck_assert_uint_eq(st->src, st->dst);
        ck_assert_uint_eq(st->bytes, 1);
        ck_assert_uint_eq(st->lane, lane + (st->round >= 3));
        ck_assert_double_eq_tol(st->delay_s, want[st->round][st->round >= 3], 1e-15);
        count[st->round]++;
    }
    for (uint32_t r = 0; r < n_rounds; r++)
        ck_assert_uint_eq(count[r], want[r][r >= 3] > 0 ? strata_coll_ranks(sh) : 0);
    g_array_free(steps, TRUE);
}

START_TEST(nvls_copy_warps_pace_the_rounds)
{
    strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 3, 30);
    sh.tune.algo = STRATA_NCCL_NVLS;
    sh.channels = 1;
    sh.chunk_bytes = 4;
    sh.tune.nvls_scatter_lat_s = 1e-6;
    sh.tune.nvls_gather_lat_s = 2e-6;
    uint32_t rounds;
    check_op(&sh, &rounds);
    ck_assert_uint_eq(rounds, 6);
    double small[6][2] = {{3e-6, 0}, {3e-6, 0}, {3e-6, 0}, {0, 6e-6}, {0, 6e-6}, {0, 6e-6}};
    nvls_paced(&sh, small, 6, 8);
    sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 8, 1280ull << 10);
    sh.tune.algo = STRATA_NCCL_NVLS;
    sh.channels = 1;
    sh.chunk_bytes = 64 << 10;
    sh.tune.nvls_scatter_lat_s = 1e-6;
    sh.tune.nvls_gather_lat_s = 2e-6;
    double eight[6][2] = {{16e-6, 0}, {16e-6, 0}, {8e-6, 0}, {0, 48e-6}, {0, 48e-6}, {0, 32e-6}};
    nvls_paced(&sh, eight, 6, 23);
    sh.dims[0] = 4;
    sh.in_bytes = 256 << 10;
    double four[4][2] = {{12e-6, 0}, {0, 0}, {0, 0}, {0, 24e-6}};
    nvls_paced(&sh, four, 4, 11);
    sh.dims[0] = 8;
    sh.in_bytes = (512 + 40) << 10;
    double last[5][2] = {{16e-6, 0}, {8e-6, 0}, {0, 0}, {0, 48e-6}, {0, 16e-6}};
    nvls_paced(&sh, last, 5, 23);
    /* without the latencies (a hardware model with none): no such step */
    sh.tune.nvls_scatter_lat_s = sh.tune.nvls_gather_lat_s = 0;
    double none[5][2] = {{0}};
    nvls_paced(&sh, none, 5, 23);
}
END_TEST

/* NCCL's network step on a ring chunk's path, 2 domains of 2: rail ring 0
 * runs 0, 1, 3, 2 (domain 1 walked downwards), so the hops into
 * positions 2 (1 -> 3) and 0 (2 -> 0) cross the network. Each chunk's
 * all-reduce path takes 3 hops of its reduce-scatter and 3 of its
 * all-gather, all but the hop into its position + 1 and into its position:
 * every chunk crosses 2 x 2 - 1 = 3 times; the first, chunk 0 (positions
 * 2, 3, 0, then 1, 2, 3), crosses at steps 0 (1 -> 3), 2 (2 -> 0) and
 * 4 (1 -> 3), rounds 0, 4 and 8 of Simple's 2 slices, and only its first
 * slice of the first loop pays. A lone all-gather's chunk skips the hop
 * into its position: chunk 1 crosses twice (positions 2, 3, 0: 1 -> 3,
 * 2 -> 0 at rounds 0 and 2) where chunk 0 crosses once; a lone
 * reduce-scatter's skips the hop into position + 1: chunk 0 crosses twice
 * (positions 2, 3, 0). Over 2 domains of 8 a chunk away from the domains'
 * edges crosses 2 + 2 = 4 times. */
/* NCCL_BUFFSIZE as a run sets it (shape->tune.simple_step_bytes, a step:
 * the buffer / NCCL_STEPS): the Simple ring's chunk is ALLREDUCE_CHUNKSTEPS
 * = 4 steps (enqueue.cc calcCollChunking: stepSize x chunkSteps), 2 MiB of
 * NCCL's default 4 MiB buffer, 4 MiB of p5's 8 MiB (1 MiB a step); LL and
 * LL128 keep their own buffers (NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE); a
 * Simple tree's chunk is one step. A 16 MiB all-reduce over 2 domains of
 * 2 on one channel: loops of 1 x 4 chunks, each 3 x 2 steps of 2 slices:
 * 2 loops of 8 MiB (24 rounds) with the default, 1 of 16 MiB (12) with
 * 1 MiB steps. */
START_TEST(simple_steps_follow_the_runs_buffer)
{
    ck_assert_uint_eq(coll_nccl_ring_chunk(STRATA_NCCL_SIMPLE, 0), 2u << 20);
    ck_assert_uint_eq(coll_nccl_ring_chunk(STRATA_NCCL_SIMPLE, 1u << 20), 4u << 20);
    ck_assert_uint_eq(coll_nccl_ring_chunk(STRATA_NCCL_LL128, 1u << 20), 576000);
    ck_assert_uint_eq(coll_nccl_tree_chunk(STRATA_NCCL_SIMPLE, 0, 1u << 30, 16, 4, 8), 512u << 10);
    ck_assert_uint_eq(coll_nccl_tree_chunk(STRATA_NCCL_SIMPLE, 1u << 20, 1u << 30, 16, 4, 8), 1u << 20);
    static const uint64_t steps[] = {0, 1u << 20};
    static const uint32_t want[] = {24, 12};
    for (unsigned i = 0; i < 2; i++) {
        strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 4, 16u << 20);
        sh.domain_ranks = 2;
        sh.tune.algo = STRATA_NCCL_RING;
        sh.tune.proto = STRATA_NCCL_SIMPLE;
        sh.tune.simple_step_bytes = steps[i];
        sh.channels = 1;
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        ck_assert_uint_eq(strata_coll_schedule(&sh, steps), want[i]);
        g_array_free(steps, TRUE);
    }
}
END_TEST

START_TEST(ring_pays_the_network_step_on_a_chunks_path)
{
    static const strata_op_kind kinds[] = {STRATA_OP_ALL_REDUCE, STRATA_OP_ALL_GATHER, STRATA_OP_REDUCE_SCATTER};
    static const uint32_t want[3][3][3] = {{{0, 1, 3}, {4, 2, 0}, {8, 1, 3}},
                                           {{0, 1, 3}, {2, 2, 0}, {0, 0, 0}},
                                           {{0, 1, 3}, {2, 2, 0}, {0, 0, 0}}};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    for (unsigned k = 0; k < 3; k++) {
        strata_coll_shape sh = shape1(kinds[k], strata_coll_algo_find("nccl"), 4, 64);
        sh.domain_ranks = 2;
        sh.tune.algo = STRATA_NCCL_RING;
        sh.tune.proto = STRATA_NCCL_SIMPLE;
        sh.channels = 1;
        sh.tune.net_step_s = 3e-6;
        uint32_t rounds, paid = 0;
        check_op(&sh, &rounds);
        ck_assert_uint_eq(rounds, k == 0 ? 2 * 3 * 2 : 3);
        g_array_set_size(steps, 0);
        strata_coll_schedule(&sh, steps);
        for (guint i = 0; i < steps->len; i++) {
            const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
            if (st->delay_s == 0)
                continue;
            ck_assert_uint_lt(paid, k == 0 ? 3 : 2);
            ck_assert_double_eq(st->delay_s, 3e-6);
            ck_assert_uint_eq(st->round, want[k][paid][0]);
            ck_assert_uint_eq(st->src, want[k][paid][1]);
            ck_assert_uint_eq(st->dst, want[k][paid][2]);
            paid++;
        }
        ck_assert_uint_eq(paid, k == 0 ? 3 : 2);
    }
    /* 2 domains of 8, 8 rail rings, one loop of LL: 4 a ring (LL's steps
     * slotted, wave 32: ring g's round r on lane 2 (1 + g + 8 (r mod 8))) */
    strata_coll_shape wide = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 16, 2ull * 16 * 8 * 4);
    wide.domain_ranks = 8;
    wide.tune.algo = STRATA_NCCL_RING;
    wide.tune.proto = STRATA_NCCL_LL;
    wide.channels = 8;
    wide.tune.net_step_s = 3e-6;
    g_array_set_size(steps, 0);
    strata_coll_schedule(&wide, steps);
    uint32_t per_ring[8] = {0};
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert(st->slotted && st->lane % 2 == 0 && st->lane >= 2);
        if (st->delay_s > 0) {
            ck_assert_uint_ne(st->src / 8, st->dst / 8);
            per_ring[(st->lane / 2 - 1) % 8]++;
        }
    }
    for (uint32_t g = 0; g < 8; g++)
        ck_assert_uint_eq(per_ring[g], 4);
    g_array_free(steps, TRUE);
}
END_TEST

/* The network step's fixed cost (NCCL's ends, EFA's proxy pass: the tune's
 * net_step_s) is the pipeline's fill, paid once a collective, not once a
 * round or a loop: NCCL keeps up to NCCL_STEPS (8) steps in flight a
 * connection (NVIDIA/nccl v2.27.7-1 src/transport/net.cc sendProxyProgress
 * l. 1139 `posted < done + maxDepth`, l. 1162 `transmitted < done +
 * NCCL_STEPS`; src/device/prims_simple.h l. 115, waitPeer), so later
 * steps' costs overlap the transfers before them. 4 ranks in 2 domains of
 * 2, Simple, one channel, 64 MiB: a loop moves 4 chunks of 2 MiB
 * (STRATA_COLL_NCCL_CHUNK), so 8 loops of 2 x 3 steps x 2 slices, 96
 * rounds. The rail ring is 0, 1, 3, 2 (coll_rail_ring); it crosses into
 * positions 0 and 2. Every chunk's path crosses 3 times, so the first,
 * chunk 0, is the critical one (ring_critical_chunk): reduce-scatter step
 * 0 (round 0) 1 -> 3, step 2 (round 4) 2 -> 0, all-gather step 4 (round
 * 8) 1 -> 3, each its first slice; every other step, the 7 later loops'
 * included, pays nothing. 3 x 5.8 us in all: p5's one-operation Simple
 * step beyond the route (test_net_protocol.c, 1.5 + 2 + 4 x 0.5 + 0.3). */
START_TEST(the_network_step_is_paid_once_a_collective_not_a_loop)
{
    static const uint32_t want[3][3] = {{0, 1, 3}, {4, 2, 0}, {8, 1, 3}};
    strata_coll_shape sh = shape1(STRATA_OP_ALL_REDUCE, strata_coll_algo_find("nccl"), 4, 64ull << 20);
    sh.domain_ranks = 2;
    sh.tune.algo = STRATA_NCCL_RING;
    sh.tune.proto = STRATA_NCCL_SIMPLE;
    sh.channels = 1;
    sh.tune.net_step_s = 5.8e-6;
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 8 * 2 * 3 * 2);
    uint32_t paid = 0;
    double total = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->delay_s == 0)
            continue;
        ck_assert_uint_lt(paid, 3);
        ck_assert_uint_eq(st->round, want[paid][0]);
        ck_assert_uint_eq(st->src, want[paid][1]);
        ck_assert_uint_eq(st->dst, want[paid][2]);
        total += st->delay_s;
        paid++;
    }
    ck_assert_uint_eq(paid, 3);
    ck_assert_double_eq_tol(total, 17.4e-6, 1e-15);
    g_array_free(steps, TRUE);
}
END_TEST

static Suite *collective_suite(void)
{
    Suite *s = suite_create("collective");
    TCase *tc = tcase_create("schedules");
    /* a hang guard: the longest case takes 9 s under load in RelWithDebInfo,
     * about 6x that under the sanitizers (CI), so 60 s left too little headroom */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, ring_all_reduce_moves_2_n_minus_1_over_n);
    tcase_add_test(tc, bidir_ring_halves_each_direction);
    tcase_add_test(tc, bidir_ring_gathers_and_scatters_half_each_way);
    tcase_add_test(tc, tree_reduces_to_rank_0_and_broadcasts);
    tcase_add_test(tc, torus_rings_along_each_dimension);
    tcase_add_test(tc, ring_and_direct_gather_scatter_exchange);
    tcase_add_test(tc, nccl_ring_loops_steps_and_slices);
    tcase_add_test(tc, nccl_ring_chunk_grain_leaves_the_last_ranks_less);
    tcase_add_test(tc, nccl_ring_defaults_are_nccls);
    tcase_add_test(tc, algorithms_per_op);
    tcase_add_test(tc, nccl_and_bidir_torus_schedules_give_the_result);
    tcase_add_test(tc, nccl_double_binary_tree_is_nccls);
    tcase_add_test(tc, schedules_across_domains_give_the_result);
    tcase_add_test(tc, rccl_trees_follow_the_model_rings);
    tcase_add_test(tc, nccl_mesh_rings_spread_over_every_pair);
    tcase_add_test(tc, nvls_tree_rounds_take_the_kernels_pace);
    tcase_add_test(tc, nvls_copies_pieces_in_and_out_of_its_buffer);
    tcase_add_test(tc, nvls_copy_warps_pace_the_rounds);
    tcase_add_test(tc, ring_pays_the_network_step_on_a_chunks_path);
    tcase_add_test(tc, the_network_step_is_paid_once_a_collective_not_a_loop);
    tcase_add_test(tc, simple_steps_follow_the_runs_buffer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(collective_suite()); }
