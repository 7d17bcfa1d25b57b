/*
 * engine_kernel.c: the engine's one hook into the kernel cost models
 * (models/kernel/kernel.h), for a compute op that names a kernel=, and
 * the run's table of the costs it has computed.
 *
 * When an op is read (either pass), its kernel's cost on its unit goes into
 * its extra (and so onto the tape): the work as flops at the unit's peak for
 * the op's dtype (compute_s x that peak), the operand memory's bytes (the
 * kernel's traffic over the unit's stream efficiency) and the fixed time.
 * engine_feed.c's finish_op() puts the first two in the bound op in place of
 * its flops and bytes, so run_compute() executes and streams them as any
 * compute (sharing the unit and the memory's port with what runs beside
 * it), then waits the fixed time.
 *
 * Ops without kernel=, with time=, or without a unit are left alone: their
 * time is what it was before kernels existed.
 *
 * The table (engine_kernel_costs, one per run, owned by the feed): a
 * kernel's cost is a pure function of its row, the unit and the problem
 * (kernel.h's invariant), and a model's layers repeat the same few
 * problems (`gen transformer`: 6,403 kernel ops of 14 distinct problems on
 * layers=400, each cost about 19,700 instructions), so each distinct
 * (row, unit, problem) is costed once and its three figures kept.
 * Invariant: an entry's figures are exactly what engine_kernel_extra
 * computed for its key's first op; the key holds every input of the cost
 * (row, unit, the problem's dims, mask, dtype, flops= and bytes); hw is the
 * run's, fixed for the table's life.
 */
#include "engine/engine_internal.h"
#include <math.h>
#include <string.h>
#include "kernel/kernel.h"

/* Every input of a kernel op's cost; zeroed whole before it is filled, so
 * that its bytes (padding included) hash and compare. */
typedef struct __attribute__((aligned(8))) kernel_key {
    const strata_kernel_model *k;
    uint64_t dims[STRATA_MAX_DIMS];
    uint64_t window;
    uint64_t bytes;
    double flops;
    uint32_t unit;
    uint32_t n_dims;
    int32_t dtype;
    bool causal;
    bool has_flops;
    bool has_bytes;
} kernel_key;
_Static_assert(sizeof(kernel_key) % sizeof(uint64_t) == 0, "key_hash reads the key word by word");

typedef struct kernel_entry {
    kernel_key key; /* first: the table hashes and compares it alone */
    double kernel_flops;
    uint64_t kernel_bytes;
    double kernel_s;
} kernel_entry;

struct engine_kernel_costs {
    const strata_hw *hw;
    GHashTable *entries; /* kernel_entry * (owned), a set keyed by its key */
};

static guint key_hash(gconstpointer p)
{
    const unsigned char *b = p;
    uint64_t h = 0;
    for (size_t i = 0; i + sizeof(uint64_t) <= sizeof(kernel_key); i += sizeof(uint64_t)) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0x9e3779b97f4a7c15u; /* Fibonacci hashing's multiplier, word by word */
    }
    return (guint)(h ^ (h >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(kernel_key)) == 0;
}

engine_kernel_costs *engine_kernel_costs_new(const strata_hw *hw)
{
    engine_kernel_costs *kc = g_new0(engine_kernel_costs, 1);
    kc->hw = hw;
    kc->entries = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
    return kc;
}

void engine_kernel_costs_free(engine_kernel_costs *kc)
{
    if (!kc)
        return;
    g_hash_table_destroy(kc->entries);
    g_free(kc);
}

static void key_of(const strata_kernel_model *k, uint32_t unit, const strata_kernel_problem *p, kernel_key *key)
{
    memset(key, 0, sizeof *key);
    key->k = k;
    key->unit = unit;
    key->n_dims = p->n_dims;
    for (uint32_t i = 0; i < p->n_dims && i < STRATA_MAX_DIMS; i++)
        key->dims[i] = p->dims[i];
    key->causal = p->causal;
    key->window = p->window;
    key->dtype = (int32_t)p->dtype;
    key->has_flops = p->has_flops;
    key->flops = p->flops;
    key->has_bytes = p->has_bytes;
    key->bytes = p->bytes;
}

void engine_kernel_extra(engine_kernel_costs *kc, const strata_bound_op *op, engine_op_extra *x)
{
    const strata_op *in = op->op;
    const strata_hw *hw = kc->hw;
    if (!hw || op->kind != STRATA_OP_COMPUTE || !in->kernel || in->has_time || op->unit == STRATA_BIND_NONE)
        return;
    strata_kernel_problem p;
    const strata_kernel_model *k = strata_kernel_problem_of(in, op->dtype, op->bytes, &p);
    if (!k) /* the binder refuses unknown names */
        return;
    kernel_entry probe;
    kernel_entry *e = NULL;
    bool keyed = p.n_dims <= STRATA_MAX_DIMS; /* the binder's limit: always */
    if (keyed) {
        key_of(k, op->unit, &p, &probe.key);
        e = g_hash_table_lookup(kc->entries, &probe);
    }
    if (!e) {
        strata_kernel_cost c;
        strata_kernel_cost_of(k, hw, op->unit, &p, &c);
        double peak = strata_hw_compute_flops(hw, op->unit, op->dtype);
        probe.kernel_flops = c.compute_s * peak;
        probe.kernel_bytes = (uint64_t)llround(c.bytes);
        probe.kernel_s = c.fixed_s;
        e = &probe;
        if (keyed)
            g_hash_table_add(kc->entries, g_memdup2(&probe, sizeof probe));
    }
    x->kernel = true;
    x->kernel_flops = e->kernel_flops;
    x->kernel_bytes = e->kernel_bytes;
    x->kernel_s = e->kernel_s;
}
