/*
 * fuzz_kineto.c: libFuzzer target for `strata import kineto`
 * (sim/import/kineto*.c). The input is a file (a memfd, fuzz_input.h:
 * plain JSON, or gzip when it starts with the gzip magic) and imported; a trace that
 * imports must give ops the trace checker accepts and the writer can write,
 * and a second read of the source must give as many ops as the first.
 */
#include "fuzz_input.h"
#include "import/kineto.h"
#include "trace/check.h"
#include "trace/writer.h"

/* Ops of one read of src, each checked and written; -1 on a read error. */
static long drain(strata_source *src, const char *origin)
{
    strata_checker *c = strata_checker_new(origin);
    const strata_op *op;
    GError *err = NULL;
    long n = 0;
    int rc;
    while ((rc = strata_source_next(src, &op, &err)) == 1) {
        GError *check_err = NULL;
        if (!strata_checker_feed(c, op, NULL, &check_err)) {
            fprintf(stderr, "kineto import emitted an unchecked trace: %s\n", check_err->message);
            abort();
        }
        g_free(strata_op_to_text(op));
        n++;
    }
    strata_checker_free(c);
    g_clear_error(&err);
    return rc < 0 ? -1 : n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    GError *err = NULL;
    strata_kineto_options opt;
    strata_kineto_options_init(&opt);
    strata_kineto_summary sum;
    strata_source *src = strata_kineto_import(path, &opt, &sum, &err);
    if (src) {
        long first = drain(src, path);
        if (first >= 0 && strata_source_rewind(src, NULL) && drain(src, path) != first) {
            fprintf(stderr, "kineto import: a second read gave other ops\n");
            abort();
        }
        strata_source_free(src);
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
