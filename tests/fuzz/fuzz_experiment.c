/*
 * fuzz_experiment.c: libFuzzer target for the experiment loader
 * (sim/sweep/experiment.c): GLib key file plus axis validation.
 */
#include <stdint.h>
#include "sweep/experiment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = g_strndup((const char *)data, size);
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load_data(text, STRATA_SOURCE_DIR "/configs/experiments/fuzz.ini", &err);
    if (e) {
        for (guint a = 0; a < strata_experiment_axis_count(e); a++)
            (void)strata_experiment_axis_name(e, a);
        strata_experiment_free(e);
    }
    g_clear_error(&err);
    g_free(text);
    return 0;
}
