/*
 * blocktree.h: an intrusive balanced search tree of free blocks, each
 * subtree knowing the largest value in it, shared by the flat heap's two
 * free-block indexes (heap.h): by (size, offset) for best-fit, by offset
 * for first-fit and next-fit.
 *
 * A node lives inside the block it indexes (no allocation per insert) and
 * carries its key (k1, k2), ordered lexicographically, and a value. Each
 * node also keeps `max`, the largest value in its subtree, so the
 * lowest-keyed node whose value reaches a size is found in O(log n): with
 * key = offset and value = size, that is first-fit's lowest-addressed free
 * block that fits.
 *
 * Design: a treap (Seidel and Aragon, 1996): a binary search tree on the
 * key and a min-heap on random priorities, which keeps the expected depth
 * O(log n) whatever the order of inserts. The priorities come from a
 * xorshift generator with a fixed seed, so the shape, like every answer, is
 * the same on every run; the answers depend only on the keys and values.
 *
 * Invariants:
 *  1. in-order traversal is strictly increasing in (k1, k2): keys are
 *     unique;
 *  2. a node's priority is not below its parent's;
 *  3. n->max = max(n->value, n->left->max, n->right->max);
 *  4. parent links mirror child links; the root's parent is NULL.
 * Debug builds assert them at each node an insert, remove or rekey touches
 * (O(1)), and over the whole tree at the owner's destroy
 * (strata_blocktree_ok).
 */
#ifndef STRATA_ALLOC_BLOCKTREE_H
#define STRATA_ALLOC_BLOCKTREE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct strata_tnode {
    struct strata_tnode *left, *right, *parent;
    uint64_t k1, k2; /* the key */
    uint64_t value;
    uint64_t max;    /* largest value in this subtree */
    uint32_t priority;
} strata_tnode;

typedef struct strata_blocktree {
    strata_tnode *root;
    uint32_t seed; /* xorshift32 state for priorities */
    uint64_t count;
} strata_blocktree;

void strata_blocktree_init(strata_blocktree *t);
/* Inserts n with its k1, k2 and value set; its key must not be in t. */
void strata_blocktree_insert(strata_blocktree *t, strata_tnode *n);
void strata_blocktree_remove(strata_blocktree *t, strata_tnode *n);
/* Gives n a new key and value: in place when the key keeps its rank (only
 * the maxima above it change), else by a remove and an insert. */
void strata_blocktree_rekey(strata_blocktree *t, strata_tnode *n, uint64_t k1, uint64_t k2, uint64_t value);

/* The first node with key >= (k1, k2), or NULL. */
strata_tnode *strata_blocktree_lower_bound(const strata_blocktree *t, uint64_t k1, uint64_t k2);
/* The last node with key <= (k1, k2), or NULL. */
strata_tnode *strata_blocktree_floor(const strata_blocktree *t, uint64_t k1, uint64_t k2);
strata_tnode *strata_blocktree_last(const strata_blocktree *t);
/* The lowest-keyed node with k1 >= k1_min and value >= need, or NULL. */
strata_tnode *strata_blocktree_fit_from(const strata_blocktree *t, uint64_t k1_min, uint64_t need);
/* The largest value of all nodes but the last (0 when none). */
uint64_t strata_blocktree_max_but_last(const strata_blocktree *t);

#ifndef NDEBUG
/* Debug builds: invariants 1-4 over the whole tree and count = its nodes
 * (O(n): for assert() at an owner's destroy, not per op). */
bool strata_blocktree_ok(const strata_blocktree *t);
#endif

#endif
