/*
 * algo_tree.c: the tree algorithm (coll_algo.h): all-reduce as a binomial
 * tree over the group's ranks (a FLAT layout).
 *
 * Reduce into rank 0 (round j: ranks r with r mod 2^(j+1) = 2^j send to
 * r - 2^j, which reduces), then broadcast back down the same edges: 2
 * ceil(log2 n) rounds, every step the whole buffer.
 */
#include "collective/coll_kit.h"

static uint32_t tree_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    return coll_tree(s, shape->in_bytes);
}

const strata_coll_algo_ops strata_coll_ops_tree = {.schedule = tree_schedule};
