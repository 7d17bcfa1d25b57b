/*
 * fuzz_trace.c: libFuzzer target for the trace reader, the checker and the
 * writer.
 *
 * The input is a trace file. It is read op by op through strata_trace_open()
 * (from a memfd, fuzz_input.h) and every op is fed to the checker. Oracle
 * beyond "no crash, no leak, no UB": every op the reader accepts must
 * survive a write and read back equal (the writer's round-trip invariant),
 * and a rewind must give the same first op again.
 */
#include "fuzz_input.h"
#include "trace/check.h"
#include "trace/reader.h"
#include "trace/writer.h"

static void round_trip(const strata_op *op)
{
    char *text = strata_op_to_text(op);
    strata_op back;
    GError *err = NULL;
    strata_line_scratch *s = strata_parse_op_line(text, "rt", 1, &back, &err);
    if (!s || !strata_op_equal(op, &back)) {
        fprintf(stderr, "round trip broke at line %lu: '%s' %s\n", (unsigned long)op->line, text,
                err ? err->message : "reads back different");
        abort();
    }
    strata_line_scratch_free(s);
    g_free(text);
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
        strata_checker *c = strata_checker_new(path);
        const strata_op *op;
        strata_op first = {0};
        bool have_first = false;
        int got;
        while ((got = strata_source_next(src, &op, &err)) == 1) {
            round_trip(op);
            if (!have_first) {
                strata_op_copy(&first, op);
                have_first = true;
            }
            strata_op_refs refs;
            if (!strata_checker_feed(c, op, &refs, NULL))
                continue; /* keep reading: the reader must survive whatever follows */
        }
        g_clear_error(&err);
        if (have_first) {
            if (!strata_source_rewind(src, NULL) || strata_source_next(src, &op, NULL) != 1 ||
                !strata_op_equal(op, &first) || op->line != first.line)
                abort();
            strata_op_clear(&first);
        }
        strata_checker_free(c);
        strata_source_free(src);
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
