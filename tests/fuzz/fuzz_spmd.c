/*
 * fuzz_spmd.c: libFuzzer target for an SPMD trace with a mesh: the trace
 * reader, the checker, the binder (and its trace-option table) and the SPMD
 * expansion (sim/spmd/) that turns one program into every device's ops,
 * collectives into their rounds.
 *
 * The input is a trace file (seeds: `option mesh=...` programs with
 * collectives). The model is configs/hw/test-ring8.ini (8 devices on a
 * ring), loaded once. Each input runs two passes:
 *
 *  1. the whole program, every line: read, checked and bound as
 *     `strata check` binds it (the unexpanded program, collectives and
 *     device= allowed), options through the binder's table; one op per
 *     line, so cheap;
 *  2. the program as `run` reads it: checked, expanded over the model's 8
 *     devices and bound to the model (qualified names, routes, the option
 *     table against the model's memories), each expanded op written back
 *     as text (the writer oracle), for at most
 *     STRATA_FUZZ_SPMD_EXPANDED_OPS expanded ops.
 *
 * Why the bound (docs/reliability.md, "harness change"): a program line
 * becomes 8 ops and a collective 8 x its rounds, so the grown corpus's
 * inputs expanded to up to 6,090 ops (about 8.5 us each under ASan, with
 * the writer oracle), which held the target at 230 to 445 executions a
 * second. 1,377 of its 1,838 inputs expand to fewer than 100 ops and run
 * whole; a longer one is checked whole (pass 1) and expanded up to the
 * bound. Oracle beyond "no crash, no leak, no UB, no hang": a pass ends
 * with a clean end or an input error (STRATA_ERROR_INPUT), never another
 * kind of error.
 */
#include "fuzz_input.h"
#include "bind/bind.h"
#include "core/error.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"
#include "spmd/spmd.h"
#include "trace/checked.h"
#include "trace/reader.h"
#include "trace/writer.h"

#ifndef STRATA_FUZZ_SPMD_EXPANDED_OPS
#define STRATA_FUZZ_SPMD_EXPANDED_OPS 512
#endif

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

/* A pass's end: 0 (the whole stream) or an input error; anything else is a bug. */
static void pass_ended(int got, GError **err, const char *pass)
{
    if (got < 0 && !g_error_matches(*err, STRATA_ERROR, STRATA_ERROR_INPUT)) {
        fprintf(stderr, "fuzz_spmd: %s ended with an error that is not an input error: %s\n", pass,
                *err ? (*err)->message : "(no message)");
        abort();
    }
    g_clear_error(err);
}

/* Pass 1: every line, bound as `strata check` binds the program. */
static void check_whole_program(const char *path)
{
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (!src) {
        g_clear_error(&err);
        return;
    }
    strata_bind_options opt = {.allow_spmd = true};
    strata_binder *b = strata_binder_new(src, &opt);
    const strata_bound_op *op;
    int got;
    while ((got = strata_binder_next(b, &op, &err)) == 1)
        ;
    pass_ended(got, &err, "the program's check");
    strata_binder_free(b);
    strata_source_free(src);
}

/* Pass 2: expanded over the model and bound to it, up to the bound. */
static void run_expansion(const char *path)
{
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (!src) {
        g_clear_error(&err);
        return;
    }
    strata_source *x = strata_spmd_expand(strata_checked_source_new(src, NULL), model());
    strata_bind_options opt = {.hw = model()};
    strata_binder *b = strata_binder_new(x, &opt);
    const strata_bound_op *op;
    int got = 0;
    uint64_t n = 0;
    while (n++ < STRATA_FUZZ_SPMD_EXPANDED_OPS && (got = strata_binder_next(b, &op, &err)) == 1)
        g_free(strata_op_to_text(op->op));
    if (n <= STRATA_FUZZ_SPMD_EXPANDED_OPS)
        pass_ended(got, &err, "the expansion");
    g_clear_error(&err);
    strata_binder_free(b);
    strata_source_free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    check_whole_program(path);
    run_expansion(path);
    close(fd);
    return 0;
}
