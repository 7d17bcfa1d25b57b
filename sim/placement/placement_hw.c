/*
 * placement_hw.c: the allocators' check of a hardware file's allocator
 * specs (placement_hw.h), by building each allocator once.
 */
#include "placement/placement_hw.h"
#include "alloc/alloc.h"

bool strata_placement_check_allocator(const char *spec, uint64_t capacity, uint64_t alignment, GError **err)
{
    strata_allocator *probe = strata_allocator_new(spec, capacity, alignment, err);
    strata_allocator_free(probe);
    return probe != NULL;
}

strata_hw *strata_placement_hw_load(const char *path, const char *const *overrides, GError **err)
{
    return strata_hw_load_checked(path, overrides, strata_placement_check_allocator, err);
}

strata_hw *strata_placement_hw_load_data(const char *data, const char *origin, const char *const *overrides,
                                         GError **err)
{
    return strata_hw_load_data_checked(data, origin, overrides, strata_placement_check_allocator, err);
}
