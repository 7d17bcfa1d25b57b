/*
 * published.c: reading case files and simulating their cases (published.h).
 *
 * A case runs in a forked child that loads the hardware, opens the trace,
 * runs the engine and writes one line back through a pipe: "ok VALUE" or
 * "error MESSAGE". The parent never starts an engine, so any number of
 * cases run from one process.
 */
#include "validate/published.h"
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/error.h"
#include "core/keyfile.h"
#include "core/units.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "trace/reader.h"

struct strata_published {
    GPtrArray *cases; /* strata_published_case *, owned */
};

static void case_free(gpointer p)
{
    strata_published_case *c = p;
    if (!c)
        return;
    g_free(c->name);
    g_free(c->where);
    g_free(c->source);
    g_free(c->setup);
    g_free(c->note);
    g_free(c->hw);
    g_free(c->trace);
    g_free(c);
}

strata_published *strata_published_new(void)
{
    strata_published *set = g_new0(strata_published, 1);
    set->cases = g_ptr_array_new_with_free_func(case_free);
    return set;
}

void strata_published_free(strata_published *set)
{
    if (!set)
        return;
    g_ptr_array_free(set->cases, TRUE);
    g_free(set);
}

size_t strata_published_count(const strata_published *set)
{
    return set->cases->len;
}

const strata_published_case *strata_published_case_at(const strata_published *set, size_t i)
{
    return g_ptr_array_index(set->cases, i);
}

static bool bad_key(const strata_keyfile *kf, const char *group, const char *key, const char *what, GError **err)
{
    char *where = strata_keyfile_where(kf, group, key);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] %s: %s", where, group, key, what);
    g_free(where);
    return false;
}

/* The value of a required key, or NULL with err set. */
static char *required(const strata_keyfile *kf, const char *group, const char *key, GError **err)
{
    char *v = strata_keyfile_string(kf, group, key);
    if (v && *v)
        return v;
    g_free(v);
    if (strata_keyfile_has_key(kf, group, key)) {
        bad_key(kf, group, key, "expected a value", err);
    } else {
        char *where = strata_keyfile_where(kf, group, NULL);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] has no %s= (required)", where, group, key);
        g_free(where);
    }
    return NULL;
}

/* A path relative to the case file's folder, which must be a readable file. */
static char *case_path(const strata_keyfile *kf, const char *group, const char *key, const char *dir, GError **err)
{
    char *v = required(kf, group, key, err);
    if (!v)
        return NULL;
    char *path = g_path_is_absolute(v) ? g_strdup(v) : g_build_filename(dir, v, NULL);
    g_free(v);
    if (access(path, R_OK) != 0) {
        char *what = g_strdup_printf("cannot read %s (%s)", path, g_strerror(errno));
        bad_key(kf, group, key, what, err);
        g_free(what);
        g_free(path);
        return NULL;
    }
    return path;
}

/* metric=, measured= and bytes= of one case. */
static bool case_measure(strata_published_case *c, const strata_keyfile *kf, const char *group, GError **err)
{
    char *metric = required(kf, group, "metric", err);
    char *measured = metric ? required(kf, group, "measured", err) : NULL;
    bool ok = measured != NULL;
    GError *e = NULL;
    if (ok && strcmp(metric, "makespan") == 0) {
        c->metric = STRATA_PUBLISHED_MAKESPAN;
        ok = strata_parse_time(measured, &c->measured, &e) && c->measured > 0;
        if (!ok)
            bad_key(kf, group, "measured", "expected a time above 0 such as 3.6s", err);
        if (ok && strata_keyfile_has_key(kf, group, "bytes"))
            ok = bad_key(kf, group, "bytes", "only metric bandwidth counts bytes", err);
    } else if (ok && strcmp(metric, "bandwidth") == 0) {
        c->metric = STRATA_PUBLISHED_BANDWIDTH;
        ok = strata_parse_bandwidth(measured, &c->measured, &e) && c->measured > 0;
        if (!ok)
            bad_key(kf, group, "measured", "expected a bandwidth above 0 such as 9.6GB/s", err);
        char *bytes = ok ? required(kf, group, "bytes", err) : NULL;
        ok = bytes != NULL;
        if (ok && !(strata_parse_size(bytes, &c->bytes, NULL) && c->bytes > 0))
            ok = bad_key(kf, group, "bytes", "expected a size above 0 such as 32000000 or 512MiB", err);
        g_free(bytes);
    } else if (ok) {
        ok = bad_key(kf, group, "metric", "expected makespan or bandwidth", err);
    }
    g_clear_error(&e);
    g_free(metric);
    g_free(measured);
    return ok;
}

static strata_published_case *case_read(const strata_keyfile *kf, const char *group, const char *dir,
                                        GError **err)
{
    static const char *const known[] = {"source", "setup", "measured", "metric", "bytes",
                                        "hw",     "trace", "note",     NULL};
    char *name = g_str_has_prefix(group, "case ") ? g_strstrip(g_strdup(group + 5)) : NULL;
    if (!name || !*name) {
        g_free(name);
        char *where = strata_keyfile_where(kf, group, NULL);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a group [case NAME], not [%s]", where,
                    group);
        g_free(where);
        return NULL;
    }
    if (!strata_keyfile_check_keys(kf, group, known, NULL, err)) {
        g_free(name);
        return NULL;
    }
    strata_published_case *c = g_new0(strata_published_case, 1);
    c->name = name;
    c->where = strata_keyfile_where(kf, group, NULL);
    c->simulated = NAN;
    c->note = strata_keyfile_string(kf, group, "note");
    bool ok = (c->source = required(kf, group, "source", err)) && (c->setup = required(kf, group, "setup", err)) &&
              case_measure(c, kf, group, err) && (c->hw = case_path(kf, group, "hw", dir, err)) &&
              (c->trace = case_path(kf, group, "trace", dir, err));
    if (!ok) {
        case_free(c);
        return NULL;
    }
    return c;
}

bool strata_published_load(strata_published *set, const char *path, GError **err)
{
    strata_keyfile *kf = strata_keyfile_load(path, "validation file", "case NAME", 0, err);
    if (!kf)
        return false;
    char *dir = g_path_get_dirname(path);
    gsize n = 0;
    char **groups = strata_keyfile_groups(kf, &n);
    bool ok = true;
    for (gsize i = 0; ok && i < n; i++) {
        strata_published_case *c = case_read(kf, groups[i], dir, err);
        for (guint j = 0; c && j < set->cases->len; j++)
            if (strcmp(((strata_published_case *)g_ptr_array_index(set->cases, j))->name, c->name) == 0) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: case '%s' is already defined", c->where,
                            c->name);
                case_free(c);
                c = NULL;
            }
        if (c)
            g_ptr_array_add(set->cases, c);
        ok = c != NULL;
    }
    if (ok && n == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: no [case NAME] group", path);
        ok = false;
    }
    g_strfreev(groups);
    g_free(dir);
    strata_keyfile_free(kf);
    return ok;
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *strata_published_default_dir(void)
{
    if (g_file_test("validation", G_FILE_TEST_IS_DIR))
        return g_strdup("validation");
    return g_build_filename(STRATA_SOURCE_DIR, "validation", NULL);
}

bool strata_published_load_dir(strata_published *set, const char *dir, GError **err)
{
    GDir *d = g_dir_open(dir, 0, err);
    if (!d) {
        if (err && *err)
            (*err)->domain = STRATA_ERROR, (*err)->code = STRATA_ERROR_IO;
        return false;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(d));)
        if (g_str_has_suffix(name, ".ini"))
            g_ptr_array_add(names, g_build_filename(dir, name, NULL));
    g_dir_close(d);
    g_ptr_array_sort(names, compare_names);
    bool ok = names->len > 0;
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: no case files (*.ini)", dir);
    for (guint i = 0; ok && i < names->len; i++)
        ok = strata_published_load(set, g_ptr_array_index(names, i), err);
    g_ptr_array_free(names, TRUE);
    return ok;
}

/* In the child: the case's value, or an error message. */
static char *child_value(const strata_published_case *c)
{
    GError *err = NULL;
    strata_results *r = NULL;
    strata_hw *hw = strata_hw_load(c->hw, NULL, &err);
    strata_source *src = hw ? strata_trace_open(c->trace, &err) : NULL;
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    char *line = NULL;
    if (src && strata_engine_run(hw, src, &opt, &r, &err)) {
        if (r->oom || !(r->makespan_s > 0))
            line = g_strdup_printf("error %s: the trace %s", c->where,
                                   r->oom ? "ran out of memory" : "takes no time");
        else
            line = g_strdup_printf("ok %.17g", c->metric == STRATA_PUBLISHED_BANDWIDTH
                                                   ? (double)c->bytes / r->makespan_s
                                                   : r->makespan_s);
    } else {
        line = g_strdup_printf("error %s", err ? err->message : "failed");
    }
    g_clear_error(&err);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
    return line;
}

static bool write_all(int fd, const char *text)
{
    for (size_t n = strlen(text), done = 0; done < n;) {
        ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno != EINTR)
            return false;
        done += w > 0 ? (size_t)w : 0;
    }
    return true;
}

bool strata_published_simulate(const strata_published_case *c, double *value, GError **err)
{
    int fds[2];
    if (pipe(fds) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "pipe: %s", g_strerror(errno));
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char *line = child_value(c);
        bool ok = write_all(fds[1], line);
        g_free(line);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    GString *text = g_string_new(NULL);
    char buf[512];
    for (ssize_t n; pid > 0 && ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR));)
        if (n > 0)
            g_string_append_len(text, buf, n);
    close(fds[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    bool ok = false;
    if (pid < 0)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "fork: %s", g_strerror(errno));
    else if (g_str_has_prefix(text->str, "ok ")) {
        *value = g_ascii_strtod(text->str + 3, NULL);
        ok = true;
    } else if (g_str_has_prefix(text->str, "error "))
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s", text->str + 6);
    else
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s: the simulation of case '%s' ended abnormally",
                    c->where, c->name);
    g_string_free(text, TRUE);
    return ok;
}

bool strata_published_run(strata_published *set, GError **err)
{
    for (guint i = 0; i < set->cases->len; i++) {
        strata_published_case *c = g_ptr_array_index(set->cases, i);
        if (!strata_published_simulate(c, &c->simulated, err))
            return false;
    }
    return true;
}

double strata_published_error(const strata_published_case *c)
{
    return (c->simulated - c->measured) / c->measured;
}

static gint compare_doubles(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double strata_published_median_error(const strata_published *set)
{
    GArray *errors = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < set->cases->len; i++) {
        const strata_published_case *c = g_ptr_array_index(set->cases, i);
        double e = fabs(strata_published_error(c));
        if (!isnan(e))
            g_array_append_val(errors, e);
    }
    g_array_sort(errors, compare_doubles);
    guint n = errors->len;
    double median = n == 0 ? NAN
                    : n % 2 ? g_array_index(errors, double, n / 2)
                            : (g_array_index(errors, double, n / 2 - 1) + g_array_index(errors, double, n / 2)) / 2;
    g_array_free(errors, TRUE);
    return median;
}

static char *format_value(strata_published_metric m, double v)
{
    if (isnan(v))
        return g_strdup("-");
    return m == STRATA_PUBLISHED_BANDWIDTH ? strata_format_bandwidth(v) : strata_format_time(v);
}

void strata_published_print(const strata_published *set, FILE *out)
{
    int width = 4;
    for (guint i = 0; i < set->cases->len; i++)
        width = MAX(width, (int)strlen(((strata_published_case *)g_ptr_array_index(set->cases, i))->name));
    fprintf(out, "%-*s  %14s  %14s  %8s\n", width, "case", "measured", "simulated", "error");
    for (guint i = 0; i < set->cases->len; i++) {
        const strata_published_case *c = g_ptr_array_index(set->cases, i);
        char *m = format_value(c->metric, c->measured), *s = format_value(c->metric, c->simulated);
        fprintf(out, "%-*s  %14s  %14s  %+7.1f%%\n", width, c->name, m, s, strata_published_error(c) * 100);
        g_free(m);
        g_free(s);
    }
    fprintf(out, "median |error| over %u cases: %.1f%%\n", set->cases->len,
            strata_published_median_error(set) * 100);
}
