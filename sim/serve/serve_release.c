/*
 * serve_release.c: serve_release.h's table of vLLM release boundaries and the option that reads it.
 *
 * Each row is a boundary: from release `from` on (until the knob's next row) the knob takes `row`. Sources:
 *
 * engine
 *   0.4.0  vllm-v0.5: every step's host work serial with the GPU (serve_engine.c's vllm-v0.5 row: vLLM 0.5.x's
 *          figures, #6854 and #6913; its eager chain `vllm-0.4` and fused-MoE files `vllm-0.4.2` are 0.4's).
 *   0.6.0  vllm-v0: the asynchronous output processor (vllm-project/vllm PR #7049, released in v0.6.0; docs/
 *          serving.md's engine table) and multi-step scheduling (PR #7000, v0.6.0).
 *   0.8.0  vLLM V1, the default row (no --engine): v0.8.0 (2025-03-18) turns V1 on by default (VLLM_USE_V1,
 *          envs.py; PR #13726 "[V1] V1 Enablement Oracle", 2025-03-05; docs/source/getting_started/
 *          v1_user_guide.md: "V1 is now enabled by default for all supported use cases ... To disable V1, please
 *          set the environment variable as: VLLM_USE_V1=0"). The
 *          oracle's fallbacks to V0 in 0.8-0.10 (--num-scheduler-steps, an FP8 KV cache on ROCm: arg_utils.py
 *          _is_v1_supported_oracle) are the case's to name (--engine vllm-v0), not the release's.
 * fp8_linear_rocm (serve_fp8_linear.c cites each row's code)
 *   0.4.0  vllm-0.6-rocm-scaled-mm: upstream 0.6.2's apply_fp8_linear torch._scaled_mm branch, and the fork's images
 *          v0.4.3_rocm (@c24a4955) and v0.6.0_rocm (@80325198), which quantize every Linear with 17-row padding.
 *          (The fork's v0.6.1_rocm @a67b65ba to v0.6.2+rocm @030374b3 wrote the norms' and activation's outputs
 *          in FP8 but had no attn_fp8_out: no row of its own; they take this one.)
 *   0.6.3  vllm-rocm-fork-0.6: ROCm/vllm v0.6.3+rocm (@2a3f4618) to 0.6.6 (@13434bd9, 2025-02-06): the norms,
 *          activation and attention write FP8, the LM head through wvSplitK at 1-4 rows (tuned_gemm.py
 *          apply_skinny), FP8 GEMMs on hipBLASLt at every row count.
 *   0.7.3  vllm-rocm-fork: ROCm/vllm PR #411 (955ba648, 2025-02-18: wvSplitKQ at one row), first in the
 *          v0.7.3+rocm image (@b309ea79); 0.8.x's (@a1c35e76, @b8498bc4) the same.
 * chat_template_parse (serve_chat.c cites each file and line)
 *   0.11.0 only: apply_hf_chat_template parses the chat template on every request (resolve_chat_template_kwargs,
 *          vllm-project/vllm PR #25794); 0.10.2's wheel has no such call, 0.11.1's caches it (lru_cache).
 *          Before PR #20065 (2025-06) _detect_content_format parsed it every request too: not tabled (those
 *          releases' sources not read here).
 * async_scheduling
 *   0.14.0 on: vllm-project/vllm PR #27614 (issue #27679's "Async Scheduling Plan"), async scheduling on by default
 *          from 0.14.0 (docs/serving.md, "vLLM V1's async scheduling", wave 37).
 *
 * On ROCm hardware the fp8_linear_rocm rows are the ROCm fork's images (ROCm/vllm, rocm/vllm-dev), as
 * vllm-v0's own ROCm default (vllm-rocm-fork) is: a release does not tell the fork from upstream vLLM built for
 * ROCm, which takes --fp8-linear-rocm vllm-0.6-rocm-scaled-mm by name (serve_fp8_linear.c).
 *
 * The releases the table knows: 0.4.0 to 0.19.x (the newest tree whose source a row read: the 0.19.1 wheel's
 * config/vllm.py, read for async scheduling). Older: refused (no row read). Newer: the newest rows, with a note.
 */
#include "serve/serve_release.h"
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "serve/serve_engine.h"
#include "serve/serve_fp8_linear.h"

typedef struct release_row {
    const char *knob;
    strata_serve_release from; /* the first release that ran row */
    const char *row;           /* NULL: none (engine: vLLM V1's default row) */
} release_row;

static const release_row rows[] = {
    {"engine", {0, 4, 0}, "vllm-v0.5"},
    {"engine", {0, 6, 0}, "vllm-v0"},     /* PR #7049, #7000 */
    {"engine", {0, 8, 0}, NULL},          /* V1 by default: PR #13726, v0.8.0 */
    {"fp8_linear_rocm", {0, 4, 0}, "vllm-0.6-rocm-scaled-mm"},
    {"fp8_linear_rocm", {0, 6, 3}, "vllm-rocm-fork-0.6"}, /* ROCm/vllm v0.6.3+rocm @2a3f4618 */
    {"fp8_linear_rocm", {0, 7, 3}, "vllm-rocm-fork"},     /* ROCm/vllm PR #411, 955ba648 */
    {"async_scheduling", {0, 4, 0}, NULL},
    {"async_scheduling", {0, 14, 0}, "on"}, /* PR #27614 */
    {"chat_template_parse", {0, 4, 0}, NULL},
    {"chat_template_parse", {0, 11, 0}, "per-request"}, /* PR #25794; cached in 0.11.1 (serve_chat.c) */
    {"chat_template_parse", {0, 11, 1}, NULL},
    {"mla_pad_v", {0, 4, 0}, "always"}, /* v0.7.3 attention/backends/mla/utils.py:497-498; v0.8.4 wheel: V0's
                                         * attention/backends/mla/common.py:1181-1183, 1257-1258, V1's :751-753, :808 */
    {"mla_pad_v", {0, 8, 5}, "unless-fa3-hopper"}, /* v0.8.5 wheel: V1's common.py:650-652, V0's :1077 (_pad_v) */
    {NULL, {0, 0, 0}, NULL},
};

static const strata_serve_release oldest = {0, 4, 0}, newest = {0, 19, UINT32_MAX}; /* 0.4.0 to 0.19.x */
#define KNOWN_RANGE "vLLM 0.4.0 to 0.19.x"

static int release_cmp(const strata_serve_release *a, const strata_serve_release *b)
{
    uint32_t x[3] = {a->major, a->minor, a->patch}, y[3] = {b->major, b->minor, b->patch};
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* A decimal number of at most 6 digits at *p (advanced past it), or false. */
static bool number_at(const char **p, uint32_t *out)
{
    uint32_t v = 0;
    int n = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++, n++)
        if (n < 6)
            v = v * 10 + (uint32_t)(**p - '0');
    *out = v;
    return n >= 1 && n <= 6;
}

/* A suffix that does not move the release: empty, or '.', '+', '-', '_' or a letter then letters, digits and those
 * (".dev22+g5b8a1fde", "rc1", ".post1", "+rocm", ".1"), each separator followed by a letter or digit: PEP 440's
 * segments and local labels are never empty ("0.7.3+", "0.7.3.", "0.7.3-" and "0.7.3+rocm." are not versions). */
static bool suffix_ok(const char *p)
{
    if (!*p)
        return true;
    if (!strchr(".+-_", *p) && !g_ascii_isalpha(*p))
        return false;
    for (; *p; p++)
        if (!g_ascii_isalnum(*p) && (!strchr(".+-_", *p) || !g_ascii_isalnum(p[1])))
            return false;
    return true;
}

bool strata_serve_release_parse(const char *text, strata_serve_release *r, bool *newer, GError **err)
{
    const char *p = text ? text : "";
    if (*p == 'v')
        p++;
    bool numbers = number_at(&p, &r->major) && *p++ == '.' && number_at(&p, &r->minor) && *p++ == '.' &&
                   number_at(&p, &r->patch);
    bool ok = numbers && suffix_ok(p);
    if (!ok || release_cmp(r, &oldest) < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--engine-release: expected a vLLM release "
                    "MAJOR.MINOR.PATCH (such as 0.6.6, v0.7.3, 0.6.4.dev22+g5b8a1fde) the table knows, "
                    KNOWN_RANGE ", got '%s'%s", text ? text : "",
                    ok        ? " (older than the table's oldest row)"
                    : numbers ? " (after PATCH: letters, digits and '.', '+', '-' or '_', each of those followed by "
                                "a letter or digit)"
                              : "");
        return false;
    }
    if (newer)
        *newer = release_cmp(r, &newest) > 0;
    return true;
}

const char *strata_serve_release_row(const strata_serve_release *r, const char *knob)
{
    const char *row = NULL;
    for (const release_row *w = rows; knob && w->knob; w++)
        if (!strcmp(w->knob, knob) && release_cmp(&w->from, r) <= 0)
            row = w->row; /* the rows of a knob run oldest first: the last one reached */
    return row;
}

bool strata_serve_release_apply(const char *text, bool engine_given, bool scheduler_given, strata_serve_config *c,
                                GError **err)
{
    if (!text)
        return true;
    strata_serve_release r;
    bool newer = false;
    if (!strata_serve_release_parse(text, &r, &newer, err))
        return false;
    if (newer)
        g_printerr("note: --engine-release %s is newer than the table knows (" KNOWN_RANGE "): its rows are "
                   "0.19's (docs/serving.md)\n", text);
    if (engine_given && c->engine && !g_str_has_prefix(c->engine->name, "vllm")) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--engine-release %s: the table is vLLM's releases ("
                    KNOWN_RANGE "), and --engine %s is not vLLM's; expected no --engine, vllm-v0 or vllm-v0.5",
                    text, c->engine->name);
        return false;
    }
    const char *engine = strata_serve_release_row(&r, "engine");
    if (!engine_given && engine && !(c->engine = strata_serve_engine_find(engine, err)))
        return false;
    if (!engine_given && !scheduler_given && !c->engine && strata_serve_release_row(&r, "async_scheduling"))
        c->async_scheduling = true;
    c->release_mla_pad_v = strata_serve_release_row(&r, "mla_pad_v");
    c->release_chat_parse = strata_serve_release_row(&r, "chat_template_parse") != NULL;
    const char *fp8 = strata_serve_release_row(&r, "fp8_linear_rocm");
    c->release_fp8_linear_rocm = fp8 ? strata_serve_fp8_linear_find(fp8, err) : NULL;
    return !fp8 || c->release_fp8_linear_rocm;
}

void strata_serve_release_apply_hw(strata_serve_config *c, const strata_hw *hw)
{
    if (c->release_fp8_linear_rocm && !c->fp8_linear_rocm && c->engine && c->engine->fp8_linear_rocm &&
        strata_serve_hw_rocm(hw))
        c->fp8_linear_rocm = c->release_fp8_linear_rocm;
}
