/*
 * bench_coll_monotone.c: issue 39's acceptance, "a collective's time never
 * falls as its size grows under the same algorithm; the choice between
 * algorithms follows the library's own selection", swept over every
 * shipped multi-device hardware file (coll_sweep.h).
 *
 * For each file, collective (all-reduce, all-gather, reduce-scatter) and
 * configuration (the library's default choice, then each of its
 * algorithms forced as NCCL_ALGO / RCCL's rccl_algo / algo= would), the
 * sizes from 8 B to 16 GiB at every power of two and at 1.25x, 1.5x and
 * 1.75x between them, it prints
 *   FALL file op config: A (algo/proto) T_A -> B (algo/proto) T_B  -X%
 * for every size whose time falls below a smaller size's under the same
 * algorithm and protocol (coll_sweep_falls), and
 *   SLOW file op SIZE: default ALGO/PROTO T, CONFIG T' (ratio)
 * where the default's simulated time exceeds the fastest forced
 * configuration's by more than 25% (the library picks by its own
 * estimate, so a gap is expected near its crossovers; a wide one says the
 * simulation and the estimate part). Then
 *   RESULT name=coll_monotone_falls value=N target=- unit=cases (informative: the library has its own)
 *   RESULT name=coll_monotone_slow value=N target=- unit=sizes
 *
 * Without arguments it sweeps the powers of two only, on the files of 64
 * devices or fewer (a few minutes on two cores); --full adds the 1.25x,
 * 1.5x, 1.75x sizes and the larger files (about an hour of CPU);
 * --file NAME keeps the files whose name contains NAME; --op OP one
 * collective; --from I starts at the I-th file (0-based, the table's
 * order); --shard K/N runs every N-th series from K (two shells, two
 * cores); --tol F ignores falls below F (default 1e-6).
 * Usage: bench_coll_monotone [--full] [--file NAME] [--op OP] [--from I] [--shard K/N] [--tol F]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll_sweep.h"

typedef enum { IMPL_NCCL, IMPL_RCCL, IMPL_XLA } impl_kind;

/* The shipped multi-device files (configs/hw), their devices and the
 * interconnect whose collectives= names the implementation. */
typedef struct sweep_file {
    const char *name;
    uint32_t devices;
    impl_kind impl;
    const char *group;
    /* the largest size swept, and whether --full's in-between sizes are:
     * a run of 16 GiB over 128 ranks takes 50 s, one over 1,024 TPU chips
     * 3 s at any size, so the two largest files sweep the powers of two
     * to 1 GiB (h100-16x8-ib) and all-reduce alone (tpu-v5e-256x4), and
     * the NVL72 rack (several seconds a run from 4 GiB) stops at 1 GiB */
    uint64_t max_bytes;
    bool coarse, all_reduce_only;
} sweep_file;

#define GIB (1ull << 30)
static const sweep_file files[] = {
    {"a100-8", 8, IMPL_NCCL, "nvlink", 16 * GIB, false, false},
    {"dgx-h100", 8, IMPL_NCCL, "nvlink", 16 * GIB, false, false},
    {"hgx-h200", 8, IMPL_NCCL, "nvlink", 16 * GIB, false, false},
    {"hgx-b200", 8, IMPL_NCCL, "nvlink", 16 * GIB, false, false},
    {"gb200-nvl72", 72, IMPL_NCCL, "nvlink", GIB, false, false},
    {"h100-2x8-ib", 16, IMPL_NCCL, "nvlink", 16 * GIB, false, false},
    {"a3-high-4x8", 32, IMPL_NCCL, "nvlink", 16 * GIB, false, false},
    {"h100-16x8-ib", 128, IMPL_NCCL, "nvlink", GIB, true, false},
    {"mi300x-8", 8, IMPL_RCCL, "xgmi", 16 * GIB, false, false},
    {"mi325x-8", 8, IMPL_RCCL, "xgmi", 16 * GIB, false, false},
    {"tpu-v5e-16", 16, IMPL_XLA, "ici", 16 * GIB, false, false},
    {"tpu-v5p-64", 64, IMPL_XLA, "ici", 16 * GIB, false, false},
    {"tpu7x-64", 64, IMPL_XLA, "ici", 16 * GIB, false, false},
    {"tpu-v5e-256", 256, IMPL_XLA, "ici", 16 * GIB, false, false},
    {"tpu-v6e-256", 256, IMPL_XLA, "ici", 16 * GIB, false, false},
    {"tpu-v5e-256x4", 1024, IMPL_XLA, "ici", 16 * GIB, true, true},
};

/* A configuration: a name, --set overrides (KEY suffix after
 * interconnect.GROUP.) and extra gen words. */
typedef struct sweep_config {
    const char *name, *set, *gen;
} sweep_config;

static const sweep_config nccl_configs[] = {
    {"default", NULL, NULL},          {"Ring", "nccl_algo=Ring", NULL}, {"Tree", "nccl_algo=Tree", NULL},
    {"NVLS", "nccl_algo=NVLS", NULL}, {"NVLS_TREE", "nccl_algo=NVLS_TREE", NULL},
    {"PAT", "nccl_algo=PAT", NULL},   {NULL, NULL, NULL},
};
static const sweep_config rccl_configs[] = {
    {"default", NULL, NULL},
    {"Ring", "rccl_algo=Ring", NULL},
    {"Tree", "rccl_algo=Tree", NULL},
    {NULL, NULL, NULL},
};
static const sweep_config xla_configs[] = {
    {"default", NULL, NULL},
    {"ring", NULL, "algo=ring"},
    {"hierarchical", NULL, "algo=hierarchical"},
    {NULL, NULL, NULL},
};

static const char *const ops[] = {"all-reduce", "all-gather", "reduce-scatter"};

static const sweep_config *configs_of(impl_kind k)
{
    return k == IMPL_NCCL ? nccl_configs : k == IMPL_RCCL ? rccl_configs : xla_configs;
}

static void describe(const coll_sweep_point *p, char *out, size_t size)
{
    if (p->lib_algo[0])
        snprintf(out, size, "%s/%s/%u", p->lib_algo, p->lib_proto, p->channels);
    else
        snprintf(out, size, "%s", p->algo);
}

int main(int argc, char **argv)
{
    bool full = false;
    const char *only = NULL, *only_op = NULL;
    unsigned shard = 0, shards = 1;
    double tol = 1e-6;
    size_t skip = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            full = true;
        else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc)
            only_op = argv[++i];
        else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
            skip = (size_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--tol") == 0 && i + 1 < argc)
            tol = atof(argv[++i]);
        else if (strcmp(argv[i], "--shard") == 0 && i + 1 < argc && sscanf(argv[i + 1], "%u/%u", &shard, &shards) == 2 &&
                 shards > 0 && shard < shards)
            i++;
        else {
            fprintf(stderr, "usage: %s [--full] [--file NAME] [--op OP] [--from I] [--shard K/N] [--tol F]\n", argv[0]);
            return 2;
        }
    }
    char *root = g_strdup(STRATA_SOURCE_DIR);
    unsigned falls_total = 0, slow_total = 0, series = 0;
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        if ((only && !strstr(files[f].name, only)) || (!only && f < skip) || (!full && !only && files[f].devices > 64))
            continue;
        char *hw = g_strdup_printf("%s/configs/hw/%s.ini", root, files[f].name);
        for (size_t o = 0; o < G_N_ELEMENTS(ops); o++) {
            if ((only_op && strcmp(only_op, ops[o]) != 0) || (files[f].all_reduce_only && o > 0))
                continue;
            if (series++ % shards != shard)
                continue;
            /* sizes: nccl-tests' per-device bytes, a multiple of the
             * devices x 4 bytes (f32) so every rank's shard is whole */
            size_t n = 0;
            uint64_t *sizes = coll_sweep_sizes(8, files[f].max_bytes, full && !files[f].coarse, 4ull * files[f].devices, &n);
            const sweep_config *cfg = configs_of(files[f].impl);
            size_t n_cfg = 0;
            while (cfg[n_cfg].name)
                n_cfg++;
            coll_sweep_point *pts = g_new0(coll_sweep_point, n_cfg * n);
            for (size_t c = 0; c < n_cfg; c++) {
                char *set = cfg[c].set ? g_strdup_printf("interconnect.%s.%s", files[f].group, cfg[c].set) : NULL;
                const char *sets[] = {set, NULL};
                for (size_t i = 0; i < n; i++) {
                    coll_sweep_point *p = &pts[c * n + i];
                    if (!coll_sweep_run(hw, set ? sets : NULL, ops[o], files[f].devices, cfg[c].gen, sizes[i], p)) {
                        fprintf(stderr, "cannot run a child\n");
                        return 3;
                    }
                    if (!p->ok && i == n - 1) /* the configuration cannot run here (NVLS on A100) */
                        printf("SKIP %s %s %s %" G_GUINT64_FORMAT ": %s\n", files[f].name, ops[o], cfg[c].name,
                               sizes[i], p->message);
                }
                g_free(set);
                GArray *falls = coll_sweep_falls(pts + c * n, n, tol);
                for (guint k = 0; k < falls->len; k++) {
                    const coll_sweep_fall *x = &g_array_index(falls, coll_sweep_fall, k);
                    const coll_sweep_point *a = &pts[c * n + x->a], *b = &pts[c * n + x->b];
                    char da[48], db[48];
                    describe(a, da, sizeof da);
                    describe(b, db, sizeof db);
                    printf("FALL %s %s %s: %" G_GUINT64_FORMAT " (%s) %.6g us -> %" G_GUINT64_FORMAT
                           " (%s) %.6g us  -%.3f%%\n",
                           files[f].name, ops[o], cfg[c].name, a->bytes, da, a->time_s * 1e6, b->bytes, db,
                           b->time_s * 1e6, x->drop * 100);
                }
                falls_total += falls->len;
                g_array_free(falls, TRUE);
                fflush(stdout);
            }
            /* the default against the fastest configuration forced */
            for (size_t i = 0; i < n; i++) {
                const coll_sweep_point *d = &pts[i], *best = NULL;
                size_t best_c = 0;
                for (size_t c = 1; c < n_cfg; c++)
                    if (pts[c * n + i].ok && (!best || pts[c * n + i].time_s < best->time_s))
                        best = &pts[c * n + i], best_c = c;
                if (d->ok && best && d->time_s > 1.25 * best->time_s) {
                    char dd[48], db[48];
                    describe(d, dd, sizeof dd);
                    describe(best, db, sizeof db);
                    printf("SLOW %s %s %" G_GUINT64_FORMAT ": default %s %.6g us, %s %s %.6g us (x%.3f)\n",
                           files[f].name, ops[o], sizes[i], dd, d->time_s * 1e6, cfg[best_c].name, db,
                           best->time_s * 1e6, d->time_s / best->time_s);
                    slow_total++;
                }
            }
            g_free(pts);
            g_free(sizes);
            fflush(stdout);
        }
        g_free(hw);
    }
    g_free(root);
    printf("RESULT name=coll_monotone_falls value=%u target=- unit=cases\n", falls_total);
    printf("RESULT name=coll_monotone_slow value=%u target=- unit=sizes\n", slow_total);
    return 0;
}
