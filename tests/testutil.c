/* testutil.c: helpers shared by the Check suites (see testutil.h). */
#include "testutil.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/error.h"
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "hw/hw.h"

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

strata_hw *strata_test_load_hw(const char *name, const char *const *overrides)
{
    char *rel = g_strdup_printf("configs/hw/%s.ini", name);
    char *path = strata_test_source_path(rel);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, overrides, &err);
    ck_assert_msg(hw != NULL, "%s: %s", path, err ? err->message : "");
    g_free(rel);
    g_free(path);
    return hw;
}

strata_hw *strata_test_load_hw_text(const char *head, const char *keys, GError **err)
{
    char *text = g_strconcat(head, keys, NULL);
    strata_hw *hw = strata_hw_load_data(text, "t.ini", NULL, err);
    g_free(text);
    return hw;
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
double strata_test_run_collective(const char *hw, const char *text, char **algo, char **nccl)
{
    char *trace = strata_test_write_temp("coll-XXXXXX.trace", text);
    char *json = g_strconcat(trace, ".json", NULL);
    char *hw_path = strata_test_source_path(hw);
    strata_cli_result r = strata_test_cli("run", "--hw", hw_path, "--trace", trace, "--json", json, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
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
    strata_cli_result_clear(&r);
    g_unlink(json);
    g_unlink(trace);
    g_free(json);
    g_free(trace);
    g_free(hw_path);
    return t;
}

