/*
 * fuzz_hw.c: libFuzzer target for the hardware .ini loader (GLib key file
 * plus strata's validation) and its route finder.
 */
#include <stdint.h>
#include <string.h>
#include "hw/hw.h"
#include "placement/placement_hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_strndup((const char *)data, size); /* key files are text: stop at a NUL */
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "fuzz.ini", NULL, &err);
    if (hw) {
        uint32_t n = strata_hw_memory_count(hw);
        for (uint32_t a = 0; a < n && a < 16; a++)
            for (uint32_t b = 0; b < n && b < 16; b++) {
                const strata_hop *hops;
                uint32_t n_hops;
                GError *route_err = NULL;
                if (!strata_hw_route(hw, a, b, &hops, &n_hops, &route_err))
                    g_clear_error(&route_err);
            }
        for (uint32_t u = 0; u < strata_hw_compute_count(hw); u++)
            for (int d = 0; d < STRATA_DTYPE__COUNT; d++)
                (void)strata_hw_compute_flops(hw, u, (strata_dtype)d);
        (void)strata_hw_memory_index(hw, NULL);
        strata_hw_free(hw);
    }
    g_clear_error(&err);
    g_free(text);
    return 0;
}
