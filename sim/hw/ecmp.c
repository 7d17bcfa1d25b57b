/*
 * ecmp.c: the expected share of a leaf's uplinks that statically hashed
 * flows can use (contract and sources in ecmp.h).
 *
 * P(M <= m), the chance that no uplink holds more than m of the n keys,
 * by uplinks: q_j(t), the chance that t keys placed uniformly on j
 * uplinks leave none above m, follows from q_{j-1}: of t keys on j
 * uplinks, the j-th holds k ~ Binomial(t, 1/j) and the rest are uniform
 * on the other j - 1; q_j(t) = sum_{k <= m} Bin(t, 1/j)(k) q_{j-1}(t - k),
 * q_0(0) = 1. Every term is a probability in [0, 1] (no factorials that
 * overflow). E[n / (U M)] = sum_m P(M = m) n / (U m), m from ceil(n / U)
 * (the least the busiest can hold) to n, stopping once P(M <= m) is 1
 * within 1e-12.
 */
#include "hw/ecmp.h"
#include <math.h>
#include <glib.h>

/* P(M <= m) for n keys on u uplinks; lf[t] = log t!. */
static double at_most(uint32_t n, uint32_t u, uint32_t m, const double *lf)
{
    double *q = g_new0(double, n + 1), *next = g_new0(double, n + 1);
    q[0] = 1;
    for (uint32_t j = 1; j <= u; j++) {
        double p = 1.0 / j, lp = log(p), lq = j > 1 ? log(1 - p) : 0;
        for (uint32_t t = 0; t <= n; t++) {
            double s = 0;
            for (uint32_t k = 0; k <= MIN(m, t); k++) {
                if (q[t - k] == 0 || (j == 1 && k != t))
                    continue; /* one uplink left: it holds all t */
                double lb = lf[t] - lf[k] - lf[t - k] + k * lp + (j > 1 ? (t - k) * lq : 0);
                s += exp(lb) * q[t - k];
            }
            next[t] = s;
        }
        double *swap = q;
        q = next;
        next = swap;
    }
    double r = q[n];
    g_free(q);
    g_free(next);
    return MIN(1.0, r);
}

double strata_ecmp_expected_share(uint32_t keys, uint32_t uplinks)
{
    uint32_t n = MIN(keys, STRATA_ECMP_MAX), u = MIN(uplinks, STRATA_ECMP_MAX);
    if (n == 0 || u <= 1)
        return 1;
    double *lf = g_new(double, n + 1), share = 0, below = 0;
    for (uint32_t t = 0; t <= n; t++)
        lf[t] = lgamma((double)t + 1);
    for (uint32_t m = (n + u - 1) / u; m <= n; m++) {
        double upto = m == n ? 1 : at_most(n, u, m, lf);
        share += (upto - below) * n / ((double)u * m);
        below = upto;
        if (upto > 1 - 1e-12)
            break;
    }
    g_free(lf);
    return share;
}
