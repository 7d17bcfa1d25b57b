/*
 * minheap.h: a binary min-heap in a GArray, generated per element type.
 *
 *   STRATA_HEAP_DEFINE(prefix, type, before)
 *
 * defines static inline functions on a GArray of `type` (and prefix_swap,
 * their helper):
 *   void prefix_push(GArray *h, type e)       adds e;
 *   type prefix_pop(GArray *h)                takes the top (h not empty);
 *   void prefix_sift_down(GArray *h, guint i) restores the order below
 *       element i after the caller made it later (e.g. changed the top in
 *       place: the timeline's lanes).
 * `before` is a function or macro taking (const type *a, const type *b):
 * true when a must come out before b, a strict order (irreflexive and
 * transitive). Elements tied under it come out in an order set by the
 * sequence of pushes and pops alone, the same on every run.
 *
 * The comparison is named, not passed: each expansion calls `before`
 * directly, so the compiler inlines it as in a hand-written heap (the
 * timeline's lanes are on its hot path), with no call through a function
 * pointer.
 *
 * Invariant (between calls): for every i > 0, h[(i - 1) / 2] is not after
 * h[i], i.e. !before(&h[i], &h[(i - 1) / 2]); so h[0] is an element that no
 * other comes before.
 */
#ifndef STRATA_MINHEAP_H
#define STRATA_MINHEAP_H

#include <glib.h>

#define STRATA_HEAP_DEFINE(prefix, type, before)                                                                    \
    static inline void prefix##_swap(type *a, guint i, guint j)                                                     \
    {                                                                                                               \
        type t = a[i];                                                                                              \
        a[i] = a[j];                                                                                                \
        a[j] = t;                                                                                                   \
    }                                                                                                               \
                                                                                                                    \
    static inline void prefix##_sift_down(GArray *h, guint i)                                                       \
    {                                                                                                               \
        type *a = (type *)(void *)h->data;                                                                          \
        for (;;) {                                                                                                  \
            guint l = 2 * i + 1, r = l + 1, m = i;                                                                  \
            if (l < h->len && before(&a[l], &a[m]))                                                                 \
                m = l;                                                                                              \
            if (r < h->len && before(&a[r], &a[m]))                                                                 \
                m = r;                                                                                              \
            if (m == i)                                                                                             \
                return;                                                                                             \
            prefix##_swap(a, i, m);                                                                                 \
            i = m;                                                                                                  \
        }                                                                                                           \
    }                                                                                                               \
                                                                                                                    \
    static inline void prefix##_push(GArray *h, type e)                                                             \
    {                                                                                                               \
        g_array_append_val(h, e);                                                                                   \
        type *a = (type *)(void *)h->data;                                                                          \
        for (guint i = h->len - 1; i > 0;) {                                                                        \
            guint up = (i - 1) / 2;                                                                                 \
            if (!before(&a[i], &a[up]))                                                                             \
                break;                                                                                              \
            prefix##_swap(a, i, up);                                                                                \
            i = up;                                                                                                 \
        }                                                                                                           \
    }                                                                                                               \
                                                                                                                    \
    static inline type prefix##_pop(GArray *h)                                                                      \
    {                                                                                                               \
        type *a = (type *)(void *)h->data;                                                                          \
        type top = a[0];                                                                                            \
        a[0] = a[h->len - 1];                                                                                       \
        g_array_set_size(h, h->len - 1);                                                                            \
        prefix##_sift_down(h, 0);                                                                                   \
        return top;                                                                                                 \
    }

#endif
