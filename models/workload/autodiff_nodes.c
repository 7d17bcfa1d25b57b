/*
 * autodiff_nodes.c: the common nodes of a model and their gemm kernels
 * (autodiff_nodes.h).
 */
#include "workload/autodiff_nodes.h"
#include <math.h>

uint32_t wl_model_matmul(wl_model *m, const char *label, wl_tensor out, wl_tensor a, wl_tensor b, double flops)
{
    wl_tensor ins[2] = {a, b};
    uint32_t n = wl_model_node(m, label, out, ins, 2, flops, true);
    wl_model_vjp(m, n, 0, flops, &b, 1); /* da = dout @ b^T */
    wl_model_vjp(m, n, 1, flops, &a, 1); /* db = a^T @ dout */
    wl_model_gemm_shapes(m, n, out, a, b);
    return n;
}

uint32_t wl_model_unary(wl_model *m, const char *label, wl_tensor out, wl_tensor x, double fwd_per_elem,
                        double bwd_per_elem)
{
    double e = (double)wl_graph_elements(wl_model_graph(m), x);
    uint32_t n = wl_model_node(m, label, out, &x, 1, fwd_per_elem * e, false);
    wl_model_vjp(m, n, 0, bwd_per_elem * e, &x, 1);
    return n;
}

uint32_t wl_model_add(wl_model *m, const char *label, wl_tensor out, wl_tensor a, wl_tensor b)
{
    wl_tensor ins[2] = {a, b};
    double e = (double)wl_graph_elements(wl_model_graph(m), out);
    uint32_t n = wl_model_node(m, label, out, ins, 2, e, false);
    wl_model_vjp(m, n, 0, e, NULL, 0);
    wl_model_vjp(m, n, 1, e, NULL, 0);
    return n;
}

bool wl_gemm_exact(double flops, uint64_t batch, uint64_t M, uint64_t K, uint64_t N)
{
    double g = 2.0 * (double)batch * (double)M * (double)K * (double)N;
    return g > 0 && fabs(flops - g) <= 1e-9 * g;
}

/* Step k (< 0: the forward) of node runs kernel=gemm batch x M x K x N
 * when its flops are that GEMM's. */
static void gemm_step(wl_model *m, uint32_t node, int k, uint64_t batch, uint64_t M, uint64_t K, uint64_t N)
{
    uint64_t dims[4];
    if (!wl_gemm_exact(wl_model_flops(m, node, k), batch, M, K, N))
        return;
    uint32_t nd = wl_gemm_dims(dims, batch, M, K, N);
    if (k < 0)
        wl_model_kernel(m, node, "gemm", NULL, nd, dims, NULL);
    else
        wl_model_vjp_kernel(m, node, (uint32_t)k, "gemm", nd, dims);
}

void wl_model_gemm(wl_model *m, uint32_t node, uint64_t batch, uint64_t M, uint64_t K, uint64_t N, bool b_nk)
{
    gemm_step(m, node, -1, batch, M, K, N);
    gemm_step(m, node, 0, batch, M, N, K); /* dA = dC B^T */
    if (b_nk)
        gemm_step(m, node, 1, batch, N, M, K); /* dB^T = dC^T A */
    else
        gemm_step(m, node, 1, batch, K, M, N); /* dB = A^T dC */
}

void wl_model_gemm_shapes(wl_model *m, uint32_t node, wl_tensor out, wl_tensor a, wl_tensor b)
{
    const wl_graph *g = wl_model_graph(m);
    const uint64_t *ad, *bd;
    uint32_t na = wl_graph_dims(g, a, &ad);
    uint64_t K = na ? ad[na - 1] : 0;
    uint32_t nb = wl_graph_dims(g, b, &bd);
    if (K == 0 || nb < 2 || nb > 3)
        return;
    uint64_t batch = nb == 3 ? bd[0] : 1, b0 = bd[nb - 2], b1 = bd[nb - 1], ea = wl_graph_elements(g, a),
             eo = wl_graph_elements(g, out);
    if (batch == 0 || ea % (batch * K) || ea == 0)
        return;
    uint64_t M = ea / (batch * K);
    if (eo % (batch * M))
        return;
    uint64_t N = eo / (batch * M);
    bool b_nk = nb == 2 && b0 == N && b1 == K && K != N;
    if (N == 0 || !((b0 == K && b1 == N) || b_nk))
        return;
    wl_model_gemm(m, node, batch, M, K, N, b_nk);
}
