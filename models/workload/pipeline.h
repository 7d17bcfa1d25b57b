/*
 * pipeline.h: a pipeline-parallel training step (`gen transformer` with a
 * `pipe` mesh axis): each stage's own program, scheduled microbatch by
 * microbatch (GPipe, 1F1B, interleaved 1F1B, ZB-H1), with the stage-to-stage
 * activations and gradients sent as point-to-point collective-permutes on
 * the links between the stages' devices.
 *
 * What a stage runs (per device, its ops carrying device=D):
 *   F(k, i)  the forward pass of chunk k (its layers) on microbatch i: the
 *            chunk's saved activations are allocated here (one buffer a
 *            chunk-microbatch), each layer's kernels (layer_ops.h; per
 *            layer two all-reduces over `model` under tensor
 *            parallelism), then the
 *            output is sent to chunk k+1 (its buffer freed once sent, as
 *            Megatron's deallocate_output_tensor does);
 *   B(k, i)  the backward pass (the input-gradient ops and, but for
 *            zb-h1, the weight-gradient ones), which sends the input
 *            gradient to chunk k-1 and
 *            frees the chunk-microbatch's activations and received input;
 *   W(k, i)  zb-h1 only: the weight-gradient gemms, deferred; the activations
 *            are freed here.
 * So a stage's activation memory holds exactly the microbatches it has in
 * flight, and the schedules' memory differences come out of the
 * simulation. Chunk 0 holds the embedding, the last chunk the output
 * projection and the loss (Megatron's pre_process / post_process).
 *
 * Invariants: every chunk has layers / (pipe x virtual) layers; a stage's
 * actions are emitted in its schedule's order and an action only after
 * those it waits for (the file order is a topological order, so every
 * wait names an event recorded before it).
 */
#ifndef STRATA_WL_PIPELINE_H
#define STRATA_WL_PIPELINE_H

#include "workload/model_config.h"
#include "workload/shard.h"
#include "workload/layer_ops.h"

/* The step's sizes: global batch, seq, dtype, and what a layer keeps. */
typedef struct wl_pipe_step {
    uint64_t batch, seq;
    strata_dtype dt, master; /* master: NONE without master weights */
    bool flash, causal, remat_full;
    wl_fp8_recipe fp8; /* under dt f8: Transformer Engine's casts (layer_ops.h) */
    bool dist_opt;     /* Megatron's distributed optimizer (ZeRO-1 over data) */
} wl_pipe_step;

/* The step of shape s over plan (plan->p > 1) as a trace, or NULL with an
 * error. */
strata_source *wl_pipeline_generate(const strata_model_shape *s, const wl_shard_plan *plan, const wl_pipe_step *st,
                                    GError **err);

/* The schedule's actions of rank r (of p, m microbatches, v chunks a rank):
 * a list of (kind, chunk, microbatch) as pipeline.c's tables build them;
 * exposed for tests. kind 'F', 'B' or 'W'; chunk is the rank's local
 * chunk 0..v-1. */
typedef struct wl_pipe_action {
    char kind;
    uint32_t chunk, mb;
} wl_pipe_action;
GArray *wl_pipe_schedule_actions(wl_pipe_schedule sched, uint64_t p, uint64_t m, uint64_t v, uint64_t r);

#endif
