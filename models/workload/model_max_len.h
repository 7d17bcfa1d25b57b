/*
 * model_max_len.h: the longest sequence vLLM serves a Hugging Face
 * config.json at, derived from its keys as vLLM derives max_model_len
 * (vllm/config.py _get_and_verify_max_len, read at vllm-project/vllm@32e7db25,
 * v0.6.0, and ROCm/vllm@37126497, 0.9.0.1; model_max_len.c says where the two
 * differ and what strata takes).
 *
 * Invariants: a length is 0 (the file bounds nothing: no
 * max_position_embeddings and no yarn original length) or from 1 to 2^31 - 1;
 * where vLLM refuses the file's rope_scaling (no type, two types that
 * disagree, a scaling type with no factor or a factor that is not a positive
 * finite number, yarn with no original_max_position_embeddings) the length
 * is 0 and the problem says why, naming the key and what was expected.
 */
#ifndef STRATA_MODEL_MAX_LEN_H
#define STRATA_MODEL_MAX_LEN_H

#include <json-glib/json-glib.h>
#include <stdint.h>

/* The derived length of o, a config object of model_type `type` (the
 * nested language model's where a family nests one); *problem (g_free) is
 * NULL, or set where vLLM refuses the file. */
uint32_t strata_model_max_len(JsonObject *o, const char *type, char **problem);

#endif
