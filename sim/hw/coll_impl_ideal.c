/*
 * coll_impl_ideal.c: the ideal row of the collective implementations
 * (coll_impl.h), a model's own when it names none: the collectives as the
 * algorithms' schedules run them on the links, with no library's costs.
 *
 * No parameters, no tune. pick: direct for all-to-all and
 * collective-permute; torus for a group over several axes whose rings
 * along each axis join neighbours on the machine (one link from device 0
 * to its next and its previous along every axis: a torus whose dimensions
 * are those axes); else ring. Every other row's pick falls back on this
 * one.
 */
#include "hw/coll_impl.h"

/* True when device 0's default memory reaches the one of `device` over one link. */
static bool one_link(const strata_hw *hw, uint32_t device)
{
    int base = strata_hw_memory_base_index(hw, NULL);
    uint32_t b = base >= 0 ? (uint32_t)base : 0;
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    return strata_hw_route(hw, strata_hw_memory_on(hw, b, 0), strata_hw_memory_on(hw, b, device), &hops, &n, NULL) &&
           n == 1;
}

static const char *ideal_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    if (kind == STRATA_OP_ALL_TO_ALL || kind == STRATA_OP_COLLECTIVE_PERMUTE)
        return "direct";
    uint32_t axes = 0, stride = 1;
    bool neighbours = true;
    for (uint32_t a = strata_mesh_axis_count(mesh); a-- > 0;) {
        uint32_t size = strata_mesh_group_size(mesh, 1u << a);
        if ((mask & (1u << a)) && size > 1) {
            axes++;
            neighbours = neighbours && one_link(hw, stride) && one_link(hw, (size - 1) * stride);
        }
        stride *= size;
    }
    return axes > 1 && neighbours ? "torus" : "ring";
}

const strata_coll_impl strata_coll_impl_ideal = {
    .name = "ideal",
    .pick = ideal_pick,
};
