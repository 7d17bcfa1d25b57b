/*
 * serve_sampler.h: the kernels an engine's decoder runs each step over the
 * logits of the rows that sample a token (penalties, softmax, top-k), as a
 * table of rows looked up by name (the engine's row names one,
 * serve_engine.h). Without a row a step's sampling costs nothing (every
 * engine before this table: its sampler's kernels not modelled).
 *
 * A row is a list of passes, each one kernel a step on one rank over the
 * sampled rows' whole vocabulary (rows x vocab elements), moving
 * `bytes_per_logit` bytes for each logit: what its loops read and write in
 * the logits' dtype (TensorRT-LLM's engines write the logits in float32).
 * A pass of 0 bytes is a kernel over a few values a row: its launch and
 * one element a row as the elementwise model moves it, nothing of the
 * vocabulary.
 * serve_cost.c charges each pass as one kernel at the stream rate, on
 * every rank (each TP rank runs the decoder on the gathered logits; under
 * attention DP a rank over its own requests' rows), after the LM head and
 * the logits' gather. Rows and their sources are in
 * serve_sampler.c.
 *
 * A row may also give the device buffers its decoder allocates when it is
 * set up, before the KV pool is sized, for each slot (the engine's maximum
 * batch, strata's max_num_seqs): bytes a logit of the vocabulary padded to
 * the TP size (TensorRT-LLM's getVocabSizePadded(worldSize)), bytes a logit
 * of the vocabulary itself, and bytes whatever the vocabulary.
 * strata_serve_memory (serve_run.c) keeps them from the pool of an engine
 * that names the row. 0, 0 and 0: not modelled.
 *
 * Invariants: a row has at least one pass; a pass's bytes are >= 0; the
 * buffer bytes are >= 0; the table ends with a NULL name.
 */
#ifndef STRATA_SERVE_SAMPLER_H
#define STRATA_SERVE_SAMPLER_H

#include <glib.h>
#include <stdint.h>
#include "serve/serve_pass.h"

typedef struct strata_serve_sampler_pass {
    const char *kernel;     /* what runs it (its source) */
    double bytes_per_logit; /* bytes it moves for each logit of a sampled row */
} strata_serve_sampler_pass;

typedef struct strata_serve_sampler {
    const char *name;
    const char *what;
    const strata_serve_sampler_pass *passes;
    uint32_t n_passes;
    double slot_bytes_padded; /* buffer bytes a slot and logit of the padded vocabulary */
    double slot_bytes_vocab;  /* and a slot and logit of the vocabulary */
    double slot_bytes;        /* and a slot whatever the vocabulary */
} strata_serve_sampler;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_sampler *strata_serve_sampler_find(const char *name, GError **err);

/* The bytes a rank's decoder holds in buffers for `slots` slots of a
 * vocabulary of `vocab` at TP size `tp` (the vocabulary padded to a
 * multiple of tp): slots x (padded x slot_bytes_padded + vocab x
 * slot_bytes_vocab + slot_bytes). */
double strata_serve_sampler_buffer_bytes(const strata_serve_sampler *s, uint64_t slots, uint32_t vocab, uint32_t tp);

/* The decoder's kernels over `rows` sampled rows of a vocabulary of `vocab` on one rank, each pass one kernel
 * priced by `pass` (over the logits when the pass moves bytes, else over the rows); 0 for no sampler or no rows. */
double strata_serve_sampler_time(const strata_serve_sampler *s, uint64_t rows, uint32_t vocab,
                                 strata_serve_pass_fn pass, const void *ctx);

#endif
