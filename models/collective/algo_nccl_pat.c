/*
 * algo_nccl_pat.c: the nccl-pat algorithm (coll_algo.h): NCCL's PAT
 * ("Parallel Aggregated Trees", NCCL_ALGO=PAT) all-gather and
 * reduce-scatter, which NCCL runs at one GPU per node (tuning.cc
 * ncclPatEnable); algo=nccl runs it where NCCL's tuning model picks PAT.
 *
 * tune: NCCL's tuning model limited to PAT (its fixed cost, 8 us, and its
 * network step's; coll_library_tune).
 * schedule: PAT sends each rank's data along binomial trees whose steps
 * aggregate: ceil(log2 n) steps, the k-th moving 2^k chunks (fewer in the
 * last when n is no power of two), so a rank sends (n - 1) chunks in all as
 * a ring does, in log2 n steps instead of n - 1 (NVIDIA/nccl
 * src/include/collectives.h PatAGAlgorithm, PatRSAlgorithm; the kernel's
 * exact order of its aggregated steps is not modelled, only their count
 * and sizes: Bruck's all-gather). All-gather: in round k rank r receives,
 * from rank r + 2^k, chunks r + 2^k .. r + 2^k + c_k - 1 (mod n), c_k =
 * min(2^k, n - 2^k), from its IN in round 0 (when each rank also copies
 * its IN to its own chunk of OUT), from its OUT after; after round k rank r
 * holds chunks r .. r + 2^(k+1) - 1. Reduce-scatter is the same trees
 * backwards: in round K - 1 - k rank q receives from q - 2^k the partial
 * sums of chunks q .. q + c_k - 1, reduced into its IN (round K - 1, the
 * last, into its OUT: chunk q is then complete). A run that wraps past
 * rank n - 1 is two copies (lanes 0 and 2). Copies carry the Simple
 * protocol's format; each round crosses the network, after NCCL's network
 * step cost.
 */
#include "collective/coll_kit.h"

/* Steps for chunks [first, first + count) (mod n) from src to dst in
 * `round`, split where the run wraps; `ag`: all-gather (else
 * reduce-scatter, `last`: its final round, into OUT). */
static void run(strata_coll_sched *s, uint64_t c, uint32_t src, uint32_t dst, uint32_t first, uint32_t count,
                uint32_t round, bool ag, bool from_in, bool last)
{
    uint32_t n = s->n;
    for (uint32_t part = 0, at = first, left = count; left > 0; part++) {
        uint32_t len = MIN(left, n - at);
        strata_coll_step st = {.round = round, .lane = 2 * part, .src = src, .dst = dst, .bytes = len * c,
                               .src_buf = ag && !from_in ? STRATA_COLL_OUT : STRATA_COLL_IN,
                               .src_off = from_in ? 0 : at * c, .dst_buf = ag || last ? STRATA_COLL_OUT : STRATA_COLL_IN,
                               .dst_off = ag ? at * c : last ? 0 : at * c, .own_buf = STRATA_COLL_IN,
                               .own_off = at * c, .reduce = !ag, .fused = !ag};
        coll_add(s, &st);
        left -= len;
        at = 0;
    }
}

static uint32_t pat_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint32_t n = s->n, steps = 0;
    bool ag = s->kind == STRATA_OP_ALL_GATHER;
    uint64_t c = ag ? shape->in_bytes : shape->in_bytes / n;
    while ((1u << steps) < n)
        steps++;
    guint from = s->steps->len;
    for (uint32_t k = 0; k < steps; k++) {
        uint32_t d = 1u << k, count = MIN(d, n - d);
        for (uint32_t r = 0; r < n; r++) {
            if (ag) /* r receives from r + d */
                run(s, c, (r + d) % n, r, (r + d) % n, count, k, true, k == 0, false);
            else /* r + d receives from r, in round steps - 1 - k */
                run(s, c, r, (r + d) % n, (r + d) % n, count, steps - 1 - k, false, false, k == 0);
        }
    }
    for (uint32_t r = 0; ag && r < n; r++) { /* each rank's own chunk, IN to OUT */
        strata_coll_step own = {.lane = 1, .src = r, .dst = r, .src_buf = STRATA_COLL_IN,
                                .dst_buf = STRATA_COLL_OUT, .dst_off = r * c, .bytes = c};
        coll_add(s, &own);
    }
    coll_wire wire = coll_nccl_wire(shape);
    coll_wire_apply(s, from, shape->in_bytes, &wire);
    return steps;
}

static bool pat_tune(strata_coll_shape *shape, const strata_hw *hw, GError **err)
{
    return coll_library_tune(shape, hw, 1u << STRATA_NCCL_PAT, err);
}

const strata_coll_algo_ops strata_coll_ops_nccl_pat = {.schedule = pat_schedule, .tune = pat_tune};
