/*
 * blocktree.c: the intrusive treap of free blocks (see blocktree.h).
 */
#include "alloc/blocktree.h"
#include <assert.h>
#include <stddef.h>

#define BLOCKTREE_SEED 0x9E3779B9u

void strata_blocktree_init(strata_blocktree *t)
{
    *t = (strata_blocktree){.root = NULL, .seed = BLOCKTREE_SEED, .count = 0};
}

static uint32_t next_priority(strata_blocktree *t)
{
    uint32_t x = t->seed;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    t->seed = x;
    return x;
}

static bool key_less(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2)
{
    return a1 < b1 || (a1 == b1 && a2 < b2);
}

static uint64_t max_of(const strata_tnode *n)
{
    return n ? n->max : 0;
}

/* Recomputes n->max from its value and its children; true when it changed. */
static bool update(strata_tnode *n)
{
    uint64_t m = n->value, l = max_of(n->left), r = max_of(n->right);
    if (l > m)
        m = l;
    if (r > m)
        m = r;
    bool changed = m != n->max;
    n->max = m;
    return changed;
}

#ifndef NDEBUG
/* n against its parent and children only (O(1)): invariants 1 to 4 where
 * they touch n. */
static bool node_ok(const strata_blocktree *t, const strata_tnode *n)
{
    if (n == NULL)
        return true;
    const strata_tnode *p = n->parent, *l = n->left, *r = n->right;
    uint64_t m = n->value;
    if (l && l->max > m)
        m = l->max;
    if (r && r->max > m)
        m = r->max;
    return n->max == m                                                             /* invariant 3 */
        && (p ? (p->left == n || p->right == n) : t->root == n)                    /* invariant 4 */
        && (!l || l->parent == n) && (!r || r->parent == n)                        /* invariant 4 */
        && (!p || p->priority <= n->priority)                                      /* invariant 2 */
        && (!l || key_less(l->k1, l->k2, n->k1, n->k2))                            /* invariant 1 */
        && (!r || key_less(n->k1, n->k2, r->k1, r->k2));                           /* invariant 1 */
}

/* The subtree at n: every node ok, keys inside (lo, hi) exclusive where
 * given; adds its nodes to *count. */
static bool subtree_ok(const strata_blocktree *t, const strata_tnode *n, const strata_tnode *lo,
                       const strata_tnode *hi, uint64_t *count)
{
    if (n == NULL)
        return true;
    ++*count;
    return node_ok(t, n) && (!lo || key_less(lo->k1, lo->k2, n->k1, n->k2))
        && (!hi || key_less(n->k1, n->k2, hi->k1, hi->k2)) && subtree_ok(t, n->left, lo, n, count)
        && subtree_ok(t, n->right, n, hi, count);
}

bool strata_blocktree_ok(const strata_blocktree *t)
{
    uint64_t count = 0;
    return (!t->root || t->root->parent == NULL) && subtree_ok(t, t->root, NULL, NULL, &count)
        && count == t->count;
}
#endif

/* Puts `to` where `from` hangs from parent p (or the root). */
static void replace_child(strata_blocktree *t, strata_tnode *p, const strata_tnode *from, strata_tnode *to)
{
    if (!p)
        t->root = to;
    else if (p->left == from)
        p->left = to;
    else
        p->right = to;
}

/* Rotates n above its parent. */
static void rotate_up(strata_blocktree *t, strata_tnode *n)
{
    strata_tnode *p = n->parent, *g = p->parent;
    if (p->left == n) {
        p->left = n->right;
        if (n->right)
            n->right->parent = p;
        n->right = p;
    } else {
        p->right = n->left;
        if (n->left)
            n->left->parent = p;
        n->left = p;
    }
    p->parent = n;
    n->parent = g;
    replace_child(t, g, p, n);
    update(p);
    update(n);
}

void strata_blocktree_insert(strata_blocktree *t, strata_tnode *n)
{
    n->left = n->right = NULL;
    n->max = n->value;
    n->priority = next_priority(t);
    strata_tnode *parent = NULL, **link = &t->root;
    while (*link) {
        parent = *link;
        if (parent->max < n->value)
            parent->max = n->value;
        link = key_less(n->k1, n->k2, parent->k1, parent->k2) ? &parent->left : &parent->right;
    }
    *link = n;
    n->parent = parent;
    while (n->parent && n->priority < n->parent->priority)
        rotate_up(t, n);
    t->count++;
    assert(node_ok(t, n));         /* invariants 1-4 at the new node */
    assert(node_ok(t, n->parent)); /* invariants 1-4 where it hangs */
}

void strata_blocktree_remove(strata_blocktree *t, strata_tnode *n)
{
    while (n->left && n->right)
        rotate_up(t, n->left->priority < n->right->priority ? n->left : n->right);
    strata_tnode *child = n->left ? n->left : n->right, *p = n->parent;
    if (child)
        child->parent = p;
    replace_child(t, p, n, child);
    /* Ancestors' maxima may only fall; stop once one stays. */
    strata_tnode *at = p; /* where n hung: for the assert */
    (void)at;
    for (; p && update(p); p = p->parent)
        ;
    n->left = n->right = n->parent = NULL;
    t->count--;
    assert(node_ok(t, at));    /* invariants 1-4 where n hung */
    assert(node_ok(t, child)); /* invariants 1-4 at what took its place */
}

/* The nodes before and after n in key order. */
static strata_tnode *neighbour(const strata_tnode *n, bool after)
{
    const strata_tnode *c = after ? n->right : n->left;
    if (c) {
        for (const strata_tnode *d = after ? c->left : c->right; d; d = after ? d->left : d->right)
            c = d;
        return (strata_tnode *)c;
    }
    while (n->parent && (after ? n->parent->right : n->parent->left) == n)
        n = n->parent;
    return n->parent;
}

void strata_blocktree_rekey(strata_blocktree *t, strata_tnode *n, uint64_t k1, uint64_t k2, uint64_t value)
{
    const strata_tnode *before = neighbour(n, false), *after = neighbour(n, true);
    if ((before && !key_less(before->k1, before->k2, k1, k2)) || (after && !key_less(k1, k2, after->k1, after->k2))) {
        strata_blocktree_remove(t, n);
        n->k1 = k1;
        n->k2 = k2;
        n->value = value;
        strata_blocktree_insert(t, n);
        return;
    }
    /* Still in order where it stands: only the maxima on its path change. */
    n->k1 = k1;
    n->k2 = k2;
    n->value = value;
    for (strata_tnode *p = n; p && update(p); p = p->parent)
        ;
    assert(node_ok(t, n)); /* invariants 1-4 at the rekeyed node */
}

strata_tnode *strata_blocktree_lower_bound(const strata_blocktree *t, uint64_t k1, uint64_t k2)
{
    strata_tnode *best = NULL;
    for (strata_tnode *n = t->root; n;) {
        if (key_less(n->k1, n->k2, k1, k2)) {
            n = n->right;
        } else {
            best = n;
            n = n->left;
        }
    }
    return best;
}

strata_tnode *strata_blocktree_floor(const strata_blocktree *t, uint64_t k1, uint64_t k2)
{
    strata_tnode *best = NULL;
    for (strata_tnode *n = t->root; n;) {
        if (key_less(k1, k2, n->k1, n->k2)) {
            n = n->left;
        } else {
            best = n;
            n = n->right;
        }
    }
    return best;
}

strata_tnode *strata_blocktree_last(const strata_blocktree *t)
{
    strata_tnode *n = t->root;
    while (n && n->right)
        n = n->right;
    return n;
}

/* The lowest-keyed node of n's subtree with value >= need, or NULL. */
static strata_tnode *fit_in(strata_tnode *n, uint64_t need)
{
    if (!n || n->max < need)
        return NULL;
    for (;;) {
        if (n->left && n->left->max >= need)
            n = n->left;
        else if (n->value >= need)
            return n;
        else
            n = n->right; /* its max holds need: n->max did and the rest did not */
    }
}

strata_tnode *strata_blocktree_fit_from(const strata_blocktree *t, uint64_t k1_min, uint64_t need)
{
    if (k1_min == 0)
        return fit_in(t->root, need);
    /* In key order from the first node at or above k1_min: the node, its
     * right subtree, then the nearest ancestor it lies left of, and so on;
     * a subtree whose max is below need costs one comparison. */
    strata_tnode *n = strata_blocktree_lower_bound(t, k1_min, 0);
    while (n) {
        if (n->value >= need)
            return n;
        strata_tnode *right = fit_in(n->right, need);
        if (right)
            return right;
        while (n->parent && n->parent->right == n)
            n = n->parent;
        n = n->parent;
    }
    return NULL;
}

uint64_t strata_blocktree_max_but_last(const strata_blocktree *t)
{
    uint64_t m = 0;
    for (const strata_tnode *n = t->root; n; n = n->right) {
        uint64_t l = max_of(n->left);
        if (l > m)
            m = l;
        if (n->right && n->value > m)
            m = n->value;
    }
    return m;
}
