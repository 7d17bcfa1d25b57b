/*
 * torch.c: PyTorch memory snapshot -> strata op stream (see torch.h): the
 * two modes of the conversion, and the steps between its passes.
 *
 * The conversion runs two passes over the snapshot's segments and events
 * (torch_conv.h), in memory that does not grow with the file: a streamed
 * pickle (pickle.h) hands out segments and events one at a time and drops
 * them:
 *  1. pass 1 (torch_state.c) validates each segment and event (schema
 *     errors name the path, e.g. "device_traces[0][12].addr"), keeps the
 *     final segments and live blocks, per address the first event, and the
 *     segment events (a few percent of all events, 24 bytes each). Between
 *     the passes: the options, the state at the first event and its setup
 *     ops (torch_state.c), the ground truth and the `release` ops
 *     (torch_history.c);
 *  2. pass 2 (torch_events.c), run by the source as it is read: allocs,
 *     frees (at free_completed) and releases, event by event.
 * Streaming, pass 2 reads the file again (and again after a rewind): the
 * source holds only the setup ops, the live blocks and the string table.
 * When the stream cannot vouch for what it handed out (a hand-made pickle
 * laid out unlike Python's, see strata_pickle_stream_exact) or when the
 * caller gives a parsed pickle (strata_torch_convert), the same passes run
 * over the whole document and every op is kept (48 bytes each).
 *
 * Invariant: both modes run the same functions on the same items in the
 * same order, so their traces are byte-identical.
 */
#include "import/torch.h"

#include <string.h>

#include "core/error.h"
#include "core/units.h"
#include "import/torch_conv.h"

static const char *const selectors[] = {"segments/*", "device_traces/*/*",
                                        "external_annotations/*", NULL};

void strata_torch_options_init(strata_torch_options *opt)
{
    opt->device = STRATA_TORCH_DEVICE_AUTO;
    opt->frames = true;
    opt->progress = NULL;
}

void strata_torch_summary_clear(strata_torch_summary *s)
{
    if (s->segment_alloc_sizes)
        g_array_unref(s->segment_alloc_sizes);
    if (s->ooms)
        g_array_unref(s->ooms);
    g_free(s->settings_text);
    g_free(s->unknown_text);
    memset(s, 0, sizeof *s);
}

static conv *conv_new(const char *origin, const strata_torch_options *opt,
                      strata_torch_summary *sum)
{
    conv *c = g_new0(conv, 1);
    c->origin = g_strdup(origin ? origin : "<snapshot>");
    if (opt)
        c->opt = *opt;
    else
        strata_torch_options_init(&c->opt);
    c->want = c->opt.device;
    if (c->opt.device < 0)
        c->opt.device = 0; /* provisional: pass 1 counts every device's events */
    c->sum = sum ? sum : &c->own_sum;
    memset(c->sum, 0, sizeof *c->sum);
    c->sum->segment_alloc_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    c->sum->ooms = g_array_new(FALSE, FALSE, sizeof(strata_torch_oom));
    c->devices = g_array_new(FALSE, TRUE, sizeof(device_count));
    c->unknown = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    c->seg_by_addr = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->block_by_addr = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->seg_first = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->block_first = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->segevs = g_array_new(FALSE, FALSE, sizeof(segev));
    c->releases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    c->streams = g_array_new(FALSE, FALSE, sizeof(int64_t));
    c->live = g_hash_table_new(g_direct_hash, g_direct_equal);
    c->out = torch_ctrace_new();
    c->sink = c->out->ops;
    c->note_setup = torch_intern(c->out, "setup");
    return c;
}

/* Frees what only pass 1 needs (the converter may live on in the source). */
static void drop_pass1(conv *c)
{
    g_clear_pointer(&c->seg_by_addr, g_hash_table_unref);
    g_clear_pointer(&c->block_by_addr, g_hash_table_unref);
    g_clear_pointer(&c->seg_first, g_hash_table_unref);
    g_clear_pointer(&c->block_first, g_hash_table_unref);
    g_clear_pointer(&c->segevs, g_array_unref);
    g_clear_pointer(&c->devices, g_array_unref);
    g_clear_pointer(&c->unknown, g_hash_table_unref);
}

void torch_conv_free(conv *c)
{
    if (c == NULL)
        return;
    drop_pass1(c);
    g_clear_error(&c->seg_err);
    g_clear_error(&c->ev_err);
    g_array_unref(c->releases);
    g_array_unref(c->streams);
    g_hash_table_unref(c->live);
    if (c->setup_live)
        g_hash_table_unref(c->setup_live);
    strata_pickle_stream_free(c->stream);
    strata_torch_summary_clear(&c->own_sum);
    g_free(c->origin);
    g_free(c);
}

/* After pass 1: 0 to go on with the device pass 1 read, 1 to read again
 * with *device (the device with the history), -1 with err (--device all). */
static int settle_device(conv *c, int *device, GError **err)
{
    if (c->want >= 0)
        return 0;
    const device_count *d = (const device_count *)(void *)c->devices->data;
    guint best = 0;
    for (guint i = 1; i < c->devices->len; i++)
        if (d[i].events > d[best].events ||
            (d[i].events == d[best].events && d[i].segments > d[best].segments))
            best = i;
    if (c->want == STRATA_TORCH_DEVICE_ALL) {
        GString *list = g_string_new(NULL);
        for (guint i = 0; i < c->devices->len; i++)
            g_string_append_printf(list, "%s device %u: %" G_GUINT64_FORMAT " events, %"
                                   G_GUINT64_FORMAT " segments", i ? ";" : "", i, d[i].events,
                                   d[i].segments);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: --device all: a trace holds one device until memories can be "
                    "device-qualified; pick one with --device N (without it: device %u).%s",
                    c->origin, best, list->str);
        g_string_free(list, TRUE);
        return -1;
    }
    *device = (int)best;
    return (int)best != c->opt.device;
}

/* "ACTION xN ..." of the unknown actions, by name. */
static char *unknown_text(GHashTable *unknown)
{
    if (g_hash_table_size(unknown) == 0)
        return NULL;
    GList *keys = g_list_sort(g_hash_table_get_keys(unknown), (GCompareFunc)strcmp);
    GString *s = g_string_new(NULL);
    for (GList *k = keys; k; k = k->next)
        g_string_append_printf(s, "%s%s x%" G_GSIZE_FORMAT, s->len ? ", " : "", (char *)k->data,
                               GPOINTER_TO_SIZE(g_hash_table_lookup(unknown, k->data)));
    g_list_free(keys);
    return g_string_free(s, FALSE);
}

/* Everything between the passes: options, the initial state and its setup
 * ops, the ground truth, the releases, the limit. */
static void between_passes(conv *c)
{
    strata_torch_summary *sum = c->sum;
    sum->device = c->opt.device;
    sum->n_events = c->n_events;
    sum->no_history = c->n_history == 0;
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->unknown);
    while (g_hash_table_iter_next(&hi, &k, &v))
        sum->n_unknown += GPOINTER_TO_SIZE(v);
    sum->unknown_text = unknown_text(c->unknown);
    torch_read_settings(c, strata_pickle_root(c->p));
    torch_rebuild_initial(c);
    torch_emit_setup(c);
    sum->n_setup_ops = c->out->ops->len;
    torch_ground_truth(c);
    torch_decide_releases(c);
    if (sum->limit_low > 0)
        torch_add_option(c, "allocator.device_limit", strata_format_size_exact(sum->limit_low));
    drop_pass1(c);
    c->note_empty_cache = torch_intern(c->out, "empty_cache") + 1;
    torch_save_setup(c);
    sum->n_inconsistent = c->setup_inconsistent;
}

/* ---- the two modes ------------------------------------------------------------ */

/* Drops a conversion that will not be returned (its summary cleared). */
static void fail(conv *c)
{
    if (c->sum != &c->own_sum)
        strata_torch_summary_clear(c->sum);
    torch_ctrace_free(c->out);
    torch_conv_free(c);
}

/* Kept mode: both passes over a whole document, every op in out->ops. */
static strata_source *convert_whole(conv *c, const strata_pickle *p, GError **err)
{
    c->p = p;
    torch_document_items(c, torch_pass1_item);
    int device = 0, settle = -1;
    if (!torch_check_document(c, err) || (settle = settle_device(c, &device, err)) != 0) {
        strata_torch_options again = c->opt;
        again.device = device;
        strata_torch_summary *sum = c->sum != &c->own_sum ? c->sum : NULL;
        const char *origin = c->origin;
        c->origin = NULL;
        fail(c);
        strata_source *src = settle > 0 ? strata_torch_convert(p, origin, &again, sum, err) : NULL;
        g_free((char *)origin);
        return src;
    }
    between_passes(c);
    c->err = err;
    torch_document_items(c, torch_pass2_item);
    torch_events_done(c);
    ctrace *out = c->out;
    strata_source *src = strata_source_new(&torch_ctrace_vtable, out, c->origin);
    torch_conv_free(c);
    return src;
}

strata_source *strata_torch_convert(const strata_pickle *p, const char *origin,
                                    const strata_torch_options *opt, strata_torch_summary *sum,
                                    GError **err)
{
    return convert_whole(conv_new(origin, opt, sum), p, err);
}

/* Streaming mode: pass 1 now, pass 2 as the source is read. */
strata_source *strata_torch_import(const char *path, const strata_torch_options *opt,
                                   strata_torch_summary *sum, GError **err)
{
    strata_pickle_stream *s = strata_pickle_stream_open_file(path, selectors, err);
    if (s == NULL)
        return NULL;
    strata_pickle_stream_set_progress(s, opt ? opt->progress : NULL, "import torch");
    conv *c = conv_new(path, opt, sum);
    c->stream = s;
    c->p = strata_pickle_stream_doc(s);
    strata_pickle_item item;
    int rc;
    while ((rc = strata_pickle_stream_next(s, &item, err)) == 1)
        torch_pass1_item(c, item.selector, item.outer, item.index, item.value);
    bool exact = rc == 0 && strata_pickle_stream_exact(s);
    int device = 0, settle = 0;
    if (rc < 0 || (exact && (!torch_check_document(c, err) ||
                             (settle = settle_device(c, &device, err)) != 0))) {
        strata_torch_options again = c->opt;
        again.device = device;
        fail(c);
        return settle > 0 ? strata_torch_import(path, &again, sum, err) : NULL;
    }
    if (!exact) {
        /* A layout the stream cannot vouch for: read the whole document. */
        fail(c);
        strata_pickle *p = strata_pickle_load_file(path, err);
        if (p == NULL)
            return NULL;
        strata_source *src = strata_torch_convert(p, path, opt, sum, err);
        strata_pickle_free(p);
        return src;
    }
    between_passes(c);
    strata_pickle_stream_rewind(s);
    torch_reset_events(c);
    c->out->events = c;
    return strata_source_new(&torch_ctrace_vtable, c->out, c->origin);
}
