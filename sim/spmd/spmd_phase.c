/*
 * spmd_phase.c: phases of a collective's schedule (contract in
 * spmd_phase.h).
 */
#include "spmd/spmd_phase.h"
#include <math.h>
#include <string.h>
#include "spmd/spmd_fill.h"

bool spmd_phases_allowed(strata_source *in, strata_spmd_collectives mode, const strata_spmd_classes *classes)
{
    if (mode == STRATA_SPMD_STEPS)
        return false;
    if (classes && !strata_spmd_classes_exact(classes))
        return true;
    char *first = NULL; /* the stream of the program's first collective */
    bool two = false;
    const strata_op *op = NULL;
    bool ok = strata_source_rewind(in, NULL);
    while (ok && !two && strata_source_next(in, &op, NULL) == 1) {
        if (!strata_op_kind_is_collective(op->kind))
            continue;
        if (!first)
            first = g_strdup(op->stream);
        else
            two = strcmp(first, op->stream) != 0;
    }
    g_free(first);
    (void)strata_source_rewind(in, NULL);
    return !two;
}

/* A link direction's state in the count being made (valid while its stamp
 * is the count's): the round's copies on it, the share of the round's
 * copies on it (-1: none yet), the route latency of the round's first copy
 * on it. */
typedef struct link_dir {
    uint32_t stamp;
    uint32_t load;
    double share;
    double latency;
    uint64_t bytes; /* the round bytes of the first copy on it (the share pass's) */
} link_dir;

/* A classes' directed key's crossings by the representatives' copies in
 * the count being made (valid while its stamp is the count's; scales). */
typedef struct key_cross {
    uint32_t stamp;
    uint32_t count;
} key_cross;

struct spmd_links {
    const strata_hw *hw;
    uint32_t stamp;   /* the count being made */
    link_dir *dir;    /* per link direction (2 x link + forward) */
    key_cross *cross; /* per classes' directed key */
    spmd_fill *fill;  /* a mixed round's copies (round_filled) */
    double *ends;     /* per device: its end of the phase round_filled pipelined last (0: none) */
    uint32_t devices;
};

spmd_links *spmd_links_new(const strata_hw *hw)
{
    size_t n = 2 * (size_t)strata_hw_link_count(hw) + 1;
    spmd_links *l = g_new0(spmd_links, 1);
    l->hw = hw;
    l->dir = g_new0(link_dir, n);
    l->cross = g_new0(key_cross, n);
    l->fill = spmd_fill_new((uint32_t)n, strata_hw_flow_sharing_latency(hw));
    l->devices = strata_hw_devices(hw);
    l->ends = g_new0(double, l->devices);
    return l;
}

void spmd_links_free(spmd_links *l)
{
    if (!l)
        return;
    g_free(l->dir);
    g_free(l->cross);
    spmd_fill_free(l->fill);
    g_free(l->ends);
    g_free(l);
}

uint64_t spmd_round_bytes_max(const strata_coll_step *st)
{
    if (st->wire_bytes)
        return st->wire_bytes;
    return spmd_step_rounds(st) > 1 && st->max_bytes ? st->max_bytes : st->bytes;
}

/* Two steps that differ only in their round and offsets: the same move
 * (same ranks, lane, buffers, bytes and kind), as far as time goes. */
static bool same_move(const strata_coll_step *a, const strata_coll_step *b)
{
    return a->src == b->src && a->dst == b->dst && a->lane == b->lane && a->src_buf == b->src_buf &&
           a->dst_buf == b->dst_buf && a->own_buf == b->own_buf && a->bytes == b->bytes &&
           a->wire_bytes == b->wire_bytes && a->reduce == b->reduce && a->handshake == b->handshake &&
           a->polled == b->polled && a->fused == b->fused && a->delay_s == b->delay_s && a->proxy_s == b->proxy_s &&
           a->conn_lane == b->conn_lane && a->src_lane == b->src_lane && a->src_fused == b->src_fused;
}

/* The device memory the steps of a collective move between: the model's
 * default memory on each device. */
static uint32_t step_memory(const strata_hw *hw, uint32_t device)
{
    int base = strata_hw_memory_base_index(hw, NULL);
    return strata_hw_memory_on(hw, base >= 0 ? (uint32_t)base : 0, device);
}

static uint32_t link_key(const strata_hw *hw, const strata_hop *h)
{
    return 2 * h->link + (strata_hw_link(hw, h->link)->full_duplex && h->forward);
}

/* The devices a copy goes from and to. */
typedef struct copy_ends {
    uint32_t src, dst;
} copy_ends;

/* Called for each copy of a round that crosses a link, with its devices
 * and its route; false stops the walk. */
typedef bool (*copy_visit)(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops,
                           uint32_t n, void *ctx);

/* Walks the round's copies over every group (with `into`, only those into
 * its representatives); false when a visit stopped it, or when a copy has
 * no route between its devices (the walk goes on past such a copy). */
static bool each_copy_into(spmd_links *l, const spmd_round *r, const strata_spmd_classes *into, copy_visit visit,
                           void *ctx)
{
    bool routed = true;
    for (uint32_t g = 0; g < r->devices; g++) {
        if (!spmd_group_leader(r->mesh, r->mask, g))
            continue;
        for (guint i = r->first; i < r->end; i++) {
            uint32_t q = strata_mesh_member(r->mesh, r->mask, g, r->steps[i].dst);
            uint32_t p = strata_mesh_member(r->mesh, r->mask, g, r->steps[i].src);
            const strata_hop *hops = NULL;
            uint32_t n = 0;
            if (p == q || (into && strata_spmd_class_rep(into, q) != q))
                continue; /* stays on one device, or is not simulated */
            if (!strata_hw_route(l->hw, step_memory(l->hw, p), step_memory(l->hw, q), &hops, &n, NULL))
                routed = false;
            else if (n > 0 && !visit(l, &r->steps[i], (copy_ends){p, q}, hops, n, ctx))
                return false;
        }
    }
    return routed;
}

static bool each_copy(spmd_links *l, const spmd_round *r, copy_visit visit, void *ctx)
{
    return each_copy_into(l, r, NULL, visit, ctx);
}

/* The count of one round (count_links). */
typedef struct link_count {
    uint32_t most;      /* copies on the busiest link direction */
    bool mixed_latency; /* copies of unequal route latency meet on a link direction */
} link_count;

static bool count_copy(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops, uint32_t n,
                       void *ctx)
{
    (void)at;
    link_count *c = ctx;
    double route_latency = st->delay_s; /* a step's fixed cost paces it as its route's latency does */
    for (uint32_t h = 0; h < n; h++)
        route_latency += strata_hw_link(l->hw, hops[h].link)->latency;
    for (uint32_t h = 0; h < n; h++) {
        link_dir *d = &l->dir[link_key(l->hw, &hops[h])];
        if (d->stamp != l->stamp)
            *d = (link_dir){.stamp = l->stamp, .load = 0, .share = -1, .latency = route_latency};
        else if (d->latency != route_latency)
            c->mixed_latency = true;
        uint32_t load = ++d->load; /* once: MAX() evaluates its arguments twice */
        c->most = MAX(c->most, load);
    }
    return true;
}

/* The round's copies on each link direction (l->dir[].load, for this count's
 * stamp), over every group: the one per-round link accounting. False when
 * a copy has no route. */
static bool count_links(spmd_links *l, const spmd_round *r, link_count *c)
{
    *c = (link_count){0};
    l->stamp++;
    return each_copy(l, r, count_copy, c);
}

uint32_t spmd_round_most_on_link(spmd_links *l, const spmd_round *r)
{
    link_count c;
    count_links(l, r, &c);
    return c.most;
}

/* A pass over the round's shares (round_uncontended): the first notes
 * each link direction's share, the second checks every copy against it
 * and takes the round's latency and time, and its handshake copies'
 * flags' (the least, UINT64_MAX when none, of the flags of one flight,
 * [0], and of polled ones, [1]; the most, 0 when none). */
typedef struct share_pass {
    bool first;
    uint64_t latency_ps, time_ps, least_latency_ps;
    uint64_t flag_min_ps[2], flag_max_ps, flag_latency_ps[2];
    uint64_t *lane_ps; /* per lane (n_lanes): its copies' time alone, the most */
    uint32_t n_lanes;
    bool unequal;      /* copies whose round bytes differ by more than a byte meet on a link */
} share_pass;

static bool share_copy(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops, uint32_t n,
                       void *ctx)
{
    (void)at;
    share_pass *p = ctx;
    double route = 0, least = G_MAXDOUBLE;
    for (uint32_t h = 0; h < n; h++) {
        const strata_link_spec *link = strata_hw_link(l->hw, hops[h].link);
        route += link->latency;
        least = MIN(least, link->bandwidth / l->dir[link_key(l->hw, &hops[h])].load);
    }
    uint64_t round_bytes = spmd_round_bytes_max(st);
    for (uint32_t h = 0; h < n; h++) {
        link_dir *d = &l->dir[link_key(l->hw, &hops[h])];
        if (p->first && d->share < 0) {
            d->share = least; /* the first copy's share on that link */
            d->bytes = round_bytes;
        } else if (d->share != least)
            return false; /* copies of unequal shares meet on a link */
        else if (!p->first && MAX(d->bytes, round_bytes) - MIN(d->bytes, round_bytes) > 1)
            p->unequal = true;
    }
    if (!p->first) {
        double latency = st->delay_s + route, bytes = (double)round_bytes;
        double time = latency + bytes / least;
        if (st->handshake) { /* its flag follows on the same route (a polled one there and back): the round
                              * waits for it too */
            double trips = st->polled ? 2 : 1;
            double flag = trips * (route + (double)MIN(st->bytes, STRATA_COLL_FLAG_BYTES) / least);
            uint64_t flag_ps = (uint64_t)llround(flag * 1e12);
            p->flag_min_ps[st->polled] = MIN(p->flag_min_ps[st->polled], flag_ps);
            p->flag_max_ps = MAX(p->flag_max_ps, flag_ps);
            p->flag_latency_ps[st->polled] =
                MIN(p->flag_latency_ps[st->polled], (uint64_t)llround(trips * route * 1e12));
            latency += trips * route;
            time += flag;
        }
        p->least_latency_ps = MIN(p->least_latency_ps, (uint64_t)llround((st->delay_s + route) * 1e12));
        p->latency_ps = MAX(p->latency_ps, (uint64_t)llround(latency * 1e12));
        p->time_ps = MAX(p->time_ps, (uint64_t)llround(time * 1e12));
        if (st->lane < p->n_lanes)
            p->lane_ps[st->lane] = MAX(p->lane_ps[st->lane], (uint64_t)llround(time * 1e12));
    }
    return true;
}

/* A reduce step's reduction on its receiver q, alone: the engine's
 * compute of it (spmd.c's EM_REDUCE: the received, its own and the output
 * buffer, 3 x its round's bytes, from q's memory; run_compute in
 * engine.c: the operands' latency and bytes at the memory's bandwidth)
 * plus the unit's overhead; its arithmetic (one add an element) is far
 * below its bytes' time on every shipped model and is left out. */
static double reduce_alone(const strata_hw *hw, const strata_coll_step *st, uint32_t q)
{
    const strata_memory_spec *m = strata_hw_memory(hw, step_memory(hw, q));
    int unit = strata_hw_compute_index(hw, NULL);
    uint32_t k = spmd_step_rounds(st);
    double bytes = 3.0 * (double)(k > 1 ? (st->bytes + k - 1) / k : st->bytes);
    double read = m->bandwidth > 0 ? m->latency + bytes / m->bandwidth : 0;
    return read + (unit >= 0 ? strata_hw_compute(hw, (uint32_t)unit)->overhead : 0);
}

/* One copy of a round into the filler: its fixed delay, its route's
 * latency, its bytes, its devices and its link directions. */
static void fill_copy_route(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops,
                            uint32_t n)
{
    double latency = 0;
    for (uint32_t h = 0; h < n; h++)
        latency += strata_hw_link(l->hw, hops[h].link)->latency;
    spmd_fill_copy(l->fill, st->delay_s, latency, (double)spmd_round_bytes_max(st));
    spmd_fill_devices(l->fill, at.src, at.dst);
    for (uint32_t h = 0; h < n; h++)
        spmd_fill_link(l->fill, link_key(l->hw, &hops[h]), strata_hw_link(l->hw, hops[h].link)->bandwidth);
}

/* A copy into the filler (round_filled): its fixed delay, its route's
 * latency, its bytes, its link directions, its devices, a reduce step's
 * reduction after it; ctx counts them. */
static bool fill_copy(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops, uint32_t n,
                      void *ctx)
{
    fill_copy_route(l, st, at, hops, n);
    if (st->reduce && !st->fused) /* after the copy on its lane (a fused one runs beside it) */
        spmd_fill_after(l->fill, reduce_alone(l->hw, st, at.dst));
    (*(uint64_t *)ctx)++;
    return true;
}

/* A copy into the filler without its reduction (round_shared): ctx, the
 * lanes of the copies in the order added. */
static bool fill_copy_alone(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops,
                            uint32_t n, void *ctx)
{
    fill_copy_route(l, st, at, hops, n);
    g_array_append_val((GArray *)ctx, st->lane);
    return true;
}

/* The time alone of a round whose copies get equal shares but move
 * unequal bytes on some link (XLA's multi-axis collective,
 * coll_kit_axes.c: two parts on one dimension, rings of different sizes
 * before it): the copies from a common start, shared max-min as the
 * engine shares them (spmd_fill_run: the smaller copy ends first and
 * leaves the link to the larger, which the share of all of them, bytes /
 * share, overstates: a 2x4x8 all-gather of 64 MiB in phases was 23.6%
 * above the steps); and each lane's last copy's end into lane_ps. Exact
 * for copies of equal route latency (the caller's case: no mixed
 * latency). */
static uint64_t round_shared(spmd_links *l, const spmd_round *r, uint64_t *lane_ps, uint32_t n_lanes)
{
    GArray *lanes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    spmd_fill_clear(l->fill);
    each_copy(l, r, fill_copy_alone, lanes);
    double *ends = g_new(double, MAX(lanes->len, 1));
    double last = spmd_fill_run(l->fill, ends);
    memset(lane_ps, 0, n_lanes * sizeof *lane_ps);
    for (guint i = 0; i < lanes->len; i++) {
        uint32_t lane = g_array_index(lanes, uint32_t, i);
        if (lane < n_lanes)
            lane_ps[lane] = MAX(lane_ps[lane], (uint64_t)llround(ends[i] * 1e12));
    }
    g_free(ends);
    g_array_free(lanes, TRUE);
    return (uint64_t)llround(last * 1e12);
}

/* Rounds of a pipeline simulated at most (spmd_fill_rounds), and the
 * budget of rounds x copies^2 (its cost: each start or end solves the
 * copies' rates again) that lowers it on wide rounds; below PIPE_LEAST
 * rounds, the round from a common start (spmd_fill_run). */
enum { PIPE_MOST = 64, PIPE_LEAST = 4 };
#define PIPE_BUDGET 16777216.0

/* The round's time, k rounds of it in a phase: the k rounds' copies
 * sharing their links as the engine's model shares them (spmd_fill.h),
 * each device's round starting when the step schedule's waits let it
 * (spmd_fill_rounds: its senders' and its own previous round ended, its
 * receivers' receipts in), over k. A round whose copies of unequal route
 * latency meet on a link lasts until its slowest copy ends, the fast ones
 * having left the link to it, not the slowest copy at the share of all of
 * them; and where the rounds drift apart (a ring laid over a 3D torus,
 * whose hot link's copies come from far apart on the ring), they meet on
 * the link at other dates than from a common start. */
static uint64_t round_filled(spmd_links *l, const spmd_round *r, uint32_t k)
{
    uint64_t copies = 0;
    spmd_fill_clear(l->fill);
    each_copy(l, r, fill_copy, &copies);
    double most = MIN((double)PIPE_MOST, PIPE_BUDGET / MAX((double)(copies * copies), 1.0));
    if (most < PIPE_LEAST)
        return (uint64_t)llround(spmd_fill_run(l->fill, NULL) * 1e12);
    return (uint64_t)llround(spmd_fill_rounds(l->fill, k, (uint32_t)most, l->ends) / k * 1e12);
}

/* True when no copy of the round contends (spmd_phase.h), with the
 * round's phase (rounds aside): its latency (its slowest route's, a
 * handshake copy's flag's route counted after its data's: exact when all
 * routes have the same latency, within a round's latency difference per
 * copy otherwise) and its time alone (its slowest copy's latency + bytes /
 * share, and its flag's); and the phase of its handshake copies' data,
 * whose flags, each paced by its own route, take the rest of the round:
 * hs[0] of those whose flag takes one flight, hs[1] of polled ones (each
 * zeroed when the round has none). A round whose copies get unequal
 * shares (a ring laid over a torus whose wrap-around hop shares a link)
 * stays step by step, and so does one where copies of unequal route
 * latency meet on a link (a bidirectional ring over a line without
 * wrap-around), unless mixed_ok (FAST): then the round lasts the k
 * rounds' pipeline over k (round_filled), and the phase is paced
 * (spmd.h). */
static bool round_uncontended(spmd_links *l, const spmd_round *r, uint32_t k, bool mixed_ok, strata_coll_phase *ph,
                              strata_coll_phase hs[2], uint64_t *lane_ps, uint32_t n_lanes)
{
    link_count c;
    share_pass first = {.first = true},
               second = {.first = false, .least_latency_ps = UINT64_MAX, .flag_min_ps = {UINT64_MAX, UINT64_MAX},
                         .flag_latency_ps = {UINT64_MAX, UINT64_MAX}, .lane_ps = lane_ps, .n_lanes = n_lanes};
    hs[0] = hs[1] = (strata_coll_phase){0};
    if (!count_links(l, r, &c) || (c.mixed_latency && !mixed_ok) || !each_copy(l, r, share_copy, &first) ||
        !each_copy(l, r, share_copy, &second))
        return false;
    ph->round_latency_ps = second.latency_ps;
    /* filled: the data's copies; their flags after them (the most) */
    ph->round_time_ps = c.mixed_latency ? round_filled(l, r, k) + second.flag_max_ps : second.time_ps;
    if (!c.mixed_latency && second.unequal && second.flag_max_ps == 0)
        ph->round_time_ps = round_shared(l, r, lane_ps, n_lanes);
    ph->paced = c.mixed_latency;
    ph->round_idle_ps = c.mixed_latency ? second.least_latency_ps : 0;
    for (int t = 0; t < 2; t++) { /* the least flag: a longer one ends its copy's round late by the difference */
        if (second.flag_min_ps[t] == UINT64_MAX)
            continue;
        hs[t] = *ph;
        hs[t].rounds = 1; /* there is one: the caller sets its rounds */
        hs[t].round_latency_ps -= MIN(second.flag_latency_ps[t], hs[t].round_latency_ps);
        hs[t].round_time_ps -= MIN(second.flag_min_ps[t], hs[t].round_time_ps);
    }
    return true;
}

uint32_t spmd_phase_rounds(spmd_links *l, const spmd_round *r, guint len, uint32_t round, uint32_t n_rounds,
                           uint32_t sub, bool mixed_ok, strata_coll_phase *phase, strata_coll_phase hs[2],
                           uint64_t *lane_ps, uint32_t n_lanes)
{
    *phase = (strata_coll_phase){0};
    hs[0] = hs[1] = (strata_coll_phase){0};
    memset(lane_ps, 0, n_lanes * sizeof *lane_ps);
    memset(l->ends, 0, l->devices * sizeof *l->ends);
    const strata_coll_step *steps = r->steps;
    guint first = r->first, end = r->end;
    uint32_t k = 1;
    if (spmd_step_rounds(&steps[first]) > 1) { /* a folded run: the schedule already joined its rounds */
        if (sub == 0)
            k = spmd_step_rounds(&steps[first]);
    } else {
        guint width = end - first;
        for (guint at = end; round + k < n_rounds && at + width <= len; at += width, k++) {
            if (steps[at].round != round + k || (at + width < len && steps[at + width].round == round + k))
                break; /* not a round of exactly `width` steps */
            guint j = 0;
            while (j < width && same_move(&steps[first + j], &steps[at + j]))
                j++;
            if (j < width)
                break;
        }
    }
    if (k > 1 && round_uncontended(l, r, k, mixed_ok, phase, hs, lane_ps, n_lanes)) {
        uint64_t alone = phase->round_time_ps;
        phase->rounds = k;
        /* a step that stays on its device and waits (a kernel's pace) holds
         * each round at least that long, which no link's share says */
        for (guint i = first; i < end; i++)
            if (steps[i].src == steps[i].dst && steps[i].delay_s > 0)
                phase->round_time_ps = MAX(phase->round_time_ps, (uint64_t)llround(steps[i].delay_s * 1e12));
        for (int t = 0; t < 2; t++)
            if (hs[t].rounds) {
                hs[t].rounds = k;
                hs[t].round_time_ps += phase->round_time_ps - alone;
            }
    }
    return phase->rounds > 1 ? phase->rounds : 1;
}

bool spmd_lane_phase(const strata_coll_phase *ph, const strata_coll_step *st, const uint64_t *lane_ps,
                     strata_coll_phase *own)
{
    if (ph->paced || !st->reduce || st->fused || st->handshake || !lane_ps || !lane_ps[st->lane] ||
        lane_ps[st->lane] >= ph->round_time_ps)
        return false;
    *own = *ph;
    own->round_time_ps = lane_ps[st->lane];
    return true;
}

bool spmd_phase_leads(const spmd_links *l, const strata_spmd_classes *classes, uint64_t *lead)
{
    double last = 0;
    for (uint32_t x = 0; x < l->devices; x++)
        last = MAX(last, l->ends[x]);
    memset(lead, 0, l->devices * sizeof *lead);
    if (last <= 0)
        return false;
    for (uint32_t x = 0; x < l->devices; x++) {
        uint32_t rep = classes ? strata_spmd_class_rep(classes, x) : x;
        if (l->ends[x] > 0)
            lead[rep] = MAX(lead[rep], (uint64_t)llround((last - l->ends[x]) * 1e12));
    }
    return true;
}

/* ---- scales of approximate classes ------------------------------------- */

/* The classes' directed key of a hop (2 x link + forward). */
static uint32_t class_key(const strata_hop *h) { return 2 * h->link + h->forward; }

typedef struct scale_pass {
    strata_spmd_classes *c;
} scale_pass;

/* A representative's copy: its crossings of each orbit. */
static bool cross_copy(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops, uint32_t n,
                       void *ctx)
{
    (void)at;
    (void)st;
    const scale_pass *p = ctx;
    for (uint32_t h = 0; h < n; h++) {
        key_cross *x = &l->cross[spmd_classes_key_rep(p->c, class_key(&hops[h]))];
        if (x->stamp != l->stamp)
            *x = (key_cross){.stamp = l->stamp, .count = 0};
        x->count++;
    }
    return true;
}

/* Any copy: each link's load over its orbit's crossings. */
static bool scale_copy(spmd_links *l, const strata_coll_step *st, copy_ends at, const strata_hop *hops, uint32_t n,
                       void *ctx)
{
    (void)at;
    (void)st;
    const scale_pass *p = ctx;
    for (uint32_t h = 0; h < n; h++) {
        uint32_t o = spmd_classes_key_rep(p->c, class_key(&hops[h]));
        const key_cross *x = &l->cross[o];
        if (x->stamp == l->stamp && x->count > 0)
            spmd_classes_raise_scale(p->c, o, (double)l->dir[link_key(l->hw, &hops[h])].load / x->count);
    }
    return true;
}

void spmd_round_scale(spmd_links *l, const spmd_round *r, strata_spmd_classes *c)
{
    link_count count;
    scale_pass p = {c};
    count_links(l, r, &count);
    each_copy_into(l, r, c, cross_copy, &p);
    each_copy(l, r, scale_copy, &p);
}
