/*
 * hw_access.c: the hardware model's accessors (contract in hw.h): reads of
 * what hw.c loaded, apart from the loading. The model is immutable once
 * loaded, so each is a plain read (a name lookup through the model's hash
 * when it has one, else a walk of a few entries).
 */
#include "hw/hw.h"
#include "hw/hw_internal.h"
#include <string.h>

const char *strata_hw_name(const strata_hw *hw) { return hw->name; }
const char *strata_hw_origin(const strata_hw *hw) { return hw->origin; }
bool strata_hw_sched_xla(const strata_hw *hw) { return hw->sched_xla; }
bool strata_hw_flow_sharing_latency(const strata_hw *hw) { return hw->flow_sharing_latency; }
uint32_t strata_hw_memory_count(const strata_hw *hw) { return hw->memories->len; }

const strata_memory_spec *strata_hw_memory(const strata_hw *hw, uint32_t index)
{
    g_return_val_if_fail(index < hw->memories->len, NULL);
    return &g_array_index(hw->memories, strata_memory_spec, index);
}

int strata_hw_memory_index(const strata_hw *hw, const char *name)
{
    if (name == NULL)
        return (int)hw->default_memory;
    if (hw->memory_by_name)
        return (int)GPOINTER_TO_UINT(g_hash_table_lookup(hw->memory_by_name, name)) - 1;
    for (guint i = 0; i < hw->memories->len; i++)
        if (strcmp(g_array_index(hw->memories, strata_memory_spec, i).name, name) == 0)
            return (int)i;
    return -1;
}

uint32_t strata_hw_default_memory(const strata_hw *hw) { return hw->default_memory; }
uint32_t strata_hw_link_count(const strata_hw *hw) { return hw->links->len; }

const strata_link_spec *strata_hw_link(const strata_hw *hw, uint32_t index)
{
    g_return_val_if_fail(index < hw->links->len, NULL);
    return &g_array_index(hw->links, strata_link_spec, index);
}

uint32_t strata_hw_compute_count(const strata_hw *hw) { return hw->computes->len; }

const strata_compute_spec *strata_hw_compute(const strata_hw *hw, uint32_t index)
{
    g_return_val_if_fail(index < hw->computes->len, NULL);
    return &g_array_index(hw->computes, strata_compute_spec, index);
}

int strata_hw_compute_index(const strata_hw *hw, const char *name)
{
    if (name == NULL)
        return hw->computes->len ? 0 : -1;
    if (hw->unit_by_name)
        return (int)GPOINTER_TO_UINT(g_hash_table_lookup(hw->unit_by_name, name)) - 1;
    for (guint i = 0; i < hw->computes->len; i++)
        if (strcmp(g_array_index(hw->computes, strata_compute_spec, i).name, name) == 0)
            return (int)i;
    return -1;
}

double strata_hw_compute_flops(const strata_hw *hw, uint32_t unit, strata_dtype dtype)
{
    const strata_compute_spec *c = strata_hw_compute(hw, unit);
    if (c == NULL)
        return 0;
    if ((unsigned)dtype < STRATA_DTYPE__COUNT && c->flops_by_dtype[dtype] > 0)
        return c->flops_by_dtype[dtype];
    return c->flops;
}

const char *strata_hw_source(const strata_hw *hw) { return hw->source; }
const char *strata_hw_fingerprint(const strata_hw *hw) { return hw->fingerprint; }
