/*
 * test_hardening_twentyfifth.c: the twenty-fifth hardening pass (wave 45;
 * docs/reliability.md, "The twenty-fifth pass"): the last wave's leftovers
 * (serve's duty filter read on the unit its --clock check reads, vLLM V1's
 * piecewise graphs under attention data parallelism, the NCCL key of
 * [network]), then a new user's hunt (config.json nulls). Each refused row
 * was taken on the base (main at the wave's start, b6c839f6) at exit 0 with
 * another figure, or read as a default; the rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include <math.h>
#include <string.h>
#include "hardening_rows.h"
#include "core/error.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"
#include "serve/serve_piecewise.h"

/* d.ini: h100.ini (its sm unit 0: peak 1830 MHz, sustained 1455 MHz, the duty rule) and a unit 1 (aux) clocked
 * at 1830 MHz peak, 183 MHz sustained: a floor of 0.1 no step runs on. */
#define AUX_SLOW "cp \"$H/h100.ini\" d.ini; printf '\\n[compute aux]\\nflops = 1TFLOP/s\\noperands = hbm\\n" \
                 "matrix = systolic\\nside = 128\\npeak_clock = 1830MHz\\nsustained_clock = 183MHz\\n' >> d.ini; "
/* serve, summary on standard output, of 64 requests of 512 + 64 tokens at once on llama-3-8b, on the file given
 * under --clock duty: back-to-back steps for 1.3 s, 26 filter time constants (clock_response 0.05 s), so the
 * filtered duty passes clock_free_duty and the clock reaches its floor. */
#define SERVE_DUTY(hw) "\"$S\" serve --hw " hw " --model llama-3-8b --poisson n=64,rate=0,prompt=512,output=64 " \
                       "--clock duty "

/* serve's --clock check and its ratio read unit 0, the unit every step runs
 * on (STRATA_SERVE_UNIT), but the duty filter took its floor from
 * strata_hw_sustained_ratio, the least sustained / peak over every unit:
 * on d.ini the clock fell to unit 1's 183 / 1830 = 0.100 ("x 0.133 of the
 * peak's rates on average, least 0.100") while the run's sustained rates
 * were unit 0's 1455 / 1830 = 0.795. The filter now reads unit 0's ratio:
 * its least is the floor, 0.795, as on h100.ini alone. */
STRATA_ROWS_TEST(serve_duty_floor_read_on_the_unit_it_runs_on,
    {AUX_SLOW SERVE_DUTY("d.ini") "| grep -q 'least 0.795, sustained 0.795'", 0, NULL},
    {AUX_SLOW SERVE_DUTY("d.ini") "> a; " SERVE_DUTY("\"$H/h100.ini\"") "> b; grep '^clock' a > ca; "
     "grep '^clock' b > cb; cmp ca cb", 0, NULL},
)

/* vLLM V1 under attention DP: each rank's model runner tests its own
 * scheduled tokens against its largest captured size (serve_piecewise.c
 * cites gpu_model_runner.py at 0.10.1.1). A rank of ceil(T / dp) tokens
 * replays graphs exactly where T <= dp x capture. */
START_TEST(piecewise_step_limit_by_hand)
{
    ck_assert_uint_eq(strata_serve_piecewise_step_limit(512, 1), 512);  /* no DP: the size itself */
    ck_assert_uint_eq(strata_serve_piecewise_step_limit(512, 8), 4096); /* 8 ranks of 512 */
    ck_assert_uint_eq(strata_serve_piecewise_step_limit(4, 2), 8);      /* 8 tokens: 4 a rank, replayed */
    ck_assert_uint_eq(strata_serve_piecewise_step_limit(4, 0), 4);      /* 0 ranks read as none */
    /* no overflow at the largest list (2^20) and 2^16 ranks */
    ck_assert_uint_eq(strata_serve_piecewise_step_limit(1u << 20, 1u << 16), (uint64_t)1 << 36);
}
END_TEST

/* A two-layer model of 256 hidden, 4 heads (2 KV), at TP 2, c.json. */
#define TINY "printf '{\"model_type\": \"llama\", \"hidden_size\": 256, \"num_attention_heads\": 4, " \
             "\"num_key_value_heads\": 2, \"intermediate_size\": 512, \"num_hidden_layers\": 2, " \
             "\"vocab_size\": 1000}\\n' > c.json; "
/* 8 requests of 4 + 32 tokens at once on c.json at TP 2 under attention DP, graphs captured at 1, 2, 4. */
#define SERVE_TINY_DP TINY "\"$S\" serve --hw \"$H/dgx-h100.ini\" --config c.json --tp 2 --attention-dp " \
                      "--poisson n=8,rate=0,prompt=4,output=32,dist=fixed --cuda-graph-batch-sizes 1,2,4 "

/* A decode step of the 8 requests is 4 tokens a rank, within the captured
 * 4: the piecewise chain, 2 layers x 28 us + 10 us = 66 us
 * (test_serve_piecewise.c chain_by_hand's rule), not the Inductor chain of
 * a step above the sizes, 2 x 158 us (TP 2's all-reduces) + 56 us = 372
 * us, that the 8 summed tokens chose: TPOT 0.38 ms on the base, under
 * 0.2 ms now (0.08). */
STRATA_ROWS_TEST(piecewise_attention_dp_reads_a_ranks_tokens,
    {SERVE_TINY_DP "| awk '/TPOT/ {seen = 1; bad = !($3 < 0.2)} END {exit !seen || bad}'", 0, NULL},
)

/* Two nodes of 8 GPUs, one leaf per host, 4 uplinks under ECMP (test_hw_network.c's cluster). */
#define CLUSTER "[hardware]\nname = c\ndevices = 16\ndevices_per_host = 8\n" \
                "[memory hbm]\nkind = device\ncapacity = 80GB\nbandwidth = 3TB/s\n" \
                "[memory host]\nkind = host\ncapacity = 1TB\nbandwidth = 500GB/s\n" \
                "[link pcie]\nbetween = host hbm\nbandwidth = 50GB/s\n" \
                "[interconnect nvlink]\ntopology = switch\nbandwidth = 450GB/s\nlatency = 0.5us\ndomain = 8\n" \
                "[network ib]\nbandwidth = 50GB/s\nlatency = 1us\nhosts_per_leaf = 1\nuplinks = 4\nrouting = ecmp\n"

/* NCCL_IB_QPS_PER_CONNECTION is nccl_ib_qps_per_connection, as the nccl_*
 * keys name NCCL's settings; qps_per_connection, its old name, reads the
 * same. 2 QPs: 2 keys on 4 uplinks, apart in 12 of 16 placements (a flow
 * 1/2 of its uplink), together in 4 (1/4): 3/4 x 1/2 + 1/4 x 1/4 = 7/16 of
 * 400 GB/s = 175 GB/s (test_hw_network.c's derivation). Both names at
 * once: refused. */
START_TEST(nccl_ib_qps_per_connection_and_its_old_name)
{
    static const char *const names[] = {"nccl_ib_qps_per_connection", "qps_per_connection"};
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        char *text = g_strdup_printf(CLUSTER "%s = 2\n", names[i]);
        strata_hw *hw = strata_placement_hw_load_data(text, "c.ini", NULL, &err);
        ck_assert_msg(hw, "%s", err ? err->message : "");
        ck_assert_msg(fabs(strata_test_link(hw, "ib.up0")->bandwidth - 175e9) < 1, "%s", names[i]);
        strata_hw_free(hw);
        g_free(text);
    }
    strata_hw *hw = strata_placement_hw_load_data(CLUSTER "qps_per_connection = 2\nnccl_ib_qps_per_connection = 2\n",
                                                  "c.ini", NULL, &err);
    ck_assert_ptr_null(hw);
    ck_assert_msg(strstr(err->message, "c.ini:") && strstr(err->message, "[network ib] qps_per_connection: expected "
                  "nccl_ib_qps_per_connection or its old name qps_per_connection, not both"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

/* h100-2x8-ib.ini's network under ECMP, run on a one-op trace (the key follows). */
#define RUN_IB HR_TRACE "\"$S\" run -q --hw \"$H/h100-2x8-ib.ini\" --trace t.trace --set network.ib.routing=ecmp " \
               "--set network.ib.uplinks=4 --set network.ib.hosts_per_leaf=1 --set network.ib."

/* The old name says so on standard error, naming the file and the new name. */
STRATA_ROWS_TEST(qps_per_connection_old_name_noted,
    {RUN_IB "qps_per_connection=2", 0, "h100-2x8-ib.ini (override network.ib.qps_per_connection=2): [network ib] "
     "qps_per_connection is deprecated: write nccl_ib_qps_per_connection"},
    {RUN_IB "nccl_ib_qps_per_connection=2 2> e; test ! -s e", 0, NULL},
    {RUN_IB "nccl_ib_qps_per_connection=17", 2, "[network ib] nccl_ib_qps_per_connection: expected a whole number "
     "from 1 to 16, got '17'"},
)

/* c.json: a llama config.json of llama-3-8b's shape with num_hidden_layers's value given, served on
 * h100.ini. */
#define CONFIG_LAYERS(value) "printf '{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_attention_heads\": " \
                             "32, \"intermediate_size\": 14336, \"vocab_size\": 128256, \"num_hidden_layers\": " \
                             value "}\\n' > c.json; " HR_SERVE("h100.ini") "--config c.json --poisson n=2 "
/* The same with hidden_size's value given (num_hidden_layers 32). */
#define CONFIG_HIDDEN(value) "printf '{\"model_type\": \"llama\", \"num_hidden_layers\": 32, " \
                             "\"num_attention_heads\": 32, \"intermediate_size\": 14336, \"vocab_size\": 128256, " \
                             "\"hidden_size\": " value "}\\n' > c.json; " HR_SERVE("h100.ini") \
                             "--config c.json --poisson n=2 "

/* A null shape key was read as the class's default ("the class default"):
 * "hidden_size": null served a 4096-wide model, "num_hidden_layers": NaN
 * (Python's json reads it; strata reads it as null) 32 layers, LlamaConfig's
 * defaults, at exit 0. transformers keeps the None (LlamaConfig.__init__
 * assigns them as given: model_config_refused.c) and the model cannot be
 * built, so vLLM cannot serve the file. num_key_value_heads and head_dim,
 * which the class maps from None, stay read as their default. */
STRATA_ROWS_TEST(config_null_shape_keys_refused,
    {CONFIG_HIDDEN("null"), 2, "c.json: key 'hidden_size': expected a positive integer (at most 2^31 - 1; "
     "transformers' configuration class keeps a null, its default being for a key the file leaves out, and the model "
     "cannot be built), got null"},
    {CONFIG_LAYERS("null"), 2, "c.json: key 'num_hidden_layers': expected a positive integer (at most 2^31 - 1; "},
    {CONFIG_LAYERS("NaN"), 2, "key 'num_hidden_layers': expected a positive integer"},
    /* what stays taken: the value, the key left out (the class default), the keys whose None the class maps */
    {CONFIG_LAYERS("32"), 0, NULL},
    {CONFIG_HIDDEN("4096, \"num_key_value_heads\": null, \"head_dim\": null"), 0, NULL},
)

/* c.json: a Gemma 3 config.json whose text_config gives the keys given (a 2-layer Gemma 3 text model's shape). */
#define GEMMA3(more) "printf '{\"model_type\": \"gemma3\", \"text_config\": {\"hidden_size\": 256, " \
                     "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_key_value_heads\": 1, " \
                     "\"head_dim\": 64, \"intermediate_size\": 512, \"vocab_size\": 1000" more "}}\\n' > c.json; " \
                     HR_SERVE("h100.ini") "--config c.json --poisson n=2 "

/* Gemma3Config builds its text_config as Gemma3TextConfig whatever model_type
 * it gives (Llama4Config as Llama4TextConfig): a text_config saying
 * "llama" was read as a Llama (untied head, two norms a layer, no q/k
 * norms, no window) at exit 0, and one saying none was refused as a file
 * without model_type. Now another model_type is refused, naming the
 * class, and none reads as the class. Gemma 3 text's parameters, by hand:
 * the tied embedding 1,000 x 256 = 256,000; a layer's q and o 2 x 256 x 4
 * x 64 = 131,072, k and v 2 x 256 x 64 = 32,768, the GeGLU MLP 3 x 256 x
 * 512 = 393,216, four norms 4 x 256 = 1,024, the q and k norms 2 x 64 =
 * 128: 558,208, twice; the final norm 256: 1,372,672. */
#define GEMMA3_PARAMS "--json out.json && grep -q '\"params\" : 1372672.0' out.json"
STRATA_ROWS_TEST(nested_config_read_as_its_class,
    {GEMMA3(", \"model_type\": \"llama\""), 2, "c.json: key 'text_config.model_type': expected gemma3_text or "
     "none (the outer class builds its text_config as that class)"},
    {GEMMA3("") GEMMA3_PARAMS, 0, NULL},
    {GEMMA3(", \"model_type\": \"gemma3_text\"") GEMMA3_PARAMS, 0, NULL},
)

/* `--set name=` named the model "" (the summary's "model            (8.03 B
 * params)", the JSON's "name": "") at exit 0, and a model file's empty
 * `name =` took the file's name as if the key were left out: an empty
 * value is refused as any other key's is. */
STRATA_ROWS_TEST(empty_model_name_refused,
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --set name=", 2, "--set: name: expected a name (text), "
     "got ''"},
    {"printf 'name =\\nlayers = 2\\nhidden = 64\\nheads = 4\\nkv_heads = 4\\nhead_dim = 16\\nintermediate = 128\\n"
     "vocab = 100\\n' > m.model; " HR_SERVE("h100.ini") "--model-file m.model --poisson n=2", 2, "m.model:1: name: "
     "expected a name (text), got ''"},
    /* what stays taken: a name, and no name key (the file's name) */
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --set name=x --json out.json && grep -q '\"name\" : "
     "\"x\"' out.json", 0, NULL},
    {"printf 'layers = 2\\nhidden = 64\\nheads = 4\\nkv_heads = 4\\nhead_dim = 16\\nintermediate = 128\\n"
     "vocab = 100\\n' > m.model; " HR_SERVE("h100.ini") "--model-file m.model --poisson n=2 --json out.json && "
     "grep -q '\"name\" : \"m.model\"' out.json", 0, NULL},
)

/* A published case whose hw = or trace = names a folder passed the
 * readable-file check (access R_OK) and was refused by the reader with no
 * case file, line or key ("cannot read hardware file: Failed to open file
 * “./.”: Is a directory"); now as a missing file is. */
#define CASE_HW(hw, trace) "printf '[case a]\\nsource = x\\nsetup = x\\nmeasured = 9.6GB/s\\nmetric = bandwidth\\n" \
                           "group = host-link\\nbytes = 32000000\\nhw = " hw "\\ntrace = " trace "\\n' > c.ini; " \
                           HR_TRACE "\"$S\" validate --published c.ini"
STRATA_ROWS_TEST(published_case_folder_refused_at_its_line,
    {CASE_HW(".", "t.trace"), 2, "c.ini:8: [case a] hw: cannot read ./. (Is a directory)"},
    {"mkdir d; " CASE_HW("'\"$H/v100.ini\"'", "d"), 2, "c.ini:9: [case a] trace: cannot read ./d (Is a directory)"},
)

int main(void)
{
    const TTest *const tests[] = {
        serve_duty_floor_read_on_the_unit_it_runs_on,
        piecewise_step_limit_by_hand,
        piecewise_attention_dp_reads_a_ranks_tokens,
        nccl_ib_qps_per_connection_and_its_old_name,
        qps_per_connection_old_name_noted,
        config_null_shape_keys_refused,
        nested_config_read_as_its_class,
        empty_model_name_refused,
        published_case_folder_refused_at_its_line,
        NULL,
    };
    return strata_hardening_main("twentyfifth", tests);
}
