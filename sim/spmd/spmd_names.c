/*
 * spmd_names.c: the SPMD expansion's names and their labels (contract in
 * spmd_names.h).
 */
#include "spmd/spmd_names.h"
#include <string.h>
#include "core/units.h"
#include "hw/hw.h"

#define RESERVED '~' /* in the expansion's own names only */

/* into = the concatenation of the n pieces parts[i] of lens[i] bytes, in
 * one resize: the names are made several times per op handed out, where
 * a printf-family call, then a GString append per piece, cost a third and
 * then a twelfth of a collective-heavy run's instructions (callgrind,
 * issue 40's chain of all-reduces). */
static void set_pieces(GString *into, const char *const *parts, const size_t *lens, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += lens[i];
    g_string_set_size(into, total);
    char *p = into->str;
    for (size_t i = 0; i < n; i++) {
        memcpy(p, parts[i], lens[i]);
        p += lens[i];
    }
}

void strata_spmd_name(GString *into, const char *name, uint32_t device)
{
    char dev[STRATA_U64_DIGITS];
    const char *parts[] = {name, "@", dev};
    size_t lens[] = {strlen(name), 1, strata_format_u64(dev, device)};
    set_pieces(into, parts, lens, 3);
}

const char *const *strata_spmd_name_list(GPtrArray *strs, GPtrArray *ptrs, const char *const *names, uint32_t n,
                                         uint32_t device)
{
    if (n == 0)
        return NULL;
    while (strs->len < n)
        g_ptr_array_add(strs, g_string_new(NULL));
    g_ptr_array_set_size(ptrs, 0);
    for (uint32_t i = 0; i < n; i++) {
        GString *g = g_ptr_array_index(strs, i);
        strata_spmd_name(g, names[i], device);
        g_ptr_array_add(ptrs, g->str);
    }
    g_ptr_array_add(ptrs, NULL);
    return (const char *const *)ptrs->pdata;
}

void strata_spmd_lane_name(GString *into, const char *stream, uint32_t lane, const char *what, uint32_t device)
{
    char num[STRATA_U64_DIGITS], dev[STRATA_U64_DIGITS];
    static const char reserved[] = {RESERVED, 0};
    bool own = what || lane; /* S~whatL@D; lane 0's stream S@D */
    const char *parts[] = {stream, reserved, what ? what : "", num, "@", dev};
    size_t lens[] = {strlen(stream), own, what ? strlen(what) : 0, own ? strata_format_u64(num, lane) : 0, 1,
                     strata_format_u64(dev, device)};
    set_pieces(into, parts, lens, 6);
}

/* ---- labels: the inverse of the two above ------------------------------ */

/* A name "N@D" as made above: *len = strlen(N), *device = D; false when the
 * name does not end in '@' and a device number. */
static bool split_name(const char *name, size_t *len, uint32_t *device)
{
    const char *at = strrchr(name, '@');
    if (!at || !at[1])
        return false;
    uint64_t d = 0;
    for (const char *p = at + 1; *p; p++) {
        if (!g_ascii_isdigit(*p))
            return false;
        d = d * 10 + (uint64_t)(*p - '0');
        if (d > UINT32_MAX)
            return false;
    }
    *len = (size_t)(at - name);
    *device = (uint32_t)d;
    return true;
}

bool strata_spmd_rename(GString *into, const char *name, uint32_t device)
{
    size_t len = 0;
    uint32_t was = 0;
    if (!split_name(name, &len, &was))
        return false;
    char dev[STRATA_U64_DIGITS];
    const char *parts[] = {name, "@", dev};
    size_t lens[] = {len, 1, strata_format_u64(dev, device)};
    set_pieces(into, parts, lens, 3);
    return true;
}

static void expansion_label(const void *ctx, const char *name, strata_name_label *out)
{
    (void)ctx;
    size_t len = 0;
    uint32_t device = 0;
    if (!split_name(name, &len, &device)) {
        *out = (strata_name_label){g_strdup(name), g_strdup(""), g_strdup("")};
        return;
    }
    out->name = g_strndup(name, len);
    out->where = g_strdup_printf(" on device %u", device);
    const char *own = memchr(name, RESERVED, len); /* the expansion's own: the program's names hold none */
    if (!own) {
        out->detail = g_strdup("");
        return;
    }
    const char *what = strncmp(own + 1, STRATA_SPMD_RECV, strlen(STRATA_SPMD_RECV)) == 0
                           ? "a collective's receive buffer"
                       : strncmp(own + 1, STRATA_SPMD_ROUND, strlen(STRATA_SPMD_ROUND)) == 0
                           ? "a collective's round event"
                           : "a lane of a collective";
    out->detail = g_strdup_printf(" (%s on stream '%.*s')", what, (int)(own - name), name);
}

/* ---- what a program may not name --------------------------------------- */

/* A buffer, stream or event name of the program holding RESERVED, in a
 * program for several devices; a memory instance of a device past the count. */
static char *program_refuse(const void *ctx, const strata_op *op, uint32_t devices)
{
    (void)ctx;
    uint64_t site = 0;
    if ((op->kind == STRATA_OP_ALLOC || op->kind == STRATA_OP_RELEASE) && strata_hw_instance_site(op->memory, &site) &&
        site >= devices)
        return g_strdup_printf("expected a memory of a device 0..%u, got '%s'", devices - 1, op->memory);
    if (devices < 2)
        return NULL;
    const char *what = NULL, *name = NULL;
    if (op->stream && strchr(op->stream, RESERVED))
        what = "a stream", name = op->stream;
    else if (op->kind == STRATA_OP_ALLOC && strchr(op->name, RESERVED))
        what = "a buffer", name = op->name;
    else if (op->kind == STRATA_OP_RECORD && strchr(op->name, RESERVED))
        what = "an event", name = op->name;
    if (!what)
        return NULL;
    return g_strdup_printf("expected %s name without '%c' in a program for %u devices (the SPMD expansion names its "
                           "own buffers, events and lanes STREAM%c...), got '%s'",
                           what, RESERVED, devices, RESERVED, name);
}

const strata_namer strata_spmd_program_namer = {.label = NULL, .refuse = program_refuse, .ctx = NULL};
const strata_namer strata_spmd_expansion_namer = {.label = expansion_label, .refuse = NULL, .ctx = NULL,
                                                   .qualified = true};
