/*
 * test_hardening_twentysecond.c: the twenty-second hardening pass (wave 42),
 * a row per case over model files and --set of absurd sizes: each refused
 * row was taken on the base (main at the wave's start, 8f3ed645) at exit 0
 * or 2 with a wrong reason; the rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* serve of a 2-layer llama-2-7b's 8-request Poisson stream on h100.ini, results in out.json (the options follow) */
#define SERVE8 HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --json out.json " \
               "--poisson n=8,rate=50,prompt=64,output=4 "

/* Sizes near 2^32 each passed the model check and the weight bytes, a
 * double past 2^64 cast to uint64_t (undefined; 0 on x86-64), read as
 * "weights 0 GB" in the error that followed. By hand: vocab = hidden =
 * 4e9 gives an embedding table and an LM head of 4e9 x 4e9 = 1.6e19
 * parameters each, 3.2e19 (the layers add ~4e14) x 2 B (bf16) = 6.4e19 B
 * > 2^62 = 4.6e18 B.
 * KV: 2 layers x 2 (K, V) x 32 kv heads x head_dim 128 x 2 B = 32 KiB a
 * token, x 4096 tokens = 1.3e8 B: below 2^62, only the weights refuse. */
STRATA_ROWS_TEST(absurd_model_sizes_refused,
    {SERVE8 "--set hidden=4000000000 --set vocab=4000000000", 2,
     "expected a model whose weights (6.4e+19 B)"},
    /* head_dim 2^31 x 32 kv heads x 2 layers x 2 x 2 B = 5.5e11 B a token; max_model_len 4e9 tokens: 2.2e21 B */
    {SERVE8 "--set head_dim=2147483648 --set max_model_len=4000000000", 2,
     "are below 2^62 bytes"},
    /* what stays taken: the 2-layer model as it is */
    {SERVE8, 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        absurd_model_sizes_refused,
        NULL,
    };
    return strata_hardening_main("twentysecond", tests);
}
