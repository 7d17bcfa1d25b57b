/*
 * fuzz_kineto.c: libFuzzer target for `strata import kineto`
 * (sim/import/kineto*.c). The input is a file (a memfd, fuzz_input.h:
 * plain JSON, or gzip when it starts with the gzip magic) and imported; a trace that
 * imports must give ops the trace checker accepts and the writer can write,
 * and a second read of the source must give as many ops as the first.
 */
#include "fuzz_input.h"
#include "fuzz_drain.h"
#include "import/kineto.h"

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
        fuzz_drain_twice(src, path, "kineto import");
        strata_source_free(src);
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
