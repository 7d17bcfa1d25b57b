/*
 * test_coll_tables.c: the two tables of collectives, listed and checked
 * row by row: the collective algorithms (models/collective/coll_algo.h:
 * name, the kinds each serves, layout, folding, hooks) and the collective
 * implementations (hw/coll_impl.h: name, parameter block, hooks). Every
 * row is complete and found by its name; an unknown name is refused with a
 * message that lists the known ones (the table's, on its own, through
 * `strata check` without a hardware model, and in a hardware file); every
 * implementation's pick, for every collective, is a row of the
 * algorithms' table that serves it.
 */
#include <string.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "core/mesh.h"
#include "hw/coll_impl.h"

/* The table as docs/extending.md and traces/FORMAT.md list it: each row's
 * name and the kinds it serves, in the table's order. */
#define AR "all-reduce"
#define REDUCING "all-reduce all-gather reduce-scatter"
static const struct {
    const char *name, *kinds;
    strata_coll_layout layout;
    bool folds, tuned;
} algos[] = {
    {"ring", REDUCING, STRATA_COLL_FLAT, true, false},
    {"bidir-ring", REDUCING, STRATA_COLL_FLAT, true, false},
    {"tree", AR, STRATA_COLL_FLAT, false, false},
    {"direct", REDUCING " all-to-all collective-permute", STRATA_COLL_FLAT, false, false},
    {"torus", REDUCING, STRATA_COLL_DIMS, true, false},
    {"nccl-ring", AR, STRATA_COLL_FLAT, false, false},
    {"nccl", REDUCING " all-to-all", STRATA_COLL_FLAT, false, true},
    {"bidir-torus", REDUCING, STRATA_COLL_DIMS, true, false},
    {"nccl-tree", AR, STRATA_COLL_FLAT, false, true},
    {"nccl-nvls-tree", AR, STRATA_COLL_FLAT, false, true},
    {"nccl-pat", "all-gather reduce-scatter", STRATA_COLL_FLAT, false, true},
    {"rccl", REDUCING " all-to-all", STRATA_COLL_FLAT, false, true},
    {"hierarchical", AR, STRATA_COLL_FLAT, true, false},
};

/* "all-reduce all-gather": the kinds a row serves (g_free). */
static char *kinds_of(const strata_coll_algo *a)
{
    GString *s = g_string_new(NULL);
    for (unsigned k = 0; k < STRATA_OP__COUNT; k++)
        if (strata_coll_algo_serves(a, (strata_op_kind)k))
            g_string_append_printf(s, "%s%s", s->len ? " " : "", strata_op_kind_name((strata_op_kind)k));
    return g_string_free(s, FALSE);
}

static bool is_name(const char *s)
{
    bool ok = *s >= 'a' && *s <= 'z';
    for (; ok && *s; s++)
        ok = (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-';
    return ok;
}

START_TEST(algorithms_listed_complete_and_found_by_name)
{
    const strata_coll_algo *const *rows = strata_coll_algos();
    size_t n = 0;
    for (; rows[n]; n++) {
        const strata_coll_algo *a = rows[n];
        ck_assert_uint_lt(n, G_N_ELEMENTS(algos));
        char *kinds = kinds_of(a);
        printf("algorithm %-12s %s%s%s\n", a->name, kinds, a->folds ? " (folds)" : "", a->ops->tune ? " (tuned)" : "");
        ck_assert_str_eq(a->name, algos[n].name);
        ck_assert_str_eq(kinds, algos[n].kinds);
        ck_assert(a->layout == algos[n].layout && a->folds == algos[n].folds);
        ck_assert(is_name(a->name));
        ck_assert_ptr_nonnull(a->ops);
        ck_assert_ptr_nonnull(a->ops->schedule);
        ck_assert((a->ops->tune != NULL) == algos[n].tuned);
        ck_assert((a->kinds & ~STRATA_OPK_COLLECTIVE) == 0 && a->kinds != 0);
        ck_assert_ptr_eq(strata_coll_algo_find(a->name), a);
        ck_assert_str_eq(strata_coll_algo_choices[n + 1], a->name);
        g_free(kinds);
    }
    ck_assert_uint_eq(n, G_N_ELEMENTS(algos));
    ck_assert_str_eq(strata_coll_algo_choices[0], "auto");
    ck_assert_ptr_null(strata_coll_algo_choices[n + 1]);
    ck_assert_ptr_null(strata_coll_algo_find("fast"));
    ck_assert_ptr_null(strata_coll_algo_find(NULL));
}
END_TEST

START_TEST(an_unknown_or_unserving_algorithm_lists_the_known_ones)
{
    char *why = NULL;
    ck_assert_ptr_nonnull(strata_coll_algo_lookup(STRATA_OP_ALL_GATHER, "bidir-torus", &why));
    ck_assert_ptr_null(why);
    ck_assert_ptr_null(strata_coll_algo_lookup(STRATA_OP_ALL_GATHER, "fast", &why));
    ck_assert_str_eq(why, "expected algo= one of ring, bidir-ring, direct, torus, nccl, bidir-torus, nccl-pat, rccl for all-gather, "
                          "got 'fast'");
    g_free(why);
    ck_assert_ptr_null(strata_coll_algo_lookup(STRATA_OP_ALL_TO_ALL, "tree", &why));
    ck_assert_str_eq(why, "expected algo= one of direct, nccl, rccl for all-to-all, got 'tree'");
    g_free(why);
    /* strata check without --hw: the binder asks the table, at the op's line */
    char *path = strata_test_write_temp("coll-XXXXXX.trace", "strata-trace 1\noption mesh=data:8\nalloc s 64\n"
                                                             "alloc r 512\nall-gather r s axis=data algo=fast\n");
    strata_cli_result r = strata_test_cli("check", "--trace", path, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, ":5: expected algo= one of ring, bidir-ring, direct, torus, nccl, bidir-torus, "
                                "nccl-pat, rccl for all-gather, got 'fast'"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(path);
}
END_TEST

START_TEST(implementations_listed_complete_and_found_by_name)
{
    static const char *const names[] = {"nccl", "rccl", "xla", "ideal"};
    const strata_coll_impl *const *rows = strata_coll_impls();
    GHashTable *keys = g_hash_table_new(g_str_hash, g_str_equal);
    size_t n = 0;
    for (; rows[n]; n++) {
        const strata_coll_impl *i = rows[n];
        printf("implementation %-6s keys:", i->name);
        ck_assert_uint_lt(n, G_N_ELEMENTS(names));
        ck_assert_str_eq(i->name, names[n]);
        ck_assert_ptr_eq(strata_coll_impl_find(i->name), i);
        ck_assert((i->keys != NULL) == (i->load != NULL)); /* a block is read by its row */
        for (const strata_coll_impl_key *k = i->keys; k && k->name; k++) {
            printf(" %s%s", k->name, k->required ? "" : " (optional)");
            ck_assert_ptr_nonnull(k->description);
            ck_assert_msg(g_hash_table_add(keys, (gpointer)k->name), "%s: declared twice", k->name);
        }
        printf("\n");
    }
    ck_assert_uint_eq(n, G_N_ELEMENTS(names));
    ck_assert_ptr_nonnull(strata_coll_impl_find("ideal")->pick); /* every pick falls back on it */
    ck_assert_ptr_null(strata_coll_impl_find("mpi"));
    char *listed = strata_coll_impl_names();
    ck_assert_str_eq(listed, "nccl, rccl, xla or ideal");
    g_free(listed);
    g_hash_table_destroy(keys);
}
END_TEST

/* Every implementation's pick, for every collective over one axis and over
 * two, names an algorithm that serves it. */
START_TEST(every_pick_is_an_algorithm_that_serves_the_op)
{
    static const char *const models[][2] = {{"a100-8", "data:8"}, {"tpu-v5e-16", "data:4,model:4"},
                                            {"test-ring8", "data:8"}};
    for (size_t m = 0; m < G_N_ELEMENTS(models); m++) {
        strata_hw *hw = strata_test_load_hw(models[m][0], NULL);
        strata_mesh *mesh = strata_mesh_parse(models[m][1], NULL);
        uint32_t all = (1u << strata_mesh_axis_count(mesh)) - 1;
        for (unsigned k = STRATA_OP_ALL_REDUCE; k <= STRATA_OP_COLLECTIVE_PERMUTE; k++)
            for (uint32_t mask = 1; mask <= all; mask++) {
                const char *name = strata_coll_impl_pick(hw, (strata_op_kind)k, mesh, mask);
                const strata_coll_algo *a = strata_coll_algo_find(name);
                ck_assert_msg(a && strata_coll_algo_serves(a, (strata_op_kind)k), "%s: %s picks '%s' for %s",
                              models[m][0], strata_hw_coll_impl(hw)->name, name,
                              strata_op_kind_name((strata_op_kind)k));
            }
        strata_mesh_free(mesh);
        strata_hw_free(hw);
    }
}
END_TEST

/* An unknown implementation lists the known ones; a row's key with another
 * row chosen, a chosen row's missing key, and nvls without a switch are
 * refused at their line. */
START_TEST(an_unknown_implementation_or_key_is_refused_at_its_line)
{
    static const char head[] = "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n[interconnect x]\ntopology = ring\nbandwidth = 1GB/s\n";
    strata_test_hw_text_refused(head, "collectives = mpi\n",
                                "t.ini:11: [interconnect x] collectives: expected nccl, rccl, xla or ideal, got 'mpi'");
    strata_test_hw_text_refused(head, "collectives = xla\nnvls = true\n",
                                "t.ini:12: [interconnect x] nvls: expected only with collectives = nccl");
    /* NVLink SHARP is the switch's: nvls = true on a ring (issue 46) */
    strata_test_hw_text_refused(head,
                                "collectives = nccl\nnccl_arch = hopper\nnccl_channels = 4\n"
                                "nccl_channel_bandwidth = 1GB/s\nnvls = true\n",
                                "t.ini:15: [interconnect x] nvls: nvls = true: expected topology = switch (NVLink "
                                "SHARP reduces and multicasts in the switch), got topology = ring");
    strata_test_hw_text_refused(head, "nccl_channels = 4\n",
                                "[interconnect x] nccl_channels: expected only with collectives = nccl");
    strata_test_hw_text_refused(head, "collectives = nccl\nnccl_arch = hopper\n",
                                "[interconnect x] collectives: collectives = nccl: expected nccl_channels too");
    strata_test_hw_text_refused(head, "rccl_gcn = gfx942\n", "[interconnect x] unknown key 'rccl_gcn' (known: "
                                                              "memory, topology, dims, bandwidth, latency, "
                                                              "links_per_chip, wraparound, duplex, domain, collectives, "
                                                              "nccl_arch, nccl_channels, nccl_channel_bandwidth, "
                                                              "nvls, nccl_cpu, nccl_net_path, "
                                                              "nccl_algo, nccl_proto, nccl_version, "
                                                              "nccl_min_ctas, nccl_max_nchannels, nccl_max_ctas, nccl_tuner_plugin, "
                                                              "nccl_nic_group, nccl_net_latency, "
                                                              "nccl_buffsize, nccl_nvls_chunksize, nccl_nvlstree_max_chunksize, "
                                                              "nccl_p2p_net_chunksize, nccl_net_plugin, nccl_ring_wait, nccl_net_protocol, "
                                                              "nccl_simple_sync, nccl_gdr_flush, nccl_ib_link_layer, nccl_ib_mtu, "
                                                              "nccl_ranks_per_process, nccl_host_launch, nccl_host_plan, nccl_host_channel, "
                                                              "nccl_host_set_device, nccl_host_stream_op, nccl_host_p2p_call, nccl_launch, "
                                                              "nccl_host_overlap, nccl_host_call, "
                                                              "rccl_channels, rccl_channel_bandwidth, rccl_rings, "
                                                              "rccl_net_rings, msccl, rccl_version, rccl_arch, rccl_ll128, rccl_cpu, rccl_algo, rccl_proto, "
                                                              "rccl_gdr_flush, rccl_mscclpp, rccl_scratch_reclaim, rccl_ranks_per_process, "
                                                              "rccl_host_launch, rccl_host_plan, rccl_host_channel, "
                                                              "rccl_host_set_device, rccl_host_stream_op, rccl_host_p2p_call, rccl_launch, "
                                                              "rccl_host_overlap, rccl_host_call, "
                                                              "source)");
}
END_TEST

static Suite *coll_tables_suite(void)
{
    Suite *s = suite_create("coll_tables");
    TCase *tc = tcase_create("coll_tables");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, algorithms_listed_complete_and_found_by_name);
    tcase_add_test(tc, an_unknown_or_unserving_algorithm_lists_the_known_ones);
    tcase_add_test(tc, implementations_listed_complete_and_found_by_name);
    tcase_add_test(tc, every_pick_is_an_algorithm_that_serves_the_op);
    tcase_add_test(tc, an_unknown_implementation_or_key_is_refused_at_its_line);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(coll_tables_suite()); }
