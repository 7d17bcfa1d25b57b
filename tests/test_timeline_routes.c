/*
 * test_timeline_routes.c: a copy's span carries its route, and the
 * timeline resolves the route to its links, with no cap on their number
 * (issue 25). On configs/hw/tpu-v5e-256.ini (1,314 links, 512 of them ICI)
 * a generated all-gather over all 256 chips moves bytes over every ICI
 * link of the ring; each link that carries bytes (the results JSON) must
 * have X events on its own track of the timeline's "links" process, and
 * no copy may fall back to a track named after its memories ("A->B").
 * Through the CLI, as a user runs it: `strata gen collective`, then
 * `strata run --json --timeline --collectives phases` (every device
 * simulated: the group is the torus' 16 x 16, whose symmetry leaves one
 * class by default, and then only the representative's links have
 * copies on the timeline).
 */
#include <json-glib/json-glib.h>
#include <string.h>
#include "testutil.h"

enum { PID_LINKS = 2 };

/* "pcie #2" -> "pcie": the track a lane belongs to. */
static char *track_name(const char *lane)
{
    const char *hash = strstr(lane, " #");
    return hash ? g_strndup(lane, (gsize)(hash - lane)) : g_strdup(lane);
}

/* Per track of the "links" process: how many X events it holds. */
static GHashTable *link_track_events(const char *path)
{
    JsonParser *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, path, &err), "%s", err ? err->message : "?");
    JsonArray *events = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "traceEvents");
    GHashTable *lanes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free); /* tid -> track */
    GHashTable *counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(events); i++) {
        JsonObject *e = json_array_get_object_element(events, i);
        if (json_object_get_int_member(e, "pid") != PID_LINKS)
            continue;
        const char *ph = json_object_get_string_member(e, "ph");
        gint64 tid = json_object_get_int_member(e, "tid");
        if (strcmp(ph, "M") == 0 && strcmp(json_object_get_string_member(e, "name"), "thread_name") == 0) {
            const char *lane = json_object_get_string_member(json_object_get_object_member(e, "args"), "name");
            char *track = track_name(lane);
            g_hash_table_insert(lanes, GINT_TO_POINTER((gint)tid), track);
            if (!g_hash_table_contains(counts, track))
                g_hash_table_insert(counts, g_strdup(track), GUINT_TO_POINTER(0));
        } else if (strcmp(ph, "X") == 0) {
            const char *track = g_hash_table_lookup(lanes, GINT_TO_POINTER((gint)tid));
            ck_assert_msg(track != NULL, "an X event on tid %" G_GINT64_FORMAT " before its thread_name", tid);
            guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, track));
            g_hash_table_insert(counts, g_strdup(track), GUINT_TO_POINTER(n + 1));
        }
    }
    g_hash_table_destroy(lanes);
    g_object_unref(parser);
    return counts;
}

START_TEST(every_link_with_bytes_has_its_own_track_on_a_256_chip_pod)
{
    char *dir = strata_test_temp_dir();
    char *trace = g_build_filename(dir, "ag256.trace", NULL);
    char *json = g_build_filename(dir, "ag256.json", NULL);
    char *timeline = g_build_filename(dir, "ag256.timeline.json", NULL);
    char *hw = strata_test_source_path("configs/hw/tpu-v5e-256.ini");
    strata_cli_result g = strata_test_cli("gen", "collective", "op=all-gather", "bytes=256KiB", "devices=256",
                                          "-o", trace, NULL);
    ck_assert_msg(g.status == 0, "gen: %s", g.err);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", json, "--timeline",
                                          timeline, "--collectives", "phases", NULL);
    ck_assert_msg(r.status == 0, "run: %s", r.err);

    JsonParser *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(parser, json, &err), "%s", err ? err->message : "?");
    JsonObject *links = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "links");
    GHashTable *tracks = link_track_events(timeline);

    GList *names = json_object_get_members(links);
    guint n_links = 0, with_bytes = 0, ici = 0, past_64 = 0;
    for (GList *l = names; l; l = l->next, n_links++) {
        const char *name = l->data;
        gint64 bytes = json_object_get_int_member(json_object_get_object_member(links, name), "bytes");
        ck_assert_msg(g_hash_table_contains(tracks, name), "link %s has no track", name);
        if (bytes == 0)
            continue;
        with_bytes++;
        ici += g_str_has_prefix(name, "ici:");
        past_64 += n_links >= 64;
        ck_assert_msg(GPOINTER_TO_UINT(g_hash_table_lookup(tracks, name)) > 0,
                      "link %s carries %" G_GINT64_FORMAT " B but its track has no copy", name, bytes);
    }
    /* The rings over 256 chips (xla's bidir-torus along both of the
     * torus' dimensions) cross its 512 ICI links, far past the 64 a mask
     * could name. */
    ck_assert_uint_eq(with_bytes, 512);
    ck_assert_uint_eq(ici, with_bytes);
    ck_assert_uint_ge(past_64, with_bytes - 64);
    /* No copy fell back to a track named after its memories. */
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, tracks);
    while (g_hash_table_iter_next(&it, &key, NULL))
        ck_assert_msg(strstr(key, "->") == NULL, "a copy fell back to the track '%s'", (const char *)key);

    g_list_free(names);
    g_hash_table_destroy(tracks);
    g_object_unref(parser);
    g_free(g.out);
    g_free(g.err);
    g_free(r.out);
    g_free(r.err);
    g_free(hw);
    g_free(trace);
    g_free(json);
    g_free(timeline);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline_routes");
    TCase *tc = tcase_create("pod");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, every_link_with_bytes_has_its_own_track_on_a_256_chip_pod);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
