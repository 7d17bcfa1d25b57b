/*
 * job.c: one run of a subcommand (contract in job.h), and the error
 * helper of cli.h that it is built on.
 *
 * Design: the job owns an output set (core/outfile.h) and the signal
 * watcher (core/interrupt.h) that discards that set on SIGINT/SIGTERM.
 * Inputs and outputs are remembered as (option, path, identity) so that a
 * new output can be compared with all of them; the identity of an existing
 * file is its device and inode (a link or another spelling of the path is
 * the same file), else the canonical path.
 */
#include "cli/job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include "cli/cli.h"
#include "core/opt_check.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/readall.h"
#include "hw/hw.h"
#include "trace/writer.h"

typedef struct named_file {
    char *option;
    char *path;      /* canonical */
    bool exists;
    dev_t dev;
    ino_t ino;
} named_file;

static void named_file_clear(gpointer data);

struct strata_job {
    char *cmd;
    GOptionContext *options;
    GOptionEntry *entries;     /* a copy of the main entries, for opt_check.h */
    strata_outfile_set *outs;
    strata_interrupt *intr;
    GArray *files;       /* named_file: inputs, then outputs as opened */
    guint n_inputs;      /* files[0 .. n_inputs) are the inputs */
    const char *stdout_option; /* the output that is "-", or NULL */
    int spooled;               /* strata_job_input_once's copy, or -1 */
    char *spooled_path;        /* its /proc/self/fd path */
    char *spooled_from;        /* the path it was read from (messages name it) */
};

int strata_cli_fail(const char *cmd, GError *err)
{
    int status = strata_exit_for_error(err);
    fprintf(stderr, "strata %s: %s\n", cmd, err ? err->message : "failed");
    g_clear_error(&err);
    return status == STRATA_EXIT_OK ? STRATA_EXIT_USAGE : status;
}

static void usage_error(const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    fprintf(stderr, "strata %s: %s\nRun 'strata %s --help' for usage.\n", cmd, msg, cmd);
    g_free(msg);
}

strata_job *strata_job_new(const char *cmd, const char *parameter_string, const char *summary,
                           const char *description, const GOptionEntry *entries)
{
    strata_job *job = g_new0(strata_job, 1);
    job->cmd = g_strdup(cmd);
    char *prgname = g_strdup_printf("strata %s", cmd);
    g_set_prgname(prgname);
    g_free(prgname);
    job->options = g_option_context_new(parameter_string);
    g_option_context_set_summary(job->options, summary);
    g_option_context_set_description(job->options, description);
    g_option_context_add_main_entries(job->options, entries, NULL);
    size_t n = 0;
    while (entries[n].long_name)
        n++;
    job->entries = g_memdup2(entries, (n + 1) * sizeof *entries);
    job->outs = strata_outfile_set_new();
    job->spooled = -1;
    job->files = g_array_new(FALSE, TRUE, sizeof(named_file));
    g_array_set_clear_func(job->files, named_file_clear);
    job->intr = strata_interrupt_start(cmd, job->outs);
    return job;
}

GOptionContext *strata_job_context(strata_job *job) { return job->options; }

const char *strata_job_cmd(const strata_job *job) { return job->cmd; }

bool strata_job_parse(strata_job *job, int *argc, char ***argv, int min_args, int max_args, const char *args_usage)
{
    GError *err = NULL;
    char *bad = NULL; /* what GOption would take silently: an option twice, --tp 010 as 8 */
    if (!strata_opt_check(job->entries, *argc, *argv, g_option_context_get_strict_posix(job->options), &bad)) {
        usage_error(job->cmd, "%s", bad);
        g_free(bad);
        return false;
    }
    if (!g_option_context_parse(job->options, argc, argv, &err)) {
        usage_error(job->cmd, "%s", err->message);
        g_clear_error(&err);
        return false;
    }
    int n = *argc - 1;
    if (max_args == 0 && n > 0) {
        usage_error(job->cmd, "unexpected argument '%s'", (*argv)[1]);
        return false;
    }
    if (n < min_args || (max_args >= 0 && n > max_args)) {
        usage_error(job->cmd, "expected %s, got %d arguments", args_usage, n);
        return false;
    }
    for (int i = 1; args_usage && i <= n; i++) /* file names: '' was the reader's "No such file", naming none */
        if (!*(*argv)[i]) {
            usage_error(job->cmd, "expected %s, got ''", args_usage);
            return false;
        }
    return true;
}

static named_file name_file(const char *option, const char *path)
{
    named_file f = {.option = g_strdup(option), .path = g_canonicalize_filename(path, NULL)};
    struct stat st;
    if (stat(path, &st) == 0) {
        f.exists = true;
        f.dev = st.st_dev;
        f.ino = st.st_ino;
    }
    return f;
}

static void named_file_clear(gpointer data)
{
    named_file *f = data;
    g_free(f->option);
    g_free(f->path);
}

static bool same_file(const named_file *a, const named_file *b)
{
    if (a->exists && b->exists)
        return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->path, b->path) == 0;
}

bool strata_job_input(strata_job *job, const char *option, const char *path, GError **err)
{
    if (path && !*path) { /* the reader's ": No such file or directory" named no option */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a file name, got ''", option);
        return false;
    }
    if (path == NULL || strcmp(path, "-") == 0)
        return true;
    named_file f = name_file(option, path);
    g_array_append_val(job->files, f);
    job->n_inputs = job->files->len;
    strata_outfile_set_input(job->outs, path);
    return true;
}

bool strata_job_input_hw(strata_job *job, const char *option, const char *path, GError **err)
{
    if (!strata_job_input(job, option, path, err))
        return false;
    char *base = path ? strata_hw_base_path(path) : NULL;
    if (base) {
        char *what = g_strdup_printf("%s (its base =)", option);
        strata_job_input(job, what, base, NULL);
        g_free(what);
    }
    g_free(base);
    return true;
}

strata_outfile_set *strata_job_outputs(strata_job *job) { return job->outs; }

/* The most a device other than a terminal yields before it is taken for
 * an endless one (/dev/zero, /dev/urandom: the copy never ended, filling
 * the temporary folder's disk). */
#define DEVICE_MAX ((off_t)16 << 20)
/* The most a pipe, FIFO or socket yields: 2 GiB, the largest input an
 * importer reads whole (a Chakra or XPlane protobuf, STRATA_CHAKRA_MAX_FILE).
 * `cat /dev/urandom | strata import kineto -` was copied without end. A
 * larger input is given as a file, which is read where it is. */
#define STREAM_MAX ((off_t)1 << 31)

const char *strata_job_input_once(strata_job *job, const char *path, GError **err)
{
    struct stat st;
    bool std_in = strcmp(path, "-") == 0 || strcmp(path, "/dev/stdin") == 0;
    if (std_in ? fstat(STDIN_FILENO, &st) != 0 : stat(path, &st) != 0)
        return path; /* the reader says what is wrong */
    if (!std_in && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
        return path; /* standard input is always copied: "-" names no file */
    int in = std_in ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot open: %s", path, g_strerror(errno));
        return NULL;
    }
    bool device = S_ISCHR(st.st_mode) && !isatty(in);
    bool stream = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
    const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
    int fd = strata_spool_fd(in, name, device ? DEVICE_MAX : stream ? STREAM_MAX : -1, device, err);
    close(in);
    if (fd < 0)
        return NULL;
    if (job->spooled < 0)
        job->spooled = fd;
    else
        close(fd); /* one input a command: the first is kept */
    g_free(job->spooled_path);
    g_free(job->spooled_from);
    job->spooled_path = g_strdup_printf("/proc/self/fd/%d", job->spooled);
    job->spooled_from = g_strdup(path);
    return job->spooled_path;
}

/* The output must not be an input, nor an output named before. */
static bool check_clobber(strata_job *job, const char *option, const char *path, GError **err)
{
    if (strcmp(path, "-") == 0) {
        if (job->stdout_option) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: standard output ('-') is already the output of %s; give one of them a file",
                        option, job->stdout_option);
            return false;
        }
        job->stdout_option = option;
        return true;
    }
    named_file f = name_file(option, path);
    for (guint i = 0; i < job->files->len; i++) {
        const named_file *o = &g_array_index(job->files, named_file, i);
        if (!same_file(&f, o))
            continue;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: '%s' is also the %s of %s; refusing to %s",
                    option, path, i < job->n_inputs ? "input" : "output", o->option,
                    i < job->n_inputs ? "overwrite an input" : "write one file twice");
        named_file_clear(&f);
        return false;
    }
    g_array_append_val(job->files, f);
    return true;
}

bool strata_job_output(strata_job *job, const char *option, const char *path, strata_outfile **out, GError **err)
{
    *out = NULL;
    if (path == NULL)
        return true;
    if (!*path) { /* outfile.c's "empty output path" named no option */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a file name ('-': standard output), got ''",
                    option);
        return false;
    }
    if (!check_clobber(job, option, path, err))
        return false;
    *out = strata_outfile_open_in(job->outs, path, err);
    return *out != NULL;
}

/* --timeline's name: a format's extension (json_only: JSON's), or a stream
 * (strata_job_output_timeline). */
static bool timeline_name_ok(const char *path, bool json_only, GError **err)
{
    const strata_timeline_format *f = strata_timeline_format_named(path);
    struct stat st;
    if ((f && (!json_only || strcmp(strata_timeline_format_name(f), "json") == 0)) || strcmp(path, "-") == 0 ||
        (!f && stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
        return true;
    char *known = json_only ? g_strdup(".json") : strata_timeline_extensions();
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--timeline %s: expected a name ending in %s, optionally "
                "followed by .gz%s", path, known, json_only ? " (this command writes JSON timelines only)" : "");
    g_free(known);
    return false;
}

bool strata_job_output_timeline(strata_job *job, const char *path, bool json_only, strata_outfile **out,
                                GError **err)
{
    *out = NULL;
    /* '' said "--timeline : expected a name ending in .json, ...": the empty name first */
    return (!path || !*path || timeline_name_ok(path, json_only, err)) && strata_job_output(job, "--timeline", path, out, err) &&
           (!*out || strata_outfile_gzip(*out, err));
}

FILE *strata_job_human(const strata_job *job) { return job->stdout_option ? stderr : stdout; }

void strata_job_doing(strata_job *job, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    strata_interrupt_set_doing(job->intr, what);
    g_free(what);
}

bool strata_job_commit(strata_job *job, strata_outfile **out, bool wrote, GError **err)
{
    (void)job;
    strata_outfile *o = *out;
    if (o == NULL)
        return true;
    *out = NULL;
    if (!wrote) {
        if (err && !*err) /* a writer that failed without saying why: serve --timeline /dev/full exited 2, silent */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': a write failed (no space left?)",
                        strata_outfile_path(o));
        strata_outfile_abort(o);
        return false;
    }
    return strata_outfile_commit(o, err);
}

bool strata_job_commit_text(strata_job *job, strata_outfile **out, const char *text, GError **err)
{
    if (*out == NULL)
        return true;
    fputs(text, strata_outfile_stream(*out));
    return strata_job_commit(job, out, true, err);
}

bool strata_job_commit_results(strata_job *job, strata_outfile **out, const strata_results *r, GError **err)
{
    if (*out == NULL)
        return true;
    char *text = strata_results_to_json_text(r);
    bool ok = strata_job_commit_text(job, out, text, err);
    g_free(text);
    return ok;
}

bool strata_job_commit_timeline(strata_job *job, strata_outfile **out, const strata_results *r, GError **err)
{
    if (*out == NULL)
        return true;
    /* the format by the file's name; a failed write: commit says so */
    strata_results_write_timeline_as(r, strata_timeline_format_of(strata_outfile_path(*out)), strata_outfile_stream(*out));
    return strata_job_commit(job, out, true, err);
}

int64_t strata_job_commit_trace(strata_job *job, strata_outfile **out, strata_source *src, const char *comment,
                                GError **err)
{
    FILE *stream = strata_outfile_stream(*out);
    int64_t n = strata_trace_write_to(src, stream, comment, err);
    if (n < 0 && ferror(stream))
        g_prefix_error(err, "%s: ", strata_outfile_path(*out));
    return strata_job_commit(job, out, n >= 0, err) ? n : -1;
}

int strata_job_end(strata_job *job, int status, GError *err)
{
    if (err && job->spooled_path && strstr(err->message, job->spooled_path)) { /* name what the user gave */
        GString *m = g_string_new(err->message);
        g_string_replace(m, job->spooled_path, job->spooled_from, 0);
        g_free(err->message);
        err->message = g_string_free(m, FALSE);
    }
    if (err)
        status = strata_cli_fail(job->cmd, err);
    strata_interrupt_stop(job->intr);
    strata_outfile_set_free(job->outs);
    if (job->spooled >= 0)
        close(job->spooled);
    g_free(job->spooled_path);
    g_free(job->spooled_from);
    g_array_unref(job->files);
    g_option_context_free(job->options);
    g_free(job->entries);
    g_free(job->cmd);
    g_free(job);
    return status;
}
