/*
 * serve_mla_rocm.h: the kernels an engine's ROCm build launches in a
 * DeepSeek-style (MLA attention, MoE MLP) decoder layer on AMD Instinct
 * gfx942 (MI300X, MI325X) beyond those serve_cost.c prices, as rows of
 * serve_mla_kernels.h's kind (the same entries, widths and pricing: each
 * kernel one pass at the hardware's kernel_launch plus its bytes at the
 * stream rate), looked up by name from an engine row's mla_kernels_rocm
 * (serve_engine.h) where the hardware's collectives are RCCL's.
 *
 * Kept apart from serve_mla_kernels.c, whose rows are the CUDA builds'
 * (FlashMLA, FA3, bmm_fp8): the ROCm builds take other branches of the
 * same Python model (`_is_hip`, `_use_aiter`, `_use_aiter_gfx95`) and
 * aiter's kernels in place of the CUDA ones (serve_mla_rocm.c cites each
 * branch).
 *
 * Invariants: every row has at least one entry; the table ends with a
 * NULL name; a row applies only to a model with MLA (kv_lora_rank > 0),
 * as serve_mla_kernels.h's do.
 */
#ifndef STRATA_SERVE_MLA_ROCM_H
#define STRATA_SERVE_MLA_ROCM_H

#include <glib.h>
#include "serve/serve_mla_kernels.h"

/* The ROCm row called name, or NULL with an error listing the known ones. */
const strata_serve_mla_kernels *strata_serve_mla_rocm_find(const char *name, GError **err);

#endif
