/*
 * test_jax_xplane.c: XProf's XSpace (jax.profiler's PROFILE.xplane.pb,
 * sim/import/jax_xplane.c) into the ops its trace-event JSON gives:
 *  - the real pairs of the version matrix (tests/data/jax-versions/V/
 *    profile: scan_mlp.xplane.pb, scan_mlp.trace.json.gz and
 *    scan_mlp.perfetto_trace.json.gz, written by one jax.profiler.trace
 *    run per JAX release on the CPU): the .xplane.pb imports to the same
 *    ops, times and summary as each JSON file (strata_op_equal, op by op),
 *    on every release whose CPU backend records per-op events (0.8.3,
 *    0.10.2, 0.12.0.1); before 0.7 all three say there are no XLA ops.
 *  - an XSpace written here with the protoc-c code of the vendored schema,
 *    derived by hand: device 0 (plane /device:GPU:0, line `XLA Ops` from
 *    1,000 ns) ran fusion.1 at +0 for 10 us, while.1 at +20 us for 30 us
 *    and fusion.2 at +25 us for 5 us: while.1 holds fusion.2, so it is left
 *    out; 2 ops, busy 15 us, span 0 to 50 us. Its `Async XLA Ops` line is
 *    not read (TSL's JSON leaves it out). Device 1 ran copy-start.1 (the
 *    metadata's display_name) at 2,000 ns for 2 us on /device:GPU:1, and
 *    dot.3 on the host plane's executor thread (stats hlo_op, a ref_value,
 *    and device_ordinal 1) at 3,000 ns for 1 us: in time order copy-start.1
 *    at 0 (a copy), dot.3 at 1 us. The host's `python` thread's event is no
 *    op; /host:metadata is not read. 5 XLA ops on 2 devices.
 *  - a field the schema does not know (XEvent field 9) is read past and
 *    noted with its place; known fields with bad values are errors naming
 *    the file, the plane, the line and the event (exit 2).
 */
#include <glib/gstdio.h>
#include <string.h>
#include <xplane.pb-c.h>
#include "testutil.h"
#include "import/jax_profile.h"
#include "trace/op.h"
#include "trace/source.h"

typedef Tensorflow__Profiler__XSpace xspace;
typedef Tensorflow__Profiler__XPlane xplane;
typedef Tensorflow__Profiler__XLine xline;
typedef Tensorflow__Profiler__XEvent xevent;
typedef Tensorflow__Profiler__XStat xstat;

/* ---- the real pairs ---- */

static strata_op_list *import_all(const char *path, strata_jax_profile_summary *s, char **error)
{
    GError *err = NULL;
    strata_source *src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, s, &err);
    *error = NULL;
    if (src == NULL) {
        /* the message names the file: compare what follows it */
        *error = g_strdup(strstr(err->message, ": ") ? strstr(err->message, ": ") : err->message);
        g_error_free(err);
        return NULL;
    }
    strata_op_list *ops = strata_op_list_new();
    const strata_op *op;
    while (strata_source_next(src, &op, &err) == 1)
        strata_op_list_append(ops, op);
    ck_assert_ptr_null(err);
    strata_source_free(src);
    return ops;
}

START_TEST(xplane_and_json_of_one_run_same_ops)
{
    static const struct {
        const char *version;
        uint64_t ops; /* 0: this release records no per-op events on the CPU */
        uint32_t threads;
    } versions[] = {{"0.4.30", 0, 0}, {"0.4.38", 0, 0}, {"0.5.3", 0, 0}, {"0.6.2", 0, 0},
                    {"0.8.3", 327, 7}, {"0.10.2", 327, 1}, {"0.12.0.1", 327, 2}};
    int compared = 0;
    for (size_t v = 0; v < G_N_ELEMENTS(versions); v++) {
        char *dir = g_strdup_printf("tests/data/jax-versions/%s/profile/scan_mlp.", versions[v].version);
        char *pb_rel = g_strconcat(dir, "xplane.pb", NULL), *pb = strata_test_source_path(pb_rel);
        strata_jax_profile_summary xs;
        char *xerr;
        strata_op_list *xops = import_all(pb, &xs, &xerr);
        ck_assert(strata_jax_profile_sniff(pb));
        const char *jsons[] = {"trace.json.gz", "perfetto_trace.json.gz"};
        for (size_t j = 0; j < G_N_ELEMENTS(jsons); j++) {
            char *rel = g_strconcat(dir, jsons[j], NULL), *path = strata_test_source_path(rel);
            strata_jax_profile_summary js;
            char *jerr;
            strata_op_list *jops = import_all(path, &js, &jerr);
            if (versions[v].ops == 0) {
                ck_assert_msg(xops == NULL && jops == NULL, "%s", versions[v].version);
                ck_assert_str_eq(xerr, jerr);
                ck_assert_ptr_nonnull(strstr(xerr, "expected XLA op events"));
            } else {
                ck_assert_msg(xops && jops, "%s: %s %s", versions[v].version, xerr ? xerr : "", jerr ? jerr : "");
                size_t computes = 0;
                ck_assert_uint_eq(strata_op_list_len(xops), strata_op_list_len(jops));
                for (size_t i = 0; i < strata_op_list_len(xops); i++)
                    computes += strata_op_list_get(xops, i)->kind == STRATA_OP_COMPUTE;
                ck_assert_uint_eq(computes, versions[v].ops);
                ck_assert_uint_eq(xs.n_threads, versions[v].threads);
                for (size_t i = 0; i < strata_op_list_len(xops); i++)
                    ck_assert_msg(strata_op_equal(strata_op_list_get(xops, i), strata_op_list_get(jops, i)),
                                  "%s %s: op %zu differs", versions[v].version, jsons[j], i);
                ck_assert_uint_eq(xs.n_xla_ops, js.n_xla_ops);
                ck_assert_uint_eq(xs.n_devices, js.n_devices);
                ck_assert_uint_eq(xs.n_enclosing, js.n_enclosing);
                ck_assert_uint_eq(xs.n_copies, js.n_copies);
                ck_assert_double_eq_tol(xs.busy_s, js.busy_s, 1e-12);
                ck_assert_double_eq_tol(xs.span_s, js.span_s, 1e-12);
                ck_assert_uint_eq(xs.n_unknown, 0);
                compared++;
                strata_op_list_free(jops);
            }
            g_free(jerr);
            g_free(path);
            g_free(rel);
        }
        if (xops)
            strata_op_list_free(xops);
        g_free(xerr);
        g_free(pb);
        g_free(pb_rel);
        g_free(dir);
    }
    ck_assert_int_eq(compared, 6); /* three releases, two JSON files each */
}
END_TEST

/* ---- an XSpace written here ---- */

/* Storage for one hand-made XSpace: every message lives in the arena. */
typedef struct space {
    GPtrArray *arena;
    xspace x;
} space;

static void *alloc(space *sp, size_t n)
{
    void *p = g_malloc0(n);
    g_ptr_array_add(sp->arena, p);
    return p;
}

static void push(space *sp, void ***array, size_t *n, void *item)
{
    void **grown = alloc(sp, (*n + 1) * sizeof *grown);
    if (*n)
        memcpy(grown, *array, *n * sizeof *grown);
    grown[(*n)++] = item;
    *array = grown;
}

static xplane *add_plane(space *sp, int64_t id, const char *name)
{
    xplane *p = alloc(sp, sizeof *p);
    tensorflow__profiler__xplane__init(p);
    p->id = id;
    p->name = (char *)name;
    push(sp, (void ***)&sp->x.planes, &sp->x.n_planes, p);
    return p;
}

static void add_event_md(space *sp, xplane *p, int64_t id, const char *name, const char *display)
{
    Tensorflow__Profiler__XEventMetadata *md = alloc(sp, sizeof *md);
    tensorflow__profiler__xevent_metadata__init(md);
    md->id = id;
    md->name = (char *)name;
    if (display)
        md->display_name = (char *)display;
    Tensorflow__Profiler__XPlane__EventMetadataEntry *e = alloc(sp, sizeof *e);
    tensorflow__profiler__xplane__event_metadata_entry__init(e);
    e->key = id;
    e->value = md;
    push(sp, (void ***)&p->event_metadata, &p->n_event_metadata, e);
}

static void add_stat_md(space *sp, xplane *p, int64_t id, const char *name)
{
    Tensorflow__Profiler__XStatMetadata *md = alloc(sp, sizeof *md);
    tensorflow__profiler__xstat_metadata__init(md);
    md->id = id;
    md->name = (char *)name;
    Tensorflow__Profiler__XPlane__StatMetadataEntry *e = alloc(sp, sizeof *e);
    tensorflow__profiler__xplane__stat_metadata_entry__init(e);
    e->key = id;
    e->value = md;
    push(sp, (void ***)&p->stat_metadata, &p->n_stat_metadata, e);
}

static xline *add_line(space *sp, xplane *p, int64_t id, const char *name, int64_t ts_ns)
{
    xline *l = alloc(sp, sizeof *l);
    tensorflow__profiler__xline__init(l);
    l->id = id;
    l->name = (char *)name;
    l->timestamp_ns = ts_ns;
    push(sp, (void ***)&p->lines, &p->n_lines, l);
    return l;
}

static xevent *add_event(space *sp, xline *l, int64_t md, int64_t offset_ps, int64_t dur_ps)
{
    xevent *e = alloc(sp, sizeof *e);
    tensorflow__profiler__xevent__init(e);
    e->metadata_id = md;
    e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
    e->offset_ps = offset_ps;
    e->duration_ps = dur_ps;
    push(sp, (void ***)&l->events, &l->n_events, e);
    return e;
}

static xstat *add_stat(space *sp, xevent *e, int64_t md)
{
    xstat *st = alloc(sp, sizeof *st);
    tensorflow__profiler__xstat__init(st);
    st->metadata_id = md;
    push(sp, (void ***)&e->stats, &e->n_stats, st);
    return st;
}

#define US 1000000 /* ps */

/* The XSpace of the header comment; *fusion1 and *dot3 are returned for the
 * bad-value cases to spoil. */
static void build(space *sp, xevent **fusion1, xevent **dot3)
{
    sp->arena = g_ptr_array_new_with_free_func(g_free);
    tensorflow__profiler__xspace__init(&sp->x);
    xplane *g0 = add_plane(sp, 0, "/device:GPU:0");
    add_event_md(sp, g0, 1, "fusion.1", NULL);
    add_event_md(sp, g0, 2, "while.1", NULL);
    add_event_md(sp, g0, 3, "fusion.2", NULL);
    add_event_md(sp, g0, 4, "all-reduce-start.1", NULL);
    xline *ops = add_line(sp, g0, 5, "XLA Ops", 1000);
    *fusion1 = add_event(sp, ops, 1, 0, 10 * US);
    add_event(sp, ops, 2, 20 * US, 30 * US);
    add_event(sp, ops, 3, 25 * US, 5 * US);
    add_event(sp, add_line(sp, g0, 6, "Async XLA Ops", 1000), 4, 0, 4 * US);
    xplane *g1 = add_plane(sp, 1, "/device:GPU:1");
    add_event_md(sp, g1, 1, "a.long.name.of.the.copy", "copy-start.1");
    add_event(sp, add_line(sp, g1, 5, "XLA Ops", 2000), 1, 0, 2 * US);
    xplane *host = add_plane(sp, 2, "/host:CPU");
    add_event_md(sp, host, 1, "pjit", NULL);
    add_event_md(sp, host, 2, "ThunkExecutor::Execute", NULL);
    add_stat_md(sp, host, 10, "hlo_op");
    add_stat_md(sp, host, 11, "device_ordinal");
    add_stat_md(sp, host, 12, "dot.3");
    add_event(sp, add_line(sp, host, 1, "python", 0), 1, 0, 100 * US);
    *dot3 = add_event(sp, add_line(sp, host, 2, "tf_XLAPjRtCpuClient", 0), 2, 3 * US, 1 * US);
    xstat *op = add_stat(sp, *dot3, 10), *dev = add_stat(sp, *dot3, 11);
    op->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
    op->ref_value = 12;
    dev->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
    dev->int64_value = 1;
    add_plane(sp, 3, "/host:metadata");
}

static char *write_space(space *sp, const char *dir, const char *name)
{
    size_t n = tensorflow__profiler__xspace__get_packed_size(&sp->x);
    guint8 *b = g_malloc(n);
    tensorflow__profiler__xspace__pack(&sp->x, b);
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, (const char *)b, (gssize)n, NULL));
    g_free(b);
    return path;
}

static void check_op(const strata_op *op, const char *name, double time_s, double at_s, const char *note)
{
    ck_assert_int_eq(op->kind, STRATA_OP_COMPUTE);
    ck_assert_str_eq(op->name, name);
    ck_assert_double_eq_tol(op->time_s, time_s, 1e-15);
    ck_assert(op->has_at);
    ck_assert_double_eq_tol(op->at_s, at_s, 1e-15);
    ck_assert_str_eq(op->note, note);
}

START_TEST(xplane_written_by_hand)
{
    space sp;
    xevent *fusion1, *dot3;
    build(&sp, &fusion1, &dot3);
    char *dir = strata_test_temp_dir();
    char *path = write_space(&sp, dir, "p.xplane.pb");
    strata_jax_profile_summary s;
    char *err;
    strata_op_list *ops = import_all(path, &s, &err);
    ck_assert_msg(ops, "%s", err);
    ck_assert_uint_eq(s.n_xla_ops, 5);
    ck_assert_uint_eq(s.n_devices, 2);
    ck_assert_int_eq(s.device, 0);
    ck_assert_uint_eq(s.n_enclosing, 1);
    ck_assert_uint_eq(strata_op_list_len(ops), 2);
    check_op(strata_op_list_get(ops, 0), "fusion.1", 10e-6, 0, "op");
    check_op(strata_op_list_get(ops, 1), "fusion.2", 5e-6, 25e-6, "op");
    ck_assert_double_eq_tol(s.busy_s, 15e-6, 1e-15);
    ck_assert_double_eq_tol(s.span_s, 50e-6, 1e-15);
    ck_assert_uint_eq(s.n_unknown, 0);
    strata_op_list_free(ops);
    /* device 1, through the command line */
    char *out = g_build_filename(dir, "d1.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, "--device", "1", "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "5 XLA ops on 2 devices; device 1: 2 ops (1 copies"), "%s", r.err);
    strata_cli_result_clear(&r);
    char *text = NULL;
    ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    ck_assert_msg(strstr(text, "compute copy-start.1 time=2us stream=t0 at=0 note=copy\n"
                                "compute dot.3 time=1us stream=t1 at=1us note=op\n"),
                  "%s", text);
    g_free(text);
    /* a field of a newer schema: XEvent field 9, a varint 1 */
    ProtobufCMessageUnknownField f = {.tag = 9, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT, .len = 1,
                                      .data = (uint8_t[]){1}};
    fusion1->base.n_unknown_fields = 1;
    fusion1->base.unknown_fields = &f;
    g_free(path);
    path = write_space(&sp, dir, "newer.xplane.pb");
    fusion1->base.n_unknown_fields = 0;
    fusion1->base.unknown_fields = NULL;
    r = strata_test_cli("import", "jax-profile", path, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "read past 1 field this reader does not know (a newer xplane.proto); the first: "
                                "plane '/device:GPU:0' line 'XLA Ops' event 0: XEvent field 9 (wire type 0)"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(out);
    g_free(path);
    g_free(dir);
    g_ptr_array_free(sp.arena, TRUE);
}
END_TEST

/* ---- bad values ---- */

static void expect_refused(space *sp, const char *dir, const char *want)
{
    char *path = write_space(sp, dir, "bad.xplane.pb");
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, NULL);
    ck_assert_msg(r.status == 2, "%s: status %d", want, r.status);
    ck_assert_msg(strstr(r.err, path) && strstr(r.err, want), "expected '%s' in: %s", want, r.err);
    strata_cli_result_clear(&r);
    g_free(path);
}

START_TEST(xplane_bad_values_refused)
{
    space sp;
    xevent *fusion1, *dot3;
    build(&sp, &fusion1, &dot3);
    char *dir = strata_test_temp_dir();
    fusion1->metadata_id = 99;
    expect_refused(&sp, dir,
                   "plane '/device:GPU:0' line 'XLA Ops' event 0 (''): metadata_id 99: expected an id of the "
                   "plane's event_metadata");
    fusion1->metadata_id = 1;
    fusion1->duration_ps = -1;
    expect_refused(&sp, dir, "event 0 ('fusion.1'): timestamp_ns 1000, offset_ps 0, duration_ps -1: expected times");
    fusion1->duration_ps = 10 * US;
    xstat *op = dot3->stats[0], *dev = dot3->stats[1];
    op->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
    expect_refused(&sp, dir, "plane '/host:CPU' line 'tf_XLAPjRtCpuClient' event 0 ('ThunkExecutor::Execute'): stat "
                             "'hlo_op': expected a string");
    op->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
    dev->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE;
    dev->double_value = 1.5;
    expect_refused(&sp, dir, "stat 'device_ordinal': expected a whole number from 0 to 1048575");
    dev->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
    dev->metadata_id = 77;
    expect_refused(&sp, dir, "stat metadata_id 77: expected an id of the plane's stat_metadata");
    dev->metadata_id = 11;
    /* not a protobuf: a planes field longer than the file */
    char *path = g_build_filename(dir, "cut.xplane.pb", NULL);
    ck_assert(g_file_set_contents(path, "\x0a\x7f\x08", 3, NULL));
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "expected an XSpace (XProf's xplane.proto") && strstr(r.err, "protobuf cannot decode"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(path);
    g_free(dir);
    g_ptr_array_free(sp.arena, TRUE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jax_xplane");
    TCase *tc = tcase_create("jax_xplane");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, xplane_and_json_of_one_run_same_ops);
    tcase_add_test(tc, xplane_written_by_hand);
    tcase_add_test(tc, xplane_bad_values_refused);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
