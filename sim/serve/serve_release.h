/*
 * serve_release.h: a vLLM release (--engine-release X.Y.Z) and, for each of
 * strata's release-dependent choices, the row that release ran, read from a
 * table of boundaries (serve_release.c), each boundary the release that
 * first shipped a change, cited by its pull request, commit or tag. In the
 * style of the clusters' nccl_version and their nccl_versions table.
 *
 * The choices (knobs) the table holds:
 *   engine            the engine row when no --engine is given: vllm-v0.5
 *                     (0.4.0-0.5.x), vllm-v0 (0.6.0-0.7.x), vLLM V1, the
 *                     default row (0.8.0 on);
 *   fp8_linear_rocm   a vLLM V0 row's per-tensor FP8 Linears in its ROCm
 *                     build (serve_fp8_linear.h), where --fp8-linear-rocm
 *                     is not given and the hardware's collectives are
 *                     RCCL's;
 *   async_scheduling  vLLM V1's async scheduling (0.14.0 on), where neither
 *                     --engine nor --scheduler is given;
 *   chat_template_parse  the chat template parsed on every chat
 *                     request (0.11.0 only; serve_chat.h);
 *   mla_pad_v         the MLA prefill's v padded to q's width (V0's and
 *                     V1's): always (0.4.0-0.8.4), unless FA3 on Hopper
 *                     (0.8.5 on; serve_mla_prefill_v07.h
 *                     strata_serve_mla_v07_pads_v, serve_mla_prefill_v1.h).
 * An option the user gives (--engine, --fp8-linear-rocm, --scheduler) wins
 * over the release's row.
 *
 * Invariants: a release parses only as [v]MAJOR.MINOR.PATCH with an
 * optional suffix (.devN, rcN, .postN, +local, a fourth number) that does
 * not move it; one older than the table's oldest boundary, or malformed, is
 * an input error (exit 2) naming the option and the known range; one newer
 * than the newest release the table's sources read is accepted, with a note
 * on standard error, and takes the newest rows; the engine a release picks
 * is one --engine names or the default row; only vLLM's engine rows take a
 * release (another engine with one is an input error).
 */
#ifndef STRATA_SERVE_RELEASE_H
#define STRATA_SERVE_RELEASE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "serve/serve.h"

/* A parsed release: MAJOR.MINOR.PATCH. */
typedef struct strata_serve_release {
    uint32_t major, minor, patch;
} strata_serve_release;

/* Parses text as --engine-release does: true with *r set, or false with an input error naming the option, what
 * was expected and the known range (malformed, or older than the table knows). A release newer than the table's
 * sources is accepted (*newer set true where newer is not NULL). */
bool strata_serve_release_parse(const char *text, strata_serve_release *r, bool *newer, GError **err);

/* The row the release ran for a knob ("engine", "fp8_linear_rocm", "async_scheduling"): a row name, or NULL
 * where the release runs none (engine: vLLM V1's default row; fp8_linear_rocm: none tabled; async_scheduling:
 * off; "on" where on). An unknown knob: NULL. */
const char *strata_serve_release_row(const strata_serve_release *r, const char *knob);

/* --engine-release on the options (NULL text: nothing, true): parses it (a note on standard error for a release
 * newer than the table's sources), refuses an --engine that is not vLLM's, and sets on c what the user left
 * unset: the engine (when engine_given is false), async scheduling (neither engine nor scheduler given), and the
 * FP8 Linear row kept for strata_serve_release_apply_hw. False with an input error (exit 2). */
bool strata_serve_release_apply(const char *text, bool engine_given, bool scheduler_given, strata_serve_config *c,
                                GError **err);

/* The hardware's part: on RCCL hardware (strata_serve_hw_rocm) and an engine row with a ROCm FP8 Linear row,
 * the release's row in place of the engine's default, unless --fp8-linear-rocm set one. Nothing without a
 * release. */
void strata_serve_release_apply_hw(strata_serve_config *c, const strata_hw *hw);

#endif
