/*
 * serve_prior.h: an earlier run on the same server (--prior-run
 * n=N,prompt=P,output=O, repeatable, in the order they ran), whose freed
 * blocks wait in vLLM's prefix cache when this run starts.
 *
 * The rule of the prompts' identity is vLLM's random dataset
 * (vllm/benchmarks/datasets.py RandomDataset, 0.11 to 0.15; docs/serving.md
 * "A sweep as its sequence of runs"): one numpy Generator seeded with --seed
 * draws all input lengths, then all output lengths, then all offsets (a
 * length range of one value draws nothing), and prompt i's tokens are
 * (offset_i + i + t) for t = 0, 1, ..., so with the same seed prompt i of
 * any run begins with prompt i of any other, whatever num_prompts or the
 * length. Only the last tokens differ: the prompt is decoded to text and
 * re-encoded, which can merge or split the pre-token the cut falls in.
 *
 * So a block of request i is, by its place:
 *   - wholly before the prompt's last token: request i's own, the same in
 *     every run (the re-encode is held to change only the last token's
 *     pre-token: ESTIMATE, at most a few tokens, taken inside the block that
 *     holds the last token);
 *   - holding the prompt's last token: request i's at that prompt length;
 *   - after the prompt: that run's generated tokens, its own.
 *
 * Invariants: n >= 1, prompt >= 1, output >= 1.
 */
#ifndef STRATA_SERVE_PRIOR_H
#define STRATA_SERVE_PRIOR_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct strata_serve_prior_run {
    uint32_t n;      /* requests 0..n-1, run in id order */
    uint32_t prompt; /* tokens of each prompt */
    uint32_t output; /* tokens each generated */
} strata_serve_prior_run;

typedef enum {
    STRATA_SERVE_BLOCK_OWN,    /* request i's, at any prompt length */
    STRATA_SERVE_BLOCK_CUT,    /* request i's at this prompt length only */
    STRATA_SERVE_BLOCK_OUTPUT, /* this run's generated tokens */
} strata_serve_block_kind;

/* "n=1000,prompt=1024,output=128" into r; a bad or missing key: err naming it. */
bool strata_serve_prior_parse(const char *spec, strata_serve_prior_run *r, GError **err);
/* What block i (of block_size tokens) of a prompt of `prompt` tokens holds (above). */
strata_serve_block_kind strata_serve_prior_block(uint32_t i, uint32_t block_size, uint32_t prompt);

#endif
