/*
 * fuzz_jax_profile.c: libFuzzer target for `strata import jax-profile`
 * (sim/import/jax_profile.c over the streaming scanner, kineto_scan.c).
 * The input is a file (a memfd, fuzz_input.h: plain JSON, or gzip when it
 * starts with the gzip magic); it is sniffed and imported for the device
 * picked by its first op (auto). Oracle: no crash, leak, UB or hang; a
 * refusal is an error with a message; the ops of an import pass the trace
 * checker and are written; a second read gives as many ops as the first.
 */
#include "fuzz_input.h"
#include "fuzz_drain.h"
#include "import/jax_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    (void)strata_jax_profile_sniff(path);
    GError *err = NULL;
    strata_jax_profile_summary sum;
    strata_source *src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, &sum, &err);
    if (src) {
        fuzz_drain_twice(src, path, "jax-profile import");
        strata_source_free(src);
    } else if (err == NULL || err->message[0] == '\0') {
        __builtin_trap(); /* a refusal says why */
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
