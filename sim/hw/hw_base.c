/*
 * hw_base.c: derived hardware files. A file whose [hardware] names a
 * `base =` is that base file with the derived file's keys set over it, so a
 * file states only what differs (a validation/hw file over a configs/hw file).
 *
 * Invariants: one level only (a base names no base itself), so a key is
 * replaced at most once; a derived file changes values and adds no group
 * (no memory, link or unit the base lacks) but the tiers that join
 * devices: an [interconnect] (a node is its device's file and the
 * interconnect between the devices) and a [network] (a cluster is its
 * node's file and the network between the nodes); every replaced or
 * added key is noted with the derived file's FILE:LINE, so errors name
 * both files.
 */
#include <string.h>
#include "hw/hw_internal.h"
#include "core/error.h"
#include "core/keyfile.h"

/* The path base = rel names beside k's file (g_free). */
static char *base_path(const strata_keyfile *k, const char *rel)
{
    if (g_path_is_absolute(rel))
        return g_strdup(rel);
    char *dir = g_path_get_dirname(strata_keyfile_origin(k));
    char *path = g_build_filename(dir, rel, NULL);
    g_free(dir);
    return path;
}

char *strata_hw_base_path(const char *path)
{
    if (!path || !g_file_test(path, G_FILE_TEST_IS_REGULAR)) /* a FIFO stays for the load to read once */
        return NULL;
    strata_keyfile *k = strata_keyfile_load(path, "hardware file", "hardware", STRATA_KEYFILE_INLINE_COMMENTS, NULL);
    char *rel = k ? strata_keyfile_string(k, "hardware", "base") : NULL;
    char *base = rel && *g_strstrip(rel) ? base_path(k, rel) : NULL;
    g_free(rel);
    strata_keyfile_free(k);
    return base;
}

strata_keyfile *hw_resolve_base(strata_keyfile *k, GError **err)
{
    if (!k || !strata_keyfile_has_key(k, "hardware", "base"))
        return k;
    char *where = strata_keyfile_where(k, "hardware", "base");
    char *rel = strata_keyfile_string(k, "hardware", "base");
    strata_keyfile *base = NULL;
    if (!rel || !*g_strstrip(rel))
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [hardware] base: expected a hardware file", where);
    else {
        char *path = base_path(k, rel);
        GError *e = NULL;
        base = strata_keyfile_load(path, "hardware file", "hardware", STRATA_KEYFILE_INLINE_COMMENTS, &e);
        if (!base)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [hardware] base: %s", where, e->message);
        else if (strata_keyfile_has_key(base, "hardware", "base")) {
            char *bw = strata_keyfile_where(base, "hardware", "base");
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: [hardware] base: %s names a base itself (%s); one level only", where, path, bw);
            g_free(bw);
            strata_keyfile_free(base);
            base = NULL;
        }
        g_clear_error(&e);
        g_free(path);
    }
    gsize n = 0;
    char **groups = base ? strata_keyfile_groups(k, &n) : NULL;
    if (base)
        strata_keyfile_note_derived_file(base, strata_keyfile_origin(k));
    for (gsize g = 0; base && g < n; g++) {
        if (!strata_keyfile_has_group(base, groups[g]) && !g_str_has_prefix(groups[g], "network ") &&
            !g_str_has_prefix(groups[g], "interconnect ")) {
            char *gw = strata_keyfile_where(k, groups[g], NULL);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: [%s] is not in the base file %s (a file with base = changes its groups' keys)", gw,
                        groups[g], strata_keyfile_origin(base));
            g_free(gw);
            strata_keyfile_free(base);
            base = NULL;
            break;
        }
        if (base && !strata_keyfile_has_group(base, groups[g])) { /* a tier the derived file adds */
            char *gw = strata_keyfile_where(k, groups[g], NULL);
            strata_keyfile_note_derived_group(base, groups[g], gw);
            g_free(gw);
        }
        char **keys = strata_keyfile_keys(k, groups[g], NULL);
        for (guint i = 0; base && keys && keys[i]; i++) {
            if (strcmp(groups[g], "hardware") == 0 && strcmp(keys[i], "base") == 0)
                continue;
            char *v = strata_keyfile_value(k, groups[g], keys[i]);
            char *note = strata_keyfile_where(k, groups[g], keys[i]);
            strata_keyfile_set_derived(base, groups[g], keys[i], v, note);
            g_free(note);
            g_free(v);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    g_free(rel);
    g_free(where);
    strata_keyfile_free(k);
    return base;
}
