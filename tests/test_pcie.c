/* test_pcie.c: PCIe data rates derived from the protocol (hw/pcie.h) and the
 * [link] keys that select them (hw/hw.c), against hand derivations. */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "hw/pcie.h"

static void near(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "got %.6f GB/s, want %.6f GB/s", got / 1e9, want / 1e9);
}

/*
 * Hand derivation, Gen3 x16 (pcie.c's sources):
 *   raw = 8 GT/s x 16 lanes x 128/130 / 8 = 15.753846 GB/s per direction.
 *   DLLPs: one Ack and one UpdateFC of 8 B each per 144 B (MPS 128) or
 *   168 B (MPS 256); SKP 4 B per 1538 B. TLP share:
 *     MPS 128: 1 - 16/144 - 4/1538 = 0.8862880  -> 13.962447 GB/s
 *     MPS 256: 1 - 16/168 - 4/1538 = 0.9021610  -> 14.212508 GB/s
 *   writes (MWr, 64-bit address): 8 B framing/seq/LCRC + 16 B header = 24 B
 *     MPS 128: x 128/152 = 11.757850 GB/s;  MPS 256: x 256/280 = 12.994293 GB/s
 *   reads (CplD of MPS bytes): 8 + 12 = 20 B
 *     MPS 128: x 128/148 = 12.075629 GB/s;  MPS 256: x 256/276 = 13.182616 GB/s
 * Gen4 doubles the line rate and Gen5 quadruples it; the tables are the same,
 * so every rate scales by 2 and 4.
 */
START_TEST(gen3_to_gen5_x16_at_128_and_256)
{
    const double raw3 = 8e9 * 16 * 128.0 / 130.0 / 8;
    const double share128 = 1 - 16.0 / 144 - 4.0 / 1538, share256 = 1 - 16.0 / 168 - 4.0 / 1538;
    near(raw3, 15.753846153846e9);
    for (uint32_t gen = 3; gen <= 5; gen++) {
        double scale = gen == 3 ? 1 : gen == 4 ? 2 : 4;
        strata_pcie_config c128 = {gen, 16, 128, 512, 0}, c256 = {gen, 16, 256, 512, 0};
        ck_assert_ptr_null(strata_pcie_check(&c128));
        ck_assert_ptr_null(strata_pcie_check(&c256));
        near(strata_pcie_raw_rate(&c128), scale * raw3);
        near(strata_pcie_tlp_rate(&c128), scale * raw3 * share128);
        near(strata_pcie_write_rate(&c128), scale * raw3 * share128 * 128 / 152);
        near(strata_pcie_read_rate(&c128), scale * raw3 * share128 * 128 / 148);
        near(strata_pcie_write_rate(&c256), scale * raw3 * share256 * 256 / 280);
        near(strata_pcie_read_rate(&c256), scale * raw3 * share256 * 256 / 276);
        /* the link carries the lower (the write direction here) */
        near(strata_pcie_data_rate(&c256), scale * raw3 * share256 * 256 / 280);
    }
    /* the figures of the comment above, to the kB/s */
    strata_pcie_config g4 = {4, 16, 256, 512, 0};
    ck_assert_msg(fabs(strata_pcie_write_rate(&g4) - 25.988585e9) < 1e3, "%.0f", strata_pcie_write_rate(&g4));
    strata_pcie_config g3 = {3, 16, 128, 512, 0};
    ck_assert_msg(fabs(strata_pcie_read_rate(&g3) - 12.075629e9) < 1e3, "%.0f", strata_pcie_read_rate(&g3));
}
END_TEST

/* Read completions split at a 64 B boundary: 64/(64+20) of the TLP rate;
 * a max_read_request below the payload caps the completion. */
START_TEST(read_completion_and_request)
{
    const double raw4 = 16e9 * 16 * 128.0 / 130.0 / 8, share256 = 1 - 16.0 / 168 - 4.0 / 1538;
    strata_pcie_config rcb = {4, 16, 256, 512, 64};
    near(strata_pcie_read_rate(&rcb), raw4 * share256 * 64 / 84);
    near(strata_pcie_data_rate(&rcb), raw4 * share256 * 64 / 84); /* now below the write rate */
    strata_pcie_config small_req = {4, 16, 256, 128, 0};
    near(strata_pcie_read_rate(&small_req), raw4 * share256 * 128 / 148);
}
END_TEST

/* Gen6 FLIT mode: 64 GT/s x 16 / 8 = 128 GB/s of flits, 236 of 256 bytes are
 * TLPs (117.999... = 118 GB/s); SKP 4/1538; no DLLP share (they ride in the
 * flit's DLP bytes) and no per-TLP framing or LCRC: a 256 B write carries
 * 16 B of header -> x 256/272. */
START_TEST(gen6_flit)
{
    strata_pcie_config c = {6, 16, 256, 512, 0};
    near(strata_pcie_raw_rate(&c), 128e9 * 236 / 256);
    near(strata_pcie_write_rate(&c), 128e9 * 236 / 256 * (1 - 4.0 / 1538) * 256 / 272);
    near(strata_pcie_read_rate(&c), 128e9 * 236 / 256 * (1 - 4.0 / 1538) * 256 / 268);
}
END_TEST

START_TEST(check_names_the_field)
{
    strata_pcie_config bad[] = {{2, 16, 256, 512, 0}, {4, 12, 256, 512, 0}, {4, 16, 300, 512, 0},
                                {4, 16, 256, 64, 0},  {4, 16, 256, 512, 96}, {4, 16, 128, 512, 256}};
    const char *field[] = {"generation", "lanes", "max_payload", "max_read_request", "read_completion",
                           "read_completion"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *why = strata_pcie_check(&bad[i]);
        ck_assert_ptr_nonnull(why);
        ck_assert_msg(g_str_has_prefix(why, field[i]), "case %zu: %s", i, why);
    }
}
END_TEST

static const char *hw_head = "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 1GB\nbandwidth = 1TB/s\n"
                             "[memory host]\nkind = host\ncapacity = 1GB\nbandwidth = 100GB/s\n"
                             "[link pcie]\nbetween = host hbm\n";

static strata_hw *load_link(const char *keys, GError **err)
{
    return strata_test_load_hw_text(hw_head, keys, err);
}

/* The keys give the derived rate; bandwidth = overrides it; bad keys name FILE:LINE and the key. */
START_TEST(link_keys)
{
    GError *err = NULL;
    strata_hw *hw = load_link("generation = 4\nlanes = 16\nmax_payload = 256B\nmax_read_request = 512B\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_pcie_config c = {4, 16, 256, 512, 0};
    near(strata_hw_link(hw, 0)->bandwidth, strata_pcie_data_rate(&c));
    strata_hw_free(hw);

    hw = load_link("generation = 4\nlanes = 16\nmax_payload = 256\nmax_read_request = 512\nbandwidth = 20GB/s\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    near(strata_hw_link(hw, 0)->bandwidth, 20e9);
    strata_hw_free(hw);

    const char *bad[][2] = {
        {"generation = 2\nlanes = 16\nmax_payload = 256\nmax_read_request = 512\n", "t.ini:13: [link pcie] generation"},
        {"generation = 4\nlanes = 12\nmax_payload = 256\nmax_read_request = 512\n", "[link pcie] lanes"},
        {"generation = 4\nlanes = 16\nmax_payload = 200\nmax_read_request = 512\n", "[link pcie] max_payload"},
        {"generation = 4\nlanes = 16\nmax_read_request = 512\n", "needs max_payload"},
        {"lanes = 16\n", "[link pcie] lanes: a PCIe key needs generation"},
        {"latency = 1us\n", "expected bandwidth = "},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
        strata_test_hw_text_refused(hw_head, bad[i][0], bad[i][1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pcie");
    TCase *tc = tcase_create("pcie");
    tcase_add_test(tc, gen3_to_gen5_x16_at_128_and_256);
    tcase_add_test(tc, read_completion_and_request);
    tcase_add_test(tc, gen6_flit);
    tcase_add_test(tc, check_names_the_field);
    tcase_add_test(tc, link_keys);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
