/* test_op.c: the op stream's names tables, deep copy and equality, and the in-memory sources. */
#include <string.h>
#include "testutil.h"
#include "trace/op.h"
#include "trace/source.h"

START_TEST(kind_names_round_trip)
{
    static const char *const expected[] = {"alloc", "free", "copy", "compute", "record", "wait", "release", "option",
                                          "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                          "collective-permute"};
    ck_assert_int_eq(G_N_ELEMENTS(expected), STRATA_OP__COUNT);
    for (unsigned k = 0; k < STRATA_OP__COUNT; k++) {
        ck_assert_str_eq(strata_op_kind_name((strata_op_kind)k), expected[k]);
        strata_op_kind back;
        ck_assert(strata_op_kind_from_name(expected[k], &back));
        ck_assert_int_eq(back, k);
    }
    strata_op_kind dummy;
    ck_assert(!strata_op_kind_from_name("malloc", &dummy));
    ck_assert(!strata_op_kind_from_name("", &dummy));
    ck_assert(!strata_op_kind_from_name("Alloc", &dummy));
    /* a kind's name with a byte more or less, or one changed, of every length looked at */
    static const char *const near[] = {"allocx", "fre", "copz", "waits", "recorD", "optio", "computes", "releas",
                                       "all-reducx", "all-gathe", "all-to-al1", "reduce-scatte", "reduce-scatterr",
                                       "collective-permutx", "collective-permute-", "collective-permute-x"};
    for (size_t i = 0; i < G_N_ELEMENTS(near); i++)
        ck_assert_msg(!strata_op_kind_from_name(near[i], &dummy), "%s", near[i]);
}
END_TEST

START_TEST(tag_names_round_trip)
{
    static const char *const expected[] = {"", "param", "input", "output", "activation", "optstate", "grad", "temp"};
    ck_assert_int_eq(G_N_ELEMENTS(expected), STRATA_TAG__COUNT);
    for (unsigned t = 0; t < STRATA_TAG__COUNT; t++)
        ck_assert_str_eq(strata_tag_name((strata_tag)t), expected[t]);
    for (unsigned t = 1; t < STRATA_TAG__COUNT; t++) {
        strata_tag back;
        ck_assert(strata_tag_from_name(expected[t], &back));
        ck_assert_int_eq(back, t);
    }
    strata_tag dummy;
    ck_assert(!strata_tag_from_name("", &dummy)); /* NONE is not a name */
    ck_assert(!strata_tag_from_name("weights", &dummy));
}
END_TEST

START_TEST(dtype_names_and_bits)
{
    static const struct {
        const char *name;
        unsigned bits;
    } expected[] = {{"", 0},     {"f64", 64},   {"f32", 32},   {"tf32", 32},  {"bf16", 16},
                    {"f16", 16}, {"f8", 8},     {"int64", 64}, {"int32", 32}, {"int16", 16},
                    {"int8", 8}, {"uint8", 8},  {"int4", 4},   {"bool", 8}};
    ck_assert_int_eq(G_N_ELEMENTS(expected), STRATA_DTYPE__COUNT);
    for (unsigned d = 0; d < STRATA_DTYPE__COUNT; d++) {
        ck_assert_str_eq(strata_dtype_name((strata_dtype)d), expected[d].name);
        ck_assert_uint_eq(strata_dtype_bits((strata_dtype)d), expected[d].bits);
        if (d > 0) {
            strata_dtype back;
            ck_assert(strata_dtype_from_name(expected[d].name, &back));
            ck_assert_int_eq(back, d);
        }
    }
    strata_dtype dummy;
    ck_assert(!strata_dtype_from_name("float32", &dummy));
}
END_TEST

static strata_op full_compute(void)
{
    static const char *const ins[] = {"a", "b"};
    static const char *const outs[] = {"c"};
    static const char *const donates[] = {"b"};
    strata_op op = {0};
    op.kind = STRATA_OP_COMPUTE;
    op.line = 7;
    op.stream = "s1";
    op.name = "matmul";
    op.unit = "mxu";
    op.has_flops = true;
    op.flops = 2e9;
    op.has_time = true;
    op.time_s = 3e-6;
    op.ins = ins;
    op.n_ins = 2;
    op.outs = outs;
    op.n_outs = 1;
    op.donates = donates;
    op.n_donates = 1;
    op.has_at = true;
    op.at_s = 1.5;
    op.note = "layer0";
    return op;
}

START_TEST(copy_is_deep_and_equal)
{
    strata_op op = full_compute();
    strata_op copy;
    strata_op_copy(&copy, &op);
    ck_assert(strata_op_equal(&op, &copy));
    ck_assert_ptr_ne(copy.name, op.name);
    ck_assert_ptr_ne(copy.ins, op.ins);
    ck_assert_ptr_ne(copy.ins[0], op.ins[0]);
    ck_assert_str_eq(copy.ins[1], "b");
    ck_assert_str_eq(copy.donates[0], "b");
    ck_assert_uint_eq(copy.line, 7);

    /* line is not part of equality; every other field is. */
    copy.line = 99;
    ck_assert(strata_op_equal(&op, &copy));
    strata_op other = op;
    other.flops = 2e9 + 1;
    ck_assert(!strata_op_equal(&op, &other));
    other = op;
    other.n_outs = 0;
    ck_assert(!strata_op_equal(&op, &other));
    other = op;
    other.stream = "main";
    ck_assert(!strata_op_equal(&op, &other));
    other = op;
    other.note = NULL;
    ck_assert(!strata_op_equal(&op, &other));
    static const char *const other_ins[] = {"a", "z"};
    other = op;
    other.ins = other_ins;
    ck_assert(!strata_op_equal(&op, &other));

    strata_op_clear(&copy);
    ck_assert_ptr_null(copy.name);
    ck_assert_uint_eq(copy.n_ins, 0);
}
END_TEST

START_TEST(alloc_fields_compare)
{
    strata_op a = {.kind = STRATA_OP_ALLOC, .stream = "main", .name = "w", .size = 4096,
                   .tag = STRATA_TAG_PARAM, .dtype = STRATA_DTYPE_BF16, .n_dims = 2,
                   .shape = {8, 128}, .has_addr = true, .addr = 0x7f00};
    strata_op b = a;
    ck_assert(strata_op_equal(&a, &b));
    b.shape[1] = 256;
    ck_assert(!strata_op_equal(&a, &b));
    b = a;
    b.addr = 0x7f01;
    ck_assert(!strata_op_equal(&a, &b));
    b = a;
    b.memory = "host";
    ck_assert(!strata_op_equal(&a, &b));
    b = a;
    b.tag = STRATA_TAG_GRAD;
    ck_assert(!strata_op_equal(&a, &b));
}
END_TEST

START_TEST(array_source_copies_and_rewinds)
{
    strata_op ops[3] = {
        {.kind = STRATA_OP_ALLOC, .stream = "main", .name = "x", .size = 64},
        full_compute(),
        {.kind = STRATA_OP_FREE, .stream = "main", .name = "x"},
    };
    char name[] = "x";
    ops[0].name = name;
    strata_source *src = strata_source_from_array(ops, 3, "unit-test");
    name[0] = 'y'; /* the source holds its own copy */
    ck_assert_str_eq(strata_source_origin(src), "unit-test");
    for (int pass = 0; pass < 2; pass++) {
        const strata_op *op = NULL;
        GError *err = NULL;
        ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
        ck_assert_str_eq(op->name, "x");
        ck_assert_uint_eq(op->size, 64);
        ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
        ck_assert(strata_op_equal(op, &ops[1]));
        ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
        ck_assert_int_eq(op->kind, STRATA_OP_FREE);
        ck_assert_int_eq(strata_source_next(src, &op, &err), 0);
        ck_assert_int_eq(strata_source_next(src, &op, &err), 0);
        ck_assert(strata_source_rewind(src, &err));
    }
    strata_source_free(src);
    strata_source_free(NULL);
}
END_TEST

START_TEST(op_list_builds_a_source)
{
    strata_op_list *list = strata_op_list_new();
    char name[16];
    for (int i = 0; i < 100; i++) {
        g_snprintf(name, sizeof name, "b%d", i);
        strata_op op = {.kind = STRATA_OP_ALLOC, .stream = "main", .name = name, .size = (uint64_t)(i + 1)};
        strata_op_list_append(list, &op);
    }
    ck_assert_uint_eq(strata_op_list_len(list), 100);
    ck_assert_str_eq(strata_op_list_get(list, 42)->name, "b42");
    ck_assert_uint_eq(strata_op_list_get(list, 99)->size, 100);
    strata_source *src = strata_op_list_to_source(list, "gen");
    const strata_op *op;
    uint64_t total = 0;
    int n = 0;
    while (strata_source_next(src, &op, NULL) == 1) {
        total += op->size;
        n++;
    }
    ck_assert_int_eq(n, 100);
    ck_assert_uint_eq(total, 5050);
    strata_source_free(src);

    strata_op_list *empty = strata_op_list_new();
    strata_op_list_free(empty);
    strata_op_list_free(NULL);
}
END_TEST

static Suite *op_suite(void)
{
    Suite *s = suite_create("op");
    TCase *tc = tcase_create("op");
    tcase_add_test(tc, kind_names_round_trip);
    tcase_add_test(tc, tag_names_round_trip);
    tcase_add_test(tc, dtype_names_and_bits);
    tcase_add_test(tc, copy_is_deep_and_equal);
    tcase_add_test(tc, alloc_fields_compare);
    tcase_add_test(tc, array_source_copies_and_rewinds);
    tcase_add_test(tc, op_list_builds_a_source);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(op_suite()); }
