/*
 * model_config_refused.c: what the config.json reader refuses by name
 * (model_config_refused.h).
 */
#include "workload/model_config_refused.h"
#include <glib.h>
#include <string.h>

/* Architectures strata knows it cannot model: refused by model_type, with what it lacks. */
static const struct {
    const char *model_type, *why;
} refused[] = {
    {"qwen3_next", "a linear-attention hybrid (layer_types 'linear_attention': Gated DeltaNet in 3 layers of 4)"},
    {"qwen3_5", "a linear-attention hybrid (layer_types 'linear_attention': Gated DeltaNet in 3 layers of 4)"},
    {"qwen3_5_moe", "a linear-attention hybrid (layer_types 'linear_attention': Gated DeltaNet in 3 layers of 4)"},
    {"nemotron_h", "a Mamba-2 hybrid (hybrid_override_pattern 'M' layers)"},
    {"deepseek_v32", "DeepSeek sparse attention (index_topk: a lightning indexer picks the keys each query sees)"},
    {"nemotron-nas", "a different block in every layer (block_configs)"},
    {"mimo_v2_flash", "a hybrid of sliding-window and full-attention layers with their own head counts "
                      "(hybrid_layer_pattern; swa_num_key_value_heads 8, num_key_value_heads 4) and a v_head_dim "
                      "of its own (128, head_dim 192)"},
};

const char *strata_model_config_refused_why(const char *model_type)
{
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
        if (strcmp(refused[i].model_type, model_type) == 0)
            return refused[i].why;
    return NULL;
}

/* LlamaConfig.__init__ assigns vocab_size, hidden_size, num_hidden_layers
 * and num_attention_heads as given (huggingface/transformers@4bdeeced,
 * src/transformers/models/llama/configuration_llama.py: `self.hidden_size
 * = hidden_size`, ...): a null in the file is None in the config, and
 * LlamaModel builds its embedding, its layers and their projections from
 * them, so the load fails (the class's default, 4096 hidden, is for a key
 * the file leaves out). num_key_value_heads and head_dim are mapped from
 * None (to num_attention_heads, and to hidden_size / heads), and stay read
 * as the default. The other classes model_config.c reads assign these four
 * the same way (read for LlamaConfig; ESTIMATE for the others, not each
 * read line by line). */
bool strata_model_config_null_refused(const char *hf)
{
    static const char *const shape[] = {"num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size",
                                        NULL};
    return g_strv_contains(shape, hf);
}
