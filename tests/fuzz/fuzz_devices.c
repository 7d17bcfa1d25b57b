/*
 * fuzz_devices.c: libFuzzer target for a multi-device hardware file: the
 * loader's device replication ([hardware] devices, [interconnect NAME]
 * topologies and dims, NAME@D memories and links), routes between devices'
 * memories, and an SPMD program expanded over the devices.
 *
 * The input is a hardware .ini (seeds: the multi-device files of
 * configs/hw). When it loads with D > 1 devices (D <= 64: larger pods are
 * the pods suite's), the routes between hbm@0 and every other device's
 * first memory are found, and `option mesh=data:D` with one all-reduce of
 * 4 KiB is expanded and its ops consumed. Oracle: no crash, leak, UB or
 * hang; a model that loads routes or refuses with an error, and expands
 * the program or refuses it with an error.
 */
#include <string.h>
#include "fuzz_input.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"
#include "spmd/spmd.h"
#include "trace/source.h"
#include "trace/reader.h"
#include "trace/writer.h"

static void expand_program(const strata_hw *hw, uint32_t devices)
{
    char *text = g_strdup_printf("strata-trace 1\noption mesh=data:%u\nalloc g 4096 dtype=f32\n"
                                 "all-reduce g axis=data\nfree g\n", devices);
    char path[64];
    int fd = fuzz_memfd((const uint8_t *)text, strlen(text), path);
    g_free(text);
    if (fd < 0)
        return;
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (src) {
        strata_source *x = strata_spmd_expand(src, hw);
        const strata_op *op;
        while (strata_source_next(x, &op, &err) == 1)
            g_free(strata_op_to_text(op));
        strata_source_free(x);
    }
    g_clear_error(&err);
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_strndup((const char *)data, size); /* key files are text: stop at a NUL */
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "fuzz.ini", NULL, &err);
    if (hw) {
        uint32_t devices = strata_spmd_devices(hw);
        if (devices > 1 && devices <= 64) {
            uint32_t n = strata_hw_memory_count(hw);
            for (uint32_t b = 1; b < n && b < 64; b++) {
                const strata_hop *hops;
                uint32_t n_hops;
                GError *route_err = NULL;
                if (!strata_hw_route(hw, 0, b, &hops, &n_hops, &route_err))
                    g_clear_error(&route_err);
            }
            expand_program(hw, devices);
        }
        strata_hw_free(hw);
    }
    g_clear_error(&err);
    g_free(text);
    return 0;
}
