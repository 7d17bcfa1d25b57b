/*
 * fuzz_xla.c: libFuzzer target for `strata import xla` (sim/import/xla*.c).
 * The input is a module's files joined by lines `====`: the buffer
 * assignment (live ranges may follow it), then optionally the live range
 * file, then optionally the optimized HLO. They are written as
 * m-buffer-assignment.txt, m-live-range.txt and m.txt in a private
 * directory (on tmpfs, fuzz_input.h), and the directory is imported. A dump that imports must give
 * ops the trace checker accepts and the writer can write.
 */
#include <string.h>
#include "fuzz_input.h"
#include "import/xla.h"
#include "trace/check.h"
#include "trace/writer.h"

static const char *const names[] = {"m-buffer-assignment.txt", "m-live-range.txt", "m.txt"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = fuzz_dir("fuzz-xla");
    if (dir == NULL)
        return 0;
    fuzz_put_parts(dir, data, size, names, 3);
    GError *err = NULL;
    strata_xla_figures fig;
    strata_source *src = strata_xla_import(dir, NULL, &fig, &err);
    if (src) {
        strata_checker *c = strata_checker_new(dir);
        const strata_op *op;
        while (strata_source_next(src, &op, &err) == 1) {
            GError *check_err = NULL;
            if (!strata_checker_feed(c, op, NULL, &check_err)) {
                fprintf(stderr, "xla import emitted an unchecked trace: %s\n", check_err->message);
                abort();
            }
            g_free(strata_op_to_text(op));
        }
        strata_checker_free(c);
        strata_source_free(src);
    }
    strata_xla_figures_clear(&fig);
    g_clear_error(&err);
    return 0;
}
