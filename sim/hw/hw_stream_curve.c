/*
 * hw_stream_curve.c: gemm_stream_curve, the rate a library GEMM streams its
 * operands at as a function of their size (issue 45, wave 46).
 *
 * A memory-bound GEMM (a decode step's Linear at small M) reads its weight
 * once; how close it comes to the memory's bandwidth grows with the bytes
 * it reads: a smaller GEMM has fewer CTAs in flight per SM for fewer waves,
 * and its first wave's ramp and last wave's tail are a larger share of its
 * time. A single gemm_stream_efficiency prices every size at the large
 * GEMMs' rate. The curve gives the fraction at points of operand bytes
 * (A, B read and C written, strata_kernel_gemm_nominal's bytes); between
 * two points the fraction is read linearly on log(bytes), beyond the ends
 * it is the end point's. The figures come from a published microbenchmark
 * per GPU (configs/hw/a100.ini cites its rows).
 *
 * Invariants: at most STRATA_MAX_STREAM_CURVE points; sizes strictly
 * rising and above 0; fractions in (0, 1]; n_stream_curve 0 means no curve.
 */
#include "hw/hw_internal.h"
#include <math.h>
#include <string.h>
#include "core/units.h"

static const char CURVE_EXPECTED[] = "up to 16 points SIZE:FRACTION, sizes rising, fractions above 0 and at "
                                     "most 1, such as 16MiB:0.74,1GiB:0.84 (or none)";

/* One "SIZE:FRACTION" into pt; false when malformed. */
static bool parse_point(const char *text, double pt[2])
{
    char **sf = g_strsplit(text, ":", -1);
    bool ok = sf[0] && sf[1] && !sf[2];
    uint64_t bytes = 0;
    char *end = NULL;
    if (ok) {
        g_strstrip(sf[0]);
        g_strstrip(sf[1]);
        ok = strata_parse_size_above_zero(sf[0], &bytes, NULL);
        double f = g_ascii_strtod(sf[1], &end);
        ok = ok && end && end != sf[1] && *end == '\0' && f > 0 && f <= 1;
        pt[0] = (double)bytes;
        pt[1] = f;
    }
    g_strfreev(sf);
    return ok;
}

bool hw_get_stream_curve(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err)
{
    k->n_stream_curve = 0;
    char *v = hw_get_raw(ctx, group, "gemm_stream_curve");
    if (!v)
        return true;
    g_strstrip(v);
    bool ok = true;
    if (strcmp(v, "none") != 0) {
        char **parts = g_strsplit(v, ",", -1);
        uint32_t n = 0;
        for (; ok && parts[n]; n++) {
            ok = n < STRATA_MAX_STREAM_CURVE && parse_point(parts[n], k->stream_curve[n]) &&
                 (n == 0 || k->stream_curve[n][0] > k->stream_curve[n - 1][0]);
        }
        ok = ok && n > 0;
        k->n_stream_curve = ok ? n : 0;
        g_strfreev(parts);
    }
    if (!ok)
        hw_fail_value(ctx, err, group, "gemm_stream_curve", CURVE_EXPECTED, v);
    g_free(v);
    return ok;
}

double strata_hw_gemm_stream_efficiency(const strata_kernel_spec *ks, double bytes)
{
    uint32_t n = ks->n_stream_curve;
    if (n == 0)
        return ks->gemm_stream_efficiency > 0 ? ks->gemm_stream_efficiency
               : ks->stream_efficiency > 0    ? ks->stream_efficiency
                                              : 1.0;
    const double (*pt)[2] = ks->stream_curve;
    if (bytes <= pt[0][0])
        return pt[0][1];
    for (uint32_t i = 1; i < n; i++) {
        if (bytes <= pt[i][0]) {
            double x = (log(bytes) - log(pt[i - 1][0])) / (log(pt[i][0]) - log(pt[i - 1][0]));
            return pt[i - 1][1] + x * (pt[i][1] - pt[i - 1][1]);
        }
    }
    return pt[n - 1][1];
}
