/*
 * hw_compute.c: one [compute NAME] group of the hardware file (hw.h): its
 * peak rates, operand memory, overheads and systolic tile, and the figures
 * of the kernel models (strata_kernel_spec, models/kernel/kernel.h) that a
 * unit opts into with `matrix = systolic` or `matrix = tiles`.
 *
 * The kernel keys are declared once, in kernel_keys[] below: hw.c lists
 * them among the group's known keys and in `--help` after `matrix`, and
 * load_kernel() reads them. A kernel key on a unit without `matrix` is an
 * error (it would do nothing); so is a key of the other engine (sms on a
 * systolic unit, mxus on a tiled one).
 *
 * Invariants: a unit with matrix NONE has an all-zero kernel spec; with
 * matrix set, every count is at least 1, efficiencies are in (0, 1] and
 * rates are above 0 where given (0: the documented default).
 */
#include "hw/hw_internal.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/units.h"

typedef enum { FOR_BOTH, FOR_SYSTOLIC, FOR_TILES } key_scope;

_Static_assert(STRATA_DTYPE__COUNT <= 32, "exposed_epilogue keeps a bit per dtype in a uint32_t");

typedef struct kernel_key {
    const char *name;
    key_scope scope;
    const char *description;
} kernel_key;

static const kernel_key kernel_keys[] = {
    {"side", FOR_SYSTOLIC, "the systolic array's side, 8 to 4096 (default: tile; required without tile)"},
    {"mxus", FOR_SYSTOLIC, "systolic arrays per core, 1 to 64 (default 1)"},
    {"cores", FOR_SYSTOLIC, "cores one kernel is split over (a megacore's 2), 1 to 16 (default 1)"},
    {"fill", FOR_SYSTOLIC, "cycles to fill and drain the array once, 0 to 100000 (default 2 x tile)"},
    {"sms", FOR_TILES, "streaming multiprocessors, 1 to 4096 (required with matrix = tiles)"},
    {"cta_tiles", FOR_TILES, "the CTA tiles M x N the library picks among, such as 256x128,128x128 (required)"},
    {"grouped_cta_tiles", FOR_TILES, "the CTA tiles M x N a grouped (MoE experts) GEMM picks among, without "
                                     "split-K, such as 128x128,256x128 (default: cta_tiles)"},
    {"grouped_k_tile_bytes", FOR_TILES, "bytes of K a grouped GEMM's k-block holds, K padded to whole blocks, "
                                        "1 to 4096 (default: K run exactly)"},
    {"grouped_group_switch", FOR_TILES, "time a grouped GEMM's CTA spends on each group it starts (its TMA "
                                        "descriptors rewritten and fenced), 0 to 1 s (default 0)"},
    {"split_k_reduction", FOR_TILES, "fixed time a library GEMM (kernel=gemm) split over K adds for its "
                                     "reduction kernel, besides the partials' bytes, 0 to 1 s (default 0)"},
    {"gemm_pipeline_smem", FOR_TILES, "shared-memory bytes a library GEMM's CTA fills with k-block stages, "
                                      "0 to 16777216; its K loop then overlaps the operand stream only as far as "
                                      "the stages reach (default 0: none, the longer of the two)"},
    {"gemm_k_tile_bytes", FOR_TILES, "bytes of K one such stage holds, 1 to 4096 (required with "
                                     "gemm_pipeline_smem)"},
    {"operand_feed", FOR_TILES, "bytes per second of operands one SM receives from L2 (default: unbounded)"},
    {"exposed_epilogue", FOR_TILES, "dtypes whose GEMM kernels write each CTA tile's output after its mainloop "
                                    "instead of under the next tile's, such as f8, or none (default: none)"},
    {"mma_sync_fraction", FOR_TILES, "fraction of the matrix peak the warp-level mma.sync instructions reach, "
                                     "the products of FlashAttention-2's kernels, above 0 to 1 (default 1: "
                                     "mma.sync is the tensor cores' native instruction, as on Ampere)"},
    {"smem_per_sm", FOR_TILES, "shared-memory bytes one SM holds for its resident CTAs, 0 to 16777216; with an "
                               "onchip memory named l2, FlashAttention-2's K and V are read from HBM once per head "
                               "when the heads its resident CTAs work on fit there (default 0: not given, "
                               "read again for every block pair)"},
    {"matrix_efficiency", FOR_BOTH, "sustained fraction of the matrix peak, above 0 to 1 (default 1)"},
    {"stream_efficiency", FOR_BOTH, "fraction of the operand memory's bandwidth a kernel streams at (default 1)"},
    {"gemm_stream_efficiency", FOR_BOTH, "fraction of the operand memory's bandwidth a library GEMM (kernel=gemm) "
                                         "streams its operands at (default: stream_efficiency)"},
    {"gemm_stream_curve", FOR_BOTH, "that fraction by the GEMM's operand bytes, up to 16 points SIZE:FRACTION "
                                    "with sizes rising, such as 16MiB:0.74,1GiB:0.84, read between points on "
                                    "log(bytes), the end points' beyond (default: none, gemm_stream_efficiency)"},
    {"kernel_launch", FOR_BOTH, "time each kernel op adds: launch and first tile, 0 to 1 s (default 0)"},
    {"vector_flops", FOR_BOTH, "elementwise rate of the vector unit (default: flops)"},
    {"transcendental_flops", FOR_BOTH, "exp, log, tanh per second (default: vector_flops)"},
    {"peak_clock", FOR_BOTH, "the clock the unit's peak rates (flops, flops.DTYPE, vector_flops) are quoted at, "
                             "such as 1830MHz, or none to undo a base file's (default: not given)"},
    {"sustained_clock", FOR_BOTH, "the clock the power limit holds under continuous matrix work, at most "
                                  "peak_clock, which it needs; `strata serve` runs the unit's rates at "
                                  "sustained / peak (default: not given, the peak)"},
    {"clock_response", FOR_BOTH, "with sustained_clock: the time constant over which the power limit sees the "
                                 "unit's matrix activity, such as 0.1s; `strata run` then sets each compute's "
                                 "clock from that filtered activity (sim/engine/engine_power.h; default: not "
                                 "given or none: the peak clock)"},
    {"clock_free_duty", FOR_BOTH, "with clock_response: the filtered matrix activity up to which the peak "
                                  "clock holds, 0 to below 1; the clock falls linearly from there to "
                                  "sustained_clock at 1 (none: not given)"},
    {NULL, FOR_BOTH, NULL},
};

char *hw_kernel_describe(void)
{
    return g_strdup("systolic (TPU MXUs) or tiles (GPU tensor cores): ops that name a kernel= are timed by "
                    "its model (models/kernel) on this unit, with the keys below (default: none, the roofline)");
}

void hw_kernel_keys(GPtrArray *known, GString *help, const char *indent)
{
    for (const kernel_key *k = kernel_keys; k->name; k++) {
        if (known)
            g_ptr_array_add(known, (gpointer)k->name);
        if (help)
            g_string_append_printf(help, "%s  %s: %s\n", indent, k->name, k->description);
    }
}

/* A fraction, def when absent: in (0, 1], or with from_zero in [0, 1). */
static bool get_fraction_in(const hw_load_ctx *ctx, const char *group, const char *key, double def, bool from_zero,
                            double *out, GError **err)
{
    *out = def;
    if (!strata_keyfile_has_key(ctx->k, group, key))
        return true;
    char *v = hw_get_raw(ctx, group, key);
    char *end = NULL;
    double x = g_ascii_strtod(v, &end);
    bool ok = end && end != v && *end == '\0' && (from_zero ? x >= 0 && x < 1 : x > 0 && x <= 1);
    if (ok)
        *out = x;
    else
        hw_fail_value(ctx, err, group, key,
                      from_zero ? "a fraction from 0 to below 1, such as 0.5"
                                : "a fraction above 0 and at most 1, such as 0.8",
                      v);
    g_free(v);
    return ok;
}

/* A fraction in (0, 1], def when absent. */
static bool get_fraction(const hw_load_ctx *ctx, const char *group, const char *key, double def, double *out,
                         GError **err)
{
    return get_fraction_in(ctx, group, key, def, false, out, err);
}

/* The key is there and not `none` (which undoes a base file's). */
static bool given_not_none(const hw_load_ctx *ctx, const char *group, const char *key)
{
    if (!strata_keyfile_has_key(ctx->k, group, key))
        return false;
    char *v = hw_get_raw(ctx, group, key);
    bool none = strcmp(v, "none") == 0;
    g_free(v);
    return !none;
}

/* A clock (hw_get_clock) into Hz; 0 when absent or `none` (which undoes a
 * base file's). */
static bool get_optional_clock(const hw_load_ctx *ctx, const char *group, const char *key, double *out, GError **err)
{
    *out = 0;
    return !given_not_none(ctx, group, key) || hw_get_clock(ctx, group, key, out, err);
}

/* clock_response and clock_free_duty: both or neither, and only beside
 * sustained_clock (0 and 0 when absent or `none`). */
static bool get_duty_rule(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err)
{
    bool has_response = given_not_none(ctx, group, "clock_response");
    bool has_duty = given_not_none(ctx, group, "clock_free_duty");
    k->clock_response = k->clock_free_duty = 0;
    if (!has_response && !has_duty)
        return true;
    const char *given = has_response ? "clock_response" : "clock_free_duty";
    if (k->sustained_clock <= 0 || has_response != has_duty) {
        hw_fail(ctx, err, group, given, k->sustained_clock <= 0
                                            ? "expected sustained_clock beside it: the clock the rule falls to"
                                            : "expected clock_response and clock_free_duty together");
        return false;
    }
    if (!hw_get_time(ctx, group, "clock_response", &k->clock_response, err))
        return false;
    if (k->clock_response <= 0) {
        hw_fail(ctx, err, group, "clock_response", "expected a time above 0, such as 0.1s");
        return false;
    }
    return get_fraction_in(ctx, group, "clock_free_duty", 0, true, &k->clock_free_duty, err);
}

static bool get_clocks(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err)
{
    if (!get_optional_clock(ctx, group, "peak_clock", &k->peak_clock, err) ||
        !get_optional_clock(ctx, group, "sustained_clock", &k->sustained_clock, err))
        return false;
    if (k->sustained_clock > 0 && k->peak_clock <= 0) {
        hw_fail(ctx, err, group, "sustained_clock", "expected peak_clock beside it: the clock the peak rates are "
                "quoted at");
        return false;
    }
    if (k->sustained_clock > k->peak_clock) {
        char *v = hw_get_raw(ctx, group, "sustained_clock");
        hw_fail_value(ctx, err, group, "sustained_clock", "a clock at most peak_clock", v);
        g_free(v);
        return false;
    }
    return get_duty_rule(ctx, group, k, err);
}

static bool get_optional_rate(const hw_load_ctx *ctx, const char *group, const char *key, bool bandwidth, double *out,
                              GError **err)
{
    *out = 0;
    if (!strata_keyfile_has_key(ctx->k, group, key))
        return true;
    return bandwidth ? hw_get_bandwidth(ctx, group, key, out, err) : hw_get_flop_rate(ctx, group, key, out, err);
}

/* KEY = 256x128,128x256,... into tiles / n (cta_tiles: required;
 * grouped_cta_tiles: optional, n left 0 when absent). */
static bool get_cta_tiles(const hw_load_ctx *ctx, const char *group, const char *key, bool required,
                          uint32_t (*tiles)[2], uint32_t *n, GError **err)
{
    *n = 0;
    if (!required && !strata_keyfile_has_key(ctx->k, group, key))
        return true;
    char *v = hw_get_raw(ctx, group, key);
    if (!v) {
        hw_fail(ctx, err, group, NULL, "missing required key '%s' (with matrix = tiles)", key);
        return false;
    }
    char **parts = g_strsplit(v, ",", -1);
    bool ok = parts[0] != NULL;
    for (guint i = 0; ok && parts[i]; i++) {
        uint64_t m = 0, w = 0;
        char **mn = g_strsplit(g_strstrip(parts[i]), "x", 3);
        ok = i < STRATA_MAX_CTA_TILES && mn[0] && mn[1] && !mn[2] && strata_parse_u64(mn[0], &m, NULL) &&
             strata_parse_u64(mn[1], &w, NULL) && m >= 8 && m <= 1024 && w >= 8 && w <= 1024;
        if (ok) {
            tiles[i][0] = (uint32_t)m;
            tiles[i][1] = (uint32_t)w;
            *n = i + 1;
        }
        g_strfreev(mn);
    }
    if (!ok)
        hw_fail_value(ctx, err, group, key, "up to 16 tiles MxN such as 256x128,128x128 (each 8 to 1024)", v);
    g_strfreev(parts);
    g_free(v);
    return ok;
}

/* gemm_pipeline_smem (0: none, as a file on a base that sets it may say)
 * and, with it, gemm_k_tile_bytes: a stage's size needs both. */
static bool get_pipeline(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err)
{
    if (!hw_get_count(ctx, group, "gemm_pipeline_smem", 0, 16777216, 0, NULL, &k->gemm_pipeline_smem, err) ||
        !hw_get_count(ctx, group, "gemm_k_tile_bytes", 1, 4096, 0, NULL, &k->gemm_k_tile, err))
        return false;
    if (k->gemm_pipeline_smem > 0 && k->gemm_k_tile == 0) {
        hw_fail(ctx, err, group, "gemm_pipeline_smem",
                "expected gemm_k_tile_bytes with it (a stage holds that many bytes of K)");
        return false;
    }
    for (uint32_t i = 0; k->gemm_pipeline_smem > 0 && i < k->n_cta_tiles; i++) {
        /* one stage of the tile, as models/kernel/matrix.c sizes it */
        uint64_t stage = ((uint64_t)(k->cta_tiles[i][0] + k->cta_tiles[i][1]) * k->gemm_k_tile + 127) / 128 * 128 + 16;
        if (stage > k->gemm_pipeline_smem) {
            hw_fail(ctx, err, group, "gemm_pipeline_smem",
                    "expected at least one stage of CTA tile %ux%u (%" G_GUINT64_FORMAT " bytes), got %u",
                    k->cta_tiles[i][0], k->cta_tiles[i][1], stage, k->gemm_pipeline_smem);
            return false;
        }
    }
    return true;
}

/* exposed_epilogue = f8,... : a bit per dtype named. */
static bool get_exposed_epilogue(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err)
{
    k->exposed_epilogue = 0;
    if (!strata_keyfile_has_key(ctx->k, group, "exposed_epilogue"))
        return true;
    char *v = hw_get_raw(ctx, group, "exposed_epilogue");
    char **parts = g_strsplit(v, ",", -1);
    bool ok = parts[0] != NULL;
    if (ok && !parts[1] && strcmp(g_strstrip(parts[0]), "none") == 0) { /* a file that undoes its base's list */
        g_strfreev(parts);
        g_free(v);
        return true;
    }
    for (guint i = 0; ok && parts[i]; i++) {
        strata_dtype d = STRATA_DTYPE_NONE;
        ok = strata_dtype_from_name(g_strstrip(parts[i]), &d) && d != STRATA_DTYPE_NONE;
        if (ok)
            k->exposed_epilogue |= 1u << d;
    }
    if (!ok)
        hw_fail_value(ctx, err, group, "exposed_epilogue", "a list of dtypes such as f8 or f8,int8, or none", v);
    g_strfreev(parts);
    g_free(v);
    return ok;
}

/* No key of the other engine, and none at all without matrix. */
static bool check_scope(const hw_load_ctx *ctx, const char *group, strata_matrix_kind matrix, GError **err)
{
    for (const kernel_key *k = kernel_keys; k->name; k++) {
        if (!strata_keyfile_has_key(ctx->k, group, k->name))
            continue;
        bool wrong = matrix == STRATA_MATRIX_NONE || (k->scope == FOR_SYSTOLIC && matrix != STRATA_MATRIX_SYSTOLIC) ||
                     (k->scope == FOR_TILES && matrix != STRATA_MATRIX_TILES);
        if (wrong) {
            hw_fail(ctx, err, group, k->name, "expected it only with matrix = %s",
                    k->scope == FOR_TILES ? "tiles" : k->scope == FOR_SYSTOLIC ? "systolic" : "systolic or tiles");
            return false;
        }
    }
    return true;
}

static bool load_kernel(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err)
{
    *k = (strata_kernel_spec){0};
    char *matrix = hw_get_text(ctx, group, "matrix");
    if (matrix) {
        g_strstrip(matrix);
        if (strcmp(matrix, "systolic") == 0)
            k->matrix = STRATA_MATRIX_SYSTOLIC;
        else if (strcmp(matrix, "tiles") == 0)
            k->matrix = STRATA_MATRIX_TILES;
        else {
            hw_fail_value(ctx, err, group, "matrix", "systolic or tiles", matrix);
            g_free(matrix);
            return false;
        }
        g_free(matrix);
    }
    if (!check_scope(ctx, group, k->matrix, err))
        return false;
    if (k->matrix == STRATA_MATRIX_NONE)
        return true;
    bool tiles = k->matrix == STRATA_MATRIX_TILES;
    if (tiles && !strata_keyfile_has_key(ctx->k, group, "sms")) {
        hw_fail(ctx, err, group, NULL, "missing required key 'sms' (with matrix = tiles)");
        return false;
    }
    return hw_get_count(ctx, group, "side", 8, 4096, 0, NULL, &k->side, err) &&
           hw_get_count(ctx, group, "mxus", 1, 64, 1, NULL, &k->mxus, err) &&
           hw_get_count(ctx, group, "cores", 1, 16, 1, NULL, &k->cores, err) &&
           hw_get_count(ctx, group, "fill", 0, 100000, 0, NULL, &k->fill, err) &&
           hw_get_count(ctx, group, "sms", 1, 4096, 1, NULL, &k->sms, err) && (!tiles || get_cta_tiles(ctx, group, "cta_tiles", true, k->cta_tiles, &k->n_cta_tiles, err)) &&
           get_cta_tiles(ctx, group, "grouped_cta_tiles", false, k->grouped_tiles, &k->n_grouped_tiles, err) &&
           hw_get_count(ctx, group, "grouped_k_tile_bytes", 1, 4096, 0, NULL, &k->grouped_k_tile, err) &&
           hw_get_time(ctx, group, "grouped_group_switch", &k->grouped_group_switch, err) &&
           hw_get_time(ctx, group, "split_k_reduction", &k->split_k_reduction, err) &&
           get_pipeline(ctx, group, k, err) &&
           get_exposed_epilogue(ctx, group, k, err) &&
           get_optional_rate(ctx, group, "operand_feed", true, &k->operand_feed, err) &&
           get_fraction(ctx, group, "matrix_efficiency", 1.0, &k->matrix_efficiency, err) &&
           get_fraction(ctx, group, "mma_sync_fraction", 1.0, &k->mma_sync_fraction, err) &&
           hw_get_count(ctx, group, "smem_per_sm", 0, 16777216, 0, NULL, &k->smem_per_sm, err) &&
           get_fraction(ctx, group, "stream_efficiency", 1.0, &k->stream_efficiency, err) &&
           get_fraction(ctx, group, "gemm_stream_efficiency", 0.0, &k->gemm_stream_efficiency, err) &&
           hw_get_stream_curve(ctx, group, k, err) &&
           hw_get_time(ctx, group, "kernel_launch", &k->kernel_launch, err) &&
           get_optional_rate(ctx, group, "vector_flops", false, &k->vector_flops, err) &&
           get_optional_rate(ctx, group, "transcendental_flops", false, &k->transcendental_flops, err) &&
           get_clocks(ctx, group, k, err);
}

static char *dtype_names(void)
{
    GString *s = g_string_new(NULL);
    for (int d = 1; d < STRATA_DTYPE__COUNT; d++)
        g_string_append_printf(s, "%s%s", d > 1 ? ", " : "", strata_dtype_name((strata_dtype)d));
    return g_string_free(s, FALSE);
}

/* flops.DTYPE = RATE lines into c->flops_by_dtype. */
static bool load_dtype_rates(const hw_load_ctx *ctx, const char *group, strata_compute_spec *c, GError **err)
{
    char **keys = strata_keyfile_keys(ctx->k, group, NULL);
    bool ok = true;
    for (guint k = 0; ok && keys && keys[k]; k++) {
        if (!g_str_has_prefix(keys[k], "flops."))
            continue;
        const char *dname = keys[k] + strlen("flops.");
        strata_dtype dtype = STRATA_DTYPE_NONE;
        if (!strata_dtype_from_name(dname, &dtype) || dtype == STRATA_DTYPE_NONE) {
            char *known = dtype_names();
            hw_fail(ctx, err, group, keys[k], "unknown dtype '%s' (dtypes: %s)", dname, known);
            g_free(known);
            ok = false;
        } else {
            ok = hw_get_flop_rate(ctx, group, keys[k], &c->flops_by_dtype[dtype], err);
        }
    }
    g_strfreev(keys);
    return ok;
}

bool hw_load_compute(const hw_load_ctx *ctx, strata_hw *hw, const char *group, const char *name, GError **err)
{
    strata_compute_spec c = {0};
    c.name = g_string_chunk_insert_const(hw->strings, name);
    c.operands = hw->default_memory;
    c.base = hw->computes->len;

    if (!hw_get_flop_rate(ctx, group, "flops", &c.flops, err) ||
        !hw_get_time(ctx, group, "overhead", &c.overhead, err) || !hw_get_time(ctx, group, "launch", &c.launch, err) ||
        (strata_keyfile_has_key(ctx->k, group, "tile") && !hw_get_size(ctx, group, "tile", &c.tile, err)) ||
        !load_dtype_rates(ctx, group, &c, err) || !load_kernel(ctx, group, &c.kernel, err))
        return false;
    if (c.kernel.matrix == STRATA_MATRIX_SYSTOLIC && c.kernel.side == 0) {
        if (c.tile == 0 || c.tile > 4096) {
            hw_fail(ctx, err, group, "matrix", "expected side = N (or tile = N) with matrix = systolic: the array's side");
            return false;
        }
        c.kernel.side = (uint32_t)c.tile;
    }

    char *operands = hw_get_text(ctx, group, "operands");
    if (operands) {
        int index = hw_get_memory_ref(ctx, hw, group, "operands", g_strstrip(operands), err);
        g_free(operands);
        if (index < 0)
            return false;
        c.operands = (uint32_t)index;
    }
    g_array_append_val(hw->computes, c);
    return true;
}

/* sustained / peak clock of a unit that gives both, else 1. */
static double unit_clock_ratio(const strata_compute_spec *c)
{
    const strata_kernel_spec *k = &c->kernel;
    return k->peak_clock > 0 && k->sustained_clock > 0 ? k->sustained_clock / k->peak_clock : 1.0;
}

double strata_hw_compute_clock_ratio(const strata_hw *hw, uint32_t unit)
{
    return unit_clock_ratio(strata_hw_compute(hw, unit));
}

/* The key unit c lacks for rule (sustained: sustained_clock below peak_clock; duty: also clock_response), or
 * NULL: what engine_power.c and serve_args.c read of it. */
static const char *clock_rule_missing(const strata_compute_spec *c, bool duty)
{
    if (unit_clock_ratio(c) >= 1.0)
        return "sustained_clock (below the peak's clock)";
    return duty && c->kernel.clock_response <= 0 ? "clock_response" : NULL;
}

/* --clock RULE refused: no unit it reads gives peak_clock (or the unit named is not in the file). */
static bool clock_rule_unclocked(const char *path, const char *rule, bool duty, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--clock %s: expected a hardware file that gives "
                "sustained_clock (below the peak's clock)%s, which it reads; %s gives no peak_clock on any "
                "compute unit (--clock peak, or no --clock, runs what the file describes)", rule,
                duty ? " and clock_response" : "", path);
    return false;
}

/* --clock RULE refused: unit `at` (c), one the run reads, lacks `missing`; named: the run's one unit. */
static bool clock_rule_lacking(const char *path, const char *rule, const char *missing, guint at,
                               const strata_compute_spec *c, bool named, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--clock %s: expected a hardware file that gives %s, "
                "which it reads; %s gives none on compute unit %u ('%s'), %s (--clock peak, or no --clock, "
                "runs what the file describes)", rule, missing, path, at, c->name,
                named ? "the unit the run uses" : "one with peak_clock, which a compute may run on");
    return false;
}

bool strata_hw_check_clock_rule(const strata_hw *hw, const char *path, const char *rule, int unit, GError **err)
{
    if (!rule || strcmp(rule, "peak") == 0)
        return true;
    bool duty = strcmp(rule, "duty") == 0, named = unit >= 0;
    /* the units read: the one named (none where the file has fewer), or every one */
    guint len = hw->computes->len, first = named ? (guint)unit : 0, end = named ? MIN(first + 1, len) : len;
    bool any = false;
    for (guint i = first; i < end; i++) {
        const strata_compute_spec *c = &g_array_index(hw->computes, strata_compute_spec, i);
        if (!named && c->kernel.peak_clock <= 0)
            continue; /* no clock described: no rule to run (a TPU's vector unit, a test file's) */
        any = true;
        const char *missing = clock_rule_missing(c, duty);
        if (missing)
            return clock_rule_lacking(path, rule, missing, i, c, named, err);
    }
    return any || clock_rule_unclocked(path, rule, duty, err);
}

double strata_hw_clock_at_duty(double duty, double free_duty, double floor)
{
    double over = (duty - free_duty) / (1.0 - free_duty);
    return over > 0 ? 1.0 - fmin(over, 1.0) * (1.0 - floor) : 1.0;
}

double strata_hw_duty_after(double duty, double x, double dt, double tau)
{
    return x + (duty - x) * exp(-dt / tau);
}

double strata_hw_run_at_sustained_clock(strata_hw *hw)
{
    double least = 1.0;
    for (guint i = 0; i < hw->computes->len; i++) {
        strata_compute_spec *c = &g_array_index(hw->computes, strata_compute_spec, i);
        strata_kernel_spec *k = &c->kernel;
        double r = unit_clock_ratio(c);
        if (r == 1.0)
            continue;
        c->flops *= r;
        for (int d = 0; d < STRATA_DTYPE__COUNT; d++)
            c->flops_by_dtype[d] *= r;
        k->vector_flops *= r;
        k->transcendental_flops *= r;
        k->peak_clock = k->sustained_clock; /* applied: a second call changes nothing */
        least = fmin(least, r);
    }
    return least;
}
