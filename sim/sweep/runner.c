/*
 * runner.c: one process per point, `jobs` at a time (see runner.h).
 *
 * The parent never runs a simulation itself: it spawns `strata sweep EXP
 * --out DIR --point N` children with their output sent to points/ID.log and
 * watches them with GLib child watches on a private main context. A child
 * runs the point's commands synchronously (gen/import, then run/alloc) and
 * writes points/ID.json atomically from the run's own JSON.
 *
 * Invariants: see runner.h. In addition, the parent only ever waits on pids
 * it spawned (child watches), and removes a point's log once it succeeded;
 * one process at a time runs a point (points/ID.lock, removed by its
 * holder), so the same point run twice at once runs once.
 */
#include "sweep/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/error.h"
#include "core/interrupt.h"
#include "core/jsonout.h"
#include "core/outfile.h"
#include "core/progress.h"

char *strata_sweep_point_id(const strata_experiment *e, uint64_t point)
{
    uint64_t n = strata_experiment_point_count(e);
    int width = 4;
    for (uint64_t m = 10000; m < n; m *= 10)
        width++;
    return g_strdup_printf("%0*" G_GUINT64_FORMAT, width, point);
}

static char *point_file(const strata_sweep_ctx *ctx, uint64_t point, const char *suffix)
{
    char *id = strata_sweep_point_id(ctx->exp, point);
    char *name = g_strconcat(id, suffix, NULL);
    char *path = g_build_filename(ctx->out_dir, "points", name, NULL);
    g_free(name);
    g_free(id);
    return path;
}

char *strata_sweep_point_json_path(const strata_sweep_ctx *ctx, uint64_t point)
{
    return point_file(ctx, point, ".json");
}

char **strata_sweep_point_command(const strata_sweep_ctx *ctx, uint64_t point)
{
    char *n = g_strdup_printf("%" G_GUINT64_FORMAT, point);
    const char *argv[] = {ctx->exe, "sweep", strata_experiment_origin(ctx->exp), "--out", ctx->out_dir,
                          "--point", n, NULL};
    char **copy = g_strdupv((char **)argv);
    g_free(n);
    return copy;
}

char *strata_sweep_shell_join(char *const *argv)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; argv[i]; i++) {
        if (i)
            g_string_append_c(s, ' ');
        bool plain = *argv[i] != '\0';
        for (const char *p = argv[i]; *p; p++)
            if (!g_ascii_isalnum(*p) && !strchr("-_./=:,+@%", *p))
                plain = false;
        if (plain) {
            g_string_append(s, argv[i]);
        } else {
            char *q = g_shell_quote(argv[i]);
            g_string_append(s, q);
            g_free(q);
        }
    }
    return g_string_free(s, FALSE);
}

/* The point's plan with its file paths relative to OUT (its commands run
 * in OUT), so that the same sweep into two folders writes the same files. */
static strata_point_plan *point_plan(const strata_sweep_ctx *ctx, uint64_t point, char **json_tmp,
                                     char **timeline)
{
    char *id = strata_sweep_point_id(ctx->exp, point);
    *json_tmp = g_strdup_printf("points/%s.run.json", id);
    *timeline = strata_experiment_timeline(ctx->exp) ? g_strdup_printf("points/%s.timeline.json", id) : NULL;
    g_free(id);
    return strata_experiment_plan(ctx->exp, point, "", *json_tmp, *timeline);
}

/* OUT/relative (g_free). */
static char *under_out(const strata_sweep_ctx *ctx, const char *relative)
{
    return g_build_filename(ctx->out_dir, relative, NULL);
}

static char *point_command_text(const strata_sweep_ctx *ctx, uint64_t point)
{
    char *json_tmp, *timeline;
    strata_point_plan *plan = point_plan(ctx, point, &json_tmp, &timeline);
    char *text = strata_sweep_shell_join(plan->run_argv);
    strata_point_plan_free(plan);
    g_free(json_tmp);
    g_free(timeline);
    return text;
}

uint64_t strata_sweep_next_selected(const strata_sweep_ctx *ctx, uint64_t from)
{
    uint64_t n = strata_experiment_point_count(ctx->exp), k = ctx->shard_index, m = ctx->shard_count;
    if (from >= n)
        return n;
    if (m == 0)
        return from;
    uint64_t base = from - from % m; /* the shard's point in [base, base + m) is base + k */
    if (k >= n - base)
        return n;
    uint64_t p = base + k;
    if (p >= from)
        return p;
    return m < n - p ? p + m : n; /* the next round's, without wrapping past 2^64 */
}

bool strata_sweep_point_done(const strata_sweep_ctx *ctx, uint64_t point)
{
    char *path = strata_sweep_point_json_path(ctx, point);
    JsonParser *parser = json_parser_new();
    bool done = false;
    if (json_parser_load_from_file(parser, path, NULL)) {
        JsonNode *root = json_parser_get_root(parser);
        if (root && JSON_NODE_HOLDS_OBJECT(root)) {
            JsonObject *o = json_node_get_object(root);
            char *cmd = point_command_text(ctx, point);
            done = json_object_has_member(o, "results") && json_object_has_member(o, "status") &&
                   json_object_has_member(o, "command") &&
                   g_strcmp0(json_object_get_string_member_with_default(o, "command", ""), cmd) == 0;
            g_free(cmd);
        }
    }
    g_object_unref(parser);
    g_free(path);
    return done;
}

/* ---- one point ---------------------------------------------------------- */

/* Runs exe + argv; *status gets the exit status. Output captured in *errout. */
static bool run_step(const char *dir, const char *exe, char *const *args, int *status, char **errout, GError **err)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)exe);
    for (guint i = 0; args[i]; i++)
        g_ptr_array_add(argv, args[i]);
    g_ptr_array_add(argv, NULL);
    int wait_status = 0;
    char *out = NULL;
    strata_child_signals keep;
    strata_child_signals_read(&keep);
    bool ok = g_spawn_sync(dir, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, strata_interrupt_child_setup, &keep,
                           &out, errout, &wait_status, err);
    g_ptr_array_unref(argv);
    g_free(out);
    if (!ok)
        return false;
    if (WIFEXITED(wait_status)) {
        *status = WEXITSTATUS(wait_status);
    } else {
        *status = -1;
    }
    return true;
}

static bool step_failed(GError **err, const char *what, char *const *args, int status, const char *errout)
{
    char *cmd = strata_sweep_shell_join(args);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s failed (%s %d): strata %s\n%s", what,
                status < 0 ? "killed, status" : "exit status", status, cmd, errout ? errout : "");
    g_free(cmd);
    return false;
}

static bool ensure_dir(const char *path, GError **err)
{
    if (g_mkdir_with_parents(path, 0777) == 0)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot create the folder: %s", path, g_strerror(errno));
    return false;
}

/* The sweep's points/ and inputs/ folders under its output folder. */
static bool ensure_out_dirs(const strata_sweep_ctx *ctx, GError **err)
{
    char *points_dir = g_build_filename(ctx->out_dir, "points", NULL);
    char *inputs_dir = g_build_filename(ctx->out_dir, "inputs", NULL);
    bool ok = ensure_dir(points_dir, err) && ensure_dir(inputs_dir, err);
    g_free(points_dir);
    g_free(inputs_dir);
    return ok;
}

static JsonNode *point_json(const strata_sweep_ctx *ctx, uint64_t point, const char *cmd, int status,
                            JsonNode *results, const char *timeline)
{
    const strata_experiment *e = ctx->exp;
    JsonBuilder *b = strata_json_object_begin();
    json_builder_set_member_name(b, "experiment");
    json_builder_add_string_value(b, strata_experiment_name(e));
    json_builder_set_member_name(b, "point");
    json_builder_add_int_value(b, (gint64)point);
    strata_json_open_object(b, "axes");
    for (guint i = 0; i < strata_experiment_axis_count(e); i++) {
        json_builder_set_member_name(b, strata_experiment_axis_name(e, i));
        json_builder_add_string_value(
            b, strata_experiment_axis_value(e, i, strata_experiment_point_value(e, point, i)));
    }
    json_builder_end_object(b);
    JsonObject *ro = JSON_NODE_HOLDS_OBJECT(results) ? json_node_get_object(results) : NULL;
    const char *st = ro ? json_object_get_string_member_with_default(ro, "status", NULL) : NULL;
    json_builder_set_member_name(b, "status");
    json_builder_add_string_value(b, st ? st : (status == 1 ? "oom" : "ok"));
    json_builder_set_member_name(b, "exit_status");
    json_builder_add_int_value(b, status);
    json_builder_set_member_name(b, "command");
    json_builder_add_string_value(b, cmd);
    json_builder_set_member_name(b, "timeline");
    if (timeline) {
        char *base = g_path_get_basename(timeline);
        json_builder_add_string_value(b, base);
        g_free(base);
    } else {
        json_builder_add_null_value(b);
    }
    json_builder_set_member_name(b, "results");
    json_builder_add_value(b, json_node_copy(results));
    return strata_json_object_end(b);
}

/* Takes points/ID.lock (flock, waiting for another process that runs the
 * same point: two schedulers, or a user and a scheduler); returns its
 * descriptor, or -1 with err. The holder unlinks the file before it lets
 * go (point_unlock), so a waiter that wakes on an unlinked file opens the
 * path again: whoever holds the lock holds the file at the path, and none
 * is left behind. */
static int point_lock(const strata_sweep_ctx *ctx, uint64_t point, GError **err)
{
    char *id = strata_sweep_point_id(ctx->exp, point);
    char *name = g_strdup_printf("points/%s.lock", id);
    char *path = under_out(ctx, name);
    g_free(id);
    g_free(name);
    int fd = -1;
    for (;;) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
            break;
        int r;
        while ((r = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
        }
        struct stat held, now;
        if (r == 0 && fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino)
            break; /* the file at the path is ours */
        close(fd); /* unlinked by the holder before we got it: again */
        fd = -1;
        if (r != 0)
            break;
    }
    if (fd < 0)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot lock '%s': %s", path, g_strerror(errno));
    g_free(path);
    return fd;
}

static void point_unlock(const strata_sweep_ctx *ctx, uint64_t point, int fd)
{
    char *id = strata_sweep_point_id(ctx->exp, point);
    char *name = g_strdup_printf("points/%s.lock", id);
    char *path = under_out(ctx, name);
    g_unlink(path); /* while holding it: see point_lock */
    close(fd);
    g_free(path);
    g_free(name);
    g_free(id);
}

static bool run_point_locked(const strata_sweep_ctx *ctx, uint64_t point, GError **err);

bool strata_sweep_run_point(const strata_sweep_ctx *ctx, uint64_t point, GError **err)
{
    if (point >= strata_experiment_point_count(ctx->exp)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--point %" G_GUINT64_FORMAT
                    " is out of range: the experiment has points 0 to %" G_GUINT64_FORMAT,
                    point, strata_experiment_point_count(ctx->exp) - 1);
        return false;
    }
    if (!ensure_out_dirs(ctx, err))
        return false;
    int lock = point_lock(ctx, point, err);
    if (lock < 0)
        return false;
    /* The same point run twice at once: the later one finds it done. */
    bool ok = strata_sweep_point_done(ctx, point) || run_point_locked(ctx, point, err);
    point_unlock(ctx, point, lock);
    return ok;
}

static bool run_point_locked(const strata_sweep_ctx *ctx, uint64_t point, GError **err)
{
    char *json_tmp, *timeline;
    strata_point_plan *plan = point_plan(ctx, point, &json_tmp, &timeline);
    int status = 0;
    char *errout = NULL;
    bool ok = true;
    /* 1. The input trace, unless a point sharing it made it already. */
    char *input = under_out(ctx, plan->input_path), *results = under_out(ctx, json_tmp);
    if (plan->input_argv && !g_file_test(input, G_FILE_TEST_EXISTS)) {
        ok = run_step(ctx->out_dir, ctx->exe, plan->input_argv, &status, &errout, err);
        if (ok && status != 0)
            ok = step_failed(err, "making the input trace", plan->input_argv, status, errout);
        g_clear_pointer(&errout, g_free);
    }
    /* 2. The run: 0 done, 1 out of memory (a result), anything else fails. */
    if (ok) {
        ok = run_step(ctx->out_dir, ctx->exe, plan->run_argv, &status, &errout, err);
        if (ok && status != 0 && status != 1)
            ok = step_failed(err, "the point's run", plan->run_argv, status, errout);
    }
    JsonParser *parser = json_parser_new();
    if (ok) {
        GError *inner = NULL;
        if (!json_parser_load_from_file(parser, results, &inner)) {
            ok = step_failed(err, "the point's run wrote no readable results", plan->run_argv, status,
                             inner->message);
            g_clear_error(&inner);
        }
    }
    if (ok) {
        char *cmd = strata_sweep_shell_join(plan->run_argv);
        JsonNode *root = point_json(ctx, point, cmd, status, json_parser_get_root(parser), timeline);
        char *path = strata_sweep_point_json_path(ctx, point);
        ok = strata_json_write_file(ctx->outs, path, root, err);
        if (ok)
            g_unlink(results);
        g_free(path);
        json_node_unref(root);
        g_free(cmd);
    }
    g_object_unref(parser);
    g_free(errout);
    g_free(json_tmp);
    g_free(timeline);
    g_free(input);
    g_free(results);
    strata_point_plan_free(plan);
    return ok;
}

/* ---- all points ------------------------------------------------------- */

typedef struct sweep_run {
    const strata_sweep_ctx *ctx;
    GMainContext *main;
    GArray *todo;          /* uint64_t points not done yet, in order */
    guint next;            /* index into todo */
    guint running;
    guint jobs;
    guint finished;        /* points finished in this run */
    GString *failure;      /* first failure's message, or NULL */
    strata_progress *progress; /* NULL: none */
    strata_sweep_stats *stats;
} sweep_run;

typedef struct child {
    sweep_run *run;
    uint64_t point;
} child;

static void print_progress(sweep_run *r)
{
    char note[32];
    g_snprintf(note, sizeof note, "%u running", r->running);
    strata_progress_count(r->progress, "sweep", r->finished, r->todo->len, "points", note);
}

static char *log_tail(const char *path)
{
    char *text = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &text, &len, NULL))
        return g_strdup("(no output)");
    const gsize max = 4000;
    if (len > max) {
        char *tail = g_strdup(text + len - max);
        g_free(text);
        return tail;
    }
    return text;
}

static bool start_point(sweep_run *r, uint64_t point);

static void child_exited(GPid pid, gint wait_status, gpointer data)
{
    child *c = data;
    sweep_run *r = c->run;
    g_spawn_close_pid(pid);
    r->running--;
    r->finished++;
    char *log = point_file(r->ctx, c->point, ".log");
    GError *err = NULL;
    if (g_spawn_check_wait_status(wait_status, &err) && strata_sweep_point_done(r->ctx, c->point)) {
        g_unlink(log);
        r->stats->ran++;
    } else {
        if (!r->failure) {
            char *tail = log_tail(log);
            r->failure = g_string_new(NULL);
            g_string_printf(r->failure, "point %" G_GUINT64_FORMAT " failed (%s; its output is in %s):\n%s",
                            c->point, err ? err->message : "no complete results", log, tail);
            g_free(tail);
        }
    }
    g_clear_error(&err);
    g_free(log);
    g_free(c);
    /* Start the next points, unless a point failed (like make without -k). */
    while (!r->failure && r->running < r->jobs && r->next < r->todo->len)
        start_point(r, g_array_index(r->todo, uint64_t, r->next++));
    print_progress(r);
}

static bool start_point(sweep_run *r, uint64_t point)
{
    char **argv = strata_sweep_point_command(r->ctx, point);
    char *log = point_file(r->ctx, point, ".log");
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    GPid pid = 0;
    GError *err = NULL;
    strata_child_signals keep;
    strata_child_signals_read(&keep);
    bool ok = fd >= 0 && g_spawn_async_with_fds(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                                 strata_interrupt_child_setup, &keep, &pid,
                                                 -1, fd, fd, &err);
    if (!ok && !r->failure) {
        r->failure = g_string_new(NULL);
        g_string_printf(r->failure, "cannot start point %" G_GUINT64_FORMAT ": %s", point,
                        err ? err->message : g_strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    if (ok) {
        child *c = g_new0(child, 1);
        c->run = r;
        c->point = point;
        GSource *src = g_child_watch_source_new(pid);
        g_source_set_callback(src, (GSourceFunc)(void (*)(void))child_exited, c, NULL);
        g_source_attach(src, r->main);
        g_source_unref(src);
        r->running++;
    }
    g_clear_error(&err);
    g_free(log);
    g_strfreev(argv);
    return ok;
}

static gboolean tick(gpointer data)
{
    print_progress(data);
    return G_SOURCE_CONTINUE;
}

bool strata_sweep_run_all(const strata_sweep_ctx *ctx, guint jobs, FILE *progress, strata_sweep_stats *stats,
                          GError **err)
{
    memset(stats, 0, sizeof *stats);
    uint64_t n = strata_experiment_point_count(ctx->exp);
    if (!ensure_out_dirs(ctx, err))
        return false;

    sweep_run r = {.ctx = ctx, .stats = stats};
    r.todo = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (uint64_t p = strata_sweep_next_selected(ctx, 0); p < n; p = strata_sweep_next_selected(ctx, p + 1)) {
        stats->total++;
        if (strata_sweep_point_done(ctx, p))
            stats->skipped++;
        else
            g_array_append_val(r.todo, p);
    }
    if (r.todo->len > 0) {
        r.main = g_main_context_new();
        r.progress = strata_progress_new(progress);
        GSource *timer = NULL;
        if (progress) {
            timer = g_timeout_source_new(500);
            g_source_set_callback(timer, tick, &r, NULL);
            g_source_attach(timer, r.main);
        }
        r.jobs = jobs ? jobs : 1;
        while (r.running < r.jobs && r.next < r.todo->len && !r.failure)
            start_point(&r, g_array_index(r.todo, uint64_t, r.next++));
        print_progress(&r);
        while (r.running > 0)
            g_main_context_iteration(r.main, TRUE);
        print_progress(&r);
        strata_progress_free(r.progress);
        if (timer) {
            g_source_destroy(timer);
            g_source_unref(timer);
        }
        g_main_context_unref(r.main);
    }
    g_array_unref(r.todo);
    if (r.failure) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s", r.failure->str);
        g_string_free(r.failure, TRUE);
        return false;
    }
    return true;
}
