/*
 * table.c: results.csv and results.json from the points' json (see table.h).
 *
 * A figure is a dotted path into a point's results object
 * ("memories.hbm.peak_allocated_bytes"); "status" is the point's status.
 * Integers print as integers, reals with %.9g, so tables are deterministic.
 */
#include "sweep/table.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include "core/error.h"
#include "core/jsonout.h"
#include "core/outfile.h"

static JsonNode *lookup(JsonObject *results, const char *path)
{
    char **parts = g_strsplit(path, ".", -1);
    JsonNode *node = NULL;
    JsonObject *o = results;
    for (guint i = 0; parts[i]; i++) {
        if (!o || !json_object_has_member(o, parts[i])) {
            node = NULL;
            break;
        }
        node = json_object_get_member(o, parts[i]);
        o = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    }
    g_strfreev(parts);
    return node;
}

static void csv_field(GString *s, const char *text)
{
    if (!strpbrk(text, ",\"\n\r")) {
        g_string_append(s, text);
        return;
    }
    g_string_append_c(s, '"');
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            g_string_append_c(s, '"');
        g_string_append_c(s, *p);
    }
    g_string_append_c(s, '"');
}

/* Text of a scalar node for the CSV ("" for null, objects, arrays). */
static char *node_text(JsonNode *node)
{
    if (!node || !JSON_NODE_HOLDS_VALUE(node))
        return g_strdup("");
    GType t = json_node_get_value_type(node);
    if (t == G_TYPE_INT64)
        return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(node));
    if (t == G_TYPE_DOUBLE) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(buf, sizeof buf, "%.9g", json_node_get_double(node));
        return g_strdup(buf);
    }
    if (t == G_TYPE_BOOLEAN)
        return g_strdup(json_node_get_boolean(node) ? "true" : "false");
    if (t == G_TYPE_STRING)
        return g_strdup(json_node_get_string(node));
    return g_strdup("");
}

static void add_node(JsonBuilder *b, JsonNode *node)
{
    if (!node || !JSON_NODE_HOLDS_VALUE(node))
        json_builder_add_null_value(b);
    else
        json_builder_add_value(b, json_node_copy(node));
}

static void begin_meta(JsonBuilder *b, const strata_experiment *e)
{
    json_builder_set_member_name(b, "experiment");
    json_builder_add_string_value(b, strata_experiment_name(e));
    json_builder_set_member_name(b, "title");
    json_builder_add_string_value(b, strata_experiment_title(e));
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, strata_experiment_description(e));
    json_builder_set_member_name(b, "runner");
    json_builder_add_string_value(b, strata_experiment_runner(e) == STRATA_RUNNER_RUN ? "run" : "alloc");
    strata_json_open_array(b, "axes");
    for (guint i = 0; i < strata_experiment_axis_count(e); i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, strata_experiment_axis_name(e, i));
        json_builder_set_member_name(b, "unit");
        json_builder_add_string_value(b, strata_axis_unit_name(strata_experiment_axis_unit(e, i)));
        strata_json_open_array(b, "values");
        for (guint v = 0; v < strata_experiment_axis_size(e, i); v++)
            json_builder_add_string_value(b, strata_experiment_axis_value(e, i, v));
        json_builder_end_array(b);
        json_builder_set_member_name(b, "numbers");
        if (strata_experiment_axis_unit(e, i) == STRATA_AXIS_TEXT) {
            json_builder_add_null_value(b);
        } else {
            json_builder_begin_array(b);
            for (guint v = 0; v < strata_experiment_axis_size(e, i); v++) {
                double d = 0;
                strata_experiment_axis_number(e, i, v, &d);
                json_builder_add_double_value(b, d);
            }
            json_builder_end_array(b);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    strata_json_open_array(b, "figures");
    for (const char *const *f = strata_experiment_figures(e); *f; f++)
        json_builder_add_string_value(b, *f);
    json_builder_end_array(b);
    strata_json_open_array(b, "plots");
    char **plots = g_strsplit(strata_experiment_plots_text(e), ",", -1);
    for (guint i = 0; plots[i]; i++)
        if (*plots[i])
            json_builder_add_string_value(b, plots[i]);
    g_strfreev(plots);
    json_builder_end_array(b);
}

/* The keys a figure could have meant, from one point's results: the
 * members of the deepest object its dotted path reaches (the top level for
 * "nosuch", with the point's status where the results hold none;
 * memories.hbm's for "memories.hbm.nosuch"), objects as "PATH.*", at most
 * 40 named. */
static char *known_keys(JsonObject *res, const char *figure)
{
    char **parts = g_strsplit(figure, ".", -1);
    GString *prefix = g_string_new(NULL), *out = g_string_new(NULL);
    JsonObject *o = res;
    for (guint i = 0; parts[i] && parts[i + 1] && json_object_has_member(o, parts[i]); i++) {
        JsonNode *next = json_object_get_member(o, parts[i]);
        if (!JSON_NODE_HOLDS_OBJECT(next))
            break;
        o = json_node_get_object(next);
        g_string_append_printf(prefix, "%s.", parts[i]);
    }
    if (!prefix->len && !json_object_has_member(o, "status"))
        g_string_append(out, "status"); /* the point's, where its results hold none */
    GList *names = json_object_get_members(o);
    guint shown = out->len > 0, total = shown;
    for (GList *l = names; l; l = l->next, total++) {
        if (shown >= 40)
            continue;
        bool object = JSON_NODE_HOLDS_OBJECT(json_object_get_member(o, l->data));
        g_string_append_printf(out, "%s%s%s%s", out->len ? ", " : "", prefix->str, (const char *)l->data,
                               object ? ".*" : "");
        shown++;
    }
    if (total > shown)
        g_string_append_printf(out, " and %u more", total - shown);
    g_list_free(names);
    g_strfreev(parts);
    g_string_free(prefix, TRUE);
    return g_string_free(out, FALSE);
}

/* A figure the experiment names that no point's results hold, where one
 * point's results (res) show the keys: an error naming the figures' line and
 * the keys near it ([output] figures = nosuch was a warning and an empty
 * column, exit 0). The runner's default figures are not checked here. */
static bool figure_unknown(const strata_sweep_ctx *ctx, const gboolean *seen, JsonObject *res, GError **err)
{
    const strata_experiment *e = ctx->exp;
    const char *const *figures = strata_experiment_figures(e);
    if (!res || !strata_experiment_figures_where(e))
        return false;
    for (guint f = 0; figures[f]; f++) {
        if (seen[f])
            continue;
        char *known = known_keys(res, figures[f]);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: figure '%s' is in no point's results: expected a "
                    "key they hold, such as %s (the points are kept in %s/points: correct figures and run again to "
                    "write the table)", strata_experiment_figures_where(e), figures[f], known, ctx->out_dir);
        g_free(known);
        return true;
    }
    return false;
}

bool strata_sweep_write_table(const strata_sweep_ctx *ctx, strata_sweep_stats *stats, char ***missing,
                              GError **err)
{
    const strata_experiment *e = ctx->exp;
    const char *const *figures = strata_experiment_figures(e);
    guint n_fig = g_strv_length((char **)figures);
    gboolean *seen = g_new0(gboolean, n_fig);
    *missing = NULL;
    stats->oom = 0;

    GString *csv = g_string_new(NULL);
    for (guint i = 0; i < strata_experiment_axis_count(e); i++) {
        csv_field(csv, strata_experiment_axis_name(e, i));
        g_string_append_c(csv, ',');
    }
    for (guint f = 0; f < n_fig; f++) {
        csv_field(csv, figures[f]);
        g_string_append_c(csv, f + 1 < n_fig ? ',' : '\n');
    }

    JsonBuilder *b = strata_json_object_begin();
    begin_meta(b, e);
    strata_json_open_array(b, "rows");

    bool ok = true;
    JsonObject *example = NULL; /* the first point's results, for figure_unknown */
    uint64_t n = strata_experiment_point_count(e);
    for (uint64_t p = 0; p < n && ok; p++) {
        char *path = strata_sweep_point_json_path(ctx, p);
        JsonParser *parser = json_parser_new();
        GError *inner = NULL;
        if (!json_parser_load_from_file(parser, path, &inner) || !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read the point's results: %s", path,
                        inner ? inner->message : "not a JSON object");
            g_clear_error(&inner);
            ok = false;
        } else {
            JsonObject *pt = json_node_get_object(json_parser_get_root(parser));
            JsonNode *rn = json_object_get_member(pt, "results");
            JsonObject *res = rn && JSON_NODE_HOLDS_OBJECT(rn) ? json_node_get_object(rn) : NULL;
            if (res && !example)
                example = json_object_ref(res);
            const char *status = json_object_get_string_member_with_default(pt, "status", "ok");
            if (strcmp(status, "oom") == 0)
                stats->oom++;
            json_builder_begin_object(b);
            for (guint i = 0; i < strata_experiment_axis_count(e); i++) {
                const char *v = strata_experiment_axis_value(e, i, strata_experiment_point_value(e, p, i));
                csv_field(csv, v);
                g_string_append_c(csv, ',');
                json_builder_set_member_name(b, strata_experiment_axis_name(e, i));
                json_builder_add_string_value(b, v);
            }
            for (guint f = 0; f < n_fig; f++) {
                JsonNode *node = strcmp(figures[f], "status") == 0 ? json_object_get_member(pt, "status")
                                                                    : lookup(res, figures[f]);
                if (node && JSON_NODE_HOLDS_VALUE(node))
                    seen[f] = TRUE;
                char *text = node_text(node);
                csv_field(csv, text);
                g_free(text);
                g_string_append_c(csv, f + 1 < n_fig ? ',' : '\n');
                json_builder_set_member_name(b, figures[f]);
                add_node(b, node);
            }
            json_builder_set_member_name(b, "point");
            json_builder_add_int_value(b, (gint64)p);
            json_builder_set_member_name(b, "timeline");
            add_node(b, json_object_get_member(pt, "timeline"));
            json_builder_end_object(b);
        }
        g_object_unref(parser);
        g_free(path);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    g_object_unref(b);

    if (ok && figure_unknown(ctx, seen, example, err))
        ok = false;
    if (example)
        json_object_unref(example);
    if (ok) {
        char *csv_path = g_build_filename(ctx->out_dir, "results.csv", NULL);
        char *json_path = g_build_filename(ctx->out_dir, "results.json", NULL);
        ok = strata_write_file_atomic_in(ctx->outs, csv_path, csv->str, csv->len, err) &&
             strata_json_write_file(ctx->outs, json_path, root, err);
        g_free(csv_path);
        g_free(json_path);
    }
    if (ok && n > 0) {
        GPtrArray *miss = g_ptr_array_new();
        for (guint f = 0; f < n_fig; f++)
            if (!seen[f])
                g_ptr_array_add(miss, g_strdup(figures[f]));
        if (miss->len) {
            g_ptr_array_add(miss, NULL);
            *missing = (char **)g_ptr_array_free(miss, FALSE);
        } else {
            g_ptr_array_unref(miss);
        }
    }
    json_node_unref(root);
    g_string_free(csv, TRUE);
    g_free(seen);
    return ok;
}
