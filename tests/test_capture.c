/*
 * test_capture.c: the trace writing of `strata capture`, by calling the hooks
 * of capture/capture_trace.h as the LD_PRELOAD interceptors would (no GPU),
 * and the `strata capture` command itself where the library was built.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "capture/capture_trace.h"
#include "testutil.h"
#include "trace/check.h"
#include "trace/reader.h"

/* Reads a trace through the reader and the checker; returns its op count. */
static int64_t check_trace(const char *path)
{
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    strata_checker *c = strata_checker_new(path);
    int64_t n = 0;
    for (;;) {
        const strata_op *op = NULL;
        int r = strata_source_next(src, &op, &err);
        ck_assert_msg(r >= 0, "%s", err ? err->message : "");
        if (r == 0)
            break;
        ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "%s", err ? err->message : "");
        n++;
    }
    strata_checker_free(c);
    strata_source_free(src);
    return n;
}

/* The op lines of a file (comments and the version line dropped). */
static char *op_lines(const char *path)
{
    char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    GString *s = g_string_new(NULL);
    for (char **l = lines; *l; l++)
        if (**l && **l != '#' && strncmp(*l, "strata-trace", 12) != 0)
            g_string_append_printf(s, "%s\n", *l);
    g_strfreev(lines);
    g_free(text);
    return g_string_free(s, FALSE);
}

START_TEST(hooks_write_a_checked_trace)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "cap.trace", NULL);
    GError *err = NULL;
    strata_capture *c = strata_capture_open(path, "unit test", false, &err);
    ck_assert_msg(c != NULL, "%s", err ? err->message : "");
    const uintptr_t S1 = 0x5000, S2 = 0x6000, EV = 0x7000;
    strata_capture_alloc(c, 0x10000, 4096, STRATA_CAPTURE_DEVICE, 0);         /* cudaMalloc */
    strata_capture_alloc(c, 0x20000, 8192, STRATA_CAPTURE_DEVICE, S1);        /* cudaMallocAsync */
    strata_capture_alloc(c, 0x900000, 4096, STRATA_CAPTURE_PINNED, 0);        /* cudaHostAlloc */
    strata_capture_memcpy(c, 0x10000, 0x900000, 4096, STRATA_CAPTURE_H2D, 0); /* whole buffers */
    strata_capture_memcpy(c, 0x20000 + 4096, 0x10000 + 1024, 1024, STRATA_CAPTURE_D2D, S1); /* inside them */
    strata_capture_memcpy(c, 0x20000, 0xdead0000, 512, STRATA_CAPTURE_H2D, S1); /* from malloc'd host memory */
    strata_capture_event_record(c, EV, S1);
    strata_capture_stream_wait(c, S2, EV);
    strata_capture_stream_wait(c, S2, 0x7777); /* never recorded: skipped */
    strata_capture_launch(c, "_Z6kernelPfi", 0x401000, S2);
    strata_capture_launch(c, NULL, 0x401abc, 0);
    strata_capture_stream_sync(c, S1);
    strata_capture_free(c, 0x20000, S1);  /* cudaFreeAsync */
    strata_capture_free(c, 0xbad, 0);     /* unknown: a comment */
    strata_capture_device_sync(c);
    strata_capture_free(c, 0x10000, 0);
    ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS)); /* complete or absent */
    uint64_t n = strata_capture_op_count(c);
    ck_assert_msg(strata_capture_close(c, &err), "%s", err ? err->message : "");
    ck_assert(g_file_test(path, G_FILE_TEST_EXISTS));

    char *ops = op_lines(path);
    const char *expected =
        "alloc d0 4096 hbm\n"
        "alloc d1 8192 hbm stream=s0\n"
        "alloc p0 4096 host\n"
        "copy d0 p0 bytes=4096\n"
        "copy d1 d0 bytes=1024 stream=s0\n"
        "alloc h0 512 pageable stream=s0\n"
        "copy d1 h0 bytes=512 stream=s0\n"
        "free h0 stream=s0\n"
        "record e0 stream=s0\n"
        "wait e0 stream=s1\n"
        "compute _Z6kernelPfi stream=s1\n"
        "compute kernel_401abc\n"
        "record sync0 stream=s0\n"
        "wait sync0\n"
        "free d1 stream=s0\n"
        "record sync1 stream=s0\n"
        "wait sync1\n"
        "record sync2 stream=s1\n"
        "wait sync2\n"
        "free d0\n";
    ck_assert_str_eq(ops, expected);
    ck_assert_uint_eq(n, 20);
    ck_assert_int_eq(check_trace(path), 20);
    char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    ck_assert_msg(strstr(text, "# captured by strata capture (sim/capture): unit test\n"), "%s", text);
    ck_assert_msg(strstr(text, "# wait on an event never recorded (skipped)\n"), "%s", text);
    ck_assert_msg(strstr(text, "# free of a pointer not allocated during the capture (0xbad)\n"), "%s", text);
    g_free(text);
    g_free(ops);
    unlink(path);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(timestamps_and_reuse)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "ts.trace", NULL);
    GError *err = NULL;
    strata_capture *c = strata_capture_open(path, NULL, true, &err);
    ck_assert(c != NULL);
    strata_capture_alloc(c, 0x1000, 256, STRATA_CAPTURE_DEVICE, 0);
    /* the same range allocated again without a free seen: freed first */
    strata_capture_alloc(c, 0x1000, 128, STRATA_CAPTURE_DEVICE, 0);
    strata_capture_memcpy(c, 0x1000, 0x1000, 0, STRATA_CAPTURE_D2D, 0); /* 0 bytes: a comment */
    ck_assert(strata_capture_close(c, &err));
    char *ops = op_lines(path);
    char **lines = g_strsplit(ops, "\n", -1);
    ck_assert_uint_eq(g_strv_length(lines), 4); /* 3 ops and the empty tail */
    ck_assert(g_str_has_prefix(lines[0], "alloc d0 256 hbm at="));
    ck_assert(g_str_has_prefix(lines[1], "free d0 at="));
    ck_assert(g_str_has_prefix(lines[2], "alloc d1 128 hbm at="));
    ck_assert(g_str_has_suffix(lines[2], "us"));
    ck_assert_int_eq(check_trace(path), 3);
    g_strfreev(lines);
    g_free(ops);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(unwritable_output)
{
    GError *err = NULL;
    strata_capture *c = strata_capture_open("/nonexistent-dir/x.trace", NULL, false, &err);
    ck_assert(c == NULL);
    ck_assert_msg(strstr(err->message, "/nonexistent-dir/x.trace"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

START_TEST(many_streams_and_buffers)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "mt.trace", NULL);
    strata_capture *c = strata_capture_open(path, NULL, false, NULL);
    ck_assert(c != NULL);
    enum { N = 200 };
    for (uintptr_t i = 0; i < N; i++)
        strata_capture_alloc(c, 0x100000 + i * 0x1000, 0x1000, STRATA_CAPTURE_DEVICE, i % 3);
    for (uintptr_t i = 0; i < N; i++)
        strata_capture_free(c, 0x100000 + i * 0x1000, i % 3);
    ck_assert(strata_capture_close(c, NULL));
    ck_assert_int_eq(check_trace(path), 2 * N);
    g_free(path);
    g_free(dir);
}
END_TEST

/* The handle -> stub table for CUDA 13 launches (__cudaGetKernel). */
START_TEST(kernel_handles)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "kh.trace", NULL);
    strata_capture *c = strata_capture_open(path, NULL, false, NULL);
    ck_assert(c != NULL);
    ck_assert_uint_eq(strata_capture_kernel_func(c, 0xa000), 0); /* never given */
    strata_capture_kernel_handle(c, 0xa000, 0x401000);
    strata_capture_kernel_handle(c, 0xb000, 0x402000);
    ck_assert_uint_eq(strata_capture_kernel_func(c, 0xa000), 0x401000);
    ck_assert_uint_eq(strata_capture_kernel_func(c, 0xb000), 0x402000);
    strata_capture_kernel_handle(c, 0xa000, 0x403000); /* asked again (a module reloaded): replaced */
    ck_assert_uint_eq(strata_capture_kernel_func(c, 0xa000), 0x403000);
    ck_assert_uint_eq(strata_capture_kernel_func(c, 0x401000), 0); /* a stub is not a handle */
    ck_assert_uint_eq(strata_capture_op_count(c), 0);              /* writes nothing */
    ck_assert(strata_capture_close(c, NULL));
    ck_assert_int_eq(check_trace(path), 0);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(cli_capture)
{
    strata_cli_result r = strata_test_cli("capture", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "no program to run"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("capture", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "--output") && strstr(r.out, "--lib") && strstr(r.out, "LD_PRELOAD") != NULL,
                  "%s", r.out);
    strata_cli_result_clear(&r);

    char *dir = strata_test_temp_dir();
    char *out = g_build_filename(dir, "true.trace", NULL);
    char *lib = g_build_filename(STRATA_BUILD_DIR, "libstrata_capture.so", NULL);
    r = strata_test_cli("capture", "-o", out, "--", "/bin/true", NULL);
    if (!g_file_test(lib, G_FILE_TEST_EXISTS)) {
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "libstrata_capture.so"), "%s", r.err);
        printf("SKIP: libstrata_capture.so not built (no CUDA toolkit): 'strata capture' exits 2\n");
    } else {
        /* a program without CUDA calls: the library loads, records nothing, writes an empty trace */
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.err, "0 ops captured from /bin/true"), "%s", r.err);
        ck_assert_int_eq(check_trace(out), 0);
        strata_cli_result_clear(&r);
        r = strata_test_cli("capture", "-o", "/nonexistent-dir/t.trace", "--", "/bin/true", NULL);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "/nonexistent-dir/t.trace"), "%s", r.err);
        strata_cli_result_clear(&r);
        r = strata_test_cli("capture", "-o", out, "--", "/bin/false", NULL);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "exited with status 1"), "%s", r.err);
    }
    strata_cli_result_clear(&r);
    g_free(lib);
    g_free(out);
    g_free(dir);
}
END_TEST

/* Captures the built helper program `name` (NULL, printing SKIP, where the
 * toolkit did not build it) and checks its trace: it ran, printed `done`,
 * and n_ops ops passed the checker. Returns the op lines without their at=
 * times; the program's standard output in *stdout_text (g_free). */
static char *capture_ops(const char *name, const char *done, int n_ops, char **stdout_text)
{
    char *demo = g_build_filename(STRATA_BUILD_DIR, name, NULL);
    if (!g_file_test(demo, G_FILE_TEST_IS_EXECUTABLE)) {
        printf("SKIP: %s not built (no CUDA toolkit)\n", name);
        g_free(demo);
        return NULL;
    }
    char *dir = strata_test_temp_dir();
    char *out = g_build_filename(dir, "demo.trace", NULL);
    strata_cli_result r = strata_test_cli("capture", "-o", out, "--", demo, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, done), "%s", r.out);
    ck_assert_int_eq(check_trace(out), n_ops);
    char *ops = op_lines(out);
    GRegex *at = g_regex_new(" at=[0-9]+us", 0, 0, NULL);
    char *plain = g_regex_replace_literal(at, ops, -1, 0, "", 0, NULL);
    if (stdout_text)
        *stdout_text = g_strdup(r.out);
    g_regex_unref(at);
    g_free(ops);
    strata_cli_result_clear(&r);
    g_free(out);
    g_free(dir);
    g_free(demo);
    return plain;
}

/* The real interceptors, on a program linked to a stand-in CUDA runtime
 * (tests/helpers/fake_cudart.c, capture_demo.c; built with the toolkit). */
START_TEST(cli_capture_interceptors)
{
    char *demo_out = NULL;
    char *plain = capture_ops("strata_capture_demo", "capture_demo done", 27, &demo_out);
    if (!plain)
        return;
    /* the handle the demo launched without __cudaGetKernel: named by its address */
    const char *unknown = strstr(demo_out, "unknown handle ");
    ck_assert_msg(unknown != NULL, "%s", demo_out);
    char *unknown_name = g_strndup(unknown + 15, strcspn(unknown + 15, "\n"));
    ck_assert_msg(g_str_has_prefix(unknown_name, "kernel_"), "%s", unknown_name);
    /* Streams by first use: s2 (cudaMallocAsync) is s0, s1 (first copy) is s1.
     * One compute line per launch call of the demo, however the stand-in
     * runtime's entry points call each other (cudaLaunchKernelExC ->
     * cudaLaunchKernel -> __cudaLaunchKernel, ...): 7 launches. */
    char *expected = g_strdup_printf(
        "alloc d0 1048576 hbm\n"                   /* cudaMalloc */
        "alloc p0 65536 host\n"                    /* cudaHostAlloc */
        "alloc d1 65536 hbm stream=s0\n"           /* cudaMallocAsync on the second stream */
        "alloc h0 4096 pageable\n"                 /* cudaMemcpy from malloc'd memory */
        "copy d0 h0 bytes=4096\n"
        "free h0\n"
        "copy d0 p0 bytes=65536 stream=s1\n"       /* cudaMemcpyAsync */
        "record e0 stream=s1\n"                    /* cudaEventRecord */
        "wait e0 stream=s0\n"                      /* cudaStreamWaitEvent */
        "compute strata_demo_kernel stream=s0\n"   /* cudaLaunchKernel, named by its symbol */
        "compute strata_demo_kernel13 stream=s1\n" /* __cudaLaunchKernel: the handle's stub, by __cudaGetKernel */
        "compute strata_demo_kernel13 stream=s0\n" /* the same handle again */
        "compute _Z13hidden_kernelv\n"             /* __cudaLaunchKernel_ptsz, NULL stream; an unexported
                                                      stub, named by cudaFuncGetName from its registration */
        "compute %s stream=s1\n"                   /* __cudaLaunchKernel of a handle never seen made */
        "compute strata_demo_kernel stream=s0\n"   /* cudaLaunchKernelExC: config.stream */
        "compute strata_demo_kernel13 stream=s1\n" /* cudaLaunchKernel_ptsz */
        "copy d1 d0 bytes=65536 stream=s0\n"
        "copy p0 d1 bytes=65536 stream=s0\n"
        "record sync0 stream=s0\n"                 /* cudaStreamSynchronize */
        "wait sync0\n"
        "free d1 stream=s0\n"                      /* cudaFreeAsync (its nested cudaFree not recorded) */
        "record sync1 stream=s0\n"                 /* cudaDeviceSynchronize */
        "wait sync1\n"
        "record sync2 stream=s1\n"
        "wait sync2\n"
        "free d0\n"
        "free p0\n",
        unknown_name);
    ck_assert_str_eq(plain, expected);
    g_free(expected);
    g_free(unknown_name);
    g_free(plain);
    g_free(demo_out);
}
END_TEST

/* The interceptors under a program nvcc compiled (capture_demo_nvcc.cu), so
 * that the launches are the toolkit's own generated code: with CUDA 13,
 * __cudaGetKernel once per kernel, then __cudaLaunchKernel per launch. */
START_TEST(cli_capture_nvcc_launches)
{
    char *plain = capture_ops("strata_capture_demo_nvcc", "capture_demo_nvcc done", 7, NULL);
    if (!plain)
        return;
    /* The program's calls in order; its stream (the first non-NULL one) is
     * s0. The kernels are named by the runtime's cudaFuncGetName from nvcc's
     * __cudaRegisterFunction (the executable exports no symbols): demo_fill
     * has C linkage, demo_scale(float *, int, float) mangles to
     * _Z10demo_scalePfif. Three <<<...>>>: three compute lines. */
    const char *expected =
        "alloc d0 256 hbm\n" /* cudaMalloc, 64 floats */
        "compute demo_fill\n"
        "compute _Z10demo_scalePfif stream=s0\n"
        "compute _Z10demo_scalePfif stream=s0\n" /* the cached handle, launched again */
        "record sync0 stream=s0\n"               /* cudaStreamSynchronize */
        "wait sync0\n"
        "free d0\n";
    ck_assert_str_eq(plain, expected);
    g_free(plain);
}
END_TEST

static Suite *capture_suite(void)
{
    Suite *s = suite_create("capture");
    TCase *tc = tcase_create("hooks");
    tcase_add_test(tc, hooks_write_a_checked_trace);
    tcase_add_test(tc, timestamps_and_reuse);
    tcase_add_test(tc, unwritable_output);
    tcase_add_test(tc, many_streams_and_buffers);
    tcase_add_test(tc, kernel_handles);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_add_test(tc, cli_capture);
    tcase_add_test(tc, cli_capture_interceptors);
    tcase_add_test(tc, cli_capture_nvcc_launches);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(capture_suite());
}
