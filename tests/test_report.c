/*
 * test_report.c: the sweep's HTML report in a real browser. A small sweep
 * (two points, every plot) writes report.html; headless Chromium loads it
 * from disk and dumps the DOM after the load event. The page must log
 * nothing to the console (no script errors) and every plot must have
 * decoded (the page's own script counts images with a natural width into
 * data-plots-loaded / data-plots-total on <body>).
 *
 * Skips (exit 77) with a message where chromium or python3-matplotlib is
 * absent: `apt-get install chromium python3-matplotlib`.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"

static const char HW[] =
    "[hardware]\nname = report-test\nsource = round numbers\n"
    "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\nlatency = 0\n"
    "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\nduplex = full\n"
    "[compute core]\nflops = 100TFLOP/s\noperands = hbm\n";

static const char TRACE[] =
    "strata-trace 1\n"
    "alloc w 256MiB host tag=param\n"
    "alloc d 256MiB tag=param\n"
    "alloc a 64MiB tag=activation\n"
    "copy d w\n"
    "compute k time=1ms in=d out=a\n"
    "free a\n"
    "free d\n"
    "free w\n";

static const char EXP[] =
    "[experiment]\nname = report\ntitle = Report test\nhardware = hw.ini\ntrace = t.trace\n"
    "[sweep]\nlink.pcie.bandwidth = 16GB/s, 32GB/s\n"
    "[output]\nfigures = status, makespan_s, memories.hbm.peak_allocated_bytes\nplots = all\n";

static void put(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_free(path);
}

static int attr_int(const char *dom, const char *name)
{
    char *key = g_strdup_printf("%s=\"", name);
    const char *p = strstr(dom, key);
    int v = p ? atoi(p + strlen(key)) : -1;
    g_free(key);
    return v;
}

START_TEST(report_loads_in_chromium)
{
    char *dir = strata_test_temp_dir();
    put(dir, "hw.ini", HW);
    put(dir, "t.trace", TRACE);
    put(dir, "exp.ini", EXP);
    char *exp = g_build_filename(dir, "exp.ini", NULL);
    char *out = g_build_filename(dir, "out", NULL);
    strata_cli_result r = strata_test_cli("sweep", exp, "--out", out, NULL);
    ck_assert_msg(r.status == 0, "sweep failed: %s", r.err);
    strata_cli_result_clear(&r);

    char *report = g_build_filename(out, "report.html", NULL);
    char *url = g_filename_to_uri(report, NULL, NULL);
    char *profile = g_build_filename(dir, "chromium-profile", NULL);
    char *profile_arg = g_strdup_printf("--user-data-dir=%s", profile);
    const char *argv[] = {"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          "--no-first-run", profile_arg, "--enable-logging=stderr", "--v=0", "--dump-dom",
                          url, NULL};
    char *dom = NULL, *log = NULL;
    int status = 0;
    GError *err = NULL;
    ck_assert_msg(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &dom, &log, &status, &err),
                  "cannot run chromium: %s", err ? err->message : "");
    ck_assert_msg(g_spawn_check_wait_status(status, NULL), "chromium failed:\n%s", log);

    /* No console output at all: any script error or warning fails. */
    char **lines = g_strsplit(log, "\n", -1);
    for (guint i = 0; lines[i]; i++)
        ck_assert_msg(!strstr(lines[i], ":CONSOLE"), "console message: %s", lines[i]);
    g_strfreev(lines);

    /* Every plot decoded: 1 axis chart + 2 points x (memory, address map, links). */
    int loaded = attr_int(dom, "data-plots-loaded"), total = attr_int(dom, "data-plots-total");
    ck_assert_msg(total == 7, "expected 7 plots, the page has %d", total);
    ck_assert_msg(loaded == total, "%d of %d plots decoded", loaded, total);
    ck_assert(strstr(dom, "<h1>Report test</h1>"));
    ck_assert(strstr(dom, "16GB/s") && strstr(dom, "32GB/s"));

    g_free(dom);
    g_free(log);
    g_free(profile_arg);
    g_free(profile);
    g_free(url);
    g_free(report);
    g_free(out);
    g_free(exp);
    g_free(dir);
}
END_TEST

static bool have_matplotlib(void)
{
    int status = -1;
    const char *argv[] = {"/usr/bin/python3", "-c", "import matplotlib", NULL};
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                      NULL, NULL, NULL, &status, NULL))
        return false;
    return g_spawn_check_wait_status(status, NULL);
}

int main(void)
{
    char *chromium = g_find_program_in_path("chromium");
    if (!chromium) {
        printf("SKIP test_report: chromium is absent (apt-get install chromium)\n");
        return 77;
    }
    g_free(chromium);
    if (!have_matplotlib()) {
        printf("SKIP test_report: /usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib)\n");
        return 77;
    }
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, report_loads_in_chromium);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
