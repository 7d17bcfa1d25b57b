/*
 * fuzz_minimalloc.c: libFuzzer target for the MiniMalloc CSV importer
 * (sim/import/minimalloc.c). The input is a CSV file (a memfd, fuzz_input.h). A CSV
 * that imports must give ops the trace checker accepts (every consumer runs
 * the checker) and that the writer can write.
 */
#include "fuzz_input.h"
#include "import/minimalloc.h"
#include "trace/check.h"
#include "trace/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    GError *err = NULL;
    strata_source *src = strata_minimalloc_source(path, &err);
    if (src) {
        strata_checker *c = strata_checker_new(path);
        const strata_op *op;
        while (strata_source_next(src, &op, &err) == 1) {
            GError *check_err = NULL;
            if (!strata_checker_feed(c, op, NULL, &check_err)) {
                fprintf(stderr, "minimalloc import emitted an unchecked trace: %s\n", check_err->message);
                abort();
            }
            g_free(strata_op_to_text(op));
        }
        strata_checker_free(c);
        strata_source_free(src);
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
