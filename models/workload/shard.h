/*
 * shard.h: the sharding of a training step built with autodiff.h over a
 * device mesh (`option mesh=data:N[,model:T]`, or the axes by name:
 * data, fsdp, tensor, pipe, expert, context; see shard_plan.c), as one SPMD
 * program that every device runs on its own part of the data and the
 * parameters (with a pipe axis, each stage its own: pipeline.h).
 *
 * The mesh's `data` axis splits the batch. Over it, the parameters are
 *   dp    replicated: each parameter's gradient is all-reduced over `data`
 *         once the backward pass of the last layer (in backward order) that
 *         reads the parameter is done;
 *   fsdp  sharded (ZeRO-3): the device holds 1/N of each parameter (flat,
 *         `P_shard`), of its optimizer state and of its gradient. Before the
 *         forward pass of each group (layer) that reads P, and again before
 *         its backward pass, P is all-gathered into `P_ag` (`P_ag_bwd`),
 *         read by that pass only and freed after its last use there; the
 *         gathers of the group `prefetch` groups ahead are issued when a
 *         group starts. The full gradient is reduce-scattered into
 *         `d_P_shard` and freed once its last contribution is in.
 * The `model` axis (tp) shards the weights themselves: the generator
 * builds each device's slice (Megatron column/row-parallel matmuls) and
 * marks the nodes whose outputs or input gradients are partial sums, which
 * autodiff.h all-reduces over `model`; with sequence parallelism (`tp+sp`,
 * `fsdp+tp+sp`) it splits the sequence over `model` outside the
 * column/row-parallel blocks and puts an all-gather before each block and a
 * reduce-scatter after it in place of the all-reduce.
 *
 * Streams and events: gathers run on stream `gather` and gradient
 * reductions on stream `reduce`, so communication overlaps the compute on
 * `main`. A gather waits for `ag_fI.go` (`ag_bI.go` backward) that main
 * records where it is issued; main waits for `ag_fI.done` before the group
 * reads the gathered copy. The reduction of a group's gradients waits for
 * `rs_I.go` recorded after the group's backward pass; main waits for
 * `grads.done` (recorded after the last reduction) before the optimizer.
 *
 * Invariants: in fsdp every parameter's element count divides by N (the
 * generator checks its shapes first); every gathered
 * copy is written once (by its all-gather) before any step reads it.
 */
#ifndef STRATA_WL_SHARD_H
#define STRATA_WL_SHARD_H

#include "core/params.h"
#include "workload/autodiff.h"

typedef enum { WL_DATA_NONE, WL_DATA_DP, WL_DATA_FSDP } wl_data_mode;

/* The pipeline schedules (pipeline.h runs them). */
typedef enum { WL_PIPE_GPIPE, WL_PIPE_1F1B, WL_PIPE_INTERLEAVED, WL_PIPE_ZB_H1 } wl_pipe_schedule;

/* What a `mesh=` and `sharding=` pair asks for (shard_plan.c). Axis sizes
 * are >= 1 (1: the axis is absent). */
typedef struct wl_shard_plan {
    wl_data_mode data;
    uint64_t n;        /* size of the data (or fsdp) axis */
    uint64_t t;        /* size of the tensor (model) axis */
    uint64_t p;        /* size of the pipe axis: pipeline stages */
    uint64_t e;        /* size of the expert axis */
    uint64_t c;        /* size of the context axis */
    uint64_t m;        /* microbatches per step per pipeline (1 without a pipe axis) */
    uint64_t v;        /* virtual stages (model chunks) per pipe rank */
    wl_pipe_schedule schedule;
    uint64_t prefetch; /* fsdp: groups ahead that gathers are issued */
    bool scan;         /* fsdp: the layers as one scanned loop (shard.c, hook_begin) */
    bool seq;          /* tp with sequence parallelism (`+sp`) */
    char mesh[96];     /* the mesh as `option mesh=` writes it (axes renamed:
                          fsdp -> data, tensor -> model, stage -> pipe); "" for none */
} wl_shard_plan;

/* The sizes of the step that the rules on axes read. */
typedef struct wl_shard_sizes {
    uint64_t layers, batch, seq;
    int64_t experts; /* 0: a dense model */
} wl_shard_sizes;

/* The plan from params `mesh`, `sharding` and `prefetch` of `workload`;
 * false with an error naming the parameter when the mesh does not parse or
 * does not fit the sharding. Axis names: data, fsdp, tensor (= model),
 * pipe (= stage), expert, context; the old spelling data:N,model:T needs
 * sharding= (dp and fsdp need a `data` axis, tp a `model` axis, and no
 * axis may go unused); with the new names sharding= may stay none and
 * follows from the axes. m and v are 1 (the caller sets them). */
bool wl_shard_plan_parse(const strata_params *p, const char *workload, wl_shard_plan *plan, GError **err);
/* Checks the frameworks' rules on the product of axes (shard_plan.c's
 * table: layers into stages, interleaving, microbatches, experts,
 * context); the error names the rule that fails. */
bool wl_shard_plan_rules(const wl_shard_plan *plan, const wl_shard_sizes *z, const char *workload, GError **err);
/* Checks that `value` of parameter `name` divides by `by` (the size of mesh
 * axis `axis`); the error names both. */
bool wl_shard_check_divides(const strata_params *p, const char *workload, const char *name, uint64_t by,
                            const char *axis, GError **err);

typedef struct wl_shard wl_shard;

/* Shards the model's parameters (params: wl_tensor) per plan: in fsdp
 * creates the shard arguments and installs the hooks that gather and
 * reduce; in dp the hooks that reduce. Call before wl_model_emit(); writes
 * `option mesh=` into g when the plan has a mesh. */
wl_shard *wl_shard_new(wl_graph *g, wl_model *m, const wl_shard_plan *plan, const GArray *params,
                       wl_remat remat);
void wl_shard_free(wl_shard *s);
/* Before wl_model_emit(): p is an expert's parameter (split over the
 * expert axis): its gradient is reduced (fsdp: it is sharded) over data and
 * context only (the expert-data-parallel group), the others' also over
 * expert. */
void wl_shard_expert(wl_shard *s, wl_tensor p);
/* After wl_model_emit(): what the optimizer updates for parameter p (its
 * shard in fsdp, else p) and the gradient it reads (WL_NONE: none). */
wl_tensor wl_shard_param(const wl_shard *s, wl_tensor p);
wl_tensor wl_shard_grad(const wl_shard *s, wl_tensor p);

#endif
