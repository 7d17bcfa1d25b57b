/*
 * fuzz_serve.c: libFuzzer target for `strata serve`'s request files
 * (sim/serve/serve_stream.c: the Azure LLM inference CSVs and
 * arrival_s,prompt_tokens,output_tokens). The input's first byte is the row
 * limit (0: all), the rest the file (a memfd, fuzz_input.h). Oracle: no
 * crash, leak, UB or hang; a refusal has a message; a loaded stream keeps
 * serve_stream.h's invariants (arrivals finite, >= 0 and non-decreasing,
 * prompt and output >= 1, at most `limit` rows).
 */
#include <math.h>
#include "fuzz_input.h"
#include "serve/serve_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char path[64];
    int fd = fuzz_memfd(data + 1, size - 1, path);
    if (fd < 0)
        return 0;
    uint32_t limit = data[0];
    GError *err = NULL;
    strata_serve_stream *s = strata_serve_stream_load(path, limit, &err);
    if (s) {
        if (limit > 0 && s->n > limit)
            __builtin_trap();
        for (uint32_t i = 0; i < s->n; i++) {
            const strata_serve_request *r = &s->req[i];
            if (!isfinite(r->arrival) || r->arrival < 0 || (i > 0 && r->arrival < s->req[i - 1].arrival) ||
                r->prompt < 1 || r->output < 1) {
                fprintf(stderr, "serve stream: request %u breaks the invariants (%g, %u, %u)\n", i, r->arrival,
                        r->prompt, r->output);
                abort();
            }
        }
        strata_serve_stream_free(s);
    } else if (err == NULL || err->message[0] == '\0') {
        __builtin_trap(); /* a refusal says why */
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
