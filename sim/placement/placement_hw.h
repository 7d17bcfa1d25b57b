/*
 * placement_hw.h: hardware models loaded with their allocators checked.
 *
 * The hardware model (hw/hw.h) sits below the allocators and keeps each
 * memory's allocator spec as text. Whatever loads a hardware file to place
 * buffers in it loads it here, so that an allocator the file names that
 * does not exist, or a parameter it does not take, is an error at the
 * file's line, as if the loader itself knew the allocators.
 *
 * Invariants:
 *  1. a model loaded here has, for every memory, an allocator spec that
 *     strata_allocator_new() accepts for the memory's capacity and alignment;
 *  2. the check builds each allocator once and frees it: it keeps nothing.
 */
#ifndef STRATA_PLACEMENT_HW_H
#define STRATA_PLACEMENT_HW_H

#include "hw/hw.h"

/* strata_hw_load / strata_hw_load_data with the allocators' check. */
strata_hw *strata_placement_hw_load(const char *path, const char *const *overrides, GError **err);
strata_hw *strata_placement_hw_load_data(const char *data, const char *origin, const char *const *overrides,
                                         GError **err);
/* The check itself (a strata_hw_allocator_check). */
bool strata_placement_check_allocator(const char *spec, uint64_t capacity, uint64_t alignment, GError **err);

#endif
