/*
 * kineto_ledger.c: the kineto importer's ledger (kineto_ledger.h).
 */
#include "import/kineto_ledger.h"

typedef struct live_entry {
    uint64_t key;
    GArray *ids; /* uint64_t, newest last */
} live_entry;

static void entry_free(gpointer p)
{
    live_entry *e = p;
    g_array_free(e->ids, TRUE);
    g_free(e);
}

void strata_kineto_ledger_init(strata_kineto_ledger *l)
{
    l->live = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, entry_free);
    l->next_id = 0;
    l->n_pre = 0;
}

void strata_kineto_ledger_clear(strata_kineto_ledger *l)
{
    if (l->live)
        g_hash_table_unref(l->live);
    l->live = NULL;
}

uint64_t strata_kineto_magnitude(int64_t v)
{
    return v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
}

uint64_t strata_kineto_ledger_key(const strata_kineto_event *ev)
{
    return ev->has_addr ? ev->addr : strata_kineto_magnitude(ev->bytes) | (UINT64_C(1) << 63);
}

uint64_t strata_kineto_ledger_alloc(strata_kineto_ledger *l, uint64_t key)
{
    live_entry *e = g_hash_table_lookup(l->live, &key);
    if (e == NULL) {
        e = g_new(live_entry, 1);
        e->key = key;
        e->ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_hash_table_insert(l->live, &e->key, e);
    }
    uint64_t id = l->next_id++;
    g_array_append_val(e->ids, id);
    return id;
}

bool strata_kineto_ledger_free(strata_kineto_ledger *l, uint64_t key, uint64_t *id)
{
    live_entry *e = g_hash_table_lookup(l->live, &key);
    if (e == NULL)
        return false;
    *id = g_array_index(e->ids, uint64_t, e->ids->len - 1);
    g_array_set_size(e->ids, e->ids->len - 1);
    if (e->ids->len == 0)
        g_hash_table_remove(l->live, &key);
    return true;
}
