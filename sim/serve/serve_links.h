/*
 * serve_links.h: how a served model's ranks reach each other and the host,
 * from the hardware model's routes: rank 0's device memory to rank 1's
 * (the TP all-reduces' route) and to a pinned host memory on its host (the
 * swaps'), each as the route's narrowest link and summed latency; and how
 * many peers' routes into rank 0 share their busiest link, which says
 * whether an engine's peer-to-peer all-reduce kernel moves its peers' data
 * one after another (a switch port) or side by side (a full mesh).
 *
 * Invariants: with tp > 1 the hardware holds at least tp devices (else an
 * error naming the file); host_bw is 0 where no pinned host memory is
 * reachable (swapping is then refused by the run).
 */
#ifndef STRATA_SERVE_LINKS_H
#define STRATA_SERVE_LINKS_H

#include <glib.h>
#include <stdint.h>
#include "hw/hw.h"

typedef struct strata_serve_links {
    double ar_bw, ar_lat;     /* device to the next rank's device, tp > 1 (0 otherwise) */
    uint32_t ar_peers_per_link; /* the most of ranks 1..tp-1 whose routes to rank 0's device memory cross
                                 * one link (tp - 1 through one switch port, 1 on a full mesh; 0 at tp 1) */
    double host_bw, host_lat; /* device memory to pinned host memory (0: none) */
} strata_serve_links;

bool strata_serve_links_find(const strata_hw *hw, uint32_t unit, uint32_t tp, strata_serve_links *out,
                             GError **err);

/* The most swap space (--swap-space) a rank may take, in bytes. vLLM
 * refuses swap_space x tp above 70% of the host's memory ("Too large swap
 * space", CacheConfig.verify_with_parallel_config, vllm/config): here the
 * pinned host memory the swaps reach, shared by the tp ranks on rank 0's
 * host (tp, at most devices_per_host). Without one, 2^47 B (128 TiB), the
 * user address space of an x86-64 process (4-level paging), as no rank can
 * pin more. *what (g_free) says which, for a message. */
uint64_t strata_serve_links_swap_limit(const strata_hw *hw, uint32_t unit, uint32_t tp, char **what);

#endif
