/*
 * test_serve_prior.c: prior runs on the same server (serve_prior.h,
 * serve_pool.c replay_prior): a sweep's earlier runs of vLLM's random
 * dataset with the same seed, whose prompt i begins with every other run's
 * prompt i, left in the prefix cache in the order they ran. The block kinds,
 * the blocks a two-run sequence leaves in a small pool and which a later run
 * finds (by hand), vLLM's LRU keeping the latest run, and --prior-run through
 * the CLI.
 */
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_kv.h"
#include "serve/serve_prior.h"
#include "testutil.h"

/* Blocks of 4 tokens: a prompt of 9 has blocks 0 (tokens 0-3) and 1 (4-7) wholly before its last token (8):
 * its own at any length; block 2 holds token 8: the length's; block 3 (12-15) is generated. A prompt of 8:
 * block 0 own (ends at 4 <= 7), block 1 (4-7) holds its last token. */
START_TEST(block_kinds_by_hand)
{
    ck_assert_int_eq(strata_serve_prior_block(0, 4, 9), STRATA_SERVE_BLOCK_OWN);
    ck_assert_int_eq(strata_serve_prior_block(1, 4, 9), STRATA_SERVE_BLOCK_OWN);
    ck_assert_int_eq(strata_serve_prior_block(2, 4, 9), STRATA_SERVE_BLOCK_CUT);
    ck_assert_int_eq(strata_serve_prior_block(3, 4, 9), STRATA_SERVE_BLOCK_OUTPUT);
    ck_assert_int_eq(strata_serve_prior_block(0, 4, 8), STRATA_SERVE_BLOCK_OWN);
    ck_assert_int_eq(strata_serve_prior_block(1, 4, 8), STRATA_SERVE_BLOCK_CUT);
    ck_assert_int_eq(strata_serve_prior_block(2, 4, 8), STRATA_SERVE_BLOCK_OUTPUT);
    strata_serve_prior_run r;
    GError *err = NULL;
    ck_assert(strata_serve_prior_parse("n=1000,prompt=1024,output=128", &r, &err));
    ck_assert_uint_eq(r.n, 1000);
    ck_assert_uint_eq(r.prompt, 1024);
    ck_assert_uint_eq(r.output, 128);
    ck_assert(!strata_serve_prior_parse("n=10,prompt=5", &r, &err));
    ck_assert_msg(strstr(err->message, "output="), "%s", err->message);
    g_clear_error(&err);
    ck_assert(!strata_serve_prior_parse("n=0,prompt=5,output=1", &r, &err));
    g_clear_error(&err);
    ck_assert(!strata_serve_prior_parse("n=1,prompt=5,output=1,seed=2", &r, &err));
    ck_assert_msg(strstr(err->message, "seed=2"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

static strata_serve_kv_config pool_of(uint32_t blocks, const strata_serve_prior_run *prior, uint32_t n_prior)
{
    /* blocks of 4 tokens of 1 B: block_bytes 4 */
    return (strata_serve_kv_config){.pool_bytes = (uint64_t)blocks * 4, .bytes_per_token = 1, .block_size = 4,
                                    .max_model_len = 1024, .n_requests = 2, .prefix_caching = true,
                                    .kv_tensors = 2, .prior = prior, .n_prior = n_prior};
}

/* Run A: 2 requests, prompt 5, output 4: 5 + 4 - 1 = 8 tokens computed, 2 full blocks each: block 0 its own,
 * block 1 holds the prompt's last token (4), so the prompt length's. Run B: 1 request, prompt 9, output 4: 12
 * tokens, 3 blocks: 0 and 1 its own, 2 the length's.
 * Pool of 4 blocks (queue 0 1 2 3): A's request 0 pops 0, 1 and frees them tail first (queue 2 3 1 0); request
 * 1 pops 2, 3 (queue 1 0 3 2). B's request 0 finds its block 0 (block 0, out of the queue: 1 3 2), misses block
 * 1 (A's was the cut of a 5-token prompt), pops 1 and 3 (evicting A's two cut blocks) and frees 3 1 0 (queue
 * 2 3 1 0): 4 cached blocks, 16 B.
 * This run, prompt 13 (lookup over (13 - 1) / 4 = 3 blocks): request 0 finds B's blocks 0 and 1 and misses
 * block 2 (its own at 13, B's the cut at 9): 8 tokens; request 1 finds A's block 0 only: 4 tokens. */
START_TEST(two_runs_by_hand)
{
    const strata_serve_prior_run prior[] = {{2, 5, 4}, {1, 9, 4}};
    strata_serve_kv_config c = pool_of(4, prior, 2);
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    ck_assert_ptr_nonnull(s);
    strata_serve_kv_stats st;
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 16);
    ck_assert_uint_eq(st.reserved, 0);
    strata_serve_kv_req a = {0, 13, 1, 0}, b = {1, 13, 1, 0}, b5 = {1, 5, 1, 0};
    ck_assert_uint_eq(k->lookup(s, &a, 13), 8);
    ck_assert_uint_eq(k->lookup(s, &b, 13), 4);
    /* at A's own length 5 request 1 looks over (5 - 1) / 4 = 1 block: block 0, 4 tokens */
    ck_assert_uint_eq(k->lookup(s, &b5, 5), 4);
    k->destroy(s);
    /* the same runs without prefix caching leave nothing */
    c.prefix_caching = false;
    s = k->create(&c, &err);
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 0);
    ck_assert_uint_eq(k->lookup(s, &a, 13), 0);
    k->destroy(s);
}
END_TEST

/* The same runs in a pool of 3 blocks (queue 0 1 2): A's request 0 pops 0, 1 (queue 2 1 0); request 1 pops 2,
 * then 1 (evicting request 0's cut block) and frees 1 2 (queue 0 1 2). B's request 0 finds block 0 (queue 1 2),
 * pops 1 (evicting A's request 1's cut block) and 2 (its block 0), frees 2 1 0. So A's request 1 has nothing
 * left: vLLM's LRU keeps the latest run. This run's request 0 (prompt 13) finds 8 tokens as before, request 1
 * none; 3 cached blocks, 12 B. */
START_TEST(lru_keeps_the_latest_run)
{
    const strata_serve_prior_run prior[] = {{2, 5, 4}, {1, 9, 4}};
    strata_serve_kv_config c = pool_of(3, prior, 2);
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    strata_serve_kv_req a = {0, 13, 1, 0}, b = {1, 13, 1, 0};
    ck_assert_uint_eq(k->lookup(s, &a, 13), 8);
    ck_assert_uint_eq(k->lookup(s, &b, 13), 0);
    strata_serve_kv_stats st;
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 12);
    k->destroy(s);
}
END_TEST

static strata_cli_result serve_prior(const char *prior, bool caching)
{
    return strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                           "--poisson", "n=4,rate=0,prompt=100,output=4,dist=fixed", "--prior-run", prior,
                           caching ? "--quiet" : "--no-prefix-caching", NULL);
}

/* 4 prompts of 100 tokens, blocks of 16: a lookup covers (100 - 1) / 16 = 6 blocks. A prior run at 100 leaves
 * blocks 0-5 (ending at 96 <= 99) as each request's own: 96 tokens each, 384 in all; with n=2, 192. A prior
 * run at 64 leaves blocks 0-2 (ending at 48 <= 63; block 3 holds its last token): 48 each, 192. With
 * --no-prefix-caching it is refused (exit 2). */
START_TEST(cli_prior_run_hits)
{
    const struct {
        const char *prior, *hits;
    } rows[] = {{"n=4,prompt=100,output=4", "prefix hits 384 tokens"},
                {"n=2,prompt=100,output=4", "prefix hits 192 tokens"},
                {"n=4,prompt=64,output=4", "prefix hits 192 tokens"}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_cli_result r = serve_prior(rows[i].prior, true);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, rows[i].hits), "--prior-run %s: %s", rows[i].prior, r.out);
        strata_cli_result_clear(&r);
    }
    strata_cli_result r = serve_prior("n=4,prompt=100,output=4", false);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--prior-run") && strstr(r.err, "--no-prefix-caching"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve_prior("n=4,prompt=100", true);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--prior-run"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve_prior("n=4,n=2,prompt=100,output=4", true);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "parameter 'n' given twice"), "%s", r.err);
    strata_cli_result_clear(&r);
}
END_TEST

/* Where no prefix is looked up, the prior runs change nothing and are refused (exit 2): a contiguous
 * reservation (serve_kv.c, no lookup), TurboMind 0.1's scheduler, and a sliding-window model in vLLM v1's
 * paged pool (serve_pool.c replay_prior returns early on window groups). */
START_TEST(cli_prior_run_refused_without_lookup)
{
    const char *const extra[][4] = {{"--kv", "contiguous-max", NULL, NULL},
                                    {"--scheduler", "lmdeploy-turbomind", NULL, NULL},
                                    {"--set", "sliding_window=32", NULL, NULL}};
    const char *const expect[] = {"--kv contiguous-max", "lmdeploy-turbomind", "sliding-window"};
    for (size_t i = 0; i < G_N_ELEMENTS(extra); i++) {
        strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                              "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4,dist=fixed",
                                              "--prior-run", "n=4,prompt=100,output=4", "--quiet", extra[i][0],
                                              extra[i][1], NULL);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "--prior-run") && strstr(r.err, expect[i]), "%s", r.err);
        strata_cli_result_clear(&r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_prior");
    TCase *tc = tcase_create("serve_prior");
    tcase_add_test(tc, block_kinds_by_hand);
    tcase_add_test(tc, two_runs_by_hand);
    tcase_add_test(tc, lru_keeps_the_latest_run);
    tcase_add_test(tc, cli_prior_run_hits);
    tcase_add_test(tc, cli_prior_run_refused_without_lookup);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
