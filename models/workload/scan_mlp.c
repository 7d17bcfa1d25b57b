/*
 * scan_mlp.c: `strata gen scan-mlp`, the network of the JAX host-offloading
 * tutorial (seed 002): jax.jit(jax.grad(scanned)) over a scan of layers.
 *
 * Schedule (one jitted gradient step):
 *   arguments  x[batch,dim] (input), w1_i[dim,hidden], w2_i[hidden,dim]
 *              (param) for i < layers: the scanned, stacked weights, one
 *              buffer per layer so that a layer's slice can move alone;
 *   forward    for i = 0..layers-1: y_i = h_i @ w1_i, h_{i+1} = y_i @ w2_i
 *              (h_0 = x; 2*batch*dim*hidden flops each);
 *              loss = sum(h_L) (batch*dim flops);
 *   backward   the gradient of the sum is ones[batch,dim]; for i = L-1..0:
 *              d_w2_i = y_i^T @ d_h_{i+1}, d_y_i = d_h_{i+1} @ w2_i^T,
 *              d_w1_i = h_i^T @ d_y_i, d_h_i = d_y_i @ w1_i^T (i > 0 only:
 *              the gradient is taken with respect to the weights).
 * The forward pass saves h_i and y_i (what the backward pass needs); the
 * backward pass consumes them in reverse and frees each after its last use.
 * Outputs: d_w1_i and d_w2_i (tag grad), live at the end. Activations are
 * tagged activation, the gradients of activations grad.
 * remat=full recomputes each layer's y_i from h_i in the backward pass
 * (jax.checkpoint of the layer); remat=dots saves the matmul outputs.
 */
#include "workload/workload.h"
#include "workload/autodiff.h"
#include "core/error.h"

static const char *const remat_choices[] = {"none", "full", "dots", NULL};

static const strata_param_def scan_mlp_params[] = {
    {"batch", STRATA_PARAM_INT, "64", "rows of the input x (batch x dim)", NULL},
    {"dim", STRATA_PARAM_INT, "4096", "model width: x is batch x dim, w1 dim x hidden, w2 hidden x dim", NULL},
    {"hidden", STRATA_PARAM_INT, "16384", "hidden width of each layer", NULL},
    {"layers", STRATA_PARAM_INT, "8", "number of scanned layers (x@w1 then @w2 each)", NULL},
    {"dtype", STRATA_PARAM_STRING, "bf16", "element type of inputs, weights and activations",
     strata_workload_dtype_choices},
    {"remat", STRATA_PARAM_STRING, "none", "rematerialization: none, full (checkpoint each layer), dots",
     remat_choices},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *scan_mlp_generate(const strata_params *p, GError **err)
{
    static const char *const positive[] = {"batch", "dim", "hidden", "layers", NULL};
    if (!strata_workload_check_positive(p, "scan-mlp", positive, err))
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
    wl_tensor h = wl_graph_tensor(g, "x", STRATA_TAG_INPUT, dt, 2, bd, WL_ARGUMENT);
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
    return wl_graph_to_source(g, "scan-mlp");
}

const strata_workload_type strata_workload_scan_mlp = {
    "scan-mlp",
    "the JAX offloading tutorial's scanned MLP: grad of sum(scan(x@w1@w2)) w.r.t. the weights",
    scan_mlp_params,
    scan_mlp_generate,
};
