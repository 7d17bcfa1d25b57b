/*
 * adam_mlp.c: `strata gen adam-mlp`, the optimizer-state offloading example
 * of the JAX host-offloading tutorial (seed 002): a training step of an MLP
 * of dim x dim layers with GELU, MSE loss plus L2, Adam with global-norm
 * clipping, parameters and optimizer state donated.
 *
 * Schedule (one jitted step, step(params, opt_state, inputs)):
 *   arguments  x[batch,dim] (input), w_i[dim,dim] (param), m_i, v_i[dim,dim]
 *              (optstate: Adam's mu and nu, same dtype as the params);
 *   forward    z_i = h_i @ w_i (2*batch*dim^2 flops), h_{i+1} = gelu(z_i)
 *              (tanh form: 12 flops per element), h_0 = x;
 *   loss       mean((h_L - x)^2) + 0.001 * sum_i sum(w_i^2);
 *   backward   d_h_L = 2(h_L - x)/n; for i = L-1..0: d_z_i = d_h_{i+1} *
 *              gelu'(z_i) (20 flops per element), d_w_i = h_i^T @ d_z_i +
 *              0.002 w_i, d_h_i = d_z_i @ w_i^T (i > 0);
 *   optimizer  gnorm = ||(d_w_0..d_w_{L-1})||; per layer one fused update
 *              (clip by global norm 1.0, Adam lr 0.1: 16 flops per element)
 *              reading w_i, d_w_i, m_i, v_i and writing new_w_i, new_m_i,
 *              new_v_i with donate=w_i,m_i,v_i (donate_argnums=(0, 1)).
 * Outputs: new_w_i (param) and new_m_i, new_v_i (optstate), live at the end.
 * The trace marks the donation; `--policy donate` makes the outputs reuse
 * the donated buffers, as XLA does, so that the peak counts them once.
 */
#include "workload/workload.h"
#include "workload/autodiff.h"
#include "core/error.h"

static const strata_param_def adam_mlp_params[] = {
    {"dim", STRATA_PARAM_INT, "7168", "width of each dim x dim layer (the tutorial's DIM)", NULL},
    {"layers", STRATA_PARAM_INT, "4", "number of linear+GELU layers", NULL},
    {"batch", STRATA_PARAM_INT, "7168", "rows of the input (the tutorial uses a DIM x DIM input)", NULL},
    {"dtype", STRATA_PARAM_STRING, "f32", "element type of inputs, parameters and optimizer state",
     strata_workload_dtype_choices},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *adam_mlp_generate(const strata_params *p, GError **err)
{
    static const char *const positive[] = {"dim", "layers", "batch", NULL};
    if (!strata_workload_check_positive(p, "adam-mlp", positive, err))
        return NULL;
    uint64_t D = (uint64_t)strata_params_int(p, "dim"), B = (uint64_t)strata_params_int(p, "batch");
    int L = (int)strata_params_int(p, "layers");
    strata_dtype dt = strata_workload_dtype(p, "dtype");

    wl_graph *g = wl_graph_new();
    wl_model *m = wl_model_new(g);
    const uint64_t bd[2] = {B, D}, dd[2] = {D, D};
    wl_tensor x = wl_graph_tensor(g, "x", STRATA_TAG_INPUT, dt, 2, bd, WL_ARGUMENT);
    wl_tensor *w = g_new(wl_tensor, L), *mu = g_new(wl_tensor, L), *nu = g_new(wl_tensor, L);
    char name[48], label[48];
    for (int i = 0; i < L; i++) {
        g_snprintf(name, sizeof name, "w_%d", i);
        w[i] = wl_graph_tensor(g, name, STRATA_TAG_PARAM, dt, 2, dd, WL_ARGUMENT);
        wl_model_requires_grad(m, w[i]);
    }
    for (int i = 0; i < L; i++) {
        g_snprintf(name, sizeof name, "m_%d", i);
        mu[i] = wl_graph_tensor(g, name, STRATA_TAG_OPTSTATE, dt, 2, dd, WL_ARGUMENT);
        g_snprintf(name, sizeof name, "v_%d", i);
        nu[i] = wl_graph_tensor(g, name, STRATA_TAG_OPTSTATE, dt, 2, dd, WL_ARGUMENT);
    }
    double mm = 2.0 * (double)B * (double)D * (double)D;
    wl_tensor h = x;
    for (int i = 0; i < L; i++) {
        wl_model_group(m, i, false);
        g_snprintf(name, sizeof name, "z_%d", i);
        wl_tensor z = wl_graph_tensor(g, name, STRATA_TAG_ACTIVATION, dt, 2, bd, WL_TEMP);
        g_snprintf(label, sizeof label, "layer%d_matmul", i);
        wl_model_matmul(m, label, z, h, w[i], mm);
        g_snprintf(name, sizeof name, "h_%d", i + 1);
        wl_tensor hn = wl_graph_tensor(g, name, STRATA_TAG_ACTIVATION, dt, 2, bd, WL_TEMP);
        g_snprintf(label, sizeof label, "layer%d_gelu", i);
        wl_model_unary(m, label, hn, z, 12, 20);
        h = hn;
    }
    wl_model_group(m, L, false);
    wl_tensor *loss_ins = g_new(wl_tensor, L + 2);
    loss_ins[0] = h;
    loss_ins[1] = x;
    for (int i = 0; i < L; i++)
        loss_ins[i + 2] = w[i];
    wl_tensor loss = wl_graph_tensor(g, "loss", STRATA_TAG_TEMP, STRATA_DTYPE_F32, 0, NULL, WL_TEMP);
    double n_bd = (double)(B * D), n_dd = (double)(D * D);
    uint32_t ln = wl_model_node(m, "mse_l2_loss", loss, loss_ins, (uint32_t)L + 2, 3 * n_bd + 2 * L * n_dd, false);
    wl_tensor hx[2] = {h, x};
    wl_model_vjp(m, ln, 0, 3 * n_bd, hx, 2);
    for (int i = 0; i < L; i++)
        wl_model_vjp(m, ln, (uint32_t)i + 2, 2 * n_dd, &w[i], 1);
    wl_model_emit(m, WL_REMAT_NONE, WL_TEMP);

    wl_tensor *grads = g_new(wl_tensor, L);
    for (int i = 0; i < L; i++)
        grads[i] = wl_model_grad(m, w[i]);
    wl_tensor gnorm = wl_graph_tensor(g, "gnorm", STRATA_TAG_TEMP, STRATA_DTYPE_F32, 0, NULL, WL_TEMP);
    wl_graph_compute(g, "clip_global_norm", 2 * L * n_dd, grads, (uint32_t)L, &gnorm, 1, NULL, 0);
    for (int i = 0; i < L; i++) {
        wl_tensor outs[3];
        g_snprintf(name, sizeof name, "new_w_%d", i);
        outs[0] = wl_graph_tensor(g, name, STRATA_TAG_PARAM, dt, 2, dd, WL_OUTPUT);
        g_snprintf(name, sizeof name, "new_m_%d", i);
        outs[1] = wl_graph_tensor(g, name, STRATA_TAG_OPTSTATE, dt, 2, dd, WL_OUTPUT);
        g_snprintf(name, sizeof name, "new_v_%d", i);
        outs[2] = wl_graph_tensor(g, name, STRATA_TAG_OPTSTATE, dt, 2, dd, WL_OUTPUT);
        wl_tensor ins[5] = {w[i], grads[i], mu[i], nu[i], gnorm};
        wl_tensor donated[3] = {w[i], mu[i], nu[i]};
        g_snprintf(label, sizeof label, "adam_update%d", i);
        wl_graph_compute(g, label, 16 * n_dd, ins, 5, outs, 3, donated, 3);
    }
    wl_model_free(m);
    g_free(w);
    g_free(mu);
    g_free(nu);
    g_free(loss_ins);
    g_free(grads);
    return wl_graph_to_source(g, "adam-mlp");
}

const strata_workload_type strata_workload_adam_mlp = {
    "adam-mlp",
    "the tutorial's MLP training step: GELU layers, MSE+L2, Adam with global-norm clipping, donated state",
    adam_mlp_params,
    adam_mlp_generate,
};
