/* test_hw.c: the hardware model: shipped configs, values, defaults, routes,
 * overrides and every class of bad input (with its FILE:LINE). */
#include <string.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"

/* The shipped configs, configs/hw/PREFIX*.ini, by name without ".ini"
 * (sorted; free with g_strfreev): every file there is tested. */
static char **shipped_configs(const char *prefix)
{
    char *dir_path = strata_test_source_path("configs/hw");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_msg(dir != NULL, "cannot list %s", dir_path);
    GPtrArray *names = g_ptr_array_new();
    const char *file;
    while ((file = g_dir_read_name(dir)))
        if (g_str_has_suffix(file, ".ini") && g_str_has_prefix(file, prefix))
            g_ptr_array_add(names, g_strndup(file, strlen(file) - strlen(".ini")));
    g_dir_close(dir);
    g_free(dir_path);
    ck_assert_msg(names->len > 0, "no configs/hw/%s*.ini", prefix);
    g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

static strata_hw *load_config(const char *name)
{
    return strata_test_load_hw(name, NULL);
}

/* The memory NAME, or with several devices NAME on device 0. */
static uint32_t mem_index(const strata_hw *hw, const char *name)
{
    int i = strata_hw_memory_index(hw, name);
    int base = i < 0 ? strata_hw_memory_base_index(hw, name) : -1;
    ck_assert_msg(i >= 0 || (base >= 0 && strata_hw_devices(hw) > 1), "no memory %s", name);
    return i >= 0 ? (uint32_t)i : strata_hw_memory_on(hw, (uint32_t)base, 0);
}

/* The route from -> to as "linkname>,linkname<" (g_free). */
static const strata_memory_spec *mem(const strata_hw *hw, const char *name)
{
    return strata_hw_memory(hw, mem_index(hw, name));
}

static char *route_text(const strata_hw *hw, const char *from, const char *to)
{
    const strata_hop *hops = NULL;
    uint32_t n = 99;
    GError *err = NULL;
    ck_assert_msg(strata_hw_route(hw, mem_index(hw, from), mem_index(hw, to), &hops, &n, &err),
                  "%s", err ? err->message : "");
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s%s", i ? "," : "", strata_hw_link(hw, hops[i].link)->name,
                               hops[i].forward ? ">" : "<");
    return g_string_free(s, FALSE);
}

/* Loads text that must fail with an input error containing every needle. */
static void load_fails(const char *text, const char *const *overrides, const char *n1,
                       const char *n2)
{
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "bad.ini", overrides, &err);
    ck_assert_msg(hw == NULL, "should fail: %s", text);
    ck_assert_int_eq(err->domain, STRATA_ERROR);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, n1), "message '%s' lacks '%s'", err->message, n1);
    if (n2)
        ck_assert_msg(strstr(err->message, n2), "message '%s' lacks '%s'", err->message, n2);
    g_error_free(err);
}

/* A small valid machine; tests append or alter lines. Line numbers:
 * 1 [hardware], 2 name, 3 blank, 4 [memory hbm], 5 kind, 6 capacity,
 * 7 bandwidth, 8 blank, 9 [memory host], 10 kind, 11 capacity, 12 bandwidth,
 * 13 blank, 14 [link pcie], 15 between, 16 bandwidth, 17 latency, 18 blank,
 * 19 [compute core], 20 flops */
#define BASE_HARDWARE "[hardware]\nname = t\n\n"
#define BASE_HBM "[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n\n"
#define BASE_HOST "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n\n"
#define BASE_LINK "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\n\n"
#define BASE_COMPUTE "[compute core]\nflops = 100TFLOP/s\n"
#define BASE BASE_HARDWARE BASE_HBM BASE_HOST BASE_LINK BASE_COMPUTE

START_TEST(every_shipped_config_loads)
{
    char **shipped = shipped_configs("");
    for (char **name = shipped; *name; name++) {
        strata_hw *hw = load_config(*name);
        ck_assert_ptr_nonnull(strata_hw_name(hw));
        ck_assert_ptr_nonnull(strata_hw_source(hw));
        /* names shared across configs: hbm is the default device memory */
        const strata_memory_spec *hbm = mem(hw, "hbm");
        ck_assert_int_eq(hbm->kind, STRATA_MEM_DEVICE);
        ck_assert_uint_eq(strata_hw_default_memory(hw), mem_index(hw, "hbm"));
        ck_assert_int_eq(strata_hw_memory_index(hw, NULL), (int)mem_index(hw, "hbm"));
        const strata_memory_spec *host = mem(hw, "host");
        ck_assert_int_eq(host->kind, STRATA_MEM_HOST);
        ck_assert(!host->pageable);
        bool one = strata_hw_devices(hw) == 1;
        if (!g_str_has_prefix(*name, "test-")) {
            const strata_memory_spec *pageable = mem(hw, "pageable");
            ck_assert_int_eq(pageable->kind, STRATA_MEM_HOST);
            ck_assert(pageable->pageable);
            /* pageable copies are staged through pinned memory, then PCIe */
            char *r = route_text(hw, "pageable", "hbm");
            ck_assert_str_eq(r, one ? "staging>,pcie>" : "staging@0>,pcie@0>");
            g_free(r);
        }
        ck_assert_uint_ge(strata_hw_compute_count(hw), 1);
        /* every pair of memories is connected (with several devices: every
         * memory to and from device 0's and the last device's) */
        uint32_t n_mem = strata_hw_memory_count(hw), last = strata_hw_devices(hw) - 1;
        for (uint32_t a = 0; a < n_mem; a++)
            for (uint32_t b = 0; b < n_mem; b++) {
                const strata_memory_spec *ma = strata_hw_memory(hw, a), *mb = strata_hw_memory(hw, b);
                if (!one && ma->site != 0 && ma->site != last && mb->site != 0 && mb->site != last)
                    continue;
                const strata_hop *hops;
                uint32_t n;
                ck_assert(strata_hw_route(hw, a, b, &hops, &n, NULL));
                ck_assert_uint_eq(n == 0, a == b);
            }
        strata_hw_free(hw);
    }
    g_strfreev(shipped);
}
END_TEST

START_TEST(tpu_host_to_vmem_goes_through_hbm)
{
    char **tpus = shipped_configs("tpu-");
    for (char **name = tpus; *name; name++) {
        strata_hw *hw = load_config(*name);
        if (strata_hw_devices(hw) > 1) { /* pods: test_hw_devices */
            strata_hw_free(hw);
            continue;
        }
        char *r = route_text(hw, "host", "vmem");
        ck_assert_msg(strcmp(r, "pcie>,dma-vmem>") == 0, "%s: host->vmem = %s", *name, r);
        g_free(r);
        r = route_text(hw, "vmem", "host");
        ck_assert_str_eq(r, "dma-vmem<,pcie<");
        g_free(r);
        ck_assert_int_eq(mem(hw, "vmem")->kind, STRATA_MEM_ONCHIP);
        ck_assert_int_eq(mem(hw, "smem")->kind, STRATA_MEM_ONCHIP);
        ck_assert_uint_eq(mem(hw, "smem")->capacity, 1 << 20); /* tpu_info: 1 MiB per core */
        /* the default unit reads HBM; the mxu view reads VMEM */
        const strata_compute_spec *tc = strata_hw_compute(hw, 0);
        ck_assert_str_eq(tc->name, "tensorcore");
        ck_assert_uint_eq(tc->operands, mem_index(hw, "hbm"));
        int mxu = strata_hw_compute_index(hw, "mxu");
        ck_assert_int_ge(mxu, 0);
        ck_assert_uint_eq(strata_hw_compute(hw, (uint32_t)mxu)->operands, mem_index(hw, "vmem"));
        strata_hw_free(hw);
    }
    g_strfreev(tpus);
}
END_TEST

START_TEST(tpu_v5e_figures)
{
    /* jax/_src/tpu_info.py TPU_V5E and the Cloud TPU v5e page */
    strata_hw *hw = load_config("tpu-v5e");
    ck_assert_str_eq(strata_hw_name(hw), "tpu-v5e");
    ck_assert_uint_eq(mem(hw, "hbm")->capacity, 17200000000ULL);
    ck_assert(mem(hw, "hbm")->bandwidth == 819e9);
    ck_assert_uint_eq(mem(hw, "vmem")->capacity, 128ULL << 20);
    uint32_t tc = 0;
    ck_assert(strata_hw_compute_flops(hw, tc, STRATA_DTYPE_BF16) == 197e12);
    ck_assert(strata_hw_compute_flops(hw, tc, STRATA_DTYPE_INT8) == 394e12);
    ck_assert(strata_hw_compute_flops(hw, tc, STRATA_DTYPE_INT4) == 788e12);
    ck_assert(strata_hw_compute_flops(hw, tc, STRATA_DTYPE_F32) == 197e12); /* falls back to flops */
    ck_assert(strata_hw_compute_flops(hw, tc, STRATA_DTYPE_NONE) == 197e12);
    const strata_link_spec *pcie = strata_hw_link(hw, 0);
    ck_assert_str_eq(pcie->name, "pcie");
    ck_assert(pcie->bandwidth == 15e9);
    ck_assert(pcie->full_duplex);
    strata_hw_free(hw);

    hw = load_config("tpu-v4");
    ck_assert_int_eq(mem(hw, "acc")->kind, STRATA_MEM_ONCHIP); /* CMEM */
    ck_assert_uint_eq(mem(hw, "acc")->capacity, 67000000ULL);  /* 134e6 // 2 cores */
    strata_hw_free(hw);

    hw = load_config("h100");
    ck_assert_uint_eq(mem(hw, "hbm")->capacity, 80ULL << 30); /* "80GB" of five 16 GiB stacks */
    ck_assert(mem(hw, "hbm")->bandwidth == 3.35e12);
    ck_assert(strata_hw_compute_flops(hw, 0, STRATA_DTYPE_BF16) == 989.5e12);
    ck_assert(strata_hw_compute_flops(hw, 0, STRATA_DTYPE_F32) == 67e12);
    strata_hw_free(hw);
}
END_TEST

START_TEST(test_simple_values_and_defaults)
{
    strata_hw *hw = load_config("test-simple");
    const strata_memory_spec *hbm = mem(hw, "hbm");
    ck_assert_uint_eq(hbm->capacity, 16ULL << 30);
    ck_assert(hbm->bandwidth == 1e12);
    ck_assert(hbm->latency == 0);          /* default */
    ck_assert_uint_eq(hbm->alignment, 256); /* default */
    ck_assert_str_eq(hbm->allocator, "best-fit"); /* default */
    ck_assert(!hbm->pageable);
    ck_assert_uint_eq(strata_hw_link_count(hw), 1);
    const strata_link_spec *pcie = strata_hw_link(hw, 0);
    ck_assert(pcie->bandwidth == 16e9);
    ck_assert(pcie->latency == 1e-6);
    ck_assert(pcie->full_duplex);
    ck_assert_uint_eq(pcie->a, mem_index(hw, "host"));
    ck_assert_uint_eq(pcie->b, mem_index(hw, "hbm"));
    ck_assert_int_eq(strata_hw_compute_index(hw, NULL), 0);
    ck_assert_int_eq(strata_hw_compute_index(hw, "core"), 0);
    ck_assert_int_eq(strata_hw_compute_index(hw, "gpu"), -1);
    const strata_compute_spec *core = strata_hw_compute(hw, 0);
    ck_assert(core->flops == 100e12);
    ck_assert(core->overhead == 0);
    ck_assert_uint_eq(core->operands, mem_index(hw, "hbm"));
    ck_assert_int_eq(strata_hw_memory_index(hw, "vmem"), -1);
    ck_assert_str_eq(strata_mem_kind_name(STRATA_MEM_ONCHIP), "onchip");
    ck_assert(!strata_hw_flow_sharing_latency(hw)); /* default: equal shares */
    strata_hw_free(hw);
}
END_TEST

START_TEST(all_keys_and_inline_comments)
{
    const char *text =
        "# a full example\n"
        "[hardware]\nname = full\nsource = hand made\ndefault_memory = hbm\n"
        "[memory host]\nkind = host\ncapacity = 1GiB\nbandwidth = 10GB/s\n"
        "[memory pageable]\nkind = host\npageable = true\ncapacity = 1GiB\nbandwidth = 10GB/s\n"
        "[memory hbm]\nkind = device \t\ncapacity = 2GiB   # two\nbandwidth = 1TB/s  \n"
        "latency = 250ns\nalignment = 4KiB\nallocator = caching\n"
        "allocator.max_split_size = 200MiB\n"
        "[link pcie]\nbetween = host   hbm\nbandwidth = 8GB/s\nlatency = 2us\nduplex = half\n"
        "[link staging]\nbetween = pageable host\nbandwidth = 4GB/s\n"
        "[compute gpu]\nflops = 10TFLOP/s\nflops.bf16 = 20TFLOP/s\nflops.int8 = 40TFLOP/s\n"
        "operands = hbm\noverhead = 3us\n";
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "full.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    ck_assert_str_eq(strata_hw_origin(hw), "full.ini");
    ck_assert_str_eq(strata_hw_source(hw), "hand made");
    ck_assert_uint_eq(strata_hw_default_memory(hw), 2); /* hbm, declared third */
    const strata_memory_spec *hbm = mem(hw, "hbm");
    ck_assert_uint_eq(hbm->capacity, 2ULL << 30);
    ck_assert(hbm->latency == 250e-9);
    ck_assert_uint_eq(hbm->alignment, 4096);
    ck_assert_str_eq(hbm->allocator, "caching:max_split_size=200MiB");
    ck_assert(mem(hw, "pageable")->pageable);
    const strata_link_spec *pcie = strata_hw_link(hw, 0);
    ck_assert(!pcie->full_duplex);
    ck_assert(pcie->latency == 2e-6);
    ck_assert(strata_hw_link(hw, 1)->latency == 0);
    ck_assert(strata_hw_link(hw, 1)->full_duplex);
    const strata_compute_spec *gpu = strata_hw_compute(hw, 0);
    ck_assert(gpu->overhead == 3e-6);
    ck_assert(strata_hw_compute_flops(hw, 0, STRATA_DTYPE_BF16) == 20e12);
    ck_assert(strata_hw_compute_flops(hw, 0, STRATA_DTYPE_INT8) == 40e12);
    ck_assert(strata_hw_compute_flops(hw, 0, STRATA_DTYPE_F16) == 10e12);
    char *r = route_text(hw, "pageable", "hbm");
    ck_assert_str_eq(r, "staging>,pcie>");
    g_free(r);
    strata_hw_free(hw);
}
END_TEST

START_TEST(routes_fewest_hops_ties_by_declaration)
{
    /* a - b - d and a - c - d are both two hops: the path through the link
     * declared first (ab) wins; a - e is direct although a longer path exists. */
    const char *text = "[hardware]\nname = r\n"
                       "[memory a]\nkind = device\ncapacity = 1MiB\nbandwidth = 1GB/s\n"
                       "[memory b]\nkind = onchip\ncapacity = 1MiB\nbandwidth = 1GB/s\n"
                       "[memory c]\nkind = onchip\ncapacity = 1MiB\nbandwidth = 1GB/s\n"
                       "[memory d]\nkind = onchip\ncapacity = 1MiB\nbandwidth = 1GB/s\n"
                       "[memory e]\nkind = host\ncapacity = 1MiB\nbandwidth = 1GB/s\n"
                       "[memory island]\nkind = host\ncapacity = 1MiB\nbandwidth = 1GB/s\n"
                       "[link cd]\nbetween = d c\nbandwidth = 1GB/s\n"
                       "[link ab]\nbetween = a b\nbandwidth = 1GB/s\n"
                       "[link ac]\nbetween = a c\nbandwidth = 1GB/s\n"
                       "[link bd]\nbetween = b d\nbandwidth = 1GB/s\n"
                       "[link de]\nbetween = d e\nbandwidth = 1GB/s\n"
                       "[link ae]\nbetween = e a\nbandwidth = 1GB/s\n";
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "r.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    char *r = route_text(hw, "a", "d");
    ck_assert_str_eq(r, "ab>,bd>");
    g_free(r);
    r = route_text(hw, "d", "a");
    ck_assert_str_eq(r, "cd>,ac<"); /* from d, link cd is declared first */
    g_free(r);
    r = route_text(hw, "a", "e");
    ck_assert_str_eq(r, "ae<");
    g_free(r);
    r = route_text(hw, "c", "b");
    ck_assert_str_eq(r, "cd<,bd<");
    g_free(r);
    r = route_text(hw, "a", "a");
    ck_assert_str_eq(r, "");
    g_free(r);
    /* an unconnected memory is fine until a route is asked for */
    const strata_hop *hops;
    uint32_t n;
    ck_assert(!strata_hw_route(hw, mem_index(hw, "a"), mem_index(hw, "island"), &hops, &n, &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_ptr_nonnull(strstr(err->message, "r.ini: no route from memory 'a' to memory 'island'"));
    g_clear_error(&err);
    ck_assert(strata_hw_route(hw, mem_index(hw, "island"), mem_index(hw, "island"), &hops, &n, NULL));
    ck_assert_uint_eq(n, 0);
    strata_hw_free(hw);
}
END_TEST

START_TEST(overrides_apply_before_validation)
{
    const char *const overrides[] = {
        "memory.hbm.capacity=8GiB",
        "link.pcie.bandwidth=8GB/s",
        "link.pcie.duplex = half",
        "compute.core.flops=50TFLOP/s",
        "compute.core.flops.bf16=200TFLOP/s",
        "memory.hbm.allocator=caching",
        "memory.hbm.allocator.max_split_size=200MiB",
        "memory.host.latency=3us", /* a key the file does not set */
        "hardware.name=renamed",
        NULL,
    };
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(BASE, "base.ini", overrides, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    ck_assert_str_eq(strata_hw_name(hw), "renamed");
    ck_assert_uint_eq(mem(hw, "hbm")->capacity, 8ULL << 30);
    ck_assert_str_eq(mem(hw, "hbm")->allocator, "caching:max_split_size=200MiB");
    ck_assert(mem(hw, "host")->latency == 3e-6);
    ck_assert(strata_hw_link(hw, 0)->bandwidth == 8e9);
    ck_assert(!strata_hw_link(hw, 0)->full_duplex);
    ck_assert(strata_hw_compute(hw, 0)->flops == 50e12);
    ck_assert(strata_hw_compute_flops(hw, 0, STRATA_DTYPE_BF16) == 200e12);
    strata_hw_free(hw);

    /* override errors */
    const char *const unknown_group[] = {"memory.hmb.capacity=8GiB", NULL};
    load_fails(BASE, unknown_group, "override 'memory.hmb.capacity=8GiB'",
               "no group [memory hmb] (groups: [hardware], [memory hbm], [memory host], "
               "[link pcie], [compute core])");
    const char *const malformed[] = {"memory.hbm=8GiB", NULL};
    load_fails(BASE, malformed, "override 'memory.hbm=8GiB': expected KIND.NAME.KEY=VALUE", NULL);
    const char *const no_value[] = {"memory.hbm.capacity", NULL};
    load_fails(BASE, no_value, "expected KIND.NAME.KEY=VALUE", NULL);
    const char *const bad_value[] = {"memory.hbm.capacity=16XB", NULL};
    load_fails(BASE, bad_value,
               "bad.ini (override memory.hbm.capacity=16XB): [memory hbm] capacity: expected a size",
               "got '16XB'");
    const char *const bad_key[] = {"link.pcie.bandwith=1GB/s", NULL};
    load_fails(BASE, bad_key, "[link pcie] unknown key 'bandwith'", "known: between, bandwidth");
}
END_TEST

START_TEST(unknown_group)
{
    load_fails(BASE "\n[memroy x]\nkind = host\n", NULL, "bad.ini:22: [memroy x] unknown group",
               "expected [hardware], [memory NAME], [link NAME], [compute NAME]");
    load_fails("[hardware]\nname = t\n[memory]\nkind = host\n", NULL, "bad.ini:3: [memory]", NULL);
    load_fails("[hardware]\nname = t\n[memory a b]\nkind = host\n", NULL,
               "bad.ini:3: [memory a b] expected a name of letters", NULL);
    load_fails("[hardware x]\nname = t\n", NULL, "bad.ini:1: [hardware x] unknown group", NULL);
}
END_TEST

START_TEST(unknown_key)
{
    /* the key's own line, the group, the known keys */
    load_fails(BASE_HARDWARE BASE_HBM "[memory host]\nkind = host\ncapcity = 1GiB\n", NULL,
               "bad.ini:11: [memory host] unknown key 'capcity'",
               "(known: kind, capacity, reported_capacity, bandwidth, latency, allocator, alignment, "
               "pageable, dram, bus_width, source, allocator.KEY)");
    load_fails(BASE "colour = red\n", NULL, "bad.ini:21: [compute core] unknown key 'colour'",
               "flops.KEY");
    load_fails("[hardware]\nname = t\nmaker = x\n", NULL, "bad.ini:3: [hardware] unknown key 'maker'",
               NULL);
    load_fails(BASE "flops.bfloat16 = 1TFLOP/s\n", NULL,
               "bad.ini:21: [compute core] flops.bfloat16: unknown dtype 'bfloat16'", "bf16");
    /* the driver's reported total: a device memory's alone (vLLM's KV pool, docs/serving.md) */
    load_fails(BASE_HARDWARE BASE_HBM "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
               "reported_capacity = 60GiB\n", NULL, "reported_capacity", "only a memory of kind device has one");
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 16GiB\n"
                                                  "reported_capacity = 15.5GiB\nbandwidth = 1TB/s\n\n" BASE_HOST
                                                  BASE_LINK BASE_COMPUTE, "ok.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert_uint_eq(mem(hw, "hbm")->reported_capacity, 15.5 * 1073741824.0); /* 16,642,998,272 B */
    ck_assert_uint_eq(mem(hw, "host")->reported_capacity, 0);
    strata_hw_free(hw);
}
END_TEST

/* The driver's total is at most the memory. By hand: 79.11GiB = 79.11 x 2^30 = 84,943,715,696.64, rounded to
 * 84,943,715,697 B, over a decimal 80GB (80,000,000,000 B: h100.ini before wave 40) and under 80GiB
 * (85,899,345,920 B); equal is accepted. `none` undoes it; a --set of capacity alone drops the file's (the
 * total of the part the file describes), a --set of both is checked. Line 6 is capacity, 7 reported_capacity. */
#define REPORTED_HBM(cap, rep) BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = " cap "\nreported_capacity = " \
    rep "\nbandwidth = 1TB/s\n\n" BASE_HOST BASE_LINK BASE_COMPUTE
START_TEST(reported_capacity_at_most_capacity)
{
    load_fails(REPORTED_HBM("80GB", "79.11GiB"), NULL,
               "bad.ini:7: [memory hbm] reported_capacity: 79.11GiB (84943715697 B) exceeds capacity = 80GB "
               "(80000000000 B, bad.ini:6)", "80GiB, not 80GB");
    const char *const both[] = {"memory.hbm.capacity=1GiB", "memory.hbm.reported_capacity=2GiB", NULL};
    load_fails(REPORTED_HBM("16GiB", "15.5GiB"), both, "2GiB (2147483648 B) exceeds capacity = 1GiB (1073741824 B",
               "override memory.hbm.capacity=1GiB");
    const struct {
        const char *cap, *rep, *set;
        uint64_t capacity, reported;
    } ok[] = {
        {"80GiB", "79.11GiB", NULL, 85899345920ull, 84943715697ull},
        {"16GiB", "16GiB", NULL, 17179869184ull, 17179869184ull},
        {"16GiB", "none", NULL, 17179869184ull, 0},
        {"16GiB", "15.5GiB", "memory.hbm.capacity=1GiB", 1073741824ull, 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
        char *text = g_strdup_printf(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = %s\nreported_capacity = "
                                     "%s\nbandwidth = 1TB/s\n\n" BASE_HOST BASE_LINK BASE_COMPUTE, ok[i].cap,
                                     ok[i].rep);
        const char *const set[] = {ok[i].set, NULL};
        GError *err = NULL;
        strata_hw *hw = strata_placement_hw_load_data(text, "ok.ini", ok[i].set ? set : NULL, &err);
        ck_assert_msg(hw, "%zu: %s", i, err ? err->message : "");
        ck_assert_uint_eq(mem(hw, "hbm")->capacity, ok[i].capacity);
        ck_assert_uint_eq(mem(hw, "hbm")->reported_capacity, ok[i].reported);
        strata_hw_free(hw);
        g_free(text);
    }
}
END_TEST
#undef REPORTED_HBM

START_TEST(missing_required_keys)
{
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\nbandwidth = 1TB/s\n", NULL,
               "bad.ini:4: [memory hbm] missing required key 'capacity'", NULL);
    load_fails(BASE_HARDWARE "[memory hbm]\ncapacity = 1GiB\nbandwidth = 1TB/s\n", NULL,
               "bad.ini:4: [memory hbm] missing required key 'kind'", NULL);
    load_fails(BASE_HARDWARE BASE_HBM BASE_HOST "[link pcie]\nbetween = host hbm\n", NULL,
               "bad.ini:14: [link pcie] expected bandwidth = ", NULL);
    load_fails(BASE_HARDWARE BASE_HBM "[compute core]\noperands = hbm\n", NULL,
               "bad.ini:9: [compute core] missing required key 'flops'", NULL);
    load_fails("[hardware]\nsource = x\n" BASE_HBM, NULL,
               "bad.ini:1: [hardware] missing required key 'name'", NULL);
    load_fails(BASE_HBM, NULL, "bad.ini: missing group [hardware]", NULL);
    load_fails(BASE_HARDWARE, NULL, "bad.ini: no [memory NAME] group", NULL);
    load_fails(BASE_HARDWARE BASE_HOST, NULL, "no memory of kind device; set [hardware] default_memory",
               NULL);
}
END_TEST

START_TEST(bad_values_name_line_group_key)
{
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 16XB\nbandwidth = 1TB/s\n",
               NULL,
               "bad.ini:6: [memory hbm] capacity: expected a size such as 4096, 64KiB or 1.5GiB, "
               "got '16XB'",
               NULL);
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 20000000TiB\nbandwidth = 1TB/s\n",
               NULL, "bad.ini:6: [memory hbm] capacity: size '20000000TiB' does not fit in 64 bits",
               NULL);
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 0\nbandwidth = 1TB/s\n", NULL,
               "bad.ini:6: [memory hbm] capacity: expected a positive size", NULL);
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = gpu\ncapacity = 1GiB\nbandwidth = 1TB/s\n", NULL,
               "bad.ini:5: [memory hbm] kind: expected device, host or onchip, got 'gpu'", NULL);
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB\n", NULL,
               "bad.ini:7: [memory hbm] bandwidth: expected a bandwidth", "got '1TB'");
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 0\n", NULL,
               "bad.ini:7: [memory hbm] bandwidth: expected a positive bandwidth", NULL);
    load_fails(BASE_HARDWARE BASE_HBM "latency = 5\n", NULL, "bad.ini:9: [memory hbm] latency:",
               "expected a time");
    load_fails(BASE_HARDWARE BASE_HBM "alignment = 384\n", NULL,
               "bad.ini:9: [memory hbm] alignment: expected a power of two such as 256, got '384'",
               NULL);
    load_fails(BASE_HARDWARE BASE_HBM "pageable = true\n", NULL,
               "bad.ini:9: [memory hbm] pageable: only memories of kind host can be pageable", NULL);
    load_fails(BASE_HARDWARE BASE_HBM "pageable = maybe\n", NULL,
               "[memory hbm] pageable: expected true or false, got 'maybe'", NULL);
    load_fails(BASE_HARDWARE BASE_HBM "allocator = caching:max_split_size=1MiB\n", NULL,
               "bad.ini:9: [memory hbm] allocator: expected an allocator name", NULL);
    load_fails(BASE "duplex = both\n", NULL, "bad.ini:21: [compute core] unknown key 'duplex'", NULL);
    load_fails(BASE_HARDWARE BASE_HBM BASE_HOST
               "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nduplex = both\n",
               NULL, "bad.ini:17: [link pcie] duplex: expected full or half, got 'both'", NULL);
    load_fails(BASE "flops.bf16 = fast\n", NULL, "bad.ini:21: [compute core] flops.bf16: expected a flop rate",
               NULL);
    load_fails(BASE "overhead = -1us\n", NULL, "bad.ini:21: [compute core] overhead:", NULL);
    load_fails(BASE "operands = vmem\n", NULL,
               "bad.ini:21: [compute core] operands: unknown memory 'vmem' (memories: hbm, host)", NULL);
    load_fails(BASE_HARDWARE "default_memory = sram\n" BASE_HBM, NULL,
               "[hardware] default_memory: unknown memory 'sram'", NULL);
    load_fails(BASE_HARDWARE "flow_sharing = tcp\n" BASE_HBM, NULL,
               "[hardware] flow_sharing: expected equal or latency, got 'tcp'", "bad.ini:4");
}
END_TEST

START_TEST(bad_links)
{
    load_fails(BASE_HARDWARE BASE_HBM BASE_HOST "[link pcie]\nbetween = host hmb\nbandwidth = 16GB/s\n",
               NULL, "bad.ini:15: [link pcie] between: unknown memory 'hmb' (memories: hbm, host)",
               NULL);
    load_fails(BASE_HARDWARE BASE_HBM BASE_HOST "[link pcie]\nbetween = host\nbandwidth = 16GB/s\n",
               NULL, "bad.ini:15: [link pcie] between: expected two memory names", NULL);
    load_fails(BASE_HARDWARE BASE_HBM BASE_HOST
               "[link pcie]\nbetween = host hbm host\nbandwidth = 16GB/s\n",
               NULL, "expected two memory names such as 'host hbm', got 'host hbm host'", NULL);
    load_fails(BASE_HARDWARE BASE_HBM BASE_HOST "[link loop]\nbetween = hbm hbm\nbandwidth = 16GB/s\n",
               NULL, "bad.ini:15: [link loop] between: a link joins two different memories", NULL);
}
END_TEST

START_TEST(syntax_and_duplicates)
{
    load_fails("[hardware]\nname = t\nthis is not a key\n", NULL,
               "bad.ini:3: expected KEY = VALUE, a [group] or a # comment, got 'this is not a key'",
               NULL);
    load_fails("name = t\n[hardware]\n", NULL, "bad.ini:1: expected a group header such as [hardware]",
               NULL);
    load_fails("[hardware\nname = t\n", NULL, "bad.ini:1: expected a group header", NULL);
    load_fails("[hardware]\n = t\n", NULL, "bad.ini:2: expected a key before '='", NULL);
    load_fails(BASE BASE_HOST, NULL, "bad.ini:21: group [memory host] is declared twice (first on line 9)",
               NULL);
    load_fails(BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 1GiB\ncapacity = 2GiB\n", NULL,
               "bad.ini:7: [memory hbm] capacity is set twice (first on line 6)", NULL);
    load_fails("", NULL, "missing group [hardware]", NULL);
    load_fails("[hardware]\nname = t\xff\xfe\n", NULL, "bad.ini:2: expected UTF-8 text", NULL);
}
END_TEST

/* The help text comes from the tables the loader checks: every group, and
 * each required key marked so. */
START_TEST(describe_lists_the_checked_keys)
{
    char *text = strata_hw_describe("");
    const char *const expected[] = {"[hardware]\n  name (required): ", "[memory NAME]\n  kind (required): ",
                                    "  capacity (required): size, 1 B to 1 EiB\n", "  allocator.KEY: ",
                                    "[link NAME]\n  between (required): ", "  latency: per transfer, 0 to 1 s",
                                    "[compute NAME]\n  flops (required): ", NULL};
    for (const char *const *e = expected; *e; e++)
        ck_assert_msg(strstr(text, *e), "lacks '%s' in:\n%s", *e, text);
    ck_assert_ptr_null(strstr(text, "colour"));
    ck_assert_ptr_null(strstr(text, "[params")); /* hw checks no model's parameters */
    g_free(text);
    /* what the help marks required is required */
    load_fails("[hardware]\nname = t\n[memory hbm]\nkind = device\nbandwidth = 1TB/s\n", NULL,
               "bad.ini:3: [memory hbm] missing required key 'capacity'", NULL);
}
END_TEST

START_TEST(file_errors)
{
    GError *err = NULL;
    ck_assert_ptr_null(strata_placement_hw_load("/nonexistent/machine.ini", NULL, &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_IO);
    ck_assert_ptr_nonnull(strstr(err->message, "/nonexistent/machine.ini"));
    g_clear_error(&err);

    /* a real file: errors carry its path */
    char *path = strata_test_write_temp("hw-XXXXXX.ini",
                                        BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 16XB\n"
                                                      "bandwidth = 1TB/s\n");
    ck_assert_ptr_null(strata_placement_hw_load(path, NULL, &err));
    char *expected = g_strdup_printf("%s:6: [memory hbm] capacity:", path);
    ck_assert_msg(strstr(err->message, expected), "%s", err->message);
    g_free(expected);
    g_clear_error(&err);
    g_unlink(path);
    g_free(path);

    /* a NUL byte would hide the rest of the file */
    char *dir = strata_test_temp_dir();
    path = g_build_filename(dir, "nul.ini", NULL);
    static const char with_nul[] = "[hardware]\nname = t\n\0[memory x]\n";
    ck_assert(g_file_set_contents(path, with_nul, sizeof with_nul - 1, NULL));
    ck_assert_ptr_null(strata_placement_hw_load(path, NULL, &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_ptr_nonnull(strstr(err->message, "nul.ini:3:1: expected text, got a NUL byte"));
    g_clear_error(&err);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(cli_check_names_hw_errors)
{
    /* end to end: a bad hardware file makes `strata run` exit 2 naming FILE:LINE */
    char *hw = strata_test_write_temp("hw-XXXXXX.ini",
                                      BASE_HARDWARE "[memory hbm]\nkind = device\ncapacity = 16XB\n"
                                                    "bandwidth = 1TB/s\n");
    char *trace = strata_test_write_temp("t-XXXXXX.trace", "strata-trace 1\nalloc a 1KiB\nfree a\n");
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 2);
    char *expected = g_strdup_printf("%s:6: [memory hbm] capacity:", hw);
    ck_assert_msg(strstr(r.err, expected), "stderr: %s", r.err);
    g_free(expected);
    strata_cli_result_clear(&r);
    g_unlink(hw);
    g_unlink(trace);
    g_free(hw);
    g_free(trace);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hw");
    TCase *tc = tcase_create("hw");
    tcase_add_test(tc, every_shipped_config_loads);
    tcase_add_test(tc, describe_lists_the_checked_keys);
    tcase_add_test(tc, tpu_host_to_vmem_goes_through_hbm);
    tcase_add_test(tc, tpu_v5e_figures);
    tcase_add_test(tc, test_simple_values_and_defaults);
    tcase_add_test(tc, all_keys_and_inline_comments);
    tcase_add_test(tc, routes_fewest_hops_ties_by_declaration);
    tcase_add_test(tc, overrides_apply_before_validation);
    tcase_add_test(tc, unknown_group);
    tcase_add_test(tc, unknown_key);
    tcase_add_test(tc, reported_capacity_at_most_capacity);
    tcase_add_test(tc, missing_required_keys);
    tcase_add_test(tc, bad_values_name_line_group_key);
    tcase_add_test(tc, bad_links);
    tcase_add_test(tc, syntax_and_duplicates);
    tcase_add_test(tc, file_errors);
    tcase_add_test(tc, cli_check_names_hw_errors);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
