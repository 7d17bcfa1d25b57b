/*
 * test_hardening_thirteenth.c: the thirteenth hardening pass (wave 33;
 * docs/reliability.md, "The thirteenth pass"), a row per case: each refused
 * row was a silent default at exit 0; the rows at 0 are what stays taken.
 *
 *  - the twelfth pass's leftovers: a config.json naming a key twice; the
 *    lengths rope_scaling scales (yarn, linear, dynamic) not derived for
 *    max_model_len; a trace cut inside its last line run at exit 0;
 *  - what the pass found besides (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

/* A llama config.json c.json of one line a key (the keys given after the
 * shape, each "\\n  \"key\": value," with its comma); the shape is lines 2
 * to 7, the keys given from line 8. */
#define LINES_CONFIG(more) "printf '{\\n  \"model_type\": \"llama\",\\n  \"hidden_size\": 64,\\n"                   \
                           "  \"num_attention_heads\": 4,\\n  \"intermediate_size\": 128,\\n"                       \
                           "  \"num_hidden_layers\": 1,\\n  \"vocab_size\": 100" more "\\n}\\n' > c.json; "
#define GEN_CONFIG HR_GEN_CONFIG
#define SERVE_CONFIG HR_SERVE_LENGTHS

/* A config.json naming a key twice in one object read the later value, as
 * Python's json.load (and so transformers) does, with no word: a key added
 * by hand where the file had it already. json-glib keeps no trace of the
 * first, so a pre-scan of the text (json_dup_key.h) refuses the repeat with
 * both lines. */
STRATA_ROWS_TEST(config_keys_once,
    {LINES_CONFIG(",\\n  \"hidden_size\": 128") GEN_CONFIG, 2,
     "c.json:8: key 'hidden_size': given twice in one object (first at line 3): expected each key once (json.load, "
     "and so transformers, would take the later value and say nothing); remove one"},
    {LINES_CONFIG(",\\n  \"hidden_size\": 128") SERVE_CONFIG, 2, "c.json:8: key 'hidden_size': given twice"},
    /* inside a nested object; a name written with an escape is the same name */
    {LINES_CONFIG(",\\n  \"rope_scaling\": {\"rope_type\": \"llama3\",\\n    \"factor\": 8.0, \"factor\": 2.0}")
     GEN_CONFIG, 2, "c.json:9: key 'factor': given twice in one object (first at line 9)"},
    {LINES_CONFIG(",\\n  \"hidden\\\\u005fsize\": 64") GEN_CONFIG, 2,
     "c.json:8: key 'hidden_size': given twice in one object (first at line 3)"},
    /* what stays taken: one name in two objects, and in an array's objects */
    {LINES_CONFIG(",\\n  \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0},\\n  \"factor\": 1,\\n"
                  "  \"layer_types\": null,\\n  \"x\": [{\"a\": 1}, {\"a\": 2}]") GEN_CONFIG, 0, NULL},
)

#define RS_CONFIG(scaling) HR_CONFIG(", \"max_position_embeddings\": 1024, \"rope_scaling\": " scaling)

/* rope_scaling's scaled lengths were not derived: a file with yarn, linear
 * or dynamic scaling bound nothing (strata's 8192), where vLLM derives
 * max_model_len as max_position_embeddings x factor, yarn's as
 * original_max_position_embeddings x factor (vllm-project/vllm@32e7db25,
 * v0.6.0, and ROCm/vllm@37126497, 0.9.0.1, vllm/config.py
 * _get_and_verify_max_len), and refuses a rope_scaling it cannot read.
 * By hand: yarn 1024 x 2 = 2048, so the 3,000-token prompt (+ 8 out) is
 * rejected; dynamic 1024 x 2.5 = 2560; linear 1024 x 1.5 = 1536. */
STRATA_ROWS_TEST(rope_scaling_derives_the_length,
    {RS_CONFIG("{\"rope_type\": \"yarn\", \"factor\": 2.0, \"original_max_position_embeddings\": 1024}")
     SERVE_CONFIG "&& grep -q '\"rejected\" : 1' out.json && grep -q '\"completed\" : 1' out.json", 0, NULL},
    {RS_CONFIG("{\"type\": \"dynamic\", \"factor\": 2.5}") SERVE_CONFIG "--set max_model_len=2561", 2,
     "--set max_model_len=2561: c.json gives a derived max_model_len of 2560"},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"factor\": 1.5}") SERVE_CONFIG "--set max_model_len=1537", 2,
     "expected at most 1536"},
    /* "default" (and mrope) defines no factor: 1.0, as 0.9.0.1 reads it */
    {RS_CONFIG("{\"rope_type\": \"default\"}") SERVE_CONFIG "--set max_model_len=1025", 2, "expected at most 1024"},
    /* what vLLM refuses */
    {RS_CONFIG("{\"rope_type\": \"yarn\", \"factor\": 4.0}") SERVE_CONFIG, 2,
     "c.json: key 'rope_scaling': rope type 'yarn': expected 'original_max_position_embeddings' an integer from 1 to "
     "2^31 - 1 (vLLM derives the length as it times the factor)"},
    {RS_CONFIG("{\"rope_type\": \"dynamic\"}") SERVE_CONFIG, 2,
     "c.json: key 'rope_scaling': rope type 'dynamic' scales the length by its factor: expected 'factor' a positive "
     "finite number, got none"},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"factor\": 0}") SERVE_CONFIG, 2, "got another value"},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"factor\": \"2\"}") SERVE_CONFIG, 2, "got another value"},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"factor\": NaN}") SERVE_CONFIG, 2, "got another value"},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"type\": \"dynamic\", \"factor\": 2}") SERVE_CONFIG, 2,
     "c.json: key 'rope_scaling': expected one rope type, as a string in 'type' or 'rope_type' (or both the same), "
     "got two that differ"},
    {RS_CONFIG("{\"factor\": 2}") SERVE_CONFIG, 2, "got neither key"},
    {RS_CONFIG("[2]") SERVE_CONFIG, 2, "c.json: key 'rope_scaling': expected an object or null"},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"factor\": 0.0001}") SERVE_CONFIG, 2,
     "factor 0.0001 makes the derived length 1024 x 0.0001 below 1 token"},
    /* what stays taken: llama3 and longrope unscaled; the derived length itself; a training step (gen) reads
     * no length; Gemma 3's length, which 0.9.0.1 holds scaled already */
    {RS_CONFIG("{\"rope_type\": \"llama3\", \"factor\": 8.0}") SERVE_CONFIG "--set max_model_len=1024", 0, NULL},
    {RS_CONFIG("{\"rope_type\": \"linear\", \"factor\": 1.5}") SERVE_CONFIG "--set max_model_len=1536", 0, NULL},
    {RS_CONFIG("{\"rope_type\": \"yarn\", \"factor\": 4.0}") GEN_CONFIG, 0, NULL},
    {"printf '{\"model_type\": \"gemma3_text\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"num_key_value_heads\": 4, \"head_dim\": 16, \"intermediate_size\": 128, \"num_hidden_layers\": 2, "
     "\"vocab_size\": 100, \"max_position_embeddings\": 1024, \"rope_scaling\": {\"rope_type\": \"linear\", "
     "\"factor\": 8.0}}\\n' > c.json; " SERVE_CONFIG "--set max_model_len=1025", 2, "expected at most 1024"},
)

#define RUN_TRACE(text) "printf '" text "' > t.trace; \"$S\" run -q --hw \"$H/h100.ini\" --trace t.trace " \
                        "--json out.json"

/* A trace cut inside its last line (no newline after it) ran at exit 0:
 * "alloc a 1MiB" cut to "alloc a 1" reads as a buffer of one byte, "compute
 * k time=1us in=a out=a" cut to "... in=a" as a compute writing nothing.
 * The format's ops are lines (traces/FORMAT.md), each ending with a
 * newline: a last op with none is refused at its line. */
STRATA_ROWS_TEST(trace_cut_inside_a_line,
    {RUN_TRACE("strata-trace 1\\nalloc a 1MiB\\ncompute k time=1us in=a\\nfree a"), 2,
     "t.trace:4: expected the line to end with a newline, got the end of the file inside it (a trace cut short?); "
     "every line of a strata trace ends with one"},
    {RUN_TRACE("strata-trace 1\\nalloc a 1"), 2, "t.trace:2: expected the line to end with a newline"},
    {"printf 'strata-trace 1\\nalloc a 1MiB\\nfree a' | \"$S\" run -q --hw \"$H/h100.ini\" --trace - --json out.json",
     2, ":3: expected the line to end with a newline"},
    {"printf 'strata-trace 1\\nalloc a 1MiB\\nfree a' > t.trace; \"$S\" alloc --trace t.trace --allocator caching "
     "-c 1GiB --json out.json", 2, "t.trace:3: expected the line to end with a newline"},
    /* what stays taken: a last line that is a comment or blanks; CRLF lines; a buffer never freed (a program's
     * outputs are live at its end, as XLA's are: the format asks no free) */
    {RUN_TRACE("strata-trace 1\\nalloc a 1MiB\\nfree a\\n# end"), 0, NULL},
    {RUN_TRACE("strata-trace 1\\nalloc a 1MiB\\nfree a\\n  "), 0, NULL},
    {RUN_TRACE("strata-trace 1\\r\\nalloc a 1MiB\\r\\nfree a\\r\\n"), 0, NULL},
    {RUN_TRACE("strata-trace 1\\nalloc a 1MiB\\n") " && grep -q '\"status\" : \"ok\"' out.json", 0, NULL},
)

#define MM(text) "printf '" text "' > m.csv; \"$S\" import minimalloc m.csv -o out.trace"

/* Found by the hunt: import minimalloc refused a CSV that begins with a
 * UTF-8 byte-order mark (Excel's "CSV UTF-8", pandas' encoding="utf-8-sig")
 * as a header it printed as the right one ("got 'id,lower,upper,size'",
 * the mark invisible), where the trace, hardware and request readers skip
 * the mark; and it wrote an id that is not UTF-8 into the trace at exit 0,
 * a trace every strata reader then refuses ("expected UTF-8 text"). */
STRATA_ROWS_TEST(minimalloc_text,
    {MM("\\357\\273\\277id,lower,upper,size\\nb0,0,10,64\\n") " && grep -q '^alloc b0 64' out.trace", 0, NULL},
    {MM("id,lower,upper,size\\nb\\3770,0,10,64\\n"), 2,
     "m.csv:2: expected UTF-8 text, got bytes that are not UTF-8 (0xff at column 2)"},
    {MM("\\357\\273\\277id,lower,upper,size\\nb0,0,10,64\\n\\377\\n"), 2, "m.csv:3: expected UTF-8 text"},
    /* what stays taken: a name in UTF-8 beyond ASCII */
    {MM("id,lower,upper,size\\nb\\303\\2440,0,10,64\\n"), 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        config_keys_once,
        rope_scaling_derives_the_length,
        trace_cut_inside_a_line,
        minimalloc_text,
        NULL,
    };
    return strata_hardening_main("thirteenth", tests);
}
