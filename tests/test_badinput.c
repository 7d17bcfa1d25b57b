/*
 * test_badinput.c: the bad-input matrix. Every malformed trace, hardware
 * config, experiment file, pickle and CSV must make strata exit 2 with a
 * message naming the file, the line (the byte offset for a pickle) and what
 * was expected; never crash or hang; and leave no output file, complete or
 * partial, and no temporary beside it. An unwritable output path is an error
 * before any work starts.
 *
 * Each case runs in a fresh directory holding only its input; outputs are
 * asked for in the same directory, which must hold only the input afterwards.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "testutil.h"

typedef enum { IN_TRACE, IN_HW, IN_EXPERIMENT, IN_PICKLE, IN_CSV } input_kind;

typedef struct bad_case {
    const char *name;
    input_kind kind;
    const char *text;   /* the file's content (NUL-free cases) */
    const char *where;  /* expected after the path: ":3" (line) or ": offset 2" */
    const char *expect; /* expected in the message */
    bool needs_hw;      /* an error only against a hardware model (not for transform, alloc) */
} bad_case;

#define GOOD_HW "[hardware]\nname = t\nsource = test\n[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n" \
                "[memory host]\nkind = host\ncapacity = 4GiB\nbandwidth = 100GB/s\n" \
                "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\n[compute core]\nflops = 1TFLOP/s\n" \
                "operands = hbm\n"

static const bad_case trace_cases[] = {
    {"version", IN_TRACE, "strata-trace 2\nalloc a 4096\n", ":1:", "expected version 1", false},
    {"no-version", IN_TRACE, "alloc a 4096\n", ":1:", "expected 'strata-trace 1'", false},
    {"empty", IN_TRACE, "", ":1:", "got end of file", false},
    {"unknown-op", IN_TRACE, "strata-trace 1\nalloc a 4096\nmalloc b 1\n", ":3:1:", "unknown op 'malloc'", false},
    {"bad-size", IN_TRACE, "strata-trace 1\nalloc a 12XB\n", ":2:9:", "expected a size", false},
    {"zero-size", IN_TRACE, "strata-trace 1\nalloc a 0\n", ":2:9:", "expected a size above 0", false},
    {"huge-size", IN_TRACE, "strata-trace 1\nalloc a 99999999999999999999TiB\n", ":2:9:", "expected a size", false},
    {"missing-operand", IN_TRACE, "strata-trace 1\nalloc a\n", ":2:8:", "expected a size", false},
    {"unknown-attr", IN_TRACE, "strata-trace 1\nalloc a 4096 colour=red\n", ":2:14:", "unknown attribute 'colour'", false},
    {"duplicate-attr", IN_TRACE, "strata-trace 1\nalloc a 4096 tag=temp tag=grad\n", ":2:23:", "duplicate attribute", false},
    {"bad-tag", IN_TRACE, "strata-trace 1\nalloc a 4096 tag=weights\n", ":2:18:", "expected a tag (one of param", false},
    {"bad-dtype", IN_TRACE, "strata-trace 1\nalloc a 4096 dtype=fp32\n", ":2:20:", "expected a dtype (one of f64", false},
    {"bad-shape", IN_TRACE, "strata-trace 1\nalloc a 4096 shape=8x\n", ":2:20:", "expected a shape", false},
    {"bad-time", IN_TRACE, "strata-trace 1\ncompute k time=soon\n", ":2:16:", "expected a time", false},
    {"bad-flops", IN_TRACE, "strata-trace 1\ncompute k flops=lots\n", ":2:17:", "expected an amount of work", false},
    {"duplicate-live", IN_TRACE, "strata-trace 1\nalloc a 4096\nalloc a 4096\n", ":3:", "expected a name that is not live", false},
    {"free-unknown", IN_TRACE, "strata-trace 1\nalloc a 4096\nfree b\n", ":3:", "expected a live buffer", false},
    {"double-free", IN_TRACE, "strata-trace 1\nalloc a 4096\nfree a\nfree a\n", ":4:", "expected a live buffer", false},
    {"copy-unknown", IN_TRACE, "strata-trace 1\nalloc a 4096\ncopy a ghost\n", ":3:", "expected a live buffer", false},
    {"copy-too-big", IN_TRACE, "strata-trace 1\nalloc a 4096\nalloc b 1024\ncopy b a\n", ":4:", "expected at most 1024 bytes", false},
    {"in-unknown", IN_TRACE, "strata-trace 1\ncompute k in=ghost\n", ":2:", "expected a live buffer as in=", false},
    {"wait-no-record", IN_TRACE, "strata-trace 1\nwait e\nrecord e\n", ":2:", "expected an event recorded earlier", false},
    {"late-option", IN_TRACE, "strata-trace 1\nalloc a 4096\noption k=v\n", ":3:", "expected option lines before", false},
    {"unknown-memory", IN_TRACE, "strata-trace 1\nalloc a 4096\nalloc b 4096 vram\n", ":3", "vram", true},
    {"absurd-time", IN_TRACE, "strata-trace 1\ncompute k time=1e30s\n", ":2:", "expected time= of 0, or from 0.001ns (a picosecond, the finest time a trace holds) to 1e+06s, got 1e+30s", false},
    {"absurd-flops", IN_TRACE, "strata-trace 1\ncompute k flops=1e30\n", ":2:", "expected flops= between 0 and 1e+21, got 1e+30", false},
    {"absurd-at", IN_TRACE, "strata-trace 1\nalloc a 4096 at=1e12s\n", ":2:", "expected at= of 0, or from 0.001ns (a picosecond, the finest time a trace holds) to 1e+09s", false},
    /* An error far into the trace: work has started, still no output. */
    {"late-error", IN_TRACE, NULL, ":2002:", "expected a live buffer", false},
};

static const bad_case hw_cases[] = {
    {"unknown-group", IN_HW, GOOD_HW "[memroy x]\nkind = host\n", ":19", "unknown group", false},
    {"unknown-key", IN_HW, GOOD_HW "colour = red\n", ":19", "unknown key 'colour'", false},
    {"missing-key", IN_HW, "[hardware]\nname = t\nsource = s\n[memory hbm]\nkind = device\nbandwidth = 1TB/s\n", ":4",
     "missing required key 'capacity'", false},
    {"bad-capacity", IN_HW, "[hardware]\nname = t\nsource = s\n[memory hbm]\nkind = device\ncapacity = 16XB\nbandwidth = 1TB/s\n",
     ":6", "expected a size", false},
    {"bad-kind", IN_HW, "[hardware]\nname = t\nsource = s\n[memory hbm]\nkind = disk\ncapacity = 1GiB\nbandwidth = 1TB/s\n",
     ":5", "disk", false},
    {"bad-link-end", IN_HW, "[hardware]\nname = t\nsource = s\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                            "bandwidth = 1TB/s\n[link l]\nbetween = hbm vram\nbandwidth = 1GB/s\n",
     ":9", "vram", false},
    {"not-a-keyfile", IN_HW, "this is not an ini file\n", ":1", "", false},
    /* Figures outside the sane ranges of docs/hardware.md. */
    {"absurd-bandwidth", IN_HW, GOOD_HW "[link slow]\nbetween = host hbm\nbandwidth = 1e-30B/s\n", ":21",
     "[link slow] bandwidth: expected a bandwidth from 1 kB/s to 10 PB/s, got '1e-30B/s'", false},
    {"absurd-latency", IN_HW, GOOD_HW "[link slow]\nbetween = host hbm\nbandwidth = 1GB/s\nlatency = 1e30s\n", ":22",
     "[link slow] latency: expected a time from 0 to 1 s, got '1e30s'", false},
    {"absurd-flops", IN_HW, GOOD_HW "[compute tiny]\nflops = 1e-9FLOP/s\n", ":20", "expected a flop rate from", false},
    {"params-group-gone", IN_HW, GOOD_HW "[params matmul]\nbm = 256\n", ":19",
     "unknown group; expected [hardware], [memory NAME]", false},
    {"allocator-typo", IN_HW, "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                              "bandwidth = 1TB/s\nallocator = best-fitt\n",
     ":7", "unknown allocator 'best-fitt'", false},
    {"allocator-param", IN_HW, "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\nallocator = caching\nallocator.max_split = 1MiB\n",
     ":8", "unknown parameter 'max_split'", false},
    {"key-twice", IN_HW, GOOD_HW "flops = 2TFLOP/s\n", ":19", "[compute core] flops is set twice (first on line 17)",
     false},
    /* the newest keys, as a user may mistype them (GOOD_HW is 18 lines) */
#define COPY_ENGINES(v) GOOD_HW "[link dma]\nbetween = host hbm\nbandwidth = 16GB/s\ncopy_engines = " v "\n"
    {"copy-engines-0", IN_HW, COPY_ENGINES("0"), ":22", "copy_engines: expected a whole number from 1 to 64, got '0'",
     false},
    {"copy-engines-65", IN_HW, COPY_ENGINES("65"), ":22", "from 1 to 64, got '65'", false},
    {"copy-engines-negative", IN_HW, COPY_ENGINES("-1"), ":22", "from 1 to 64, got '-1'", false},
    {"copy-engines-fraction", IN_HW, COPY_ENGINES("1.5"), ":22", "from 1 to 64, got '1.5'", false},
    {"copy-engines-text", IN_HW, COPY_ENGINES("two"), ":22", "from 1 to 64, got 'two'", false},
    {"copy-engines-empty", IN_HW, COPY_ENGINES(""), ":22", "from 1 to 64, got ''", false},
#undef COPY_ENGINES
    /* before: "expected hbm2, hbm3, hbm3e", though none is taken too */
    {"dram-unknown", IN_HW, GOOD_HW "[memory stack]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\ndram = hbm4\n",
     ":23", "[memory stack] dram: expected hbm2, hbm3, hbm3e, or none, got 'hbm4'", false},
    {"dram-without-width", IN_HW,
     GOOD_HW "[memory stack]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\ndram = hbm3\n", ":23",
     "a DRAM timing set also needs bus_width", false},
    {"split-k-negative", IN_HW, GOOD_HW "matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsplit_k_reduction = -1us\n",
     ":22", "split_k_reduction: expected a time such as 250ns", false},
    {"split-k-text", IN_HW, GOOD_HW "matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsplit_k_reduction = soon\n",
     ":22", "split_k_reduction: expected a time such as 250ns", false},
};

static const bad_case pickle_cases[] = {
    /* GLOBAL os.system: a pickle that would run code must be refused, not run. */
    {"code", IN_PICKLE, "\x80\x02" "cos\nsystem\n(S'touch /tmp/strata-pwned'\ntR.", ": offset 2", "GLOBAL", false},
    {"garbage", IN_PICKLE, "\x2f\x2f\x2f", ": offset 0", "opcode", false},
    {"truncated", IN_PICKLE, "\x80\x04\x95\x27\x00\x00\x00\x00\x00\x00\x00}", ": offset 2", "truncated", false},
    {"not-a-dict", IN_PICKLE, "\x80\x02]q\x00(K\x01K\x02" "e.", "", "expected a dict", false},
};

static const bad_case csv_cases[] = {
    {"bad-row", IN_CSV, "id,lower,upper,size\n0,0,10,64\n1,5,x,64\n", ":3", "", false},
    {"bad-header", IN_CSV, "a,b\n0,1\n", ":1", "", false},
    {"time-past-trace-range", IN_CSV, "id,lower,upper,size\n0,0,10,64\n1,5,3072000000000000,64\n", ":3",
     "expected upper at most 1000000000000000", false},
};

static char *late_error_trace(void)
{
    GString *s = g_string_new("strata-trace 1\n");
    for (int i = 0; i < 1000; i++)
        g_string_append_printf(s, "alloc b%d 4KiB\nfree b%d\n", i, i);
    g_string_append(s, "free never_allocated\n"); /* line 1 + 2000 + 1 = 2002 */
    return g_string_free(s, FALSE);
}

/* Files in dir other than `keep`. */
static char *stray_files(const char *dir, const char *keep)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    GString *s = g_string_new(NULL);
    const char *name;
    while ((name = g_dir_read_name(d)))
        if (strcmp(name, keep) != 0)
            g_string_append_printf(s, "%s ", name);
    g_dir_close(d);
    return g_string_free(s, FALSE);
}

static const char *input_name(input_kind kind)
{
    switch (kind) {
    case IN_TRACE: return "bad.trace";
    case IN_HW: return "bad.ini";
    case IN_EXPERIMENT: return "bad-experiment.ini";
    case IN_PICKLE: return "bad.pickle";
    case IN_CSV: return "bad.csv";
    }
    return "bad";
}

/* Runs one command of the case; argv uses IN for the input and OUT*, for outputs in dir. */
static void run_case(const bad_case *c, const char *dir, const char *input, const char *const *argv)
{
    strata_cli_result r = strata_test_run_cli(argv);
    char *cmd = g_strjoinv(" ", (char **)argv);
    ck_assert_msg(r.status == 2, "%s: '%s' exit %d (want 2): %s", c->name, cmd, r.status, r.err);
    /* The file, then the line: "bad.trace:3:" (transform checks its input
     * before any policy sees it, so its errors read the same). */
    char *where = g_strdup_printf("%s%s", input, c->where);
    ck_assert_msg(strstr(r.err, input) != NULL, "%s: '%s': stderr lacks the file '%s': %s", c->name, cmd,
                  input, r.err);
    ck_assert_msg(strstr(r.err, where) != NULL, "%s: '%s': stderr lacks '%s': %s", c->name, cmd, where, r.err);
    ck_assert_msg(strstr(r.err, c->expect) != NULL, "%s: '%s': stderr lacks '%s': %s", c->name, cmd, c->expect, r.err);
    char *stray = stray_files(dir, input_name(c->kind));
    ck_assert_msg(*stray == '\0', "%s: '%s' left files behind: %s", c->name, cmd, stray);
    g_free(stray);
    g_free(where);
    g_free(cmd);
    strata_cli_result_clear(&r);
}

static void run_matrix(const bad_case *cases, size_t n)
{
    char *hw_good = strata_test_source_path("configs/hw/test-simple.ini");
    char *trace_good = strata_test_source_path("traces/examples/format-tour.trace");
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &cases[i];
        char *dir = strata_test_temp_dir();
        char *input = g_build_filename(dir, input_name(c->kind), NULL);
        char *text = c->text ? g_strdup(c->text) : late_error_trace();
        ck_assert(g_file_set_contents(input, text, (gssize)strlen(text), NULL));
        char *json = g_build_filename(dir, "out.json", NULL);
        char *timeline = g_build_filename(dir, "timeline.json", NULL);
        char *out_trace = g_build_filename(dir, "out.trace", NULL);
        switch (c->kind) {
        case IN_TRACE: {
            const char *run[] = {"run", "--hw", hw_good, "--trace", input, "--json", json, "--timeline", timeline, NULL};
            run_case(c, dir, input, run);
            const char *check[] = {"check", "--trace", input, "--hw", hw_good, NULL};
            run_case(c, dir, input, check);
            const char *transform[] = {"transform", "--trace", input, "--policy", "donate", "-o", out_trace, NULL};
            if (!c->needs_hw)
                run_case(c, dir, input, transform);
            const char *alloc[] = {"alloc", "--trace", input, "--allocator", "best-fit", "--capacity", "1GiB",
                                   "--json", json, NULL};
            strata_cli_result probe = strata_test_cli("alloc", "--help", NULL);
            if (probe.status == 0 && !c->needs_hw) /* alloc has no hardware model */
                run_case(c, dir, input, alloc);
            strata_cli_result_clear(&probe);
            break;
        }
        case IN_HW: {
            const char *run[] = {"run", "--hw", input, "--trace", trace_good, "--json", json, NULL};
            run_case(c, dir, input, run);
            const char *check[] = {"check", "--trace", trace_good, "--hw", input, NULL};
            run_case(c, dir, input, check);
            break;
        }
        case IN_PICKLE: {
            const char *imp[] = {"import", "torch", input, "-o", out_trace, NULL};
            run_case(c, dir, input, imp);
            ck_assert(!g_file_test("/tmp/strata-pwned", G_FILE_TEST_EXISTS));
            break;
        }
        case IN_CSV: {
            strata_cli_result probe = strata_test_cli("import", "minimalloc", input, "-o", "/dev/null", NULL);
            bool have = !strstr(probe.err, "no MiniMalloc importer");
            strata_cli_result_clear(&probe);
            const char *imp[] = {"import", "minimalloc", input, "-o", out_trace, NULL};
            if (have)
                run_case(c, dir, input, imp);
            else
                printf("SKIP %s: this build has no MiniMalloc importer yet\n", c->name);
            break;
        }
        case IN_EXPERIMENT:
            break;
        }
        strata_test_remove_dir(dir);
        g_free(json);
        g_free(timeline);
        g_free(out_trace);
        g_free(text);
        g_free(input);
        g_free(dir);
    }
    g_free(hw_good);
    g_free(trace_good);
}

START_TEST(bad_traces) { run_matrix(trace_cases, G_N_ELEMENTS(trace_cases)); }
END_TEST

START_TEST(bad_hardware) { run_matrix(hw_cases, G_N_ELEMENTS(hw_cases)); }
END_TEST

START_TEST(bad_pickles)
{
    /* The pickle texts hold NUL bytes: write them with their true lengths. */
    static const struct {
        const char *name;
        const char *data;
        size_t len;
        const char *where, *expect;
    } cases[] = {
        {"code", "\x80\x02" "cos\nsystem\n(S'touch /tmp/strata-pwned'\ntR.", 39, ": offset 2", "GLOBAL"},
        {"garbage", "\x2f\x2f\x2f", 3, ": offset 0", "opcode"},
        {"truncated", "\x80\x04\x95\x27\x00\x00\x00\x00\x00\x00\x00}", 12, ": offset 2", "truncated"},
        {"not-a-dict", "\x80\x02]q\x00(K\x01K\x02" "e.", 12, "", "expected a dict"},
        {"empty", "", 0, "", ""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        bad_case c = {cases[i].name, IN_PICKLE, NULL, cases[i].where, cases[i].expect, false};
        char *dir = strata_test_temp_dir();
        char *input = g_build_filename(dir, "bad.pickle", NULL);
        ck_assert(g_file_set_contents(input, cases[i].data, (gssize)cases[i].len, NULL));
        char *out_trace = g_build_filename(dir, "out.trace", NULL);
        const char *imp[] = {"import", "torch", input, "-o", out_trace, NULL};
        run_case(&c, dir, input, imp);
        ck_assert(!g_file_test("/tmp/strata-pwned", G_FILE_TEST_EXISTS));
        strata_test_remove_dir(dir);
        g_free(out_trace);
        g_free(input);
        g_free(dir);
    }
    (void)pickle_cases;
}
END_TEST

START_TEST(bad_csv) { run_matrix(csv_cases, G_N_ELEMENTS(csv_cases)); }
END_TEST

START_TEST(bad_experiments)
{
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    char *trace = strata_test_source_path("traces/examples/format-tour.trace");
    const struct {
        const char *name;
        char *text;
        const char *where, *expect;
    } cases[] = {
        {"unknown-group", g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\n[swep]\na = 1\n", hw, trace),
         ":5", "swep"},
        {"unknown-key", g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\ncolour = red\n", hw, trace),
         ":5", "colour"},
        {"bad-axis-value",
         g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\n[sweep]\nmemory.hbm.capacity = 1GiB, 2XB\n",
                         hw, trace),
         ":6", "2XB"},
        {"missing-hardware", g_strdup_printf("[experiment]\nname = x\nhardware = /nonexistent.ini\ntrace = %s\n", trace),
         ":3", "nonexistent"},
        /* Out-of-range axis values fail before any point runs. */
        {"axis-absurd-bandwidth",
         g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\n[sweep]\nlink.pcie.bandwidth = 16GB/s, "
                         "1e-30B/s\n", hw, trace),
         ":6", "expected a bandwidth from 1 kB/s to 10 PB/s"},
        {"axis-policy-range",
         g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\n[sweep]\npolicy.prefetch = 1, -1\n", hw,
                         trace),
         ":6", "0 to 1000000"},
        {"axis-workload-range",
         g_strdup_printf("[experiment]\nname = x\nhardware = %s\nworkload = matmul m=512\n[sweep]\n"
                         "workload.bm = 256, 0\n", hw),
         ":6", "expected bm >= 1"},
        {"workload-param-twice",
         g_strdup_printf("[experiment]\nname = x\nhardware = %s\nworkload = matmul m=512 m=1024\n", hw), ":4",
         "parameter 'm' given twice"},
        {"allocator-typo",
         g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\n[sweep]\nallocator = best-fit, best-fitt\n",
                         hw, trace),
         ":6", "unknown allocator 'best-fitt'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        bad_case c = {cases[i].name, IN_EXPERIMENT, NULL, cases[i].where, cases[i].expect, false};
        char *dir = strata_test_temp_dir();
        char *input = g_build_filename(dir, "bad-experiment.ini", NULL);
        ck_assert(g_file_set_contents(input, cases[i].text, -1, NULL));
        char *out = g_build_filename(dir, "out", NULL);
        const char *sweep[] = {"sweep", input, "--out", out, NULL};
        run_case(&c, dir, input, sweep);
        strata_test_remove_dir(dir);
        g_free(out);
        g_free(input);
        g_free(dir);
        g_free(cases[i].text);
    }
    g_free(hw);
    g_free(trace);
}
END_TEST

START_TEST(unwritable_output_fails_before_work)
{
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    char *trace = strata_test_source_path("traces/examples/format-tour.trace");
    const char *const commands[][12] = {
        {"run", "--hw", hw, "--trace", trace, "--json", "/nonexistent-dir/out.json", NULL},
        {"run", "--hw", hw, "--trace", trace, "--timeline", "/nonexistent-dir/t.json", NULL},
        {"transform", "--trace", trace, "--policy", "donate", "-o", "/nonexistent-dir/out.trace", NULL},
        /* before: refused only after the work, by g_file_set_contents */
        {"run", "--hw", hw, "--trace", trace, "--compile-to", "/nonexistent-dir/t.stc", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        strata_cli_result r = strata_test_run_cli(commands[i]);
        ck_assert_msg(r.status == 2, "%s: exit %d: %s", commands[i][0], r.status, r.err);
        ck_assert_msg(strstr(r.err, "/nonexistent-dir/") != NULL, "%s: %s", commands[i][0], r.err);
        /* Before any work: no summary was printed. */
        ck_assert_msg(strstr(r.out, "makespan") == NULL, "%s printed results: %s", commands[i][0], r.out);
        strata_cli_result_clear(&r);
    }
    g_free(hw);
    g_free(trace);
}
END_TEST

/* Runs argv, which must fail with exit 2 and a message holding every needle,
 * and leave nothing in dir but `keep` (NULL: dir is not checked). */
static void fails_with(const char *const *argv, const char *dir, const char *keep, const char *n1, const char *n2)
{
    strata_cli_result r = strata_test_run_cli(argv);
    char *cmd = g_strjoinv(" ", (char **)argv);
    ck_assert_msg(r.status == 2, "'%s' exit %d (want 2): %s", cmd, r.status, r.err);
    ck_assert_msg(strstr(r.err, n1), "'%s': stderr lacks '%s': %s", cmd, n1, r.err);
    ck_assert_msg(!n2 || strstr(r.err, n2), "'%s': stderr lacks '%s': %s", cmd, n2, r.err);
    if (dir) {
        char *stray = stray_files(dir, keep ? keep : "");
        ck_assert_msg(*stray == '\0', "'%s' left files behind: %s", cmd, stray);
        g_free(stray);
    }
    g_free(cmd);
    strata_cli_result_clear(&r);
}

/* The good inputs and a fresh folder for outputs, shared by the cases below. */
typedef struct io_fixture {
    char *hw, *trace, *dir, *json, *out;
} io_fixture;

static io_fixture fixture_new(void)
{
    io_fixture f = {strata_test_source_path("configs/hw/test-simple.ini"),
                    strata_test_source_path("traces/examples/format-tour.trace"), strata_test_temp_dir(), NULL, NULL};
    f.json = g_build_filename(f.dir, "out.json", NULL);
    f.out = g_build_filename(f.dir, "out", NULL);
    return f;
}

static void fixture_free(io_fixture *f)
{
    strata_test_remove_dir(f->out);
    strata_test_remove_dir(f->dir);
    g_free(f->hw);
    g_free(f->trace);
    g_free(f->dir);
    g_free(f->json);
    g_free(f->out);
}

/* A device that never ends: each reader stops at the first line's NUL. */
START_TEST(endless_devices)
{
    io_fixture f = fixture_new();
    const char *nul = "/dev/zero:1:1: expected text, got a NUL byte";
    const char *check[] = {"check", "--trace", "/dev/zero", NULL};
    fails_with(check, f.dir, NULL, nul, NULL);
    const char *run_trace[] = {"run", "--hw", f.hw, "--trace", "/dev/zero", "--json", f.json, NULL};
    fails_with(run_trace, f.dir, NULL, nul, NULL);
    const char *run_hw[] = {"run", "--hw", "/dev/zero", "--trace", f.trace, "--json", f.json, NULL};
    fails_with(run_hw, f.dir, NULL, nul, NULL);
    const char *sweep[] = {"sweep", "/dev/zero", "--out", f.out, NULL};
    fails_with(sweep, f.dir, NULL, nul, NULL);
    fixture_free(&f);
}
END_TEST

static void stdin_from_dev_zero(gpointer unused)
{
    (void)unused;
    int fd = open("/dev/zero", O_RDONLY);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        close(fd);
    }
}

/* Standard input that never ends ('-' as the trace) fails at its first line
 * too, instead of being spooled forever. */
START_TEST(endless_stdin)
{
    const char *argv[] = {STRATA_BIN, "check", "--trace", "-", NULL};
    char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, stdin_from_dev_zero, NULL, &out, &err,
                           &status, &error));
    ck_assert_int_eq(WEXITSTATUS(status), 2);
    ck_assert_msg(strstr(err, "<stdin>:1:1: expected text, got a NUL byte"), "%s", err);
    g_free(out);
    g_free(err);
}
END_TEST

/* A 10 MB line: refused at its line with a short message, never echoed. */
START_TEST(overlong_lines)
{
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    char *dir = strata_test_temp_dir();
    GString *big = g_string_new("strata-trace 1\nalloc a 4096\nalloc b ");
    for (int i = 0; i < 10 * 1024 * 1024; i++)
        g_string_append_c(big, 'X');
    g_string_append(big, "\n");
    char *input = g_build_filename(dir, "long.trace", NULL);
    ck_assert(g_file_set_contents(input, big->str, (gssize)big->len, NULL));
    char *json = g_build_filename(dir, "out.json", NULL);
    const char *run[] = {"run", "--hw", hw, "--trace", input, "--json", json, NULL};
    strata_cli_result r = strata_test_run_cli(run);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "long.trace:3: expected a line of at most"), "%s", r.err);
    ck_assert_msg(strlen(r.err) < 400, "message of %zu bytes", strlen(r.err));
    strata_cli_result_clear(&r);
    unlink(input);
    /* A long bad value within the line bound is quoted as a short excerpt. */
    char *ini = g_build_filename(dir, "long.ini", NULL);
    GString *hwtext = g_string_new("[hardware]\nname = t\n[memory hbm]\nkind = ");
    for (int i = 0; i < 500000; i++)
        g_string_append_c(hwtext, 'd');
    g_string_append(hwtext, "\ncapacity = 1GiB\nbandwidth = 1TB/s\n");
    ck_assert(g_file_set_contents(ini, hwtext->str, (gssize)hwtext->len, NULL));
    const char *check[] = {"check", "--trace", input, "--hw", ini, NULL};
    const char *trace_good = strata_test_source_path("traces/examples/format-tour.trace");
    check[2] = trace_good;
    r = strata_test_run_cli(check);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "long.ini:4: [memory hbm] kind: expected device, host or onchip, got 'ddd"), "%s",
                  r.err);
    ck_assert_msg(strlen(r.err) < 400, "message of %zu bytes", strlen(r.err));
    strata_cli_result_clear(&r);
    unlink(ini);
    ck_assert(rmdir(dir) == 0); /* nothing written beside the inputs */
    g_free((char *)trace_good);
    g_string_free(hwtext, TRUE);
    g_string_free(big, TRUE);
    g_free(ini);
    g_free(json);
    g_free(input);
    g_free(dir);
    g_free(hw);
}
END_TEST

/* A parameter given twice is an error wherever parameters are given. */
START_TEST(parameters_given_twice)
{
    io_fixture f = fixture_new();
    const char *alloc[] = {"alloc", "--trace", f.trace, "--capacity", "1GiB", "--allocator",
                           "caching:max_split_size=1MiB,max_split_size=2MiB", "--json", f.json, NULL};
    fails_with(alloc, f.dir, NULL, "allocator caching: parameter 'max_split_size' given twice", NULL);
    const char *gen[] = {"gen", "scan-mlp", "layers=1", "layers=2", "-o", f.out, NULL};
    fails_with(gen, f.dir, NULL, "parameter 'layers' given twice", NULL);
    const char *set[] = {"run", "--hw", f.hw, "--trace", f.trace, "--set", "memory.hbm.capacity=1GiB", "--set",
                         "memory.hbm.capacity=2GiB", "--json", f.json, NULL};
    fails_with(set, f.dir, NULL, "memory.hbm.capacity=2GiB", "already set by override 'memory.hbm.capacity=1GiB'");
    const char *policy[] = {"transform", "--trace", f.trace, "--policy", "prefetch=2:distance=3", "-o", f.out, NULL};
    fails_with(policy, f.dir, NULL, "policy prefetch: parameter 'distance' given twice", NULL);
    fixture_free(&f);
}
END_TEST

/* Writes the file at src to dst with a UTF-8 byte order mark in front. */
static void copy_with_bom(const char *src, const char *dst)
{
    char *text = NULL;
    ck_assert(g_file_get_contents(src, &text, NULL, NULL));
    char *bom_text = g_strconcat("\xEF\xBB\xBF", text, NULL);
    ck_assert(g_file_set_contents(dst, bom_text, -1, NULL));
    g_free(text);
    g_free(bom_text);
}

/* A UTF-8 byte order mark before the first line is accepted by every reader. */
START_TEST(leading_bom_accepted)
{
    io_fixture f = fixture_new();
    char *bom_hw = g_build_filename(f.dir, "bom.ini", NULL), *bom_trace = g_build_filename(f.dir, "bom.trace", NULL);
    copy_with_bom(f.hw, bom_hw);
    copy_with_bom(f.trace, bom_trace);
    char *exp = g_strdup_printf("\xEF\xBB\xBF[experiment]\nname = bom\nhardware = %s\ntrace = %s\n", bom_hw, bom_trace);
    char *exp_path = g_build_filename(f.dir, "bom-exp.ini", NULL);
    ck_assert(g_file_set_contents(exp_path, exp, -1, NULL));
    const char *run[] = {"run", "--hw", bom_hw, "--trace", bom_trace, "--json", f.json, "-q", NULL};
    strata_cli_result r = strata_test_run_cli(run);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    strata_cli_result_clear(&r);
    const char *sweep[] = {"sweep", exp_path, "--out", f.out, "--list-jobs", NULL};
    r = strata_test_run_cli(sweep);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    strata_cli_result_clear(&r);
    g_free(exp_path);
    g_free(exp);
    g_free(bom_hw);
    g_free(bom_trace);
    fixture_free(&f);
}
END_TEST

/* ---- usage errors, clobbered inputs, interrupts and failed writes --------- */

/* A fresh folder with copies of the test hardware and trace (hw.ini, t.trace). */
typedef struct job_inputs {
    char *dir, *hw, *trace;
} job_inputs;

static job_inputs inputs_make(void)
{
    job_inputs in = {strata_test_temp_dir(), NULL, NULL};
    const char *sources[] = {"configs/hw/test-simple.ini", "traces/examples/format-tour.trace"};
    char **targets[] = {&in.hw, &in.trace};
    const char *names[] = {"hw.ini", "t.trace"};
    for (int i = 0; i < 2; i++) {
        char *src = strata_test_source_path(sources[i]), *text = NULL;
        *targets[i] = g_build_filename(in.dir, names[i], NULL);
        ck_assert(g_file_get_contents(src, &text, NULL, NULL) && g_file_set_contents(*targets[i], text, -1, NULL));
        g_free(text);
        g_free(src);
    }
    return in;
}

static void inputs_clear(job_inputs *in)
{
    strata_test_remove_dir(in->dir);
    g_free(in->dir);
    g_free(in->hw);
    g_free(in->trace);
}

/* Files in dir other than hw.ini and t.trace. */
static char *stray_besides_inputs(const char *dir)
{
    char *a = stray_files(dir, "hw.ini");
    GString *s = g_string_new(NULL);
    char **names = g_strsplit(a, " ", -1);
    for (guint i = 0; names[i]; i++)
        if (*names[i] && strcmp(names[i], "t.trace") != 0)
            g_string_append_printf(s, "%s ", names[i]);
    g_strfreev(names);
    g_free(a);
    return g_string_free(s, FALSE);
}

START_TEST(empty_policy_is_a_usage_error)
{
    job_inputs in = inputs_make();
    const char *dir = in.dir, *hw = in.hw, *trace = in.trace;
    char *json = g_build_filename(dir, "out.json", NULL);
    const char *const commands[][14] = {
        {"run", "--hw", hw, "--trace", trace, "--policy", "", "--json", json, NULL},
        {"alloc", "--trace", trace, "--allocator", "best-fit", "--capacity", "1GiB", "--policy", "", "--json", json,
         NULL},
        {"transform", "--trace", trace, "--policy", "", "-o", json, NULL},
    };
    const char *const needles[] = {"policy", NULL};
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        strata_cli_result r = strata_test_run_cli(commands[i]);
        ck_assert_msg(r.status == 2, "%s: exit %d: %s", commands[i][0], r.status, r.err);
        ck_assert_msg(strstr(r.err, needles[0]), "%s: %s", commands[i][0], r.err);
        char *stray = stray_besides_inputs(dir);
        ck_assert_msg(*stray == '\0', "%s left %s", commands[i][0], stray);
        g_free(stray);
        strata_cli_result_clear(&r);
    }
    g_free(json);
    inputs_clear(&in);
}
END_TEST

START_TEST(outputs_that_clobber_inputs_are_refused)
{
    job_inputs in = inputs_make();
    const char *dir = in.dir, *hw = in.hw, *trace = in.trace;
    char *trace_before = NULL, *hw_before = NULL;
    ck_assert(g_file_get_contents(trace, &trace_before, NULL, NULL) && g_file_get_contents(hw, &hw_before, NULL, NULL));
    char *json = g_build_filename(dir, "out.json", NULL);
    char *same_json = g_build_filename(dir, ".", "out.json", NULL); /* another spelling of the same file */
    const struct {
        const char *argv[12];
        const char *needle1, *needle2;
    } cases[] = {
        {{"run", "--hw", hw, "--trace", trace, "--json", trace, NULL}, "--json", "input of --trace"},
        {{"run", "--hw", hw, "--trace", trace, "--json", hw, NULL}, "--json", "input of --hw"},
        {{"run", "--hw", hw, "--trace", trace, "--json", json, "--timeline", same_json, NULL}, "--timeline",
         "output of --json"},
        {{"run", "--hw", hw, "--trace", trace, "--json", "-", "--timeline", "-", NULL}, "--timeline",
         "standard output"},
        {{"alloc", "--trace", trace, "--allocator", "bfc", "--capacity", "1GiB", "--json", trace, NULL}, "--json",
         "input of --trace"},
        {{"transform", "--trace", trace, "--policy", "donate", "-o", trace, NULL}, "--output", "input of --trace"},
        /* before: the compiled bytes replaced the text trace, exit 0 */
        {{"run", "--hw", hw, "--trace", trace, "--compile-to", trace, NULL}, "--compile-to", "input of --trace"},
        {{"run", "--hw", hw, "--trace", trace, "--compile-to", hw, NULL}, "--compile-to", "input of --hw"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        strata_cli_result r = strata_test_run_cli(cases[i].argv);
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, cases[i].needle1) && strstr(r.err, cases[i].needle2), "case %zu: %s", i, r.err);
        ck_assert_msg(strstr(r.out, "makespan") == NULL && strstr(r.err, "makespan") == NULL, "case %zu ran", i);
        char *stray = stray_besides_inputs(dir), *t = NULL, *h = NULL;
        ck_assert_msg(*stray == '\0', "case %zu left %s", i, stray);
        ck_assert(g_file_get_contents(trace, &t, NULL, NULL) && g_file_get_contents(hw, &h, NULL, NULL));
        ck_assert_str_eq(t, trace_before);
        ck_assert_str_eq(h, hw_before);
        g_free(stray);
        g_free(t);
        g_free(h);
        strata_cli_result_clear(&r);
    }
    g_free(json);
    g_free(same_json);
    g_free(trace_before);
    g_free(hw_before);
    inputs_clear(&in);
}
END_TEST

START_TEST(bad_numbers_name_their_parameter)
{
    job_inputs in = inputs_make();
    const char *dir = in.dir, *hw = in.hw, *trace = in.trace;
    char *exp = g_build_filename(dir, "exp.ini", NULL);
    char *text = g_strdup_printf("[experiment]\nname = x\nhardware = %s\ntrace = %s\n", hw, trace);
    ck_assert(g_file_set_contents(exp, text, -1, NULL));
    char *out = g_build_filename(dir, "out", NULL);
    char *json = g_build_filename(dir, "out.json", NULL);
    const struct {
        const char *argv[12];
        const char *needle;
    } cases[] = {
        {{"sweep", exp, "--out", out, "--point", "-1", NULL}, "--point"},
        {{"sweep", exp, "--out", out, "--jobs", "0", NULL}, "--jobs"},
        {{"sweep", exp, "--out", out, "--shard", "2/2", NULL}, "--shard"},
        {{"sweep", exp, "--out", out, "--list-jobs", "--format", "yaml", NULL}, "--format"},
        /* format-tour allocates in hbm and host only */
        {{"alloc", "--trace", trace, "--allocator", "bfc", "--capacity", "1GiB", "--memory", "vram", "--json", json,
          NULL},
         "--memory vram"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        strata_cli_result r = strata_test_run_cli(cases[i].argv);
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, cases[i].needle), "case %zu: %s", i, r.err);
        ck_assert_msg(!g_file_test(out, G_FILE_TEST_EXISTS) && !g_file_test(json, G_FILE_TEST_EXISTS),
                      "case %zu wrote output", i);
        strata_cli_result_clear(&r);
    }
    char *stray = stray_besides_inputs(dir);
    ck_assert_msg(strcmp(stray, "exp.ini ") == 0, "left %s", stray);
    g_free(stray);
    g_free(text);
    g_free(exp);
    g_free(out);
    g_free(json);
    inputs_clear(&in);
}
END_TEST

/* An output's temporary in dir (".out.json.XXXXXX") exists. */
static bool has_temporary(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    bool found = false;
    const char *name;
    while ((name = g_dir_read_name(d)))
        found = found || g_str_has_prefix(name, ".out.json.");
    g_dir_close(d);
    return found;
}

static void ignore_file_size_signal(gpointer limit)
{
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit then fails with EFBIG */
    if (limit) {
        struct rlimit rl = {GPOINTER_TO_UINT(limit), GPOINTER_TO_UINT(limit)};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
}

/* Spawns strata with argv; stdin a pipe left open (*in), stderr a pipe (*err_fd).
 * file_limit > 0 limits the size of any file it writes. */
static GPid spawn_strata(const char *const *argv, int *in, int *err_fd, guint file_limit)
{
    GPtrArray *args = strata_test_binary_argv(argv);
    GPid pid = 0;
    GError *err = NULL;
    ck_assert_msg(g_spawn_async_with_pipes(NULL, (char **)args->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                           ignore_file_size_signal, GUINT_TO_POINTER(file_limit), &pid, in, NULL,
                                           err_fd, &err),
                  "spawn: %s", err ? err->message : "");
    g_ptr_array_free(args, TRUE);
    return pid;
}

/* Waits for pid; returns its exit status (-1: killed) and its stderr in *text. */
static int wait_strata(GPid pid, int err_fd, char **text)
{
    GString *s = g_string_new(NULL);
    char buf[4096];
    ssize_t n;
    while ((n = read(err_fd, buf, sizeof buf)) > 0)
        g_string_append_len(s, buf, n);
    close(err_fd);
    int status = 0;
    ck_assert(waitpid(pid, &status, 0) == pid);
    g_spawn_close_pid(pid);
    *text = g_string_free(s, FALSE);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

START_TEST(interrupt_leaves_no_output)
{
    const int sigs[] = {SIGINT, SIGTERM};
    const char *names[] = {"SIGINT", "SIGTERM"};
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
        char *dir = strata_test_temp_dir();
        char *json = g_build_filename(dir, "out.json", NULL);
        ck_assert(g_file_set_contents(json, "an older good result\n", -1, NULL));
        /* The trace comes from a pipe that stays open: the run is mid-work
         * (its output open, its input not finished) until it is signalled. */
        const char *argv[] = {"run", "--hw", hw, "--trace", "-", "--json", json, NULL};
        int in = -1, err_fd = -1;
        GPid pid = spawn_strata(argv, &in, &err_fd, 0);
        const char head[] = "strata-trace 1\nalloc a 4096\n";
        ck_assert(write(in, head, sizeof head - 1) == (ssize_t)(sizeof head - 1));
        while (!has_temporary(dir))
            g_usleep(1000);
        ck_assert(kill(pid, sigs[i]) == 0);
        char *text = NULL;
        int status = wait_strata(pid, err_fd, &text);
        close(in);
        ck_assert_msg(status == 128 + sigs[i], "%s: exit %d: %s", names[i], status, text);
        ck_assert_msg(strstr(text, "interrupted by") && strstr(text, names[i]), "%s: %s", names[i], text);
        char *stray = stray_files(dir, "out.json"), *now = NULL;
        ck_assert_msg(*stray == '\0', "%s left %s", names[i], stray);
        ck_assert(g_file_get_contents(json, &now, NULL, NULL));
        ck_assert_str_eq(now, "an older good result\n");
        g_free(now);
        g_free(stray);
        g_free(text);
        strata_test_remove_dir(dir);
        g_free(json);
        g_free(dir);
    }
    g_free(hw);
}
END_TEST

START_TEST(failed_write_keeps_the_older_result)
{
    job_inputs in = inputs_make();
    const char *dir = in.dir, *hw = in.hw, *trace = in.trace;
    char *json = g_build_filename(dir, "out.json", NULL);
    char *timeline = g_build_filename(dir, "out.timeline.json", NULL);
    char *out_trace = g_build_filename(dir, "out.trace", NULL);
    ck_assert(g_file_set_contents(json, "an older good result\n", -1, NULL));
    ck_assert(g_file_set_contents(out_trace, "an older good result\n", -1, NULL));
    /* Files may not grow past `limit` bytes: each output below is larger, so
     * its write fails midway (EFBIG), as on a full disk. (run writes its
     * SimGrid platform, a few KiB, first: its limit lets that through.) */
    const struct {
        const char *argv[12];
        const char *path;
        guint limit;
    } cases[] = {
        {{"run", "--hw", hw, "--trace", trace, "--timeline", timeline, NULL}, "out.timeline.json", 6000},
        {{"alloc", "--trace", trace, "--allocator", "bfc", "--capacity", "1GiB", "--json", json, NULL}, "out.json", 256},
        {{"transform", "--trace", trace, "--policy", "donate", "-o", out_trace, NULL}, "out.trace", 256},
        {{"gen", "matmul", "-o", out_trace, NULL}, "out.trace", 256},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        int err_fd = -1;
        GPid pid = spawn_strata(cases[i].argv, NULL, &err_fd, cases[i].limit);
        char *text = NULL;
        int status = wait_strata(pid, err_fd, &text);
        ck_assert_msg(status == 2 || status == 3, "case %zu: exit %d: %s", i, status, text);
        ck_assert_msg(strstr(text, cases[i].path) && strstr(text, "cannot write"), "case %zu: %s", i, text);
        char *j = NULL, *t = NULL;
        ck_assert(g_file_get_contents(json, &j, NULL, NULL) && g_file_get_contents(out_trace, &t, NULL, NULL));
        ck_assert_str_eq(j, "an older good result\n");
        ck_assert_str_eq(t, "an older good result\n");
        ck_assert(!g_file_test(timeline, G_FILE_TEST_EXISTS));
        GDir *d = g_dir_open(dir, 0, NULL);
        const char *name;
        while ((name = g_dir_read_name(d)))
            ck_assert_msg(name[0] != '.', "case %zu left the temporary %s", i, name);
        g_dir_close(d);
        g_free(j);
        g_free(t);
        g_free(text);
    }
    g_free(json);
    g_free(timeline);
    g_free(out_trace);
    inputs_clear(&in);
}
END_TEST

/* Sizes that do not fit in 64 bits are refused naming the parameters that
 * make them, before any output is written. */
START_TEST(generator_sizes_overflow)
{
    io_fixture f = fixture_new();
    const char *scan[] = {"gen", "scan-mlp", "dim=4294967296", "batch=4294967296", "-o", f.out, NULL};
    fails_with(scan, f.dir, NULL, "scan-mlp: batch x dim x 2 bytes overflows 64 bits",
               "(batch=4294967296, dim=4294967296)");
    /* m, n, k = 2^22 in blocks of 1: every size fits, the 2^66 grid steps do not */
    const char *grid[] = {"gen", "matmul", "m=4194304", "n=4194304", "k=4194304", "bm=1", "bn=1", "bk=1", "-o", f.out,
                          NULL};
    fails_with(grid, f.dir, NULL, "matmul: expected at most 100000000 grid steps m/bm x n/bn x k/bk",
               "(m=4194304 bm=1, n=4194304 bn=1, k=4194304 bk=1)");
    /* each tensor fits (2^61 bytes), the 16 weight stacks together do not */
    const char *total[] = {"gen", "scan-mlp", "dim=1073741824", "hidden=1073741824", "batch=1", "layers=8",
                           "dtype=f16", "-o", f.out, NULL};
    fails_with(total, f.dir, NULL, "scan-mlp: 2 x layers x dim x hidden x 2 bytes overflows 64 bits",
               "layers=8, dim=1073741824, hidden=1073741824");
    fixture_free(&f);
}
END_TEST

/* Work is bounded too: a repeat count past STRATA_WORKLOAD_MAX_COUNT, or a
 * grid whose steps would write billions of ops, is refused by name before
 * anything is generated (layers=1e8 used to be killed for memory). */
START_TEST(generator_work_bounded)
{
    io_fixture f = fixture_new();
    const char *gens[][3] = {{"scan-mlp", "layers=100000000", "scan-mlp: expected layers between 1 and 100000 (the graph is held while generating"},
                             {"adam-mlp", "layers=2147483648", "adam-mlp: expected layers between 1 and 16383 (the optimizer step reads every parameter, moment and gradient: 4 x layers + 1 operands, at most 65535), got 2147483648"},
                             {"transformer", "layers=1000000", "transformer: expected layers between 1 and 10000 ("},
                             /* the neighbours: adam-mlp's optimizer step at its 65535-operand limit (crashed
                              * on an assertion at 16384 layers), collective's streamed iters */
                             {"adam-mlp", "layers=16384", "adam-mlp: expected layers between 1 and 16383"},
                             {"collective", "iters=10000000", "collective: expected iters between 1 and 1000000, got 10000000"}};
    for (size_t i = 0; i < G_N_ELEMENTS(gens); i++) {
        const char *argv[] = {"gen", gens[i][0], gens[i][1], "-o", f.out, NULL};
        fails_with(argv, f.dir, NULL, gens[i][2], NULL);
    }
    /* 2^12 x 2^12 x 2^12 blocks: 2^36 grid steps, every size small */
    const char *grid[] = {"gen", "matmul", "m=4096", "n=4096", "k=4096", "bm=1", "bn=1", "bk=1", "-o", f.out, NULL};
    fails_with(grid, f.dir, NULL, "matmul: expected at most 100000000 grid steps", NULL);
    fixture_free(&f);
}
END_TEST

/* Byte counts of 2^63 and above come out as their exact unsigned value:
 * 15 EiB = 15 x 2^60 = 17293822569102704640, 9 EiB = 10376293541461622784. */
START_TEST(json_sizes_above_int64)
{
    io_fixture f = fixture_new();
    char *trace = g_build_filename(f.dir, "big.trace", NULL);
    const char *text = "strata-trace 1\nalloc big 10376293541461622784\nfree big\n";
    ck_assert(g_file_set_contents(trace, text, -1, NULL));
    const char *argv[] = {"alloc", "--trace", trace, "--allocator", "bump", "--capacity", "17293822569102704640",
                          "--json", f.json, NULL};
    strata_cli_result r = strata_test_run_cli(argv);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    char *json = NULL;
    ck_assert(g_file_get_contents(f.json, &json, NULL, NULL));
    ck_assert_msg(strstr(json, "\"capacity_bytes\" : 17293822569102704640,"), "%s", json);
    ck_assert_msg(strstr(json, "\"peak_allocated_bytes\" : 10376293541461622784,"), "%s", json);
    ck_assert_msg(!strstr(json, "u0001"), "%s", json);
    JsonParser *parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
    g_object_unref(parser);
    g_free(json);
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_free(trace);
    fixture_free(&f);
}
END_TEST

/* A planning allocator on a trace whose streams allocate in one memory is
 * refused: stream s1's a (10 ms) and main's b would be live together, yet
 * their program-order lifetimes let the plan give both offset 0. */
START_TEST(planner_refuses_several_streams)
{
    io_fixture f = fixture_new();
    char *trace = g_build_filename(f.dir, "two.trace", NULL);
    const char *text = "strata-trace 1\nalloc a 1MiB stream=s1\ncompute slow time=10ms in=a stream=s1\n"
                       "free a stream=s1\nalloc b 1MiB\ncompute fast time=1ms in=b\nfree b\n";
    ck_assert(g_file_set_contents(trace, text, -1, NULL));
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    const char *argv[] = {"run", "--hw", hw, "--trace", trace, "--allocator", "offline", "--json", f.json, NULL};
    fails_with(argv, f.dir, "two.trace", "two.trace:5: the offline allocator of memory 'hbm'",
               "expected stream 's1', got 'main'");
    g_unlink(trace);
    g_free(trace);
    g_free(hw);
    fixture_free(&f);
}
END_TEST

static Suite *badinput_suite(void)
{
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("matrix");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, bad_traces);
    tcase_add_test(tc, bad_hardware);
    tcase_add_test(tc, bad_pickles);
    tcase_add_test(tc, bad_csv);
    tcase_add_test(tc, bad_experiments);
    tcase_add_test(tc, unwritable_output_fails_before_work);
    tcase_add_test(tc, endless_devices);
    tcase_add_test(tc, endless_stdin);
    tcase_add_test(tc, overlong_lines);
    tcase_add_test(tc, parameters_given_twice);
    tcase_add_test(tc, leading_bom_accepted);
    suite_add_tcase(s, tc);
    TCase *jobs = tcase_create("jobs");
    tcase_set_timeout(jobs, 120);
    tcase_add_test(jobs, empty_policy_is_a_usage_error);
    tcase_add_test(jobs, outputs_that_clobber_inputs_are_refused);
    tcase_add_test(jobs, bad_numbers_name_their_parameter);
    tcase_add_test(jobs, interrupt_leaves_no_output);
    tcase_add_test(jobs, failed_write_keeps_the_older_result);
    suite_add_tcase(s, jobs);
    TCase *sizes = tcase_create("sizes");
    tcase_set_timeout(sizes, 60);
    tcase_add_test(sizes, generator_sizes_overflow);
    tcase_add_test(sizes, generator_work_bounded);
    tcase_add_test(sizes, json_sizes_above_int64);
    tcase_add_test(sizes, planner_refuses_several_streams);
    suite_add_tcase(s, sizes);
    return s;
}

int main(void) { return strata_test_main(badinput_suite()); }
