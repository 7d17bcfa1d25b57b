/*
 * units.c: parsing and printing of sizes, bandwidths, times and flop rates
 * (contract in units.h).
 *
 * Design: every quantity is "NUMBER[ ]UNIT". The number is scanned by hand
 * (digits, optional fraction, optional exponent; no sign, no hex floats, no
 * inf/nan) and converted exactly: by Clinger's fast path where it applies
 * (exact_decimal), else with g_ascii_strtod, which is locale-independent;
 * both round the decimal to its nearest double.
 * The unit is looked up in a small NULL-terminated table per quantity.
 *
 * Invariants:
 *  1. A parse either succeeds with a finite, non-negative value or fails with
 *     STRATA_ERROR_INPUT quoting the whole text.
 *  2. Sizes written as integers are computed in 64-bit integer arithmetic with
 *     overflow checks; sizes with a fraction or exponent go through a double
 *     and are range-checked before conversion, so nothing ever wraps.
 *  3. Times divide by exact powers of ten (250 / 1e9), so the text printed by
 *     strata_format_time_exact() parses back to the very same double.
 */
#include "core/units.h"
#include "core/error.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit_def {
    const char *name;
    double scale; /* multiply (sizes, rates) */
} unit_def;

/* Sizes: decimal (KB = 1000) and binary (KiB = 1024) multiples. */
typedef struct size_unit {
    const char *name;
    uint64_t scale;
} size_unit;

static const size_unit size_units[] = {
    {"B", 1ULL},
    {"KB", 1000ULL},
    {"kB", 1000ULL}, /* the SI symbol; KB is the common spelling */
    {"KiB", 1ULL << 10},
    {"MB", 1000ULL * 1000},
    {"MiB", 1ULL << 20},
    {"GB", 1000ULL * 1000 * 1000},
    {"GiB", 1ULL << 30},
    {"TB", 1000ULL * 1000 * 1000 * 1000},
    {"TiB", 1ULL << 40},
    {"PB", 1000ULL * 1000 * 1000 * 1000 * 1000},
    {"PiB", 1ULL << 50},
    {"EB", 1000ULL * 1000 * 1000 * 1000 * 1000 * 1000},
    {"EiB", 1ULL << 60},
    {NULL, 0},
};

static const unit_def bandwidth_units[] = {
    {"B/s", 1.0},   {"KB/s", 1e3},  {"kB/s", 1e3},  {"KiB/s", 1024.0},           {"MB/s", 1e6},
    {"MiB/s", 1048576.0},           {"GB/s", 1e9},               {"GiB/s", 1073741824.0},
    {"TB/s", 1e12}, {"TiB/s", 1099511627776.0},  {"PB/s", 1e15}, {"PiB/s", 1125899906842624.0},
    {NULL, 0},
};

static const unit_def flop_rate_units[] = {
    {"FLOP/s", 1.0},   {"KFLOP/s", 1e3},  {"MFLOP/s", 1e6}, {"GFLOP/s", 1e9},
    {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {"EFLOP/s", 1e18}, {NULL, 0},
};

static const unit_def flops_units[] = {
    {"FLOP", 1.0},   {"KFLOP", 1e3},  {"MFLOP", 1e6}, {"GFLOP", 1e9},
    {"TFLOP", 1e12}, {"PFLOP", 1e15}, {"EFLOP", 1e18}, {NULL, 0},
};

static const unit_def frequency_units[] = {
    {"Hz", 1.0}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}, {NULL, 0},
};

/* Times divide (see invariant 3). */
static const unit_def time_units[] = {
    {"ns", 1e9}, {"us", 1e6}, {"ms", 1e3}, {"s", 1.0}, {NULL, 0},
};

/* A scanned quantity: the number's text and the unit's text (may be ""). */
typedef struct quantity {
    const char *number; /* points into the parsed text: number_len bytes */
    size_t number_len;
    const char *unit; /* points into the parsed text */
    bool integral;   /* digits only: no fraction, no exponent */
} quantity;

/* Scans NUMBER[ ]UNIT. Returns false when the text does not start with a
 * plain non-negative decimal number or has more than one space before the unit. */
static bool scan_quantity(const char *text, quantity *q)
{
    const char *p = text;
    const char *digits_start = p;
    bool any_digit = false;

    q->number = NULL;
    q->unit = NULL;
    q->integral = true;
    while (g_ascii_isdigit(*p)) {
        p++;
        any_digit = true;
    }
    if (*p == '.') {
        q->integral = false;
        p++;
        while (g_ascii_isdigit(*p)) {
            p++;
            any_digit = true;
        }
    }
    if (!any_digit)
        return false;
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        if (*e == '+' || *e == '-')
            e++;
        if (g_ascii_isdigit(*e)) {
            while (g_ascii_isdigit(*e))
                e++;
            p = e;
            q->integral = false;
        }
        /* else: the 'e' belongs to the unit (and will be rejected there) */
    }
    q->number = digits_start;
    q->number_len = (size_t)(p - digits_start);
    if (*p == ' ') {
        p++;
        if (*p == '\0' || *p == ' ') {
            q->number = NULL;
            return false;
        }
    }
    q->unit = p;
    return true;
}

/* The number of q as a NUL-terminated string: in buf when it fits, else
 * allocated (the caller frees what is not buf). */
static char *number_text(const quantity *q, char *buf, size_t cap)
{
    if (q->number_len >= cap)
        return g_strndup(q->number, q->number_len);
    memcpy(buf, q->number, q->number_len);
    buf[q->number_len] = '\0';
    return buf;
}

/* Clinger's fast path: the number of q (digits, an optional fraction, an
 * optional exponent, as scan_quantity accepted them) when its significand
 * fits in 53 bits and its power of ten lies in [-22, 22]. Both are then
 * exact doubles, and one multiplication or division rounds once to the
 * nearest double, which is what strtod returns. False otherwise. */
static bool exact_decimal(const quantity *q, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const uint64_t max_significand = (uint64_t)1 << 53;
    const char *p = q->number, *end = q->number + q->number_len;
    uint64_t m = 0;
    int exp10 = 0;
    bool fraction = false;
    for (; p < end && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            fraction = true;
            continue;
        }
        if (m > (max_significand - 9) / 10)
            return false;
        m = m * 10 + (uint64_t)(*p - '0');
        exp10 -= fraction;
    }
    if (p < end) { /* the exponent: scan_quantity saw digits after the optional sign */
        bool negative = *++p == '-';
        p += *p == '+' || *p == '-';
        int e = 0;
        for (; p < end; p++) {
            if (e > 1000)
                return false;
            e = e * 10 + (*p - '0');
        }
        exp10 += negative ? -e : e;
    }
    if (m == 0) {
        *out = 0.0;
        return true;
    }
    if (exp10 < -22 || exp10 > 22)
        return false;
    *out = exp10 < 0 ? (double)m / pow10[-exp10] : (double)m * pow10[exp10];
    return true;
}

/* The number of q as a double, the nearest to its decimal. */
static double number_value(const quantity *q)
{
    double v = 0.0;
    if (exact_decimal(q, &v))
        return v;
    char buf[64];
    char *text = number_text(q, buf, sizeof buf);
    v = g_ascii_strtod(text, NULL);
    if (text != buf)
        g_free(text);
    return v;
}

static void set_error(GError **err, const char *what, const char *text)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected %s, got '%s'", what,
                text ? text : "");
}

static const char *const SIZE_WHAT = "a size such as 4096, 64KiB or 1.5GiB";
static const char *const BANDWIDTH_WHAT = "a bandwidth such as 16GB/s, 900GiB/s or 1e9B/s";
static const char *const TIME_WHAT = "a time such as 250ns, 3us, 2ms or 1.5s";
static const char *const FLOP_RATE_WHAT = "a flop rate such as 197TFLOP/s or 1.2PFLOP/s";
static const char *const FREQUENCY_WHAT = "a clock such as 1830MHz or 1.83GHz";
static const char *const FLOPS_WHAT = "an amount of work such as 2e9, 4.5GFLOP or 3TFLOP";

bool strata_parse_bool(const char *text, bool *value)
{
    static const char *const yes[] = {"true", "yes", "1", NULL};
    static const char *const no[] = {"false", "no", "0", NULL};
    for (guint i = 0; text && yes[i]; i++) {
        if (g_ascii_strcasecmp(text, yes[i]) == 0) {
            *value = true;
            return true;
        }
        if (g_ascii_strcasecmp(text, no[i]) == 0) {
            *value = false;
            return true;
        }
    }
    return false;
}

/* The common case of strata_parse_u64: 1 to 19 decimal digits and the end
 * (below 10^19, so no overflow), read here; false for anything else (hex,
 * more digits, a sign, other bytes), which GLib's reader then takes with
 * its refusals. A trace's dims= extents come this way: through
 * g_ascii_string_to_unsigned they cost about 250 instructions each. */
static bool plain_decimal(const char *text, uint64_t *value)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; i < 19 && text[i] >= '0' && text[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(text[i] - '0');
    if (i == 0 || text[i] != '\0')
        return false;
    *value = v;
    return true;
}

bool strata_parse_u64(const char *text, uint64_t *value, GError **err)
{
    guint64 v = 0;
    if (text != NULL && plain_decimal(text, value))
        return true;
    if (text == NULL || *text == '\0') {
        set_error(err, "an unsigned integer", text);
        return false;
    }
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char *digits = hex ? text + 2 : text;
    /* g_ascii_string_to_unsigned accepts a leading '+' and spaces are
     * rejected; refuse the sign ourselves so "+5" is not a number here. */
    if (*digits == '\0' || *digits == '+' || *digits == '-' ||
        !g_ascii_string_to_unsigned(digits, hex ? 16 : 10, 0, G_MAXUINT64, &v, NULL)) {
        bool overflow = *digits != '\0' && strspn(digits, hex ? "0123456789abcdefABCDEF"
                                                              : "0123456789") == strlen(digits);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    overflow ? "'%s' does not fit in 64 bits"
                             : "expected an unsigned integer (decimal or 0x hex), got '%s'",
                    text);
        return false;
    }
    *value = v;
    return true;
}

bool strata_parse_size(const char *text, uint64_t *bytes, GError **err)
{
    quantity q;
    /* a bare hex number is a size in bytes (addresses, alignments) */
    if (text && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
        return strata_parse_u64(text, bytes, err);
    if (text == NULL || !scan_quantity(text, &q)) {
        set_error(err, SIZE_WHAT, text);
        return false;
    }
    uint64_t scale = 0;
    if (*q.unit == '\0') {
        scale = 1;
    } else {
        for (const size_unit *u = size_units; u->name; u++)
            if (strcmp(u->name, q.unit) == 0)
                scale = u->scale;
    }
    if (scale == 0) {
        set_error(err, SIZE_WHAT, text);
        return false;
    }
    bool ok = true;
    if (q.integral) {
        guint64 n = 0;
        guint64 product = 0;
        char buf[64];
        char *digits = number_text(&q, buf, sizeof buf);
        bool fits = g_ascii_string_to_unsigned(digits, 10, 0, G_MAXUINT64, &n, NULL);
        if (digits != buf)
            g_free(digits);
        if (!fits || !g_uint64_checked_mul(&product, n, scale)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "size '%s' does not fit in 64 bits (at most 16 EiB)", text);
            ok = false;
        } else {
            *bytes = product;
        }
    } else {
        double v = number_value(&q) * (double)scale;
        if (!isfinite(v) || v >= 18446744073709551616.0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "size '%s' does not fit in 64 bits (at most 16 EiB)", text);
            ok = false;
        } else if (scale == 1 && v != floor(v)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "size '%s' is a fraction of a byte; expected a whole number of bytes",
                        text);
            ok = false;
        } else {
            double r = floor(v + 0.5);
            *bytes = r >= 18446744073709551615.0 ? G_MAXUINT64 : (uint64_t)r;
        }
    }
    assert(ok || err == NULL || (*err && (*err)->code == STRATA_ERROR_INPUT)); /* invariant 1 */
    return ok;
}

bool strata_decimal_mantissa_nonzero(const char *text, size_t len)
{
    for (size_t i = 0; i < len && text[i] != 'e' && text[i] != 'E'; i++)
        if (text[i] >= '1' && text[i] <= '9')
            return true;
    return false;
}

/* Shared parser for the double-valued quantities. `divide` for times.
 * `bare_ok`: a number without unit is accepted (in base units); `zero_ok`:
 * a bare 0 is accepted even when bare numbers are not. */
static bool parse_real(const char *text, const unit_def *units, bool divide, bool bare_ok,
                       bool zero_ok, const char *what, double *out, GError **err)
{
    quantity q;
    if (text == NULL || !scan_quantity(text, &q)) {
        set_error(err, what, text);
        return false;
    }
    double number = number_value(&q);
    double value = NAN;
    if (*q.unit == '\0') {
        if (bare_ok || (zero_ok && number == 0.0))
            value = number;
    } else {
        for (const unit_def *u = units; u->name; u++)
            if (strcmp(u->name, q.unit) == 0)
                value = divide ? number / u->scale : number * u->scale;
    }
    if (isnan(value)) {
        set_error(err, what, text);
        return false;
    }
    /* 1e-400s, 1e-320ps: a time of 0 at exit 0 */
    if (value == 0.0 && strata_decimal_mantissa_nonzero(q.number, q.number_len)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "'%s' is below the least double and reads as 0; "
                    "expected 0 or %s", text, what);
        return false;
    }
    if (!isfinite(value)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "'%s' is too large; expected %s",
                    text, what);
        return false;
    }
    assert(isfinite(value) && value >= 0); /* invariant 1 */
    *out = value;
    return true;
}

bool strata_parse_size_above_zero(const char *text, uint64_t *bytes, GError **err)
{
    uint64_t v = 0;
    if (!strata_parse_size(text, &v, err))
        return false;
    if (v == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected a size above 0, got '%s'", text);
        return false;
    }
    *bytes = v;
    return true;
}

bool strata_parse_bandwidth(const char *text, double *bytes_per_s, GError **err)
{
    return parse_real(text, bandwidth_units, false, false, true, BANDWIDTH_WHAT, bytes_per_s, err);
}

bool strata_parse_time(const char *text, double *seconds, GError **err)
{
    return parse_real(text, time_units, true, false, true, TIME_WHAT, seconds, err);
}

bool strata_parse_flop_rate(const char *text, double *flops_per_s, GError **err)
{
    return parse_real(text, flop_rate_units, false, false, true, FLOP_RATE_WHAT, flops_per_s, err);
}

bool strata_parse_frequency(const char *text, double *hz, GError **err)
{
    return parse_real(text, frequency_units, false, false, true, FREQUENCY_WHAT, hz, err);
}

/* Whether text is a bare number (digits, an optional fraction, an optional
 * exponent with digits, nothing after) whose value exact_decimal() gives:
 * what parse_real() returns for it with bare_ok, in one pass and no unit
 * table (a compute's flops= on every such line of a trace). */
static bool bare_exact(const char *text, double *out)
{
    const char *p = text;
    while (g_ascii_isdigit(*p))
        p++;
    bool digits = p > text;
    if (*p == '.') {
        const char *f = ++p;
        while (g_ascii_isdigit(*p))
            p++;
        digits = digits || p > f;
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        e += *e == '+' || *e == '-';
        if (!g_ascii_isdigit(*e))
            return false;
        while (g_ascii_isdigit(*e))
            e++;
        p = e;
    }
    if (*p != '\0')
        return false;
    quantity q = {.number = text, .number_len = (size_t)(p - text), .unit = p, .integral = false};
    return exact_decimal(&q, out);
}

bool strata_parse_flops(const char *text, double *flops, GError **err)
{
    if (text && bare_exact(text, flops))
        return true;
    return parse_real(text, flops_units, false, true, true, FLOPS_WHAT, flops, err);
}

/* ---- printing ---- */

static const char *const binary_prefixes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

/* Two digits at a time (half the divisions). */
static const char digit_pairs[201] = "0001020304050607080910111213141516171819202122232425262728293031323334353637383940"
                                    "4142434445464748495051525354555657585960616263646566676869707172737475767778798081"
                                    "828384858687888990919293949596979899";

/* Two digits of v < 100 at p. */
static inline void put_pair(char *p, uint32_t v)
{
    memcpy(p, digit_pairs + 2 * v, 2);
}

size_t strata_format_u64(char buf[STRATA_U64_DIGITS], uint64_t v)
{
    static const uint64_t pow10[STRATA_U64_DIGITS] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
        10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
        1000000000000000000ull, 10000000000000000000ull};
    /* The digits: floor(log10) from the bit length (1233 / 4096 ~ log10 2), one compare to correct it. */
    size_t t = (g_bit_storage(v) * 1233) >> 12;
    size_t n = t + (v >= pow10[t]) + (v == 0);
    /* Written from the last digit back: eight at a time in 32-bit halves
     * that do not wait on each other, then four, then two at a time. */
    char *p = buf + n;
    while (v >= 100000000) {
        uint32_t low = (uint32_t)(v % 100000000), high = low / 10000, rest = low % 10000;
        v /= 100000000;
        p -= 8;
        put_pair(p, high / 100);
        put_pair(p + 2, high % 100);
        put_pair(p + 4, rest / 100);
        put_pair(p + 6, rest % 100);
    }
    uint32_t w = (uint32_t)v;
    if (w >= 10000) { /* below 10^8: one step of four leaves at most four */
        uint32_t rest = w % 10000;
        w /= 10000;
        p -= 4;
        put_pair(p, rest / 100);
        put_pair(p + 2, rest % 100);
    }
    for (; w >= 100; w /= 100) {
        p -= 2;
        put_pair(p, w % 100);
    }
    if (w >= 10)
        put_pair(p - 2, w);
    else
        p[-1] = (char)('0' + w);
    return n;
}

char *strata_format_size(uint64_t bytes)
{
    if (bytes < 1024)
        return g_strdup_printf("%" G_GUINT64_FORMAT " B", bytes);
    unsigned i = 0;
    double v = (double)bytes;
    while (v >= 1024.0 && i + 1 < G_N_ELEMENTS(binary_prefixes)) {
        v /= 1024.0;
        i++;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.2f", v);
    return g_strdup_printf("%s %s", buf, binary_prefixes[i]);
}

char *strata_format_size_exact(uint64_t bytes)
{
    if (bytes == 0)
        return g_strdup("0");
    unsigned i = 0;
    uint64_t v = bytes;
    /* Stops at PiB (index 5): the shortest exact text of sizes up to 2^60. */
    while (v % 1024 == 0 && i < 5) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        return g_strdup_printf("%" G_GUINT64_FORMAT, bytes);
    return g_strdup_printf("%" G_GUINT64_FORMAT "%s", v, binary_prefixes[i]);
}

char *strata_format_time(double seconds)
{
    static const struct {
        const char *name;
        double scale;
        double below;
    } scales[] = {{"ns", 1e9, 1e-6}, {"us", 1e6, 1e-3}, {"ms", 1e3, 1.0}};
    double mag = fabs(seconds);
    const char *name = "s";
    double v = seconds;
    if (mag > 0) {
        for (size_t i = 0; i < G_N_ELEMENTS(scales); i++) {
            if (mag < scales[i].below) {
                name = scales[i].name;
                v = seconds * scales[i].scale;
                break;
            }
        }
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    /* "%.3f" of a huge value would not fit buf (and be cut): use an exponent. */
    g_ascii_formatd(buf, sizeof buf, fabs(v) < 1e15 ? "%.3f" : "%.3e", v);
    return g_strdup_printf("%s %s", buf, name);
}

/* The "%.Ng" texts of one double v, N = 1..17, from a single printf (the
 * trace writer formats two times an op: trying each N with printf and a
 * parse, 68 a time, was most of a large import's time).
 *
 * printf gives v's first G_DIGITS significant digits, correctly rounded;
 * they are rounded again to N digits here. Rounding twice differs from
 * rounding once only when the digits after the Nth read "5" then zeros (a
 * tie of the long text, which may be none of v's): for those, printf is
 * asked for "%.Ng" itself. The text is then laid out as C's %g does (C17
 * 7.21.6.1: style e when the exponent X < -4 or X >= N, trailing zeros
 * and a bare point removed). */
#define G_DIGITS 25

typedef struct g_digits {
    double v;
    char d[G_DIGITS];
    int exp10; /* v = d[0].d[1]d[2]... x 10^exp10 */
} g_digits;

static void g_digits_of(double v, g_digits *t)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    /* "d.ddd...de+XX", G_DIGITS digits; the point is the locale's, which is
     * skipped. strfromd: printf's conversion without its format machinery. */
    strfromd(buf, sizeof buf, "%.24e", v);
    t->v = v;
    const char *p = buf;
    for (int i = 0; i < G_DIGITS; p++)
        if (g_ascii_isdigit(*p))
            t->d[i++] = *p;
    t->exp10 = atoi(strchr(buf, 'e') + 1);
}

/* t's digits rounded to n (n < G_DIGITS - 6) into r[0..n-1], the exponent
 * of the rounded value into *x, and a lower bound on how far that lies
 * from v in units of its last digit into *err_units; false when the digits
 * after the nth read "5" then zeros (see above). */
static bool g_round(const g_digits *t, int n, char *r, int *x, double *err_units)
{
    bool tie = t->d[n] == '5';
    for (int i = n + 1; tie && i < G_DIGITS; i++)
        tie = t->d[i] == '0';
    if (tie)
        return false;
    int tail6 = 0; /* d[n]...d[n+5] */
    for (int i = n; i < n + 6; i++)
        tail6 = tail6 * 10 + (t->d[i] - '0');
    double tail = tail6 * 1e-6; /* 0.d[n]d[n+1]..., to six digits */
    bool up = t->d[n] >= '5';
    *err_units = up ? 1 - tail - 1e-6 : tail - 1e-6;
    memcpy(r, t->d, (size_t)n);
    *x = t->exp10;
    if (up) {
        int i = n - 1;
        while (i >= 0 && r[i] == '9')
            r[i--] = '0';
        if (i < 0) {
            r[0] = '1';
            (*x)++;
        } else {
            r[i]++;
        }
    }
    return true;
}

/* C's "%.Ng" of n rounded digits r with exponent x, into buf (32 bytes). */
static void g_layout(const char *r, int n, int x, char *buf)
{
    int len = n;
    while (len > 1 && r[len - 1] == '0')
        len--;
    char *p = buf;
    if (x < -4 || x >= n) {
        *p++ = r[0];
        if (len > 1) {
            *p++ = '.';
            memcpy(p, r + 1, (size_t)len - 1);
            p += len - 1;
        }
        g_snprintf(p, 8, "e%c%02d", x < 0 ? '-' : '+', abs(x));
        return;
    }
    if (x >= 0) {
        for (int i = 0; i <= x; i++)
            *p++ = i < len ? r[i] : '0';
        if (len > x + 1)
            *p++ = '.';
        for (int i = x + 1; i < len; i++)
            *p++ = r[i];
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -x - 1; i++)
            *p++ = '0';
        memcpy(p, r, (size_t)len);
        p += len;
    }
    *p = '\0';
}

/* Whether a text n digits long, err_units of its last digit from v, may
 * parse back to `seconds` (strata_parse_time: the decimal rounded to its
 * nearest double, then divided by the scale). The three roundings between
 * the text and `seconds` (of the text, of the quotient, of v = seconds x
 * scale) move a value by at most 3 x 2^-53 of it, so a text further than
 * 4e-16 of v from v cannot; the others are parsed (number_value, like
 * g_ascii_strtod, gives the nearest double). */
static bool may_round_trip(const g_digits *t, int n, double err_units)
{
    static const double pow10_neg[] = {1,     1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,
                                       1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16};
    if (t->v < 1e-290) /* subnormal or nearly: the relative bound does not hold */
        return true;
    double mantissa_hi = (t->d[0] - '0') + ((t->d[1] - '0') + 1) / 10.0;
    return err_units * pow10_neg[n - 1] / mantissa_hi <= 4e-16;
}

/* 10^e: the nearest double, from a table over -40..40 (the exponents a
 * time of 1e-13 to 1e9 s needs), else pow(). */
static double pow10_of(int e)
{
    static const double p10[] = {
        1e-40, 1e-39, 1e-38, 1e-37, 1e-36, 1e-35, 1e-34, 1e-33, 1e-32, 1e-31, 1e-30, 1e-29, 1e-28, 1e-27,
        1e-26, 1e-25, 1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17, 1e-16, 1e-15, 1e-14, 1e-13,
        1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4,
        1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21,
        1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37,
        1e38, 1e39, 1e40};
    return e >= -40 && e <= 40 ? p10[e + 40] : pow(10, e);
}

/* How far v's digits after the nth lie from the n-digit text, in units of
 * its last digit: 0.d[n]d[n+1]... rounding down, 1 less that rounding up
 * (its digits complemented, so that no cancellation loses them), to about
 * 16 significant digits (the digits past G_DIGITS are not known: about
 * 1e-8 of v's spacing). */
static double tail_units(const g_digits *t, int n, bool up)
{
    uint64_t digits = 0; /* the first 17 significant ones, as an integer */
    int read = 0, significant = 0;
    for (int i = n; i < G_DIGITS && significant < 17; i++, read++) {
        int d = up ? 9 - (t->d[i] - '0') : t->d[i] - '0';
        digits = digits * 10 + (uint64_t)d;
        significant += significant || d;
    }
    return ((double)digits + (up ? 1 : 0)) * pow10_of(-read); /* 0.999...9 + one unit of the last digit read is 1 */
}

/* The double nearest the n-digit text of v (rounded up or down), found
 * from v without parsing the text: v itself or the k-th double from v that
 * way, k the distance in v's spacings, rounded. False when the digits
 * cannot tell (within 1e-3 of a spacing from halfway between two doubles,
 * a spacing not even over the doubles passed, v out of the normal range);
 * the caller parses the text then. */
static bool nearest_double(const g_digits *t, int n, bool up, double *w)
{
    if (t->v < 1e-290 || t->v > 1e300)
        return false;
    double dir = up ? INFINITY : 0;
    double step = fabs(nextafter(t->v, dir) - t->v);
    double m = tail_units(t, n, up) * pow10_of(t->exp10 - n + 1) / step; /* spacings from v */
    double k = floor(m + 0.5);
    if (fabs(m - (k - 0.5)) < 1e-3 || fabs(m - (k + 0.5)) < 1e-3 || k > 8)
        return false;
    double at = t->v;
    for (int i = 0; i < (int)k; i++) {
        double next = nextafter(at, dir);
        if (fabs(next - at) != step)
            return false;
        at = next;
    }
    if (fabs(nextafter(at, dir) - at) != step) /* the far half of at's interval */
        return false;
    *w = at;
    return true;
}

/* Shortest "%.Ng" text of seconds x scale (N = 1..17) whose time parse
 * with the unit of `scale` gives exactly `seconds`, into buf (32 bytes);
 * false when none does. (Fewer digits is not always shorter: "2.5e+02" is
 * longer than "250".) */
static bool shortest_time_text(double seconds, double scale, char *buf)
{
    double v = seconds * scale;
    if (!isfinite(v))
        return false;
    g_digits t;
    g_digits_of(v, &t);
    bool found = false;
    size_t best_len = 0;
    for (int digits = 1; digits <= 17; digits++) {
        char text[32], r[G_DIGITS];
        int x = 0;
        double err_units = 0, w = 0;
        bool known = false; /* w is the text's double */
        if (digits <= 13 && t.d[digits] != '0' && t.d[digits] != '9' && t.v >= 1e-290)
            continue; /* at least 0.1 of a last digit off: may_round_trip's bound, without the tail */
        if (g_round(&t, digits, r, &x, &err_units)) {
            if (!may_round_trip(&t, digits, err_units))
                continue;
            g_layout(r, digits, x, text);
            known = nearest_double(&t, digits, t.d[digits] >= '5', &w);
        } else { /* a tie of the long text: printf rounds v itself */
            char fmt[8];
            g_snprintf(fmt, sizeof fmt, "%%.%dg", digits);
            g_ascii_formatd(text, sizeof text, fmt, v);
        }
        size_t len = strlen(text);
        if ((!found || len < best_len) && (known ? w : g_ascii_strtod(text, NULL)) / scale == seconds) {
            memcpy(buf, text, len + 1);
            best_len = len;
            found = true;
            if (strchr(text, 'e') == NULL)
                break; /* more digits without an exponent are never shorter */
        }
    }
    return found;
}

char *strata_format_time_exact(double seconds)
{
    if (seconds == 0)
        return g_strdup("0");
    if (!isfinite(seconds) || seconds < 0) /* not a parseable time: best effort */
        return g_strdup_printf("%gs", seconds);
    /* Largest unit first, so that ties go to "67.108864ms" over "67108864ns". */
    char best[40] = "";
    size_t best_len = 0;
    for (size_t i = G_N_ELEMENTS(time_units) - 1; i-- > 0;) {
        const unit_def *u = &time_units[i];
        char number[32];
        if (shortest_time_text(seconds, u->scale, number)) {
            size_t len = strlen(number) + strlen(u->name);
            if (best_len == 0 || len < best_len) {
                g_snprintf(best, sizeof best, "%s%s", number, u->name);
                best_len = len;
            }
        }
    }
    if (best_len == 0) { /* cannot happen for finite positive doubles: %.17g in s */
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(buf, sizeof buf, "%.17g", seconds);
        return g_strconcat(buf, "s", NULL);
    }
    return g_strdup(best);
}

static char *format_decimal(double v, const char *const *prefixes, size_t n, const char *unit,
                            const char *fmt)
{
    size_t i = 0;
    double mag = fabs(v);
    while (mag >= 1000.0 && i + 1 < n) {
        mag /= 1000.0;
        v /= 1000.0;
        i++;
    }
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, fabs(v) < 1e15 ? fmt : "%.3e", v);
    return g_strdup_printf("%s %s%s", buf, prefixes[i], unit);
}

char *strata_format_bandwidth(double bytes_per_s)
{
    static const char *const prefixes[] = {"", "K", "M", "G", "T", "P"};
    return format_decimal(bytes_per_s, prefixes, G_N_ELEMENTS(prefixes), "B/s", "%.2f");
}

void strata_format_bandwidth_pair(double a, double b, char **sa, char **sb)
{
    static const char *const prefixes[] = {"", "K", "M", "G", "T", "P"};
    *sa = strata_format_bandwidth(a);
    *sb = strata_format_bandwidth(b);
    /* more decimals while unequal values print alike: 17 of a prefix's 1 to 999.9 reach a double's 2^-52 */
    for (int digits = 3; a != b && strcmp(*sa, *sb) == 0 && digits <= 17; digits++) {
        char fmt[8];
        g_snprintf(fmt, sizeof fmt, "%%.%df", digits);
        g_free(*sa);
        g_free(*sb);
        *sa = format_decimal(a, prefixes, G_N_ELEMENTS(prefixes), "B/s", fmt);
        *sb = format_decimal(b, prefixes, G_N_ELEMENTS(prefixes), "B/s", fmt);
    }
}

char *strata_format_flop_rate(double flops_per_s)
{
    static const char *const prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
    return format_decimal(flops_per_s, prefixes, G_N_ELEMENTS(prefixes), "FLOP/s", "%.1f");
}
