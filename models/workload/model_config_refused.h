/*
 * model_config_refused.h: what the config.json reader (model_config.c)
 * refuses by name before it reads a value: the architectures strata knows
 * it cannot model, by model_type, and the shape keys whose null it cannot
 * read as a default.
 *
 * Invariants: a refused model_type has no row in model_config.c's families
 * (the reader asks only for a model_type it has no row for); the reasons
 * are text that follows "'TYPE' is ".
 */
#ifndef STRATA_MODEL_CONFIG_REFUSED_H
#define STRATA_MODEL_CONFIG_REFUSED_H

#include <stdbool.h>

/* What an architecture strata cannot model lacks (NULL: not one of them). */
const char *strata_model_config_refused_why(const char *model_type);

/* Whether a null (or NaN, which the reader reads as null) given for the
 * config.json key hf is refused rather than read as the class default:
 * the keys a configuration class assigns as given, None included, and a
 * modeling file reads to build every layer. */
bool strata_model_config_null_refused(const char *hf);

#endif
