/*
 * fuzz_minimalloc.c: libFuzzer target for the MiniMalloc CSV importer
 * (sim/import/minimalloc.c). The input is a CSV file (from a memfd). A CSV
 * that imports must give ops the trace checker accepts (every consumer runs
 * the checker) and that the writer can write.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "import/minimalloc.h"
#include "trace/check.h"
#include "trace/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz-minimalloc", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
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
