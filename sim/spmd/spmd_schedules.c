/*
 * spmd_schedules.c: each distinct collective's schedule, built once
 * (spmd_schedules.h).
 */
#include "spmd/spmd_schedules.h"

struct spmd_schedules {
    GHashTable *by_sig; /* sig (GBytes) -> schedule */
    guint kept_steps;   /* the steps the schedules hold (at most SPMD_SCHEDULE_CACHE_STEPS) */
};

/* A distinct collective's schedule, as strata_coll_schedule built it. */
typedef struct schedule {
    GArray *steps; /* strata_coll_step */
    uint32_t rounds;
} schedule;

static void schedule_free(gpointer p)
{
    schedule *c = p;
    g_array_free(c->steps, TRUE);
    g_free(c);
}

spmd_schedules *spmd_schedules_new(void)
{
    spmd_schedules *c = g_new0(spmd_schedules, 1);
    c->by_sig = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, schedule_free);
    return c;
}

void spmd_schedules_free(spmd_schedules *c)
{
    if (!c)
        return;
    g_hash_table_destroy(c->by_sig);
    g_free(c);
}

uint32_t spmd_schedules_get(spmd_schedules *c, const uint64_t sig[5], const strata_coll_shape *shape,
                            GArray *steps)
{
    GBytes *key = g_bytes_new(sig, 5 * sizeof *sig);
    schedule *s = g_hash_table_lookup(c->by_sig, key);
    g_array_set_size(steps, 0);
    if (s) {
        g_bytes_unref(key);
        g_array_append_vals(steps, s->steps->data, s->steps->len);
        return s->rounds;
    }
    uint32_t rounds = strata_coll_schedule(shape, steps);
    if (steps->len > SPMD_SCHEDULE_CACHE_STEPS - c->kept_steps) {
        g_bytes_unref(key);
        return rounds;
    }
    s = g_new(schedule, 1);
    s->steps = g_array_sized_new(FALSE, FALSE, sizeof(strata_coll_step), steps->len);
    g_array_append_vals(s->steps, steps->data, steps->len);
    s->rounds = rounds;
    c->kept_steps += steps->len;
    g_hash_table_insert(c->by_sig, key, s);
    return rounds;
}

uint64_t spmd_schedule_widest_round(const GArray *steps, guint *at)
{
    uint64_t widest = 0, in_round = 0;
    guint widest_at = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        in_round = i > 0 && st->round == g_array_index(steps, strata_coll_step, i - 1).round ? in_round + 1 : 1;
        if (in_round > widest)
            widest_at = i + 1 - (guint)in_round;
        widest = MAX(widest, in_round);
    }
    if (at)
        *at = widest_at;
    return widest;
}
