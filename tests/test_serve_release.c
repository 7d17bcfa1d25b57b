/*
 * test_serve_release.c: --engine-release (serve_release.h) against its table read by hand: each boundary's row on
 * both sides of it, what the option sets and leaves, the releases it refuses (exit 2) and the ones it takes with a
 * note; and `strata serve --engine-release` end to end on the CLI.
 */
#include <string.h>
#include "core/error.h"
#include "serve/serve.h"
#include "serve/serve_engine.h"
#include "serve/serve_fp8_linear.h"
#include "serve/serve_release.h"
#include "testutil.h"

static strata_serve_release parsed(const char *text)
{
    strata_serve_release r;
    GError *err = NULL;
    ck_assert_msg(strata_serve_release_parse(text, &r, NULL, &err), "%s: %s", text, err ? err->message : "");
    return r;
}

static const char *row_of(const char *release, const char *knob)
{
    strata_serve_release r = parsed(release);
    return strata_serve_release_row(&r, knob);
}

static bool same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* The table by hand (serve_release.c): engine vllm-v0.5 from 0.4.0, vllm-v0 from 0.6.0 (PR #7049), V1 (NULL) from
 * 0.8.0 (PR #13726); fp8_linear_rocm vllm-0.6-rocm-scaled-mm from 0.4.0, vllm-rocm-fork-0.6 from 0.6.3 (v0.6.3+rocm),
 * vllm-rocm-fork from 0.7.3 (PR #411); async scheduling on from 0.14.0 (PR #27614); the MLA prefill's v padded
 * always to 0.8.4 (the 0.8.4 wheel pads in V0 and V1), unless FA3 on Hopper from 0.8.5 (MLACommonImpl._pad_v, first
 * in the 0.8.5 wheel). Each boundary read on its last release before and its first. */
START_TEST(each_boundary_picks_its_row)
{
    const struct { const char *release, *knob, *row; } want[] = {
        {"0.4.0", "engine", "vllm-v0.5"},        {"0.5.5", "engine", "vllm-v0.5"},
        {"0.6.0", "engine", "vllm-v0"},          {"0.7.2", "engine", "vllm-v0"},
        {"0.8.0", "engine", NULL},               {"0.11.0", "engine", NULL},
        {"0.4.2", "fp8_linear_rocm", "vllm-0.6-rocm-scaled-mm"},
        {"0.6.2", "fp8_linear_rocm", "vllm-0.6-rocm-scaled-mm"},
        {"0.6.3", "fp8_linear_rocm", "vllm-rocm-fork-0.6"},
        {"0.6.6", "fp8_linear_rocm", "vllm-rocm-fork-0.6"},
        {"0.7.2", "fp8_linear_rocm", "vllm-rocm-fork-0.6"},
        {"0.7.3", "fp8_linear_rocm", "vllm-rocm-fork"},
        {"0.9.1", "fp8_linear_rocm", "vllm-rocm-fork"},
        {"0.13.9", "async_scheduling", NULL},    {"0.14.0", "async_scheduling", "on"},
        {"0.7.3", "mla_pad_v", "always"},        {"0.8.4", "mla_pad_v", "always"},
        {"0.8.5", "mla_pad_v", "unless-fa3-hopper"},
        {"0.6.6", "no-such-knob", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(same(row_of(want[i].release, want[i].knob), want[i].row), "%s %s: %s, expected %s",
                      want[i].release, want[i].knob, row_of(want[i].release, want[i].knob),
                      want[i].row ? want[i].row : "none");
}
END_TEST

/* The forms a release is written in: a tag's v, a dev build's suffix, a ROCm image's +rocm, a fourth number
 * (ROCm/vllm 0.9.0.1) all read as their MAJOR.MINOR.PATCH: 0.6.4.dev22+g5b8a1fde is 0.6.4 (fork-0.6's range),
 * v0.7.3+rocm is 0.7.3 (fork). Refused (exit 2, the option and the range named): no patch, letters, an empty
 * string, a release before 0.4.0, a number past six digits. Newer than 0.19.x: taken, flagged. */
START_TEST(releases_parse_strictly)
{
    ck_assert_str_eq(row_of("0.6.4.dev22+g5b8a1fde", "fp8_linear_rocm"), "vllm-rocm-fork-0.6");
    ck_assert_str_eq(row_of("v0.7.3+rocm", "fp8_linear_rocm"), "vllm-rocm-fork");
    ck_assert_str_eq(row_of("0.9.0.1", "fp8_linear_rocm"), "vllm-rocm-fork");
    ck_assert_str_eq(row_of("0.6.6.post1", "engine"), "vllm-v0");
    ck_assert_str_eq(row_of("0.8.5rc1", "fp8_linear_rocm"), "vllm-rocm-fork");
    const char *bad[] = {"0.6", "x", "", "0.6.x", "0..6", "0.3.9", "0.6.6 ", "1234567.0.0", "0.6.6/", "-0.6.6"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        strata_serve_release r;
        GError *err = NULL;
        ck_assert_msg(!strata_serve_release_parse(bad[i], &r, NULL, &err), "'%s' taken", bad[i]);
        ck_assert(err && err->code == STRATA_ERROR_INPUT);
        ck_assert_msg(strstr(err->message, "--engine-release") && strstr(err->message, "0.4.0 to 0.19.x"), "%s",
                      err->message);
        g_error_free(err);
    }
    bool newer = true;
    strata_serve_release r;
    ck_assert(strata_serve_release_parse("0.19.1", &r, &newer, NULL) && !newer);
    ck_assert(strata_serve_release_parse("0.20.0", &r, &newer, NULL) && newer);
    ck_assert_str_eq(strata_serve_release_row(&r, "async_scheduling"), "on"); /* the newest rows */
    ck_assert(strata_serve_release_parse("1.0.0", &r, &newer, NULL) && newer);
}
END_TEST

/* What apply sets: 0.6.6 with no --engine runs vllm-v0 and keeps fork-0.6 for ROCm; 0.5.3 vllm-v0.5; 0.9.1 leaves
 * the default row (V1) and async off; 0.14.0 turns async on unless --engine or --scheduler was given. A given
 * --engine stays (0.6.6 under vllm-v0.5); another engine than vLLM's is refused (exit 2). */
START_TEST(apply_sets_what_the_user_left)
{
    strata_serve_config c;
    GError *err = NULL;
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply(NULL, false, false, &c, &err) && !c.engine && !c.release_fp8_linear_rocm);
    ck_assert(strata_serve_release_apply("0.6.6", false, false, &c, &err));
    ck_assert_str_eq(c.engine->name, "vllm-v0");
    ck_assert_str_eq(c.release_fp8_linear_rocm->name, "vllm-rocm-fork-0.6");
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply("0.5.3", false, false, &c, &err));
    ck_assert_str_eq(c.engine->name, "vllm-v0.5");
    ck_assert_str_eq(c.release_fp8_linear_rocm->name, "vllm-0.6-rocm-scaled-mm");
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply("0.9.1", false, false, &c, &err) && !c.engine && !c.async_scheduling);
    ck_assert(strata_serve_release_apply("0.14.0", false, false, &c, &err) && !c.engine && c.async_scheduling);
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply("0.14.0", false, true, &c, &err) && !c.async_scheduling);
    c.engine = strata_serve_engine_find("vllm-v0.5", NULL);
    ck_assert(strata_serve_release_apply("0.6.6", true, false, &c, &err));
    ck_assert_str_eq(c.engine->name, "vllm-v0.5");
    c.engine = strata_serve_engine_find("sglang-v0.4", NULL);
    ck_assert(!strata_serve_release_apply("0.6.6", true, false, &c, &err));
    ck_assert(err && err->code == STRATA_ERROR_INPUT && strstr(err->message, "sglang-v0.4"));
    g_error_free(err);
}
END_TEST

/* The hardware's part: the release's FP8 Linear row replaces vllm-v0's ROCm default (vllm-rocm-fork) on MI300X,
 * not on an H100 (NCCL's collectives: no ROCm build), not over a given --fp8-linear-rocm, not under V1 (no row). */
START_TEST(fp8_row_on_rocm_only)
{
    strata_hw *mi = strata_test_load_hw("mi300x", NULL), *h100 = strata_test_load_hw("h100", NULL);
    strata_serve_config c;
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply("0.6.6", false, false, &c, NULL));
    strata_serve_release_apply_hw(&c, h100);
    ck_assert(!c.fp8_linear_rocm);
    strata_serve_release_apply_hw(&c, mi);
    ck_assert_str_eq(c.fp8_linear_rocm->name, "vllm-rocm-fork-0.6");
    strata_serve_config_default(&c);
    c.engine = strata_serve_engine_find("vllm-v0", NULL);
    c.fp8_linear_rocm = strata_serve_fp8_linear_find("vllm-0.6-rocm-scaled-mm", NULL);
    ck_assert(strata_serve_release_apply("0.6.6", true, false, &c, NULL));
    strata_serve_release_apply_hw(&c, mi);
    ck_assert_str_eq(c.fp8_linear_rocm->name, "vllm-0.6-rocm-scaled-mm");
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply("0.9.1", false, false, &c, NULL));
    strata_serve_release_apply_hw(&c, mi);
    ck_assert(!c.engine && !c.fp8_linear_rocm);
    strata_hw_free(mi);
    strata_hw_free(h100);
}
END_TEST

/* On the CLI: a malformed release exits 2 naming the option and the range; a newer one runs (exit 0) with the
 * note on standard error; --engine-release 0.6.6 on MI300X gives --fp8-linear-rocm vllm-rocm-fork-0.6's JSON. */
START_TEST(cli_refuses_and_notes)
{
    char *hw = strata_test_source_path("configs/hw/mi300x.ini");
    const char *base[] = {"serve", "--hw", hw, "--model", "llama-3-8b", "--set", "dtype=f8", "--poisson",
                          "n=1,rate=0,prompt=16,output=4,dist=fixed", "-q", "-j", "-"};
    const char *argv[20];
    size_t n = G_N_ELEMENTS(base);
    memcpy(argv, base, sizeof base);
    argv[n] = "--engine-release", argv[n + 1] = "0.6", argv[n + 2] = NULL;
    strata_cli_result r = strata_test_run_cli(argv);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--engine-release") && strstr(r.err, "0.4.0 to 0.19.x"), "%s", r.err);
    strata_cli_result_clear(&r);
    argv[n + 1] = "0.21.0";
    r = strata_test_run_cli(argv);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, "newer than the table knows"), "%s", r.err);
    strata_cli_result_clear(&r);
    argv[n + 1] = "0.6.6";
    r = strata_test_run_cli(argv);
    argv[n] = "--engine", argv[n + 1] = "vllm-v0", argv[n + 2] = "--fp8-linear-rocm",
    argv[n + 3] = "vllm-rocm-fork-0.6", argv[n + 4] = NULL;
    strata_cli_result by_row = strata_test_run_cli(argv);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(by_row.status, 0);
    ck_assert_str_eq(r.out, by_row.out);
    strata_cli_result_clear(&r);
    strata_cli_result_clear(&by_row);
    g_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_release");
    TCase *tc = tcase_create("serve_release");
    tcase_add_test(tc, each_boundary_picks_its_row);
    tcase_add_test(tc, releases_parse_strictly);
    tcase_add_test(tc, apply_sets_what_the_user_left);
    tcase_add_test(tc, fp8_row_on_rocm_only);
    tcase_add_test(tc, cli_refuses_and_notes);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
