/*
 * fuzz_chakra.c: libFuzzer target for the Chakra execution-trace importer
 * (sim/import/chakra.c). The input is one .et file (a memfd, fuzz_input.h),
 * imported as a single rank's graph. A file that imports must give ops the
 * trace checker accepts and that the writer can write; one that does not
 * must say why (an error, never a crash, a leak or a hang).
 */
#include "fuzz_input.h"
#include "import/chakra.h"
#include "trace/check.h"
#include "trace/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    GError *err = NULL;
    char *files[] = {path, NULL};
    strata_chakra_summary sum;
    size_t n = 0;
    strata_source **traces = strata_chakra_import(files, -1, 0, &n, &sum, &err);
    for (size_t t = 0; traces && t < n; t++) {
        strata_checker *c = strata_checker_new(path);
        const strata_op *op;
        while (strata_source_next(traces[t], &op, &err) == 1) {
            GError *check_err = NULL;
            /* a strata export's ops are the exported trace's, which the checker judges on its own */
            if (!sum.from_strata && !strata_checker_feed(c, op, NULL, &check_err)) {
                fprintf(stderr, "chakra import emitted an unchecked trace: %s\n", check_err->message);
                abort();
            }
            g_clear_error(&check_err);
            g_free(strata_op_to_text(op));
        }
        strata_checker_free(c);
        strata_source_free(traces[t]);
    }
    if (!traces && !err) {
        fprintf(stderr, "chakra import failed without an error\n");
        abort();
    }
    g_free(traces);
    g_clear_error(&err);
    close(fd);
    return 0;
}
