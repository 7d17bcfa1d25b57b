/*
 * serve_chat.h: the chat endpoint's own work a request in vLLM's API server,
 * beyond what /v1/completions does (the client posts to
 * /v1/chat/completions: `vllm bench serve --backend openai-chat`;
 * --chat-endpoint), and the front end a run pays with it.
 *
 * What it prices (serve_chat.c, its sources): vLLM 0.11.0's
 * apply_hf_chat_template parses the model's Jinja chat template on every
 * request (resolve_chat_template_kwargs: a new sandboxed environment,
 * env.parse, jinja2.meta.find_undeclared_variables), on the API server's
 * event loop, before the prompt is tokenized and handed to EngineCore;
 * 0.10.2 does not, 0.11.1 caches it. The release's row is serve_release.h's
 * knob chat_template_parse. The rest of the chat path (the message parsing,
 * the template's render, the role-only first chunk, which leaves with the
 * first token's) is not priced: no figure above tens of microseconds read.
 *
 * Invariants: the per-request seconds are 0 unless the client posts to the
 * chat endpoint, a server stands between client and engine (not --offline)
 * and the release parses the template on every request; otherwise a
 * finite figure > 0. The front end a run pays is the engine's own row with
 * those seconds added to its recv and, for a serial row
 * (serve_frontend_queue.h), to its intake (the parse holds the one event
 * loop); a serial row stays serial and a row with nothing added is the
 * engine's own.
 */
#ifndef STRATA_SERVE_CHAT_H
#define STRATA_SERVE_CHAT_H

#include <glib.h>
#include <stdbool.h>
#include "serve/serve.h"
#include "serve/serve_frontend.h"

/* Seconds of the chat endpoint's own work a request in the API server under c (0: none priced). */
double strata_serve_chat_request_s(const strata_serve_config *c);

/* The front end a run pays: f with strata_serve_chat_request_s(c) added to its recv (and a serial row's
 * intake), written to *out and returned; f itself where nothing is added (f NULL: NULL). */
const strata_serve_frontend *strata_serve_chat_front(const strata_serve_frontend *f, const strata_serve_config *c,
                                                     strata_serve_frontend *out);

/* --chat-endpoint with --offline (no API server, no endpoint), or where the template's parse is priced and the
 * engine prices no front end (vllm-v0, vllm-v0.5: it would be dropped): an input error (false); else true. */
bool strata_serve_chat_check(const strata_serve_config *c, GError **err);

#endif
