/*
 * test_serve_warm.c: the warm prefix (serve_stream.h, serve_pool.c warm):
 * request i's first N tokens left in vLLM's prefix cache by an earlier run
 * on the same server, as benchmaq's sweeps leave them (one server, every
 * context size in turn, vLLM's random dataset with the same seed: issue 45,
 * serving set 17). The pool's blocks, hits and LRU eviction by hand, and
 * --warm-prefix through the CLI.
 */
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_kv.h"
#include "testutil.h"

static strata_serve_kv_config pool_of(uint32_t blocks, uint32_t warm, bool caching)
{
    /* blocks of 4 tokens of 1 B: block_bytes 4 */
    return (strata_serve_kv_config){.pool_bytes = (uint64_t)blocks * 4, .bytes_per_token = 1, .block_size = 4,
                                    .max_model_len = 1024, .n_requests = 2, .prefix_caching = caching,
                                    .warm_prefix = warm, .kv_tensors = 2};
}

/* 8 blocks of 4 tokens, 2 requests, warm 9 tokens: 9 / 4 = 2 full blocks each (the ninth token's block was never
 * full, so never hashed). Request 0 pops blocks 0, 1 and frees them tail first (queue 2..7 1 0), request 1 pops
 * 2, 3 (queue 4 5 6 7 1 0 3 2): 4 cached free blocks, 16 B. A lookup takes whole blocks among the first
 * num_tokens - 1 tokens: 12 tokens -> (12 - 1) / 4 = 2 blocks, 8 tokens; 8 tokens -> 7 / 4 = 1 block, 4 tokens.
 * A request not warmed (id 1 with caching off) finds nothing. */
START_TEST(warm_blocks_hit_by_hand)
{
    strata_serve_kv_config c = pool_of(8, 9, true);
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    ck_assert_ptr_nonnull(s);
    strata_serve_kv_stats st;
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 16);
    ck_assert_uint_eq(st.reserved, 0);
    strata_serve_kv_req a = {0, 12, 1, 0}, b = {1, 8, 1, 0};
    ck_assert_uint_eq(k->lookup(s, &a, 12), 8);
    ck_assert_uint_eq(k->lookup(s, &b, 8), 4);
    /* a takes its 2 hits and 1 fresh block (the head, 4): 3 blocks held, 12 B */
    ck_assert(k->grow(s, &a, 12));
    ck_assert_uint_eq(k->held(s, 0), 12);
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 8); /* b's 2 blocks still cached and free */
    k->destroy(s);
    c = pool_of(8, 9, false);
    s = k->create(&c, &err);
    ck_assert_uint_eq(k->lookup(s, &a, 12), 0);
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 0);
    k->destroy(s);
}
END_TEST

/* 3 blocks, 2 requests, warm 8 tokens (2 blocks each): request 0 pops 0, 1 (queue 2 1 0); request 1 pops 2, then
 * 1, evicting request 0's second block (its hash dropped), and frees them tail first (queue 0 1 2). So request 0
 * finds its first block only (4 tokens of 12), request 1 both (8): the pool keeps the later run's latest, as
 * vLLM's LRU free queue does. */
START_TEST(warm_prefix_evicted_lru_when_the_pool_is_small)
{
    strata_serve_kv_config c = pool_of(3, 8, true);
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    strata_serve_kv_req a = {0, 12, 1, 0}, b = {1, 12, 1, 0};
    ck_assert_uint_eq(k->lookup(s, &a, 12), 4);
    ck_assert_uint_eq(k->lookup(s, &b, 12), 8);
    strata_serve_kv_stats st;
    k->stats(s, &st);
    ck_assert_uint_eq(st.cached, 12);
    k->destroy(s);
}
END_TEST

static strata_cli_result serve_warm(const char *warm)
{
    return strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                           "--poisson", "n=4,rate=0,prompt=100,output=4,dist=fixed", "--warm-prefix", warm, NULL);
}

/* 4 prompts of 100 tokens, blocks of 16 (vLLM's default): --warm-prefix 64 caches 64 / 16 = 4 blocks of each,
 * and a lookup reaches (100 - 1) / 16 = 6 blocks: 64 tokens hit each, 256 in all. --warm-prefix 100 caches
 * 100 / 16 = 6 full blocks (96 tokens): 96 hit each (the last token is always recomputed), 384. --warm-prefix 0
 * (the default) hits nothing: 4 distinct prompts. */
START_TEST(cli_warm_prefix_hits)
{
    const struct {
        const char *warm, *hits;
    } rows[] = {{"64", "prefix hits 256 tokens"}, {"100", "prefix hits 384 tokens"}, {"0", "prefix hits 0 tokens"}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_cli_result r = serve_warm(rows[i].warm);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, rows[i].hits), "--warm-prefix %s: %s", rows[i].warm, r.out);
        strata_cli_result_clear(&r);
    }
    strata_cli_result r = serve_warm("-1");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--warm-prefix"), "%s", r.err);
    strata_cli_result_clear(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_warm");
    TCase *tc = tcase_create("serve_warm");
    tcase_add_test(tc, warm_blocks_hit_by_hand);
    tcase_add_test(tc, warm_prefix_evicted_lru_when_the_pool_is_small);
    tcase_add_test(tc, cli_warm_prefix_hits);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
