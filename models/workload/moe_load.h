/*
 * moe_load.h: how the tokens of one mixture-of-experts layer spread over
 * its experts and over the expert groups of an `expert` mesh axis: the
 * stated load imbalance (`imbalance=`), the capacity (`capacity_factor=`)
 * and what each expert group receives and computes.
 *
 * Imbalance, as each expert's share of the routed tokens (the same on every
 * device that routes):
 *   uniform   1/E each (Megatron's benchmarks force this balance:
 *             moe_router_force_load_balancing);
 *   zipf:S    expert e (0-based) gets a share proportional to 1/(e+1)^S,
 *             S > 0 (the hottest experts are the first group's);
 *   FILE      one token count per line, E lines (blank lines and `#`
 *             comments skipped), shares proportional to the counts.
 * n routed rows (tokens x top_k on one device) split by the largest
 * remainder: rows_e = floor(n share_e), the rows left over one each to the
 * largest fractional parts (lowest expert first on a tie), so they sum to n.
 *
 * Capacity (Switch Transformer 2.2, GShard; Megatron moe_utils.py
 * `capacity = ceil(num_tokens / num_experts * capacity_factor)` with
 * num_tokens = tokens x top_k on the rank): C rows per expert per device;
 * rows beyond C are dropped (they skip the layer through the residual) and
 * every expert's buffer is padded to C (GShard's and MaxText's dense
 * dispatch [E, C, d]; Megatron's --moe-pad-expert-input-to-capacity), so
 * the dispatch buffer is E x C rows and every group computes E x C rows.
 * Without a capacity factor (Megatron's default, dropless) nothing is
 * dropped: group g receives from each of the ep devices of its expert axis
 * the rows of its E/ep experts and computes exactly those; the all-to-all
 * (equal chunks, traces/FORMAT.md) sends each group the largest group's
 * chunk, so the dispatch buffer is ep x that chunk.
 *
 * Invariants: shares sum to 1 (within rounding) and are >= 0; group_rows
 * has ep entries, max_rows is their largest; send_rows = ep x chunk.
 */
#ifndef STRATA_WL_MOE_LOAD_H
#define STRATA_WL_MOE_LOAD_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct wl_moe_load wl_moe_load;

/* The load `imbalance` states for `experts` experts; NULL and an input error
 * naming the parameter (or FILE:LINE) when it does not parse. */
wl_moe_load *wl_moe_load_new(const char *imbalance, uint64_t experts, GError **err);
void wl_moe_load_free(wl_moe_load *l);
/* rows[e] for n routed rows (E entries, summing to n). */
void wl_moe_load_split(const wl_moe_load *l, uint64_t n, uint64_t *rows);

/* One layer's rows on the devices of one expert axis of size ep. */
typedef struct wl_moe_rows {
    uint64_t capacity;   /* C (0: dropless) */
    uint64_t chunk;      /* rows each device sends each group (and gets back) */
    uint64_t send_rows;  /* the dispatch buffer's rows: ep x chunk */
    uint64_t dropped;    /* rows dropped on each device */
    uint64_t *group_rows; /* [ep]: the rows group g's experts compute (g_free) */
    uint64_t max_rows;   /* the busiest group's */
} wl_moe_rows;

/* The rows of n routed rows per device over ep groups of E/ep experts with
 * capacity factor cf (<= 0: dropless). */
void wl_moe_rows_plan(const wl_moe_load *l, uint64_t n, uint64_t ep, double cf, wl_moe_rows *r);

#endif
