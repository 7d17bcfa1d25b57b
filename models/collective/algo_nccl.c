/*
 * algo_nccl.c: the nccl algorithm (coll_algo.h): all-reduce, all-gather and
 * reduce-scatter as NCCL runs them, the nccl implementation's pick
 * (hw/coll_impl_nccl.c), over the group as one ring (a FLAT layout).
 *
 * tune (the cost hook): the algorithm, protocol and channels of NCCL's
 * tuning model, from the hardware's collective implementation
 * (hw/coll_impl.h: its tune; a model whose implementation has none is an
 * input error), and NCCL's fixed cost per rank (launch_s).
 * schedule, by NCCL's choice: ring all-reduce in the protocol's loops,
 * chunks and slices; ring all-gather and reduce-scatter as ring (one round
 * a step) in the protocol's format: LL (8-byte stores of 4 data bytes and a
 * flag, chunks of 32 KiB per channel), LL128 (120 data bytes of each
 * 128-byte line, 576,000-byte chunks) or Simple (nccl-ring's slices and
 * flags), each with NVLink's packet overhead; tree as tree in the
 * protocol's format; NVLS as nvls() below (the switch reduces and
 * multicasts).
 */
#include "collective/coll_kit.h"
#include "core/error.h"
#include "hw/coll_impl.h"

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
static uint64_t buffer_size(const strata_coll_sched *s, uint64_t in_bytes, strata_coll_buf buf)
{
    if (buf == STRATA_COLL_IN || s->kind == STRATA_OP_ALL_REDUCE)
        return in_bytes;
    return s->kind == STRATA_OP_ALL_GATHER ? in_bytes * s->n : in_bytes / s->n;
}

/* A copy's wire bytes, at most its source buffer's size (a copy names
 * its source and its byte count, which the checker bounds). */
static uint64_t wire_of(const strata_coll_sched *s, uint64_t in_bytes, strata_coll_buf src_buf, uint64_t wire)
{
    return MAX(1, MIN(wire, buffer_size(s, in_bytes, src_buf)));
}

/* Steps[from..]: the protocol's wire format and, on Simple, a flag each;
 * every reduction fused with its copy, as NCCL's kernels reduce what they
 * receive as it arrives (prims' recvReduceSend, recvReduceCopy:
 * src/device/reduce_scatter.h, all_reduce.h runTreeUpDown). */
static void apply_protocol(strata_coll_sched *s, guint from, uint64_t in_bytes, strata_nccl_proto p)
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
static uint32_t nvls(strata_coll_sched *s, const strata_coll_shape *shape)
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
                        uint64_t off = lo + coll_chunk_off(len, n, q), bytes = lo + coll_chunk_off(len, n, q + 1) - off;
                        strata_coll_step st = {.round = k, .src = phase == 0 ? r : q, .dst = phase == 0 ? q : r,
                                               .lane = phase == 0 ? 2 * j : 2 * (n - 1) + j, .src_off = off,
                                               .dst_off = off, .own_off = off, .reduce = phase == 0,
                                               .fused = phase == 0, .bytes = bytes, .wire_bytes = wire};
                        coll_add(s, &st);
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
        coll_add(s, &own);
        for (uint32_t j = 0; j + 1 < n; j++) {
            uint32_t r = (q + n - 1 - j) % n;
            strata_coll_buf src_buf = rs ? STRATA_COLL_IN : STRATA_COLL_OUT;
            uint64_t wire = nvls_wire(ceil_frac(total, 1, n - 1), eff);
            strata_coll_step st = {.round = 1, .src = r, .dst = q, .lane = 2 * j, .src_buf = src_buf,
                                   .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT,
                                   .src_off = (uint64_t)(rs ? q : r) * c, .dst_off = rs ? 0 : (uint64_t)r * c,
                                   .reduce = rs, .fused = rs, .bytes = c,
                                   .wire_bytes = wire_of(s, b, src_buf, wire)};
            coll_add(s, &st);
        }
    }
    return 2;
}

/* NCCL's choice (shape->nccl_algo, nccl_proto, channels): ring all-reduce
 * in the protocol's loops, chunks and slices; ring all-gather and
 * reduce-scatter as ring (one round a step) in the protocol's format;
 * tree as tree in the protocol's format; NVLS as nvls(). */
static uint32_t nccl_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    strata_nccl_proto p = shape->nccl_proto;
    uint64_t b = shape->in_bytes;
    if (shape->nccl_algo == STRATA_NCCL_NVLS)
        return nvls(s, shape);
    guint from = s->steps->len;
    if (shape->nccl_algo == STRATA_NCCL_RING && s->kind == STRATA_OP_ALL_REDUCE) {
        uint32_t rounds = coll_ring_loops(s, b, shape->channels ? shape->channels : 1, proto_chunk[p],
                                          proto_slices[p], proto_num[p], proto_den[p], p == STRATA_NCCL_SIMPLE);
        for (guint i = from; i < s->steps->len; i++) {
            strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
            st->wire_bytes = wire_of(s, b, st->src_buf, st->wire_bytes);
        }
        return rounds;
    }
    uint32_t rounds;
    if (shape->nccl_algo == STRATA_NCCL_TREE && s->kind == STRATA_OP_ALL_REDUCE)
        rounds = coll_tree(s, b);
    else
        rounds = coll_rings(s, b, false);
    apply_protocol(s, from, b, p);
    return rounds;
}

static bool nccl_tune(strata_coll_shape *shape, const strata_hw *hw, GError **err)
{
    const strata_coll_impl *impl = strata_hw_coll_impl(hw);
    if (!impl->tune) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "algo=nccl: expected a hardware model whose [interconnect] declares collectives = nccl "
                    "(its GPUs' architecture and NCCL's ring graph), got %s", strata_hw_name(hw));
        return false;
    }
    strata_coll_tuning t;
    if (!impl->tune(hw, shape->kind, strata_coll_ranks(shape), shape->domain_ranks, shape->in_bytes, &t, err))
        return false;
    shape->tuned = true;
    shape->nccl_algo = t.algo;
    shape->nccl_proto = t.proto;
    shape->channels = t.channels;
    shape->chunk_bytes = t.chunk_bytes;
    shape->nvls_efficiency = t.nvls_efficiency;
    shape->launch_s = t.launch_s;
    shape->net_step_s = t.net_step_s;
    shape->heads = t.heads;
    return true;
}

const strata_coll_algo_ops strata_coll_ops_nccl = {.schedule = nccl_schedule, .tune = nccl_tune};
