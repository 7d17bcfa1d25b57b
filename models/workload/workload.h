/*
 * workload.h: trace generators (`strata gen NAME key=value...`), chosen by
 * name. Each generator declares its parameters (core/params.h) and produces
 * an op stream: a tagged trace whose computes carry flops and operands.
 * The table is one NULL-terminated static array in workload.c.
 */
#ifndef STRATA_WORKLOAD_H
#define STRATA_WORKLOAD_H

#include "core/params.h"
#include "trace/source.h"

/* A named set of parameter values, e.g. the shapes of a published program. */
typedef struct strata_workload_preset {
    const char *name;
    const char *const *values; /* "key=value", NULL-terminated */
} strata_workload_preset;

typedef struct strata_workload_type {
    const char *name;
    const char *summary;
    const strata_param_def *params;
    /* Returns a source over the generated ops (p validated against params). */
    strata_source *(*generate)(const strata_params *p, GError **err);
    /* NULL, or the values a `preset=NAME` parameter stands for
     * (NULL-terminated by name); parameters given explicitly win. */
    const strata_workload_preset *presets;
    /* NULL, or the generator's own checks alone (what generate refuses
     * for p, this refuses with the same error), without building
     * anything: generators that build a graph before streaming it give
     * one, so that validating a sweep's values stays cheap. */
    bool (*check)(const strata_params *p, GError **err);
} strata_workload_type;

const strata_workload_type *const *strata_workload_types(void);
const strata_workload_type *strata_workload_type_find(const char *name);
char *strata_workload_type_names(void); /* g_free */

/* The parameters of type from "k=v,..." (kv may be NULL), with the values
 * of its preset for the parameters kv does not give. */
strata_params *strata_workload_params(const strata_workload_type *type, const char *kv, GError **err);
/* The parameters of type from n "key=value" args, as strata_workload_params
 * does; an arg's value may hold commas (mesh=data:4,model:2). */
strata_params *strata_workload_params_args(const strata_workload_type *type, int n, const char *const *args,
                                           GError **err);
/* name plus "k=v" args (NULL-terminated): validates and generates. */
strata_source *strata_workload_generate(const char *name, const char *const *args, GError **err);
/* The same validation alone: true when strata_workload_generate() would
 * accept these args (its type's check, else generating and freeing). */
bool strata_workload_check(const char *name, const char *const *args, GError **err);

/* For generators: the dtype names a `dtype=` parameter accepts (choices),
 * and the dtype it names. */
extern const char *const strata_workload_dtype_choices[];
strata_dtype strata_workload_dtype(const strata_params *p, const char *name);
/* The declaration of such a parameter (a row of a generator's params):
 * NAME (dtype, param_dtype) takes one of strata_workload_dtype_choices,
 * DEFAULT (NULL: unset) and read with strata_workload_dtype(p, NAME). */
#define STRATA_WORKLOAD_DTYPE_PARAM(name, default_value, description) \
    {name, STRATA_PARAM_STRING, default_value, description, strata_workload_dtype_choices}
/* The declaration of the `preset=` parameter of a generator with presets
 * (strata_workload_type.presets): default none; CHOICES are "none" and
 * the presets' names; DESCRIPTION says what each stands for, and the help
 * ends with the rule strata_workload_params applies. */
#define STRATA_WORKLOAD_PRESET_PARAM(description, choices) \
    {"preset", STRATA_PARAM_STRING, "none", description "; parameters given explicitly win", choices}
/* Checks that each named INT parameter is >= 1 (error names the workload). */
bool strata_workload_check_positive(const strata_params *p, const char *workload, const char *const *names,
                                    GError **err);

/* The most a repeat count that sets how many ops a generator writes may
 * be, for a streamed generator (collective's iters): a million ops of a
 * few tens of bytes of text each. Generators that hold a graph while they
 * generate bound their counts lower, by what that graph costs (each says
 * why in its file): work is bounded before anything is allocated. */
#define STRATA_WORKLOAD_MAX_COUNT 1000000
/* Checks that each named INT parameter, a repeat count, is between 1 and
 * max; the error names the workload, the parameter, the range and `why`
 * (NULL: nothing), e.g. "transformer: expected layers between 1 and 10000
 * (WHY), got 1000000". */
bool strata_workload_check_counts(const strata_params *p, const char *workload, const char *const *names,
                                  int64_t max, const char *why, GError **err);

/* *bytes = the storage of `elements` elements of `bits` bits each, rounded
 * up to whole bytes; false (nothing set) when it does not fit in 64 bits. */
bool strata_workload_bytes(uint64_t elements, unsigned bits, uint64_t *bytes);
/* Checks that each size in `products` fits in 64 bits. A product is text
 * "a*b*...": each factor an INT parameter's name or a decimal constant; the
 * size is the product times one element of dtype. The error names the
 * factors and their values, e.g. "scan-mlp: batch x dim x 2 bytes
 * overflows 64 bits (batch=4294967296, dim=4294967296)". */
bool strata_workload_check_sizes(const strata_params *p, const char *workload, const char *const *products,
                                 strata_dtype dtype, GError **err);

#endif
