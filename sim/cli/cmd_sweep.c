/*
 * cmd_sweep.c: `strata sweep EXPERIMENT.ini [--jobs N] [--out DIR] [--list-jobs]`.
 *
 * Loads and validates the experiment (sweep/experiment.h), runs its missing
 * points one process each (sweep/runner.h), writes results.csv and
 * results.json (sweep/table.h) and the HTML report (sweep/report.h), and
 * prints where they are. `--point N` runs one point (what each child, a
 * GNU parallel job or a Slurm array task runs); `--list-jobs` prints those
 * commands; `--count` prints the number of points.
 *
 * Exit status: 0 every point ran (out-of-memory points are results);
 * 2 bad experiment, bad option, unwritable --out, or a failed point.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "core/error.h"
#include "sweep/experiment.h"
#include "sweep/report.h"
#include "sweep/runner.h"
#include "sweep/table.h"

#define CMD "sweep"

static bool prepare_out_dir(const char *dir, GError **err)
{
    if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: --out exists and is not a folder", dir);
        return false;
    }
    if (g_mkdir_with_parents(dir, 0777) != 0 || access(dir, W_OK | X_OK) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot write the --out folder: %s", dir,
                    g_strerror(errno));
        return false;
    }
    return true;
}

static char *self_exe(void)
{
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    return exe ? exe : g_find_program_in_path("strata");
}

int strata_cmd_sweep(int argc, char **argv)
{
    gint jobs = 0;
    gint64 point = -1;
    char *out = NULL;
    gboolean list_jobs = FALSE, count = FALSE, no_report = FALSE;
    GOptionEntry entries[] = {
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
         "Points run at once, one process each (default: the number of cores)", "N"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
         "Folder for points/, results.csv, results.json and report.html (default: sweep-NAME in the "
         "current folder). Running again with the same folder resumes: finished points are kept",
         "DIR"},
        {"list-jobs", 0, 0, G_OPTION_ARG_NONE, &list_jobs,
         "Print one command per point (for GNU parallel or a Slurm job array) and exit; run the sweep "
         "again afterwards to collect the table and the report",
         NULL},
        {"point", 0, 0, G_OPTION_ARG_INT64, &point,
         "Run only point N (0-based, as listed by --list-jobs) and write DIR/points/N.json; a point already "
         "done is not run again",
         "N"},
        {"count", 0, 0, G_OPTION_ARG_NONE, &count, "Print the number of points and exit", NULL},
        {"no-report", 0, 0, G_OPTION_ARG_NONE, &no_report, "Write the tables but not the HTML report", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *octx = g_option_context_new("EXPERIMENT.ini - run a what-if experiment over a grid of points");
    g_option_context_add_main_entries(octx, entries, NULL);
    g_option_context_set_description(
        octx,
        "The experiment file has three groups: [experiment] (name, hardware, trace or\n"
        "workload or snapshot, policies, allocator, runner = run|alloc), [sweep] (one\n"
        "axis per key, values separated by commas; the points are the cross product)\n"
        "and [output] (figures, plots, timeline, report). See docs/experiments.md.\n"
        "\n"
        "Outputs in DIR: results.csv and results.json (one row per point: the axes,\n"
        "then the figures), points/N.json (each point's full results), points/N.timeline.json\n"
        "(Perfetto timelines), report.html (plots and tables, self-contained).\n"
        "\n"
        "A point that runs out of memory is a result (status oom). Exit status: 0 done;\n"
        "2 bad experiment or option, unwritable DIR, or a point that failed.\n"
        "\n"
        "Many machines:\n"
        "  strata sweep exp.ini --out d --list-jobs | parallel -j 64 && strata sweep exp.ini --out d\n"
        "  sbatch --array=0-$(($(strata sweep exp.ini --count)-1)) --wrap \\\n"
        "    'strata sweep exp.ini --out d --point $SLURM_ARRAY_TASK_ID'\n");
    int status = STRATA_EXIT_OK;
    if (!strata_cli_parse(octx, &argc, &argv, CMD, &status)) {
        g_option_context_free(octx);
        g_free(out);
        return status;
    }
    g_option_context_free(octx);
    if (argc != 2) {
        fprintf(stderr, "strata %s: expected one EXPERIMENT.ini, got %d arguments\nRun 'strata %s --help' for usage.\n",
                CMD, argc - 1, CMD);
        g_free(out);
        return STRATA_EXIT_USAGE;
    }
    if (jobs < 0) {
        fprintf(stderr, "strata %s: --jobs must be 1 or more, got %d\n", CMD, jobs);
        g_free(out);
        return STRATA_EXIT_USAGE;
    }
    if (jobs == 0)
        jobs = (gint)g_get_num_processors();

    GError *err = NULL;
    strata_experiment *exp = strata_experiment_load(argv[1], &err);
    if (!exp) {
        g_free(out);
        return strata_cli_fail(CMD, err);
    }
    if (count) {
        printf("%" G_GUINT64_FORMAT "\n", strata_experiment_point_count(exp));
        strata_experiment_free(exp);
        g_free(out);
        return STRATA_EXIT_OK;
    }
    char *out_rel = out ? out : g_strdup_printf("sweep-%s", strata_experiment_name(exp));
    char *out_dir = g_canonicalize_filename(out_rel, NULL);
    g_free(out_rel);
    char *exe = self_exe();
    strata_sweep_ctx ctx = {.exp = exp, .exe = exe, .out_dir = out_dir};

    if (list_jobs) {
        for (uint64_t p = 0; p < strata_experiment_point_count(exp); p++) {
            char **cmd = strata_sweep_point_command(&ctx, p);
            char *text = strata_sweep_shell_join(cmd);
            printf("%s\n", text);
            g_free(text);
            g_strfreev(cmd);
        }
        goto done;
    }
    if (!prepare_out_dir(out_dir, &err)) {
        status = strata_cli_fail(CMD, err);
        goto done;
    }
    if (point >= 0) {
        if ((uint64_t)point < strata_experiment_point_count(exp) && strata_sweep_point_done(&ctx, (uint64_t)point)) {
            printf("point %" G_GINT64_FORMAT ": already done\n", point);
            goto done;
        }
        if (!strata_sweep_run_point(&ctx, (uint64_t)point, &err))
            status = strata_cli_fail(CMD, err);
        goto done;
    }

    strata_sweep_stats stats;
    FILE *progress = isatty(STDERR_FILENO) ? stderr : NULL;
    if (!strata_sweep_run_all(&ctx, (guint)jobs, progress, &stats, &err)) {
        status = strata_cli_fail(CMD, err);
        goto done;
    }
    char **missing = NULL;
    if (!strata_sweep_write_table(&ctx, &stats, &missing, &err)) {
        status = strata_cli_fail(CMD, err);
        goto done;
    }
    for (guint i = 0; missing && missing[i]; i++)
        fprintf(stderr, "strata %s: warning: figure '%s' is in no point's results (see points/*.json for the keys)\n",
                CMD, missing[i]);
    g_strfreev(missing);
    printf("%s: %" G_GUINT64_FORMAT " points (%" G_GUINT64_FORMAT " run now, %" G_GUINT64_FORMAT
           " already done), %" G_GUINT64_FORMAT " out of memory\n",
           strata_experiment_name(exp), stats.total, stats.ran, stats.skipped, stats.oom);
    printf("results: %s/results.csv\n", out_dir);
    printf("         %s/results.json\n", out_dir);
    if (strata_experiment_report(exp) && !no_report) {
        char *report = NULL;
        if (!strata_sweep_make_report(&ctx, &report, &err)) {
            status = strata_cli_fail(CMD, err);
            goto done;
        }
        printf("report: %s\n", report);
        g_free(report);
    }
done:
    strata_experiment_free(exp);
    g_free(exe);
    g_free(out_dir);
    return status;
}
