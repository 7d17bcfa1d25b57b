/*
 * scan_mlp.c: `strata gen scan-mlp`, the network of the JAX host-offloading
 * tutorial (seed 002): jax.jit(jax.grad(scanned))((w1, w2), x), a scan of
 * `layers` steps of x @ w1_i @ w2_i, the gradient taken with respect to the
 * weights. `preset=tutorial` gives the tutorial's shapes: x[256,256],
 * w1[10,256,1024], w2[10,1024,256], f32 (batch 256, dim 256, hidden 1024,
 * layers 10).
 *
 * The program as XLA compiles it (B batch, D dim, H hidden, L layers, s
 * bytes per element), buffer by buffer:
 *   arguments  x[B,D] (input), w1_i[D,H], w2_i[H,D] (param) for i < L: the
 *              scanned weights, one buffer per layer so that a layer's slice
 *              can move alone (the stacks' bytes are the same);
 *   carry      the loop carry cannot be the argument x, so the program first
 *              copies x into h_0 (XLA's copy of a parameter that enters a
 *              while loop);
 *   forward    for i = 0..L-1: y_i = h_i @ w1_i [B,H], h_{i+1} = y_i @ w2_i
 *              [B,D] (2*B*D*H flops each); the scan saves what the backward
 *              pass needs, each step's carry h_i and y_i (its residual
 *              stacks: XLA keeps the weights' slices in the arguments);
 *   loss       loss = sum(h_L), a 4-byte f32 temp, freed at once with h_L;
 *   backward   the gradient of the sum is ones, d_h_L[B,D]; for i = L-1..0:
 *              d_y_i = d_h_{i+1} @ w2_i^T [B,H], d_w2_i = y_i^T @ d_h_{i+1},
 *              then d_h_{i+1} and y_i are dead; d_h_i = d_y_i @ w1_i^T (i > 0
 *              only), d_w1_i = h_i^T @ d_y_i, then d_y_i and h_i are dead.
 *              Each step writes its d_w1_i, d_w2_i in place into the
 *              outputs (tag grad): they are never temps.
 * memory_analysis(), by hand:
 *   argument  (B*D + 2*L*D*H) * s
 *   output    2*L*D*H * s             the gradients
 *   alias     0                       nothing is donated
 *   temp      (L+1) * B * (D+H) * s   at d_y_{L-1}: h_0..h_{L-1}, y_0..y_{L-1},
 *                                     d_h_L and d_y_{L-1} (the forward's end
 *                                     holds (L+1)*B*D + L*B*H + 4 bytes, less)
 *   total     temp + argument + output
 * Tutorial shapes (s = 4): argument (65536 + 5242880) * 4 = 21233664,
 * output 5242880 * 4 = 20971520, alias 0, temp 11 * 256 * 1280 * 4 =
 * 14417920, total 56623104 bytes.
 * Activations are tagged activation, the gradients of activations grad.
 * remat=full recomputes each layer's y_i from h_i in the backward pass
 * (jax.checkpoint of the layer); remat=dots saves the matmul outputs.
 */
#include "workload/workload.h"
#include "workload/autodiff_nodes.h"
#include "core/error.h"

static const char *const remat_choices[] = {"none", "full", "dots", NULL};

static const char *const preset_choices[] = {"none", "tutorial", NULL};
static const char *const tutorial[] = {"batch=256", "dim=256", "hidden=1024", "layers=10", "dtype=f32", NULL};
static const strata_workload_preset scan_mlp_presets[] = {{"tutorial", tutorial}, {NULL, NULL}};

/* The graph is held while generating: measured 100000 layers in 3.4 s and
 * 117 MB peak RSS (a million: ~1.1 GB, past 30 s). */
#define SCAN_MLP_MAX_LAYERS 100000

static const strata_param_def scan_mlp_params[] = {
    STRATA_WORKLOAD_PRESET_PARAM(
        "tutorial: the JAX offloading tutorial's shapes (batch 256, dim 256, hidden 1024, layers 10, f32)",
        preset_choices),
    {"batch", STRATA_PARAM_INT, "64", "rows of the input x (batch x dim)", NULL},
    {"dim", STRATA_PARAM_INT, "4096", "model width: x is batch x dim, w1 dim x hidden, w2 hidden x dim", NULL},
    {"hidden", STRATA_PARAM_INT, "16384", "hidden width of each layer", NULL},
    {"layers", STRATA_PARAM_INT, "8", "number of scanned layers (x@w1 then @w2 each)", NULL},
    STRATA_WORKLOAD_DTYPE_PARAM("dtype", "bf16", "element type of inputs, weights and activations"),
    {"remat", STRATA_PARAM_STRING, "none", "rematerialization: none, full (checkpoint each layer), dots",
     remat_choices},
    {NULL, 0, NULL, NULL, NULL},
};

static bool scan_mlp_check(const strata_params *p, GError **err)
{
    static const char *const positive[] = {"batch", "dim", "hidden", "layers", NULL};
    static const char *const sizes[] = {"batch*dim", "batch*hidden", "dim*hidden", "2*layers*dim*hidden",
                                        "layers*batch*hidden", NULL};
    static const char *const counts[] = {"layers", NULL};
    return strata_workload_check_positive(p, "scan-mlp", positive, err) &&
           strata_workload_check_counts(p, "scan-mlp", counts, SCAN_MLP_MAX_LAYERS,
                                        "the graph is held while generating: 100000 layers take ~120 MB", err) &&
           strata_workload_check_sizes(p, "scan-mlp", sizes, strata_workload_dtype(p, "dtype"), err);
}

static strata_source *scan_mlp_generate(const strata_params *p, GError **err)
{
    if (!scan_mlp_check(p, err))
        return NULL;
    uint64_t B = (uint64_t)strata_params_int(p, "batch"), D = (uint64_t)strata_params_int(p, "dim"),
             H = (uint64_t)strata_params_int(p, "hidden");
    int L = (int)strata_params_int(p, "layers");
    strata_dtype dt = strata_workload_dtype(p, "dtype");
    wl_remat remat = WL_REMAT_NONE;
    wl_remat_from_name(strata_params_string(p, "remat"), &remat);

    wl_graph *g = wl_graph_new();
    wl_model *m = wl_model_new(g);
    const uint64_t bd[2] = {B, D}, bh[2] = {B, H}, dh[2] = {D, H}, hd[2] = {H, D};
    wl_tensor x = wl_graph_tensor(g, "x", STRATA_TAG_INPUT, dt, 2, bd, WL_ARGUMENT);
    wl_tensor *w1 = g_new(wl_tensor, L), *w2 = g_new(wl_tensor, L);
    for (int i = 0; i < L; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "w1_%d", i);
        w1[i] = wl_graph_tensor(g, name, STRATA_TAG_PARAM, dt, 2, dh, WL_ARGUMENT);
        g_snprintf(name, sizeof name, "w2_%d", i);
        w2[i] = wl_graph_tensor(g, name, STRATA_TAG_PARAM, dt, 2, hd, WL_ARGUMENT);
        wl_model_requires_grad(m, w1[i]);
        wl_model_requires_grad(m, w2[i]);
    }
    double mm = 2.0 * (double)B * (double)D * (double)H;
    wl_model_group(m, -1, false);
    wl_tensor h = wl_graph_tensor(g, "h_0", STRATA_TAG_ACTIVATION, dt, 2, bd, WL_TEMP);
    wl_model_node(m, "carry_init", h, &x, 1, 0, false); /* a copy: its time is its bytes */
    for (int i = 0; i < L; i++) {
        char name[32], label[32];
        wl_model_group(m, i, true);
        g_snprintf(name, sizeof name, "y_%d", i);
        wl_tensor y = wl_graph_tensor(g, name, STRATA_TAG_ACTIVATION, dt, 2, bh, WL_TEMP);
        g_snprintf(label, sizeof label, "layer%d_x@w1", i);
        wl_model_matmul(m, label, y, h, w1[i], mm);
        g_snprintf(name, sizeof name, "h_%d", i + 1);
        wl_tensor hn = wl_graph_tensor(g, name, STRATA_TAG_ACTIVATION, dt, 2, bd, WL_TEMP);
        g_snprintf(label, sizeof label, "layer%d_y@w2", i);
        wl_model_matmul(m, label, hn, y, w2[i], mm);
        h = hn;
    }
    wl_model_group(m, L, false);
    wl_tensor loss = wl_graph_tensor(g, "loss", STRATA_TAG_TEMP, STRATA_DTYPE_F32, 0, NULL, WL_TEMP);
    uint32_t sum = wl_model_node(m, "sum", loss, &h, 1, (double)(B * D), false);
    wl_model_vjp(m, sum, 0, (double)(B * D), NULL, 0); /* d/dh sum(h) = ones */
    wl_model_emit(m, remat, WL_OUTPUT);
    wl_model_free(m);
    g_free(w1);
    g_free(w2);
    return wl_graph_to_source(g, "scan-mlp", err);
}

const strata_workload_type strata_workload_scan_mlp = {
    "scan-mlp",
    "the JAX offloading tutorial's scanned MLP: grad of sum(scan(x@w1@w2)) w.r.t. the weights",
    scan_mlp_params,
    scan_mlp_generate,
    scan_mlp_presets,
    scan_mlp_check,
};
