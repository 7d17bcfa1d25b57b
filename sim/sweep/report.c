/*
 * report.c: runs viz/report.py on a finished sweep (see report.h).
 */
#include "sweep/report.h"

#include "core/error.h"
#include "core/interrupt.h"

static char *find_python(void)
{
    const char *env = g_getenv("STRATA_PYTHON");
    if (env && *env)
        return g_strdup(env);
    if (g_file_test("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
        return g_strdup("/usr/bin/python3");
    return g_find_program_in_path("python3");
}

static char *find_viz(void)
{
    const char *env = g_getenv("STRATA_VIZ_DIR");
    return g_build_filename(env && *env ? env : STRATA_SOURCE_DIR "/viz", "report.py", NULL);
}

bool strata_sweep_make_report(const strata_sweep_ctx *ctx, char **report_path, GError **err)
{
    char *python = find_python();
    char *script = find_viz();
    bool ok = false;
    if (!python) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO,
                    "cannot draw the report: no python3 found (install python3-matplotlib, or set STRATA_PYTHON)");
    } else if (!g_file_test(script, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot draw the report: %s is missing (set STRATA_VIZ_DIR)",
                    script);
    } else {
        char *argv[] = {python, script, (char *)ctx->out_dir, NULL};
        char *out = NULL, *errout = NULL;
        int status = 0;
        strata_child_signals keep;
        strata_child_signals_read(&keep);
        ok = g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, strata_interrupt_child_setup, &keep, &out, &errout,
                          &status, err);
        if (ok && !g_spawn_check_wait_status(status, NULL)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s %s %s failed:\n%s", python, script, ctx->out_dir,
                        errout ? errout : "");
            ok = false;
        }
        g_free(out);
        g_free(errout);
    }
    if (ok)
        *report_path = g_build_filename(ctx->out_dir, "report.html", NULL);
    g_free(python);
    g_free(script);
    return ok;
}
