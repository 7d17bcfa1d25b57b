/*
 * kineto_scan.c: the streaming event scanner of kineto_scan.h.
 *
 * One pass over the bytes with a few integers of state: the nesting depth,
 * whether the scanner is inside a string (and after a backslash), the
 * depth whose elements are the events (0 until the events array is found,
 * and again once it closes, the scan reading on for a second traceEvents
 * key) and the last key read at depth 1. The text of the event being read is
 * the only thing that grows, up to STRATA_KINETO_MAX_EVENT.
 */
#include "import/kineto_scan.h"

#include <gio/gio.h>
#include <string.h>

#include "core/error.h"

#define CHUNK 65536
#define MAX_DEPTH 512
#define KEY_MAX 32

struct strata_kineto_scan {
    char *path;
    GInputStream *in;
    GSeekable *file;          /* the file under in (for the progress) */
    goffset file_size;
    strata_progress *progress; /* borrowed; NULL: none */
    char *progress_what, *progress_note;
    char *buf;                /* CHUNK + 1 bytes, not cleared: buf[len] is a NUL, a sentinel for strcspn */
    size_t len, pos;
    uint64_t line;
    int depth, events_depth;
    bool started, in_str, esc, done;
    bool events_read;         /* the events array closed: the scan reads on to the end of the top-level object */
    uint64_t events_key_line; /* the line of the first traceEvents key (0: none yet) */
    bool bom_seen;            /* the first chunk was looked at for a UTF-8 BOM */
    bool key_is_events;       /* the value being read at depth 1 is traceEvents' */
    char key[KEY_MAX + 1];    /* the last string read at depth 1 (truncated) */
    size_t key_len;
    GString *event;           /* the text of the event being read, or NULL */
    uint64_t event_line;
    JsonParser *parser;
};

/* The file's bytes, through a gzip decompressor when it starts with the
 * gzip magic; the first bytes are peeked, so a pipe works too. */
static GInputStream *open_stream(const char *path, GFileInputStream **file, GError **err)
{
    GFile *f = g_file_new_for_path(path);
    GFileInputStream *fin = g_file_read(f, NULL, err);
    g_object_unref(f);
    if (fin == NULL)
        return NULL;
    *file = g_object_ref(fin);
    GInputStream *buf = g_buffered_input_stream_new(G_INPUT_STREAM(fin));
    g_object_unref(fin);
    GBufferedInputStream *b = G_BUFFERED_INPUT_STREAM(buf);
    while (g_buffered_input_stream_get_available(b) < 2) {
        gssize n = g_buffered_input_stream_fill(b, 2, NULL, err);
        if (n < 0) {
            g_object_unref(buf);
            g_clear_object(file);
            return NULL;
        }
        if (n == 0)
            break;
    }
    guchar magic[2] = {0, 0};
    if (g_buffered_input_stream_peek(b, magic, 0, 2) < 2 || magic[0] != 0x1f || magic[1] != 0x8b)
        return buf;
    GZlibDecompressor *z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
    GInputStream *in = g_converter_input_stream_new(buf, G_CONVERTER(z));
    g_object_unref(z);
    g_object_unref(buf);
    return in;
}

strata_kineto_scan *strata_kineto_scan_open(const char *path, GError **err)
{
    GError *e = NULL;
    GFileInputStream *file = NULL;
    GInputStream *in = open_stream(path, &file, &e);
    if (in == NULL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: %s", path, e->message);
        g_error_free(e);
        return NULL;
    }
    strata_kineto_scan *s = g_new0(strata_kineto_scan, 1);
    s->path = g_strdup(path);
    s->in = in;
    s->file = G_SEEKABLE(file);
    GFileInfo *info = g_file_input_stream_query_info(file, G_FILE_ATTRIBUTE_STANDARD_SIZE, NULL, NULL);
    s->file_size = info ? g_file_info_get_size(info) : 0; /* 0: unknown (a pipe) */
    if (info)
        g_object_unref(info);
    s->buf = g_malloc(CHUNK + 1);
    s->buf[0] = '\0';
    s->line = 1;
    s->parser = json_parser_new();
    return s;
}

void strata_kineto_scan_free(strata_kineto_scan *s)
{
    if (s == NULL)
        return;
    g_object_unref(s->in);
    g_object_unref(s->file);
    g_object_unref(s->parser);
    g_free(s->progress_what);
    g_free(s->progress_note);
    if (s->event)
        g_string_free(s->event, TRUE);
    g_free(s->path);
    g_free(s->buf);
    g_free(s);
}

void strata_kineto_scan_set_progress(strata_kineto_scan *s, strata_progress *progress, const char *what,
                                     const char *note)
{
    s->progress = progress;
    g_free(s->progress_what);
    g_free(s->progress_note);
    s->progress_what = g_strdup(what);
    s->progress_note = g_strdup(note);
}

static bool fail(strata_kineto_scan *s, GError **err, const char *what)
{
    return strata_fail_at(err, s->path, s->line, "%s", what);
}

/* Refills the buffer: true with data, false at the end (err set on a read
 * error, such as a truncated or corrupt gzip stream). */
static bool refill(strata_kineto_scan *s, GError **err)
{
    GError *e = NULL;
    gssize n = g_input_stream_read(s->in, s->buf, CHUNK, NULL, &e);
    if (n < 0) {
        strata_fail_at(err, s->path, s->line, "%s", e->message);
        g_error_free(e);
        return false;
    }
    s->len = (size_t)n;
    s->pos = 0;
    s->buf[s->len] = '\0';
    if (s->progress) {
        goffset at = g_seekable_tell(s->file);
        strata_progress_count(s->progress, s->progress_what, at > 0 ? (uint64_t)at : 0,
                              s->file_size > 0 ? (uint64_t)s->file_size : 0, NULL, s->progress_note);
    }
    return n > 0;
}

/* Integer literals json-glib cannot hold (magnitude 2^63 or more) become
 * floats: json-glib would wrap them into int64 (2^63 reads as -2^63, so a
 * Bytes of 2^63 would read as a free), while a float that large is then
 * refused by the decoder, which takes whole numbers below 2^63 only. */
static void widen_big_integers(GString *t)
{
    /* most events have no run of 19 digits at all: found by libc's spans */
    bool long_run = false;
    for (const char *p = t->str + strcspn(t->str, "0123456789"); *p && !long_run; p += strcspn(p, "0123456789")) {
        size_t n = strspn(p, "0123456789");
        long_run = n >= 19;
        p += n;
    }
    if (!long_run)
        return;
    GString *out = NULL; /* the widened text, made at the first big literal */
    gsize copied = 0;    /* t->str[0 .. copied) is in out */
    bool in_str = false;
    for (gsize i = 0; i < t->len; i++) {
        char c = t->str[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (c == '"') {
            in_str = true;
            continue;
        }
        if (c != '-' && !g_ascii_isdigit(c))
            continue;
        gsize start = i + (c == '-'), end = start;
        while (end < t->len && g_ascii_isdigit(t->str[end]))
            end++;
        bool frac = end < t->len && (t->str[end] == '.' || t->str[end] == 'e' || t->str[end] == 'E');
        gsize n = end - start;
        if (!frac && (n > 19 || (n == 19 && memcmp(t->str + start, "9223372036854775807", 19) > 0))) {
            /* one copy of the text in all: an insert into t per literal
             * moved the rest of the event each time (quadratic in them) */
            if (out == NULL)
                out = g_string_sized_new(t->len + 16);
            g_string_append_len(out, t->str + copied, (gssize)(end - copied));
            g_string_append(out, ".0");
            copied = end;
        }
        i = end; /* past the literal (and its fraction, if any, on the next turns) */
        while (i < t->len && (g_ascii_isdigit(t->str[i]) || strchr(".eE+-", t->str[i])))
            i++;
        i--;
    }
    if (out == NULL)
        return;
    g_string_append_len(out, t->str + copied, (gssize)(t->len - copied));
    g_string_truncate(t, 0);
    g_string_append_len(t, out->str, (gssize)out->len);
    g_string_free(out, TRUE);
}

/* Parses the finished event text into *event. */
static bool finish_event(strata_kineto_scan *s, JsonObject **event, uint64_t *line, GError **err)
{
    widen_big_integers(s->event);
    GError *e = NULL;
    bool ok = json_parser_load_from_data(s->parser, s->event->str, (gssize)s->event->len, &e);
    g_string_free(s->event, TRUE);
    s->event = NULL;
    if (!ok) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": not a JSON event: %s", s->path, s->event_line,
                    e->message);
        g_error_free(e);
        return false;
    }
    *event = json_node_get_object(json_parser_get_root(s->parser));
    *line = s->event_line;
    return true;
}

/* An opening bracket; false with err. */
static bool open_bracket(strata_kineto_scan *s, char c, GError **err)
{
    if (!s->started) {
        s->started = true;
        if (c == '[')
            s->events_depth = 1;
    }
    if (s->events_depth > 0 && s->depth == s->events_depth) {
        if (c != '{')
            return fail(s, err, "an element of traceEvents is not an object");
        s->event = g_string_new("{");
        s->event_line = s->line;
    }
    if (s->depth == 1 && c == '[' && s->key_is_events && s->events_depth == 0)
        s->events_depth = 2;
    if (++s->depth > MAX_DEPTH)
        return fail(s, err, "JSON nested too deeply");
    return true;
}

/* After a key at depth 1: whether it is traceEvents (key_is_events); false
 * with err when it is the second. json.load and a browser's JSON.parse take
 * the later of two, this scan read the first: the file is ambiguous (as
 * config.json's keys twice, models/workload/json_dup_key.h). */
static bool events_key(strata_kineto_scan *s, GError **err)
{
    s->key_is_events = s->key_len == strlen("traceEvents") && memcmp(s->key, "traceEvents", s->key_len) == 0;
    if (!s->key_is_events)
        return true;
    if (s->events_key_line)
        return strata_fail_at(err, s->path, s->line, "key 'traceEvents': given twice in the top-level object "
                              "(first at line %" G_GUINT64_FORMAT "): expected one events array (json.load and "
                              "JSON.parse would take the later, strata read the first); remove one",
                              s->events_key_line);
    s->events_key_line = s->line;
    return true;
}

/* A byte outside strings; 1: an event is complete, 0: go on, -1: error. */
static int structural(strata_kineto_scan *s, char c, GError **err)
{
    bool at_elements = s->events_depth > 0 && s->depth == s->events_depth;
    if (!s->started && c != '{' && c != '[' && !g_ascii_isspace(c))
        return fail(s, err, "not a Chrome trace: expected a JSON object or array") ? 0 : -1;
    if (at_elements && !g_ascii_isspace(c) && c != ',' && c != '{' && c != '[' && c != ']')
        return fail(s, err, "an element of traceEvents is not an object") ? 0 : -1;
    switch (c) {
    case '"':
        s->in_str = true;
        s->key_len = 0;
        return 0;
    case '{':
    case '[':
        return open_bracket(s, c, err) ? 0 : -1;
    case '}':
    case ']':
        if (--s->depth < 0)
            return fail(s, err, "unbalanced brackets") ? 0 : -1;
        if (s->event && s->depth == s->events_depth)
            return 1;
        if (s->events_depth > 0 && s->depth == s->events_depth - 1) {
            s->events_depth = 0; /* read on, for a second traceEvents key (events_key) */
            s->events_read = true;
        }
        if (s->depth == 0 && !s->events_read)
            return fail(s, err, "no traceEvents array: not a Chrome trace") ? 0 : -1;
        s->done = s->depth == 0;
        return 0;
    case ':':
        return s->depth == 1 && !events_key(s, err) ? -1 : 0;
    case ',':
        if (s->depth == 1)
            s->key_is_events = false;
        return 0;
    default:
        return 0;
    }
}

/* One byte inside a string. */
static void in_string(strata_kineto_scan *s, char c)
{
    if (s->esc)
        s->esc = false;
    else if (c == '\\')
        s->esc = true;
    else if (c == '"')
        s->in_str = false;
    else if (s->depth == 1 && s->key_len < KEY_MAX)
        s->key[s->key_len++] = c;
}

/* The run of bytes from pos that only go into the event text, taken at
 * once: inside a string (not after a backslash) all but '"', '\\' and
 * '\n'; outside one, once started and away from the elements' level, all
 * but brackets, '"', ':', ',' and '\n'. A NUL ends the run (strcspn), and
 * the run stops where the event reaches its limit, so the byte loop meets
 * every byte that changes the state or is an error, as it did one at a
 * time. Returns the length taken (0: none). */
static size_t plain_run(strata_kineto_scan *s)
{
    if (s->esc || (!s->in_str && (!s->started || (s->events_depth > 0 && s->depth == s->events_depth))))
        return 0;
    size_t n = strcspn(s->buf + s->pos, s->in_str ? "\"\\\n" : "\"{}[]:,\n");
    if (s->event)
        n = s->event->len < STRATA_KINETO_MAX_EVENT ? MIN(n, STRATA_KINETO_MAX_EVENT - s->event->len) : 0;
    if (n == 0)
        return 0;
    const char *p = s->buf + s->pos;
    if (s->event)
        g_string_append_len(s->event, p, (gssize)n);
    if (s->in_str && s->depth == 1 && s->key_len < KEY_MAX) {
        size_t k = MIN(n, (size_t)KEY_MAX - s->key_len);
        memcpy(s->key + s->key_len, p, k);
        s->key_len += k;
    }
    s->pos += n;
    return n;
}

int strata_kineto_scan_next(strata_kineto_scan *s, JsonObject **event, uint64_t *line, GError **err)
{
    while (!s->done) {
        if (s->pos == s->len && !refill(s, err)) {
            if (err && *err)
                return -1;
            if (s->events_read) /* cut after the events, all read: taken as before the scan read on */
                break;
            if (!s->started)
                return fail(s, err, "empty file: expected a Chrome trace") ? 0 : -1;
            return fail(s, err, s->events_depth ? "the file ends inside traceEvents (truncated?)"
                                                : "no traceEvents array: not a Chrome trace")
                       ? 0
                       : -1;
        }
        if (!s->bom_seen) { /* a leading BOM, as the trace, hardware and CSV readers take it (RFC 8259 sec. 8.1) */
            s->bom_seen = true;
            if (s->len - s->pos >= 3 && memcmp(s->buf + s->pos, "\xef\xbb\xbf", 3) == 0)
                s->pos += 3;
            continue;
        }
        if (plain_run(s) > 0)
            continue;
        char c = s->buf[s->pos++];
        if (c == '\n')
            s->line++;
        else if (c == '\0')
            return fail(s, err, "a NUL byte: not JSON text") ? 0 : -1;
        if (s->event) {
            if (s->event->len >= STRATA_KINETO_MAX_EVENT)
                return fail(s, err, "an event over 16 MiB of text") ? 0 : -1;
            g_string_append_c(s->event, c);
        }
        if (s->in_str) {
            in_string(s, c);
            continue;
        }
        int rc = structural(s, c, err);
        if (rc < 0)
            return -1;
        if (rc == 1)
            return finish_event(s, event, line, err) ? 1 : -1;
    }
    return 0;
}
