/*
 * xla_liverange.c: the HloLiveRange reader (contract in xla_liverange.h).
 *
 * Design: a state machine over the section headers; ranges are kept in a
 * hash table from key to a packed (start, end) pair.
 */
#include "import/xla_liverange.h"
#include <stdarg.h>
#include <string.h>
#include "core/error.h"
#include "import/xla_text.h"

typedef enum { LR_NONE, LR_HEADER, LR_SEQUENCE, LR_RANGES, LR_PEAK, LR_TRAILER } lr_state;

typedef struct lr_range {
    uint64_t start, end;
} lr_range;

struct xla_liverange {
    lr_state state;
    uint64_t max;
    GPtrArray *sequence;     /* instruction names */
    GHashTable *ranges;      /* key (owned) -> lr_range (owned) */
    bool has_peak, peak_by_value;
    uint64_t peak_time, peak_bytes;
};

xla_liverange *xla_liverange_new(void)
{
    xla_liverange *lr = g_new0(xla_liverange, 1);
    lr->sequence = g_ptr_array_new_with_free_func(g_free);
    lr->ranges = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return lr;
}

void xla_liverange_free(xla_liverange *lr)
{
    if (lr == NULL)
        return;
    g_ptr_array_free(lr->sequence, TRUE);
    g_hash_table_destroy(lr->ranges);
    g_free(lr);
}

bool xla_liverange_started(const xla_liverange *lr)
{
    return lr->state != LR_NONE;
}

static bool bad(const char *file, uint64_t lineno, const char *line, const char *expected, GError **err)
{
    return xla_fail_line(err, file, lineno, line, expected);
}

/* `    I:NAME` */
static bool sequence_line(xla_liverange *lr, const char *file, const char *line, uint64_t lineno,
                          GError **err)
{
    const char *s = line + 4;
    uint64_t i;
    if (!xla_parse_u64(&s, &i) || *s != ':' || s[1] == '\0')
        return bad(file, lineno, line, "'    I:NAME' (an instruction of the sequence)", err);
    if (i != lr->sequence->len)
        return strata_fail_at(err, file, lineno, "expected instruction %u of the sequence, got %" G_GUINT64_FORMAT,
                        lr->sequence->len, i);
    g_ptr_array_add(lr->sequence, g_strdup(s + 1));
    return true;
}

/* `    NAME{INDEX}:START-END`, split at the last ':' (an index may hold commas). */
static bool range_line(xla_liverange *lr, const char *file, const char *line, uint64_t lineno,
                       GError **err)
{
    const char *colon = strrchr(line, ':');
    lr_range r;
    const char *s = colon ? colon + 1 : NULL;
    if (colon == NULL || colon == line + 4 || colon[-1] != '}' || !xla_parse_u64(&s, &r.start) ||
        *s++ != '-' || !xla_parse_u64(&s, &r.end) || *s != '\0')
        return bad(file, lineno, line, "'    NAME{INDEX}:START-END' (a buffer live range)", err);
    if (r.start > r.end || r.end > lr->max)
        return strata_fail_at(err, file, lineno,
                        "expected START <= END <= %" G_GUINT64_FORMAT " (the max), got %" G_GUINT64_FORMAT
                        "-%" G_GUINT64_FORMAT, lr->max, r.start, r.end);
    char *key = g_strndup(line + 4, (gsize)(colon - (line + 4)));
    if (g_hash_table_contains(lr->ranges, key)) {
        g_free(key);
        return strata_fail_at(err, file, lineno, "expected one live range per value, got a second one");
    }
    g_hash_table_insert(lr->ranges, key, g_memdup2(&r, sizeof r));
    return true;
}

/* `    KEY: N bytes` or `    KEY: N bytes (cumulative: C bytes)` (KEY: NAME or NAME{INDEX}) */
static bool peak_line(xla_liverange *lr, const char *file, const char *line, uint64_t lineno,
                      GError **err)
{
    const char *sep = strstr(line + 4, ": ");
    const char *s = sep ? sep + 2 : NULL;
    uint64_t bytes;
    if (sep == NULL || !xla_parse_u64(&s, &bytes) || !xla_skip(s, " bytes", &s) ||
        !(*s == '\0' || xla_skip(s, " (cumulative: ", NULL)))
        return bad(file, lineno, line, "'    NAME: N bytes' (a value live at the peak)", err);
    /* NAME{INDEX} (a value: HloValue's instruction name and shape index,
     * jaxlib 0.6.0 on) rather than NAME (its instruction, before) */
    if (*s != '\0' || sep[-1] == '}')
        lr->peak_by_value = true;
    if (bytes > XLA_MAX_COUNT - lr->peak_bytes)
        return strata_fail_at(err, file, lineno, "expected the values live at the peak to total at most 2^63 bytes");
    lr->peak_bytes += bytes;
    return true;
}

static bool header_line(xla_liverange *lr, const char *file, const char *line, uint64_t lineno,
                        GError **err)
{
    const char *s = line + strlen("HloLiveRange (max ");
    if (!xla_parse_u64(&s, &lr->max) || strcmp(s, "):") != 0)
        return bad(file, lineno, line, "'HloLiveRange (max T):'", err);
    if (lr->max > XLA_MAX_COUNT)
        return strata_fail_at(err, file, lineno, "expected a schedule end T of at most 2^63, got %" G_GUINT64_FORMAT, lr->max);
    lr->state = LR_HEADER;
    return true;
}

bool xla_liverange_feed(xla_liverange *lr, const char *file, const char *line, uint64_t lineno,
                        GError **err)
{
    if (line[0] == '\0' || lr->state == LR_TRAILER)
        return true;
    if (lr->state == LR_NONE) {
        if (xla_skip(line, "HloLiveRange (max ", NULL))
            return header_line(lr, file, line, lineno, err);
        return bad(file, lineno, line, "'HloLiveRange (max T):'", err);
    }
    if (strcmp(line, "  InstructionSequence:") == 0 && lr->state == LR_HEADER) {
        lr->state = LR_SEQUENCE;
        return true;
    }
    if (strcmp(line, "  BufferLiveRange:") == 0 && lr->state == LR_SEQUENCE) {
        lr->state = LR_RANGES;
        return true;
    }
    const char *s;
    if (xla_skip(line, "  Live ranges at ", &s) && lr->state == LR_RANGES) {
        if (!xla_parse_u64(&s, &lr->peak_time) || strcmp(s, " (peak):") != 0)
            return bad(file, lineno, line, "'  Live ranges at T (peak):'", err);
        lr->has_peak = true;
        lr->state = LR_PEAK;
        return true;
    }
    if (xla_skip(line, "  Stack trace breakdown", NULL) && lr->state == LR_PEAK) {
        lr->state = LR_TRAILER;
        return true;
    }
    if (xla_skip(line, "    ", NULL) && line[4] != ' ') {
        if (lr->state == LR_SEQUENCE)
            return sequence_line(lr, file, line, lineno, err);
        if (lr->state == LR_RANGES)
            return range_line(lr, file, line, lineno, err);
        if (lr->state == LR_PEAK)
            return peak_line(lr, file, line, lineno, err);
    }
    return bad(file, lineno, line,
               lr->state == LR_HEADER    ? "'  InstructionSequence:'"
               : lr->state == LR_SEQUENCE ? "'    I:NAME' or '  BufferLiveRange:'"
               : lr->state == LR_RANGES   ? "'    NAME{INDEX}:START-END' or '  Live ranges at T (peak):'"
                                          : "'    NAME: N bytes' or '  Stack trace breakdown ...'",
               err);
}

static bool fail_file(GError **err, const char *file, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static bool fail_file(GError **err, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s", file, msg);
    g_free(msg);
    return false;
}

bool xla_liverange_finish(const xla_liverange *lr, const char *file, GError **err)
{
    if (lr->state == LR_HEADER || lr->state == LR_SEQUENCE)
        return fail_file(err, file,
                         "expected '  BufferLiveRange:' after the instruction sequence, found the end of the file "
                         "(a truncated dump?)");
    if (lr->state != LR_NONE && lr->sequence->len > lr->max)
        return fail_file(err, file, "expected at most %" G_GUINT64_FORMAT " instructions (the max), got %u",
                         lr->max, lr->sequence->len);
    return true;
}

uint64_t xla_liverange_max(const xla_liverange *lr)
{
    return lr->max;
}

uint64_t xla_liverange_n_instructions(const xla_liverange *lr)
{
    return lr->sequence->len;
}

const char *xla_liverange_instruction(const xla_liverange *lr, uint64_t i)
{
    return g_ptr_array_index(lr->sequence, (guint)i);
}

bool xla_liverange_lookup(const xla_liverange *lr, const char *key, uint64_t *start, uint64_t *end)
{
    const lr_range *r = g_hash_table_lookup(lr->ranges, key);
    if (r == NULL)
        return false;
    *start = r->start;
    *end = r->end;
    return true;
}

bool xla_liverange_peak(const xla_liverange *lr, uint64_t *time, uint64_t *bytes)
{
    *time = lr->peak_time;
    *bytes = lr->peak_bytes;
    return lr->has_peak;
}

bool xla_liverange_peak_by_value(const xla_liverange *lr)
{
    return lr->peak_by_value;
}

void xla_liverange_foreach(const xla_liverange *lr, xla_liverange_fn fn, void *user)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, lr->ranges);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        const lr_range *r = value;
        fn(user, key, r->start, r->end);
    }
}
