/*
 * fuzz_pickle.c: libFuzzer target for the safe pickle reader and the torch
 * snapshot converter behind it (sim/import/pickle*.c, torch*.c). A pickle that
 * loads is converted; the converted ops must pass the trace checker (every
 * consumer runs it, so an importer must emit checkable traces). The
 * streaming reader (collecting between items) must fail exactly where the
 * whole-document reader fails, with the same message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "import/pickle.h"
#include "import/torch.h"
#include "trace/check.h"

/* Streams the buffer to its end: its error message (g_free) or NULL. */
static char *stream_error(const uint8_t *data, size_t size)
{
    static const char *const selectors[] = {"segments/*", "device_traces/*/*", NULL};
    GError *err = NULL;
    strata_pickle_stream *s =
        strata_pickle_stream_open_buffer(data, size, "fuzz.pickle", selectors, &err);
    strata_pickle_stream_set_collect_bytes(s, 1);
    strata_pickle_item item;
    int rc;
    while ((rc = strata_pickle_stream_next(s, &item, &err)) == 1)
        g_free(strata_pickle_to_text(strata_pickle_stream_doc(s), item.value, 4));
    char *msg = rc < 0 ? g_strdup(err->message) : NULL;
    g_clear_error(&err);
    strata_pickle_stream_free(s);
    return msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GError *err = NULL;
    strata_pickle *p = strata_pickle_load_buffer(data, size, "fuzz.pickle", &err);
    char *streamed = stream_error(data, size);
    if (g_strcmp0(streamed, p ? NULL : err->message) != 0) {
        fprintf(stderr, "the stream and the whole reader disagree: '%s' vs '%s'\n",
                streamed ? streamed : "(parsed)", p ? "(parsed)" : err->message);
        abort();
    }
    g_free(streamed);
    if (p) {
        strata_torch_options opt;
        strata_torch_options_init(&opt);
        strata_torch_summary sum = {0};
        strata_source *ops = strata_torch_convert(p, "fuzz.pickle", &opt, &sum, &err);
        if (ops) {
            strata_checker *c = strata_checker_new("fuzz.pickle");
            const strata_op *op;
            int got;
            while ((got = strata_source_next(ops, &op, &err)) == 1) {
                GError *check_err = NULL;
                if (!strata_checker_feed(c, op, NULL, &check_err)) {
                    fprintf(stderr, "torch import emitted an unchecked trace: %s\n", check_err->message);
                    abort();
                }
            }
            g_clear_error(&err);
            strata_checker_free(c);
            strata_source_free(ops);
        }
        strata_torch_summary_clear(&sum);
        strata_pickle_free(p);
    }
    g_clear_error(&err);
    return 0;
}
