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

#include "import/torch_conv.h"

static const char *const selectors[] = {"segments/*", "device_traces/*/*",
                                        "external_annotations/*", NULL};

void strata_torch_options_init(strata_torch_options *opt)
{
    opt->device = 0;
    opt->frames = true;
}

void strata_torch_summary_clear(strata_torch_summary *s)
{
    if (s->segment_alloc_sizes)
        g_array_unref(s->segment_alloc_sizes);
    g_free(s->settings_text);
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
    c->sum = sum ? sum : &c->own_sum;
    memset(c->sum, 0, sizeof *c->sum);
    c->sum->segment_alloc_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
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

/* Everything between the passes: options, the initial state and its setup
 * ops, the ground truth, the releases. */
static void between_passes(conv *c)
{
    strata_torch_summary *sum = c->sum;
    sum->n_events = c->n_events;
    torch_read_settings(c, strata_pickle_root(c->p));
    torch_rebuild_initial(c);
    torch_emit_setup(c);
    sum->n_setup_ops = c->out->ops->len;
    torch_ground_truth(c);
    torch_decide_releases(c);
    drop_pass1(c);
    c->note_empty_cache = torch_intern(c->out, "empty_cache") + 1;
    torch_save_setup(c);
    sum->n_inconsistent = c->setup_inconsistent;
}

/* ---- the two modes ------------------------------------------------------------ */

/* Kept mode: both passes over a whole document, every op in out->ops. */
static strata_source *convert_whole(conv *c, const strata_pickle *p, GError **err)
{
    c->p = p;
    torch_document_items(c, torch_pass1_item);
    if (!torch_check_document(c, err)) {
        if (c->sum != &c->own_sum)
            strata_torch_summary_clear(c->sum);
        torch_ctrace_free(c->out);
        torch_conv_free(c);
        return NULL;
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
    conv *c = conv_new(path, opt, sum);
    c->stream = s;
    c->p = strata_pickle_stream_doc(s);
    strata_pickle_item item;
    int rc;
    while ((rc = strata_pickle_stream_next(s, &item, err)) == 1)
        torch_pass1_item(c, item.selector, item.outer, item.index, item.value);
    bool exact = rc == 0 && strata_pickle_stream_exact(s);
    if (rc < 0 || (exact && !torch_check_document(c, err))) {
        if (c->sum != &c->own_sum)
            strata_torch_summary_clear(c->sum);
        torch_ctrace_free(c->out);
        torch_conv_free(c);
        return NULL;
    }
    if (!exact) {
        /* A layout the stream cannot vouch for: read the whole document. */
        torch_ctrace_free(c->out);
        torch_conv_free(c);
        if (sum)
            strata_torch_summary_clear(sum);
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
