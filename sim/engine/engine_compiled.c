/*
 * engine_compiled.c: a compiled trace's file (engine_compiled.h), and
 * engine.h's strata_engine_compile() and strata_engine_is_compiled()
 * (strata_engine_run_compiled() is engine.c's, beside the run it shares).
 *
 * Writing builds the whole file in memory (its tape is most of it) and
 * writes it at once; reading takes the whole file, tests its length and
 * its check before anything is parsed, then parses it through a cursor
 * that refuses to read past the end (a count that the bytes cannot hold
 * is refused as damage, never allocated).
 */
#include "engine/engine_internal.h"
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "engine/engine_tape_internal.h"

engine_compiled *engine_compiled_new(void)
{
    engine_compiled *c = g_new0(engine_compiled, 1);
    c->options = g_ptr_array_new_with_free_func(g_free);
    c->streams = g_ptr_array_new_with_free_func(g_free);
    c->stream_devices = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    c->routes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return c;
}

void engine_compiled_free(engine_compiled *c)
{
    if (!c)
        return;
    g_free(c->path);
    g_free(c->hw_fingerprint);
    g_free(c->hw_name);
    g_free(c->origin);
    g_ptr_array_free(c->options, TRUE);
    g_ptr_array_free(c->streams, TRUE);
    g_array_free(c->stream_devices, TRUE);
    g_array_free(c->routes, TRUE);
    engine_tape_free(c->tape);
    g_free(c);
}

/* The check: each 8-byte word (the last padded with zeros) mixed in by a
 * multiply and a rotation, about a cycle a byte, so that replaying a
 * compiled trace does not pay a cryptographic hash per byte of its tape.
 * It catches truncation and damage, not a forged file. */
uint64_t engine_compiled_check(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = ((h ^ w) * 0xff51afd7ed558ccdu);
        h = (h << 29) | (h >> 35);
    }
    uint64_t w = 0;
    memcpy(&w, p + i, n - i);
    h = ((h ^ w) * 0xff51afd7ed558ccdu);
    return h ^ (h >> 33);
}

/* The tape's format: a digest (SHA-256, hex; g_free) of
 * ENGINE_TAPE_FORMAT, the fast form's flags and the field table's text
 * (TAPE_FIELDS, stringified: a change of a field, its codec, its
 * expectation or its fast kinds changes the digest by itself). Two strata
 * builds whose digests agree write and read the same bytes for the same
 * ops. */
#define TAPE_TEXT_(...) #__VA_ARGS__
#define TAPE_TEXT(...) TAPE_TEXT_(__VA_ARGS__)
#define FIELD_TEXT(id, codec, f, aux, expect, fast) id codec f aux expect fast;
static char *tape_format(void)
{
    static const char table[] = TAPE_TEXT(TAPE_FIELDS(FIELD_TEXT));
    char *text = g_strdup_printf("tape %d fast %x/%x/%x/%x/%x %s", ENGINE_TAPE_FORMAT, FAST, FAST_NAME, FAST_FLOPS,
                                 FAST_TIME, FAST_SKIP, table);
    char *sum = g_compute_checksum_for_string(G_CHECKSUM_SHA256, text, -1);
    g_free(text);
    return sum;
}
#undef FIELD_TEXT

/* Appends the bytes of each of t's chunks to out, in order (their
 * concatenation replays as the tape does: no op spans two chunks). False
 * when t cannot be read whole (part of it spilled, or replay begun). */
static bool tape_append(const engine_tape *t, GByteArray *out)
{
    if (t->n_spilled > 0 || t->at || t->pos > 0)
        return false;
    for (const tape_chunk *c = t->head; c; c = c->next)
        g_byte_array_append(out, c->data, (guint)c->used);
    return true;
}

/* A tape of the n bytes at p (a tape's concatenated chunks) in one chunk of
 * its own, for replay only. */
static engine_tape *tape_of_bytes(const uint8_t *p, size_t n)
{
    engine_tape *t = engine_tape_new_sized(SIZE_MAX, ENGINE_TAPE_CHUNK, NULL);
    if (n == 0)
        return t; /* no op: replays none */
    tape_chunk *c = g_malloc(sizeof(tape_chunk) + n); /* no pool: engine_tape_free() frees it */
    *c = (tape_chunk){.next = NULL, .used = n, .cap = n};
    memcpy(c->data, p, n);
    t->head = t->tail = c;
    t->bytes = sizeof(tape_chunk) + n;
    return t;
}

static void put_u64(GByteArray *out, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    g_byte_array_append(out, b, 8);
}

static void put_text(GByteArray *out, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put_u64(out, n);
    g_byte_array_append(out, (const guint8 *)(s ? s : ""), (guint)n);
}

bool engine_compiled_is(const char *path)
{
    if (!path || strcmp(path, "-") == 0 || !g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return false;
    FILE *f = g_fopen(path, "rb");
    if (!f)
        return false;
    char magic[8];
    bool is = fread(magic, 1, 8, f) == 8 && memcmp(magic, ENGINE_COMPILED_MAGIC, 8) == 0;
    fclose(f);
    return is;
}

bool engine_compiled_write(const engine_compiled *c, const char *path, FILE *stream, GError **err)
{
    GByteArray *out = g_byte_array_new();
    g_byte_array_append(out, (const guint8 *)ENGINE_COMPILED_MAGIC, 8);
    char *format = tape_format();
    put_text(out, ENGINE_COMPILED_VERSION);
    put_text(out, STRATA_VERSION);
    put_text(out, format);
    g_free(format);
    put_text(out, c->hw_fingerprint);
    put_text(out, c->hw_name);
    put_text(out, c->origin);
    put_u64(out, c->n_ops);
    put_u64(out, c->n_events);
    put_u64(out, c->options->len / 2);
    for (guint i = 0; i < c->options->len; i++)
        put_text(out, g_ptr_array_index(c->options, i));
    put_u64(out, c->streams->len);
    for (guint i = 0; i < c->streams->len; i++) {
        put_text(out, g_ptr_array_index(c->streams, i));
        put_u64(out, g_array_index(c->stream_devices, uint32_t, i));
    }
    put_u64(out, c->routes->len / 2);
    for (guint i = 0; i < c->routes->len; i++)
        put_u64(out, g_array_index(c->routes, uint32_t, i));
    guint at = out->len;
    put_u64(out, 0); /* the tape's length, once known */
    if (!tape_append(c->tape, out)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s: the first pass's tape could not be read whole",
                    path);
        g_byte_array_unref(out);
        return false;
    }
    uint64_t tape_len = out->len - at - 8;
    for (int i = 0; i < 8; i++)
        out->data[at + i] = (uint8_t)(tape_len >> (8 * i));
    put_u64(out, engine_compiled_check(out->data, out->len));
    bool ok = fwrite(out->data, 1, out->len, stream) == out->len && fflush(stream) == 0;
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot write the compiled trace: %s", path,
                    g_strerror(errno));
    g_byte_array_unref(out);
    return ok;
}

/* A bounded reader over the file's bytes. */
typedef struct cursor {
    const uint8_t *p, *end;
    bool ok;
} cursor;

static uint64_t get_u64(cursor *cu)
{
    if (!cu->ok || cu->end - cu->p < 8) {
        cu->ok = false;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)cu->p[i] << (8 * i);
    cu->p += 8;
    return v;
}

/* A text (g_free), NULL past the end. */
static char *get_text(cursor *cu)
{
    uint64_t n = get_u64(cu);
    if (!cu->ok || n > (uint64_t)(cu->end - cu->p) || memchr(cu->p, 0, n)) {
        cu->ok = false;
        return NULL;
    }
    char *s = g_strndup((const char *)cu->p, n);
    cu->p += n;
    return s;
}

/* A count of items of at least `each` bytes that the rest can hold. */
static uint64_t get_count(cursor *cu, size_t each)
{
    uint64_t n = get_u64(cu);
    if (cu->ok && n > (uint64_t)(cu->end - cu->p) / each)
        cu->ok = false;
    return cu->ok ? n : 0;
}

static engine_compiled *damaged(engine_compiled *c, const char *path, const char *what, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s: a damaged compiled trace (%s); compile it again (strata run --compile-to)", path, what);
    engine_compiled_free(c);
    return NULL;
}

engine_compiled *engine_compiled_read(const char *path, const char *hw_fingerprint, const char *hw_name,
                                      GError **err)
{
    char *data = NULL;
    gsize len = 0;
    GError *local = NULL;
    if (!g_file_get_contents(path, &data, &len, &local)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s", path, local->message);
        g_error_free(local);
        return NULL;
    }
    engine_compiled *c = engine_compiled_new();
    c->path = g_strdup(path);
    const uint8_t *bytes = (const uint8_t *)data;
    if (len < 8 || memcmp(bytes, ENGINE_COMPILED_MAGIC, 8) != 0) {
        g_free(data);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: not a compiled trace (expected it to begin with "
                    "strata's magic bytes, as `strata run --compile-to` writes)", path);
        engine_compiled_free(c);
        return NULL;
    }
    if (len < 16) { /* its magic, cut short */
        g_free(data);
        return damaged(c, path, "truncated: no room for its check after the magic bytes", err);
    }
    cursor cu = {bytes + 8, bytes + len - 8, true};
    uint64_t check = 0;
    for (int i = 0; i < 8; i++)
        check |= (uint64_t)bytes[len - 8 + i] << (8 * i);
    if (check != engine_compiled_check(bytes, len - 8)) {
        g_free(data);
        return damaged(c, path, "truncated, or its bytes changed: its check does not match", err);
    }
    char *version = get_text(&cu), *strata = get_text(&cu), *format = get_text(&cu);
    char *ours = tape_format();
    bool same = cu.ok && strcmp(version, ENGINE_COMPILED_VERSION) == 0 && strcmp(strata, STRATA_VERSION) == 0 &&
                strcmp(format, ours) == 0;
    if (cu.ok && !same)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: compiled by another strata (%s, strata %s, tape format %.12s; this is %s, strata %s, tape "
                    "format %.12s): compile it again (strata run --compile-to)",
                    path, version, strata, format, ENGINE_COMPILED_VERSION, STRATA_VERSION, ours);
    g_free(version);
    g_free(strata);
    g_free(format);
    g_free(ours);
    if (cu.ok && !same) {
        g_free(data);
        engine_compiled_free(c);
        return NULL;
    }
    c->hw_fingerprint = get_text(&cu);
    c->hw_name = get_text(&cu);
    if (cu.ok && strcmp(c->hw_fingerprint, hw_fingerprint ? hw_fingerprint : "") != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: compiled for another hardware model ('%s', fingerprint %.12s), not this one ('%s', "
                    "fingerprint %.12s): --hw and every --set must be those it was compiled with; compile it again "
                    "for this model (strata run --compile-to)",
                    path, c->hw_name, c->hw_fingerprint, hw_name ? hw_name : "", hw_fingerprint ? hw_fingerprint : "");
        g_free(data);
        engine_compiled_free(c);
        return NULL;
    }
    c->origin = get_text(&cu);
    c->n_ops = get_u64(&cu);
    uint64_t n_events = get_u64(&cu);
    c->n_events = (uint32_t)n_events;
    cu.ok = cu.ok && n_events <= UINT32_MAX;
    for (uint64_t i = 0, n = get_count(&cu, 16); cu.ok && i < 2 * n; i++)
        g_ptr_array_add(c->options, get_text(&cu));
    for (uint64_t i = 0, n = get_count(&cu, 16); cu.ok && i < n; i++) {
        g_ptr_array_add(c->streams, get_text(&cu));
        uint64_t d = get_u64(&cu);
        uint32_t device = (uint32_t)d;
        cu.ok = cu.ok && d <= UINT32_MAX;
        g_array_append_val(c->stream_devices, device);
    }
    for (uint64_t i = 0, n = get_count(&cu, 16); cu.ok && i < 2 * n; i++) {
        uint64_t m = get_u64(&cu);
        uint32_t memory = (uint32_t)m;
        cu.ok = cu.ok && m <= UINT32_MAX;
        g_array_append_val(c->routes, memory);
    }
    uint64_t tape_len = get_u64(&cu);
    if (!cu.ok || tape_len != (uint64_t)(cu.end - cu.p)) {
        g_free(data);
        return damaged(c, path, "its parts do not add up to its length", err);
    }
    c->tape = tape_of_bytes(cu.p, (size_t)tape_len);
    g_free(data);
    return c;
}

bool strata_engine_is_compiled(const char *path)
{
    return engine_compiled_is(path);
}

/* A memory whose allocator plans from the trace's lifetimes (which a
 * compiled trace does not hold): refused, naming it. */
static bool no_planning(const engine_memories *ms, const char *origin, GError **err)
{
    for (uint32_t m = 0; m < ms->n; m++)
        if (strata_placement_needs_plan(ms->mem[m].place)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: cannot be compiled: the %s allocator of memory '%s' plans from the trace's lifetimes, "
                        "which a compiled trace does not hold (use another allocator)",
                        origin, strata_allocator_name(strata_placement_allocator(ms->mem[m].place)),
                        ms->mem[m].spec->name);
            return false;
        }
    return true;
}

bool strata_engine_compile(const strata_hw *hw, strata_source *src, const strata_engine_options *opt,
                           const char *path, FILE *stream, GError **err)
{
    strata_engine_options defaults;
    if (!opt) {
        strata_engine_options_init(&defaults);
        opt = &defaults;
    }
    if (strata_spmd_is_expansion(src)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: cannot be compiled: a program on several devices (the model has %u) is expanded per device "
                    "as it runs, which a compiled trace does not hold; run the text trace",
                    strata_source_origin(src), strata_hw_devices(hw));
        return false;
    }
    if (!strata_hw_fingerprint(hw)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "the hardware model has no fingerprint");
        return false;
    }
    engine_memories ms = {0};
    if (!engine_memories_init(&ms, hw, opt->allocator, opt->check_allocators, err))
        return false;
    bool ok = no_planning(&ms, strata_source_origin(src), err);
    /* labels kept (a run with a timeline needs them), the tape whole in
     * memory (tape_memory 0: no spill) */
    engine_feed *f = ok ? engine_feed_new(hw, src, &ms, NULL, true,
                                          opt->tape_budget ? opt->tape_budget : STRATA_ENGINE_TAPE_BUDGET, 0,
                                          STRATA_ENGINE_QUEUE_MEMORY, NULL, err)
                        : NULL;
    engine_compiled *c = f ? engine_feed_compiled(f, err) : NULL;
    ok = c && engine_compiled_write(c, path, stream, err);
    if (c)
        c->tape = NULL; /* f's */
    engine_compiled_free(c);
    engine_feed_free(f);
    engine_memories_clear(&ms);
    return ok;
}
