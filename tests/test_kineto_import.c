/*
 * test_kineto_import.c: `strata import kineto` on a hand-made profiler trace
 * whose figures are derived below by hand, on bad input, and on the real
 * traces in ../shared/data/kineto (skipped with a message when absent).
 */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "hw/hw.h"
#include "import/jax_profile.h"
#include "import/kineto.h"
#include "validate/kineto_validate.h"
#include "testutil.h"
#include "validate/fidelity.h"

#define MiB (UINT64_C(1) << 20)

/* Device 0 starts the window with 20 MiB reserved and 2 MiB allocated (the
 * first event allocates 1 MiB and brings Total Allocated to 3 MiB). A host
 * event and a kernel of device 1 are skipped. A free of an address never
 * allocated (512 KiB) is a block from before the window: pre.0, so the
 * rest allocated before is 2 MiB - 512 KiB = 1.5 MiB (pre.rest). A 30 MiB
 * alloc grows Total Reserved to 50 MiB, the file's maximum. */
static const char hand_trace[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"x\"}],\n"
    "\"traceEvents\": [\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1000,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":4096,\"Bytes\":1048576,\"Total Allocated\":3145728,\"Total Reserved\":20971520}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1010,\"args\":{\"Device Type\":0,\"Device Id\":-1,"
    "\"Addr\":77,\"Bytes\":8,\"Total Allocated\":8,\"Total Reserved\":0}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"void at::native::(anonymous namespace)::foo<float>"
    "(int, float)\",\"ts\":1020,\"dur\":3.5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":42}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"ts\":1030,"
    "\"dur\":10,\"args\":{\"device\":0,\"stream\":7,\"correlation\":43,\"bytes\":4096}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1040,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":999,\"Bytes\":-524288,\"Total Allocated\":2621440,\"Total Reserved\":20971520}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1050,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":8192,\"Bytes\":31457280,\"Total Allocated\":34078720,\"Total Reserved\":52428800}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"ts\":1060,\"dur\":1,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":44,\"bytes\":128}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1070,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":4096,\"Bytes\":-1048576,\"Total Allocated\":33030144,\"Total Reserved\":52428800}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"ts\":1080,\"dur\":2,"
    "\"args\":{\"device\":1,\"stream\":7}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1090,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":8192,\"Bytes\":-31457280,\"Total Allocated\":1572864,\"Total Reserved\":52428800}}\n"
    "], \"traceName\": \"hand\"}\n";

/* The setup (kineto.h): b0 (1 MiB) leaves Total Reserved at 20 MiB, so it
 * came from the cache; the caching model makes a 2 MiB small-pool segment
 * for it (c10/cuda/CUDACachingAllocator.cpp: requests up to 1 MiB,
 * kSmallSize, take 2 MiB segments, kSmallBuffer): inferred cached, made as
 * two 1 MiB halves. b1 raised Total Reserved (20 -> 50 MiB): the real
 * allocator made its segment, nothing inferred. Room: 20 MiB reserved less
 * 2 MiB live = 18 MiB; pre.seg holds the other 20 - 2 = 18 MiB. The
 * device end of the copies comes first, the whole of a segment of its own:
 * 4 KiB rounded up to kRoundLarge (2 MiB), at least kMinLargeAlloc (10
 * MiB): 10 MiB (kineto.c, staging_device_size). */
static const char hand_expected[] =
    "alloc xfer.hbm.dst 10MiB hbm note=setup\n"
    "alloc pre.cache.0 1MiB note=setup\n"
    "alloc pre.cache.0b 1MiB note=setup\n"
    "alloc pre.seg 18MiB note=setup\n"
    "free pre.seg note=setup\n"
    "free pre.cache.0 note=setup\n"
    "free pre.cache.0b note=setup\n"
    "alloc pre.0 512KiB note=setup\n"
    "alloc pre.rest 1536KiB note=setup\n"
    "alloc xfer.pageable.src 4KiB pageable note=setup\n"
    "alloc b0 1MiB addr=0x1000 at=0\n"
    "compute at::native::anon::foo time=3.5us stream=s7 at=20us note=corr.42\n"
    "copy xfer.hbm.dst xfer.pageable.src bytes=4KiB stream=s7 at=30us note=corr.43\n"
    "free pre.0 at=40us\n"
    "alloc b1 30MiB addr=0x2000 at=50us\n"
    "compute memset time=1us stream=s7 at=60us note=corr.44\n"
    "free b0 at=70us\n"
    "free b1 at=90us\n";

/* Imports path with the default options into *s; the source, asserted. */
static strata_source *import_default(const char *path, strata_kineto_summary *s)
{
    strata_kineto_options opt;
    strata_kineto_options_init(&opt);
    GError *err = NULL;
    strata_source *src = strata_kineto_import(path, &opt, s, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    return src;
}

START_TEST(hand_trace_summary)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", hand_trace);
    strata_kineto_summary s;
    GError *err = NULL;
    strata_source *src = import_default(path, &s);
    ck_assert_uint_eq(s.n_events, 10);
    ck_assert_int_eq(s.device, 0);
    ck_assert_int_eq(s.device_type, 1);
    ck_assert_uint_eq(s.n_memory, 5);
    ck_assert_uint_eq(s.n_memory_other, 1);
    ck_assert_uint_eq(s.n_allocs, 2);
    ck_assert_uint_eq(s.n_frees, 3);
    ck_assert_uint_eq(s.n_kernels, 1);
    ck_assert_uint_eq(s.n_memsets, 1);
    ck_assert_uint_eq(s.n_memcpys, 1);
    ck_assert(s.has_addr && s.has_totals);
    ck_assert_uint_eq(s.initial_reserved, 20 * MiB);
    ck_assert_uint_eq(s.initial_allocated, 2 * MiB);
    ck_assert_uint_eq(s.peak_reserved, 50 * MiB);
    ck_assert_uint_eq(s.final_reserved, 50 * MiB);
    ck_assert_uint_eq(s.peak_allocated, 32 * MiB + 512 * 1024);
    ck_assert_uint_eq(s.n_pre_blocks, 1);
    ck_assert_uint_eq(s.pre_bytes, 512 * 1024);
    ck_assert_uint_eq(s.pre_rest, 1536 * 1024);
    ck_assert_uint_eq(s.n_setup_ops, 10);
    ck_assert_uint_eq(s.n_inferred_segments, 1);
    ck_assert_uint_eq(s.inferred_bytes, 2 * MiB);
    ck_assert_uint_eq(s.n_inferred_left, 0);
    /* read twice: the source streams the file again from the start */
    for (int pass = 0; pass < 2; pass++) {
        const strata_op *op;
        int n = 0, rc;
        while ((rc = strata_source_next(src, &op, &err)) == 1)
            n++;
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(n, 18);
        ck_assert(strata_source_rewind(src, &err));
    }
    strata_source_free(src);

    /* Caching model by hand: the inferred 2 MiB small segment and pre.seg
     * (18 MiB) are cached; pre.0 (512 KiB) takes the small one, pre.rest
     * (1.5 MiB) splits pre.seg; b0 (1 MiB) fits the small one's 1.5 MiB
     * left; b1 (30 MiB) fits nowhere: a new 30 MiB segment. Peak 2 + 18 +
     * 30 = 50 MiB, the file's. (Before the inference pre.seg was the whole
     * 20 MiB, large pool: pre.0 made a 2 MiB small segment of its own and
     * the peak was 52 MiB, +4%.) */
    strata_torch_fidelity f;
    ck_assert_msg(strata_kineto_measure(path, &s, "caching", 0, &f, &err), "%s",
                  err ? err->message : "");
    ck_assert_uint_eq(f.real_peak_reserved, 50 * MiB);
    ck_assert_uint_eq(f.model_peak_reserved, 50 * MiB);
    ck_assert(!f.oom);
    g_unlink(path);
    g_free(path);
}
END_TEST

START_TEST(hand_trace_text)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", hand_trace);
    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    const char *body = strstr(r.out, "\nalloc xfer.hbm.dst ");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body + 1, hand_expected);
    ck_assert_ptr_nonnull(strstr(r.err, "peak Total Reserved 52428800 (50.00 MiB)"));
    strata_cli_result_clear(&r);

    /* gzip gives the same trace */
    char *gz = g_strconcat(path, ".gz", NULL);
    char *cmd = g_strdup_printf("gzip -c '%s' > '%s'", path, gz);
    ck_assert_int_eq(system(cmd), 0);
    r = strata_test_cli("import", "kineto", gz, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(strstr(r.out, "\nalloc xfer.hbm.dst ") + 1, hand_expected);
    strata_cli_result_clear(&r);

    /* --device 1: only its kernel (no memory events: no setup) */
    r = strata_test_cli("import", "kineto", path, "--device", "1", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\ncompute k1 time=2us stream=s7 at=80us\n"));
    ck_assert_ptr_null(strstr(r.out, "\nalloc "));
    strata_cli_result_clear(&r);
    g_unlink(gz);
    g_unlink(path);
    g_free(cmd);
    g_free(gz);
    g_free(path);
}
END_TEST

/* validate --against of the Kineto file at path on the source tree's
 * hardware file hw (relative to the tree), which must succeed. */
static void validate_on(const char *path, const char *hw, strata_kineto_validation *v)
{
    char *hw_path = strata_test_source_path(hw);
    GError *err = NULL;
    strata_hw *model = strata_hw_load(hw_path, NULL, &err);
    ck_assert_msg(model != NULL, "%s", err ? err->message : "");
    ck_assert_msg(strata_kineto_validate(path, STRATA_KINETO_DEVICE_AUTO, model, v, &err), "%s",
                  err ? err->message : "");
    strata_hw_free(model);
    g_free(hw_path);
}

/* validate --against on h100.ini. The one memcpy (4 KiB, pageable to hbm,
 * measured 10 us) crosses staging (the CPU copy: 153.6 GB/s, 5 us, a 2 MiB
 * buffer) and pcie (Gen5 x16 at 256 B: 51.977 GB/s, test_pcie.c; 2 us): the
 * route alone takes 7 us + 4096 B / 51.977 GB/s, and the staging pipeline
 * (hw/staging.h, one chunk) adds the CPU copy of that chunk, 4096 B /
 * 153.6 GB/s: 7.10547 us, error -28.95%. Reserved: the device end of the
 * copy is a 10 MiB segment of its own, taken off; the setup holds 18 MiB +
 * the inferred 2 MiB small segment (pre.0 and b0 fit in it), so the model
 * less the 10 MiB is 20, 20, 50, 50, 50 MiB, the file's: |error| 0 (before
 * the inference: 22, 22, 52, 52, 52 MiB, mean 6.4%, max 10%). */
START_TEST(hand_trace_validate)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", hand_trace);
    strata_kineto_validation v;
    validate_on(path, "configs/hw/h100.ini", &v);
    ck_assert(!v.oom);
    ck_assert_uint_eq(v.n_copies, 1);
    const strata_kineto_dir_error *d = &v.dir[STRATA_KINETO_HTOD];
    ck_assert_uint_eq(d->n, 1);
    ck_assert_double_eq_tol(d->measured_s, 10e-6, 1e-12);
    const double pcie = 8e9 * 16 * 128.0 / 130.0 / 8 * (1 - 16.0 / 168 - 4.0 / 1538) * 256.0 / 280.0 * 4;
    const double sim = 7e-6 + 4096 / pcie + 4096 / 153.6e9;
    ck_assert_double_eq_tol(d->simulated_s, sim, 1e-10);
    ck_assert_double_eq_tol(d->median_error, (sim - 10e-6) / 10e-6, 1e-5);
    ck_assert(v.has_reserved);
    ck_assert_uint_eq(v.n_reserved_points, 5);
    ck_assert_uint_eq(v.real_peak_reserved, 50 * MiB);
    ck_assert_uint_eq(v.sim_peak_reserved, 50 * MiB);
    ck_assert_uint_eq(v.staging_reserved, 10 * MiB);
    ck_assert_double_eq_tol(v.reserved_mean_error, 0, 1e-9);
    ck_assert_double_eq_tol(v.reserved_max_error, 0, 1e-9);
    ck_assert_ptr_nonnull(strstr(v.table, "| HtoD | pageable | <64KiB | 1 | 10.0 us | 7.1 us | -28.9% | -28.9% |"));
    strata_kineto_validation_clear(&v);

    /* the CLI prints the same table; without --hw it is a usage error */
    char *hw_path = strata_test_source_path("configs/hw/h100.ini");
    strata_cli_result r = strata_test_cli("validate", "--against", path, "--hw", hw_path, NULL);
    g_free(hw_path);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "|error| mean 0.00%, max 0.00%"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("validate", "--against", path, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--against needs --hw"));
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* The H200 failure (PyTorch 2.11.0, torch.profiler profile_memory=True:
 * x.to("cuda") from pinned memory, a kernel, y.to("cpu") into pageable
 * memory, 256 MiB tensors; validate --against said the reserved peak was
 * +48.48%, |error| up to 100%), in small: 32 MiB tensors, torch 2.11's
 * fields ("finished", "Ev Idx", a host event of Device Type 0 with Total
 * Reserved 0, baseTimeNanoseconds). w (32 MiB) is live before the window;
 * g (32 MiB) takes Total Reserved to 64 MiB, y (32 MiB) to 96 MiB; both
 * freed, g again in y's block (96 MiB stays). The file: 64, 96, 96, 96, 96
 * MiB. The copies (HtoD into g, DtoH from y) moved tensors those events
 * count (aten/src/ATen/native/cuda/Copy.cu, copy_kernel_cuda:
 * cudaMemcpyAsync on the tensors' pointers, no device temporary).
 *
 * Setup: the first event's Total Reserved (64 MiB) is taken as the
 * start's, so g is inferred cached (a 32 MiB segment) and pre.seg holds
 * the other 32 MiB, where pre.rest (w) goes. Before: the staging buffers
 * xfer.hbm.src and xfer.hbm.dst (32 MiB each) found no room and made two
 * 32 MiB segments: 128, 160, 160, 160, 160 MiB; peak 160 MiB (+66.67%),
 * |error| 100% at the first point (128 against 64), mean (1 + 4 x 2/3) / 5
 * = 73.33%. Now the two are the setup's first allocs, each a 32 MiB
 * segment of its own (32 MiB: a multiple of 2 MiB, at least 10 MiB), 64
 * MiB taken off: 64, 96, 96, 96, 96 MiB, the file's. */
static const char h200_copies_trace[] =
    "{\"schemaVersion\": 1, \"baseTimeNanoseconds\": 1790857026000000000, \"traceEvents\": [\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"ts\":1000,\"args\":{\"Total Reserved\":"
    "67108864,\"Total Allocated\":67108864,\"Bytes\":33554432,\"Device Id\":0,\"Device Type\":1,\"Addr\":"
    "139637976727552,\"finished\":false,\"Ev Idx\":1}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"ts\":1100,\"args\":{\"Total Reserved\":"
    "100663296,\"Total Allocated\":100663296,\"Bytes\":33554432,\"Device Id\":0,\"Device Type\":1,\"Addr\":"
    "139638010281984,\"finished\":false,\"Ev Idx\":2}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"ts\":1150,\"args\":{\"Total Reserved\":0,"
    "\"Total Allocated\":33554432,\"Bytes\":33554432,\"Device Id\":-1,\"Device Type\":0,\"Addr\":20480,"
    "\"finished\":false,\"Ev Idx\":3}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"ts\":21400,\"args\":{\"Total Reserved\":"
    "100663296,\"Total Allocated\":67108864,\"Bytes\":-33554432,\"Device Id\":0,\"Device Type\":1,\"Addr\":"
    "139637976727552,\"finished\":false,\"Ev Idx\":4}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"ts\":21410,\"args\":{\"Total Reserved\":"
    "100663296,\"Total Allocated\":33554432,\"Bytes\":-33554432,\"Device Id\":0,\"Device Type\":1,\"Addr\":"
    "139638010281984,\"finished\":false,\"Ev Idx\":5}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"ts\":21500,\"args\":{\"Total Reserved\":"
    "100663296,\"Total Allocated\":67108864,\"Bytes\":33554432,\"Device Id\":0,\"Device Type\":1,\"Addr\":"
    "139638010281984,\"finished\":false,\"Ev Idx\":6}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"ts\":1010,\"dur\":1000,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":19,\"bytes\":33554432}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"ts\":1200,\"dur\":10,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":20}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoH (Device -> Pageable)\",\"ts\":1300,\"dur\":20000,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":21,\"bytes\":33554432}}\n"
    "]}\n";

START_TEST(copies_device_ends_not_reserved)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", h200_copies_trace);
    strata_kineto_validation v;
    validate_on(path, "configs/hw/h200.ini", &v);
    ck_assert(!v.oom);
    ck_assert_uint_eq(v.sum.n_memory, 5);
    ck_assert_uint_eq(v.sum.n_memory_other, 1); /* the host's, Device Type 0 */
    ck_assert_uint_eq(v.sum.initial_reserved, 64 * MiB);
    ck_assert_uint_eq(v.sum.initial_allocated, 32 * MiB);
    ck_assert_uint_eq(v.sum.n_inferred_segments, 1);
    ck_assert_uint_eq(v.sum.n_staging_device, 2);
    ck_assert_uint_eq(v.sum.staging_device_bytes, 64 * MiB);
    ck_assert_uint_eq(v.n_copies, 2);
    ck_assert(v.has_reserved);
    ck_assert_uint_eq(v.n_reserved_points, 5);
    ck_assert_uint_eq(v.real_peak_reserved, 96 * MiB);
    ck_assert_uint_eq(v.staging_reserved, 64 * MiB);
    ck_assert_uint_eq(v.sim_peak_reserved, 96 * MiB); /* 160 MiB before */
    ck_assert_double_eq_tol(v.reserved_mean_error, 0, 1e-9); /* 73.33% before */
    ck_assert_double_eq_tol(v.reserved_max_error, 0, 1e-9);  /* 100% before */
    strata_kineto_validation_clear(&v);

    /* the trace's setup: the device ends first, whole segments */
    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\nalloc xfer.hbm.src 32MiB hbm note=setup\n"
                                        "alloc xfer.hbm.dst 32MiB hbm note=setup\n"
                                        "alloc pre.cache.0 32MiB note=setup\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\n# the copies' device ends, each a segment of its own: 2 (67108864 bytes, "
                                        "xfer.hbm.*), not in the real run: a replay's reserved bytes include them\n"));
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* A training step's [memory] events thread by thread (the H200 run: torch
 * 2.11's profiler appends each CPU thread's events in turn,
 * torch/csrc/profiler/collection.cpp RecordQueue::getRecords; the backward
 * runs on the autograd engine's thread). In ts order: f (32 MiB, thread 1)
 * at 100, h (32 MiB, thread 1) at 200, f freed by thread 2 (the backward)
 * at 300, k (32 MiB, thread 1) at 400 in f's block; nothing live before,
 * Total Reserved 64 MiB throughout (Total Allocated 32, 64, 32, 64 MiB).
 * The file: thread 2's free first, then thread 1's three allocs.
 *
 * Before (file order): the free of f came first, so f was a block from
 * before the window (pre.0; allocated at the start: 32 + 32 = 64 MiB, the
 * whole 64 MiB of pre.seg with pre.rest 32 MiB); f's alloc then took
 * pre.0's room and h and k each a new 32 MiB segment: 64, 64, 96, 128 MiB,
 * peak 128 MiB (+100%), |error| 0, 0, 50%, 100%: mean 37.5%.
 * Now (ts order): nothing live at the start; the caching model makes a 32
 * MiB segment for f and one for h (k reuses f's block), both inferred
 * cached (64 MiB, the whole start): 64 MiB at every point, the file's. */
static const char threads_trace[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":2,\"ts\":300,"
    "\"args\":{\"Total Reserved\":67108864,\"Total Allocated\":33554432,\"Bytes\":-33554432,\"Device Id\":0,"
    "\"Device Type\":1,\"Addr\":139637976727552,\"Ev Idx\":1}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":100,"
    "\"args\":{\"Total Reserved\":67108864,\"Total Allocated\":33554432,\"Bytes\":33554432,\"Device Id\":0,"
    "\"Device Type\":1,\"Addr\":139637976727552,\"Ev Idx\":2}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":200,"
    "\"args\":{\"Total Reserved\":67108864,\"Total Allocated\":67108864,\"Bytes\":33554432,\"Device Id\":0,"
    "\"Device Type\":1,\"Addr\":139638010281984,\"Ev Idx\":3}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":400,"
    "\"args\":{\"Total Reserved\":67108864,\"Total Allocated\":67108864,\"Bytes\":33554432,\"Device Id\":0,"
    "\"Device Type\":1,\"Addr\":139637976727552,\"Ev Idx\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"ts\":150,\"dur\":10,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}}\n"
    "]}\n";

START_TEST(memory_events_in_ts_order)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", threads_trace);
    strata_kineto_validation v;
    validate_on(path, "configs/hw/h200.ini", &v);
    ck_assert(!v.oom);
    ck_assert(v.sum.memory_by_ts);
    ck_assert_uint_eq(v.sum.n_memory_out_of_order, 2); /* f's and h's allocs, after the free at 300 */
    ck_assert_uint_eq(v.sum.initial_reserved, 64 * MiB);
    ck_assert_uint_eq(v.sum.initial_allocated, 0); /* 64 MiB before */
    ck_assert_uint_eq(v.sum.n_pre_blocks, 0);      /* 1 before */
    ck_assert_uint_eq(v.sum.n_inferred_segments, 2);
    ck_assert_uint_eq(v.sum.inferred_bytes, 64 * MiB);
    ck_assert(v.has_reserved);
    ck_assert_uint_eq(v.n_reserved_points, 4);
    ck_assert_uint_eq(v.real_peak_reserved, 64 * MiB);
    ck_assert_uint_eq(v.sim_peak_reserved, 64 * MiB);        /* 128 MiB before */
    ck_assert_double_eq_tol(v.reserved_mean_error, 0, 1e-9); /* 37.5% before */
    ck_assert_double_eq_tol(v.reserved_max_error, 0, 1e-9);  /* 100% before */
    strata_kineto_validation_clear(&v);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* Issue 46: `validate --against` read a Kineto trace with one args.hlo_op
 * (a PyTorch/XLA op, or any annotation carrying one) as a JAX profile and
 * refused it. The sniff now decides on what only Kineto writes: events
 * with a `cat` and `[memory]` events, which TSL's writer never has. The
 * hand trace with such an event validates as the Kineto trace it is (the
 * table of hand_trace_validate); the JAX corpus's profiles stay JAX
 * profiles (test_jax_corpus). */
START_TEST(kineto_with_an_hlo_op_is_kineto)
{
    char *text = g_strdup(hand_trace);
    const char *head = "\"traceEvents\": [\n";
    char *at = strstr(text, head);
    ck_assert_ptr_nonnull(at);
    at += strlen(head);
    char *with = g_strdup_printf("%.*s%s%s", (int)(at - text), text,
                                 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"xla::fusion\",\"pid\":1,\"tid\":1,"
                                 "\"ts\":1001,\"dur\":2,\"args\":{\"hlo_op\":\"fusion.1\"}},\n",
                                 at);
    char *path = strata_test_write_temp("kineto-hlo-XXXXXX.json", with);
    ck_assert(!strata_jax_profile_sniff(path));
    char *hw_path = strata_test_source_path("configs/hw/h100.ini");
    strata_cli_result r = strata_test_cli("validate", "--against", path, "--hw", hw_path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "|error| mean 0.00%, max 0.00%"));
    strata_cli_result_clear(&r);
    /* the [memory] events alone say Kineto too (they carry no cat here) */
    char *no_cat = g_strdup(with);
    for (char *c = strstr(no_cat, "\"cat\":"); c; c = strstr(c, "\"cat\":"))
        memcpy(c, "\"cut\":", 6);
    char *path2 = strata_test_write_temp("kineto-hlo-XXXXXX.json", no_cat);
    ck_assert(!strata_jax_profile_sniff(path2));
    g_unlink(path);
    g_unlink(path2);
    g_free(path);
    g_free(path2);
    g_free(no_cat);
    g_free(hw_path);
    g_free(with);
    g_free(text);
}
END_TEST

/* The old format: no Addr, no totals; a free takes the newest live alloc of
 * its size, and a free of a size with none live is a block from before. */
START_TEST(old_format_matches_by_size)
{
    static const char old[] =
        "{\"traceEvents\": [\n"
        "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":5,\"args\":{\"Device Type\":1,\"Device Id\":0,"
        "\"Bytes\":512}},\n"
        "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":6,\"args\":{\"Device Type\":1,\"Device Id\":0,"
        "\"Bytes\":512}},\n"
        "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"volta_sgemm\",\"ts\":7,\"dur\":2,"
        "\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},\n"
        "{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"Memcpy DtoH (Device -> Pinned)\",\"ts\":8,"
        "\"dur\":2,\"args\":{\"device\":0,\"stream\":7,\"correlation\":2,\"bytes\":64}},\n"
        "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":9,\"args\":{\"Device Type\":1,\"Device Id\":0,"
        "\"Bytes\":-512}},\n"
        "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":10,\"args\":{\"Device Type\":1,\"Device Id\":0,"
        "\"Bytes\":-1024}}\n"
        "]}\n";
    static const char old_expected[] =
        "\nalloc xfer.hbm.src 10MiB hbm note=setup\n"
        "alloc pre.0 1KiB note=setup\n"
        "alloc xfer.host.dst 64 host note=setup\n"
        "alloc b0 512 at=0\nalloc b1 512 at=1us\n"
        "compute volta_sgemm time=2us stream=s7 at=2us note=corr.1\n"
        "copy xfer.host.dst xfer.hbm.src bytes=64 stream=s7 at=3us "
        "note=corr.2\nfree b1 at=4us\nfree pre.0 at=5us\n";
    char *path = strata_test_write_temp("kineto-XXXXXX.json", old);
    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, old_expected));
    ck_assert_ptr_nonnull(strstr(r.err, "no Total Reserved in the file"));
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* Issue 29, a trace whose Total Reserved never moves (24 MiB throughout):
 * a (15 MiB), s1 and s2 (1 MiB each), s3 (600 KiB), then a freed. No
 * alloc raised Total Reserved, so all came from segments cached before the
 * window. The caching model from empty (c10/cuda/CUDACachingAllocator.cpp
 * get_allocation_size) makes a 16 MiB segment for a (>= 10 MiB: rounded
 * to 2 MiB), a 2 MiB small segment for s1 (s2 fills it) and another for
 * s3: 20 MiB inferred, and the 4 MiB left are two 2 MiB small segments
 * (no large segment is under 10 MiB). Replayed: 24 MiB, the file's. The
 * setup of before (one 24 MiB large segment) left the small requests
 * nothing: s1/s2 and s3 made two 2 MiB segments, 28 MiB (+16.7%). */
static const char cached_trace[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1000,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":1048576000,\"Bytes\":15728640,\"Total Allocated\":15728640,\"Total Reserved\":25165824}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1010,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":2097152000,\"Bytes\":1048576,\"Total Allocated\":16777216,\"Total Reserved\":25165824}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1020,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":2098200576,\"Bytes\":1048576,\"Total Allocated\":17825792,\"Total Reserved\":25165824}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1030,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":3145728000,\"Bytes\":614400,\"Total Allocated\":18440192,\"Total Reserved\":25165824}},\n"
    "{\"ph\":\"i\",\"name\":\"[memory]\",\"ts\":1040,\"args\":{\"Device Type\":1,\"Device Id\":0,"
    "\"Addr\":1048576000,\"Bytes\":-15728640,\"Total Allocated\":2711552,\"Total Reserved\":25165824}}\n"
    "]}\n";

START_TEST(cached_segments_inferred)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", cached_trace);
    strata_kineto_summary s;
    GError *err = NULL;
    strata_source_free(import_default(path, &s));
    ck_assert_uint_eq(s.initial_reserved, 24 * MiB);
    ck_assert_uint_eq(s.peak_reserved, 24 * MiB);
    ck_assert_uint_eq(s.n_inferred_segments, 3);
    ck_assert_uint_eq(s.inferred_bytes, 20 * MiB);
    ck_assert_uint_eq(s.n_inferred_left, 0);
    strata_torch_fidelity f;
    ck_assert_msg(strata_kineto_measure(path, &s, "caching", 0, &f, &err), "%s",
                  err ? err->message : "");
    ck_assert_uint_eq(f.model_peak_reserved, 24 * MiB);
    ck_assert_uint_eq(f.model_final_reserved, 24 * MiB);
    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\nalloc pre.cache.0 16MiB note=setup\n"
                                        "alloc pre.cache.1 1MiB note=setup\n"
                                        "alloc pre.cache.1b 1MiB note=setup\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\nalloc pre.small.1b 1MiB note=setup\n"));
    ck_assert_ptr_null(strstr(r.out, "pre.seg"));
    ck_assert_msg(strstr(r.err, "inferred: 3 cached segments (20.00 MiB) at the start") != NULL, "%s",
                  r.err);
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(path);
}
END_TEST

typedef struct bad_case {
    const char *text;
    const char *message;
} bad_case;

static const bad_case bad_cases[] = {
    {"", "empty file"},
    {"{\"a\": [1, 2], \"b\": {\"traceEvents\": []}}", "no traceEvents array"},
    {"\"text\"", "expected a JSON object or array"},
    {"{\"traceEvents\": [1]}", "not an object"},
    {"{\"traceEvents\": [{\"name\":\"a\"},\n{\"name\":", ":2: the file ends inside traceEvents"},
    {"{\"traceEvents\": [\n{\"name\":\"[memory]\",\"args\":{\"Device Type\":1,\"Device Id\":0}}]}",
     ":2: [memory] event: expected args.Bytes"},
    {"{\"traceEvents\": [\n\n{\"name\":\"[memory]\"}]}", ":3: [memory] event: expected an args"},
    {"{\"traceEvents\": [{\"cat\":\"kernel\",\"ts\":1,\"args\":{\"device\":0,\"stream\":7}}]}",
     "kernel event: expected dur"},
    {"{\"traceEvents\": [{\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy\",\"ts\":1,\"dur\":1,"
     "\"args\":{\"device\":0,\"stream\":7,\"bytes\":4}}]}",
     "memcpy event: expected a name like"},
    {"{\"traceEvents\": [{\"a\": tru}]}", "not a JSON event"},
    {"{\"traceEvents\": [{\"name\":\"x\"}]}", "no GPU events"},
    /* issue 30: sizes of 2^63 and more are refused, never wrapped into a
     * free (json-glib would read 2^63 as -2^63 and 2^64 as 0 or -1) */
#define MEM_EVENT(BYTES, TOTALS) \
    "{\"traceEvents\": [\n{\"name\":\"[memory]\",\"ts\":1,\"args\":{\"Device Type\":1,\"Device Id\":0," \
    "\"Addr\":4096,\"Bytes\":" BYTES TOTALS "}}]}"
    {MEM_EVENT("9223372036854775808", ""), ":2: [memory] event: expected args.Bytes (a whole number of bytes, of magnitude below 2^63)"},
    {MEM_EVENT("18446744073709551616", ""), ":2: [memory] event: expected args.Bytes"},
    {MEM_EVENT("1e30", ""), ":2: [memory] event: expected args.Bytes"},
    {MEM_EVENT("-9223372036854775808", ""), ":2: [memory] event: expected args.Bytes"},
    {MEM_EVENT("-99999999999999999999", ""), ":2: [memory] event: expected args.Bytes"},
    {MEM_EVENT("4096", ",\"Total Allocated\":9223372036854775808,\"Total Reserved\":0"),
     ":2: [memory] event: expected args.\"Total Reserved\" and \"Total Allocated\""},
    {"{\"traceEvents\": [\n{\"name\":\"[memory]\",\"ts\":1,\"args\":{\"Device Type\":1,\"Device Id\":0,"
     "\"Addr\":18446744073709551615,\"Bytes\":4096}}]}", ":2: [memory] event: expected args.Addr"},
    /* the product: Total Allocated before the window = Total Allocated +
     * the bytes a first-event free gives back, past 2^63 */
    {MEM_EVENT("-9223372036854775807", ",\"Total Allocated\":4096,\"Total Reserved\":0"),
     "expected less than 2^63 bytes"},
    {"{\"traceEvents\": [{\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD\",\"ts\":1,\"dur\":1,"
     "\"args\":{\"device\":0,\"stream\":7,\"bytes\":9223372036854775808}}]}",
     "memcpy event: expected args.bytes (0 or more, below 2^63)"},
    /* ROCm (rocm_copy_bytes_from_runtime): a malformed size on the HIP
     * runtime copy, a memcpy without bytes or a correlation, and a GPU
     * bytes that is a string stay errors */
#define HIP_COPY(ARGS) \
    "{\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Host -> Device)\",\"ts\":2,\"dur\":1," \
    "\"args\":{\"device\":0,\"stream\":0" ARGS "}}"
    {"{\"traceEvents\": [\n" HIP_COPY("") "]}",
     ":2: memcpy event: expected args.bytes (0 or more, below 2^63), or args.correlation"},
    {"{\"traceEvents\": [\n" HIP_COPY(",\"correlation\":5,\"bytes\":\"2560\"") "]}",
     ":2: memcpy event: expected args.bytes (0 or more, below 2^63)"},
    {"{\"traceEvents\": [\n{\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpyWithStream\",\"ts\":1,\"dur\":1,"
     "\"args\":{\"correlation\":5,\"size\":\"25x\"}},\n" HIP_COPY(",\"correlation\":5") "]}",
     ":2: HIP runtime copy event: expected args.size (0 or more bytes below 2^63, a number or a decimal string)"},
    {"{\"traceEvents\": [\n{\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpy\",\"ts\":1,\"dur\":1,"
     "\"args\":{\"correlation\":5,\"bytes\":-1}},\n" HIP_COPY(",\"correlation\":5") "]}",
     ":2: HIP runtime copy event: expected args.bytes"},
};

START_TEST(bad_input_exits_2)
{
    const bad_case *c = &bad_cases[_i];
    char *path = strata_test_write_temp("kineto-bad-XXXXXX.json", c->text);
    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, c->message) && strstr(r.err, path), "case %d: %s", _i, r.err);
    ck_assert_str_eq(r.out, "");
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* A real gzip file cut short: the decompressor's error, exit 2. */
START_TEST(truncated_gzip_exits_2)
{
    char *real = strata_test_shared_path("kineto/h100-bert-small-inference.json.gz");
    if (real == NULL)
        return;
    gchar *data = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(real, &data, &len, NULL));
    char *dir = strata_test_temp_dir();
    char *cut = g_build_filename(dir, "cut.json.gz", NULL);
    ck_assert(g_file_set_contents(cut, data, (gssize)(len / 2), NULL));
    strata_cli_result r = strata_test_cli("import", "kineto", cut, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, cut));
    strata_cli_result_clear(&r);
    g_unlink(cut);
    g_rmdir(dir);
    g_free(cut);
    g_free(dir);
    g_free(data);
    g_free(real);
}
END_TEST

/* ---- ROCm: memcpy bytes on the HIP runtime call ------------------------- */

/* tests/data/kineto-fresh/mi250-rocm6.2-minitoy-train.json.gz (HTA's test
 * trace, MIT; README beside it): PyTorch on ROCm 6.2. Its two gpu_memcpy
 * events (lines 815 and 859, correlations 117 and 123, device 2, stream 0)
 * have no args.bytes; the hipMemcpyWithStream runtime events of those
 * correlations (lines 584 and 650) have "size": "2560" (read by eye with
 * zcat). The earliest ts of the file is 4203669603018.756 us (the
 * profiler's span, line 1359); the copies start at 4203669603454.206 and
 * 4203669604095.010: at= 435.450 us and 1076.254 us (python json:
 * 435.4502, 1076.2539; the ns figure is the double's rounding). Kernels: 14 events of cat
 * kernel, all on device 2; no [memory] events. Before this change the
 * import stopped at line 814 ("memcpy event: expected args.bytes"), exit 2. */
START_TEST(rocm_copy_bytes_from_runtime)
{
    char *path = strata_test_source_path("tests/data/kineto-fresh/mi250-rocm6.2-minitoy-train.json.gz");
    strata_kineto_summary s;
    strata_source_free(import_default(path, &s));
    ck_assert_int_eq(s.device, 2);
    ck_assert_int_eq(s.device_type, 6); /* no [memory] events: the HIP runtime says so */
    ck_assert_uint_eq(s.n_memory, 0);
    ck_assert_uint_eq(s.n_kernels, 14);
    ck_assert_uint_eq(s.n_memcpys, 2);
    ck_assert_uint_eq(s.n_memcpy_bytes_on_runtime, 2);
    ck_assert_uint_eq(s.n_memcpy_empty, 0);

    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\nalloc xfer.hbm.dst 10MiB hbm note=setup\n"
                                        "alloc xfer.host.src 2560 host note=setup\n"
                                        "copy xfer.hbm.dst xfer.host.src bytes=2560 stream=s0 at=435.45us note=corr.117\n"));
    ck_assert_ptr_nonnull(
        strstr(r.out, "\ncopy xfer.hbm.dst xfer.host.src bytes=2560 stream=s0 at=1076254ns note=corr.123\n"));
    ck_assert_ptr_nonnull(strstr(r.err, "device 2 (HIP)"));
    ck_assert_ptr_nonnull(strstr(r.err, "note: 2 memcpys without args.bytes"));
    ck_assert_ptr_nonnull(strstr(r.err, "no [memory] events for this device"));
    strata_cli_result_clear(&r);
    g_free(path);
}
END_TEST

/* The runtime copy may come after its memcpy in the file: the first pass
 * sizes the copy once the file is read. Memcpy (corr 9, line 2) at ts 10,
 * its hipMemcpyAsync (bytes as a number, the newer rocprofiler-sdk form) at
 * line 3; the kernel at ts 0 is the first event: copy at=10us, 4096 bytes,
 * Device -> Device (DtoD): hbm to hbm. validate --against reads the same
 * bytes (one memcpy measured). */
static const char rocm_late_runtime[] =
    "{\"traceEvents\": [\n"
    "{\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"ts\":10,\"dur\":2,"
    "\"args\":{\"device\":0,\"stream\":3,\"correlation\":9,\"kind\":\"DtoD\"}},\n"
    "{\"cat\":\"cuda_runtime\",\"name\":\"hipMemcpyAsync\",\"ts\":5,\"dur\":1,"
    "\"args\":{\"cid\":1,\"correlation\":9,\"bytes\":4096,\"kind\":3}},\n"
    "{\"cat\":\"kernel\",\"name\":\"k\",\"ts\":0,\"dur\":1,\"args\":{\"device\":0,\"stream\":3}},\n"
    "{\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy DtoD (Device -> Device)\",\"ts\":20,\"dur\":4.119,"
    "\"args\":{\"device\":0,\"stream\":3,\"correlation\":4082,\"kind\":\"DtoD\"}}\n"
    "]}\n";

START_TEST(rocm_runtime_after_its_copy)
{
    char *path = strata_test_write_temp("kineto-rocm-XXXXXX.json", rocm_late_runtime);
    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\ncopy xfer.hbm.dst xfer.hbm.src bytes=4KiB stream=s3 at=10us note=corr.9\n"));
    /* corr 4082 has no runtime copy in the file (as in TraceLens's
     * mi300/resnet_act_checkpoint.json.gz, line 305149): its measured
     * time, no bytes, a note */
    ck_assert_ptr_nonnull(strstr(r.out, "\ncompute memcpy.DtoD time=4119ns stream=s3 at=20us note=corr.4082\n"));
    ck_assert_ptr_nonnull(strstr(r.err, "note: 1 memcpys without args.bytes and without a HIP runtime copy"));
    strata_cli_result_clear(&r);

    strata_kineto_validation v;
    validate_on(path, "configs/hw/h100.ini", &v);
    ck_assert_ptr_nonnull(strstr(v.table, "1 memcpys"));
    strata_kineto_validation_clear(&v);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* ROCm roctracer's device numbering (kineto.c, rocm_agents):
 * tests/data/kineto-fresh/mi300-bert-small-excerpt.json, 8 events of
 * TraceLens's MI300 bert-small trace. [memory] on HIP device 0 (Device
 * Type 6), kernels and the copy on device 2. Before: device 0 imported
 * with 4 memory events and 0 kernels, the kernels silently left out.
 * By hand from the file: the first ts is the first [memory] event's,
 * 2204338330197.718; kernel 1 at 330237.582 (39.864 us, dur 3.086),
 * kernel 2 at 330266.448 (68.730 us), b1 at 330246.656 (48.938 us), the
 * DtoD copy (1 byte, corr 810) at 330536.067 (338.349 us). Live before:
 * Total Allocated 57950720 at the first alloc less its 144384 bytes =
 * 57806336 (pre.rest). */
START_TEST(rocm_agent_numbering)
{
    char *path = strata_test_source_path("tests/data/kineto-fresh/mi300-bert-small-excerpt.json");
    strata_kineto_summary s;
    strata_source_free(import_default(path, &s));
    ck_assert_int_eq(s.device, 0);
    ck_assert_int_eq(s.activity_device, 2);
    ck_assert_int_eq(s.device_type, 6);
    ck_assert_uint_eq(s.n_memory, 4);
    ck_assert_uint_eq(s.n_kernels, 2);
    ck_assert_uint_eq(s.n_memcpys, 1);
    ck_assert_uint_eq(s.initial_allocated, UINT64_C(57806336));
    ck_assert_uint_eq(s.peak_reserved, UINT64_C(224395264));

    strata_cli_result r = strata_test_cli("import", "kineto", path, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\nalloc pre.rest 57806336 note=setup\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\ncompute at::native::anon::indexSelectLargeIndex time=3086ns stream=s0 "
                                        "at=39864ns note=corr.802\nalloc b1 141KiB addr=0x7f03bddc4200 at=48938ns\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "\ncopy xfer.hbm.dst xfer.hbm.src bytes=1 stream=s0 at=338349ns note=corr.810\n"));
    ck_assert_ptr_nonnull(strstr(r.err, "note: the kernels and copies are those of device 2"));
    strata_cli_result_clear(&r);
    /* the agent's id is no device of its own any more */
    r = strata_test_cli("import", "kineto", path, "--device", "2", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no GPU events of that device"));
    strata_cli_result_clear(&r);
    g_free(path);
}
END_TEST

/* Not merged: CUDA [memory] events (Device Type 1) with kernels on another
 * device are two GPUs, as before; and a HIP device that has both [memory]
 * events and kernels is numbered one way already. */
START_TEST(rocm_agent_numbering_only_when_split)
{
    static const char cuda[] =
        "{\"traceEvents\": [\n"
        "{\"name\":\"[memory]\",\"ts\":0,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":4096,"
        "\"Bytes\":512,\"Total Allocated\":512,\"Total Reserved\":2097152}},\n"
        "{\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{\"device\":2,\"stream\":7}}\n"
        "]}\n";
    static const char hip_both[] =
        "{\"traceEvents\": [\n"
        "{\"name\":\"[memory]\",\"ts\":0,\"args\":{\"Device Type\":6,\"Device Id\":0,\"Addr\":4096,"
        "\"Bytes\":512,\"Total Allocated\":512,\"Total Reserved\":2097152}},\n"
        "{\"cat\":\"kernel\",\"name\":\"k0\",\"ts\":1,\"dur\":1,\"args\":{\"device\":0,\"stream\":7}},\n"
        "{\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1,\"args\":{\"device\":2,\"stream\":7}}\n"
        "]}\n";
    const char *texts[] = {cuda, hip_both};
    const uint64_t kernels[] = {0, 1};
    for (int i = 0; i < 2; i++) {
        char *path = strata_test_write_temp("kineto-agents-XXXXXX.json", texts[i]);
        strata_kineto_summary s;
        strata_source_free(import_default(path, &s));
        ck_assert_int_eq(s.device, 0);
        ck_assert_int_eq(s.activity_device, 0);
        ck_assert_uint_eq(s.n_kernels, kernels[i]);
        g_unlink(path);
        g_free(path);
    }
}
END_TEST

/* ---- the real traces in ../shared/data/kineto ----------------------------- */

typedef struct real_trace {
    const char *name;
    uint64_t max_total_reserved; /* the file's, by a separate reader (python json) */
} real_trace;

static const real_trace real_traces[] = {
    {"h100-bert-small-inference.json.gz", UINT64_C(121634816)},
    {"h100-owlv2-inference.json.gz", UINT64_C(3600809984)},
    {"hta-v100-2rank-train.json.gz", UINT64_C(12782141440)},
    {"v100-resnet50-train-oldformat.json.gz", 0},
    /* issue 29: Total Reserved never moves (4.27 GiB); AMD-AGI/TraceLens
     * @171dd74, tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz
     * (MIT); skipped until it is in ../shared/data/kineto */
    {"h100-timesformer-inference.json.gz", UINT64_C(4588568576)},
};

START_TEST(real_traces_import_and_replay)
{
    const real_trace *t = &real_traces[_i];
    char *rel = g_build_filename("kineto", t->name, NULL);
    char *path = strata_test_slow_data_path(rel);
    g_free(rel);
    if (path == NULL)
        return;
    strata_kineto_summary s;
    GError *err = NULL;
    strata_source_free(import_default(path, &s));
    ck_assert_uint_eq(s.peak_reserved, t->max_total_reserved);
    ck_assert(s.has_totals == (t->max_total_reserved > 0));
    if (!s.has_totals) {
        printf("%s: no Total Reserved: no replay to compare\n", t->name);
        g_free(path);
        return;
    }
    strata_torch_fidelity f;
    ck_assert_msg(strata_kineto_measure(path, &s, "caching", 0, &f, &err), "%s",
                  err ? err->message : "");
    printf("| %s | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT " | %" G_GUINT64_FORMAT
           " | %+.2f%% |\n",
           t->name, s.n_events, s.peak_reserved, f.model_peak_reserved, 100 * f.peak_error);
    ck_assert(!f.oom);
    ck_assert_msg(fabs(f.peak_error) <= 0.05, "%s: replay peak reserved off by %.2f%%", t->name,
                  100 * f.peak_error);
    g_free(path);
}
END_TEST

/* The bytes read show on a terminal only (core/progress.h). */
START_TEST(progress_only_on_a_terminal)
{
    char *path = strata_test_write_temp("kineto-XXXXXX.json", hand_trace);
    const char *argv[] = {"import", "kineto", path, NULL};
    strata_test_progress_only_on_tty(argv, "import kineto: [");
    g_unlink(path);
    g_free(path);
}
END_TEST

int main(void)
{
    const struct {
        const TTest *test;
        int n; /* loop over 0..n-1 */
    } tests[] = {
        {hand_trace_summary, 1},
        {hand_trace_text, 1},
        {hand_trace_validate, 1},
        {copies_device_ends_not_reserved, 1},
        {memory_events_in_ts_order, 1},
        {kineto_with_an_hlo_op_is_kineto, 1},
        {old_format_matches_by_size, 1},
        {cached_segments_inferred, 1},
        {bad_input_exits_2, G_N_ELEMENTS(bad_cases)},
        {truncated_gzip_exits_2, 1},
        {rocm_copy_bytes_from_runtime, 1},
        {rocm_runtime_after_its_copy, 1},
        {rocm_agent_numbering, 1},
        {rocm_agent_numbering_only_when_split, 1},
        {progress_only_on_a_terminal, 1},
        {real_traces_import_and_replay, G_N_ELEMENTS(real_traces)},
    };
    Suite *s = suite_create("kineto_import");
    TCase *tc = tcase_create("kineto_import");
    tcase_set_timeout(tc, 300);
    for (size_t i = 0; i < G_N_ELEMENTS(tests); i++)
        tcase_add_loop_test(tc, tests[i].test, 0, tests[i].n);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
