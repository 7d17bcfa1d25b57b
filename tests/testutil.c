/* testutil.c: helpers shared by the Check suites (see testutil.h). */
#include "testutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/error.h"
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "hw/hw.h"
#include "engine/engine.h"
#include "trace/reader.h"

GPtrArray *strata_test_binary_argv(const char *const *argv)
{
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, (gpointer)STRATA_BIN);
    for (const char *const *a = argv; *a; a++)
        g_ptr_array_add(args, (gpointer)*a);
    g_ptr_array_add(args, NULL);
    return args;
}

strata_cli_result strata_test_run_cli(const char *const *argv)
{
    strata_cli_result r = {-1, NULL, NULL};
    GPtrArray *args = strata_test_binary_argv(argv);
    int wait_status = 0;
    GError *err = NULL;
    if (!g_spawn_sync(NULL, (char **)args->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err,
                      &wait_status, &err)) {
        r.err = g_strdup(err->message);
        g_clear_error(&err);
    } else if (WIFEXITED(wait_status)) {
        r.status = WEXITSTATUS(wait_status);
    }
    g_ptr_array_free(args, TRUE);
    if (!r.out)
        r.out = g_strdup("");
    if (!r.err)
        r.err = g_strdup("");
    strata_test_check_json_outputs_in(NULL, argv, &r);
    return r;
}

/* A pseudo-terminal: *master and *slave file descriptors (aborts on failure). */
static void open_pty(int *master, int *slave)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY);
    if (*master < 0 || grantpt(*master) != 0 || unlockpt(*master) != 0)
        abort();
    *slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
    if (*slave < 0)
        abort();
}

strata_cli_result strata_test_run_cli_tty(const char *const *argv)
{
    strata_cli_result r = {-1, NULL, NULL};
    GPtrArray *args = strata_test_binary_argv(argv);
    char *out_path = strata_test_write_temp("tty-out-XXXXXX", "");
    int master, slave;
    open_pty(&master, &slave);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int out = open(out_path, O_WRONLY | O_TRUNC);
        int in = open("/dev/null", O_RDONLY);
        if (out < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(slave, 2) < 0)
            _exit(127);
        close(master);
        execv((const char *)args->pdata[0], (char **)args->pdata);
        _exit(127);
    }
    close(slave);
    GString *err = g_string_new(NULL);
    char buf[4096];
    for (;;) { /* until the child and its children close the terminal (EIO) */
        ssize_t n = read(master, buf, sizeof buf);
        if (n > 0)
            g_string_append_len(err, buf, n);
        else if (n < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    close(master);
    int wait_status = 0;
    if (pid > 0 && waitpid(pid, &wait_status, 0) == pid && WIFEXITED(wait_status))
        r.status = WEXITSTATUS(wait_status);
    if (!g_file_get_contents(out_path, &r.out, NULL, NULL))
        r.out = g_strdup("");
    unlink(out_path);
    g_free(out_path);
    g_ptr_array_free(args, TRUE);
    r.err = g_string_free(err, FALSE);
    strata_test_check_json_outputs_in(NULL, argv, &r);
    return r;
}

void strata_test_progress_only_on_tty(const char *const *argv, const char *shown)
{
    strata_cli_result r = strata_test_run_cli_tty(argv);
    ck_assert_msg(r.status == 0 && strstr(r.err, shown), "%s", r.err);
    strata_cli_result_clear(&r);
    GPtrArray *quiet = g_ptr_array_new();
    for (const char *const *a = argv; *a; a++)
        g_ptr_array_add(quiet, (gpointer)*a);
    g_ptr_array_add(quiet, (gpointer) "--quiet");
    g_ptr_array_add(quiet, NULL);
    r = strata_test_run_cli_tty((const char *const *)quiet->pdata);
    ck_assert_msg(r.status == 0 && !strstr(r.err, shown) && !strstr(r.err, "\033[K"), "%s", r.err);
    strata_cli_result_clear(&r);
    g_ptr_array_free(quiet, TRUE);
    r = strata_test_run_cli(argv);
    ck_assert_msg(r.status == 0 && !strstr(r.err, shown) && !strstr(r.err, "\033[K"), "%s", r.err);
    strata_cli_result_clear(&r);
}

strata_cli_result strata_test_cli(const char *first, ...)
{
    GPtrArray *args = g_ptr_array_new();
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        g_ptr_array_add(args, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(args, NULL);
    strata_cli_result r = strata_test_run_cli((const char *const *)args->pdata);
    g_ptr_array_free(args, TRUE);
    return r;
}

strata_cli_result strata_test_run_cli_sets(const char *const *argv, const char *const *sets)
{
    GPtrArray *args = g_ptr_array_new();
    for (const char *const *a = argv; *a; a++)
        g_ptr_array_add(args, (gpointer)*a);
    for (const char *const *x = sets; x && *x; x++) {
        g_ptr_array_add(args, "--set");
        g_ptr_array_add(args, (gpointer)*x);
    }
    g_ptr_array_add(args, NULL);
    strata_cli_result r = strata_test_run_cli((const char *const *)args->pdata);
    g_ptr_array_free(args, TRUE);
    return r;
}

void strata_cli_result_clear(strata_cli_result *r)
{
    g_free(r->out);
    g_free(r->err);
    r->out = r->err = NULL;
}

char *strata_test_write_temp(const char *pattern, const char *text)
{
    char *path = NULL;
    GError *err = NULL;
    int fd = g_file_open_tmp(pattern, &path, &err);
    if (fd < 0) {
        fprintf(stderr, "cannot create temp file: %s\n", err->message);
        abort();
    }
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len)
        abort();
    close(fd);
    return path;
}

char *strata_test_temp_dir(void)
{
    GError *err = NULL;
    char *dir = g_dir_make_tmp("strata-test-XXXXXX", &err);
    if (!dir)
        abort();
    return dir;
}

void strata_test_remove_dir(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        char *path = g_build_filename(dir, name, NULL);
        unlink(path);
        g_free(path);
    }
    if (d)
        g_dir_close(d);
    rmdir(dir);
}

char *strata_test_source_path(const char *relative)
{
    return g_build_filename(STRATA_SOURCE_DIR, relative, NULL);
}

char *strata_test_shared_path(const char *relative)
{
    char *path = g_build_filename(STRATA_SHARED_DIR, "data", relative, NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        printf("SKIP: %s is absent (../shared/data not beside the checkout)\n", path);
        g_free(path);
        return NULL;
    }
    return path;
}

char *strata_test_slow_data_path(const char *relative)
{
#ifdef STRATA_SANITIZE
    printf("SKIP %s: a slow data-driven case, run in the plain build only (under the sanitizers it takes "
           "5 to 20 times longer and adds no coverage the small cases lack)\n",
           relative);
    return NULL;
#else
    return strata_test_shared_path(relative);
#endif
}

int strata_test_main(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

strata_hw *strata_test_load_hw_file(const char *relative, const char *const *overrides)
{
    char *path = strata_test_source_path(relative);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, overrides, &err);
    ck_assert_msg(hw != NULL, "%s: %s", path, err ? err->message : "");
    g_free(path);
    return hw;
}

strata_hw *strata_test_load_hw(const char *name, const char *const *overrides)
{
    char *rel = g_strdup_printf("configs/hw/%s.ini", name);
    strata_hw *hw = strata_test_load_hw_file(rel, overrides);
    g_free(rel);
    return hw;
}

strata_hw *strata_test_load_hw_text(const char *head, const char *keys, GError **err)
{
    char *text = g_strconcat(head, keys, NULL);
    strata_hw *hw = strata_hw_load_data(text, "t.ini", NULL, err);
    g_free(text);
    return hw;
}

strata_results *strata_test_run_trace_text(const strata_hw *hw, const char *trace, const strata_engine_options *opt,
                                           GError **err)
{
    char *path = strata_test_write_temp("run-XXXXXX.trace", trace);
    strata_source *src = strata_trace_open(path, err);
    ck_assert_msg(src != NULL, "trace: %s", *err ? (*err)->message : "?");
    strata_results *r = NULL;
    bool ok = strata_engine_run(hw, src, opt, &r, err);
    strata_source_free(src);
    g_remove(path);
    g_free(path);
    return ok ? r : NULL;
}

void strata_test_hw_text_refused(const char *head, const char *keys, const char *wanted)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, keys, &err);
    ck_assert_msg(!hw, "accepted: %s", keys);
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, wanted), "'%s' lacks '%s' (keys: %s)", err->message, wanted, keys);
    g_error_free(err);
}

const strata_link_spec *strata_test_link(const strata_hw *hw, const char *name)
{
    for (uint32_t i = 0; i < strata_hw_link_count(hw); i++)
        if (strcmp(strata_hw_link(hw, i)->name, name) == 0)
            return strata_hw_link(hw, i);
    ck_abort_msg("no link %s", name);
    return NULL;
}

uint32_t strata_test_count_links(const strata_hw *hw, const char *prefix)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < strata_hw_link_count(hw); i++)
        n += g_str_has_prefix(strata_hw_link(hw, i)->name, prefix);
    return n;
}

/* Strict JSON (RFC 8259): a recursive-descent recognizer over the bytes. */
typedef struct json_scan {
    const char *p, *end, *start;
    const char *why;
} json_scan;

static void js_ws(json_scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static bool js_fail(json_scan *s, const char *why)
{
    if (!s->why)
        s->why = why;
    return false;
}

static bool js_digits(json_scan *s)
{
    const char *from = s->p;
    while (s->p < s->end && g_ascii_isdigit(*s->p))
        s->p++;
    return s->p > from;
}

static bool js_number(json_scan *s)
{
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (s->p >= s->end || *s->p < '1' || *s->p > '9' || !js_digits(s))
        return js_fail(s, "a number's integer part");
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!js_digits(s))
            return js_fail(s, "digits after a number's point");
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!js_digits(s))
            return js_fail(s, "digits of a number's exponent");
    }
    if (s->p < s->end && (g_ascii_isalnum(*s->p) || *s->p == '.'))
        return js_fail(s, "the end of a number");
    return true;
}

static bool js_string(json_scan *s)
{
    s->p++; /* the opening quote */
    const char *from = s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20)
            return js_fail(s, "no control character in a string");
        if (c == '\\') {
            s->p++;
            if (s->p >= s->end || !strchr("\"\\/bfnrtu", *s->p))
                return js_fail(s, "a valid escape");
            if (*s->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (s->p + i >= s->end || !g_ascii_isxdigit(s->p[i]))
                        return js_fail(s, "four hex digits after \\u");
                s->p += 4;
            }
        }
        s->p++;
    }
    if (s->p >= s->end)
        return js_fail(s, "a closing quote");
    if (!g_utf8_validate(from, s->p - from, NULL))
        return js_fail(s, "UTF-8 in a string");
    s->p++;
    return true;
}

static bool js_value(json_scan *s, int depth);

static bool js_members(json_scan *s, int depth, char close, bool object)
{
    s->p++;
    js_ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return true;
    }
    for (;;) {
        js_ws(s);
        if (object) {
            if (s->p >= s->end || *s->p != '"' || !js_string(s))
                return js_fail(s, "a member name");
            js_ws(s);
            if (s->p >= s->end || *s->p != ':')
                return js_fail(s, "':' after a member name");
            s->p++;
        }
        if (!js_value(s, depth + 1))
            return false;
        js_ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == close) {
            s->p++;
            return true;
        }
        return js_fail(s, "',' or the closing bracket");
    }
}

static bool js_value(json_scan *s, int depth)
{
    js_ws(s);
    if (depth > 512)
        return js_fail(s, "nesting under 512");
    if (s->p >= s->end)
        return js_fail(s, "a value");
    switch (*s->p) {
    case '{':
        return js_members(s, depth, '}', true);
    case '[':
        return js_members(s, depth, ']', false);
    case '"':
        return js_string(s);
    default:
        if (*s->p == '-' || g_ascii_isdigit(*s->p))
            return js_number(s);
        for (const char *const *w = (const char *const[]){"true", "false", "null", NULL}; *w; w++)
            if ((size_t)(s->end - s->p) >= strlen(*w) && memcmp(s->p, *w, strlen(*w)) == 0) {
                s->p += strlen(*w);
                return true;
            }
        return js_fail(s, "a value (NaN and infinities are no JSON)");
    }
}

char *strata_test_json_strict_error(const char *text, gsize len)
{
    json_scan s = {text, text + len, text, NULL};
    if (js_value(&s, 0)) {
        js_ws(&s);
        if (s.p == s.end)
            return NULL;
        js_fail(&s, "the end of the text");
    }
    return g_strdup_printf("byte %td: expected %s, near '%.40s'", s.p - s.start, s.why, s.p);
}

char *strata_test_jsonl_strict_error(const char *text, gsize len)
{
    const char *p = text, *end = text + len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', end - p);
        const char *stop = nl ? nl : end;
        char *why = strata_test_json_strict_error(p, stop - p);
        if (why) {
            char *at = g_strdup_printf("line %d: %s", line, why);
            g_free(why);
            return at;
        }
        p = stop + 1;
    }
    return NULL;
}

void strata_test_check_json_outputs_in(const char *dir, const char *const *argv, const strata_cli_result *r)
{
    if (r->status != 0)
        return;
    for (const char *const *a = argv; *a; a++) {
        const char *path = NULL;
        if ((strcmp(*a, "--json") == 0 || strcmp(*a, "--timeline") == 0) && a[1])
            path = a[1];
        else if (g_str_has_prefix(*a, "--json="))
            path = *a + strlen("--json=");
        if (path == NULL || g_str_has_suffix(path, ".gz"))
            continue;
        char *text = NULL;
        gsize len = 0;
        if (strcmp(path, "-") == 0) {
            text = g_strdup(r->out);
            len = strlen(text);
        } else {
            char *at = dir && !g_path_is_absolute(path) ? g_build_filename(dir, path, NULL) : g_strdup(path);
            bool read = g_file_get_contents(at, &text, &len, NULL);
            g_free(at);
            if (!read)
                continue; /* removed by the test already, or a device */
        }
        char *why = strata_test_json_strict_error(text, len);
        ck_assert_msg(why == NULL, "%s %s: not strict JSON: %s", *a, path, why);
        g_free(text);
    }
}

static void set_limits(gpointer data)
{
    const strata_test_limits *l = data;
    if (l->fsize) {
        struct rlimit r = {l->fsize, l->fsize};
        setrlimit(RLIMIT_FSIZE, &r);
    }
    if (l->as) {
        struct rlimit r = {l->as, l->as};
        setrlimit(RLIMIT_AS, &r);
    }
}

/* strata ARGV in dir under the limits (NULL: none). */
strata_cli_result strata_test_run_in(const char *dir, const strata_test_limits *lim, const char *const *argv)
{
    GPtrArray *args = strata_test_binary_argv(argv);
    strata_cli_result r = {0};
    int wait_status = 0;
    GError *err = NULL;
    strata_test_limits none = {0, 0};
    if (!g_spawn_sync(dir, (char **)args->pdata, NULL, G_SPAWN_DEFAULT, set_limits, (gpointer)(lim ? lim : &none),
                      &r.out, &r.err, &wait_status, &err))
        ck_abort_msg("spawn: %s", err->message);
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    g_ptr_array_free(args, TRUE);
    strata_test_check_json_outputs_in(dir, argv, &r);
    return r;
}

/* sh -c SCRIPT in dir, with $S the strata binary and $H configs/hw. */
strata_cli_result strata_test_sh_in(const char *dir, const char *script)
{
    char *hw = strata_test_source_path("configs/hw");
    char **env = g_get_environ();
    env = g_environ_setenv(env, "S", STRATA_BIN, TRUE);
    env = g_environ_setenv(env, "H", hw, TRUE);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    strata_cli_result r = {0};
    int wait_status = 0;
    GError *err = NULL;
    if (!g_spawn_sync(dir, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &r.out, &r.err, &wait_status, &err))
        ck_abort_msg("spawn: %s", err->message);
    r.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    g_strfreev(env);
    g_free(hw);
    return r;
}

/* After row i's refusal: no out.* output and no outfile.c temporary
 * (a name starting with '.') left in dir. */
static void no_output_left(const char *dir, size_t i)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    ck_assert(d);
    for (const char *name; (name = g_dir_read_name(d)) != NULL;)
        ck_assert_msg(!g_str_has_prefix(name, "out.") && name[0] != '.', "row %zu: '%s' left in %s", i, name, dir);
    g_dir_close(d);
}

void strata_test_sh_rows(const strata_test_sh_case *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *dir = strata_test_temp_dir();
        strata_cli_result r = strata_test_sh_in(dir, rows[i].script);
        ck_assert_msg(r.status == rows[i].status && (!rows[i].message || strstr(r.err, rows[i].message)),
                      "row %zu: exit %d: %s", i, r.status, r.err);
        if (rows[i].status == 2)
            no_output_left(dir, i);
        strata_cli_result_clear(&r);
        strata_test_remove_dir(dir);
        g_free(dir);
    }
}

void strata_test_expect(const strata_cli_result *r, int status, const char *in_err)
{
    ck_assert_msg(r->status == status, "exit %d, expected %d: %s", r->status, status, r->err);
    if (in_err)
        ck_assert_msg(strstr(r->err, in_err), "expected '%s' in: %s", in_err, r->err);
}

/* dir holds exactly the names given (NULL-terminated): no temporary. */
void strata_test_only(const char *dir, ...)
{
    GHashTable *want = g_hash_table_new(g_str_hash, g_str_equal);
    va_list ap;
    va_start(ap, dir);
    for (const char *n; (n = va_arg(ap, const char *)) != NULL;)
        g_hash_table_add(want, (gpointer)n);
    va_end(ap);
    GDir *d = g_dir_open(dir, 0, NULL);
    ck_assert(d);
    guint seen = 0;
    for (const char *n; (n = g_dir_read_name(d)) != NULL; seen++)
        ck_assert_msg(g_hash_table_contains(want, n), "unexpected '%s' in %s", n, dir);
    g_dir_close(d);
    ck_assert_msg(seen == g_hash_table_size(want), "%s holds %u files, expected %u", dir, seen,
                  g_hash_table_size(want));
    g_hash_table_unref(want);
}

char *strata_test_route_links(const strata_hw *hw, const char *from, const char *to)
{
    int a = strata_hw_memory_index(hw, from), b = strata_hw_memory_index(hw, to);
    ck_assert_msg(a >= 0 && b >= 0, "no memory %s or %s", from, to);
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    GError *err = NULL;
    ck_assert_msg(strata_hw_route(hw, (uint32_t)a, (uint32_t)b, &hops, &n, &err), "%s", err ? err->message : "");
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? "," : "", strata_hw_link(hw, hops[i].link)->name);
    return g_string_free(s, FALSE);
}

/* Runs `trace` (a strata trace text) on configs/hw/HW, returns collective
 * 0's time and its algo, and in *nccl (when not NULL) the results' "nccl"
 * member as "ALGORITHM/PROTOCOL/CHANNELS" (NULL when it has none). */
JsonParser *strata_test_run_results(const char *hw, const char *trace)
{
    char *json = g_strconcat(trace, ".json", NULL);
    char *hw_path = strata_test_source_path(hw);
    strata_cli_result r = strata_test_cli("run", "--hw", hw_path, "--trace", trace, "--json", json, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    strata_cli_result_clear(&r);
    g_unlink(json);
    g_free(json);
    g_free(hw_path);
    return p;
}

double strata_test_run_collective(const char *hw, const char *text, char **algo, char **nccl)
{
    char *trace = strata_test_write_temp("coll-XXXXXX.trace", text);
    JsonParser *p = strata_test_run_results(hw, trace);
    JsonObject *c = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "collectives"), 0);
    double t = json_object_get_double_member(c, "time_s");
    *algo = g_strdup(json_object_get_string_member(c, "algo"));
    if (nccl) {
        JsonObject *n = json_object_has_member(c, "nccl") ? json_object_get_object_member(c, "nccl") : NULL;
        *nccl = n ? g_strdup_printf("%s/%s/%" G_GINT64_FORMAT, json_object_get_string_member(n, "algorithm"),
                                    json_object_get_string_member(n, "protocol"),
                                    json_object_get_int_member(n, "channels"))
                  : NULL;
    }
    g_object_unref(p);
    g_unlink(trace);
    g_free(trace);
    return t;
}

