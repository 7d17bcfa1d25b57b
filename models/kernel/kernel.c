/*
 * kernel.c: the table of kernel cost models (kernel.h) and what every row
 * shares: the check of an op's extents, the roofline on units without a
 * matrix engine, element sizes and explanation terms.
 */
#include "kernel/kernel.h"
#include <math.h>
#include <string.h>
#include "kernel/kernel_rows.h"

/* One line per kernel: its file's hooks (kernel_rows.h). */
static const strata_kernel_model kernels[] = {
    {"gemm", 3, 4, "MxKxN or BxMxKxN", false, "C[M,N] = A[M,K] B[K,N], B times", strata_kernel_gemm_cost,
     strata_kernel_gemm_nominal},
    {"grouped-gemm", 3, 4, "MxKxN or BxMxKxN", false, "B products C[M,N] = A[M,K] B[K,N] in one grouped launch (MoE experts)",
     strata_kernel_grouped_gemm_cost, strata_kernel_gemm_nominal},
    {"flash-attention", 5, 6, "BxHxSqxSkvxD or BxHxSqxSkvxDxHkv", true, "blocked attention, forward",
     strata_kernel_flash_fwd_cost, strata_kernel_flash_fwd_nominal},
    {"flash-attention-bwd", 5, 6, "BxHxSqxSkvxD or BxHxSqxSkvxDxHkv", true, "blocked attention, backward",
     strata_kernel_flash_bwd_cost, strata_kernel_flash_bwd_nominal},
    {"elementwise", 1, 1, "N", false, "N elements through the vector unit", strata_kernel_elementwise_cost,
     strata_kernel_elementwise_nominal},
    {"transcendental", 1, 1, "N", false, "N exp/log/tanh evaluations", strata_kernel_transcendental_cost,
     strata_kernel_elementwise_nominal},
};

const strata_kernel_model *strata_kernel_at(uint32_t i)
{
    return i < G_N_ELEMENTS(kernels) ? &kernels[i] : NULL;
}

const strata_kernel_model *strata_kernel_find(const char *name)
{
    for (uint32_t i = 0; name && i < G_N_ELEMENTS(kernels); i++)
        if (strcmp(kernels[i].name, name) == 0)
            return &kernels[i];
    return NULL;
}

char *strata_kernel_names(void)
{
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < G_N_ELEMENTS(kernels); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", kernels[i].name);
    return g_string_free(s, FALSE);
}

bool strata_kernel_check(const strata_kernel_model *k, uint32_t n_dims, const char *mask, char **why)
{
    *why = NULL;
    if (n_dims < k->min_dims || n_dims > k->max_dims)
        *why = g_strdup_printf("expected dims=%s for kernel=%s, got %u extent%s", k->dims_help, k->name, n_dims,
                               n_dims == 1 ? "" : "s");
    else if (mask && !k->masks)
        *why = g_strdup_printf("expected no mask= on kernel=%s (only attention kernels take one), got '%s'", k->name,
                               mask);
    else if (mask && !strata_kernel_mask_parse(mask, &(bool){false}, &(uint64_t){0}))
        *why = g_strdup_printf("expected mask=causal or mask=window-W (a sliding window of W >= 1 keys), got '%s'",
                               mask);
    return *why == NULL;
}

bool strata_kernel_mask_parse(const char *mask, bool *causal, uint64_t *window)
{
    *causal = false;
    *window = 0;
    if (strcmp(mask, "causal") == 0)
        return *causal = true;
    if (!g_str_has_prefix(mask, "window-"))
        return false;
    const char *digits = mask + strlen("window-");
    char *end = NULL;
    guint64 w = g_ascii_strtoull(digits, &end, 10);
    if (!g_ascii_isdigit(*digits) || *end || w < 1 || w == G_MAXUINT64)
        return false;
    *window = w;
    return *causal = true;
}

double strata_kernel_elem_bytes(const strata_kernel_problem *p)
{
    uint32_t bits = p->dtype == STRATA_DTYPE_NONE ? 16 : strata_dtype_bits(p->dtype);
    return bits > 0 ? bits / 8.0 : 2.0;
}

bool strata_kernel_is_block_scaled(const strata_kernel_problem *p)
{
    return p->block_scaled && strata_kernel_elem_bytes(p) == 1.0;
}

double strata_kernel_out_bytes(double elem)
{
    return elem < 2.0 ? 2.0 : elem;
}

void strata_kernel_finish(const strata_hw *hw, uint32_t unit, strata_kernel_cost *c, double flops, double busy_s,
                          double bytes, const char *bytes_what)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    strata_kernel_finish_at(hw, unit, c, flops, busy_s, bytes, bytes_what,
                            u->kernel.stream_efficiency > 0 ? u->kernel.stream_efficiency : 1.0);
}

void strata_kernel_finish_at(const strata_hw *hw, uint32_t unit, strata_kernel_cost *c, double flops, double busy_s,
                             double bytes, const char *bytes_what, double eff)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
    double rate = m ? m->bandwidth * eff : 0;
    c->flops = flops;
    c->compute_s = busy_s;
    c->bytes_nominal = bytes;
    c->bytes = bytes / eff;
    c->fixed_s = u->kernel.kernel_launch;
    strata_kernel_term_add(c, bytes_what, bytes, "B");
    strata_kernel_term_add(c, "achievable stream rate", rate, "B/s");
    strata_kernel_term_add(c, "memory time", rate > 0 ? bytes / rate : 0, "s");
    strata_kernel_term_add(c, "kernel launch", c->fixed_s, "s");
}

void strata_kernel_term_add(strata_kernel_cost *c, const char *name, double value, const char *unit)
{
    if (c->n_terms < STRATA_KERNEL_MAX_TERMS)
        c->terms[c->n_terms++] = (strata_kernel_term){name, value, unit};
}

/* The roofline: the op's own counts where given, else the kernel's. */
static void roofline(const strata_kernel_model *k, const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                     strata_kernel_cost *c)
{
    double flops = 0, bytes = 0;
    k->nominal(p, &flops, &bytes);
    if (p->has_flops)
        flops = p->flops;
    if (p->has_bytes)
        bytes = (double)p->bytes;
    double peak = strata_hw_compute_flops(hw, unit, p->dtype);
    c->flops = flops;
    c->compute_s = peak > 0 ? flops / peak : 0;
    c->bytes = c->bytes_nominal = bytes;
    strata_kernel_term_add(c, "roofline: the unit has no matrix engine (matrix =)", 0, "");
    strata_kernel_term_add(c, "flops", flops, "FLOP");
    strata_kernel_term_add(c, "operand bytes", bytes, "B");
    strata_kernel_term_add(c, "compute at peak", c->compute_s, "s");
}

void strata_kernel_cost_of(const strata_kernel_model *k, const strata_hw *hw, uint32_t unit,
                           const strata_kernel_problem *p, strata_kernel_cost *c)
{
    *c = (strata_kernel_cost){0};
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    if (!u || u->kernel.matrix == STRATA_MATRIX_NONE) {
        roofline(k, hw, unit, p, c);
        return;
    }
    k->cost(hw, unit, p, c);
    if (!isfinite(c->compute_s) || c->compute_s < 0)
        c->compute_s = 0;
    if (!isfinite(c->bytes) || c->bytes < 0)
        c->bytes = 0;
}

const strata_kernel_model *strata_kernel_problem_of(const strata_op *op, strata_dtype dtype, uint64_t bytes,
                                                    strata_kernel_problem *p)
{
    const strata_kernel_model *k = op->kernel ? strata_kernel_find(op->kernel) : NULL;
    if (!k)
        return NULL;
    *p = (strata_kernel_problem){.n_dims = op->n_kdims, .dims = op->dims, .dtype = dtype,
                                 .has_flops = op->has_flops, .flops = op->flops, .has_bytes = bytes > 0,
                                 .bytes = bytes};
    if (op->mask)
        strata_kernel_mask_parse(op->mask, &p->causal, &p->window); /* checked at the op's line */
    return k;
}

void strata_kernel_cost_print(FILE *out, const strata_kernel_cost *c, const char *indent)
{
    for (uint32_t i = 0; i < c->n_terms; i++)
        fprintf(out, "%s%-40s %.6g%s%s\n", indent, c->terms[i].name, c->terms[i].value, *c->terms[i].unit ? " " : "",
                c->terms[i].unit);
    fprintf(out, "%s%-40s %.6g s\n", indent, "= compute (the unit busy)", c->compute_s);
    fprintf(out, "%s%-40s %.6g B\n", indent, "= memory bytes (over stream efficiency)", c->bytes);
    fprintf(out, "%s%-40s %.6g s\n", indent, "= fixed (after both)", c->fixed_s);
}
