/*
 * collective.c: `strata gen collective`, one collective over a device mesh
 * of one axis, the microbenchmark nccl-tests runs.
 *
 * Schedule (N=devices, the mesh `option mesh=AXIS:N`; every device runs it):
 *   alloc      the send buffer `send` (tag=input) and the receive buffer
 *              `recv` (tag=output), or for all-reduce the one buffer `buf`
 *              (in place), sized by nccl-tests' rule from `bytes`, the
 *              per-device size it reports:
 *                all-reduce          buf = bytes
 *                all-gather          recv = bytes, send = bytes/N
 *                reduce-scatter      send = bytes, recv = bytes/N
 *                all-to-all          send = recv = bytes
 *                collective-permute  send = recv = bytes (shift= ranks)
 *   program    `compute program_start time=0`, then `iters` collectives
 *              one after the other on stream main (algo= unless auto);
 *   free       recv, then send.
 * Invariants: bytes holds whole elements of dtype, and for all-gather,
 * reduce-scatter and all-to-all a multiple of N elements (else exit 2
 * naming bytes); every buffer is allocated before and freed after use.
 */
#include <string.h>
#include "collective/coll_algo.h"
#include "workload/graph.h"
#include "workload/workload.h"
#include "core/error.h"
#include "core/mesh.h"

static const char *const op_choices[] = {"all-reduce",         "all-gather", "reduce-scatter", "all-to-all",
                                         "collective-permute", NULL};

static const strata_param_def collective_params[] = {
    {"op", STRATA_PARAM_STRING, "all-reduce", "the collective", op_choices},
    {"bytes", STRATA_PARAM_SIZE, "64MiB", "per-device size as nccl-tests reports it (see the schedule)", NULL},
    {"devices", STRATA_PARAM_INT, "8", "devices in the mesh (the axis' size)", NULL},
    {"algo", STRATA_PARAM_STRING, "auto",
     "algorithm (auto: none in the trace; the hardware file's collectives= picks: nccl, xla, or its topology's)",
     strata_coll_algo_choices},
    {"axis", STRATA_PARAM_STRING, "data", "the mesh axis' name ([a-z][a-z0-9_]*)", NULL},
    {"iters", STRATA_PARAM_INT, "1", "collectives in a row", NULL},
    {"shift", STRATA_PARAM_INT, NULL, "collective-permute: rank r sends to rank r + shift (non-zero; default 1)",
     NULL},
    STRATA_WORKLOAD_DTYPE_PARAM("dtype", "f32", "element type (a reduction's flops count elements)"),
    {NULL, 0, NULL, NULL, NULL},
};

/* The mesh `option mesh=` names (g_free), or NULL and err when axis and
 * devices do not make one. */
static char *collective_mesh(const strata_params *p, GError **err)
{
    char *text = g_strdup_printf("%s:%" G_GINT64_FORMAT, strata_params_string(p, "axis"),
                                 strata_params_int(p, "devices"));
    GError *e = NULL;
    strata_mesh *m = strata_mesh_parse(text, &e);
    if (!m) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "collective: axis=%s devices=%" G_GINT64_FORMAT ": %s",
                    strata_params_string(p, "axis"), strata_params_int(p, "devices"), e->message);
        g_error_free(e);
        g_free(text);
        return NULL;
    }
    strata_mesh_free(m);
    return text;
}

/* The algorithm algo= names, NULL for auto (the choices guarantee a row's name). */
static const char *collective_algo(const strata_params *p)
{
    const char *algo = strata_params_string(p, "algo");
    return strcmp(algo, "auto") == 0 ? NULL : algo;
}

/* shift=, 1 where not given (unset by default, so that a shift given to
 * an op that reads none is refused, not ignored). */
static int64_t collective_shift(const strata_params *p)
{
    return strata_params_int_or(p, "shift", 1);
}

/* The checks: sizes divide as the op requires, shift != 0 modulo devices,
 * and read by collective-permute alone (op=all-reduce shift=3 generated an
 * all-reduce, the shift dropped, exit 0). */
static bool collective_check(const strata_params *p, strata_op_kind kind, GError **err)
{
    static const char *const positive[] = {"devices", NULL}, *const counts[] = {"iters", NULL};
    if (!strata_workload_check_positive(p, "collective", positive, err) ||
        !strata_workload_check_counts(p, "collective", counts, STRATA_WORKLOAD_MAX_COUNT,
                                        NULL, err))
        return false;
    const char *algo = collective_algo(p);
    if (algo && !strata_coll_algo_serves(strata_coll_algo_find(algo), kind)) {
        char *known = strata_coll_algo_names_of(kind);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "collective: expected algo= auto or one of %s for %s, got '%s'",
                    known, strata_op_kind_name(kind), algo);
        g_free(known);
        return false;
    }
    const char *axis = strata_params_string(p, "axis");
    uint64_t bytes = strata_params_size(p, "bytes"), n = (uint64_t)strata_params_int(p, "devices");
    unsigned bits = strata_dtype_bits(strata_workload_dtype(p, "dtype"));
    bool split = kind == STRATA_OP_ALL_GATHER || kind == STRATA_OP_REDUCE_SCATTER || kind == STRATA_OP_ALL_TO_ALL;
    const char *why = NULL;
    int64_t shift = collective_shift(p);
    if (kind != STRATA_OP_COLLECTIVE_PERMUTE && strata_params_is_set(p, "shift")) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "collective: shift: expected op=collective-permute, "
                    "which reads it, got op=%s", strata_op_kind_name(kind));
        return false;
    }
    if (kind == STRATA_OP_COLLECTIVE_PERMUTE &&
             (shift == 0 || shift < -INT32_MAX || shift > INT32_MAX))
        why = "shift other than 0 (within 32 bits)";
    else if (kind == STRATA_OP_COLLECTIVE_PERMUTE && shift % (int64_t)n == 0)
        why = "shift other than 0 modulo devices (rank r sends to r + shift mod devices: here to itself)";
    else if (bytes > UINT64_MAX / 8) /* bytes x 8 bits past 64 bits: no element count to check */
        why = "bytes below 2EiB (its bits within 64 bits)";
    else if (bytes == 0 || (bytes * 8) % bits != 0)
        why = "bytes a positive whole number of elements of dtype";
    else if (split && ((bytes * 8) / bits) % n != 0)
        why = "bytes a multiple of devices elements of dtype (the op splits it devices ways)";
    /* shift= only where the op reads it (op=all-reduce bytes=0 printed shift=1, a key it refuses) */
    char *shown = kind == STRATA_OP_COLLECTIVE_PERMUTE ? g_strdup_printf(" shift=%" G_GINT64_FORMAT, shift)
                                                       : g_strdup("");
    if (why)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "collective: expected %s, got op=%s bytes=%" G_GUINT64_FORMAT " devices=%" G_GUINT64_FORMAT
                    " dtype=%s axis=%s%s",
                    why, strata_op_kind_name(kind), bytes, n, strata_params_string(p, "dtype"), axis, shown);
    g_free(shown);
    return why == NULL;
}

static void append(strata_op_list *list, strata_op op) { strata_op_list_append(list, &op); }

/* A one-dimensional buffer of bytes of dt. */
static void append_alloc(strata_op_list *list, const char *name, uint64_t bytes, strata_tag tag, strata_dtype dt)
{
    strata_op op = strata_op_make_alloc(NULL, name, bytes, NULL, tag);
    strata_op_set_shape(&op, dt, 1, (const uint64_t[]){bytes * 8 / strata_dtype_bits(dt)});
    append(list, op);
}

static strata_source *collective_generate(const strata_params *p, GError **err)
{
    strata_op_kind kind = STRATA_OP_ALL_REDUCE;
    strata_op_kind_from_name(strata_params_string(p, "op"), &kind); /* choices guarantee it */
    char *mesh = NULL;
    if (!collective_check(p, kind, err) || !(mesh = collective_mesh(p, err)))
        return NULL;
    const char *algo = collective_algo(p);
    const char *axis = strata_params_string(p, "axis");
    uint64_t bytes = strata_params_size(p, "bytes"), n = (uint64_t)strata_params_int(p, "devices");
    strata_dtype dt = strata_workload_dtype(p, "dtype");
    uint64_t send = kind == STRATA_OP_ALL_GATHER ? bytes / n : bytes;
    uint64_t recv = kind == STRATA_OP_REDUCE_SCATTER ? bytes / n : bytes;
    bool in_place = kind == STRATA_OP_ALL_REDUCE;
    const char *out = in_place ? "buf" : "recv", *in = in_place ? "buf" : "send";

    strata_op_list *list = strata_op_list_new();
    append(list, strata_op_make_option("mesh", mesh));
    g_free(mesh);
    append_alloc(list, in, send, STRATA_TAG_INPUT, dt);
    if (!in_place)
        append_alloc(list, out, recv, STRATA_TAG_OUTPUT, dt);
    append(list, strata_op_make_timed(NULL, WL_PROGRAM_START, 0));
    int32_t shift = kind == STRATA_OP_COLLECTIVE_PERMUTE ? (int32_t)collective_shift(p) : 0;
    size_t body = strata_op_list_len(list); /* handed out `iters` times, held once */
    append(list, strata_op_make_collective(kind, NULL, out, in, axis, algo, shift));
    if (!in_place)
        append(list, strata_op_make(STRATA_OP_FREE, NULL, out));
    append(list, strata_op_make(STRATA_OP_FREE, NULL, in));
    return strata_op_list_to_source_repeating(list, body, (uint64_t)strata_params_int(p, "iters"), "collective");
}

const strata_workload_type strata_workload_collective = {
    "collective",
    "one collective over an N-device mesh axis (nccl-tests' microbenchmark): "
    "all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute",
    collective_params,
    collective_generate,
    NULL,
    NULL, /* streamed: generating costs no more than checking */
};
