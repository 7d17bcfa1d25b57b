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
    g_free(s->notes);
    if (s->host_segment_alloc_sizes)
        g_array_unref(s->host_segment_alloc_sizes);
    g_free(s->host_unknown_text);
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
    c->devices = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
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
    g_clear_pointer(&c->devices, g_hash_table_unref);
    g_clear_pointer(&c->unknown, g_hash_table_unref);
}

void torch_conv_free(conv *c)
{
    if (c == NULL)
        return;
    drop_pass1(c);
    torch_host_free(c->host);
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

static gint compare_device(gconstpointer a, gconstpointer b)
{
    gsize x = GPOINTER_TO_SIZE(*(gconstpointer const *)a), y = GPOINTER_TO_SIZE(*(gconstpointer const *)b);
    return x < y ? -1 : x > y;
}

/* After pass 1: 0 to go on with the device pass 1 read, 1 to read again
 * with *device (the device with the history), -1 with err (--device all). */
static int settle_device(conv *c, int *device, GError **err)
{
    if (c->want >= 0)
        return 0;
    /* the devices in index order: the first 64 indices always (a device
     * with a marker only shows as 0 events), then any higher one counted */
    GPtrArray *keys = g_ptr_array_new();
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->devices);
    while (g_hash_table_iter_next(&hi, &k, &v))
        if (GPOINTER_TO_SIZE(k) >= 64)
            g_ptr_array_add(keys, k);
    g_ptr_array_sort(keys, compare_device);
    gsize top = 0;
    g_hash_table_iter_init(&hi, c->devices);
    while (g_hash_table_iter_next(&hi, &k, &v))
        if (GPOINTER_TO_SIZE(k) < 64 && GPOINTER_TO_SIZE(k) > top)
            top = GPOINTER_TO_SIZE(k);
    for (gsize i = 0; i <= top; i++)
        g_ptr_array_insert(keys, (gint)i, GSIZE_TO_POINTER(i));
    static const device_count none = {0, 0};
    gsize best = 0;
    const device_count *bd = &none;
    GString *list = g_string_new(NULL);
    for (guint i = 0; i < keys->len; i++) {
        gsize dev = GPOINTER_TO_SIZE(keys->pdata[i]);
        const device_count *d = g_hash_table_lookup(c->devices, keys->pdata[i]);
        d = d ? d : &none;
        if (i == 0 || d->events > bd->events ||
            (d->events == bd->events && d->segments > bd->segments)) {
            best = dev;
            bd = d;
        }
        g_string_append_printf(list, "%s device %" G_GSIZE_FORMAT ": %" G_GUINT64_FORMAT " events, %"
                               G_GUINT64_FORMAT " segments", i ? ";" : "", dev, d->events,
                               d->segments);
    }
    g_ptr_array_free(keys, TRUE);
    if (c->want == STRATA_TORCH_DEVICE_ALL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: --device all: a trace holds one device until memories can be "
                    "device-qualified; pick one with --device N (without it: device %" G_GSIZE_FORMAT ").%s",
                    c->origin, best, list->str);
        g_string_free(list, TRUE);
        return -1;
    }
    g_string_free(list, TRUE);
    *device = (int)best;
    return (int)best != c->opt.device;
}

void torch_count_unknown(GHashTable *unknown, char *name)
{
    gpointer n = g_hash_table_lookup(unknown, name);
    g_hash_table_replace(unknown, name, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(n) + 1));
}

char *torch_unknown_text(GHashTable *unknown, uint64_t *total)
{
    if (g_hash_table_size(unknown) == 0)
        return NULL;
    GList *keys = g_list_sort(g_hash_table_get_keys(unknown), (GCompareFunc)strcmp);
    GString *s = g_string_new(NULL);
    for (GList *k = keys; k; k = k->next) {
        gsize n = GPOINTER_TO_SIZE(g_hash_table_lookup(unknown, k->data));
        *total += n;
        g_string_append_printf(s, "%s%s x%" G_GSIZE_FORMAT, s->len ? ", " : "", (char *)k->data, n);
    }
    g_list_free(keys);
    return g_string_free(s, FALSE);
}

/* What the import derived or inferred, one line each (NULL: nothing). */
static char *summary_notes(const strata_torch_summary *s)
{
    GString *n = g_string_new(NULL);
    if (s->n_derived_addresses)
        g_string_append_printf(n, "%sderived: %" G_GUINT64_FORMAT " live blocks without `address` "
                                  "(an older snapshot, PyTorch 1.13 to 2.0) placed at their "
                                  "segment's address plus the sizes of the blocks before them, as "
                                  "torch/cuda/_memory_viz.py reads them",
                               n->len ? "\n" : "", s->n_derived_addresses);
    if (s->n_derived_requested_history || s->n_derived_requested_size)
        g_string_append_printf(n, "%sderived: requested bytes of %" G_GUINT64_FORMAT
                                  " live blocks from history[0].real_size and of %" G_GUINT64_FORMAT
                                  " from the block's size (no requested_size)",
                               n->len ? "\n" : "", s->n_derived_requested_history,
                               s->n_derived_requested_size);
    if (s->ends_in_oom) {
        const strata_torch_oom *o = &g_array_index(s->ooms, strata_torch_oom, s->ooms->len - 1);
        char *r = strata_format_size(s->oom_reserved), *f = strata_format_size(o->device_free);
        char *q = strata_format_size(o->size);
        g_string_append_printf(n, "%sout of memory: the history ends at an oom (a dump from an OOM "
                                  "observer): %s requested with %s reserved and %s free on the "
                                  "device",
                               n->len ? "\n" : "", q, r, f);
        if (s->oom_implied_limit) {
            char *l = strata_format_size(s->oom_implied_limit);
            g_string_append_printf(n, "; the process could hold at most %s (%" G_GUINT64_FORMAT
                                      " bytes: reserved + free)", l, s->oom_implied_limit);
            g_free(l);
        }
        if (s->n_oom_releases)
            g_string_append_printf(n, "; before it the allocator freed its cache (%" G_GUINT64_FORMAT
                                      " release noted oom_retry in the trace)", s->n_oom_releases);
        g_free(r);
        g_free(f);
        g_free(q);
    }
    if (s->n_releases)
        g_string_append_printf(n, "%sinferred: %" G_GUINT64_FORMAT " runs of segment_free are the "
                                  "program's empty_cache() (%" G_GUINT64_FORMAT " by frames naming "
                                  "empty_cache, %" G_GUINT64_FORMAT " because a freed segment could "
                                  "have served the next request, %" G_GUINT64_FORMAT " because no "
                                  "failed cudaMalloc fits before them), %" G_GUINT64_FORMAT
                                  " the allocator's retries",
                               n->len ? "\n" : "", s->n_releases, s->n_releases_by_frames,
                               s->n_releases_by_rule,
                               s->n_releases - s->n_releases_by_frames - s->n_releases_by_rule,
                               s->n_retries);
    return n->len ? g_string_free(n, FALSE) : (g_string_free(n, TRUE), NULL);
}

/* Everything between the passes: options, the initial state and its setup
 * ops, the ground truth, the releases, the limit. */
static bool between_passes(conv *c, GError **err)
{
    c->err = err;
    strata_torch_summary *sum = c->sum;
    sum->device = c->opt.device;
    sum->n_events = c->n_events;
    sum->no_history = c->n_history == 0;
    sum->unknown_text = torch_unknown_text(c->unknown, &sum->n_unknown);
    torch_read_settings(c, strata_pickle_root(c->p));
    torch_rebuild_initial(c);
    torch_emit_setup(c);
    if (!torch_host_between(c))
        return false;
    sum->n_setup_ops = c->out->ops->len;
    torch_ground_truth(c);
    torch_decide_releases(c);
    if (sum->limit_low > 0 && sum->limit_low < UINT64_C(1) << 63) /* a size a trace holds */
        torch_add_option(c, "allocator.device_limit", strata_format_size_exact(sum->limit_low));
    sum->ends_in_oom = c->n_history > 0 && c->last_history == EV_OOM && sum->ooms->len > 0;
    sum->n_derived_addresses = c->derived_addresses;
    sum->n_derived_requested_history = c->derived_requested_history;
    sum->n_derived_requested_size = c->derived_requested_size;
    sum->notes = summary_notes(sum);
    drop_pass1(c);
    c->note_empty_cache = torch_intern(c->out, "empty_cache") + 1;
    c->note_oom_retry = torch_intern(c->out, "oom_retry") + 1;
    torch_save_setup(c);
    sum->n_inconsistent = c->setup_inconsistent;
    return true;
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
    if (!between_passes(c, err)) {
        fail(c);
        return NULL;
    }
    torch_document_items(c, torch_pass2_item);
    torch_host_emit_until(c, INT64_MAX);
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
    bool exact = rc == 0 && strata_pickle_stream_exact(s) &&
                 strata_pickle_type_of(c->p, strata_pickle_root(c->p)) != STRATA_PICKLE_LIST;
    /* (a bare list of segments, torch.cuda.memory_snapshot(), is read whole) */
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
    if (!between_passes(c, err)) {
        fail(c);
        return NULL;
    }
    strata_pickle_stream_rewind(s);
    torch_reset_events(c);
    c->out->events = c;
    return strata_source_new(&torch_ctrace_vtable, c->out, c->origin);
}
