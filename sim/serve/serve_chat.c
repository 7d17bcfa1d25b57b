/*
 * serve_chat.c: the chat endpoint's per-request work in vLLM's API server
 * (serve_chat.h).
 *
 * The path, read in the vllm 0.11.0 wheel (PyPI, vllm-0.11.0-cp38-abi3):
 * - entrypoints/openai/serving_chat.py:163-347 create_chat_completion awaits
 *   _preprocess_chat (:239) before it calls engine_client.generate (:312),
 *   so all of it lies between the HTTP request and EngineCore's receipt;
 * - entrypoints/openai/serving_engine.py:736-851 _preprocess_chat:
 *   resolve_chat_template_content_format (:757; its _detect_content_format
 *   is lru_cached, chat_utils.py:387, since vllm-project/vllm PR #20065),
 *   parse_chat_messages_futures (:764), apply_hf_chat_template (:791),
 *   then the tokenizer (:822, _tokenize_prompt_input_async);
 * - entrypoints/chat_utils.py:1602-1643 apply_hf_chat_template calls
 *   resolve_chat_template_kwargs (:1620) on every request, which builds a
 *   jinja2 ImmutableSandboxedEnvironment, parses the whole template
 *   (env.parse, :1590) and walks it (jinja2.meta.find_undeclared_variables,
 *   :1591); nothing caches it. It came with vllm-project/vllm PR #25794
 *   (russellb, 2025-09-27, "Add filtering for chat template kwargs", a
 *   security fix; its review: "Yea, it's called by each request").
 * - vllm 0.10.2 (the wheel): apply_hf_chat_template (chat_utils.py:1437)
 *   has no such call; vllm 0.11.1 (the wheel): chat_utils.py:1535
 *   `_cached_resolve_chat_template_kwargs = lru_cache(...)`, called at
 *   :1578: parsed once a template. So only 0.11.0 parses every request
 *   (serve_release.c's chat_template_parse rows).
 *
 * The figure: vllm-project/vllm PR #20065 (ilyal-cerebras, 2025-06-25,
 * "[Perf][Frontend] Cached resolution for resolving chat templates"):
 * before it, _detect_content_format loaded a meta-llama model's Jinja
 * template and walked its AST on each /v1/chat/completions request, and
 * "when we send 1000 requests to OpenAI server, it internally calls this
 * function 1000 times which results in 6-8 seconds delay": 6-8 ms a
 * request, 7 ms taken. ESTIMATE: it is the same kind of work (one parse of
 * the template and a walk of its tree, in Python on the API server's
 * event loop), not the same function, template or CPU (neither named).
 * A check, not the figure: the 0.11.0 function (the same environment,
 * parse and walk) on Qwen3's 4,117-byte chat template (llama.cpp's
 * models/templates/Qwen-Qwen3-0.6B.jinja), Jinja2 3.1.6, took 9.6 ms of
 * CPU a call on this project's build host (3.4 ms of it the parse); its
 * render 22 us.
 */
#include "serve/serve_chat.h"
#include "core/error.h"
#include "serve/serve_engine.h"

#define CHAT_TEMPLATE_PARSE_S 7e-3 /* PR #20065: 6-8 s over 1000 requests, the midpoint a request */

double strata_serve_chat_request_s(const strata_serve_config *c)
{
    return c && c->chat_endpoint && c->release_chat_parse && !c->offline ? CHAT_TEMPLATE_PARSE_S : 0;
}

const strata_serve_frontend *strata_serve_chat_front(const strata_serve_frontend *f, const strata_serve_config *c,
                                                     strata_serve_frontend *out)
{
    double s = strata_serve_chat_request_s(c);
    if (!f || s <= 0)
        return f;
    *out = *f;
    out->recv_s += s;
    if (out->intake_s > 0) /* a serial row: the parse holds its one event loop */
        out->intake_s += s;
    return out;
}

bool strata_serve_chat_check(const strata_serve_config *c, GError **err)
{
    if (c->chat_endpoint && c->offline) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--chat-endpoint: not with --offline: an offline run "
                    "has no API server and no endpoint (expected one or the other)");
        return false;
    }
    if (strata_serve_chat_request_s(c) > 0 && !strata_serve_engine_frontend(c->engine)) {
        /* vllm-v0 and vllm-v0.5 price no server hops: the parse would be dropped at exit 0 */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--chat-endpoint: not with --engine %s: the engine "
                    "prices no API server to add the chat template's parse to (expected no --engine, or one with "
                    "a front end: vllm-v1's)", c->engine ? c->engine->name : "(none)");
        return false;
    }
    return true;
}
