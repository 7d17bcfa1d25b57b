/*
 * fuzz_spmd.c: libFuzzer target for an SPMD trace with a mesh: the trace
 * reader, the checker against a multi-device model, and the SPMD expansion
 * (sim/spmd/) that turns one program into every device's ops, collectives
 * into their rounds.
 *
 * The input is a trace file (seeds: `option mesh=...` programs with
 * collectives). The model is configs/hw/test-ring8.ini (8 devices on a
 * ring), loaded once. Oracle beyond "no crash, no leak, no UB, no hang": a
 * trace the checker accepts op by op expands without error into ops the
 * writer can write, at most STRATA_FUZZ_SPMD_MAX_OPS of them (the
 * expansion of an input of at most 64 KiB is bounded: its ops are
 * consumed, never held).
 */
#include "fuzz_input.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"
#include "spmd/spmd.h"
#include "trace/check.h"
#include "trace/checked.h"
#include "trace/reader.h"
#include "trace/writer.h"

#define STRATA_FUZZ_SPMD_MAX_OPS 2000000

static strata_hw *model(void)
{
    static strata_hw *hw; /* loaded once for the whole run (the fuzzer's own process) */
    if (!hw) {
        GError *err = NULL;
        hw = strata_placement_hw_load(STRATA_SOURCE_DIR "/configs/hw/test-ring8.ini", NULL, &err);
        if (!hw) {
            fprintf(stderr, "fuzz_spmd: %s\n", err->message);
            abort();
        }
    }
    return hw;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (src) {
        /* checked as run checks it, then expanded on the model's devices */
        strata_source *x = strata_spmd_expand(strata_checked_source_new(src, NULL), model());
        const strata_op *op;
        uint64_t n = 0;
        int got;
        while ((got = strata_source_next(x, &op, &err)) == 1 && n++ < STRATA_FUZZ_SPMD_MAX_OPS)
            g_free(strata_op_to_text(op));
        if (n > STRATA_FUZZ_SPMD_MAX_OPS) {
            fprintf(stderr, "fuzz_spmd: an input of %zu bytes expanded past %d ops\n", size,
                    STRATA_FUZZ_SPMD_MAX_OPS);
            abort();
        }
        strata_source_free(x);
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
