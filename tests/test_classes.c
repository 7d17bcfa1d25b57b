/*
 * test_classes.c: classes of equivalent devices (spmd/spmd_classes.h,
 * --collectives classes).
 *
 * Which symmetries are found: a ring of 8 on a ring of 8 (every rotation
 * maps it onto itself: one class, data+1); NVLS over 64 GPUs of one switch
 * in 8 hosts (the schedule is a rotation's, the hosts are no part of it:
 * one class); a torus of 4x4 with a mesh on its axes (both rotations),
 * and of 2x8 (data+1 turns the links of the axis of 2 around);
 * the mesh without wrap-around of tpu-v5e-16 (a rotation maps no link of
 * the far end's: none); and no classes for a program with device=, an
 * option of one memory instance, an explicit instance, or no mesh.
 *
 * Hosts (issue 40's MoE step): a program that offloads to its hosts'
 * memories keeps classes whose representatives are whole hosts, and they
 * give the steps' figures (a host's port shared by its devices, by hand).
 *
 * Approximate classes (--collectives fast): the row-by-row ring of 16 on
 * the 4x4 torus has none exactly, 4 approximately (data+4).
 *
 * Clusters (issue 40): the network tier takes part (NICs, rails' leaves, a
 * spine whose uplinks a symmetry keeps: their weight, derived by hand),
 * and lanes permute with the devices (NCCL's tree, whose tree 1 is tree
 * 0's mirror: 4 classes for 8 nodes of 8); classes equal steps.
 *
 * What they give: on symmetric cases every figure of the full run (in
 * phases) comes out of the representatives: the makespan, every
 * collective's time, every memory's peaks and port bytes and every link's
 * bytes, to 1e-9, from one device's ops per class; every device's streams
 * are listed.
 */
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include "spmd/spmd.h"
#include "testutil.h"
#include "trace/reader.h"

/* The classes found for `program` on `hw` (overrides NULL-terminated or
 * NULL): their count (0: none) and the symmetry's text. */
static uint32_t classes_of(const char *hw_name, const char *const *overrides, const char *program,
                           strata_spmd_collectives mode, char **text, bool *exact)
{
    strata_hw *hw = strata_test_load_hw(hw_name, overrides);
    char *path = strata_test_write_temp("classes-XXXXXX.trace", program);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src, "%s", err ? err->message : "");
    strata_source *x = strata_spmd_expand_as(src, hw, mode);
    const strata_spmd_classes *c = strata_spmd_classes_of(x);
    uint32_t n = c ? strata_spmd_classes_count(c) : 0;
    *text = g_strdup(c ? strata_spmd_classes_describe(c) : "");
    *exact = !c || strata_spmd_classes_exact(c);
    if (c)
        for (uint32_t d = 0; d < strata_spmd_classes_devices(c); d++) {
            uint32_t r = strata_spmd_class_rep(c, d);
            ck_assert_uint_le(r, d);
            ck_assert_uint_eq(strata_spmd_class_rep(c, r), r);
        }
    strata_source_free(x);
    strata_hw_free(hw);
    g_unlink(path);
    g_free(path);
    return n;
}

/* A 2D torus all-reduce over the 4x4 mesh of test-torus16, and a ring along one axis. */
#define TORUS                                                                                                      \
    "strata-trace 1\noption mesh=data:4,model:4\nalloc buf 1MiB\nall-reduce buf axis=data,model algo=torus\n"      \
    "all-reduce buf axis=model\nfree buf\n"
/* A torus all-gather along an axis of 2 of test-torus16 resized to 2x8,
 * and an all-reduce along the other axis. */
#define TORUS2                                                                                                     \
    "strata-trace 1\noption mesh=data:2,model:8\nalloc part 512KiB\nalloc buf 1MiB\n"                         \
    "all-gather buf part axis=data\nall-reduce buf axis=model\nfree buf\nfree part\n"
/* A ring of 16 laid row by row over test-torus16's 4x4: its rows' ends and
 * its close cross two links, routed (ties broken by the site graph) so
 * that no rotation moves every route onto its image's; data+4 (a torus
 * translation) moves its steps. */
#define RING16 "strata-trace 1\noption mesh=data:16\nalloc buf 16MiB\nall-reduce buf axis=data\nfree buf\n"
/* An all-reduce over two nodes of 8 GPUs (default: NCCL's choice; an
 * algo= may follow), and a hierarchical one over four. */
#define CLUSTER16 "strata-trace 1\noption mesh=data:16\nalloc buf 1MiB\nall-reduce buf axis=data"
#define CLUSTER32 "strata-trace 1\noption mesh=data:32\nalloc buf 1MiB\nall-reduce buf axis=data algo=hierarchical\nfree buf\n"
#define CLUSTER64 "strata-trace 1\noption mesh=data:64\nalloc buf 1MiB\nall-reduce buf axis=data\nfree buf\n"
/* XLA's all-reduce over a 3x5 torus (bidir-torus over both axes) of
 * 1,000,003 bytes: its 4 parts and their chunks over 3 and 5 ranks differ
 * by a byte from rank to rank, so no rotation maps its steps exactly. */
#define NEAR35                                                                                                     \
    "strata-trace 1\noption mesh=data:3,model:5\nalloc g 1000003 dtype=uint8\n"                                   \
    "all-reduce g axis=data,model algo=bidir-torus\nfree g\n"
#define RING_ALL_REDUCE "strata-trace 1\noption mesh=data:8\nalloc buf 1MiB\nall-reduce buf axis=data\nfree buf\n"

START_TEST(test_found)
{
    static const char *const switch64[] = {"hardware.devices=64", "hardware.devices_per_host=8", NULL};
    static const char *const torus2x8[] = {"interconnect.ici.dims=2x8", NULL};
    static const char *const torus3x5[] = {"hardware.devices=15", "hardware.devices_per_host=5",
                                           "interconnect.ici.dims=3x5", NULL};
    static const char *const spine32[] = {"hardware.devices=32", "network.ib.topology=switch",
                                          "network.ib.hosts_per_leaf=2", NULL};
    static const char *const nodes8[] = {"hardware.devices=64", NULL};
    static const struct {
        const char *hw;
        const char *const *set;
        const char *program;
        uint32_t classes;
        const char *symmetry;
        strata_spmd_collectives mode;
        bool exact;
    } cases[] = {
        {"test-ring8", NULL, RING_ALL_REDUCE, 1, "data+1", STRATA_SPMD_CLASSES, true},
        {"test-switch8", NULL, RING_ALL_REDUCE, 1, "data+1", STRATA_SPMD_CLASSES, true},
        {"dgx-h100", switch64,
         "strata-trace 1\noption mesh=data:64\nalloc buf 1MiB\nall-reduce buf axis=data\nfree buf\n", 1, "data+1", STRATA_SPMD_CLASSES, true},
        {"test-torus16", NULL, TORUS, 1, "data+1 model+1", STRATA_SPMD_CLASSES, true},
        {"test-torus16", torus2x8, TORUS2, 1, "data+1 model+1", STRATA_SPMD_CLASSES, true},
        {"tpu-v5e-16", NULL,
         "strata-trace 1\noption mesh=data:4,model:4\nalloc buf 1MiB\nall-reduce buf axis=model\nfree buf\n", 0, "", STRATA_SPMD_CLASSES, true},
        {"test-ring8", NULL,
         "strata-trace 1\noption mesh=data:8\nalloc buf 1MiB device=3\nfree buf device=3\n", 0, "", STRATA_SPMD_CLASSES, true},
        {"test-ring8", NULL,
         "strata-trace 1\noption mesh=data:8\noption padding_bytes.hbm@7=4096\nalloc buf 1MiB\nfree buf\n", 0, "", STRATA_SPMD_CLASSES, true},
        {"test-ring8", NULL, "strata-trace 1\noption mesh=data:8\nalloc buf 1MiB memory=hbm@2\nfree buf\n", 0, "", STRATA_SPMD_CLASSES, true},
        {"test-ring8", NULL, "strata-trace 1\nalloc buf 1MiB\nfree buf\n", 0, "", STRATA_SPMD_CLASSES, true},
        {"test-torus16", NULL, RING16, 0, "", STRATA_SPMD_CLASSES, true},
        {"test-torus16", NULL, RING16, 4, "data+4", STRATA_SPMD_FAST, false},
        {"test-ring8", NULL, RING_ALL_REDUCE, 1, "data+1", STRATA_SPMD_FAST, true},
        /* chunks that differ by a byte between ranks: no exact symmetry;
         * FAST takes the rotations that map every step onto one of at
         * most a byte more or less a round: one class, approximate */
        {"test-torus16", torus3x5, NEAR35, 0, "", STRATA_SPMD_CLASSES, true},
        {"test-torus16", torus3x5, NEAR35, 1, "data+1 model+1", STRATA_SPMD_FAST, false},
        /* two nodes of 8 on rails: NCCL's tree (16 channels, channel c's
         * chains from local rank c mod 8; c < 8 tree 0, node 0 its root)
         * maps onto itself rotating the local ranks, channel c's lanes
         * onto channel c + 1's (of the same tree); and swapping the nodes
         * (a rotation of 2 nodes is their mirror) maps tree 0 onto tree
         * 1, channel c's lanes onto channel c + 8's: one class */
        {"h100-2x8-ib", NULL, CLUSTER16 "\nfree buf\n", 1, "data+8~lanes data+1/8~lanes", STRATA_SPMD_CLASSES, true},
        /* eight nodes of 8: no rotation of the nodes maps the binary
         * tree; its mirror (node k to 7 - k) maps tree 0 onto tree 1:
         * 64 / (8 x 2) = 4 classes, nodes {0, 7}, {1, 6}, {2, 5}, {3, 4} */
        {"h100-16x8-ib", nodes8, CLUSTER64, 4, "data+1/8~lanes data:mirror/8~lanes", STRATA_SPMD_CLASSES, true},
        /* the hierarchical schedule: swapping the nodes maps NICs and
         * rails too (the rails' leaves stay); one class */
        {"h100-2x8-ib", NULL, CLUSTER16 " algo=hierarchical\nfree buf\n", 1, "data+8 data+1/8", STRATA_SPMD_CLASSES, true},
        /* 4 nodes, 2 under each of 2 leaves joined by a spine: data+16
         * swaps the leaves; rotations within nodes keep them and their
         * uplinks (weight 8); rotations of the nodes under one leaf are no
         * symmetry of the hierarchical ring over the nodes */
        {"h100-16x8-ib", spine32, CLUSTER32, 2, "data+16 data+1/8", STRATA_SPMD_CLASSES, true},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *text = NULL;
        bool exact = true;
        uint32_t n = classes_of(cases[i].hw, cases[i].set, cases[i].program, cases[i].mode, &text, &exact);
        ck_assert_msg(n == cases[i].classes, "case %zu (%s): %u classes, expected %u", i, cases[i].hw, n,
                      cases[i].classes);
        ck_assert_str_eq(text, cases[i].symmetry);
        ck_assert_msg(exact == cases[i].exact, "case %zu: exact %d", i, exact);
        g_free(text);
    }
}
END_TEST

/* The weights of the spine case (4 nodes of 8, 2 under each of 2 leaves):
 * G has 16 elements (32 devices, 2 classes); data+16 swaps the leaves and
 * data+1/8 keeps them, so each leaf's uplink has an orbit of 2 links, in
 * each direction, and weight 16 / 2 = 8; a GPU's NIC link (32 in an orbit
 * of its direction: G moves them freely) weighs 1. */
START_TEST(test_link_weights)
{
    static const char *const spine32[] = {"hardware.devices=32", "network.ib.topology=switch",
                                          "network.ib.hosts_per_leaf=2", NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", spine32);
    char *path = strata_test_write_temp("weights-XXXXXX.trace", CLUSTER32);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src, "%s", err ? err->message : "");
    strata_source *x = strata_spmd_expand_as(src, hw, STRATA_SPMD_CLASSES);
    const strata_spmd_classes *c = strata_spmd_classes_of(x);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(strata_spmd_classes_count(c), 2);
    uint32_t uplinks = 0, nics = 0;
    for (uint32_t l = 0; l < strata_hw_link_count(hw); l++) {
        const char *name = strata_hw_link(hw, l)->name;
        bool up = g_str_has_prefix(name, "ib.up"), nic = g_str_has_prefix(name, "ib@");
        for (int f = 0; (up || nic) && f < 2; f++)
            ck_assert_double_eq(strata_spmd_link_weight(c, l, f), up ? 8 : 1);
        uplinks += up;
        nics += nic;
    }
    ck_assert_uint_eq(uplinks, 2);
    ck_assert_uint_eq(nics, 32);
    strata_source_free(x);
    strata_hw_free(hw);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* The figures of one run (--json), by name. */
typedef struct figures {
    JsonParser *parser;
    JsonObject *root;
} figures;

static figures run(const char *dir, const char *trace, const char *hw, const char *const *sets, const char *mode)
{
    char *json = g_strdup_printf("%s/%s.json", dir, mode);
    char *hw_path = strata_test_source_path(hw);
    const char *const fixed[] = {"run", "-q", "--trace", trace, "--hw", hw_path, "--collectives", mode, "--json", json, NULL};
    strata_cli_result r = strata_test_run_cli_sets(fixed, sets);
    ck_assert_msg(r.status == 0, "%s %s: %s", hw, mode, r.err);
    strata_cli_result_clear(&r);
    figures f = {.parser = json_parser_new()};
    ck_assert(json_parser_load_from_file(f.parser, json, NULL));
    f.root = json_node_get_object(json_parser_get_root(f.parser));
    g_free(hw_path);
    g_free(json);
    return f;
}

static void close_to(double a, double b, const char *what, const char *name)
{
    ck_assert_msg(fabs(a - b) <= 1e-9 * fabs(b), "%s %s: classes %.17g, reference %.17g", what, name, a, b);
}

/* Every member `key` of every object of group `group`: the same in a and b. */
static void same_members(const figures *a, const figures *b, const char *group, const char *key)
{
    JsonObject *ga = json_object_get_object_member(a->root, group), *gb = json_object_get_object_member(b->root, group);
    ck_assert_uint_eq(json_object_get_size(ga), json_object_get_size(gb));
    GList *names = json_object_get_members(gb);
    for (GList *n = names; n; n = n->next) {
        ck_assert_msg(json_object_has_member(ga, n->data), "%s: no %s in classes", group, (const char *)n->data);
        if (!key)
            continue;
        close_to(json_object_get_double_member(json_object_get_object_member(ga, n->data), key),
                 json_object_get_double_member(json_object_get_object_member(gb, n->data), key), key, n->data);
    }
    g_list_free(names);
}

/* What agree() compares besides the makespan, collectives and memories. */
enum { LINKS = 1, STREAMS = 2 };

/* Runs trace both ways (with --set each of sets, NULL-terminated, unless
 * NULL): the classes give the reference's (the full run in `ref` mode)
 * figures from fewer ops. Every stream's ops (STREAMS) only where no
 * symmetry permutes the lanes: a device's lane L is then its
 * representative's lane sigma^-1(L), which the rows do not follow. */
static void agree_with(const char *dir, const char *trace, const char *hw, const char *const *sets, const char *mode,
                       const char *ref, unsigned what)
{
    figures c = run(dir, trace, hw, sets, mode), p = run(dir, trace, hw, sets, ref);
    close_to(json_object_get_double_member(c.root, "makespan_s"), json_object_get_double_member(p.root, "makespan_s"),
             "makespan", hw);
    ck_assert_msg(json_object_has_member(c.root, "classes"), "%s: no classes", trace);
    ck_assert_int_lt(json_object_get_int_member(c.root, "ops"), json_object_get_int_member(p.root, "ops"));
    JsonArray *cc = json_object_get_array_member(c.root, "collectives");
    JsonArray *pc = json_object_get_array_member(p.root, "collectives");
    ck_assert_uint_eq(json_array_get_length(cc), json_array_get_length(pc));
    for (guint i = 0; i < json_array_get_length(pc); i++)
        close_to(json_object_get_double_member(json_array_get_object_element(cc, i), "time_s"),
                 json_object_get_double_member(json_array_get_object_element(pc, i), "time_s"), "collective", hw);
    same_members(&c, &p, "memories", "peak_allocated_bytes");
    same_members(&c, &p, "memories", "peak_reserved_bytes");
    same_members(&c, &p, "memories", "port_bytes");
    same_members(&c, &p, "links", what & LINKS ? "bytes" : NULL);
    same_members(&c, &p, "compute", "flops");
    if (what & STREAMS) /* a step schedule has streams (lanes) that phases fold away */
        same_members(&c, &p, "streams", "ops");
    g_object_unref(c.parser);
    g_object_unref(p.parser);
}

static void agree(const char *dir, const char *trace, const char *hw, const char *set, const char *mode, bool links)
{
    const char *const sets[] = {set, NULL};
    agree_with(dir, trace, hw, sets, mode, "phases", STREAMS | (links ? LINKS : 0));
}

static char *gen(const char *dir, const char *name, const char *const *args)
{
    char *trace = g_strdup_printf("%s/%s.trace", dir, name);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "gen");
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, trace);
    g_ptr_array_add(argv, NULL);
    strata_cli_result r = strata_test_run_cli((const char *const *)argv->pdata);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_ptr_array_free(argv, TRUE);
    return trace;
}

START_TEST(test_agrees_with_phases)
{
    char *dir = strata_test_temp_dir();
    static const char *const fsdp[] = {"transformer", "mesh=data:8", "sharding=fsdp", "layers=2", "prefetch=2", NULL};
    static const char *const nvls[] = {"collective", "devices=8", NULL};
    char *t = gen(dir, "fsdp", fsdp);
    agree(dir, t, "configs/hw/test-ring8.ini", NULL, "classes", true);
    agree(dir, t, "configs/hw/test-switch8.ini", NULL, "classes", true);
    g_free(t);
    t = gen(dir, "nvls", nvls);
    agree(dir, t, "configs/hw/dgx-h100.ini", NULL, "classes", true);
    g_free(t);
    t = g_strdup_printf("%s/torus.trace", dir);
    ck_assert(g_file_set_contents(t, TORUS, -1, NULL));
    agree(dir, t, "configs/hw/test-torus16.ini", NULL, "classes", true);
    g_free(t);
    /* a torus axis of 2: data+1 turns each of its links around (both
     * directions one orbit; the quotient carries them one way) */
    t = g_strdup_printf("%s/torus2.trace", dir);
    ck_assert(g_file_set_contents(t, TORUS2, -1, NULL));
    agree(dir, t, "configs/hw/test-torus16.ini", "interconnect.ici.dims=2x8", "classes", true);
    g_free(t);
    /* fast: the ring of 16 row by row (no link carries two of a round's
     * copies: the quotient is the full run's); links report their orbit's */
    t = g_strdup_printf("%s/ring16.trace", dir);
    ck_assert(g_file_set_contents(t, RING16, -1, NULL));
    agree(dir, t, "configs/hw/test-torus16.ini", NULL, "fast", false);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* The sum of member `key` over the objects of group `group`. */
static double sum_members(const figures *f, const char *group, const char *key)
{
    JsonObject *g = json_object_get_object_member(f->root, group);
    double sum = 0;
    GList *names = json_object_get_members(g);
    for (GList *n = names; n; n = n->next)
        sum += json_object_get_double_member(json_object_get_object_member(g, n->data), key);
    g_list_free(names);
    return sum;
}

/* FAST's classes over steps a byte apart (NEAR35): one device's ops give
 * the phases' makespan and collective time of every device to 1e-9 (a
 * byte a round more or less, 20 ps at 50 GB/s, rounded with the round's
 * bytes into one flow, moves no date by a picosecond), every memory's
 * peaks exactly, and the bytes of links and memory ports to a byte per
 * copy (the representative's chunks stand for their images'): the links
 * 28,000,260 against the phases' 28,000,276, the memories' ports
 * 98,000,820 against 98,000,966. */
START_TEST(test_near_bytes_agree_with_phases)
{
    char *dir = strata_test_temp_dir();
    char *t = g_strdup_printf("%s/near35.trace", dir);
    ck_assert(g_file_set_contents(t, NEAR35, -1, NULL));
    static const char *const sets[] = {"hardware.devices=15", "hardware.devices_per_host=5",
                                       "interconnect.ici.dims=3x5", NULL};
    figures f = run(dir, t, "configs/hw/test-torus16.ini", sets, "fast");
    figures p = run(dir, t, "configs/hw/test-torus16.ini", sets, "phases");
    ck_assert_int_eq(json_object_get_int_member(json_object_get_object_member(f.root, "classes"),
                                                "simulated_devices"), 1);
    close_to(json_object_get_double_member(f.root, "makespan_s"), json_object_get_double_member(p.root, "makespan_s"),
             "makespan", "near35");
    JsonArray *fc = json_object_get_array_member(f.root, "collectives");
    JsonArray *pc = json_object_get_array_member(p.root, "collectives");
    ck_assert_uint_eq(json_array_get_length(fc), 1);
    close_to(json_object_get_double_member(json_array_get_object_element(fc, 0), "time_s"),
             json_object_get_double_member(json_array_get_object_element(pc, 0), "time_s"), "collective", "near35");
    same_members(&f, &p, "memories", "peak_allocated_bytes");
    same_members(&f, &p, "memories", "peak_reserved_bytes");
    double fl = sum_members(&f, "links", "bytes"), pl = sum_members(&p, "links", "bytes");
    ck_assert_msg(pl == 28000276 && fl == 28000260, "links' bytes: fast %.0f, phases %.0f", fl, pl);
    double fm = sum_members(&f, "memories", "port_bytes"), pm = sum_members(&p, "memories", "port_bytes");
    ck_assert_msg(fabs(fm - pm) <= 2 * 15 * 24, "ports' bytes: fast %.0f, phases %.0f", fm, pm);
    g_object_unref(f.parser);
    g_object_unref(p.parser);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* Clusters (a scale-out network, issue 40): the classes give the step
 * schedule's figures exactly, the makespan, every collective's time,
 * every memory's peaks and port bytes and every link's bytes (the
 * rails', the spine's uplinks at weight 8 included), from a fraction of
 * the ops: NCCL's tree over two nodes of 8 (2 classes, lanes permuted:
 * the streams' rows are not compared), and a hierarchical all-reduce over
 * four nodes under two leaves (2 classes), whose streams agree with
 * phases too. */
START_TEST(test_cluster_agrees_with_steps)
{
    char *dir = strata_test_temp_dir();
    static const char *const tree[] = {"collective", "devices=16", "iters=2", NULL};
    static const char *const hier[] = {"collective", "devices=32", "iters=2", "algo=hierarchical", NULL};
    static const char *const spine32[] = {"hardware.devices=32", "network.ib.topology=switch",
                                          "network.ib.hosts_per_leaf=2", NULL};
    char *t = gen(dir, "tree", tree);
    agree_with(dir, t, "configs/hw/h100-2x8-ib.ini", NULL, "classes", "steps", LINKS);
    g_free(t);
    t = gen(dir, "hier", hier);
    agree_with(dir, t, "configs/hw/h100-16x8-ib.ini", spine32, "classes", "steps", LINKS);
    agree_with(dir, t, "configs/hw/h100-16x8-ib.ini", spine32, "classes", "phases", LINKS | STREAMS);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* Issue 40's chain on h100-16x8-ib (NCCL's Tree/LL128, 16 channels), at
 * 4 nodes of 8 (the steps of 8 nodes run more streams than a sanitized
 * build's stacks allow): two all-reduces of 1 MiB (4 chunks of 18,000
 * bytes a channel, fewer than twice the tree's height, at least 7: no
 * round folds, so phases are steps). No rotation of the nodes maps the
 * binary tree; the nodes' mirror (k to 3 - k) maps tree 0 onto tree 1:
 * 32 / (8 x 2) = 2 classes, and they give the steps' figures (the
 * makespan, each collective's time, peaks, port and link bytes, to
 * 1e-9). Each class stands for 16 devices that run the same ops, so the
 * classes hand out at most a 16th of the steps' ops. */
START_TEST(test_tree_mirror_agrees_with_steps)
{
    char *dir = strata_test_temp_dir();
    static const char *const chain[] = {"collective", "devices=32", "bytes=1MiB", "iters=2", NULL};
    static const char *const sets[] = {"hardware.devices=32", NULL};
    char *t = gen(dir, "chain", chain);
    agree_with(dir, t, "configs/hw/h100-16x8-ib.ini", sets, "classes", "steps", LINKS);
    figures c = run(dir, t, "configs/hw/h100-16x8-ib.ini", sets, "classes");
    figures p = run(dir, t, "configs/hw/h100-16x8-ib.ini", sets, "steps");
    JsonObject *cl = json_object_get_object_member(c.root, "classes");
    ck_assert_int_eq(json_object_get_int_member(cl, "simulated_devices"), 2);
    ck_assert_int_le(16 * json_object_get_int_member(c.root, "ops"), json_object_get_int_member(p.root, "ops"));
    g_object_unref(c.parser);
    g_object_unref(p.parser);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* A program that offloads to its hosts' memories (issue 40: MaxText's MoE
 * step offloads activations to the host): test-torus16's 4x4 devices, 4 a
 * host (a row); the mesh's model axis lies along the host, so its
 * rotations keep a host and move its devices (refused: the quotient would
 * hold part of a host), data+1 moves the hosts: 4 classes, host 0 whole.
 * Each device copies 4 MiB to its host's memory at once; with the host's
 * port at 32 GB/s the four copies of a host share it, 8 GB/s each under
 * their PCIe's 16: 1 us + 4,194,304 B / 8 GB/s = 525.288 us, in both
 * modes (and every figure alike: agree_with). With
 * an all-reduce over model before the copies, the classes give the
 * steps' figures (makespan, collective, peaks, ports and links). */
#define OFFLOAD "strata-trace 1\noption mesh=data:4,model:4\nalloc b 4MiB\nalloc h 4MiB host\n"
START_TEST(test_offload_to_hosts_agrees_with_steps)
{
    char *dir = strata_test_temp_dir();
    static const char *const sets[] = {"memory.host.bandwidth=32GB/s", NULL};
    char *t = g_strdup_printf("%s/offload.trace", dir);
    ck_assert(g_file_set_contents(t, OFFLOAD "copy h b stream=offload\nfree b\nfree h\n", -1, NULL));
    char *text = NULL;
    bool exact = false;
    ck_assert_uint_eq(classes_of("test-torus16", NULL, OFFLOAD "free b\nfree h\n",
                                 STRATA_SPMD_CLASSES, &text, &exact), 4);
    ck_assert_str_eq(text, "data+1");
    g_free(text);
    const char *modes[] = {"classes", "steps"};
    for (int i = 0; i < 2; i++) {
        figures f = run(dir, t, "configs/hw/test-torus16.ini", sets, modes[i]);
        close_to(json_object_get_double_member(f.root, "makespan_s"), 525.288e-6, "makespan", modes[i]);
        g_object_unref(f.parser);
    }
    agree_with(dir, t, "configs/hw/test-torus16.ini", sets, "classes", "steps", LINKS);
    ck_assert(g_file_set_contents(t, OFFLOAD "all-reduce b axis=model\ncopy h b\nfree b\nfree h\n", -1, NULL));
    agree_with(dir, t, "configs/hw/test-torus16.ini", sets, "classes", "steps", LINKS);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* The default (no --collectives) on NEAR35, whose chunks differ by a byte
 * from rank to rank (no exact symmetry; FAST's data+1 model+1, one
 * class). Every device's run would move 60 copies in its widest round
 * (bidir-torus over 3x5: 2 x 2 parts, each a ring whose 15 ranks each send
 * one copy a round). With the threshold at 59 (STRATA_CLASSES_FALLBACK_COPIES,
 * standing for the pod's 8,192) the default runs fast, says so on standard
 * error and in the JSON, with fast's makespan; at 60 it runs every device
 * (classes as asked, no note); explicit --collectives classes at 59 runs
 * every device too, with a note saying it may take long. */
typedef struct default_run {
    JsonParser *parser;
    JsonObject *root;
    char *err;
} default_run;

static default_run run_default(const char *dir, const char *trace, const char *threshold, const char *mode)
{
    char *json = g_strdup_printf("%s/default-%s-%s.json", dir, threshold, mode ? mode : "none");
    char *hw = strata_test_source_path("configs/hw/test-torus16.ini");
    static const char *const sets[] = {"hardware.devices=15", "hardware.devices_per_host=5",
                                       "interconnect.ici.dims=3x5", NULL};
    const char *const with[] = {"run", "-q", "--trace", trace, "--hw", hw, "--json", json, "--collectives", mode, NULL};
    const char *const without[] = {"run", "-q", "--trace", trace, "--hw", hw, "--json", json, NULL};
    g_setenv("STRATA_CLASSES_FALLBACK_COPIES", threshold, TRUE);
    strata_cli_result r = strata_test_run_cli_sets(mode ? with : without, sets);
    g_unsetenv("STRATA_CLASSES_FALLBACK_COPIES");
    ck_assert_msg(r.status == 0, "%s", r.err);
    default_run d = {.parser = json_parser_new(), .err = g_strdup(r.err)};
    strata_cli_result_clear(&r);
    ck_assert(json_parser_load_from_file(d.parser, json, NULL));
    d.root = json_node_get_object(json_parser_get_root(d.parser));
    g_free(hw);
    g_free(json);
    return d;
}

static void default_run_clear(default_run *d)
{
    g_object_unref(d->parser);
    g_free(d->err);
}

START_TEST(test_default_falls_back_to_fast)
{
    char *dir = strata_test_temp_dir();
    char *t = g_strdup_printf("%s/near35.trace", dir);
    ck_assert(g_file_set_contents(t, NEAR35, -1, NULL));
    default_run fell = run_default(dir, t, "59", NULL), kept = run_default(dir, t, "60", NULL);
    default_run asked = run_default(dir, t, "59", "classes"), fast = run_default(dir, t, "60", "fast");
    ck_assert_msg(strstr(fell.err, "note: no exact symmetry of the 15 devices, and every device's run would move 60 "
                                   "copies in a round, more than 59") &&
                      strstr(fell.err, "running --collectives fast (1 simulated, symmetry data+1 model+1, approximate)"
                                       "; --collectives phases or steps runs every device exactly\n"),
                  "%s", fell.err);
    ck_assert_str_eq(json_object_get_string_member(fell.root, "collectives_mode"), "fast");
    ck_assert(strstr(json_object_get_string_member(fell.root, "collectives_fallback"), "more than 59"));
    ck_assert_int_eq(json_object_get_int_member(json_object_get_object_member(fell.root, "classes"),
                                                "simulated_devices"), 1);
    ck_assert_int_eq(json_object_get_int_member(fell.root, "ops"), json_object_get_int_member(fast.root, "ops"));
    ck_assert(json_object_get_double_member(fell.root, "makespan_s") ==
              json_object_get_double_member(fast.root, "makespan_s"));
    ck_assert(!json_object_has_member(fast.root, "collectives_mode")); /* asked for: no fallback */
    ck_assert_msg(!strstr(kept.err, "note:"), "%s", kept.err);
    ck_assert(!json_object_has_member(kept.root, "collectives_mode") && !json_object_has_member(kept.root, "classes"));
    ck_assert_msg(strstr(asked.err, "more than 59 (the engine's sharing costs about their square a round): "
                                    "--collectives classes simulates every device"), "%s", asked.err);
    ck_assert(!json_object_has_member(asked.root, "collectives_mode") &&
              !json_object_has_member(asked.root, "classes"));
    ck_assert_int_eq(json_object_get_int_member(asked.root, "ops"), json_object_get_int_member(kept.root, "ops"));
    default_run_clear(&fell);
    default_run_clear(&kept);
    default_run_clear(&asked);
    default_run_clear(&fast);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("classes");
    TCase *tc = tcase_create("classes");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_found);
    tcase_add_test(tc, test_agrees_with_phases);
    tcase_add_test(tc, test_near_bytes_agree_with_phases);
    tcase_add_test(tc, test_cluster_agrees_with_steps);
    tcase_add_test(tc, test_tree_mirror_agrees_with_steps);
    tcase_add_test(tc, test_link_weights);
    tcase_add_test(tc, test_offload_to_hosts_agrees_with_steps);
    tcase_add_test(tc, test_default_falls_back_to_fast);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
