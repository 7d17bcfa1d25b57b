/*
 * fuzz_model_config.c: libFuzzer target for the Hugging Face config.json
 * reader (models/workload/model_config.c, `config=FILE` of the decoder
 * generators and of `strata serve --model`). The input is the file (a
 * memfd, fuzz_input.h). Oracle: no crash, leak, UB or hang; a refusal has
 * a message; every "key=value" of a loaded config names a key of the
 * model's table once and its value is one the table takes; the shape those
 * keys resolve to is counted (parameters, a step's flops) without UB, and
 * the serving model reads the same file.
 */
#include <string.h>
#include "fuzz_input.h"
#include "core/params.h"
#include "serve/serve_model.h"
#include "workload/model_config.h"

static const strata_param_def model_defs[] = {
    {"layers", STRATA_PARAM_INT, "2", "", NULL},
    {"d_model", STRATA_PARAM_INT, "64", "", NULL},
    {"heads", STRATA_PARAM_INT, "4", "", NULL},
    {"vocab", STRATA_PARAM_INT, "128", "", NULL},
    STRATA_MODEL_KEYS(STRATA_MODEL_PARAM_DEF){NULL, 0, NULL, NULL, NULL},
};

/* The loaded values through the model's parameter table, then resolved. */
static void use_values(const strata_model_config *c)
{
    GError *err = NULL;
    strata_params *p = strata_params_new("fuzz", model_defs, NULL, &err);
    if (!p)
        __builtin_trap();
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (const char *const *v = strata_model_config_values(c); *v; v++) {
        const char *eq = strchr(*v, '=');
        char *key = eq ? g_strndup(*v, (gsize)(eq - *v)) : NULL;
        if (!key || g_hash_table_contains(seen, key) || !strata_params_set(p, key, eq + 1, &err)) {
            fprintf(stderr, "model config: value '%s' is not one key of the table once: %s\n", *v,
                    err ? err->message : "repeated or no '='");
            abort();
        }
        g_hash_table_add(seen, key);
    }
    g_hash_table_destroy(seen);
    strata_model_shape s;
    if (strata_model_shape_of(p, "fuzz", &s, &err)) {
        double total = 0, active = 0;
        strata_model_shape_count(&s, 4096, &total, &active);
        (void)strata_model_step_flops(&s, 8, 4096, true);
        for (int64_t l = 0; l < s.layers && l < 64; l++)
            (void)strata_model_layer_is_moe(&s, l);
    } else if (err == NULL || err->message[0] == '\0') {
        __builtin_trap();
    }
    g_clear_error(&err);
    strata_params_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path);
    if (fd < 0)
        return 0;
    GError *err = NULL;
    strata_model_config *c = strata_model_config_load(path, &err);
    if (c) {
        (void)strata_model_config_family(c);
        use_values(c);
        strata_model_config_free(c);
        strata_serve_model m;
        if (strata_serve_model_from_config(&m, path, &err) && strata_serve_model_check(&m, path, &err)) {
            (void)strata_serve_kv_bytes_per_token(&m, 2);
            (void)strata_serve_model_params(&m);
            (void)strata_serve_weight_bytes(&m, 2);
        }
    } else if (err == NULL || err->message[0] == '\0') {
        __builtin_trap(); /* a refusal says why */
    }
    g_clear_error(&err);
    close(fd);
    return 0;
}
