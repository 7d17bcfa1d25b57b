/*
 * hw_internal.h: the hardware model's struct, shared by hw.c (loading and
 * accessors) and hw_route.c (routes). Not for use outside sim/hw/.
 */
#ifndef STRATA_HW_INTERNAL_H
#define STRATA_HW_INTERNAL_H

#include "hw/hw.h"

typedef struct route {
    strata_hop *hops; /* NULL when n == 0 */
    uint32_t n;
    bool reachable;
} route;

struct strata_hw {
    char *name;
    char *source;
    char *origin;
    bool sched_xla; /* [hardware] sched = xla */
    GStringChunk *strings;
    GArray *memories; /* strata_memory_spec */
    GArray *links;    /* strata_link_spec */
    GArray *computes; /* strata_compute_spec */
    uint32_t default_memory;
    route *routes; /* memory_count^2 */
    GHashTable *params; /* [params NAME]: name -> "k=v,..." (owned) */
};

/* Fills hw->routes from hw->memories and hw->links (at least one memory). */
void hw_compute_routes(strata_hw *hw);

#endif
