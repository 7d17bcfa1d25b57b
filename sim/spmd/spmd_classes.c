/*
 * spmd_classes.c: the classes of equivalent devices (contract in
 * spmd_classes.h; spmd_shape.h for the finding).
 *
 * Design: one more checked pass over the program (its ops, not their
 * expansion) collects the mesh and each distinct collective's schedule,
 * built as the PHASES expansion builds it, and refuses what has no
 * symmetry (device=, an explicit instance, an option of one, a host
 * memory). Then, per mesh axis, rotations of its coordinate (by each
 * divisor of its size, least first, then within blocks, then the blocks'
 * mirror: find_generators) are tried as symmetries: on the hardware (every link's image, found by its ends,
 * has the same figures: a permutation of directed links), on every
 * schedule (the multiset of its steps over all groups, as (round,
 * sender, receiver, move), is the same after moving every device), and on
 * the routes of those steps (each image route is the moved route, hop by
 * hop). The first that holds is a generator; the orbits of the devices and
 * of the directed links under the generators are the classes and the
 * links' orbits (union-find, the least member the representative).
 * Cost: the program's ops once, and per candidate the links, the steps of
 * each distinct schedule over its groups and their routes: no op of the
 * expansion.
 */
#include "spmd/spmd_shape.h"
#include "core/idmap.h"
#include <string.h>
#include "hw/coll_impl.h"
#include "spmd/spmd_machine.h"
#include "spmd/spmd_names.h"
#include "spmd/spmd_phase.h"
#include "spmd/spmd_schedules.h"

struct strata_spmd_classes {
    uint32_t devices, n_classes;
    uint32_t *rep;      /* by device: its class's least device */
    uint32_t *link_rep; /* by directed link key (2 x link + forward): its orbit's least key */
    double *scale;      /* by representative key: its copies' weight (approximate classes), >= 1 */
    double *weight;     /* by directed link key: the full run's copies one of the quotient's stands for */
    bool exact;         /* every generator moves every route onto its image's */
    bool hosts;         /* the program touches its hosts' memories: the representatives are whole hosts */
    bool near;          /* approximate (FAST): steps a byte apart map onto each other (placed_alike) */
    GPtrArray *gens;    /* uint32_t[devices]: the generators' permutations, in the order found */
    char *text;         /* the generators */
};

uint32_t strata_spmd_classes_devices(const strata_spmd_classes *c) { return c->devices; }
uint32_t strata_spmd_classes_count(const strata_spmd_classes *c) { return c->n_classes; }
uint32_t strata_spmd_class_rep(const strata_spmd_classes *c, uint32_t device) { return c->rep[device]; }
const char *strata_spmd_classes_describe(const strata_spmd_classes *c) { return c->text; }
bool strata_spmd_classes_exact(const strata_spmd_classes *c) { return c->exact; }
bool strata_spmd_classes_hosts(const strata_spmd_classes *c) { return c->hosts; }

double strata_spmd_link_scale(const strata_spmd_classes *c, uint32_t link, bool forward)
{
    return c->scale[c->link_rep[2 * link + forward]];
}

double strata_spmd_link_weight(const strata_spmd_classes *c, uint32_t link, bool forward)
{
    return c->weight[2 * link + forward];
}

uint32_t spmd_classes_key_rep(const strata_spmd_classes *c, uint32_t key) { return c->link_rep[key]; }

void spmd_classes_raise_scale(strata_spmd_classes *c, uint32_t rep_key, double scale)
{
    c->scale[rep_key] = MAX(c->scale[rep_key], scale);
}

uint32_t strata_spmd_link_rep(const strata_spmd_classes *c, uint32_t link, bool forward, bool *rep_forward)
{
    uint32_t key = c->link_rep[2 * link + forward];
    *rep_forward = key & 1u;
    return key >> 1;
}

void spmd_classes_free(strata_spmd_classes *c)
{
    if (!c)
        return;
    g_free(c->rep);
    g_free(c->link_rep);
    g_free(c->scale);
    g_free(c->weight);
    g_free(c->text);
    if (c->gens)
        g_ptr_array_free(c->gens, TRUE);
    g_free(c);
}

/* ---- shapes (shared with spmd.c) ------------------------------------- */

const strata_coll_algo *spmd_coll_algo(const strata_hw *hw, const strata_mesh *mesh, const strata_op *op,
                                       uint32_t *mask, char **why)
{
    strata_mesh_axes(mesh, op->axis, mask, NULL); /* the checker accepted it */
    const char *name = op->algo ? op->algo : strata_coll_impl_pick(hw, op->kind, mesh, *mask);
    return strata_coll_algo_lookup(op->kind, name, why);
}

/* The ranks per scale-up domain of the groups of mesh axes `mask`, n each
 * (strata_coll_shape.domain_ranks), from the first group: the ranks of one
 * domain, when every domain holds that many consecutive ranks; n when the
 * group lies in one domain; 1 otherwise (every step then counts as one
 * between domains). */
static uint32_t group_domain_ranks(const strata_hw *hw, const strata_mesh *mesh, uint32_t mask, uint32_t n)
{
    uint32_t size = strata_hw_domain(hw), g = 0;
    while (!spmd_group_leader(mesh, mask, g))
        g++;
    uint32_t first = strata_mesh_member(mesh, mask, g, 0) / size, per = 1;
    while (per < n && strata_mesh_member(mesh, mask, g, per) / size == first)
        per++;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t dom = strata_mesh_member(mesh, mask, g, r) / size;
        uint32_t head = strata_mesh_member(mesh, mask, g, r / per * per) / size;
        if (n % per != 0 || dom != head || (r % per == 0 && r > 0 && dom == first))
            return 1;
    }
    return per;
}

/* The device memory the steps move between (the model's default memory). */
static uint32_t step_memory(const strata_hw *hw, uint32_t device)
{
    int base = strata_hw_memory_base_index(hw, NULL);
    return strata_hw_memory_on(hw, base >= 0 ? (uint32_t)base : 0, device);
}

/* True when devices a and b's default memories are one link apart. */
static bool one_link(const strata_hw *hw, uint32_t a, uint32_t b)
{
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    return strata_hw_route(hw, step_memory(hw, a), step_memory(hw, b), &hops, &n, NULL) && n == 1;
}

/* Appends to sh->dims the torus dimensions that mesh axis `a`'s group
 * spans on the machine, outermost first (a DIMS layout: coll_algo.h). From
 * device 0's group, ranks u apart: the run of ranks 0, u, 2u, ... whose
 * each next is one link from the one before is a dimension of the machine
 * (its length k, when it divides what is left), and the rest of the axis
 * the dimensions above it, in units of k u. So a 256-chip axis on the
 * 16x16 torus of tpu-v5e-256, devices numbered along a row first, is
 * 16 x 16: the group spans both axes of the torus, as the scaling book
 * lays XLA's collectives over a group of several hardware axes (sharding.md
 * @0819a7d, "What happens when we AllGather over multiple axes?": its
 * longest path sum_i |X_i| / 2 over the axes). An axis whose ranks run
 * along one dimension, or whose neighbours are not one link apart (a
 * switch), stays one dimension, as the mesh names it. At most `room`
 * dimensions (the last holds the rest). */
static void axis_dims(const strata_hw *hw, const strata_mesh *mesh, uint32_t a, uint32_t room, strata_coll_shape *sh)
{
    uint32_t n = strata_mesh_group_size(mesh, 1u << a), found[STRATA_COLL_MAX_DIMS], m = 0;
    for (uint32_t u = 1, rest = n; rest > 1;) {
        uint32_t k = 1;
        while (k < rest && one_link(hw, strata_mesh_member(mesh, 1u << a, 0, (k - 1) * u),
                                    strata_mesh_member(mesh, 1u << a, 0, k * u)))
            k++;
        if (k < 2 || k == rest || rest % k != 0 || m + 2 > room) {
            found[m++] = rest; /* the rest as one dimension */
            break;
        }
        found[m++] = k;
        u *= k;
        rest /= k;
    }
    while (m > 0)
        sh->dims[sh->n_dims++] = found[--m];
    if (n == 1)
        sh->dims[sh->n_dims++] = 1;
}

bool spmd_coll_shape(const strata_hw *hw, const strata_mesh *mesh, const strata_op *op, const strata_op_refs *refs,
                     const strata_coll_algo *algo, uint32_t mask, bool fold, strata_coll_shape *sh, char **why)
{
    *sh = (strata_coll_shape){.kind = op->kind, .algo = algo, .shift = op->shift, .fold = fold};
    for (uint32_t a = 0; a < strata_mesh_axis_count(mesh); a++) {
        uint32_t later = (uint32_t)__builtin_popcount(mask >> a) - 1; /* axes of the group after a */
        if ((mask & (1u << a)) && algo->layout == STRATA_COLL_DIMS)
            axis_dims(hw, mesh, a, STRATA_COLL_MAX_DIMS - sh->n_dims - later, sh);
        else if (mask & (1u << a))
            sh->dims[sh->n_dims++] = strata_mesh_group_size(mesh, 1u << a);
    }
    uint32_t n = strata_coll_ranks(sh);
    sh->in_bytes = op->kind == STRATA_OP_ALL_GATHER ? refs->bytes / n : refs->bytes;
    sh->domain_ranks = n > 1 ? group_domain_ranks(hw, mesh, mask, n) : 1;
    GError *e = NULL;
    if (algo->ops->tune && n > 1 && !algo->ops->tune(sh, hw, &e)) {
        *why = g_strdup(e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

/* ---- the program's collectives ---------------------------------------- */

/* A distinct collective of the program: its axes and its schedule. */
typedef struct coll_sig {
    strata_op_kind kind;
    uint32_t mask;
    const strata_coll_algo *algo;
    uint64_t in_bytes;
    int32_t shift;
    GArray *steps; /* strata_coll_step */
} coll_sig;

static void sig_free(gpointer p)
{
    coll_sig *s = p;
    g_array_free(s->steps, TRUE);
    g_free(s);
}

/* What the scan found: the mesh and the distinct collectives. */
typedef struct scan {
    strata_mesh *mesh;
    GPtrArray *sigs; /* coll_sig */
    bool hosts;      /* some op names a host memory (its template: each device's own host's) */
    uint64_t widest; /* the most copies a round moves at once over every group, every device expanded */
} scan;

/* A name of the model (a memory or unit) that the program writes for every
 * device alike: a template, or none. A host memory's template names each
 * device's host's instance: noted in *hosts (the symmetries must then keep
 * the hosts whole). */
static bool template_name(const strata_hw *hw, const char *name, bool unit, bool *hosts)
{
    if (!name)
        return true;
    int base = unit ? strata_hw_compute_base_index(hw, name) : strata_hw_memory_base_index(hw, name);
    /* its kind is its instances' (base indexes the templates, not the
     * memories: strata_hw_memory(hw, base) would be another memory) */
    if (base >= 0 && !unit && strata_hw_memory(hw, strata_hw_memory_on(hw, (uint32_t)base, 0))->kind == STRATA_MEM_HOST)
        *hosts = true;
    return base >= 0;
}

/* Notes collective op; false when it cannot be scheduled (bad input). */
static bool scan_collective(scan *sc, const strata_hw *hw, const strata_op *op, const strata_op_refs *refs)
{
    uint32_t mask = 0;
    char *why = NULL;
    const strata_coll_algo *algo = spmd_coll_algo(hw, sc->mesh, op, &mask, &why);
    strata_coll_shape sh;
    if (!algo || !spmd_coll_shape(hw, sc->mesh, op, refs, algo, mask, true, &sh, &why)) {
        g_free(why);
        return false;
    }
    const strata_coll_host *host = &sh.tune.host; /* host_call delays every GPU alike: only the turns break it */
    if (sh.tuned && strata_coll_host_delay(host, host->ranks_per_process - 1) > strata_coll_host_delay(host, 0))
        return false; /* one process launches its GPUs in turn (coll_host.h): no two start alike */
    for (guint i = 0; i < sc->sigs->len; i++) {
        const coll_sig *s = g_ptr_array_index(sc->sigs, i);
        if (s->kind == op->kind && s->mask == mask && s->algo == algo && s->in_bytes == sh.in_bytes &&
            s->shift == sh.shift)
            return true; /* a schedule is a pure function of these (and the model) */
    }
    coll_sig *s = g_new0(coll_sig, 1);
    *s = (coll_sig){.kind = op->kind, .mask = mask, .algo = algo, .in_bytes = sh.in_bytes, .shift = sh.shift};
    s->steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    uint32_t n = strata_coll_ranks(&sh);
    if (n > 1)
        strata_coll_schedule(&sh, s->steps);
    if (n > 1) /* as plan_collective counts a round's copies (spmd.c) */
        sc->widest = MAX(sc->widest, spmd_schedule_widest_round(s->steps, NULL) * (strata_mesh_devices(sc->mesh) / n));
    g_ptr_array_add(sc->sigs, s);
    return true;
}

/* The scan of the program: false when it has nothing to gain from classes
 * (or is bad input). */
static bool scan_program(scan *sc, strata_source *in, const strata_hw *hw)
{
    strata_checker *c = strata_checker_new(strata_source_origin(in));
    strata_checker_set_devices(c, strata_hw_devices(hw));
    strata_checker_set_namer(c, &strata_spmd_program_namer);
    strata_op_refs refs;
    const strata_op *op = NULL;
    bool ok = strata_source_rewind(in, NULL);
    int got = 0;
    while (ok && (got = strata_source_next(in, &op, NULL)) == 1) {
        ok = strata_checker_feed(c, op, &refs, NULL) && !op->has_device &&
             !(op->kind == STRATA_OP_OPTION && strchr(op->name, '@')) && /* an option of one instance */
             template_name(hw, op->memory, false, &sc->hosts) && template_name(hw, op->unit, true, &sc->hosts) &&
             template_name(hw, refs.memory, false, &sc->hosts) &&
             template_name(hw, refs.src_memory, false, &sc->hosts);
        if (ok && op->kind == STRATA_OP_OPTION && strcmp(op->name, "mesh") == 0 && !sc->mesh)
            sc->mesh = strata_mesh_parse(op->value, NULL);
        else if (ok && strata_op_kind_is_collective(op->kind))
            ok = sc->mesh && scan_collective(sc, hw, op, &refs);
    }
    strata_checker_free(c);
    bool rewound = strata_source_rewind(in, NULL);
    return ok && got == 0 && rewound && sc->mesh && strata_mesh_devices(sc->mesh) == strata_hw_devices(hw);
}

/* ---- symmetries of the program ---------------------------------------- */

/* A step of a schedule between two devices: its round, ends, lane and
 * move (lane: the step's, or its image's under a lane permutation). */
typedef struct placed_step {
    uint32_t p, q, lane;
    const strata_coll_step *st;
} placed_step;

/* A placed step's hash: its ends, round and lane, and its bytes unless
 * near (placed_alike). */
static guint placed_hash_of(const placed_step *a, bool near)
{
    uint64_t h = (uint64_t)a->p * 0x9E3779B97F4A7C15ull ^ (uint64_t)a->q * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)a->st->round * 0x165667B19E3779F9ull ^ (near ? 0 : a->st->bytes) ^ ((uint64_t)a->lane << 40);
    return (guint)(h ^ h >> 32);
}

static bool within_a_byte(uint64_t a, uint64_t b, uint64_t slack) { return MAX(a, b) - MIN(a, b) <= slack; }

/* Whether two placed steps are the same step: every figure equal, or with
 * near (FAST) their bytes allowed to differ by the chunking's rounding: a
 * round's bytes (wire bytes, the largest of a folded run's rounds) by at
 * most a byte, a folded run's sum by at most a byte a round. Chunks of a
 * buffer that the ranks do not divide differ by a byte between ranks
 * (coll_kit.h: chunk i of L over d is [L i / d, L (i+1) / d)), which
 * breaks every rotation's exact mapping of the steps; a byte of a round's
 * megabytes moves no figure measurably (docs/classes.md, "A byte's
 * difference"). Near steps hash without their bytes. */
static bool placed_alike(const placed_step *a, const placed_step *b, bool near)
{
    const strata_coll_step *x = a->st, *y = b->st;
    uint64_t per_run = near ? MAX(x->rounds, 1) : 0, per_round = near ? 1 : 0;
    return a->p == b->p && a->q == b->q && x->round == y->round && a->lane == b->lane && x->src_buf == y->src_buf &&
           x->dst_buf == y->dst_buf && x->own_buf == y->own_buf && within_a_byte(x->bytes, y->bytes, per_run) &&
           within_a_byte(x->wire_bytes, y->wire_bytes, per_run) && x->reduce == y->reduce &&
           x->handshake == y->handshake && x->polled == y->polled && x->fused == y->fused &&
           x->rounds == y->rounds && within_a_byte(x->max_bytes, y->max_bytes, per_round) &&
           (x->max_bytes == 0) == (y->max_bytes == 0) && x->delay_s == y->delay_s && x->pipelined == y->pipelined &&
           x->proxy_s == y->proxy_s;
}

static guint placed_hash(gconstpointer k) { return placed_hash_of(k, false); }
static gboolean placed_equal(gconstpointer a, gconstpointer b) { return placed_alike(a, b, false); }
static guint placed_hash_near(gconstpointer k) { return placed_hash_of(k, true); }
static gboolean placed_equal_near(gconstpointer a, gconstpointer b) { return placed_alike(a, b, true); }

static bool same_bytes(const strata_coll_step *x, const strata_coll_step *y)
{
    return x->bytes == y->bytes && x->wire_bytes == y->wire_bytes && x->max_bytes == y->max_bytes;
}

/* True when route a -> b, moved by perm, is the route of the images. */
static bool route_moves(const strata_hw *hw, const spmd_machine *m, const uint32_t *perm, uint32_t p, uint32_t q)
{
    const strata_hop *h = NULL, *g = NULL;
    uint32_t n = 0, ng = 0;
    if (!strata_hw_route(hw, step_memory(hw, p), step_memory(hw, q), &h, &n, NULL) ||
        !strata_hw_route(hw, step_memory(hw, perm[p]), step_memory(hw, perm[q]), &g, &ng, NULL) || n != ng)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (spmd_machine_key_image(m, 2 * h[i].link + h[i].forward) != 2 * g[i].link + g[i].forward ||
            spmd_machine_memory_image(m, perm, h[i].port) != g[i].port)
            return false;
    return true;
}

/* A step's figures but its lane, from devices p to q, mixed (SplitMix64's
 * finaliser): lanes whose steps' mixes sum alike are taken for images of
 * each other, which the count check then proves or refutes. */
static uint64_t step_mix(uint32_t p, uint32_t q, const strata_coll_step *s, bool near)
{
    uint64_t delay;
    memcpy(&delay, &s->delay_s, sizeof delay);
    const uint64_t words[] = {(uint64_t)p << 32 | q,
                              (uint64_t)s->round << 32 | (uint64_t)s->src_buf << 16 | s->dst_buf << 8 | s->own_buf,
                              near ? 0 : s->bytes, near ? 0 : s->wire_bytes, near ? 0 : s->max_bytes, delay,
                              (uint64_t)s->rounds << 8 | (uint64_t)s->polled << 5 | (uint64_t)s->reduce << 4 |
                                  (uint64_t)s->handshake << 3 | (uint64_t)s->fused << 2 | (uint64_t)s->pipelined};
    uint64_t h = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(words); i++) {
        h = (h ^ words[i]) + 0x9E3779B97F4A7C15ull;
        h = (h ^ h >> 30) * 0xBF58476D1CE4E5B9ull;
        h = (h ^ h >> 27) * 0x94D049BB133111EBull;
        h ^= h >> 31;
    }
    return h;
}

/* The permutation of the lanes (streams) that goes with perm: lane L's
 * steps, moved by perm, are lane sigma[L]'s (as many, their mixes summing
 * alike), and the reduction lane L + 1 of a fused step goes to sigma[L] + 1.
 * Lanes are alike streams of every device, each round fenced by lane 0's
 * record (spmd.c), so devices that differ by perm and sigma keep the same
 * dates. False when a lane has no image or two lanes would share one. */
static bool lane_map(const GArray *placed, const uint32_t *perm, uint32_t n_lanes, bool near, uint32_t *sigma)
{
    uint64_t *sum = g_new0(uint64_t, 2 * (size_t)n_lanes); /* lane L's, then its image's */
    uint32_t *count = g_new0(uint32_t, n_lanes);
    bool *used = g_new0(bool, n_lanes), ok = true;
    for (guint i = 0; i < placed->len; i++) {
        const placed_step *x = &g_array_index(placed, placed_step, i);
        sum[x->lane] += step_mix(x->p, x->q, x->st, near);
        sum[n_lanes + x->lane] += step_mix(perm[x->p], perm[x->q], x->st, near);
        count[x->lane]++;
    }
    for (uint32_t l = 0; l < n_lanes; l++) {
        sigma[l] = UINT32_MAX;
        for (uint32_t t = 0; count[l] && sigma[l] == UINT32_MAX && t < n_lanes; t++)
            if (!used[t] && count[t] == count[l] && sum[t] == sum[n_lanes + l])
                used[sigma[l] = t] = true;
        ok = ok && (!count[l] || sigma[l] != UINT32_MAX);
    }
    for (guint i = 0; ok && i < placed->len; i++) {
        const placed_step *x = &g_array_index(placed, placed_step, i);
        uint32_t from = x->lane + 1, to = sigma[x->lane] + 1;
        if (!x->st->reduce || !x->st->fused || sigma[from] == to)
            continue;
        ok = sigma[from] == UINT32_MAX && to < n_lanes && !used[to];
        if (ok)
            used[sigma[from] = to] = true;
    }
    g_free(sum);
    g_free(count);
    g_free(used);
    return ok;
}

/* How a candidate maps the program: not at all, with every route moved
 * onto its image's, or its steps only (some route differs: approximate). */
typedef enum { MAPS_NOT, MAPS_STEPS, MAPS_EXACTLY } maps; /* in order: the least of several is theirs */

/* The steps of a schedule over every group of mesh axes `mask`, placed on
 * their devices; *n_lanes: 2 + the highest lane (a fused step's reduction
 * takes the lane after its own). */
static GArray *place_steps(const strata_mesh *mesh, uint32_t mask, const GArray *sched, uint32_t *n_lanes)
{
    const strata_coll_step *steps = (const strata_coll_step *)(void *)sched->data;
    GArray *placed = g_array_new(FALSE, FALSE, sizeof(placed_step));
    *n_lanes = 1;
    for (guint i = 0; i < sched->len; i++)
        *n_lanes = MAX(*n_lanes, steps[i].lane + 2);
    for (uint32_t g = 0; g < strata_mesh_devices(mesh); g++)
        for (guint i = 0; i < sched->len && strata_mesh_rank(mesh, mask, g) == 0; i++) {
            placed_step x = {strata_mesh_member(mesh, mask, g, steps[i].src),
                             strata_mesh_member(mesh, mask, g, steps[i].dst), steps[i].lane, &steps[i]};
            g_array_append_val(placed, x);
        }
    return placed;
}

/* How perm maps sig's steps over every group (and their routes); with
 * near (FAST), steps whose bytes differ by the chunking's rounding
 * (placed_equal_near) map onto each other, approximately. */
static maps schedule_symmetry(const strata_hw *hw, const spmd_machine *m, const strata_mesh *mesh,
                              const coll_sig *sig, const uint32_t *perm, bool near, bool *lanes_moved)
{
    uint32_t n_lanes;
    GArray *placed = place_steps(mesh, sig->mask, sig->steps, &n_lanes);
    uint32_t *sigma = g_new(uint32_t, n_lanes);
    maps verdict = lane_map(placed, perm, n_lanes, near, sigma) ? MAPS_EXACTLY : MAPS_NOT;
    for (uint32_t l = 0; verdict != MAPS_NOT && l < n_lanes; l++)
        *lanes_moved = *lanes_moved || (sigma[l] != UINT32_MAX && sigma[l] != l);
    GHashTable *count = near ? g_hash_table_new(placed_hash_near, placed_equal_near)
                             : g_hash_table_new(placed_hash, placed_equal);
    for (guint i = 0; verdict != MAPS_NOT && i < placed->len; i++) {
        placed_step *x = &g_array_index(placed, placed_step, i);
        g_hash_table_insert(count, x, GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(count, x)) + 1));
    }
    for (guint i = 0; verdict != MAPS_NOT && i < placed->len; i++) {
        const placed_step *x = &g_array_index(placed, placed_step, i);
        placed_step image = {perm[x->p], perm[x->q], sigma[x->lane], x->st};
        gpointer found = NULL, n_image = NULL;
        if (!g_hash_table_lookup_extended(count, &image, &found, &n_image) ||
            n_image != g_hash_table_lookup(count, x))
            verdict = MAPS_NOT;
        else if (!same_bytes(((const placed_step *)found)->st, x->st))
            verdict = MAPS_STEPS; /* near: a byte's difference */
    }
    /* the routes last: a candidate that fails on the steps costs no route */
    for (guint i = 0; verdict == MAPS_EXACTLY && i < placed->len; i++) {
        const placed_step *x = &g_array_index(placed, placed_step, i);
        if (x->p != x->q && !route_moves(hw, m, perm, x->p, x->q))
            verdict = MAPS_STEPS;
    }
    g_hash_table_destroy(count);
    g_array_free(placed, TRUE);
    g_free(sigma);
    return verdict;
}

/* ---- orbits ------------------------------------------------------------ */

static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Joins the sets of x and y; the least root stays the root. */
static void join(uint32_t *parent, uint32_t x, uint32_t y)
{
    x = find(parent, x);
    y = find(parent, y);
    if (x != y)
        parent[MAX(x, y)] = MIN(x, y);
}

/* perm = the rotation of mesh axis `axis` by k within its blocks of r
 * consecutive coordinates (r = the axis' size: the axis' rotation). */
static void rotation(const strata_mesh *mesh, uint32_t axis, uint32_t r, uint32_t k, uint32_t *perm)
{
    uint32_t stride = 1;
    for (uint32_t a = axis + 1; a < strata_mesh_axis_count(mesh); a++)
        stride *= strata_mesh_group_size(mesh, 1u << a);
    for (uint32_t d = 0; d < strata_mesh_devices(mesh); d++) {
        uint32_t c = strata_mesh_coord(mesh, d, axis), block = c - c % r;
        perm[d] = d - c * stride + (block + (c % r + k) % r) * stride;
    }
}

/* perm = the mirror of mesh axis `axis`'s blocks of r consecutive
 * coordinates: block j of nb to block nb - 1 - j, within a block in place. */
static void block_mirror(const strata_mesh *mesh, uint32_t axis, uint32_t r, uint32_t *perm)
{
    uint32_t stride = 1, nb = strata_mesh_group_size(mesh, 1u << axis) / r;
    for (uint32_t a = axis + 1; a < strata_mesh_axis_count(mesh); a++)
        stride *= strata_mesh_group_size(mesh, 1u << a);
    for (uint32_t d = 0; d < strata_mesh_devices(mesh); d++) {
        uint32_t c = strata_mesh_coord(mesh, d, axis), block = c / r;
        perm[d] = d - c * stride + ((nb - 1 - block) * r + c % r) * stride;
    }
}

/* True when perm is a symmetry of the machine and of every collective
 * (with approx, of their steps: some route may not move onto its image's;
 * *exact then says whether every one does). */
static bool symmetry(const strata_hw *hw, spmd_machine *m, const scan *sc, const uint32_t *perm, bool approx,
                     bool *exact, bool *lanes_moved)
{
    maps verdict = spmd_machine_symmetry(m, perm) ? MAPS_EXACTLY : MAPS_NOT;
    *lanes_moved = false;
    for (guint i = 0; verdict != MAPS_NOT && i < sc->sigs->len; i++)
        verdict =
            MIN(verdict, schedule_symmetry(hw, m, sc->mesh, g_ptr_array_index(sc->sigs, i), perm, approx, lanes_moved));
    *exact = verdict == MAPS_EXACTLY;
    return verdict == MAPS_EXACTLY || (approx && verdict == MAPS_STEPS);
}

/* Joins the orbits of generator perm (the machine's last symmetry) and
 * names it after `what`, with "~lanes" where it permutes the lanes. */
static void adopt(strata_spmd_classes *c, const spmd_machine *m, const uint32_t *perm, uint32_t n_keys, bool exact,
                  bool lanes, GString *text, const char *what)
{
    for (uint32_t d = 0; d < c->devices; d++)
        join(c->rep, d, perm[d]);
    g_ptr_array_add(c->gens, g_memdup2(perm, c->devices * sizeof *perm));
    for (uint32_t key = 0; key < n_keys; key++)
        join(c->link_rep, key, spmd_machine_key_image(m, key));
    c->exact = c->exact && exact;
    g_string_append_printf(text, "%s%s%s", text->len ? " " : "", what, lanes ? "~lanes" : "");
}

/* Tries, per axis, rotations within blocks of r coordinates (r from the
 * axis' size down, each dividing the last rotation's k) by k (a divisor of
 * r, least first): each generator found rotates one digit of the axis'
 * coordinate in a mixed radix (the blocks of k inside those of r), so the
 * group they make is a product of cyclic groups on distinct digits,
 * abelian and free on the devices. Joins the orbits of each; returns the
 * number found. */
static uint32_t find_generators(const strata_hw *hw, spmd_machine *m, const scan *sc, strata_spmd_classes *c,
                                bool approx, GString *text)
{
    bool exact = true, lanes = false;
    uint32_t *perm = g_new(uint32_t, c->devices), found = 0, n_keys = 2 * strata_hw_link_count(hw);
    for (uint32_t a = 0; a < strata_mesh_axis_count(sc->mesh); a++) {
        uint32_t size = strata_mesh_group_size(sc->mesh, 1u << a), limit = size, block = 0;
        const char *axis = strata_mesh_axis_name(sc->mesh, a);
        for (uint32_t r = limit; r >= 2; r--) {
            if (limit % r != 0)
                continue;
            uint32_t k = 1;
            while (k < r && (r % k != 0 || (rotation(sc->mesh, a, r, k, perm),
                                            !symmetry(hw, m, sc, perm, approx, &exact, &lanes))))
                k++;
            if (k == r)
                continue; /* no rotation within blocks of r */
            char *what = r == size ? g_strdup_printf("%s+%u", axis, k) : g_strdup_printf("%s+%u/%u", axis, k, r);
            adopt(c, m, perm, n_keys, exact, lanes, text, what); /* /r: within blocks of r */
            g_free(what);
            found++;
            if (limit == size && r < size)
                block = r; /* the first generator keeps the blocks of r: their digit has none */
            limit = k;
            r = k + 1; /* the next r divides k */
        }
        /* Then the mirror of those blocks, where they are an even count (an
         * odd one keeps its middle block: not free). It acts on a digit no
         * generator moves, so the group stays abelian and free. NCCL's
         * trees: tree 1 of an even count of domains is tree 0's mirror. */
        if (block && size / block % 2 == 0) {
            block_mirror(sc->mesh, a, block, perm);
            if (symmetry(hw, m, sc, perm, approx, &exact, &lanes)) {
                char *what = g_strdup_printf("%s:mirror/%u", axis, block);
                adopt(c, m, perm, n_keys, exact, lanes, text, what);
                g_free(what);
                found++;
            }
        }
    }
    g_free(perm);
    return found;
}

/* The copies of the full run that each of the quotient's on a link
 * stands for: |G| (the devices over the classes: G is free on them) over
 * the links of the link's orbit (of its direction, or of both for a
 * half-duplex link). 1 where G moves the link freely; more where some
 * symmetry keeps it: a rail's leaf uplink, which rotations of the hosts
 * keep, carries the copies of as many hosts' images. The quotient divides
 * the link's bandwidth by it (max-min sharing then gives each of its
 * copies the full run's rate) and reports its bytes times it. */
static void weigh_orbits(strata_spmd_classes *c, const strata_hw *hw, const spmd_machine *m)
{
    uint32_t n_keys = 2 * strata_hw_link_count(hw), *size = g_new0(uint32_t, n_keys + 1);
    for (uint32_t k = 0; k < n_keys; k++)
        size[c->link_rep[k]]++;
    double group = (double)c->devices / c->n_classes;
    for (uint32_t k = 0; k < n_keys; k++) {
        double links = (double)size[c->link_rep[k]] / (strata_hw_link(hw, k / 2)->full_duplex ? 1 : 2);
        c->weight[k] = spmd_machine_moves(m, k / 2) ? MAX(1.0, group / links) : 1;
        c->scale[c->link_rep[k]] = MAX(c->scale[c->link_rep[k]], c->weight[k]);
    }
    g_free(size);
}

/* Whether every host with a representative has only representatives: the
 * quotient then holds whole hosts, each host memory's traffic its own
 * devices' (G moves the hosts freely). Where a symmetry keeps a host and
 * moves its devices among themselves, its memory would carry images the
 * quotient has not: no classes. */
static bool whole_hosts(const strata_spmd_classes *c, uint32_t per_host)
{
    for (uint32_t d = 0; d < c->devices; d++)
        if ((c->rep[d / per_host * per_host] == d / per_host * per_host) != (c->rep[d] == d))
            return false;
    return true;
}

strata_spmd_classes *spmd_classes_find(strata_source *in, const strata_hw *hw, bool approx, uint64_t *widest)
{
    uint32_t devices = strata_hw_devices(hw);
    if (widest)
        *widest = 0;
    if (devices <= 1)
        return NULL;
    scan sc = {.sigs = g_ptr_array_new_with_free_func(sig_free)};
    bool ok = scan_program(&sc, in, hw);
    if (widest && ok)
        *widest = sc.widest;
    spmd_machine *m = ok ? spmd_machine_new(hw, sc.hosts) : NULL;
    strata_spmd_classes *c = NULL;
    if (m) {
        uint32_t n_keys = 2 * strata_hw_link_count(hw);
        c = g_new0(strata_spmd_classes, 1);
        c->devices = devices;
        c->rep = g_new(uint32_t, devices);
        c->link_rep = g_new(uint32_t, n_keys + 1);
        c->scale = g_new(double, n_keys + 1);
        c->weight = g_new(double, n_keys + 1);
        c->exact = true;
        c->hosts = sc.hosts;
        c->near = approx;
        c->gens = g_ptr_array_new_with_free_func(g_free);
        for (uint32_t d = 0; d < devices; d++)
            c->rep[d] = d;
        for (uint32_t k = 0; k < n_keys; k++) {
            c->link_rep[k] = k;
            c->scale[k] = 1;
        }
        for (uint32_t l = 0; l < strata_hw_link_count(hw); l++)
            if (!strata_hw_link(hw, l)->full_duplex) /* one resource both ways */
                join(c->link_rep, 2 * l, 2 * l + 1);
        GString *text = g_string_new(NULL);
        uint32_t found = find_generators(hw, m, &sc, c, approx, text);
        c->text = g_string_free(text, FALSE);
        for (uint32_t d = 0; d < devices; d++)
            c->n_classes += (c->rep[d] = find(c->rep, d)) == d;
        for (uint32_t k = 0; k < n_keys; k++)
            c->link_rep[k] = find(c->link_rep, k);
        weigh_orbits(c, hw, m);
        if (found == 0 || (c->hosts && !whole_hosts(c, strata_hw_devices_per_host(hw)))) {
            spmd_classes_free(c);
            c = NULL;
        }
    }
    spmd_machine_free(m);
    strata_mesh_free(sc.mesh);
    g_ptr_array_free(sc.sigs, TRUE);
    return c;
}

/* Per generator gamma, sigma (its lanes' images for this schedule,
 * lane_map; a lane without steps, or beyond the schedule's, keeps its
 * number); then, from each representative outwards along the generators
 * (G is free: each device is reached as exactly one element h of G applied
 * to its representative), y = gamma(x)'s lane sigma(M) is what x's lane M
 * is: map[y][sigma(M)] = map[x][M], map[rep] the identity. */
uint32_t *spmd_classes_lane_maps(const strata_spmd_classes *c, const strata_mesh *mesh, uint32_t mask,
                                 const GArray *steps, uint32_t n_lanes)
{
    uint32_t sl, n_gens = c->gens->len, *map = g_new(uint32_t, (size_t)c->devices * n_lanes);
    GArray *placed = place_steps(mesh, mask, steps, &sl);
    uint32_t *sigma = g_new(uint32_t, (size_t)MAX(n_gens, 1) * n_lanes), *queue = g_new(uint32_t, c->devices);
    bool ok = true, *done = g_new0(bool, c->devices);
    for (uint32_t j = 0; ok && j < n_gens; j++) {
        uint32_t *sg = sigma + (size_t)j * n_lanes;
        ok = lane_map(placed, g_ptr_array_index(c->gens, j), MIN(sl, n_lanes), c->near, sg);
        for (uint32_t l = 0; l < n_lanes; l++)
            if (l >= MIN(sl, n_lanes) || sg[l] == UINT32_MAX)
                sg[l] = l;
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t d = 0; d < c->devices; d++) {
        for (uint32_t l = 0; l < n_lanes; l++)
            map[(size_t)d * n_lanes + l] = c->rep[d] == d ? l : UINT32_MAX;
        if (c->rep[d] == d)
            done[queue[tail++] = d] = true;
    }
    while (ok && head < tail) {
        uint32_t x = queue[head++];
        for (uint32_t j = 0; j < n_gens; j++) {
            uint32_t y = ((const uint32_t *)g_ptr_array_index(c->gens, j))[x];
            if (done[y])
                continue;
            done[queue[tail++] = y] = true;
            for (uint32_t l = 0; l < n_lanes; l++)
                map[(size_t)y * n_lanes + sigma[(size_t)j * n_lanes + l]] = map[(size_t)x * n_lanes + l];
        }
    }
    for (size_t i = 0; ok && i < (size_t)c->devices * n_lanes; i++)
        ok = map[i] != UINT32_MAX; /* every device reached, every sigma a permutation */
    g_free(done);
    g_free(queue);
    g_free(sigma);
    g_array_free(placed, TRUE);
    if (!ok) {
        g_free(map);
        return NULL;
    }
    return map;
}
