/*
 * fuzz_pickle.c: libFuzzer target for the safe pickle reader and the torch
 * snapshot converter behind it (sim/import/pickle.c, torch.c). A pickle that
 * loads is converted; the converted ops must pass the trace checker (every
 * consumer runs it, so an importer must emit checkable traces).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "import/pickle.h"
#include "import/torch.h"
#include "trace/check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GError *err = NULL;
    strata_pickle *p = strata_pickle_load_buffer(data, size, "fuzz.pickle", &err);
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
