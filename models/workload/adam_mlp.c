/*
 * adam_mlp.c: `strata gen adam-mlp`, the optimizer-state offloading example
 * of the JAX host-offloading tutorial (seed 002): a training step of an MLP
 * of dim x dim layers with GELU, MSE loss plus L2, optax.chain(
 * clip_by_global_norm(1.0), adam(0.1)), jax.jit(step, donate_argnums=(0, 1)):
 * parameters and optimizer state donated. The defaults, and
 * `preset=tutorial`, are the tutorial's shapes: DIM = 7168, params w1..w4
 * [7168,7168], input [7168,7168], f32.
 *
 * The program as XLA compiles it (B batch, D dim, L layers, s bytes per
 * element), buffer by buffer:
 *   arguments  x[B,D] (input); w_i[D,D] (param); Adam's state: count, an
 *              int32 scalar (4 bytes), and mu_i, nu_i[D,D] (m_i, v_i,
 *              optstate; clip_by_global_norm keeps no state);
 *   forward    z_i = h_i @ w_i [B,D] (2*B*D^2 flops), h_{i+1} = gelu(z_i)
 *              [B,D] (tanh form: 12 flops per element, one fusion), h_0 = x;
 *              both are saved for the backward pass;
 *   loss       mean((h_L - x)^2) + 0.001 * sum_i sum(w_i^2): a 4-byte f32
 *              temp, freed at once;
 *   backward   d_h_L = 2(h_L - x)/n [B,D], then h_L is dead; the L2 term
 *              starts every gradient d_w_i = 0.002 w_i [D,D]; for
 *              i = L-1..0: d_z_i = d_h_{i+1} * gelu'(z_i) (20 flops per
 *              element), then d_h_{i+1} and z_i are dead; d_h_i = d_z_i @
 *              w_i^T (i > 0), d_w_i += h_i^T @ d_z_i accumulated in place
 *              (the GEMM adds into its output); then d_z_i, h_i are dead;
 *   optimizer  gnorm = ||(d_w_0..d_w_{L-1})|| (a 4-byte temp); new_count =
 *              count + 1; per layer one fused update (clip, Adam: 16 flops
 *              per element) reading w_i, d_w_i, m_i, v_i, gnorm, new_count
 *              and writing new_w_i, new_m_i, new_v_i, donating w_i, m_i, v_i;
 *              then d_w_i is dead.
 * Outputs: new_w_i (param), new_count, new_m_i, new_v_i (optstate); every
 * one takes the storage of the argument it replaces (XLA aliases donated
 * parameters with outputs of their shape). The trace marks the donations;
 * the ledger counts the aliases either way, and `--policy donate` also makes
 * the outputs reuse the donated buffers, so that the peak counts them once.
 * memory_analysis(), by hand:
 *   argument  (B*D + 3*L*D^2) * s + 4
 *   output    3*L*D^2 * s + 4            new parameters and state
 *   alias     3*L*D^2 * s + 4            all of them donated
 *   temp      ((2L+1)*B*D + L*D^2) * s   at d_z_{L-1}: z_0..z_{L-1},
 *                                        h_1..h_{L-1}, d_h_L, d_z_{L-1} and
 *                                        the L gradients
 *   total     temp + argument
 * Tutorial shapes (B = D = 7168, L = 4, s = 4; D^2 * s = 205520896):
 * argument 13 * 205520896 + 4 = 2671771652, output = alias = 12 * 205520896
 * + 4 = 2466250756, temp 13 * 205520896 = 2671771648, total 5343543300
 * bytes.
 */
#include "workload/workload.h"
#include "workload/autodiff_nodes.h"
#include "core/error.h"

static const char *const preset_choices[] = {"none", "tutorial", NULL};
static const char *const tutorial[] = {"dim=7168", "batch=7168", "layers=4", "dtype=f32", NULL};
static const strata_workload_preset adam_mlp_presets[] = {{"tutorial", tutorial}, {NULL, NULL}};

/* The optimizer step is one graph step whose operands are every parameter,
 * moment (m, v) and gradient plus the step count: 4 x layers + 1, and a
 * graph step holds at most 65535 (graph.h). */
#define ADAM_MLP_MAX_LAYERS ((65535 - 1) / 4)

static const strata_param_def adam_mlp_params[] = {
    STRATA_WORKLOAD_PRESET_PARAM("tutorial: the JAX offloading tutorial's shapes (dim 7168, batch 7168, layers 4, f32)",
                                 preset_choices),
    {"dim", STRATA_PARAM_INT, "7168", "width of each dim x dim layer (the tutorial's DIM)", NULL},
    {"layers", STRATA_PARAM_INT, "4", "number of linear+GELU layers", NULL},
    {"batch", STRATA_PARAM_INT, "7168", "rows of the input (the tutorial uses a DIM x DIM input)", NULL},
    STRATA_WORKLOAD_DTYPE_PARAM("dtype", "f32", "element type of inputs, parameters and optimizer state"),
    {NULL, 0, NULL, NULL, NULL},
};

static bool adam_mlp_check(const strata_params *p, GError **err)
{
    static const char *const positive[] = {"dim", "layers", "batch", NULL};
    static const char *const sizes[] = {"batch*dim", "dim*dim", "3*layers*dim*dim", "layers*batch*dim", NULL};
    static const char *const counts[] = {"layers", NULL};
    return strata_workload_check_positive(p, "adam-mlp", positive, err) &&
           strata_workload_check_counts(p, "adam-mlp", counts, ADAM_MLP_MAX_LAYERS,
                                        "the optimizer step reads every parameter, moment and gradient: 4 x layers + 1 operands, at most 65535", err) &&
           strata_workload_check_sizes(p, "adam-mlp", sizes, strata_workload_dtype(p, "dtype"), err);
}

static strata_source *adam_mlp_generate(const strata_params *p, GError **err)
{
    if (!adam_mlp_check(p, err))
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
    wl_tensor count = wl_graph_tensor(g, "count", STRATA_TAG_OPTSTATE, STRATA_DTYPE_INT32, 0, NULL, WL_ARGUMENT);
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
    wl_tensor new_count = wl_graph_tensor(g, "new_count", STRATA_TAG_OPTSTATE, STRATA_DTYPE_INT32, 0, NULL, WL_OUTPUT);
    wl_graph_compute(g, "adam_count", 1, &count, 1, &new_count, 1, &count, 1);
    for (int i = 0; i < L; i++) {
        wl_tensor outs[3];
        g_snprintf(name, sizeof name, "new_w_%d", i);
        outs[0] = wl_graph_tensor(g, name, STRATA_TAG_PARAM, dt, 2, dd, WL_OUTPUT);
        g_snprintf(name, sizeof name, "new_m_%d", i);
        outs[1] = wl_graph_tensor(g, name, STRATA_TAG_OPTSTATE, dt, 2, dd, WL_OUTPUT);
        g_snprintf(name, sizeof name, "new_v_%d", i);
        outs[2] = wl_graph_tensor(g, name, STRATA_TAG_OPTSTATE, dt, 2, dd, WL_OUTPUT);
        wl_tensor ins[6] = {w[i], grads[i], mu[i], nu[i], gnorm, new_count};
        wl_tensor donated[3] = {w[i], mu[i], nu[i]};
        g_snprintf(label, sizeof label, "adam_update%d", i);
        wl_graph_compute(g, label, 16 * n_dd, ins, 6, outs, 3, donated, 3);
    }
    wl_model_free(m);
    g_free(w);
    g_free(mu);
    g_free(nu);
    g_free(loss_ins);
    g_free(grads);
    return wl_graph_to_source(g, "adam-mlp", err);
}

const strata_workload_type strata_workload_adam_mlp = {
    "adam-mlp",
    "the tutorial's MLP training step: GELU layers, MSE+L2, Adam with global-norm clipping, donated state",
    adam_mlp_params,
    adam_mlp_generate,
    adam_mlp_presets,
    adam_mlp_check,
};
