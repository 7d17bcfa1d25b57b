/*
 * spmd.c: the SPMD expansion (contract in spmd.h).
 *
 * Design: each input op becomes a short list of `emit` records (plain
 * structs: what to emit, on which device and lane, from which peer), and
 * next() renders one record at a time into one reusable output op whose
 * strings live in reusable GStrings, so no heap is touched per op once the
 * buffers have grown. A plain op gives one record per device that runs it;
 * a collective gives, per round of its schedule, every group's steps (the
 * groups of a mesh axis run the same schedule side by side), so only one
 * round is held at a time. Every op handed out carries device=D, the
 * device that runs it (the bound op's device: no consumer reads D back out
 * of a name).
 *
 * Ordering of a collective, on every device d of the group and for its
 * op stream S (lane 0) and lanes L > 0 (streams S~L); the round events
 * are S~eL@d, lane 0's S~e0@d (spmd_names.h):
 *   start:  alloc the receive buffers S~tL@d (temp), record S~e0@d;
 *   round:  per step received at d on lane L from device p: wait S~e0@p
 *           (p's previous round, or its start), on L > 0 also wait S~e0@d;
 *           copy (a handshake step: then a copy of the flag, 8 bytes, on
 *           the same route), and reduce (a fused step, or FAST's paced
 *           phase: on lane L+1 at once, with the same waits, reading the
 *           receive buffer S~tL@d); then every lane L > 0 that worked records
 *           S~eL@d, lane 0 waits for it, and lane 0 records S~e0@d; then
 *           every sender p waits for the S~e0@d of its receivers and records
 *           S~e0@p again (a round ends for a sender when what it sent has
 *           arrived, so a buffer is not reused while it is read); after a
 *           paced phase of k >= n / 2 rounds the group's leader waits for
 *           every S~e0 and records its own, which the others wait for;
 *   end:    free the receive buffers.
 * A slotted step (coll_sched.h: NCCL's connections) waits for no S~e0@d,
 * its sender for no receiver; every lane L > 0 waits for S~e0@d once, after
 * the start's record. A step with a connection's lane C (coll_sched.h
 * conn_lane) runs its fixed cost on C (after S~e0@p), C then records
 * S~eC@d, and every copy of the connection waits for S~eC@d: NCCL's proxy
 * posts a connection's steps in order (C records once at the start too).
 * A step with a source lane (coll_sched.h src_lane: NCCL's ring step waits
 * for its own ring's receipt) waits for S~eL@p (and S~e{L+1}@p where that
 * receipt reduced) in place of S~e0@p, on its lane and its connection's;
 * such lanes record once at the start too. With classes, p's lane L is
 * named by its representative's lane that stands for it (s->lane_map).
 * Every wait of a round is emitted before the round's records, so a wait
 * always names the record of the previous round (FORMAT.md: a wait waits
 * for the latest record before it in file order).
 */
#include "spmd/spmd.h"
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "core/error.h"
#include "collective/coll_algo.h"
#include "spmd/spmd_phase.h"
#include "spmd/spmd_shape.h"
#include "spmd/spmd_names.h"
#include "spmd/spmd_schedules.h"
#include "core/mesh.h"
#include "hw/coll_host.h"
#include "trace/check.h"

#include "spmd/spmd_internal.h"

/* ---- the model's devices --------------------------------------------- */

uint32_t strata_spmd_devices(const strata_hw *hw) { return strata_hw_devices(hw); }

/* ---- planning: input op -> emits --------------------------------------- */

static void push(spmd *s, emit_kind kind, uint32_t device, uint32_t lane, uint32_t peer, uint32_t peer_lane)
{
    emit e = {.kind = (uint8_t)kind, .device = device, .lane = lane, .peer = peer, .peer_lane = peer_lane};
    g_array_append_val(s->emits, e);
}

static G_GNUC_PRINTF(3, 4) bool fail(const spmd *s, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strata_vfail_at(err, strata_source_origin(s->in), s->cur->line, fmt, ap);
    va_end(ap);
    return false;
}

static gint compare_u32(gconstpointer a, gconstpointer b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether device d's ops are handed out: with classes, its class's
 * representative's only. */
static bool expanded(const spmd *s, uint32_t d) { return !s->classes || spmd_classes_is_rep(s->classes, d); }

/* The device whose names stand for d's: with classes, its representative
 * (which, by symmetry, does what d does at the same dates). */
static uint32_t named(const spmd *s, uint32_t d) { return s->classes ? strata_spmd_class_rep(s->classes, d) : d; }

#define ONLY_ALL UINT32_MAX

/* Whether device d takes part in the current collective (device=: its
 * group, or for a permute its sender and receiver). */
static bool takes_part(const spmd *s, uint32_t d)
{
    if (s->only_leader == ONLY_ALL)
        return true;
    if (s->only_src != ONLY_ALL)
        return d == s->only_src || d == s->only_dst;
    return strata_mesh_member(s->mesh, s->mask, d, 0) == s->only_leader;
}

/* Whether the step from p is one of the current collective's (a
 * permute with device=D: D's only). */
static bool step_kept(const spmd *s, uint32_t p) { return s->only_src == ONLY_ALL || p == s->only_src; }

/* The waits of a step received at q on `lane` from p: p's previous round
 * (or its start) and, on a lane other than 0 and when `own`, q's own (a
 * slotted step: its lane's order and the collective's start hold it). */
static void wait_round(spmd *s, uint32_t q, uint32_t lane, uint32_t p, bool own)
{
    if (p != q)
        push(s, EM_WAIT, q, lane, named(s, p), 0);
    if (lane != 0 && own)
        push(s, EM_WAIT, q, lane, q, 0);
}

/* The waits of step st received at q on `lane` from p: with a src_lane
 * (coll_sched.h: NCCL's step waits for its own ring's receipt), p's
 * records of that lane and, where that receipt reduced, of the lane after
 * it, named as p's representative's lanes (lane_map: the symmetry that
 * moves p onto it moves the rings' lanes too); else p's whole round
 * (wait_round). */
static void wait_source(spmd *s, uint32_t q, uint32_t lane, uint32_t p, const strata_coll_step *st, bool own)
{
    if (!st->src_lane || p == q || s->lanes_unmapped) {
        wait_round(s, q, lane, p, own);
        return;
    }
    for (uint32_t l = st->src_lane; l <= st->src_lane + st->src_fused; l++)
        push(s, EM_WAIT, q, lane, named(s, p), s->lane_map ? s->lane_map[(size_t)p * s->n_lanes + l] : l);
    if (lane != 0 && own)
        push(s, EM_WAIT, q, lane, q, 0);
}

/* Round [first, end) of the current collective. */
static spmd_round round_of(const spmd *s, guint first, guint end)
{
    return (spmd_round){(const strata_coll_step *)(void *)s->steps->data, first, end, s->mesh, s->mask, s->devices};
}

/* 1 + the index of ph among the current collective's phases (added when new). */
static uint32_t phase_id(spmd *s, const strata_coll_phase *ph)
{
    GArray *phases = s->info->phases;
    for (guint i = 0; i < phases->len; i++) {
        const strata_coll_phase *p = &g_array_index(phases, strata_coll_phase, i);
        if (p->rounds == ph->rounds && p->round_latency_ps == ph->round_latency_ps &&
            p->round_time_ps == ph->round_time_ps && p->paced == ph->paced &&
            p->round_idle_ps == ph->round_idle_ps)
            return i + 1;
    }
    g_array_append_val(phases, *ph);
    return phases->len;
}

/* A round's phase, as spmd_phase_rounds() decided it. */
typedef struct decision {
    uint32_t rounds;
    strata_coll_phase phase, hs[2]; /* hs: a handshake copy's data's (spmd_phase_rounds) */
    bool leads;        /* a paced phase's, per representative (spmd_phase_leads) */
    uint64_t *lane_ps; /* per lane: its copies' round time alone (spmd_phase_rounds), in the block after lead_ps */
    uint64_t lead_ps[];
} decision;

/* The phase that starts at round r (steps[first, end)) of the current
 * collective: decided over every group once per schedule and round (a
 * pure function of the model, the mesh and the schedule, which is one of
 * s->sig: the layers of a model repeat their collectives), then recalled. */
static uint32_t decide(spmd *s, const spmd_round *r, strata_coll_phase *ph, strata_coll_phase hs[2],
                       const uint64_t **lead_ps, const uint64_t **lane_ps)
{
    *lead_ps = *lane_ps = NULL;
    if (!s->phases || s->only_leader != ONLY_ALL) /* STEPS, collectives beside each other, device= */
        return 1;                                  /* every round as it is */
    uint64_t words[8] = {s->sig[0], s->sig[1], s->sig[2], s->sig[3], s->sig[4], r->first, s->round, s->sub};
    GBytes *key = g_bytes_new(words, sizeof words);
    decision *d = g_hash_table_lookup(s->decided, key);
    if (d)
        g_bytes_unref(key);
    else {
        bool fast = s->mode == STRATA_SPMD_FAST;
        if (fast && s->classes && !strata_spmd_classes_exact(s->classes))
            spmd_round_scale(s->links, r, s->classes); /* the orbits' most loaded links */
        decision got;
        uint64_t *lanes = g_newa(uint64_t, s->n_lanes);
        got.rounds = spmd_phase_rounds(s->links, r, s->steps->len, s->round, s->rounds, s->sub, fast, &got.phase,
                                       got.hs, lanes, s->n_lanes);
        size_t leads = got.phase.paced ? s->devices : 0;
        d = g_malloc(sizeof *d + (leads + s->n_lanes) * sizeof(uint64_t));
        *d = got;
        d->lane_ps = memcpy(&d->lead_ps[leads], lanes, s->n_lanes * sizeof *lanes);
        d->leads = got.phase.paced && spmd_phase_leads(s->links, s->classes, d->lead_ps);
        g_hash_table_insert(s->decided, key, d);
    }
    *ph = d->phase;
    hs[0] = d->hs[0];
    hs[1] = d->hs[1];
    *lead_ps = d->leads ? d->lead_ps : NULL;
    *lane_ps = d->lane_ps;
    return d->rounds;
}

/* The records that end a round (steps[first, end)) on every device that
 * worked in it (s->touched: its lanes), then the senders' waits for their
 * receivers and records (a round ends for a sender when what it sent has
 * arrived). */
static void end_round(spmd *s, const strata_coll_step *steps, guint first, guint end, const uint64_t *lead_ps)
{
    guint from = s->emits->len; /* the round's records: those pushed here */
    for (guint x = 0; x < s->expanded_devs->len; x++) {
        uint32_t d = g_array_index(s->expanded_devs, uint32_t, x);
        bool any = false;
        if (!takes_part(s, d))
            continue;
        for (uint32_t l = 0; l < s->n_lanes; l++) {
            if (!s->touched[(size_t)d * s->n_lanes + l])
                continue;
            any = true;
            if (l > 0) {
                push(s, EM_RECORD, d, l, d, l);
                push(s, EM_WAIT, d, 0, d, l);
            }
        }
        if (any)
            push(s, EM_RECORD, d, 0, d, 0);
    }
    memset(s->touched, 0, (size_t)s->devices * s->n_lanes);
    for (guint x = 0; x < s->leaders->len; x++) {
        uint32_t g = g_array_index(s->leaders, uint32_t, x);
        for (guint i = first; i < end; i++) {
            uint32_t p = strata_mesh_member(s->mesh, s->mask, g, steps[i].src);
            if (!expanded(s, p) || !step_kept(s, p))
                continue;
            uint32_t q = strata_mesh_member(s->mesh, s->mask, g, steps[i].dst);
            if (p != q && !steps[i].slotted) {
                push(s, EM_WAIT, p, 0, named(s, q), 0);
                s->touched[(size_t)p * s->n_lanes] = 1;
            }
        }
    }
    for (guint x = 0; x < s->expanded_devs->len; x++) {
        uint32_t d = g_array_index(s->expanded_devs, uint32_t, x);
        if (s->touched[(size_t)d * s->n_lanes])
            push(s, EM_RECORD, d, 0, d, 0);
    }
    for (guint i = from; lead_ps && i < s->emits->len; i++) { /* a synced phase's ends: fences (sync_groups) */
        emit *e = &g_array_index(s->emits, emit, i);
        e->bytes = e->kind == EM_RECORD ? lead_ps[e->device] : 0;
    }
}

/* After a paced phase of k >= n / 2 rounds, lane 0 of each device waits
 * until all of its group have ended it (the leader waits for all and
 * records, the others wait for that): the steps' rounds pass a held
 * device's lateness to a ring of n within n / 2 rounds, a phase's one
 * flow per copy does not (devices not held would end it early). The waits
 * are fences with each class's lead (lead_ps, NULL: none; engine.c). */
static void sync_groups(spmd *s, const uint64_t *lead_ps)
{
    for (guint x = 0; x < s->leaders->len; x++) {
        uint32_t g = g_array_index(s->leaders, uint32_t, x), n = s->info->desc.group_size;
        uint32_t lead = named(s, strata_mesh_member(s->mesh, s->mask, g, 0));
        memset(s->touched, 0, (size_t)s->devices * s->n_lanes);
        for (int pass = 1; pass <= 2 && expanded(s, lead); pass++) { /* 1: the leader's waits; 2: the others' */
            for (uint32_t j = 0; j < n; j++) {
                uint32_t p = named(s, strata_mesh_member(s->mesh, s->mask, g, j));
                if (p == lead || s->touched[(size_t)p * s->n_lanes] != pass - 1 || (pass == 2 && !expanded(s, p)))
                    continue; /* once each */
                s->touched[(size_t)p * s->n_lanes] = (uint8_t)pass;
                push(s, EM_WAIT, pass == 1 ? lead : p, 0, pass == 1 ? p : lead, 0);
                g_array_index(s->emits, emit, s->emits->len - 1).bytes = lead_ps ? lead_ps[pass == 1 ? lead : p] : 0;
            }
            if (pass == 1)
                push(s, EM_RECORD, lead, 0, lead, 0);
        }
    }
    memset(s->touched, 0, (size_t)s->devices * s->n_lanes);
}

/* A time on q's lane: a delay emit, in ps in its bytes (spmd_render.c EM_DELAY). */
static void push_delay(spmd *s, uint32_t q, uint32_t lane, double seconds)
{
    emit d = {.kind = EM_DELAY, .device = q, .lane = lane, .bytes = (uint64_t)llround(seconds * 1e12)};
    g_array_append_val(s->emits, d);
}

/* Whether the proxy paces the step's connection (coll_sched.h proxy_s) in a charged round. */
static bool paced_step(const strata_coll_step *st, bool charged)
{
    return st->conn_lane && st->proxy_s > 0 && charged;
}

/* A step's fixed cost (delay_s), received at q from p, where it is
 * charged (`charged`: not a phase's), before its copy: on its lane; with
 * a connection's lane (coll_sched.h conn_lane: NCCL's proxy serves a
 * connection's steps in order), on that lane, once p has received what
 * the step forwards, after the connection's earlier costs, then recorded;
 * and the copy of every step of the connection waits for the latest such
 * record (the collective's start records it first). A paced connection
 * (proxy_s) holds its proxy's posts on that lane instead: the pace, then
 * (a step with a fixed cost) the wait for p, recorded as the step's post;
 * its copy waits for the post and its fixed cost (the flight) follows the
 * copy on the step's own lane (flight_after_copy), so the next post
 * follows this one by the pace, not by the pace and the flight, and a
 * connection's copies reach the NIC in post order (coll_sched.h proxy_s,
 * docs/clusters.md wave 47). */
static void fixed_cost(spmd *s, const strata_coll_step *st, uint32_t q, uint32_t p, bool charged)
{
    uint32_t lane = st->conn_lane ? st->conn_lane : st->lane;
    if (paced_step(st, charged)) {
        push_delay(s, q, lane, st->proxy_s);
        if (st->delay_s > 0)
            wait_source(s, q, lane, p, st, false);
        push(s, EM_RECORD, q, lane, q, lane);
        push(s, EM_WAIT, q, st->lane, q, lane);
        return; /* the fixed cost follows the copy (flight_after_copy) */
    }
    if (st->delay_s > 0 && charged) {
        if (st->conn_lane)
            wait_source(s, q, lane, p, st, false);
        push_delay(s, q, lane, st->delay_s);
    }
    if (st->conn_lane && st->delay_s > 0 && charged)
        push(s, EM_RECORD, q, lane, q, lane);
    if (st->conn_lane)
        push(s, EM_WAIT, q, st->lane, q, lane);
}

/* A paced step's fixed cost (fixed_cost), on its lane after its copy:
 * NCCL's QP sends a connection's steps in post order (net.cc v2.27.7-1
 * l. 1210: one isend a step on the connection's comm), so a step's bytes
 * go on the wire before the next post's, not beside them; the lane's
 * end-of-round record covers copy and cost, which the next step from q
 * waits for (wait_source). A fused reduction (lane + 1) starts at the
 * copy's end, beside the cost, and the step that forwards its result
 * waits for both lanes: max(cost, reduction), which is main's figure
 * where the NIC is not shared (holding the reduction after the cost
 * needs a record mid-round, which later waits on this lane would bind
 * to; docs/clusters.md wave 47). */
static void flight_after_copy(spmd *s, const strata_coll_step *st, uint32_t q, bool charged)
{
    if (paced_step(st, charged) && st->delay_s > 0)
        push_delay(s, q, st->lane, st->delay_s);
}

/* Emits one round (with a phase, its first: each step stands for its rounds) of the collective, for every group. */
static void plan_round(spmd *s)
{
    const strata_coll_step *steps = (const strata_coll_step *)(void *)s->steps->data;
    guint first = s->step_at, end = first;
    while (end < s->steps->len && steps[end].round == steps[first].round)
        end++;
    spmd_round r = round_of(s, first, end);
    strata_coll_phase ph = {0}, hs[2] = {{0}}, own; /* own: a reduce step's copy's, timed by its lane */
    const uint64_t *lead_ps, *lane_ps;
    uint32_t rounds = decide(s, &r, &ph, hs, &lead_ps, &lane_ps);
    /* the phase its copies and reductions stand for, its handshake copies'
     * data's (the round less their flags) and their flags' (each paced by
     * its own route: latency 0) */
    uint32_t phase = rounds > 1 ? phase_id(s, &ph) : 0, hs_phase[2] = {0, 0}, flag_phase = 0;
    /* a folded run of k rounds (strata_coll_step.rounds) whose bytes are
     * their sum: as one phase, each copy moves ceil(sum / k) a round (the
     * engine moves k times that: at most k - 1 bytes more than the sum);
     * contended, round by round, the j-th k-th of the sum */
    uint32_t run = spmd_step_rounds(&steps[first]);
    memset(s->touched, 0, (size_t)s->devices * s->n_lanes);
    for (guint x = 0; x < s->leaders->len; x++) {
        uint32_t g = g_array_index(s->leaders, uint32_t, x);
        for (guint i = first; i < end; i++) {
            const strata_coll_step *st = &steps[i];
            uint32_t q = strata_mesh_member(s->mesh, s->mask, g, st->dst);
            if (!expanded(s, q)) /* the device's member first: with classes most steps go elsewhere */
                continue;
            uint32_t p = strata_mesh_member(s->mesh, s->mask, g, st->src);
            if (!step_kept(s, p))
                continue;
            wait_source(s, q, st->lane, p, st, !st->slotted);
            fixed_cost(s, st, q, p, rounds == 1); /* a phase's round latency carries it */
            uint64_t bytes = st->wire_bytes ? st->wire_bytes : st->bytes;
            if (run > 1)
                bytes = rounds == run ? (st->bytes + run - 1) / run
                                      : share_of(st->bytes, run, s->sub + 1) - share_of(st->bytes, run, s->sub);
            emit e = {.kind = EM_COPY, .device = q, .lane = st->lane, .peer = named(s, p), .from = p,
                      .phase = phase && spmd_lane_phase(&ph, st, lane_ps, &own) ? phase_id(s, &own) : phase,
                      .bytes = bytes, .peer_lane = RECV_LANE(st),
                      .src_buf = (uint8_t)st->src_buf, .dst_buf = st->reduce ? TMP_BUF : (uint8_t)st->dst_buf};
            g_array_append_val(s->emits, e);
            if (st->handshake) { /* the flag follows the data on the same route */
                const strata_coll_phase *own_hs = &hs[st->polled];
                if (phase && !hs_phase[st->polled]) /* none: every such copy stays on its device */
                    hs_phase[st->polled] = own_hs->rounds > 1 ? phase_id(s, own_hs) : phase;
                if (phase && !flag_phase)
                    flag_phase = phase_id(s, &(strata_coll_phase){ph.rounds, 0, 0, false, 0});
                g_array_index(s->emits, emit, s->emits->len - 1).phase = hs_phase[st->polled];
                emit flag = e;
                flag.bytes = MIN(st->bytes, STRATA_COLL_FLAG_BYTES);
                flag.phase = flag_phase;
                for (int trip = 0; trip < (st->polled ? 2 : 1); trip++) /* a polled one: there and back */
                    g_array_append_val(s->emits, flag);
            }
            flight_after_copy(s, st, q, rounds == 1);
            s->touched[(size_t)q * s->n_lanes + st->lane] = 1;
            if (st->reduce) {
                e.kind = EM_REDUCE;
                e.bytes = run > 1 ? bytes : st->bytes;
                e.peer_lane = RECV_LANE(st); /* its receive buffer's */
                e.dst_buf = (uint8_t)st->dst_buf;
                e.own_buf = (uint8_t)st->own_buf;
                /* beside the copy, on the next lane: a fused step's; a paced phase's, which the
                 * rounds' pace holds (spmd_fill_after), as the steps' run between the rounds */
                if (st->fused || (ph.paced && s->beside)) {
                    e.lane = st->fused ? st->lane + 1 : s->beside + st->lane;
                    wait_source(s, q, e.lane, p, st, !st->slotted);
                    s->touched[(size_t)q * s->n_lanes + e.lane] = 1;
                }
                g_array_append_val(s->emits, e);
            }
        }
    }
    bool sync = ph.paced && 2 * rounds >= s->info->desc.group_size;
    end_round(s, steps, first, end, sync ? lead_ps : NULL);
    if (sync)
        sync_groups(s, lead_ps);
    if (run > 1 && rounds == 1) { /* a contended run, round by round */
        s->round++;
        if (++s->sub == run) {
            s->sub = 0;
            s->step_at = end;
        }
    } else {
        s->step_at = end + (guint)(run > 1 ? 0 : rounds - 1) * (end - first);
        s->round += rounds;
    }
    if (s->round < s->rounds)
        return;
    for (guint x = 0; x < s->expanded_devs->len; x++) {
        uint32_t d = g_array_index(s->expanded_devs, uint32_t, x);
        for (uint32_t l = 0; l < s->n_lanes && takes_part(s, d); l++)
            if (s->tmp_size[l])
                push(s, EM_FREE_TMP, d, l, d, l);
        if (s->floor_lane && takes_part(s, d) && spmd_floor_time(s, d) > 0) { /* the call ends after the floor */
            push(s, EM_RECORD, d, s->floor_lane, d, s->floor_lane);
            push(s, EM_WAIT, d, 0, d, s->floor_lane);
            push(s, EM_RECORD, d, 0, d, 0);
        }
    }
}

/* The groups of the current collective's axes to walk: each by its
 * leader, ascending; with classes only those holding a representative
 * (the others' steps hand out nothing). */
static void find_leaders(spmd *s)
{
    g_array_set_size(s->leaders, 0);
    if (s->only_leader != ONLY_ALL) {
        g_array_append_val(s->leaders, s->only_leader);
        return;
    }
    for (guint x = 0; x < s->expanded_devs->len; x++) {
        uint32_t g = strata_mesh_member(s->mesh, s->mask, g_array_index(s->expanded_devs, uint32_t, x), 0);
        g_array_append_val(s->leaders, g);
    }
    g_array_sort(s->leaders, compare_u32);
    guint n = 0;
    for (guint x = 0; x < s->leaders->len; x++)
        if (n == 0 || g_array_index(s->leaders, uint32_t, n - 1) != g_array_index(s->leaders, uint32_t, x))
            g_array_index(s->leaders, uint32_t, n++) = g_array_index(s->leaders, uint32_t, x);
    g_array_set_size(s->leaders, n);
}

static strata_coll_info *next_info(spmd *s, const strata_op *op, const strata_coll_algo *algo, uint32_t n)
{
    strata_coll_info *info;
    if (s->n_coll < s->infos->len) {
        info = g_ptr_array_index(s->infos, s->n_coll);
        assert(info->desc.index == s->n_coll && info->desc.kind == op->kind); /* invariant 3: the same op again */
    } else {
        info = g_new0(strata_coll_info, 1);
        info->desc.index = s->n_coll;
        info->desc.axis = g_strdup(op->axis);
        info->phases = g_array_new(FALSE, FALSE, sizeof(strata_coll_phase));
        g_ptr_array_add(s->infos, info);
    }
    s->n_coll++;
    info->desc.line = op->line;
    info->desc.kind = op->kind;
    info->desc.algo = algo->name;
    info->desc.group_size = n;
    info->desc.bytes = s->refs.bytes;
    return info;
}

/* The lanes the collective's start records (s->conn: its connections'
 * and its steps' sources' lanes) and, with classes and steps that wait for
 * their own ring (src_lane), the representatives' lanes that stand for
 * each device's (s->lane_map, built once a schedule). */
static void mark_lanes(spmd *s)
{
    s->conn = g_renew(uint8_t, s->conn, s->n_lanes);
    memset(s->conn, 0, s->n_lanes);
    bool per_ring = false; /* src_lane steps: their lanes recorded at the start, and mapped with classes */
    for (guint i = 0; i < s->steps->len; i++) {
        const strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        s->conn[st->conn_lane] = 1;
        for (uint32_t l = st->src_lane; st->src_lane && l <= st->src_lane + st->src_fused; l++)
            s->conn[l] = per_ring = 1;
    }
    s->conn[0] = 0;
    s->lane_map = NULL;
    s->lanes_unmapped = false;
    if (per_ring && s->classes) {
        GBytes *key = g_bytes_new(s->sig, sizeof s->sig);
        gpointer map = NULL;
        if (!g_hash_table_lookup_extended(s->lane_maps, key, NULL, &map)) {
            map = spmd_classes_lane_maps(s->classes, s->mesh, s->mask, s->steps, s->n_lanes);
            g_hash_table_insert(s->lane_maps, g_bytes_ref(key), map);
        }
        g_bytes_unref(key);
        s->lane_map = map;
        s->lanes_unmapped = !map;
    }
}

/* Plans the start and the first round of a collective. */
static bool plan_collective(spmd *s, const strata_op *op, GError **err)
{
    char *why = NULL;
    const strata_coll_algo *algo = spmd_coll_algo(s->hw, s->mesh, op, &s->mask, &why);
    if (!algo) {
        fail(s, err, "%s", why);
        g_free(why);
        return false;
    }
    s->only_leader = s->only_src = s->only_dst = ONLY_ALL;
    if (op->has_device) { /* D's group only; a permute: D's send only */
        s->only_leader = strata_mesh_member(s->mesh, s->mask, op->device, 0);
        if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE) {
            s->only_src = op->device;
            s->only_dst = strata_mesh_shifted(s->mesh, s->mask, op->device, op->shift);
        }
    }
    strata_coll_shape sh;
    if (!spmd_coll_shape(s->hw, s->mesh, op, &s->refs, algo, s->mask, s->mode != STRATA_SPMD_STEPS, &sh, &why)) {
        fail(s, err, "%s", why);
        g_free(why);
        return false;
    }
    uint32_t n = strata_coll_ranks(&sh);
    s->launch_s = sh.tune.launch_s;
    s->host = sh.tuned ? sh.tune.host : (strata_coll_host){.ranks_per_process = 1};
    uint64_t sig[5] = {op->kind, s->mask, (uint64_t)(uintptr_t)algo, sh.in_bytes, (uint64_t)(int64_t)sh.shift};
    memcpy(s->sig, sig, sizeof sig);
    s->rounds = spmd_schedules_get(s->schedules, s->sig, &sh, s->steps);
    guint widest_at;
    uint64_t widest = spmd_schedule_widest_round(s->steps, &widest_at); /* one group */
    uint64_t concurrent = widest * (s->devices / n);
    if (s->classes) /* the copies simulated: those into the representatives */
        concurrent = (concurrent * strata_spmd_classes_count(s->classes) + s->devices - 1) / s->devices;
    spmd_round widest_round = round_of(s, widest_at, widest_at + (guint)widest);
    uint32_t most = concurrent > STRATA_SPMD_MAX_CONCURRENT_STEPS
                        ? spmd_round_most_on_link(s->links, &widest_round)
                        : 0;
    if (concurrent > STRATA_SPMD_MAX_CONCURRENT_STEPS &&
        (most > STRATA_SPMD_SPARSE_LINK_COPIES || concurrent > STRATA_SPMD_MAX_SPARSE_STEPS))
        return fail(s, err, "%s over %u devices (algo=%s): a round of its schedule moves %" G_GUINT64_FORMAT
                    " copies at once over the %u group(s), up to %u on one link, at most %u (or %u when no "
                    "link carries more than %u: the engine shares every link among the copies on it, at a cost "
                    "that grows with their square); use a smaller group",
                    strata_op_kind_name(op->kind), n, algo->name, concurrent, s->devices / n, most,
                    STRATA_SPMD_MAX_CONCURRENT_STEPS, STRATA_SPMD_MAX_SPARSE_STEPS, STRATA_SPMD_SPARSE_LINK_COPIES);
    s->round = 0;
    s->sub = 0;
    s->step_at = 0;
    s->n_lanes = 1;
    s->beside = 0;
    bool slotted = false; /* its lanes then wait for its start once, not each round */
    for (guint i = 0; i < s->steps->len; i++) {
        const strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        slotted |= st->slotted;
        s->n_lanes = MAX(s->n_lanes, MAX(st->lane + 1 + (st->reduce && st->fused), st->conn_lane + 1));
        s->beside |= st->reduce && !st->fused && s->mode == STRATA_SPMD_FAST;
    }
    s->beside = s->beside ? s->n_lanes : 0;
    s->n_lanes += s->beside;
    /* back-to-back calls: the host's floor on a lane of its own, which
     * the collective's end joins (coll_host.h) */
    s->floor_lane = strata_coll_host_floor(&s->host) > 0 ? s->n_lanes++ : 0;
    s->tmp_size = g_renew(uint64_t, s->tmp_size, s->n_lanes);
    memset(s->tmp_size, 0, s->n_lanes * sizeof *s->tmp_size);
    for (guint i = 0; i < s->steps->len; i++) {
        const strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        if (st->reduce)
            s->tmp_size[RECV_LANE(st)] = MAX(s->tmp_size[RECV_LANE(st)], spmd_round_bytes_max(st));
    }
    s->touched = g_renew(uint8_t, s->touched, (size_t)s->devices * s->n_lanes);
    mark_lanes(s);
    unsigned bits = strata_dtype_bits(s->refs.dtype);
    s->bytes_per_element = bits ? bits / 8.0 : 4.0;
    s->info = next_info(s, op, algo, n);
    bool tuned = sh.tuned;
    s->info->desc.nccl_algorithm = !tuned ? NULL : sh.tune.msccl ? "MSCCL" : strata_nccl_algo_name(sh.tune.algo);
    s->info->desc.nccl_protocol = tuned ? strata_nccl_proto_name(sh.tune.proto) : NULL;
    s->info->desc.nccl_channels = tuned ? sh.channels : 0;
    find_leaders(s);
    for (guint x = 0; x < s->expanded_devs->len; x++) {
        uint32_t d = g_array_index(s->expanded_devs, uint32_t, x);
        if (!takes_part(s, d))
            continue;
        for (uint32_t l = 0; l < s->n_lanes; l++)
            if (s->tmp_size[l]) {
                emit e = {.kind = EM_ALLOC_TMP, .device = d, .lane = l, .bytes = s->tmp_size[l]};
                g_array_append_val(s->emits, e);
            }
        if (spmd_launch_time(s, d) > 0)
            push(s, EM_LAUNCH, d, 0, d, 0);
        push(s, EM_RECORD, d, 0, d, 0);
        for (uint32_t l = 1; slotted && l < s->n_lanes; l++)
            push(s, EM_WAIT, d, l, d, 0);
        for (uint32_t l = 1; l < s->n_lanes; l++) /* the connections' and the sources' lanes: a first record */
            if (s->conn[l])
                push(s, EM_RECORD, d, l, d, l);
        if (s->floor_lane && spmd_floor_time(s, d) > 0) { /* from the launch's end: H in all */
            if (!slotted)
                push(s, EM_WAIT, d, s->floor_lane, d, 0);
            push(s, EM_FLOOR, d, s->floor_lane, d, 0);
        }
    }
    if (s->rounds > 0)
        plan_round(s);
    return true;
}

/* Reads input ops until one gives emits. 1: planned, 0: end, -1: error. */
static int plan_next(spmd *s, GError **err)
{
    assert(s->next_emit >= s->emits->len); /* invariant 2: one input op's round at a time */
    g_array_set_size(s->emits, 0);
    s->next_emit = 0;
    if (s->cur && strata_op_kind_is_collective(s->cur->kind) && s->round < s->rounds) {
        plan_round(s);
        return 1;
    }
    s->cur = NULL;
    const strata_op *op;
    int got = strata_source_next(s->in, &op, err);
    if (got <= 0)
        return got;
    if (!strata_checker_feed(s->checker, op, &s->refs, err))
        return -1;
    s->cur = op;
    if (op->kind == STRATA_OP_OPTION) {
        if (strcmp(op->name, "mesh") == 0 && !s->mesh)
            s->mesh = strata_mesh_parse(op->value, NULL); /* the checker accepted it */
        push(s, EM_OPTION, 0, 0, 0, 0);
        return 1;
    }
    if (strata_op_kind_is_collective(op->kind))
        return plan_collective(s, op, err) ? 1 : -1;
    bool all = s->mesh && !op->has_device;
    uint32_t only = op->has_device ? op->device : 0;
    for (uint32_t d = 0; d < s->devices; d++)
        if ((all || d == only) && expanded(s, d))
            push(s, EM_PLAIN, d, 0, 0, 0);
    return 1;
}

/* ---- the source --------------------------------------------------------- */

static int spmd_next(void *self, const strata_op **op, GError **err)
{
    spmd *s = self;
    while (s->next_emit >= s->emits->len) {
        int got = plan_next(s, err);
        if (got <= 0)
            return got;
    }
    const emit *e = &g_array_index(s->emits, emit, s->next_emit++);
    s->last = (strata_spmd_step){STRATA_COLL_NONE, 0, 0, 0};
    if (e->kind == EM_OPTION)
        s->out = *s->cur;
    else if (e->kind == EM_PLAIN)
        spmd_render_plain(s, e->device);
    else
        spmd_render_step(s, e);
    *op = &s->out;
    return 1;
}

static void end_pass(spmd *s)
{
    strata_checker_free(s->checker);
    strata_mesh_free(s->mesh);
    s->mesh = NULL;
}

/* Back to the state before the first op: a fresh checker, no mesh yet. */
static void start_pass(spmd *s)
{
    end_pass(s);
    s->checker = strata_checker_new(strata_source_origin(s->in));
    strata_checker_set_devices(s->checker, s->devices);
    strata_checker_set_namer(s->checker, &strata_spmd_program_namer); /* the program's names */
}

static bool spmd_rewind(void *self, GError **err)
{
    spmd *s = self;
    start_pass(s);
    s->cur = NULL;
    s->rounds = s->round = s->n_coll = 0;
    s->last = (strata_spmd_step){STRATA_COLL_NONE, 0, 0, 0};
    g_array_set_size(s->emits, 0);
    s->next_emit = 0;
    return strata_source_rewind(s->in, err);
}

static void info_free(gpointer p)
{
    strata_coll_info *info = p;
    g_free(info->desc.axis);
    g_array_free(info->phases, TRUE);
    g_free(info);
}

static void spmd_destroy(void *self)
{
    spmd *s = self;
    end_pass(s);
    strata_source_free(s->in);
    g_free(s->tmp_size);
    g_ptr_array_free(s->infos, TRUE);
    g_array_free(s->emits, TRUE);
    g_free(s->touched);
    g_free(s->conn);
    spmd_links_free(s->links);
    spmd_classes_free(s->classes);
    g_free(s->note);
    g_hash_table_destroy(s->decided);
    g_hash_table_destroy(s->lane_maps);
    spmd_schedules_free(s->schedules);
    g_array_free(s->leaders, TRUE);
    g_array_free(s->expanded_devs, TRUE);
    g_array_free(s->steps, TRUE);
    for (int i = 0; i < STR__COUNT; i++)
        g_string_free(s->strs[i], TRUE);
    for (int i = 0; i < 3; i++) {
        g_ptr_array_free(s->s_lists[i], TRUE);
        g_ptr_array_free(s->lists[i], TRUE);
    }
    g_free(s);
}

static const strata_source_vtable spmd_vtable = {spmd_next, spmd_rewind, spmd_destroy};

static void free_gstring(gpointer p) { g_string_free(p, TRUE); }

strata_spmd_step strata_spmd_step_of(const strata_source *src)
{
    const spmd *s = strata_source_self(src, &spmd_vtable);
    return s ? s->last : (strata_spmd_step){STRATA_COLL_NONE, 0, 0, 0};
}

bool strata_spmd_is_expansion(const strata_source *src)
{
    return strata_source_self(src, &spmd_vtable) != NULL;
}

const strata_coll_info *strata_spmd_coll(const strata_source *src, uint32_t coll)
{
    const spmd *s = strata_source_self(src, &spmd_vtable);
    if (!s || coll == STRATA_COLL_NONE || coll > s->infos->len)
        return NULL;
    return g_ptr_array_index(s->infos, coll - 1);
}

const strata_coll_phase *strata_spmd_phase(const strata_source *src, uint32_t coll, uint32_t phase)
{
    const strata_coll_info *info = strata_spmd_coll(src, coll);
    if (!info || phase == 0 || phase > info->phases->len)
        return NULL;
    return &g_array_index(info->phases, strata_coll_phase, phase - 1);
}

const strata_spmd_classes *strata_spmd_classes_of(const strata_source *src)
{
    const spmd *s = strata_source_self(src, &spmd_vtable);
    return s ? s->classes : NULL;
}

strata_source *strata_spmd_expand(strata_source *src, const strata_hw *hw)
{
    return strata_spmd_expand_as(src, hw, STRATA_SPMD_PHASES);
}

const char *strata_spmd_note(const strata_source *src)
{
    const spmd *s = strata_source_self(src, &spmd_vtable);
    return s ? s->note : NULL;
}

bool strata_spmd_fell_back(const strata_source *src)
{
    const spmd *s = strata_source_self(src, &spmd_vtable);
    return s && s->fell_back;
}

/* CLASSES and AUTO: the classes, exact; where there are none and every
 * device's run would move more than max_copies copies in a round, AUTO
 * takes FAST's (when FAST finds some); else every device runs. Past
 * max_copies either says so in s->note. Sets s->mode to the mode that
 * runs. */
static void classes_exact_or_fast(spmd *s, strata_source *src, bool may_fall_back, uint64_t max_copies)
{
    uint64_t widest = 0;
    s->mode = STRATA_SPMD_CLASSES;
    s->classes = spmd_classes_find(src, s->hw, false, &widest);
    if (s->classes || widest <= max_copies)
        return;
    char *head = g_strdup_printf("no exact symmetry of the %u devices, and every device's run would move "
                                 "%" G_GUINT64_FORMAT " copies in a round, more than %" G_GUINT64_FORMAT
                                 " (the engine's sharing costs about their square a round)",
                                 s->devices, widest, max_copies);
    if (may_fall_back && (s->classes = spmd_classes_find(src, s->hw, true, NULL))) {
        s->mode = STRATA_SPMD_FAST;
        s->fell_back = true;
        s->note = g_strdup_printf("%s: running --collectives fast (%u simulated, symmetry %s, approximate); "
                                  "--collectives phases or steps runs every device exactly",
                                  head, strata_spmd_classes_count(s->classes),
                                  strata_spmd_classes_describe(s->classes));
    } else if (may_fall_back)
        s->note = g_strdup_printf("%s: simulating every device (no approximate symmetry either), which may take "
                                  "long", head);
    else
        s->note = g_strdup_printf("%s: --collectives classes simulates every device, which may take long; "
                                  "--collectives fast runs approximate classes", head);
    g_free(head);
}

strata_source *strata_spmd_expand_as(strata_source *src, const strata_hw *hw, strata_spmd_collectives mode)
{
    return strata_spmd_expand_auto(src, hw, mode, STRATA_SPMD_AUTO_COPIES);
}

strata_source *strata_spmd_expand_auto(strata_source *src, const strata_hw *hw, strata_spmd_collectives mode,
                                       uint64_t max_copies)
{
    spmd *s = g_new0(spmd, 1);
    s->in = src;
    s->hw = hw;
    s->mode = mode;
    s->links = spmd_links_new(hw);
    s->decided = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, g_free);
    s->lane_maps = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, g_free);
    s->schedules = spmd_schedules_new();
    s->devices = strata_hw_devices(hw);
    if (mode == STRATA_SPMD_AUTO || mode == STRATA_SPMD_CLASSES) /* NULL: every device is its own class */
        classes_exact_or_fast(s, src, mode == STRATA_SPMD_AUTO, max_copies);
    else if (mode == STRATA_SPMD_FAST)
        s->classes = spmd_classes_find(src, hw, true, NULL);
    mode = s->mode;
    s->phases = spmd_phases_allowed(src, mode, s->classes);
    s->leaders = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    s->expanded_devs = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t d = 0; d < s->devices; d++)
        if (expanded(s, d))
            g_array_append_val(s->expanded_devs, d);
    start_pass(s);
    s->emits = g_array_new(FALSE, FALSE, sizeof(emit));
    s->steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    s->infos = g_ptr_array_new_with_free_func(info_free);
    for (int i = 0; i < STR__COUNT; i++)
        s->strs[i] = g_string_new(NULL);
    for (int i = 0; i < 3; i++) {
        s->s_lists[i] = g_ptr_array_new_with_free_func(free_gstring);
        s->lists[i] = g_ptr_array_new();
    }
    return strata_source_new(&spmd_vtable, s, strata_source_origin(src));
}
