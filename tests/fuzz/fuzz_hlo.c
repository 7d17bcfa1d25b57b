/*
 * fuzz_hlo.c: libFuzzer target for the optimized-HLO text reader
 * (sim/import/xla_hlo.h, the `jax` importer's parser), through its public
 * entry points: each line of the input is fed to xla_hlo_feed() in order
 * until one is refused, then the end-of-file check (xla_hlo_finish) when
 * every line was taken, then the devices, a parameter's memory space and a
 * few names are looked up.
 *
 * The input is an HLO module's text (seeds: tests/data/xla's
 * *after_optimizations.txt). Oracle: no crash, leak, UB or hang; a refused
 * line is an error (never an abort), and lookups of any name are safe
 * after an error too.
 */
#include <string.h>
#include "fuzz_input.h"
#include "import/xla_hlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_strndup((const char *)data, size);
    xla_hlo *h = xla_hlo_new();
    GError *err = NULL;
    uint64_t lineno = 0;
    const char *last = NULL;
    bool fed = true;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        if (!xla_hlo_feed(h, "fuzz.txt", line, lineno, &err)) {
            fed = false;
            break;
        }
        const char *pct = strchr(line, '%');
        if (pct)
            last = pct + 1;
    }
    if (fed) /* the end-of-file checks (truncated module, no ENTRY) */
        (void)xla_hlo_finish(h, "fuzz.txt", &err);
    g_clear_error(&err);
    (void)xla_hlo_devices(h);
    (void)xla_hlo_parameter_space(h, 0);
    (void)xla_hlo_parameter_space(h, UINT64_MAX);
    (void)xla_hlo_find(h, "");
    (void)xla_hlo_find(h, "main");
    if (last) {
        char *name = g_strndup(last, strcspn(last, " =,)("));
        (void)xla_hlo_find(h, name);
        g_free(name);
    }
    xla_hlo_free(h);
    g_free(text);
    return 0;
}
