/*
 * bench_pods.c: issue 40's pod cases, simulated once per class of alike
 * devices (--collectives classes, exact; fast, approximate: spmd.h) against
 * the step schedule (--collectives steps, the reference), per chip count.
 *
 * Each case generates its trace (not timed), then runs `strata run` as a
 * child process in the reduced mode and, where it is the baseline, with
 * --collectives steps under a time limit (STRATA_BENCH_STEPS_TIMEOUT
 * seconds, default 300: a step schedule of thousands of chips runs for
 * hours); CPU time (user + system), peak RSS and the results JSON (ops,
 * makespan, classes) of each.
 *
 *   8         a sharded step (4 layers, d=1024, fsdp+tp over data:2,model:4)
 *             on tpu-v5e-256.ini resized to 2x4: classes (exact);
 *   64_8b     the 8B-shaped FSDP step of issue 40 (32 layers, d=4096,
 *             seq 4096, data:64) on tpu-v5p-64.ini: fast (its ring lies row by
 *             row over the 4x4x4 torus: no exact symmetry);
 *   64_chain  100 chained 1 MiB all-reduces over 64 GPUs of one NVSwitch in
 *             8 hosts (dgx-h100.ini resized), NCCL's default (NVLS): classes;
 *   64_chain_8x8  the same chain over 8 nodes of 8 GPUs joined by rails of
 *             InfiniBand (h100-16x8-ib.ini at 64 GPUs), NCCL's default
 *             (Tree, LL128, 16 channels): classes (local ranks rotated with
 *             the channels' lanes: 8 simulated);
 *   256_16b   a 16B-shaped FSDP step (48 layers, d=5120, seq 2048, data:256,
 *             remat=full: 16 GiB of HBM) on tpu-v5e-256.ini: fast;
 *   1024      the data:1024 FSDP step of docs/multi-device.md (4 layers,
 *             d=1024) on tpu-v5p-64.ini at 8x8x16: fast;
 *   8960_70b  a 70B-shaped FSDP+TP step (80 layers, d=8960, 140 heads, seq
 *             4096, data:320,model:28: d_model must divide by the data axis
 *             and the heads by the model axis) over a full v5p pod
 *             (16x20x28): fast; no steps baseline;
 *   8960_ring `gen collective devices=8960`: a 1 GiB all-reduce (bidir-torus
 *             over the pod's 16x20x28) over the pod: fast; no steps baseline;
 *   8960_ring_default  the same as `strata run` runs it by default (no
 *             --collectives, mode=default): no exact symmetry (its chunks
 *             differ by a byte), 53,760 copies a round over every device,
 *             so fast, said on standard error (spmd.h AUTO);
 *   32_moe    a MoE step as MaxText's 700B runs it (experts with capacity,
 *             fsdp x expert, activations offloaded to the hosts), small:
 *             2 layers, d=1024, 8 experts, fsdp:4 x expert:8 on
 *             tpu-v6e-256.ini resized to 4x8: classes (8: data+1);
 *   256_moe   validation/steps/moe.ini's MaxText MoE 700B step (16 experts
 *             top 2, capacity 1.5, fsdp:16 x expert:16, activations
 *             offloaded to the hosts) cut to 1 layer of seq 1024 on
 *             tpu-v6e-256.ini: classes (16: data+1; the hosts whole);
 *   256_moe700b  the published step itself (56 layers, seq 8192): classes;
 *             no steps baseline.
 *
 * Prints per case
 *   RESULT name=pods_CASE value=CPU_S baseline=STEPS_CPU_S|- ratio=R|- target=T|- unit=s chips=N ops=..
 *          steps_ops=.. makespan_err=E|- classes=C mode=M makespan_s=S coll_err_max=E|- coll_err_sum=E|- peak_err_max=E|-
 * (makespan_err: the reduced run's makespan against the steps', in %;
 * target: issue 40's, on the reduced run's CPU time; coll_err_max and
 * peak_err_max: the largest difference, in %, of a collective's time and of
 * a memory's peak allocation from the steps'; coll_err_sum: the collectives'
 * differences summed over their steps' times summed, in %) and
 *   RESULT name=pods_CASE_rss value=PEAK_MIB baseline=STEPS_PEAK_MIB|- ratio=R|- target=T|- unit=MiB
 *
 * Usage: bench_pods [CASE...]   (default: every case)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "child_run.h"

typedef struct pod_case {
    const char *name;
    int chips;
    const char *hw;          /* configs/hw/ */
    const char *sets[4];     /* --set KEY=VALUE, NULL-terminated */
    const char *gen[28];     /* strata gen's arguments, NULL-terminated */
    const char *mode;        /* --collectives of the reduced run */
    double target_s, target_mib; /* issue 40's (0: none) */
    bool steps;              /* run --collectives steps as the baseline */
} pod_case;

static const pod_case cases[] = {
    {"8", 8, "tpu-v5e-256.ini", {"hardware.devices=8", "hardware.devices_per_host=8", "interconnect.ici.dims=2x4"},
     {"transformer", "layers=4", "d_model=1024", "heads=16", "seq=1024", "batch=2", "mesh=data:2,model:4",
      "sharding=fsdp+tp"},
     "classes", 0, 0, true},
    {"64_8b", 64, "tpu-v5p-64.ini", {NULL},
     {"transformer", "layers=32", "d_model=4096", "heads=32", "seq=4096", "batch=64", "mesh=data:64",
      "sharding=fsdp"},
     "fast", 3, 512, true},
    {"64_chain", 64, "dgx-h100.ini", {"hardware.devices=64", "hardware.devices_per_host=8"},
     {"collective", "devices=64", "bytes=1MiB", "iters=100"}, "classes", 1, 0, true},
    {"64_chain_8x8", 64, "h100-16x8-ib.ini", {"hardware.devices=64"},
     {"collective", "devices=64", "bytes=1MiB", "iters=100"}, "classes", 1, 0, true},
    {"256_16b", 256, "tpu-v5e-256.ini", {NULL},
     {"transformer", "layers=48", "d_model=5120", "heads=40", "seq=2048", "batch=256", "mesh=data:256",
      "sharding=fsdp", "remat=full"},
     "fast", 5, 0, true},
    {"1024", 1024, "tpu-v5p-64.ini", {"hardware.devices=1024", "interconnect.ici.dims=8x8x16"},
     {"transformer", "layers=4", "d_model=1024", "heads=16", "batch=1024", "mesh=data:1024", "sharding=fsdp"},
     "fast", 20, 0, true},
    {"8960_70b", 8960, "tpu-v5p-64.ini", {"hardware.devices=8960", "interconnect.ici.dims=16x20x28"},
     {"transformer", "layers=80", "d_model=8960", "heads=140", "seq=4096", "batch=320", "vocab=32256",
      "mesh=data:320,model:28", "sharding=fsdp+tp"},
     "fast", 60, 4096, false},
    {"8960_ring", 8960, "tpu-v5p-64.ini", {"hardware.devices=8960", "interconnect.ici.dims=16x20x28"},
     {"collective", "devices=8960", "bytes=1GiB"}, "fast", 0, 0, false},
    {"8960_ring_default", 8960, "tpu-v5p-64.ini", {"hardware.devices=8960", "interconnect.ici.dims=16x20x28"},
     {"collective", "devices=8960", "bytes=1GiB"}, "default", 0, 0, false},
#define MOE_700B                                                                                                   \
    "transformer", "d_model=8192", "heads=128", "kv_heads=8", "head_dim=256", "ffn=32768", "mlp=swiglu",            \
        "norm=rmsnorm", "pos=rope", "tie=false", "vocab=32000", "experts=16", "top_k=2", "capacity_factor=1.5",      \
        "batch=256", "mesh=fsdp:16,expert:16", "attention=flash", "mask=causal",                                     \
        "remat=save_and_offload_only_these_names", "remat_offload=qkv_proj:out_proj", "optimizer=sgd"
    {"32_moe", 32, "tpu-v6e-256.ini", {"hardware.devices=32", "interconnect.ici.dims=4x8"},
     {"transformer", "layers=2", "d_model=1024", "heads=16", "kv_heads=8", "head_dim=64", "ffn=4096", "mlp=swiglu",
      "experts=8", "top_k=2", "capacity_factor=1.5", "seq=1024", "batch=32", "mesh=fsdp:4,expert:8",
      "attention=flash", "mask=causal", "remat=save_and_offload_only_these_names",
      "remat_offload=qkv_proj:out_proj", "optimizer=sgd", NULL},
     "classes", 0, 0, true},
    {"256_moe", 256, "tpu-v6e-256.ini", {NULL}, {MOE_700B, "layers=1", "seq=1024", NULL}, "classes", 5, 0, true},
    {"256_moe700b", 256, "tpu-v6e-256.ini", {NULL}, {MOE_700B, "layers=56", "seq=8192", NULL}, "classes", 5, 0, false},
#undef MOE_700B
};

/* What one run gave. */
typedef struct run_report {
    bool done;
    child_usage use;
    gint64 ops, classes;
    double makespan_s;
    double coll_err, coll_sum_err, peak_err; /* steps: the reduced run's differences from it, % (-1: none) */
} run_report;

static void read_results(const char *path, run_report *rep)
{
    JsonParser *parser = json_parser_new();
    JsonNode *root = json_parser_load_from_file(parser, path, NULL) ? json_parser_get_root(parser) : NULL;
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    rep->done = o && json_object_has_member(o, "ops");
    if (rep->done) {
        rep->ops = json_object_get_int_member(o, "ops");
        rep->makespan_s = json_object_get_double_member(o, "makespan_s");
        JsonObject *c = json_object_has_member(o, "classes") ? json_object_get_object_member(o, "classes") : NULL;
        rep->classes = c ? json_object_get_int_member(c, "simulated_devices") : 0;
    }
    g_object_unref(parser);
}

/* The largest relative difference, in %, between a's and b's values of
 * member `key` of the objects in member `list` (an array, matched by
 * position, or an object, by member name); -1 when the lists differ.
 * sum_err: the sum of the absolute differences over the sum of b's, in %. */
static double max_rel_err(JsonObject *a, JsonObject *b, const char *list, const char *key, double *sum_err)
{
    JsonNode *na = json_object_get_member(a, list), *nb = json_object_get_member(b, list);
    if (!na || !nb || JSON_NODE_TYPE(na) != JSON_NODE_TYPE(nb))
        return -1;
    GList *names = JSON_NODE_HOLDS_OBJECT(na) ? json_object_get_members(json_node_get_object(na)) : NULL;
    guint n = JSON_NODE_HOLDS_ARRAY(na) ? json_array_get_length(json_node_get_array(na)) : g_list_length(names);
    if (JSON_NODE_HOLDS_ARRAY(na) && json_array_get_length(json_node_get_array(nb)) != n)
        n = 0;
    double worst = n ? 0 : -1, diff = 0, total = 0;
    GList *l = names;
    for (guint i = 0; i < n; i++) {
        JsonNode *ea, *eb;
        if (JSON_NODE_HOLDS_ARRAY(na)) {
            ea = json_array_get_element(json_node_get_array(na), i);
            eb = json_array_get_element(json_node_get_array(nb), i);
        } else {
            ea = json_object_get_member(json_node_get_object(na), l->data);
            eb = json_object_get_member(json_node_get_object(nb), l->data);
            l = l->next;
        }
        if (!eb || !JSON_NODE_HOLDS_OBJECT(ea) || !JSON_NODE_HOLDS_OBJECT(eb) ||
            !json_object_has_member(json_node_get_object(eb), key)) {
            worst = -1;
            break;
        }
        double va = json_object_get_double_member(json_node_get_object(ea), key);
        double vb = json_object_get_double_member(json_node_get_object(eb), key);
        double e = vb != 0 ? 100 * fabs(va - vb) / fabs(vb) : (va != 0 ? 100 : 0);
        worst = e > worst ? e : worst;
        diff += fabs(va - vb);
        total += fabs(vb);
    }
    g_list_free(names);
    *sum_err = worst >= 0 && total > 0 ? 100 * diff / total : -1;
    return worst;
}

/* Every collective's time and every memory's peak of the reduced run
 * (json) against the steps' (steps_json, whose report s gets them): the
 * largest difference of each and that of the collectives' total time, in %. */
static void agreement(const char *json, const char *steps_json, run_report *s)
{
    JsonParser *pa = json_parser_new(), *pb = json_parser_new();
    double peak_sum;
    s->coll_err = s->coll_sum_err = s->peak_err = -1;
    if (json_parser_load_from_file(pa, json, NULL) && json_parser_load_from_file(pb, steps_json, NULL) &&
        JSON_NODE_HOLDS_OBJECT(json_parser_get_root(pa)) && JSON_NODE_HOLDS_OBJECT(json_parser_get_root(pb))) {
        JsonObject *a = json_node_get_object(json_parser_get_root(pa));
        JsonObject *b = json_node_get_object(json_parser_get_root(pb));
        s->coll_err = max_rel_err(a, b, "collectives", "time_s", &s->coll_sum_err);
        s->peak_err = max_rel_err(a, b, "memories", "peak_allocated_bytes", &peak_sum);
    }
    g_object_unref(pa);
    g_object_unref(pb);
}

/* Runs the case's trace in `mode` ("default": no --collectives), within
 * `timeout` seconds (0: none). */
static run_report run_mode(const char *strata, const pod_case *c, const char *trace, const char *json,
                           const char *mode, int timeout)
{
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", c->hw, NULL);
    char *limit = g_strdup_printf("%d", timeout);
    GPtrArray *argv = g_ptr_array_new();
    if (timeout > 0) {
        const char *t[] = {"timeout", "-s", "KILL", limit, NULL};
        for (const char *const *a = t; *a; a++)
            g_ptr_array_add(argv, (char *)*a);
    }
    const char *run[] = {strata, "run", "-q", "--hw", hw, "--trace", trace, "--json", json,
                         strcmp(mode, "default") == 0 ? NULL : "--collectives", mode, NULL};
    for (const char *const *a = run; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    for (const char *const *s = c->sets; *s; s++) {
        g_ptr_array_add(argv, "--set");
        g_ptr_array_add(argv, (char *)*s);
    }
    g_ptr_array_add(argv, NULL);
    g_unlink(json);
    run_report rep = {0};
    if (child_run((const char *const *)argv->pdata, 1, &rep.use)) /* 1: out of memory, still a result */
        read_results(json, &rep);
    g_ptr_array_free(argv, TRUE);
    g_free(limit);
    g_free(hw);
    return rep;
}

static bool generate(const char *strata, const pod_case *c, const char *trace)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)strata);
    g_ptr_array_add(argv, "gen");
    for (const char *const *a = c->gen; *a; a++)
        g_ptr_array_add(argv, (char *)*a);
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, (char *)trace);
    g_ptr_array_add(argv, NULL);
    child_usage use;
    bool ok = child_run((const char *const *)argv->pdata, 0, &use);
    g_ptr_array_free(argv, TRUE);
    return ok;
}

static void print_case(const pod_case *c, const run_report *r, const run_report *s)
{
    char target[32] = "-", target_mib[32] = "-", err[32] = "-", base[32] = "-", ratio[32] = "-";
    char base_mib[32] = "-", ratio_mib[32] = "-", steps_ops[32] = "-", coll[32] = "-", coll_sum[32] = "-", peak[32] = "-";
    if (c->target_s > 0)
        g_snprintf(target, sizeof target, "%g", c->target_s);
    if (c->target_mib > 0)
        g_snprintf(target_mib, sizeof target_mib, "%g", c->target_mib);
    if (s->done) {
        g_snprintf(err, sizeof err, "%+.3f%%", 100 * (r->makespan_s - s->makespan_s) / s->makespan_s);
        g_snprintf(base, sizeof base, "%.3f", s->use.cpu_s);
        g_snprintf(ratio, sizeof ratio, "%.4f", r->use.cpu_s / s->use.cpu_s);
        g_snprintf(base_mib, sizeof base_mib, "%.1f", s->use.rss_mib);
        g_snprintf(ratio_mib, sizeof ratio_mib, "%.3f", r->use.rss_mib / s->use.rss_mib);
        g_snprintf(steps_ops, sizeof steps_ops, "%" G_GINT64_FORMAT, s->ops);
        if (s->coll_err >= 0)
            g_snprintf(coll, sizeof coll, "%.3f%%", s->coll_err);
        if (s->coll_sum_err >= 0)
            g_snprintf(coll_sum, sizeof coll_sum, "%.3f%%", s->coll_sum_err);
        if (s->peak_err >= 0)
            g_snprintf(peak, sizeof peak, "%.3f%%", s->peak_err);
    } else if (c->steps) {
        g_snprintf(base, sizeof base, "-");
        g_snprintf(steps_ops, sizeof steps_ops, "unfinished");
    }
    /* the targets bound the value (target_of=value): a ratio to steps is informative */
    printf("RESULT name=pods_%s value=%.3f baseline=%s ratio=%s target=%s target_of=value unit=s chips=%d "
           "ops=%" G_GINT64_FORMAT " steps_ops=%s makespan_err=%s classes=%" G_GINT64_FORMAT
           " mode=%s makespan_s=%.9g coll_err_max=%s coll_err_sum=%s peak_err_max=%s\n",
           c->name, r->use.cpu_s, base, ratio, target, c->chips, r->ops, steps_ops, err, r->classes, c->mode,
           r->makespan_s, coll, coll_sum, peak);
    printf("RESULT name=pods_%s_rss value=%.1f baseline=%s ratio=%s target=%s target_of=value unit=MiB\n", c->name,
           r->use.rss_mib, base_mib, ratio_mib, target_mib);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    child_bench b = child_bench_open("bench-pods-XXXXXX");
    const char *strata = b.strata, *dir = b.dir;
    const char *t = getenv("STRATA_BENCH_STEPS_TIMEOUT");
    int timeout = t ? atoi(t) : 300;
    int failed = 0;
    printf("bench_pods: issue 40's pod cases, reduced run (classes or fast) against --collectives steps "
           "(limited to %d s)\n",
           timeout);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const pod_case *c = &cases[i];
        bool wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted = wanted || strcmp(argv[a], c->name) == 0;
        if (!wanted)
            continue;
        char *trace = g_strdup_printf("%s/%s.trace", dir, c->name);
        char *json = g_strdup_printf("%s/%s.json", dir, c->name);
        char *steps_json = g_strdup_printf("%s/%s-steps.json", dir, c->name);
        run_report r = {0}, s = {0};
        if (generate(strata, c, trace))
            r = run_mode(strata, c, trace, json, c->mode, 0);
        if (r.done && c->steps)
            s = run_mode(strata, c, trace, steps_json, "steps", timeout);
        if (s.done)
            agreement(json, steps_json, &s);
        if (r.done)
            print_case(c, &r, &s);
        else
            failed++;
        if (c->steps && !s.done)
            printf("pods_%s: --collectives steps did not finish within %d s\n", c->name, timeout);
        g_unlink(trace);
        g_unlink(json);
        g_unlink(steps_json);
        g_free(trace);
        g_free(json);
        g_free(steps_json);
    }
    child_bench_close(&b);
    return failed ? 1 : 0;
}
