/*
 * cmd_sweep.c: `strata sweep EXPERIMENT.ini [--jobs N] [--out DIR] [--list-jobs]`.
 *
 * Loads and validates the experiment (sweep/experiment.h), runs its missing
 * points one process each (sweep/runner.h), writes results.csv and
 * results.json (sweep/table.h) and the HTML report (sweep/report.h), and
 * prints where they are. `--point N` runs one point (what each child, a
 * GNU parallel job or a Slurm array task runs); `--list-jobs` prints those
 * commands (`--format jsonl`: a manifest); `--pending` only the unfinished
 * ones; `--shard K/N` takes every N-th point from K; `--count` prints the
 * number of points.
 *
 * Exit status: 0 every point ran (out-of-memory points are results);
 * 2 bad experiment, bad option, unwritable --out, or a failed point.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/progress.h"
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include "sweep/experiment.h"
#include "sweep/report.h"
#include "sweep/runner.h"
#include "sweep/table.h"

#define CMD "sweep"

/* --out DIR: made when missing, in a folder that exists. A missing parent
 * is refused, as -o and --json refuse a file in a missing folder:
 * g_mkdir_with_parents made every missing folder of a typo (--out
 * resutls/a/b), exit 0. */
static bool prepare_out_dir(const char *dir, GError **err)
{
    if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: --out exists and is not a folder", dir);
        return false;
    }
    if (!g_file_test(dir, G_FILE_TEST_EXISTS)) {
        char *parent = g_path_get_dirname(dir);
        bool missing = !g_file_test(parent, G_FILE_TEST_IS_DIR);
        if (missing) {
            char *base = g_path_get_basename(dir);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "--out %s: the folder '%s' does not exist: expected an "
                        "existing folder to make '%s' in (as for -o and --json; create it first)", dir, parent,
                        base);
            g_free(base);
        }
        g_free(parent);
        if (missing)
            return false;
    }
    if ((g_mkdir(dir, 0777) != 0 && errno != EEXIST) || access(dir, W_OK | X_OK) != 0) {
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

#define POINT_UNSET G_MININT64
#define JOBS_UNSET G_MININT

typedef struct sweep_args {
    gint jobs;
    gint64 point;
    char *out, *shard, *format;
    gboolean list_jobs, pending, count, no_report, quiet;
    uint64_t shard_index, shard_count; /* from --shard K/N; count 0: none */
} sweep_args;

/* --shard K/N: 0 <= K < N. */
static bool parse_shard(sweep_args *a, GError **err)
{
    if (!a->shard)
        return true;
    char *end = NULL;
    errno = 0; /* a number past 2^64 - 1 saturates with ERANGE: an error, not 2^64 - 1 */
    guint64 k = g_ascii_strtoull(a->shard, &end, 10), n = 0;
    bool ok = g_ascii_isdigit(a->shard[0]) && errno == 0 && *end == '/' && g_ascii_isdigit(end[1]);
    if (ok) {
        const char *slash = end + 1;
        n = g_ascii_strtoull(slash, &end, 10);
        ok = errno == 0 && *end == '\0' && n >= 1 && k < n;
    }
    if (!ok) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--shard: expected K/N with 0 <= K < N < 2^64 (shard K of N machines), got '%s'", a->shard);
        return false;
    }
    a->shard_index = k;
    a->shard_count = n;
    return true;
}

/* The first option given of names (NULL-terminated) whose flag in given is set, or NULL. */
static const char *first_given(const char *const *names, const bool *given)
{
    for (size_t i = 0; names[i]; i++)
        if (given[i])
            return names[i];
    return NULL;
}

/* Each option is read by some modes only (--count prints and exits; --list-jobs and --pending list and exit;
 * --point runs one point in this process; otherwise the run of every point): one given beside a mode that reads
 * it nowhere changed nothing at exit 0 (the twenty-third hardening pass), as did --point N beside a --shard K/M
 * that does not hold N (the point ran all the same). */
static bool sweep_check_modes(const sweep_args *a, GError **err)
{
    bool point = a->point != POINT_UNSET, listing = a->list_jobs || a->pending;
    static const char *const count_with[] = {"--list-jobs", "--pending", "--point", "--shard", "--jobs", "--no-report",
                                             NULL};
    static const char *const list_with[] = {"--point", "--jobs", "--no-report", NULL};
    static const char *const point_with[] = {"--jobs", "--no-report", NULL};
    const char *bad = NULL, *mode = NULL, *why = NULL;
    if (a->count && (bad = first_given(count_with, (const bool[]){a->list_jobs, a->pending, point, a->shard,
                                                                   a->jobs != JOBS_UNSET, a->no_report})))
        mode = "--count", why = "it prints the experiment's number of points, all of them, and exits";
    else if (listing &&
             (bad = first_given(list_with, (const bool[]){point, a->jobs != JOBS_UNSET, a->no_report})))
        mode = a->list_jobs ? "--list-jobs" : "--pending", why = "it lists points and exits, running none";
    else if (point && (bad = first_given(point_with, (const bool[]){a->jobs != JOBS_UNSET, a->no_report})))
        mode = "--point", why = "it runs one point in this process and writes no table nor report";
    if (!bad && a->format && !a->list_jobs) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--format %s: expected --list-jobs beside it (it chooses "
                    "--list-jobs' manifest: one command a line or JSONL)", a->format);
        return false;
    }
    if (bad) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected no %s beside %s (%s)", bad, bad, mode, why);
        return false;
    }
    if (point && a->shard_count && (uint64_t)a->point % a->shard_count != a->shard_index) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--point %" G_GINT64_FORMAT ": expected a point of "
                    "--shard %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " (p mod %" G_GUINT64_FORMAT " = %"
                    G_GUINT64_FORMAT "), got %" G_GINT64_FORMAT " mod %" G_GUINT64_FORMAT " = %" G_GUINT64_FORMAT,
                    a->point, a->shard_index, a->shard_count, a->shard_count, a->shard_index, a->point,
                    a->shard_count, (uint64_t)a->point % a->shard_count);
        return false;
    }
    return true;
}

static bool sweep_check_args(sweep_args *a, GError **err)
{
    if (a->format && strcmp(a->format, "text") != 0 && strcmp(a->format, "jsonl") != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--format: expected text or jsonl, got '%s'", a->format);
        return false;
    }
    if (a->jobs < 1 && a->jobs != JOBS_UNSET) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--jobs: expected 1 or more, got %d", a->jobs);
        return false;
    }
    if (a->point < 0 && a->point != POINT_UNSET) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--point: expected a point number from 0, got %" G_GINT64_FORMAT,
                    a->point);
        return false;
    }
    return parse_shard(a, err) && sweep_check_modes(a, err);
}

/* The JSONL line of a point: {"point":N,"argv":[...],"output":"..."}, its
 * strings valid JSON whatever their bytes (core/jsonout.h). */
static char *jsonl_line(uint64_t p, char *const *cmd, const char *output)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "{\"point\":%" G_GUINT64_FORMAT ",\"argv\":[", p);
    for (guint i = 0; cmd[i]; i++) {
        char *q = strata_json_quote_bytes(cmd[i]);
        g_string_append_printf(s, "%s%s", i ? "," : "", q);
        g_free(q);
    }
    char *q = strata_json_quote_bytes(output);
    g_string_append_printf(s, "],\"output\":%s}", q);
    g_free(q);
    return g_string_free(s, FALSE);
}

/* A text manifest is one command a line, read line by line (GNU parallel,
 * xargs): an argument holding a line break would split a command and run
 * its rest as shell code, so such an argument is refused (jsonl holds it). */
static bool line_safe(char *const *cmd, GError **err)
{
    for (guint i = 0; cmd[i]; i++)
        if (strpbrk(cmd[i], "\n\r")) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "--list-jobs: argument %u of a point's command holds a line break (a path?): a manifest of "
                        "one command a line cannot hold it; use --format jsonl", i);
            return false;
        }
    return true;
}

/* One line per selected point (only the unfinished ones with --pending):
 * its command (text), or {"point", "argv", "output"} (jsonl); with neither
 * --list-jobs nor jsonl, --pending prints the point numbers. Every command
 * is checked before the first line is printed. */
static bool list_jobs(const strata_sweep_ctx *ctx, const sweep_args *a, GError **err)
{
    bool jsonl = a->format && strcmp(a->format, "jsonl") == 0;
    for (int pass = jsonl || !a->list_jobs ? 1 : 0; pass < 2; pass++)
        for (uint64_t p = strata_sweep_next_selected(ctx, 0); p < strata_experiment_point_count(ctx->exp);
             p = strata_sweep_next_selected(ctx, p + 1)) {
            if (a->pending && strata_sweep_point_done(ctx, p))
                continue;
            if (!a->list_jobs) {
                printf("%" G_GUINT64_FORMAT "\n", p);
                continue;
            }
            char **cmd = strata_sweep_point_command(ctx, p);
            bool ok = true;
            if (pass == 0)
                ok = line_safe(cmd, err);
            else if (jsonl) {
                char *output = strata_sweep_point_json_path(ctx, p);
                char *text = jsonl_line(p, cmd, output);
                printf("%s\n", text);
                g_free(text);
                g_free(output);
            } else {
                char *text = strata_sweep_shell_join(cmd);
                printf("%s\n", text);
                g_free(text);
            }
            g_strfreev(cmd);
            if (!ok)
                return false;
        }
    return true;
}

static bool run_one_point(const strata_sweep_ctx *ctx, uint64_t point, GError **err)
{
    if (point < strata_experiment_point_count(ctx->exp) && strata_sweep_point_done(ctx, point)) {
        printf("point %" G_GUINT64_FORMAT ": already done\n", point);
        return true;
    }
    return strata_sweep_run_point(ctx, point, err);
}

/* The most points one run of the sweep takes (the points of its shard). Before its first point starts, a run
 * lists the points not done (8 bytes each) after reading each one's json (strata_sweep_run_all); each point
 * is then a process of its own (about 0.3 s of a core for the smallest, a 128x128 matmul, here). 10^9 points
 * (three axes of 1,000 values) spent minutes of a core and gigabytes on the list, silent, before the first
 * point: a run that could never end. Past the bound, --shard K/N splits it over runs or machines. */
#define SWEEP_RUN_MAX_POINTS 1000000u

/* The points of the context's shard: every point, or those p < n with p mod N = K. */
static uint64_t selected_points(const strata_sweep_ctx *ctx)
{
    uint64_t n = strata_experiment_point_count(ctx->exp);
    if (!ctx->shard_count)
        return n;
    return n > ctx->shard_index ? (n - ctx->shard_index - 1) / ctx->shard_count + 1 : 0;
}

/* Whether at most the cap of the selected points are unfinished (a sweep its
 * shards ran, run again to collect its table); stops counting past the cap. */
static bool pending_within_cap(const strata_sweep_ctx *ctx)
{
    uint64_t pending = 0, n = strata_experiment_point_count(ctx->exp);
    for (uint64_t p = strata_sweep_next_selected(ctx, 0); p < n; p = strata_sweep_next_selected(ctx, p + 1))
        if (!strata_sweep_point_done(ctx, p) && ++pending > SWEEP_RUN_MAX_POINTS)
            return false;
    return true;
}

static bool check_run_size(const strata_sweep_ctx *ctx, const char *exp_path, GError **err)
{
    uint64_t n = selected_points(ctx);
    if (n <= SWEEP_RUN_MAX_POINTS || pending_within_cap(ctx))
        return true;
    uint64_t shards = (strata_experiment_point_count(ctx->exp) + SWEEP_RUN_MAX_POINTS - 1) / SWEEP_RUN_MAX_POINTS;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %" G_GUINT64_FORMAT " points to run%s: expected at "
                "most %u in one run (one process a point, every point listed before the first starts); split the "
                "sweep with --shard K/%" G_GUINT64_FORMAT " (K from 0), or fewer values on the [sweep] axes",
                exp_path, n, ctx->shard_count ? " in the shard" : "", SWEEP_RUN_MAX_POINTS, shards);
    return false;
}

/* Every missing point, then the tables and the report. */
static bool run_sweep(const strata_sweep_ctx *ctx, const sweep_args *a, GError **err)
{
    strata_sweep_stats stats;
    FILE *progress = strata_progress_stream(a->quiet);
    guint jobs = a->jobs > 0 ? (guint)a->jobs : g_get_num_processors();
    char **missing = NULL;
    if (!strata_sweep_run_all(ctx, jobs, progress, &stats, err))
        return false;
    if (ctx->shard_count) {
        printf("%s: shard %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT " points (%" G_GUINT64_FORMAT
               " run now, %" G_GUINT64_FORMAT " already done); run without --shard to collect the table\n",
               strata_experiment_name(ctx->exp), ctx->shard_index, ctx->shard_count, stats.total, stats.ran,
               stats.skipped);
        return true;
    }
    if (!strata_sweep_write_table(ctx, &stats, &missing, err))
        return false;
    for (guint i = 0; missing && missing[i]; i++)
        fprintf(stderr, "strata %s: warning: figure '%s' is in no point's results (see points/*.json for the keys)\n",
                CMD, missing[i]);
    g_strfreev(missing);
    printf("%s: %" G_GUINT64_FORMAT " points (%" G_GUINT64_FORMAT " run now, %" G_GUINT64_FORMAT
           " already done), %" G_GUINT64_FORMAT " out of memory\n",
           strata_experiment_name(ctx->exp), stats.total, stats.ran, stats.skipped, stats.oom);
    printf("results: %s/results.csv\n", ctx->out_dir);
    printf("         %s/results.json\n", ctx->out_dir);
    if (strata_experiment_report(ctx->exp) && !a->no_report) {
        char *report = NULL;
        if (!strata_sweep_make_report(ctx, &report, err))
            return false;
        printf("report: %s\n", report);
        g_free(report);
    }
    return true;
}

static bool sweep_main(strata_job *job, const sweep_args *a, const char *exp_path, GError **err)
{
    if (a->out && !*a->out) { /* '' canonicalised to the current folder, which received points/ and inputs/ */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--out: expected a folder, got ''");
        return false;
    }
    strata_experiment *exp = strata_experiment_load(exp_path, err);
    if (!exp)
        return false;
    if (a->count) {
        printf("%" G_GUINT64_FORMAT "\n", strata_experiment_point_count(exp));
        strata_experiment_free(exp);
        return true;
    }
    char *out_rel = a->out ? g_strdup(a->out) : g_strdup_printf("sweep-%s", strata_experiment_name(exp));
    char *out_dir = g_canonicalize_filename(out_rel, NULL);
    g_free(out_rel);
    char *exe = self_exe();
    strata_sweep_ctx ctx = {.exp = exp, .exe = exe, .out_dir = out_dir, .shard_index = a->shard_index,
                            .shard_count = a->shard_count, .outs = strata_job_outputs(job)};
    char **inputs = strata_experiment_inputs(exp);
    for (char **in = inputs; *in; in++)
        strata_outfile_set_input(ctx.outs, *in);
    g_strfreev(inputs);
    bool ok = true;
    if (a->list_jobs || a->pending) {
        ok = list_jobs(&ctx, a, err);
    } else if ((ok = (a->point != POINT_UNSET || check_run_size(&ctx, exp_path, err)) &&
                     prepare_out_dir(out_dir, err))) {
        if (a->point != POINT_UNSET) {
            strata_job_doing(job, "running point %" G_GINT64_FORMAT " into %s", a->point, out_dir);
            ok = run_one_point(&ctx, (uint64_t)a->point, err);
        } else {
            strata_job_doing(job, "running the sweep into %s (finished points are kept: run the same command "
                             "again to resume)", out_dir);
            ok = run_sweep(&ctx, a, err);
        }
    }
    strata_experiment_free(exp);
    g_free(exe);
    g_free(out_dir);
    return ok;
}

int strata_cmd_sweep(int argc, char **argv)
{
    sweep_args a = {.jobs = JOBS_UNSET, .point = POINT_UNSET};
    GOptionEntry entries[] = {
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &a.jobs,
         "Points run at once, one process each (default: the number of cores)", "N"},
        {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a.out,
         "Folder for points/, results.csv, results.json and report.html (default: sweep-NAME in the "
         "current folder). Running again with the same folder resumes: finished points are kept",
         "DIR"},
        {"list-jobs", 0, 0, G_OPTION_ARG_NONE, &a.list_jobs,
         "Print one command per point (for GNU parallel or a Slurm job array) and exit; run the sweep "
         "again afterwards to collect the table and the report",
         NULL},
        {"point", 0, 0, G_OPTION_ARG_INT64, &a.point,
         "Run only point N (0-based, as listed by --list-jobs) and write DIR/points/N.json; a point already "
         "done is not run again",
         "N"},
        {"format", 0, 0, G_OPTION_ARG_STRING, &a.format,
         "With --list-jobs: text (one shell command a line, the default) or jsonl (one JSON object a line: "
         "point, argv, output), a manifest for Slurm arrays, Snakemake or any scheduler",
         "FORMAT"},
        {"pending", 0, 0, G_OPTION_ARG_NONE, &a.pending,
         "List only the points not finished in DIR (their numbers; with --list-jobs, their commands) and exit",
         NULL},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &a.shard,
         "Take only the points p with p mod N = K (K from 0 to N-1), to split a sweep over N machines; applies "
         "to the run, --list-jobs and --pending. A shard writes its points only: run the sweep without --shard "
         "afterwards to collect the table",
         "K/N"},
        {"count", 0, 0, G_OPTION_ARG_NONE, &a.count, "Print the number of points and exit", NULL},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet,
         "Do not print progress (points done and left) on standard error when it is a terminal", NULL},
        {"no-report", 0, 0, G_OPTION_ARG_NONE, &a.no_report, "Write the tables but not the HTML report", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new(CMD, "EXPERIMENT.ini - run a what-if experiment over a grid of points", NULL, "The experiment file has three groups: [experiment] (name, hardware, trace or\n"
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
        "    'strata sweep exp.ini --out d --point $SLURM_ARRAY_TASK_ID'\n", entries);
    GError *err = NULL;
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 1, 1, "one EXPERIMENT.ini") && sweep_check_args(&a, &err) &&
        sweep_main(job, &a, argv[1], &err))
        status = STRATA_EXIT_OK;
    status = strata_job_end(job, status, err);
    g_free(a.out);
    g_free(a.shard);
    g_free(a.format);
    return status;
}
