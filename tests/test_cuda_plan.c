/*
 * test_cuda_plan.c: the CUDA backend's host-side logic, from a trace to the
 * plan of CUDA calls (backend/cuda_plan.h), without a GPU; then its GPU path,
 * skipped with "SKIP: no CUDA device" where there is none.
 */
#include <string.h>
#include "backend/backend.h"
#include "backend/cuda_backend.h"
#include "backend/cuda_plan.h"
#include "backend/plan.h"
#include "core/error.h"
#include "testutil.h"
#include "trace/reader.h"

static const char *HW_TEXT =
    "[hardware]\nname = gpu\nsource = test\n\n"
    "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1000GB/s\nlatency = 100ns\n\n"
    "[memory host]\nkind = host\ncapacity = 1GiB\nbandwidth = 50GB/s\nlatency = 100ns\n\n"
    "[memory pageable]\nkind = host\npageable = true\ncapacity = 1GiB\nbandwidth = 50GB/s\nlatency = 100ns\n\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 25GB/s\nlatency = 1us\n\n"
    "[link pcie_pageable]\nbetween = pageable hbm\nbandwidth = 10GB/s\nlatency = 1us\n\n"
    "[compute gpu]\nflops = 100TFLOP/s\noperands = hbm\n";

static const char *TRACE =
    "strata-trace 1\n"
    "alloc x 1MiB host\n"                         /* op 0 */
    "alloc p 4096 pageable\n"                     /* op 1 */
    "alloc a 1MiB\n"                              /* op 2 */
    "alloc b 256KiB stream=s1\n"                  /* op 3 */
    "copy a x\n"                                  /* op 4: H2D */
    "record ready\n"                              /* op 5: record 0 */
    "wait ready stream=s1\n"                      /* op 6 */
    "compute mm flops=2e9 dtype=f32 in=a out=b stream=s1\n" /* op 7: FP32, the FMA kernel */
    "copy p b bytes=4096 stream=s1\n"             /* op 8: D2H to pageable */
    "compute idle time=5us\n"                     /* op 9 */
    "free b stream=s1\n"                          /* op 10 */
    "free a\n";                                   /* op 11 */

static strata_plan *make_plan(const char *trace_text, strata_hw **hw_out)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(HW_TEXT, "gpu.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    char *path = strata_test_write_temp("cuda-XXXXXX.trace", trace_text);
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    strata_plan *p = strata_plan_build(hw, src, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    strata_source_free(src);
    g_free(path);
    *hw_out = hw;
    return p;
}

/* The plan as text, one call a line. */
static char *plan_text(const strata_cuda_plan *cp)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < cp->n_calls; i++) {
        char *t = strata_cuda_call_to_text(cp, &cp->calls[i]);
        g_string_append_printf(s, "%s\n", t);
        g_free(t);
    }
    return g_string_free(s, FALSE);
}

/* A trace's plan in arena mode, its text checked against expected. */
typedef struct arena_plan {
    strata_hw *hw;
    strata_plan *p;
    strata_cuda_plan *cp;
} arena_plan;

static arena_plan arena_plan_checked(const char *trace, const char *expected)
{
    arena_plan a = {0};
    a.p = make_plan(trace, &a.hw);
    a.cp = strata_cuda_plan_build(a.p, STRATA_CUDA_DEVICE_ARENA);
    char *text = plan_text(a.cp);
    ck_assert_str_eq(text, expected);
    g_free(text);
    return a;
}

static void arena_plan_free(arena_plan *a)
{
    strata_cuda_plan_free(a->cp);
    strata_plan_free(a->p);
    strata_hw_free(a->hw);
}

START_TEST(plan_malloc_mode)
{
    strata_hw *hw = NULL;
    strata_plan *p = make_plan(TRACE, &hw);
    strata_cuda_plan *cp = strata_cuda_plan_build(p, STRATA_CUDA_DEVICE_MALLOC);
    char *text = plan_text(cp);
    const char *expected =
        "cudaStreamCreate stream=0\n"
        "cudaStreamCreate stream=1\n"
        "cudaEventCreate event=0\n"
        "cudaHostAlloc r0 bytes=1048576\n" /* host: pinned, one region for the memory */
        "malloc r1 bytes=4096\n"           /* pageable: malloc */
        "cudaMalloc r2 bytes=1048576\n"    /* a: its own cudaMalloc */
        "cudaMalloc r3 bytes=262144\n"     /* b */
        "nop stream=0 op=0\n"
        "nop stream=0 op=1\n"
        "nop stream=0 op=2\n"
        "nop stream=1 op=3\n"
        "cudaMemcpyAsync H2D dst=r2+0 src=r0+0 bytes=1048576 stream=0 op=4\n"
        "cudaEventRecord event=0 stream=0 op=5\n"
        "cudaStreamWaitEvent event=0 stream=1 op=6\n"
        "launch compute flops=2000000000 bytes=1310720 operands=in:r2+0,out:r3+0 stream=1 op=7\n"
        "cudaMemcpyAsync D2H dst=r1+0 src=r3+0 bytes=4096 stream=1 op=8\n"
        "launch spin time=5e-06s stream=0 op=9\n"
        "nop stream=1 op=10\n"
        "nop stream=0 op=11\n";
    ck_assert_str_eq(text, expected);
    ck_assert_uint_eq(cp->n_setup, 7);
    ck_assert_uint_eq(cp->n_ops, 12);
    ck_assert_uint_eq(cp->n_streams, 2);
    ck_assert_uint_eq(cp->n_events, 1);
    ck_assert_int_eq(cp->regions[0].kind, STRATA_CUDA_REGION_PINNED);
    ck_assert_int_eq(cp->regions[1].kind, STRATA_CUDA_REGION_PAGEABLE);
    ck_assert_int_eq(cp->regions[2].kind, STRATA_CUDA_REGION_DEVICE);
    ck_assert_int_eq(cp->regions[2].buffer, 2);
    g_free(text);
    strata_cuda_plan_free(cp);
    strata_plan_free(p);
    strata_hw_free(hw);
}
END_TEST

START_TEST(plan_arena_mode_uses_strata_allocator)
{
    strata_hw *hw = NULL;
    strata_plan *p = make_plan(TRACE, &hw);
    strata_cuda_plan *cp = strata_cuda_plan_build(p, STRATA_CUDA_DEVICE_ARENA);
    /* one cudaMalloc for hbm, of the extent the allocator needed */
    int device_mallocs = 0;
    uint32_t arena = 0;
    for (size_t i = 0; i < cp->n_setup; i++)
        if (cp->calls[i].kind == STRATA_CUDA_CALL_MALLOC) {
            device_mallocs++;
            arena = cp->calls[i].region;
        }
    ck_assert_int_eq(device_mallocs, 1);
    const strata_plan_memory *hbm = strata_plan_memory_at(p, (uint32_t)strata_hw_memory_index(hw, "hbm"));
    ck_assert_uint_eq(cp->regions[arena].bytes, hbm->extent);
    ck_assert_uint_ge(hbm->extent, 1280 * 1024);
    ck_assert_int_eq(cp->regions[arena].buffer, -1);
    /* the copy into a and the compute's out=b land at the allocator's offsets in the arena */
    const strata_cuda_call *copy = NULL, *launch = NULL;
    for (size_t i = cp->n_setup; i < cp->n_calls; i++) {
        if (cp->calls[i].op == 4)
            copy = &cp->calls[i];
        if (cp->calls[i].op == 7)
            launch = &cp->calls[i];
    }
    ck_assert_ptr_nonnull(copy);
    ck_assert_uint_eq(copy->region, arena);
    ck_assert_uint_eq(copy->offset, strata_plan_buffer_at(p, 2)->offset);
    const strata_cuda_operand *out = &cp->operands[launch->first_operand + 1];
    ck_assert(out->output);
    ck_assert_uint_eq(out->region, arena);
    ck_assert_uint_eq(out->offset, strata_plan_buffer_at(p, 3)->offset);
    ck_assert(out->offset != copy->offset);
    strata_cuda_plan_free(cp);
    strata_plan_free(p);
    strata_hw_free(hw);
}
END_TEST

START_TEST(plan_async_mode_allocates_in_stream_order)
{
    strata_hw *hw = NULL;
    strata_plan *p = make_plan(TRACE, &hw);
    strata_cuda_plan *cp = strata_cuda_plan_build(p, STRATA_CUDA_DEVICE_ASYNC);
    char *text = plan_text(cp);
    ck_assert_msg(strstr(text, "cudaMemPoolSetAttribute ReleaseThreshold=max\n"), "%s", text);
    ck_assert_msg(strstr(text, "cudaMallocAsync r2 bytes=1048576 stream=0 op=2\n"), "%s", text);
    ck_assert_msg(strstr(text, "cudaMallocAsync r3 bytes=262144 stream=1 op=3\n"), "%s", text);
    ck_assert_msg(strstr(text, "cudaFreeAsync r3 stream=1 op=10\n"), "%s", text);
    ck_assert_msg(strstr(text, "cudaFreeAsync r2 stream=0 op=11\n"), "%s", text);
    ck_assert_msg(strstr(text, "cudaMalloc ") == NULL, "no cudaMalloc in async mode: %s", text);
    /* host memory stays pinned/pageable, allocated before timing */
    ck_assert_msg(strstr(text, "cudaHostAlloc r0 bytes=1048576\n"), "%s", text);
    g_free(text);
    strata_cuda_plan_free(cp);
    strata_plan_free(p);
    strata_hw_free(hw);
}
END_TEST

START_TEST(plan_wait_names_the_record_resolved)
{
    strata_hw *hw = NULL;
    strata_plan *p = make_plan("strata-trace 1\nalloc a 4096\nrecord e\nrecord e stream=s\nwait e stream=t\n"
                               "record f stream=t\nwait f\n",
                               &hw);
    strata_cuda_plan *cp = strata_cuda_plan_build(p, STRATA_CUDA_DEVICE_MALLOC);
    ck_assert_uint_eq(cp->n_events, 3); /* one cudaEvent per record */
    const strata_cuda_call *w = &cp->calls[cp->n_setup + 3];
    ck_assert_int_eq(w->kind, STRATA_CUDA_CALL_STREAM_WAIT_EVENT);
    ck_assert_uint_eq(w->event, 1); /* the second record of e, on stream s */
    ck_assert_uint_eq(cp->calls[cp->n_setup + 5].event, 2);
    strata_cuda_plan_free(cp);
    strata_plan_free(p);
    strata_hw_free(hw);
}
END_TEST

START_TEST(plan_copy_directions)
{
    strata_hw *hw = NULL;
    strata_plan *p = make_plan("strata-trace 1\nalloc d 4096\nalloc e 4096\nalloc h 4096 host\nalloc g 4096 pageable\n"
                               "copy d h\ncopy h d\ncopy e d\ncopy g h\ncopy d g\n",
                               &hw);
    strata_cuda_plan *cp = strata_cuda_plan_build(p, STRATA_CUDA_DEVICE_MALLOC);
    strata_cuda_dir want[5] = {STRATA_CUDA_H2D, STRATA_CUDA_D2H, STRATA_CUDA_D2D, STRATA_CUDA_H2H, STRATA_CUDA_H2D};
    int k = 0;
    for (size_t i = cp->n_setup; i < cp->n_calls; i++)
        if (cp->calls[i].kind == STRATA_CUDA_CALL_MEMCPY_ASYNC)
            ck_assert_int_eq(cp->calls[i].dir, want[k++]);
    ck_assert_int_eq(k, 5);
    strata_cuda_plan_free(cp);
    strata_plan_free(p);
    strata_hw_free(hw);
}
END_TEST

START_TEST(mode_names)
{
    strata_cuda_device_mode m;
    ck_assert(strata_cuda_device_mode_from_name("arena", &m) && m == STRATA_CUDA_DEVICE_ARENA);
    ck_assert(strata_cuda_device_mode_from_name("async", &m) && m == STRATA_CUDA_DEVICE_ASYNC);
    ck_assert(strata_cuda_device_mode_from_name("malloc", &m) && m == STRATA_CUDA_DEVICE_MALLOC);
    ck_assert(!strata_cuda_device_mode_from_name("managed", &m));
    ck_assert_str_eq(strata_cuda_device_mode_name(STRATA_CUDA_DEVICE_ASYNC), "async");
}
END_TEST

START_TEST(cli_plan_without_gpu)
{
    char *trace = strata_test_write_temp("cuda-XXXXXX.trace", TRACE);
    char *hw = strata_test_write_temp("cuda-XXXXXX.ini", HW_TEXT);
    strata_cli_result r = strata_test_cli("replay", "--backend", "cuda", "--plan", "--hw", hw, "--trace", trace,
                                          "--device-memory", "arena", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "device memory arena"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "cudaMemcpyAsync D2H"), "%s", r.out);
    strata_cli_result_clear(&r);
    r = strata_test_cli("replay", "--backend", "cuda", "--plan", "--trace", trace, "--device-memory", "managed", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "known modes: malloc, arena, async"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("replay", "--backend", "host", "--plan", "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    g_free(hw);
    g_free(trace);
}
END_TEST

/* kernel=gemm ops in a dtype cuBLAS takes become cublasGemmStridedBatchedEx
 * calls over one scratch region per element family (bf16, f16, f32 for f32
 * and tf32), each as large as its family's largest GEMM's A, B and C:
 *   gemm 128x256x64 bf16 (no dtype: bf16): A 128*256*2 = 65536, B 256*64*2
 *   = 32768, C 128*64*2 = 16384 -> 114688 B, 2*128*256*64 = 4194304 flops;
 *   tf32 2x64x32x16: A 2*64*32*4 = 16384, B 2*32*16*4 = 4096, C 2*64*16*4 =
 *   8192 -> 28672 B; f16 8x8x8: 128 + 128 + 128 -> 256 each (768 B).
 * An f8 gemm (cuBLASLt's) and a gemm with time= keep the FMA kernel and the spin. */
START_TEST(plan_gemm_ops_run_cublas)
{
    const char *trace = "strata-trace 1\n"
                        "alloc w 1MiB\n"
                        "compute g0 kernel=gemm dims=128x256x64 in=w\n"
                        "compute g1 kernel=gemm dims=2x64x32x16 dtype=tf32 stream=s1\n"
                        "compute g2 kernel=gemm dims=8x8x8 dtype=f16\n"
                        "compute g3 kernel=gemm dims=8x8x8 dtype=f8 flops=1024\n"
                        "compute g4 kernel=gemm dims=8x8x8 time=2us\n"
                        "compute e0 kernel=elementwise dims=1024 flops=1024\n"
                        "free w\n";
    const char *expected =
        "cudaStreamCreate stream=0\n"
        "cudaStreamCreate stream=1\n"
        "cudaMalloc r0 bytes=1048576\n"
        "cudaMalloc r1 bytes=114688 (GEMM scratch, bf16 values)\n"
        "cudaMalloc r2 bytes=768 (GEMM scratch, f16 values)\n"
        "cudaMalloc r3 bytes=28672 (GEMM scratch, f32 values)\n"
        "nop stream=0 op=0\n"
        "cublasGemmStridedBatchedEx bf16 batch=1 m=128 k=256 n=64 scratch=r1 stream=0 op=1\n"
        "cublasGemmStridedBatchedEx tf32 batch=2 m=64 k=32 n=16 scratch=r3 stream=1 op=2\n"
        "cublasGemmStridedBatchedEx f16 batch=1 m=8 k=8 n=8 scratch=r2 stream=0 op=3\n"
        "launch compute flops=1024 bytes=0 operands= stream=0 op=4\n"
        "launch spin time=2e-06s stream=0 op=5\n"
        "launch compute flops=1024 bytes=0 operands= stream=0 op=6\n"
        "nop stream=0 op=7\n";
    arena_plan a = arena_plan_checked(trace, expected);
    ck_assert_uint_eq(a.cp->n_setup, 6);
    ck_assert(a.cp->calls[7].flops == 4194304.0);
    strata_cuda_gemm tf = {STRATA_CUDA_GEMM_TF32, 2, 64, 32, 16};
    uint64_t b_at = 0, c_at = 0;
    ck_assert_uint_eq(strata_cuda_gemm_layout(&tf, &b_at, &c_at), 28672);
    ck_assert_uint_eq(b_at, 16384); /* after A */
    ck_assert_uint_eq(c_at, 16384 + 4096);
    strata_cuda_gemm h = {STRATA_CUDA_GEMM_F16, 1, 8, 8, 8};
    ck_assert_uint_eq(strata_cuda_gemm_layout(&h, NULL, NULL), 768);
    arena_plan_free(&a);
}
END_TEST

/* A compute's flops= in a tensor-core dtype (none: bf16) run as square
 * cuBLAS GEMMs after the kernel that touches its operands: 2e9 flops is
 * one 1000^3 GEMM (2 x 10^9); 1.6e12 f16 needs two (one of 8192^3 is
 * 1.0995e12), of side cbrt(4e11) = 7368.06 -> 7368; tf32 1e6 is 80^3
 * (cbrt(5e5) = 79.37 -> 80, a multiple of 8). f32 (the CUDA cores' rate),
 * FP8, kernel=elementwise and time= keep their kernels. Scratch per
 * family: the largest GEMM's three matrices, each rounded to 256 bytes
 * (bf16 1000^2 x 2 = 2,000,000 -> 2,000,128; f16 7368^2 x 2 =
 * 108,573,696, a multiple of 256; f32 80^2 x 4 = 25,600). */
START_TEST(plan_flops_run_as_gemms)
{
    const char *trace = "strata-trace 1\n"
                        "alloc w 1MiB\n"
                        "compute c0 flops=2e9 in=w\n"
                        "compute c1 flops=1.6e12 dtype=f16\n"
                        "compute c2 flops=1e6 dtype=tf32\n"
                        "compute c3 flops=1e6 dtype=f32\n"
                        "compute c4 flops=1e6 dtype=f8\n"
                        "compute c5 kernel=elementwise dims=1024 flops=1024\n"
                        "free w\n";
    const char *expected =
        "cudaStreamCreate stream=0\n"
        "cudaMalloc r0 bytes=1048576\n"
        "cudaMalloc r1 bytes=6000384 (GEMM scratch, bf16 values)\n"
        "cudaMalloc r2 bytes=325724928 (GEMM scratch, f16 values)\n"
        "cudaMalloc r3 bytes=76800 (GEMM scratch, f32 values)\n"
        "nop stream=0 op=0\n"
        "launch compute flops=0 bytes=1048576 operands=in:r0+0 stream=0 op=1\n"
        "cublasGemmStridedBatchedEx bf16 batch=1 m=1000 k=1000 n=1000 scratch=r1 stream=0 op=1\n"
        "launch compute flops=0 bytes=0 operands= stream=0 op=2\n"
        "cublasGemmStridedBatchedEx f16 batch=1 m=7368 k=7368 n=7368 scratch=r2 stream=0 op=2\n"
        "cublasGemmStridedBatchedEx f16 batch=1 m=7368 k=7368 n=7368 scratch=r2 stream=0 op=2\n"
        "launch compute flops=0 bytes=0 operands= stream=0 op=3\n"
        "cublasGemmStridedBatchedEx tf32 batch=1 m=80 k=80 n=80 scratch=r3 stream=0 op=3\n"
        "launch compute flops=1000000 bytes=0 operands= stream=0 op=4\n"
        "launch compute flops=1000000 bytes=0 operands= stream=0 op=5\n"
        "launch compute flops=1024 bytes=0 operands= stream=0 op=6\n"
        "nop stream=0 op=7\n";
    arena_plan a = arena_plan_checked(trace, expected);
    ck_assert(a.cp->calls[7].flops == 2e9);
    ck_assert(a.cp->calls[9].flops == 2.0 * 7368.0 * 7368.0 * 7368.0);
    arena_plan_free(&a);
}
END_TEST

/* The GPU path: a real replay, or the "no CUDA device" error (exit 2). */
START_TEST(gpu_replay_or_skip)
{
    strata_hw *hw = NULL;
    strata_plan *p = make_plan(TRACE, &hw);
    strata_plan_free(p);
    char *path = strata_test_write_temp("cuda-XXXXXX.trace", TRACE);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    const strata_backend *cuda = strata_backend_find("cuda", NULL);
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = 2;
    strata_results *r = NULL;
    if (!cuda->run(hw, src, &opt, &r, &err)) {
        ck_assert_int_eq(err->code, STRATA_ERROR_NO_DEVICE);
        ck_assert_msg(strstr(err->message, "no CUDA device"), "%s", err->message);
        ck_assert_int_eq(strata_exit_for_error(err), 2);
        printf("SKIP: %s\n", err->message);
        g_clear_error(&err);
    } else {
        ck_assert_str_eq(r->producer, "cuda");
        ck_assert_uint_eq(r->spans->len, 12);
        ck_assert(r->makespan_s > 0);
        strata_results_free(r);
    }
    strata_source_free(src);
    g_free(path);
    strata_hw_free(hw);
}
END_TEST

/* The GPU path of a GEMM: cuBLAS runs it, or the test skips. A 4096^3 bf16
 * GEMM is 2 * 4096^3 = 1.374e11 flops: no GPU of 2026 reaches 5 PFLOP/s
 * dense, so it takes more than 27.5 us, and far less than a second. */
START_TEST(gpu_gemm_or_skip)
{
    strata_hw *hw = NULL;
    strata_plan_free(make_plan(TRACE, &hw));
    char *path = strata_test_write_temp("cuda-XXXXXX.trace",
                                        "strata-trace 1\ncompute g kernel=gemm dims=4096x4096x4096 dtype=bf16\n");
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    const strata_backend *cuda = strata_backend_find("cuda", NULL);
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = 3;
    strata_results *r = NULL;
    if (!cuda->run(hw, src, &opt, &r, &err)) {
        ck_assert_msg(err->code == STRATA_ERROR_NO_DEVICE, "%s", err->message);
        printf("SKIP: %s\n", err->message);
        g_clear_error(&err);
    } else {
        ck_assert_uint_eq(r->spans->len, 1);
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, 0);
        double t = sp->end_s - sp->start_s;
        printf("gemm 4096^3 bf16: %.3f us, %.1f TFLOP/s\n", t * 1e6, 2.0 * 4096.0 * 4096.0 * 4096.0 / t / 1e12);
        ck_assert_msg(t > 2.0 * 4096.0 * 4096.0 * 4096.0 / 5e15 && t < 1.0, "%g s", t);
        strata_results_free(r);
    }
    strata_source_free(src);
    g_free(path);
    strata_hw_free(hw);
}
END_TEST

START_TEST(gpu_cli_or_no_device)
{
    char *trace = strata_test_write_temp("cuda-XXXXXX.trace", TRACE);
    strata_cli_result r = strata_test_cli("replay", "--backend", "cuda", "--trace", trace, "--repeats", "1", NULL);
    if (r.status == 2) {
        ck_assert_msg(strstr(r.err, "no CUDA device"), "%s", r.err);
        printf("SKIP: no CUDA device (strata replay --backend cuda exits 2 as it must)\n");
    } else {
        ck_assert_msg(r.status == 0, "%s", r.err);
    }
    strata_cli_result_clear(&r);
    r = strata_test_cli("calibrate", "--backend", "cuda", "--max-size", "1MiB", "-q", NULL);
    if (r.status == 2)
        ck_assert_msg(strstr(r.err, "no CUDA device"), "%s", r.err);
    else {
        ck_assert_msg(r.status == 0 && strstr(r.out, "[link pcie]"), "%s", r.err);
        /* the computes' rates as the replay runs them: cuBLAS GEMMs for
         * flops= with no dtype and bf16/f16/tf32, the FMA kernel for f32;
         * or, without cuBLAS, the kernel's rate and why */
        ck_assert_msg((strstr(r.out, "flops.bf16 = ") && strstr(r.out, "flops.f32 = ")) ||
                          strstr(r.out, "no cuBLAS GEMM measured"),
                      "%s", r.out);
    }
    strata_cli_result_clear(&r);
    g_free(trace);
}
END_TEST

static Suite *cuda_plan_suite(void)
{
    Suite *s = suite_create("cuda_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, plan_malloc_mode);
    tcase_add_test(tc, plan_arena_mode_uses_strata_allocator);
    tcase_add_test(tc, plan_async_mode_allocates_in_stream_order);
    tcase_add_test(tc, plan_wait_names_the_record_resolved);
    tcase_add_test(tc, plan_copy_directions);
    tcase_add_test(tc, mode_names);
    tcase_add_test(tc, cli_plan_without_gpu);
    tcase_add_test(tc, plan_gemm_ops_run_cublas);
    suite_add_tcase(s, tc);
    tc = tcase_create("gpu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, plan_flops_run_as_gemms);
    tcase_add_test(tc, gpu_replay_or_skip);
    tcase_add_test(tc, gpu_cli_or_no_device);
    tcase_add_test(tc, gpu_gemm_or_skip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(cuda_plan_suite());
}
