/*
 * test_workload_shard.c: the multi-device workloads (models/workload/
 * collective.c, shard.c): `gen collective`'s buffers by nccl-tests' size
 * rules, and the sharded transformer step's per-device figures worked out
 * by hand from the shapes: the arguments each device holds under dp, fsdp
 * and tp, the collectives each schedule issues, the peak that fsdp lowers,
 * sequence parallelism's shards, collective sizes and activation bytes
 * saved, offload=param on fsdp (the shards' fetches before their gathers),
 * and the errors for meshes that do not fit the shapes. Timed figures come
 * from `strata run` on test-ring8 through the binary (one engine per
 * process).
 *
 * Most figures are those of the SPMD program every device runs (the trace
 * as generated: one device's buffers); the expansion over an 8-device ring
 * (spmd.h) gives each device the same arguments, plus the collectives'
 * receive buffers.
 */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "spmd/spmd.h"
#include "trace/check.h"
#include "workload/workload.h"

/* What a walk over one device's program sums. */
typedef struct dev_stats {
    uint64_t arg_by_tag[STRATA_TAG__COUNT]; /* live before program_start */
    uint64_t live, peak;
    uint64_t forward_live;      /* live at the forward pass' last step (cross_entropy) */
    uint64_t collectives[STRATA_OP__COUNT];
    uint64_t ratio[STRATA_OP__COUNT]; /* all-gather OUT / IN, reduce-scatter IN / OUT (0: mixed) */
    uint64_t on_axis_model;     /* collectives over `model` */
    uint64_t host_args;         /* bytes in host memory before program_start */
    uint64_t fetched;           /* bytes copied from host buffers (NAME:host) */
    uint64_t gather_fetched;    /* of those, into shards that an all-gather then reads */
    uint64_t layer_fetched[4];  /* of those, before layer l's forward gathers (P_ag) */
    uint64_t unfetched_gathers; /* all-gathers of a shard not fetched since its last gather */
    bool started;
    GHashTable *fetches;        /* shard name -> bytes fetched since its last gather */
    GHashTable *sizes;          /* name -> size of every buffer allocated */
    GHashTable *saved;          /* activation name -> size, of those live at cross_entropy */
    GHashTable *steps;          /* names of the compute and collective steps */
    char *mesh;                 /* option mesh=, or NULL */
} dev_stats;

static dev_stats walk_device(strata_source *src)
{
    dev_stats s = {0};
    s.sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s.fetches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s.saved = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s.steps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTable *live = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTable *tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    strata_checker *c = strata_checker_new(strata_source_origin(src));
    const strata_op *op;
    GError *err = NULL;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1) {
        ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "checker: %s", err ? err->message : "?");
        if (op->kind == STRATA_OP_OPTION && strcmp(op->name, "mesh") == 0)
            s.mesh = g_strdup(op->value);
        if (op->kind == STRATA_OP_COMPUTE)
            s.started = true;
        if (op->kind == STRATA_OP_COMPUTE && strcmp(op->name, "cross_entropy") == 0) {
            s.forward_live = s.live;
            GHashTableIter it;
            gpointer k, v;
            g_hash_table_iter_init(&it, live);
            while (g_hash_table_iter_next(&it, &k, &v))
                if (GPOINTER_TO_INT(g_hash_table_lookup(tags, k)) == STRATA_TAG_ACTIVATION)
                    g_hash_table_insert(s.saved, g_strdup(k), v);
        }
        if (op->kind == STRATA_OP_COMPUTE || strata_op_kind_is_collective(op->kind))
            g_hash_table_add(s.steps, g_strdup(op->name));
        if (op->kind == STRATA_OP_ALLOC && op->memory && g_str_has_prefix(op->memory, "host")) {
            s.host_args += s.started ? 0 : op->size;
            g_hash_table_insert(s.sizes, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
        } else if (op->kind == STRATA_OP_ALLOC) {
            g_hash_table_insert(s.sizes, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
            g_hash_table_insert(tags, g_strdup(op->name), GINT_TO_POINTER(op->tag));
            g_hash_table_insert(live, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
            s.live += op->size;
            s.peak = MAX(s.peak, s.live);
            if (!s.started)
                s.arg_by_tag[op->tag] += op->size;
        } else if (op->kind == STRATA_OP_FREE) {
            s.live -= GPOINTER_TO_SIZE(g_hash_table_lookup(live, op->name));
            g_hash_table_remove(live, op->name);
        } else if (op->kind == STRATA_OP_COPY && g_str_has_suffix(op->src, ":host")) {
            gsize bytes = GPOINTER_TO_SIZE(g_hash_table_lookup(s.sizes, op->src));
            s.fetched += bytes;
            g_hash_table_insert(s.fetches, g_strdup(op->name),
                                GSIZE_TO_POINTER(GPOINTER_TO_SIZE(g_hash_table_lookup(s.fetches, op->name)) + bytes));
        } else if (strata_op_kind_is_collective(op->kind)) {
            if (op->kind == STRATA_OP_ALL_GATHER || op->kind == STRATA_OP_REDUCE_SCATTER) {
                bool ag = op->kind == STRATA_OP_ALL_GATHER;
                uint64_t out = GPOINTER_TO_SIZE(g_hash_table_lookup(s.sizes, op->name)),
                         in = GPOINTER_TO_SIZE(g_hash_table_lookup(s.sizes, op->src));
                uint64_t ratio = ag ? out / in : in / out;
                bool first = s.collectives[op->kind] == 1;
                s.ratio[op->kind] = first || s.ratio[op->kind] == ratio ? ratio : 0;
            }
            if (op->kind == STRATA_OP_ALL_GATHER) {
                gsize bytes = GPOINTER_TO_SIZE(g_hash_table_lookup(s.fetches, op->src));
                unsigned l = 0;
                s.gather_fetched += bytes;
                s.unfetched_gathers += bytes == 0;
                if (g_str_has_suffix(op->name, "_ag") && sscanf(op->name, "l%u_", &l) == 1 && l < 4)
                    s.layer_fetched[l] += bytes;
                g_hash_table_remove(s.fetches, op->src);
            }
            s.collectives[op->kind]++;
            s.on_axis_model += strcmp(op->axis, "model") == 0;
        }
    }
    ck_assert_msg(r == 0, "source: %s", err ? err->message : "?");
    strata_checker_free(c);
    g_hash_table_destroy(live);
    g_hash_table_destroy(tags);
    return s;
}

static void dev_stats_clear(dev_stats *s)
{
    g_hash_table_destroy(s->sizes);
    g_hash_table_destroy(s->fetches);
    g_hash_table_destroy(s->saved);
    g_hash_table_destroy(s->steps);
    g_free(s->mesh);
}

static dev_stats gen_walk(const char *name, const char *const *args)
{
    GError *err = NULL;
    strata_source *src = strata_workload_generate(name, args, &err);
    ck_assert_msg(src != NULL, "%s: %s", name, err ? err->message : "?");
    dev_stats s = walk_device(src);
    strata_source_free(src);
    return s;
}

static uint64_t size_of(const dev_stats *s, const char *name)
{
    gpointer v = NULL;
    ck_assert_msg(g_hash_table_lookup_extended(s->sizes, name, NULL, &v), "no buffer %s", name);
    return GPOINTER_TO_SIZE(v);
}

/* nccl-tests' sizes: all-gather's receive buffer is `bytes`, its send
 * buffer bytes/N; reduce-scatter the reverse; all-reduce one buffer. */
START_TEST(collective_sizes_by_op)
{
    const char *ag[] = {"op=all-gather", "bytes=64MiB", "devices=8", "algo=ring", "iters=3", NULL};
    dev_stats s = gen_walk("collective", ag);
    ck_assert_str_eq(s.mesh, "data:8");
    ck_assert_uint_eq(size_of(&s, "recv"), 64u << 20);
    ck_assert_uint_eq(size_of(&s, "send"), 8u << 20);
    ck_assert_uint_eq(s.collectives[STRATA_OP_ALL_GATHER], 3);
    ck_assert_uint_eq(s.live, 0); /* both freed at the end */
    dev_stats_clear(&s);
    const char *rs[] = {"op=reduce-scatter", "bytes=1MiB", "devices=4", "axis=x", NULL};
    s = gen_walk("collective", rs);
    ck_assert_str_eq(s.mesh, "x:4");
    ck_assert_uint_eq(size_of(&s, "send"), 1u << 20);
    ck_assert_uint_eq(size_of(&s, "recv"), 256u << 10);
    dev_stats_clear(&s);
    const char *ar[] = {"bytes=4KiB", NULL};
    s = gen_walk("collective", ar);
    ck_assert_uint_eq(size_of(&s, "buf"), 4096);
    ck_assert_uint_eq(g_hash_table_size(s.sizes), 1);
    ck_assert_uint_eq(s.collectives[STRATA_OP_ALL_REDUCE], 1);
    dev_stats_clear(&s);
}
END_TEST

START_TEST(collective_rejects_bad_sizes)
{
    static const char *const cases[][4] = {
        {"op=all-gather", "bytes=1000", "devices=8", "bytes a multiple of devices"}, /* 250 f32 */
        {"op=all-reduce", "bytes=6", "devices=2", "whole number of elements"},
        {"op=collective-permute", "shift=0", "devices=2", "shift other than 0"},
        {"axis=Data", "bytes=64", "devices=2", "axis names [a-z][a-z0-9_]*"},
        {"devices=0", "bytes=64", "iters=1", "devices >= 1"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[] = {cases[i][0], cases[i][1], cases[i][2], NULL};
        GError *err = NULL;
        ck_assert_ptr_null(strata_workload_generate("collective", args, &err));
        ck_assert_msg(err && err->code == STRATA_ERROR_INPUT && strstr(err->message, cases[i][3]), "%s",
                      err ? err->message : "no error");
        g_clear_error(&err);
    }
}
END_TEST

/* The shape of the sharded tests: 2 layers, d=64, 4 heads, S=16, B=8,
 * V=256, bf16. Per replica: embed 256x64 = 16384, pos 16x64 = 1024, per
 * layer ln1 64 + wqkv 64x192 = 12288 + wo 64x64 = 4096 + ln2 64 + w1 64x256
 * = 16384 + w2 256x64 = 16384 = 49280, lnf 64: 116032 elements, 232064 B;
 * AdamW's m and v (f32): 2 x 4 x 116032 = 928256 B. */
#define SHAPE "layers=2", "d_model=64", "heads=4", "seq=16", "batch=8", "vocab=256"
enum { PARAM_BYTES = 232064, OPTSTATE_BYTES = 928256 };

/* On 8 devices each holds a batch of 1: tokens and targets 1x16 int32. dp
 * holds every parameter and all optimizer state; fsdp an eighth of each
 * (every parameter's size divides by 8: they all have d=64 as a factor). */
START_TEST(fsdp_holds_an_eighth)
{
    const char *dp_args[] = {SHAPE, "mesh=data:8", "sharding=dp", NULL};
    const char *fsdp_args[] = {SHAPE, "mesh=data:8", "sharding=fsdp", NULL};
    dev_stats dp = gen_walk("transformer", dp_args), fsdp = gen_walk("transformer", fsdp_args);
    ck_assert_str_eq(dp.mesh, "data:8");
    ck_assert_uint_eq(dp.arg_by_tag[STRATA_TAG_INPUT], 2 * 16 * 4);
    ck_assert_uint_eq(fsdp.arg_by_tag[STRATA_TAG_INPUT], 2 * 16 * 4);
    ck_assert_uint_eq(dp.arg_by_tag[STRATA_TAG_PARAM], PARAM_BYTES);
    ck_assert_uint_eq(dp.arg_by_tag[STRATA_TAG_OPTSTATE], OPTSTATE_BYTES);
    ck_assert_uint_eq(fsdp.arg_by_tag[STRATA_TAG_PARAM], PARAM_BYTES / 8);
    ck_assert_uint_eq(fsdp.arg_by_tag[STRATA_TAG_OPTSTATE], OPTSTATE_BYTES / 8);
    ck_assert_uint_eq(size_of(&fsdp, "l0_wqkv_shard"), 64 * 192 * 2 / 8);
    ck_assert_uint_eq(size_of(&fsdp, "l0_wqkv_ag"), 64 * 192 * 2);
    /* dp: one all-reduce per parameter gradient (15 parameters: embed, pos, 6 per layer, lnf). fsdp: each
     * group's parameters gathered for its forward (embed+pos, 6 + 6 per
     * layer, lnf+embed: 16) and backward (lnf+embed, 6, 6; the embedding's
     * backward reads no parameter: 14); one reduce-scatter per gradient. */
    ck_assert_uint_eq(dp.collectives[STRATA_OP_ALL_REDUCE], 15);
    ck_assert_uint_eq(dp.collectives[STRATA_OP_ALL_GATHER], 0);
    ck_assert_uint_eq(fsdp.collectives[STRATA_OP_ALL_GATHER], 30);
    ck_assert_uint_eq(fsdp.collectives[STRATA_OP_REDUCE_SCATTER], 15);
    ck_assert_uint_eq(fsdp.collectives[STRATA_OP_ALL_REDUCE], 0);
    ck_assert_msg(fsdp.peak < dp.peak, "fsdp peak %" G_GUINT64_FORMAT " >= dp peak %" G_GUINT64_FORMAT, fsdp.peak,
                  dp.peak);
    dev_stats_clear(&dp);
    dev_stats_clear(&fsdp);
}
END_TEST

/* The prefetch distance moves gathers earlier, not their number: a larger
 * distance holds more gathered layers at once, so its peak does not fall. */
START_TEST(fsdp_prefetch_distance)
{
    const char *p0[] = {SHAPE, "mesh=data:8", "sharding=fsdp", "prefetch=0", NULL};
    const char *p2[] = {SHAPE, "mesh=data:8", "sharding=fsdp", "prefetch=2", NULL};
    dev_stats a = gen_walk("transformer", p0), b = gen_walk("transformer", p2);
    ck_assert_uint_eq(a.arg_by_tag[STRATA_TAG_PARAM], b.arg_by_tag[STRATA_TAG_PARAM]);
    ck_assert_uint_eq(a.collectives[STRATA_OP_ALL_GATHER], b.collectives[STRATA_OP_ALL_GATHER]);
    ck_assert_uint_le(a.peak, b.peak);
    dev_stats_clear(&a);
    dev_stats_clear(&b);
}
END_TEST

/* scan_layers=true (MaxText's scan_layers, the layers as one XLA while loop
 * whose body XLA schedules alone: scripts/jax-tpu-fsdp-scan.py): the same
 * gathers and reductions as without it, but a group's gathers are issued
 * when it starts (none ahead), each records its own event, and main waits
 * for it right before its first step reading the gathered copy; the
 * gradients are reduce-scattered on main. With remat=full the backward pass
 * of layer 1 (the second unit of the backward order, after the final norm
 * and logits) recomputes first, so its first gather is l1_ln1's. */
START_TEST(fsdp_scan_layers_awaits_each_gather)
{
    const char *plain[] = {SHAPE, "mesh=data:8", "sharding=fsdp", "remat=full", NULL};
    const char *scan[] = {SHAPE, "mesh=data:8", "sharding=fsdp", "remat=full", "scan_layers=true", NULL};
    dev_stats a = gen_walk("transformer", plain), b = gen_walk("transformer", scan);
    ck_assert_uint_eq(a.collectives[STRATA_OP_ALL_GATHER], b.collectives[STRATA_OP_ALL_GATHER]);
    ck_assert_uint_eq(a.collectives[STRATA_OP_REDUCE_SCATTER], b.collectives[STRATA_OP_REDUCE_SCATTER]);
    dev_stats_clear(&a);
    dev_stats_clear(&b);
    GError *err = NULL;
    strata_source *src = strata_workload_generate("transformer", scan, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    GHashTable *event_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free); /* gathered -> event */
    GHashTable *waited = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    const strata_op *op;
    char *last_gather = NULL, *first_b1 = NULL;
    bool after_b1 = false;
    unsigned awaited_reads = 0, reductions_on_main = 0;
    while (strata_source_next(src, &op, &err) == 1) {
        bool main = !op->stream || strcmp(op->stream, "main") == 0;
        if (op->kind == STRATA_OP_ALL_GATHER) {
            ck_assert_str_eq(op->stream, "gather");
            g_free(last_gather);
            last_gather = g_strdup(op->name);
            if (after_b1 && !first_b1)
                first_b1 = g_strdup(op->name);
        } else if (op->kind == STRATA_OP_RECORD && !main && last_gather) { /* (grads.done follows none) */
            g_hash_table_insert(event_of, last_gather, g_strdup(op->name));
            last_gather = NULL;
        } else if (op->kind == STRATA_OP_WAIT && !main) {
            after_b1 = after_b1 || strcmp(op->name, "ag_b1.go") == 0;
        } else if (op->kind == STRATA_OP_WAIT) {
            g_hash_table_add(waited, g_strdup(op->name));
        } else if (op->kind == STRATA_OP_REDUCE_SCATTER) {
            reductions_on_main += main;
        } else if (op->kind == STRATA_OP_COMPUTE) {
            for (uint32_t k = 0; k < op->n_ins; k++) {
                const char *e = g_hash_table_lookup(event_of, op->ins[k]);
                if (!e)
                    continue;
                ck_assert_msg(g_hash_table_contains(waited, e), "%s reads %s before waiting for %s", op->name,
                              op->ins[k], e);
                awaited_reads++;
            }
        }
    }
    ck_assert_uint_eq(g_hash_table_size(event_of), a.collectives[STRATA_OP_ALL_GATHER]);
    ck_assert_uint_gt(awaited_reads, 0);
    ck_assert_uint_eq(reductions_on_main, a.collectives[STRATA_OP_REDUCE_SCATTER]);
    ck_assert_str_eq(first_b1, "l1_ln1_ag_bwd");
    g_free(first_b1);
    g_free(last_gather);
    g_hash_table_destroy(event_of);
    g_hash_table_destroy(waited);
    strata_source_free(src);
}
END_TEST

/* tp on model:2: wqkv 64x96, wo 32x64, w1 64x128, w2 128x64 and the
 * embedding 128x64 are halves; layernorm scales (64) and pos (1024) are
 * replicated: 2 x (64 + 6144 + 2048 + 64 + 8192 + 8192) + 8192 + 1024 + 64
 * = 58688 elements, 117376 B. All-reduces over model: h_0, each layer's
 * attention and MLP outputs (5 forward), and in the backward pass the
 * gradients of lnf_out and of each layer's two layernorm outputs (5). */
START_TEST(tp_shards_weights_by_t)
{
    const char *tp_args[] = {SHAPE, "mesh=model:2", "sharding=tp", NULL};
    dev_stats tp = gen_walk("transformer", tp_args);
    ck_assert_uint_eq(tp.arg_by_tag[STRATA_TAG_PARAM], 117376);
    ck_assert_uint_eq(tp.arg_by_tag[STRATA_TAG_OPTSTATE], 117376 / 2 * 8);
    ck_assert_uint_eq(size_of(&tp, "l1_wqkv"), 64 * 192 * 2 / 2);
    ck_assert_uint_eq(size_of(&tp, "l1_wo"), 64 * 64 * 2 / 2);
    ck_assert_uint_eq(size_of(&tp, "l1_ln2"), 64 * 2);
    ck_assert_uint_eq(size_of(&tp, "l0_scores"), 8 * 2 * 16 * 16 * 2); /* 2 of 4 heads */
    ck_assert_uint_eq(size_of(&tp, "logits"), 8 * 16 * 128 * 2);
    ck_assert_uint_eq(tp.collectives[STRATA_OP_ALL_REDUCE], 10);
    ck_assert_uint_eq(tp.on_axis_model, 10);
    dev_stats_clear(&tp);
    /* fsdp+tp on data:4,model:2: fsdp shards the tp shards 4 ways. */
    const char *both_args[] = {SHAPE, "mesh=data:4,model:2", "sharding=fsdp+tp", NULL};
    dev_stats both = gen_walk("transformer", both_args);
    ck_assert_uint_eq(both.arg_by_tag[STRATA_TAG_PARAM], 117376 / 4);
    ck_assert_uint_eq(size_of(&both, "l1_wqkv_shard"), 64 * 192 * 2 / 2 / 4);
    ck_assert_uint_eq(both.on_axis_model, 10);
    ck_assert_uint_eq(both.collectives[STRATA_OP_REDUCE_SCATTER], 15);
    dev_stats_clear(&both);
}
END_TEST

/* Sequence parallelism is tested on SHAPE with batch=64, where the
 * activations, not the optimizer's outputs, make the peak. On model:2
 * (t = 2; B=64, S=16, d=64, bf16) the layernorms' outputs, the residuals
 * and h_l hold S/2 = 8 positions, [64,8,64] = 65536 B, and the parallel
 * blocks' inputs are gathered to [64,16,64] = 131072 B (all-gather OUT =
 * 2 x IN) and their outputs reduce-scattered from [64,16,64]
 * (reduce-scatter IN = 2 x OUT). The parameters are tp's. Collectives, all
 * over `model`: forward, the embedding's reduce-scatter, per layer two
 * all-gathers and two reduce-scatters, the head's all-gather (5 + 5);
 * backward, per layer the two blocks' inputs gathered again, the
 * all-gathers of the two blocks' output gradients, the reduce-scatters of
 * the two input gradients and the all-reduces of the two layernorm scales'
 * gradients (partial sums over S/2 positions), the head's gather again, its
 * reduce-scatter and lnf's all-reduce, the embedding's all-gather of
 * d_h_0: 15 all-gathers, 10 reduce-scatters, 5 all-reduces. Kept from
 * forward to backward per device: tp keeps h_0 .. h_2, each layer's
 * ln1_out, resid1 and ln2_out, and lnf_out at [64,16,64]; sp keeps the same
 * 4L + 2 = 10 tensors at [64,8,64] (the gathered copies are freed after
 * their forward use): 10 x 65536 B fewer. */
#define SP_SHAPE "layers=2", "d_model=64", "heads=4", "seq=16", "batch=64", "vocab=256"
enum { SP_SHARD = 64 * 8 * 64 * 2, SP_FULL = 2 * SP_SHARD };
START_TEST(tp_sp_shards_the_sequence)
{
    const char *tp_args[] = {SP_SHAPE, "mesh=model:2", "sharding=tp", NULL};
    const char *sp_args[] = {SP_SHAPE, "mesh=model:2", "sharding=tp+sp", NULL};
    dev_stats tp = gen_walk("transformer", tp_args), sp = gen_walk("transformer", sp_args);
    ck_assert_uint_eq(sp.arg_by_tag[STRATA_TAG_PARAM], 117376);
    ck_assert_uint_eq(sp.arg_by_tag[STRATA_TAG_OPTSTATE], tp.arg_by_tag[STRATA_TAG_OPTSTATE]);
    ck_assert_uint_eq(size_of(&tp, "l0_ln1_out"), SP_FULL);
    ck_assert_uint_eq(size_of(&sp, "l0_ln1_out"), SP_SHARD);
    ck_assert_uint_eq(size_of(&sp, "l0_ln1_out_ag"), SP_FULL);
    ck_assert_uint_eq(size_of(&sp, "l1_ln2_out_ag_remat"), SP_FULL);
    ck_assert_uint_eq(size_of(&sp, "l0_attn_out"), SP_FULL);
    ck_assert_uint_eq(size_of(&sp, "l0_attn_out_rs"), SP_SHARD);
    ck_assert_uint_eq(size_of(&sp, "l1_mlp_out_rs"), SP_SHARD);
    ck_assert_uint_eq(size_of(&sp, "h_0_rs"), SP_SHARD);
    ck_assert_uint_eq(size_of(&sp, "h_2"), SP_SHARD);
    ck_assert_uint_eq(size_of(&sp, "lnf_out_ag"), SP_FULL);
    ck_assert_uint_eq(size_of(&sp, "l0_qkv"), size_of(&tp, "l0_qkv"));
    ck_assert_uint_eq(sp.collectives[STRATA_OP_ALL_GATHER], 15);
    ck_assert_uint_eq(sp.collectives[STRATA_OP_REDUCE_SCATTER], 10);
    ck_assert_uint_eq(sp.collectives[STRATA_OP_ALL_REDUCE], 5);
    ck_assert_uint_eq(sp.on_axis_model, 30);
    ck_assert_uint_eq(size_of(&sp, "d_l0_ln1"), 64 * 2); /* a layernorm scale's gradient, all-reduced */
    ck_assert_uint_eq(sp.ratio[STRATA_OP_ALL_GATHER], 2);
    ck_assert_uint_eq(sp.ratio[STRATA_OP_REDUCE_SCATTER], 2);
    ck_assert_uint_eq(tp.forward_live - sp.forward_live, 10 * SP_SHARD);
    ck_assert_msg(sp.peak < tp.peak, "sp peak %" G_GUINT64_FORMAT " >= tp %" G_GUINT64_FORMAT, sp.peak, tp.peak);
    dev_stats_clear(&tp);
    dev_stats_clear(&sp);
    /* fsdp+tp+sp on data:4,model:2: fsdp's collectives over data, sp's over model. */
    const char *both_args[] = {SP_SHAPE, "mesh=data:4,model:2", "sharding=fsdp+tp+sp", "remat=full", NULL};
    dev_stats both = gen_walk("transformer", both_args);
    ck_assert_uint_eq(both.arg_by_tag[STRATA_TAG_PARAM], 117376 / 4);
    ck_assert_uint_eq(size_of(&both, "l0_ln1_out"), 16 * 8 * 64 * 2);
    ck_assert_uint_eq(both.ratio[STRATA_OP_REDUCE_SCATTER], 0); /* 4 over data, 2 over model */
    dev_stats_clear(&both);
}
END_TEST

/* MaxText's `minimal` (dots_with_no_batch_dims_saveable) on fsdp+tp+sp,
 * data:2 x model:2, SwiGLU: per device B = 64/2 = 32, S = 16 (8 outside
 * the parallel blocks), d = 64, H/T = K/T = 2 heads of 16, F/T = 64. The
 * row-parallel projections' outputs are saved as JAX's jaxpr holds them,
 * reduce-scattered ([B,S/T,d]: XLA partitions the dot into partial sums and
 * a reduce-scatter), not their [B,S,d] partial sums. Kept from forward to
 * backward per layer, bf16: qkv 32x16x96x2 = 98304 B, attn_out_rs
 * 32x8x64x2 = 32768 B, mlp_up and mlp_gate_up 32x16x64x2 = 65536 B each:
 * 262144 B; and the layer's output h_{l+1}, 32768 B. mlp_out_rs is
 * saveable but no gradient reads it (add2's reads nothing, h_{l+1} is
 * saved), so it is freed after the forward pass, as JAX keeps only the
 * residuals the backward pass reads. With
 * dead-code elimination the backward pass recomputes neither the partial
 * sums (out_proj, mlp_down) nor their reduce-scatters: the gradients read
 * none of them. Under `full` the attention block is recomputed up to the
 * MLP's activation (ln2's gradient reads resid1 = h + attn_out_rs), but not
 * the down projection, its reduce-scatter or the residual add (h_{l+1}
 * crosses the layer boundary and is saved). */
#define MINIMAL_SHAPE                                                                                                \
    SP_SHAPE, "mlp=swiglu", "ffn=128", "head_dim=16", "norm=rmsnorm", "pos=rope", "attention=flash", "mask=causal", \
        "mesh=data:2,model:2", "sharding=fsdp+tp+sp"
START_TEST(minimal_saves_the_sharded_projections)
{
    const char *args[] = {MINIMAL_SHAPE, "remat=minimal", NULL};
    dev_stats s = gen_walk("transformer", args);
    static const struct {
        const char *name;
        uint64_t bytes;
    } saved[] = {{"l0_qkv", 98304},   {"l0_attn_out_rs", 32768},     {"l0_mlp_up", 65536},
                 {"l0_mlp_gate_up", 65536}, {"h_1", 32768}};
    uint64_t layer0 = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, s.saved);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (g_str_has_prefix(k, "l0_"))
            layer0 += GPOINTER_TO_SIZE(v);
    for (size_t i = 0; i < G_N_ELEMENTS(saved); i++) {
        gpointer b = NULL;
        ck_assert_msg(g_hash_table_lookup_extended(s.saved, saved[i].name, NULL, &b), "%s not saved", saved[i].name);
        ck_assert_uint_eq(GPOINTER_TO_SIZE(b), saved[i].bytes);
    }
    ck_assert_uint_eq(layer0, 262144);
    static const char *const dead[] = {"l0_out_proj_remat", "l0_attn_out_rs_remat", "l0_mlp_down_remat",
                                       "l0_mlp_out_rs_remat", "l0_qkv_proj_remat"};
    for (size_t i = 0; i < G_N_ELEMENTS(dead); i++)
        ck_assert_msg(!g_hash_table_contains(s.steps, dead[i]), "%s recomputed", dead[i]);
    static const char *const live[] = {"l0_ln1_remat", "l0_rope_remat", "l0_attn_remat", "l0_add1_remat",
                                       "l0_ln2_remat", "l0_mlp_glu_remat"};
    for (size_t i = 0; i < G_N_ELEMENTS(live); i++)
        ck_assert_msg(g_hash_table_contains(s.steps, live[i]), "%s not recomputed", live[i]);
    dev_stats_clear(&s);
    const char *full_args[] = {MINIMAL_SHAPE, "remat=full", NULL};
    s = gen_walk("transformer", full_args);
    static const char *const full_live[] = {"l0_qkv_proj_remat", "l0_out_proj_remat", "l0_attn_out_rs_remat",
                                            "l0_mlp_in_remat", "l0_mlp_in3_remat", "l0_mlp_glu_remat"};
    for (size_t i = 0; i < G_N_ELEMENTS(full_live); i++)
        ck_assert_msg(g_hash_table_contains(s.steps, full_live[i]), "%s not recomputed", full_live[i]);
    static const char *const full_dead[] = {"l0_mlp_down_remat", "l0_mlp_out_rs_remat", "l0_add2_remat"};
    for (size_t i = 0; i < G_N_ELEMENTS(full_dead); i++)
        ck_assert_msg(!g_hash_table_contains(s.steps, full_dead[i]), "%s recomputed", full_dead[i]);
    dev_stats_clear(&s);
}
END_TEST

/* Per device D of the expansion over test-ring8: what is allocated on
 * hbm@D (the ops of device D) before D's first compute, and the peak. */
typedef struct expanded {
    uint64_t args[8], peak[8], live[8];
    bool started[8];
} expanded;

/* The device that runs op: a field of every op the expansion hands out. */
static guint device_of(const strata_op *op)
{
    ck_assert_msg(op->has_device, "%s: no device", op->name);
    ck_assert_uint_lt(op->device, 8);
    return op->device;
}

/* The expansion of src (taken) over hw; host memories are left out of the
 * per-device figures. */
static expanded expand_source(strata_source *src, const strata_hw *hw)
{
    GError *err = NULL;
    src = strata_spmd_expand(src, hw);
    expanded e = {0};
    GHashTable *sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    const strata_op *op;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1) {
        if (op->kind == STRATA_OP_COMPUTE)
            e.started[device_of(op)] = true;
        else if (op->kind == STRATA_OP_ALLOC && !(op->memory && g_str_has_prefix(op->memory, "host"))) {
            guint d = device_of(op);
            g_hash_table_insert(sizes, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
            e.live[d] += op->size;
            e.peak[d] = MAX(e.peak[d], e.live[d]);
            if (!e.started[d])
                e.args[d] += op->size;
        } else if (op->kind == STRATA_OP_FREE)
            e.live[device_of(op)] -= GPOINTER_TO_SIZE(g_hash_table_lookup(sizes, op->name));
    }
    ck_assert_msg(r == 0, "expansion: %s", err ? err->message : "?");
    g_hash_table_destroy(sizes);
    strata_source_free(src);
    return e;
}

static expanded expand_on_ring8(const char *const *args)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("test-ring8", NULL);
    strata_source *src = strata_workload_generate("transformer", args, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    expanded e = expand_source(src, hw);
    strata_hw_free(hw);
    return e;
}

/* Expanded over 8 devices, every device holds the program's arguments:
 * dp 128 + 232064 + 928256 B, fsdp 128 + (232064 + 928256) / 8 B; and on
 * every device fsdp's peak, receive buffers included, stays below dp's. */
START_TEST(fsdp_expanded_per_device)
{
    const char *dp_args[] = {SHAPE, "mesh=data:8", "sharding=dp", NULL};
    const char *fsdp_args[] = {SHAPE, "mesh=data:8", "sharding=fsdp", NULL};
    expanded dp = expand_on_ring8(dp_args), fsdp = expand_on_ring8(fsdp_args);
    for (int d = 0; d < 8; d++) {
        ck_assert_uint_eq(dp.args[d], 128 + PARAM_BYTES + OPTSTATE_BYTES);
        ck_assert_uint_eq(fsdp.args[d], 128 + (PARAM_BYTES + OPTSTATE_BYTES) / 8);
        ck_assert_msg(fsdp.peak[d] < dp.peak[d], "device %d: fsdp peak %" G_GUINT64_FORMAT " >= dp %" G_GUINT64_FORMAT,
                      d, fsdp.peak[d], dp.peak[d]);
        ck_assert_uint_eq(fsdp.peak[d], fsdp.peak[0]); /* SPMD: every device alike */
    }
}
END_TEST

/* The transformer of args with `policy` applied on hw. */
static strata_source *gen_policy(const char *const *args, const char *policy, const strata_hw *hw)
{
    GError *err = NULL;
    strata_source *src = strata_workload_generate("transformer", args, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    const char *specs[] = {policy, NULL};
    src = strata_policies_apply(src, specs, hw, &err);
    ck_assert_msg(src != NULL, "%s: %s", policy, err ? err->message : "?");
    return src;
}

/* Shard bytes per device on data:8: all parameters PARAM_BYTES / 8 = 29008,
 * a layer's 49280 x 2 / 8 = 12320, the embedding's 256 x 64 x 2 / 8 = 4096,
 * pos's 16 x 64 x 2 / 8 = 256. */
enum { SHARD_BYTES = PARAM_BYTES / 8, LAYER_SHARD = 49280 * 2 / 8, EMBED_SHARD = 4096, POS_SHARD = 256 };
/* What crosses the host link per device: the shards fetched before the
 * forward gathers (all, and the embedding a second time for the output
 * projection), before the backward gathers (all but pos: the embedding's
 * backward reads no parameter), for the optimizer, and the updated shards
 * copied out. */
enum {
    GATHER_FETCHES = SHARD_BYTES + EMBED_SHARD + SHARD_BYTES - POS_SHARD,
    HOST_LINK_BYTES = GATHER_FETCHES + SHARD_BYTES + SHARD_BYTES,
};

/* offload=param on fsdp (ZeRO-Offload of the parameters): the shards start
 * on the host, each is fetched before every all-gather that reads it and
 * dropped after it; the gathered copies stay on the device. The program's
 * peak, and every expanded device's, falls by exactly the shard bytes. */
START_TEST(fsdp_offload_param_shards)
{
    strata_hw *hw = strata_test_load_hw("test-ring8", NULL);
    const char *args[] = {SHAPE, "mesh=data:8", "sharding=fsdp", NULL};
    dev_stats base = gen_walk("transformer", args);
    strata_source *src = gen_policy(args, "offload=param", hw);
    dev_stats off = walk_device(src);
    strata_source_free(src);
    ck_assert_uint_eq(base.arg_by_tag[STRATA_TAG_PARAM], SHARD_BYTES);
    ck_assert_uint_eq(off.arg_by_tag[STRATA_TAG_PARAM], 0);
    ck_assert_uint_eq(off.host_args, SHARD_BYTES);
    ck_assert_uint_eq(base.peak - off.peak, SHARD_BYTES);
    ck_assert_uint_eq(base.unfetched_gathers, 30);
    ck_assert_uint_eq(off.unfetched_gathers, 0);
    ck_assert_uint_eq(off.layer_fetched[0], LAYER_SHARD);
    ck_assert_uint_eq(off.layer_fetched[1], LAYER_SHARD);
    ck_assert_uint_eq(off.gather_fetched, GATHER_FETCHES);
    ck_assert_uint_eq(off.fetched, GATHER_FETCHES + SHARD_BYTES);
    ck_assert_uint_eq(off.collectives[STRATA_OP_ALL_GATHER], 30);
    dev_stats_clear(&base);
    dev_stats_clear(&off);
    const char *fsdp[] = {SHAPE, "mesh=data:8", "sharding=fsdp", NULL};
    expanded eb = expand_on_ring8(fsdp), eo = expand_source(gen_policy(fsdp, "offload=param", hw), hw);
    for (int d = 0; d < 8; d++) {
        ck_assert_uint_eq(eb.args[d] - eo.args[d], SHARD_BYTES);
        ck_assert_uint_eq(eb.peak[d] - eo.peak[d], SHARD_BYTES);
    }
    strata_hw_free(hw);
}
END_TEST

static JsonObject *member_object(JsonObject *o, const char *a, const char *b)
{
    ck_assert_msg(json_object_has_member(o, a), "no %s", a);
    JsonObject *in = json_object_get_object_member(o, a);
    ck_assert_msg(json_object_has_member(in, b), "no %s.%s", a, b);
    return json_object_get_object_member(in, b);
}

/* What `strata run` on test-ring8 reports per device. */
typedef struct timed {
    double makespan;
    uint64_t peak[8], pcie[8]; /* hbm@D's peak, pcie@D's bytes */
} timed;

/* `strata gen transformer ARGS` run on test-ring8 through the binary, with
 * `policy` (NULL: none). */
static timed run_timed(const char *const *args, const char *policy)
{
    char *dir = strata_test_temp_dir(), *trace = g_build_filename(dir, "step.trace", NULL);
    char *json = g_build_filename(dir, "step.json", NULL), *hw = strata_test_source_path("configs/hw/test-ring8.ini");
    GPtrArray *gen = g_ptr_array_new();
    g_ptr_array_add(gen, "gen");
    g_ptr_array_add(gen, "transformer");
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(gen, (gpointer)*a);
    const char *tail[] = {"-o", trace, NULL};
    for (int i = 0; i < 3; i++)
        g_ptr_array_add(gen, (gpointer)tail[i]);
    strata_cli_result r = strata_test_run_cli((const char *const *)gen->pdata);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_ptr_array_free(gen, TRUE);
    r = policy ? strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", json, "-q", "--policy", policy, NULL)
               : strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", json, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(p, json, &err), "%s", err ? err->message : "?");
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    timed t = {json_object_get_double_member(o, "makespan_s"), {0}, {0}};
    for (int d = 0; d < 8; d++) {
        char name[16];
        g_snprintf(name, sizeof name, "hbm@%d", d);
        t.peak[d] = (uint64_t)json_object_get_int_member(member_object(o, "memories", name), "peak_allocated_bytes");
        g_snprintf(name, sizeof name, "pcie@%d", d);
        t.pcie[d] = (uint64_t)json_object_get_int_member(member_object(o, "links", name), "bytes");
    }
    g_object_unref(p);
    g_free(hw);
    g_free(json);
    g_free(trace);
    g_free(dir);
    return t;
}

/* The timed run of both on test-ring8 (PCIe 16 GB/s, 1 us): each device's
 * host link carries exactly HOST_LINK_BYTES, and the step takes at least
 * the first fetches longer (the embedding's and pos's shards, 1 us each,
 * come in before the first gather, which the first layer waits for). */
START_TEST(fsdp_offload_param_timed)
{
    const char *args[] = {SHAPE, "mesh=data:8", "sharding=fsdp", NULL};
    timed base = run_timed(args, NULL), off = run_timed(args, "offload=param");
    for (int d = 0; d < 8; d++) {
        ck_assert_uint_eq(base.pcie[d], 0);
        ck_assert_uint_eq(off.pcie[d], HOST_LINK_BYTES);
        ck_assert_msg(off.peak[d] < base.peak[d], "device %d: peak %" G_GUINT64_FORMAT " >= %" G_GUINT64_FORMAT, d,
                      off.peak[d], base.peak[d]);
    }
    ck_assert_msg(off.makespan - base.makespan >= 2e-6 + (EMBED_SHARD + POS_SHARD) / 16e9, "makespan %.9g -> %.9g",
                  base.makespan, off.makespan);
}
END_TEST

/* Expanded over test-ring8 on data:4,model:2 (16 sequences per device),
 * every device's peak, receive buffers included, is lower with sequence
 * parallelism. */
START_TEST(tp_sp_expanded_per_device)
{
    const char *tp_args[] = {SP_SHAPE, "mesh=data:4,model:2", "sharding=tp", NULL};
    const char *sp_args[] = {SP_SHAPE, "mesh=data:4,model:2", "sharding=tp+sp", NULL};
    expanded tp = expand_on_ring8(tp_args), sp = expand_on_ring8(sp_args);
    for (int d = 0; d < 8; d++) {
        ck_assert_uint_eq(sp.args[d], tp.args[d]);
        ck_assert_msg(sp.peak[d] < tp.peak[d], "device %d: sp peak %" G_GUINT64_FORMAT " >= tp %" G_GUINT64_FORMAT, d,
                      sp.peak[d], tp.peak[d]);
    }
}
END_TEST

/* Timed on test-ring8, data:4,model:2: every device's peak is lower with
 * sequence parallelism. */
START_TEST(tp_sp_timed_per_device)
{
    const char *tp_args[] = {SP_SHAPE, "mesh=data:4,model:2", "sharding=tp", NULL};
    const char *sp_args[] = {SP_SHAPE, "mesh=data:4,model:2", "sharding=tp+sp", NULL};
    timed tp = run_timed(tp_args, NULL), sp = run_timed(sp_args, NULL);
    for (int d = 0; d < 8; d++)
        ck_assert_msg(sp.peak[d] < tp.peak[d], "device %d: sp peak %" G_GUINT64_FORMAT " >= tp %" G_GUINT64_FORMAT, d,
                      sp.peak[d], tp.peak[d]);
}
END_TEST

/* Meshes that do not fit: each error names the parameter. */
START_TEST(shard_rejects_what_does_not_divide)
{
    static const char *const cases[][5] = {
        {"batch=12", "heads=4", "mesh=data:8", "sharding=dp", "batch divisible by the mesh's data axis (8)"},
        {"d_model=36", "heads=4", "mesh=data:8", "sharding=fsdp", "d_model divisible by the mesh's data axis (8)"},
        {"d_model=64", "heads=1", "mesh=model:2", "sharding=tp", "heads divisible by the mesh's model axis (2)"},
        {"vocab=255", "heads=4", "mesh=model:2", "sharding=tp", "vocab divisible"},
        {"batch=8", "heads=4", "mesh=data:8", "sharding=none", "needs sharding="},
        {"batch=8", "heads=4", "mesh=", "sharding=fsdp", "needs a mesh"},
        {"batch=8", "heads=4", "mesh=pipe:2", "sharding=dp", "does not match the axes"},
        {"batch=8", "heads=4", "mesh=rows:2", "sharding=dp", "unknown axis 'rows'"},
        {"batch=8", "heads=4", "mesh=data:2,fsdp:2", "sharding=none", "hybrid sharding"},
        {"batch=8", "heads=4", "mesh=tensor:2,model:2", "sharding=none", "a second time"},
        {"batch=8", "heads=4", "mesh=pipe:2", "schedule=interleaved", "rule interleave-stages"},
        {"batch=8", "heads=4", "mesh=pipe:4", "microbatches=3", "rule microbatches:"},
        {"batch=8", "heads=4", "mesh=expert:2", "sharding=none", "rule experts-divide"},
        {"microbatches=2", "sharding=dp", "mesh=data:2", "heads=4", "need a pipe axis"},
        {"batch=8", "heads=4", "mesh=tensor:2", "virtual=2", "virtual (vp) needs schedule=interleaved"},
        {"batch=8", "heads=4", "mesh=data:2,model:2", "sharding=dp", "does not use the mesh's model axis"},
        {"batch=8", "heads=4", "mesh=data:8", "sharding=tp", "needs a model axis"},
        {"batch=8", "heads=4", "mesh=model:2", "sharding=fsdp+tp", "needs a data axis"},
        {"batch=8", "heads=4", "mesh=data:2", "prefetch=-1", "prefetch >= 0"},
        {"heads=4", "mesh=data:2", "sharding=dp", "scan_layers=true", "expected sharding=fsdp"},
        {"seq=15", "heads=4", "mesh=model:2", "sharding=tp+sp", "seq divisible by the mesh's model axis (2)"},
        {"batch=8", "heads=4", "mesh=model:2", "sharding=fsdp+tp+sp", "needs a data axis"},
        {"batch=8", "heads=4", "mesh=data:2", "sharding=tp+sp", "needs a model axis"},
        {"batch=8", "heads=4", "mesh=data:0", "sharding=dp", "mesh=data:0: expected a mesh"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[] = {"layers=1", cases[i][0], cases[i][1], cases[i][2], cases[i][3], NULL};
        GError *err = NULL;
        ck_assert_ptr_null(strata_workload_generate("transformer", args, &err));
        ck_assert_msg(err && err->code == STRATA_ERROR_INPUT && strstr(err->message, cases[i][4]), "case %zu: %s",
                      i, err ? err->message : "no error");
        g_clear_error(&err);
    }
    /* Sizes that overflow are refused before any sharding. */
    const char *huge[] = {"vocab=4294967296", "d_model=4294967296", "heads=1", "mesh=data:2", "sharding=fsdp",
                          NULL};
    GError *err = NULL;
    ck_assert_ptr_null(strata_workload_generate("transformer", huge, &err));
    ck_assert_msg(strstr(err->message, "overflows 64 bits"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

/* Axes by name: fsdp:4,tensor:2 is data:4,model:2 with sharding=fsdp+tp
 * (the same trace, the mesh renamed); pipe with layers that do not divide
 * into stages names the rule. */
START_TEST(shard_named_axes)
{
    const char *named[] = {"layers=2", "d_model=64", "heads=4", "seq=16", "batch=8", "vocab=256",
                           "mesh=fsdp:4,tensor:2", NULL};
    const char *old[] = {"layers=2", "d_model=64", "heads=4", "seq=16", "batch=8", "vocab=256",
                         "mesh=data:4,model:2", "sharding=fsdp+tp", NULL};
    GError *err = NULL;
    strata_source *a = strata_workload_generate("transformer", named, &err);
    ck_assert_msg(a, "%s", err ? err->message : "");
    strata_source *b = strata_workload_generate("transformer", old, &err);
    ck_assert_msg(b, "%s", err ? err->message : "");
    const strata_op *x, *y;
    int ga, gb, ops = 0;
    while ((ga = strata_source_next(a, &x, NULL)) == 1 && (gb = strata_source_next(b, &y, NULL)) == 1) {
        ck_assert_int_eq(x->kind, y->kind);
        ck_assert_str_eq(x->name ? x->name : "", y->name ? y->name : "");
        if (x->kind == STRATA_OP_OPTION)
            ck_assert_str_eq(x->value, y->value);
        ops++;
    }
    ck_assert_int_eq(ga, 0);
    ck_assert_int_gt(ops, 100);
    strata_source_free(a);
    strata_source_free(b);
    const char *uneven[] = {"layers=3", "heads=4", "batch=8", "mesh=pipe:2,data:2", NULL};
    ck_assert_ptr_null(strata_workload_generate("transformer", uneven, &err));
    /* the rule's text is an argument, not a format: Megatron's "%" read "%%" */
    ck_assert_msg(err && strstr(err->message, "rule layers-per-stage") &&
                      strstr(err->message, "(Megatron transformer_block.py: num_layers % pipeline size, and layers "
                                           "per stage % virtual stages)"),
                  "%s", err ? err->message : "");
    g_clear_error(&err);
}
END_TEST

/* The command line: a mesh of two axes is one argument; a bad one exits 2. */
START_TEST(cli_mesh_argument)
{
    strata_cli_result r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=16",
                                          "batch=8", "vocab=256", "mesh=data:4,model:2", "sharding=fsdp+tp", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "option mesh=data:4,model:2\n"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "transformer", "batch=6", "mesh=data:4", "sharding=fsdp", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "batch"), "%s", r.err);
    strata_cli_result_clear(&r);
}
END_TEST

static Suite *shard_suite(void)
{
    Suite *s = suite_create("workload_shard");
    TCase *tc = tcase_create("sharded");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, collective_sizes_by_op);
    tcase_add_test(tc, collective_rejects_bad_sizes);
    tcase_add_test(tc, fsdp_holds_an_eighth);
    tcase_add_test(tc, fsdp_prefetch_distance);
    tcase_add_test(tc, fsdp_scan_layers_awaits_each_gather);
    tcase_add_test(tc, tp_shards_weights_by_t);
    tcase_add_test(tc, tp_sp_shards_the_sequence);
    tcase_add_test(tc, minimal_saves_the_sharded_projections);
    tcase_add_test(tc, tp_sp_expanded_per_device);
    tcase_add_test(tc, tp_sp_timed_per_device);
    tcase_add_test(tc, fsdp_expanded_per_device);
    tcase_add_test(tc, fsdp_offload_param_shards);
    tcase_add_test(tc, fsdp_offload_param_timed);
    tcase_add_test(tc, shard_rejects_what_does_not_divide);
    tcase_add_test(tc, shard_named_axes);
    tcase_add_test(tc, cli_mesh_argument);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(shard_suite()); }
