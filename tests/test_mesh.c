/* test_mesh.c: the device mesh (core/mesh.h) and the checker's rules for
 * collectives, device= and M@D (trace/check.h). */
#include <string.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "core/mesh.h"
#include "spmd/spmd_names.h"
#include "trace/check.h"
#include "trace/reader.h"

START_TEST(mesh_numbers_devices_row_major)
{
    GError *err = NULL;
    strata_mesh *m = strata_mesh_parse("data:4,model:2", &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(strata_mesh_text(m), "data:4,model:2");
    ck_assert_uint_eq(strata_mesh_devices(m), 8);
    ck_assert_uint_eq(strata_mesh_axis_count(m), 2);
    /* Device 3 = (data 1, model 1). */
    ck_assert_uint_eq(strata_mesh_coord(m, 3, 0), 1);
    ck_assert_uint_eq(strata_mesh_coord(m, 3, 1), 1);
    uint32_t data = 0, model = 0, both = 0;
    ck_assert(strata_mesh_axes(m, "data", &data, &err));
    ck_assert(strata_mesh_axes(m, "model", &model, &err));
    ck_assert(strata_mesh_axes(m, "model,data", &both, &err));
    ck_assert_uint_eq(strata_mesh_group_size(m, data), 4);
    ck_assert_uint_eq(strata_mesh_group_size(m, both), 8);
    /* The data group of device 0 is {0, 2, 4, 6}; of device 5, {1, 3, 5, 7}. */
    for (uint32_t r = 0; r < 4; r++) {
        ck_assert_uint_eq(strata_mesh_member(m, data, 0, r), 2 * r);
        ck_assert_uint_eq(strata_mesh_member(m, data, 5, r), 2 * r + 1);
        ck_assert_uint_eq(strata_mesh_rank(m, data, 2 * r + 1), r);
    }
    /* The model group of device 4 is {4, 5}. */
    ck_assert_uint_eq(strata_mesh_member(m, model, 4, 0), 4);
    ck_assert_uint_eq(strata_mesh_member(m, model, 4, 1), 5);
    ck_assert_uint_eq(strata_mesh_rank(m, model, 5), 1);
    /* Over both axes, the rank is the device. */
    for (uint32_t d = 0; d < 8; d++) {
        ck_assert_uint_eq(strata_mesh_rank(m, both, d), d);
        ck_assert_uint_eq(strata_mesh_member(m, both, 3, d), d);
    }
    ck_assert(!strata_mesh_axes(m, "pipe", &data, &err));
    ck_assert(strstr(err->message, "distinct axes of the mesh data:4,model:2, got 'pipe'"));
    g_clear_error(&err);
    ck_assert(!strata_mesh_axes(m, "data,data", &data, &err));
    g_clear_error(&err);
    strata_mesh_free(m);
}
END_TEST

START_TEST(mesh_errors_say_what_was_expected)
{
    static const char *const bad[] = {"", "data", "data:", "data:0", "Data:2", "data:2,data:2", "data:x",
                                      "a:65536,b:65536", "data:4,", "a:1,b:1,c:1,d:1,e:1,f:1,g:1,h:1,i:1"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *err = NULL;
        strata_mesh *m = strata_mesh_parse(bad[i], &err);
        ck_assert_msg(m == NULL, "'%s' parsed", bad[i]);
        ck_assert(strstr(err->message, "expected a mesh such as data:4,model:2"));
        g_error_free(err);
    }
}
END_TEST

/* Checks `body` after a version line; returns the error message or NULL. */
static char *check_text(const char *body, uint32_t devices)
{
    char *text = g_strconcat("strata-trace 1\n", body, NULL);
    char *path = strata_test_write_temp("mesh-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_ptr_nonnull(src);
    strata_checker *c = strata_checker_new("t.trace");
    strata_checker_set_devices(c, devices);
    strata_checker_set_namer(c, &strata_spmd_program_namer); /* a program's rules (memories of a device) */
    const strata_op *op;
    int got;
    while ((got = strata_source_next(src, &op, &err)) == 1 && strata_checker_feed(c, op, NULL, &err))
        ;
    char *msg = err ? g_strdup(err->message) : NULL;
    g_clear_error(&err);
    strata_checker_free(c);
    strata_source_free(src);
    g_unlink(path);
    g_free(path);
    g_free(text);
    return msg;
}

#define CHECK_ERR(body, devices, expected)                                                  \
    do {                                                                                    \
        char *m_ = check_text(body, devices);                                               \
        ck_assert_msg(m_ && strstr(m_, expected), "'%s': got '%s', expected '%s'", body,     \
                      m_ ? m_ : "(accepted)", expected);                                    \
        g_free(m_);                                                                         \
    } while (0)

#define MESH "option mesh=data:4,model:2\nalloc g 64MiB\nalloc o 32MiB\nalloc i 8MiB\n"

/* bytes= on a collective: the bytes it reads of IN (all-reduce: of its
 * buffer), a part of it; over data (4 ranks) an all-gather of 8 MiB of g
 * writes 4 x 8 = 32 MiB of o (all of it), a reduce-scatter of 32 MiB
 * writes 32 / 4 = 8 MiB (all of i); 16 MiB gathered would write 64 MiB
 * into the 32 MiB o; 6 B is no multiple of 4. */
START_TEST(checker_rules_for_collective_bytes)
{
    char *ok = check_text(MESH "all-gather o g bytes=8MiB axis=data\nreduce-scatter i g bytes=32MiB axis=data\n"
                          "all-to-all o g bytes=32MiB axis=data\nall-reduce g bytes=1MiB axis=data\n"
                          "collective-permute i o bytes=8MiB shift=1 axis=model\n", 8);
    ck_assert_ptr_null(ok);
    CHECK_ERR(MESH "all-gather o g bytes=16MiB axis=data\n", 8,
              "t.trace:6: expected bytes= to fit in OUT: 67108864 of its 33554432 bytes, got bytes=16777216");
    CHECK_ERR(MESH "all-reduce i bytes=16MiB axis=data\n", 8,
              "t.trace:6: expected bytes= to fit in the buffer: 16777216 of its 8388608 bytes, got bytes=16777216");
    CHECK_ERR(MESH "collective-permute i o bytes=16MiB shift=1 axis=model\n", 8,
              "t.trace:6: expected bytes= to fit in OUT: 16777216 of its 8388608 bytes, got bytes=16777216");
    CHECK_ERR(MESH "reduce-scatter i g bytes=6 axis=data\n", 8,
              "t.trace:6: expected bytes= divisible by the group size 4 for reduce-scatter over data, got 6");
    CHECK_ERR(MESH "all-to-all o g bytes=6 axis=data\n", 8,
              "t.trace:6: expected a size divisible by the group size 4 for all-to-all over data, got 6");
    CHECK_ERR(MESH "all-reduce g bytes=0 axis=data\n", 8, ":6:20: expected a size above 0, got '0'");
}
END_TEST

START_TEST(checker_rules_for_collectives)
{
    char *ok = check_text(MESH "all-reduce g axis=data\nall-gather o i axis=data\nreduce-scatter i g axis=data,model\n"
                          "all-to-all o o2 axis=data\n", 8);
    ck_assert_str_eq(ok, "t.trace:9: expected a live buffer as IN of all-to-all, got 'o2' (never allocated, or "
                         "already freed)");
    g_free(ok);
    ok = check_text(MESH "all-reduce g axis=data\nall-gather o i axis=data\nreduce-scatter i g axis=data,model\n"
                    "collective-permute o g shift=-1 axis=model\nalloc h 8MiB hbm@7 device=7\n", 8);
    ck_assert_msg(ok && strstr(ok, "t.trace:9: expected size(OUT) = size(IN) for collective-permute"), "%s", ok);
    g_free(ok);
    ok = check_text(MESH "all-reduce g axis=data\nall-gather o i axis=data\nreduce-scatter i g axis=data,model\n"
                    "alloc h 8MiB hbm@7 device=7\nall-to-all o g axis=model\n", 0);
    ck_assert_msg(ok && strstr(ok, "t.trace:10: expected size(OUT) = size(IN)"), "%s", ok);
    g_free(ok);
    ok = check_text(MESH "all-reduce g axis=data\nall-gather o i axis=data\nreduce-scatter i g axis=data,model\n"
                    "alloc h 8MiB hbm@7 device=7\n", 0);
    ck_assert_ptr_null(ok);
    CHECK_ERR("alloc g 1MiB\nall-reduce g axis=data\n", 0, "t.trace:3: expected 'option mesh=AXIS:SIZE,...' before");
    CHECK_ERR(MESH "all-reduce g axis=pipe\n", 8, "t.trace:6: expected axis= to name distinct axes of the mesh "
                                                  "data:4,model:2, got 'pipe'");
    CHECK_ERR("option mesh=data:4,model:2\n", 16, "t.trace:2: expected a mesh of 16 devices (the hardware's), got "
                                                  "mesh=data:4,model:2 (8 devices)");
    CHECK_ERR("option mesh=data:4:2\n", 0, "t.trace:2: expected a mesh such as data:4,model:2");
    CHECK_ERR(MESH "all-gather o i axis=model\n", 8, "t.trace:6: expected size(OUT) = 2 x size(IN) = 16777216 bytes "
                                                     "for all-gather over model, got 33554432");
    CHECK_ERR(MESH "reduce-scatter i g axis=data\n", 8, "t.trace:6: expected size(IN) = 4 x size(OUT) = 33554432 "
                                                        "bytes for reduce-scatter over data, got 67108864");
    CHECK_ERR(MESH "alloc a 1000001\nalloc b 1000001\nall-to-all a b axis=model,data\n", 8,
              "t.trace:8: expected a size divisible by the group size 8 for all-to-all over model,data, got 1000001");
    CHECK_ERR(MESH "all-gather o o axis=data\n", 8, "t.trace:6: expected OUT and IN to be distinct buffers");
    CHECK_ERR(MESH "all-reduce x axis=data\n", 8, "t.trace:6: expected a live buffer as the buffer of all-reduce");
    CHECK_ERR(MESH "compute k flops=1 device=8\n", 0, "t.trace:6: expected device= a device 0..7, got 8");
    CHECK_ERR("alloc a 1MiB device=4\n", 4, "t.trace:2: expected device= a device 0..3, got 4");
    CHECK_ERR(MESH "alloc a 1MiB hbm@8\n", 0, "t.trace:6: expected a memory of a device 0..7, got 'hbm@8'");
    CHECK_ERR("release hbm@2\n", 2, "t.trace:2: expected a memory of a device 0..1, got 'hbm@2'");
}
END_TEST

static Suite *mesh_suite(void)
{
    Suite *s = suite_create("mesh");
    TCase *mesh = tcase_create("mesh");
    tcase_add_test(mesh, mesh_numbers_devices_row_major);
    tcase_add_test(mesh, mesh_errors_say_what_was_expected);
    suite_add_tcase(s, mesh);
    TCase *check = tcase_create("check");
    tcase_add_test(check, checker_rules_for_collectives);
    tcase_add_test(check, checker_rules_for_collective_bytes);
    suite_add_tcase(s, check);
    return s;
}

int main(void) { return strata_test_main(mesh_suite()); }
