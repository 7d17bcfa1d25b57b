/*
 * dram.c: the pin rate a DRAM's refresh and bus turnarounds leave (dram.h).
 *
 * Sources:
 *  [dramsim3] umd-memsys/DRAMsim3 configs/HBM2_8Gb_x128.ini, the JEDEC HBM2
 *             (JESD235) timing in clocks of tCK = 1 ns: tRFC = 260,
 *             tREFI = 3900, CL = 14, CWL = 4, tWTR_S = 6, tRPRE = 1; and
 *             src/configuration.cc: tRTRS = 2 (the default every config
 *             without one takes); src/timing.cc: write_to_read_s =
 *             write_delay + tWTR_S, read_to_write = RL + burst - WL + tRPRE +
 *             tRTRS (after the DDR4 specification, page 94).
 *  [pg313]    AMD PG313, "HBM Topology": a stack is 1024 bits, eight 128-bit
 *             channels, each "two semi-independent 64-bit data channels"
 *             (pseudo channels), burst length 4.
 *  [jesd235a] JEDEC JESD235A (HBM2), pseudo channel mode: a page of 1 KB per
 *             pseudo channel (2 KB per 128-bit legacy channel).
 *  [ram2]     CMU-SAFARI/ramulator2 @c5b1c3a, python/ramulator/dram/hbm3.py,
 *             its JEDEC HBM3 (JESD238) spec: preset HBM3_6400Mbps (lines
 *             226-235) in clocks of tCK = 0.625 ns (6.4 Gb/s a pin, four
 *             data a clock): nBL = 2, nCL = 20, nCWL = 10, nWTRS = 7,
 *             nRTW = 20; the constraints RD -> WR >= nRTW and WR -> RD >=
 *             nCWL + nBL + nWTRS per pseudo channel (lines 86, 88); tREFI =
 *             3900 ns (line 200); tRFCab by channel density, "Table 84 in
 *             JESD238" (lines 185-189): 260 ns up to 4 Gb, 350 ns up to
 *             8 Gb, 450 ns up to 16 Gb, 550 ns above; organisation "Table 4
 *             in JESD238" (lines 209-220): 32-bit pseudo channels, a row of
 *             2^5 column addresses x BL8 x 32 DQ = 1 KB per pseudo channel.
 *  [jesd238]  JEDEC's HBM3 announcement (JESD238, January 2022): 16
 *             channels a stack, two pseudo channels each (1024 / 32 = 32
 *             bits a pseudo channel), up to 6.4 Gb/s a pin.
 */
#include "hw/dram.h"
#include <glib.h>
#include <string.h>

/* Seconds of one clock of [dramsim3]'s HBM2 timing (tCK = 1 ns). The
 * timings are analogue delays of the DRAM core, quoted in nanoseconds at
 * this clock and held in nanoseconds at other pin rates. */
#define HBM2_TCK 1e-9
/* Seconds of one clock of [ram2]'s HBM3 timing (tCK = 0.625 ns at 6.4 Gb/s),
 * held in nanoseconds at other pin rates as HBM2's. */
#define HBM3_TCK 0.625e-9

/* HBM3's bus turnarounds per pseudo channel ([ram2], clocks of HBM3_TCK):
 * from the end of the last write's data (nCWL + nBL after its command) to
 * the read command nWTRS = 7, then nCL = 20 to its data: 27 clocks idle;
 * a write follows a read's command after nRTW = 20 and its data starts nCWL
 * = 10 later, while the read's data ends at nCL + nBL = 22: 20 + 10 - 22 =
 * 8 clocks idle. */
#define HBM3_WRITE_TO_READ ((7 + 20) * HBM3_TCK)
#define HBM3_READ_TO_WRITE ((20 + 10 - (20 + 2)) * HBM3_TCK)

static const strata_dram_timing dram_timings[] = {
    {
        .name = "hbm2",
        /* [dramsim3] tRFC = 260, tREFI = 3900 clocks. */
        .refresh_cycle = 260 * HBM2_TCK,
        .refresh_interval = 3900 * HBM2_TCK,
        /* From the end of the last write's data, tWTR_S = 6 clocks to the
         * read command, then CL = 14 to its data: 20 clocks idle ([dramsim3]
         * write_to_read_s counts from the write command, write_delay =
         * CWL + burst before the data ends). */
        .write_to_read = (6 + 14) * HBM2_TCK,
        /* read_to_write = RL + burst - WL + tRPRE + tRTRS: the write's data
         * (WL after its command) starts tRPRE + tRTRS = 1 + 2 clocks after
         * the read's data (RL + burst) ends. */
        .read_to_write = (1 + 2) * HBM2_TCK,
        /* [pg313] 64-bit pseudo channels. */
        .channel_bits = 64,
        /* [jesd235a] 1 KB page per pseudo channel. ESTIMATE: the memory
         * controller writes one page of a pseudo channel between two
         * switches of its bus (a write drain of one open row); NVIDIA does
         * not publish its controller's policy. */
        .page_bytes = 1024,
    },
    {
        /* HBM3 of 16 GB 8-high stacks (16 Gb dies, H100 SXM5's 5 x 16 GB):
         * 128 Gb / 16 channels = 8 Gb a channel, [ram2] tRFCab 350 ns. */
        .name = "hbm3",
        .refresh_cycle = 350e-9,
        .refresh_interval = 3900e-9,
        .write_to_read = HBM3_WRITE_TO_READ,
        .read_to_write = HBM3_READ_TO_WRITE,
        .channel_bits = 32,
        /* [ram2] 1 KB page per pseudo channel; the same ESTIMATE as hbm2's
         * (one page written between two switches of the bus). */
        .page_bytes = 1024,
    },
    {
        /* HBM3e of 24 GB 8-high stacks (24 Gb dies, H200's 6 x 24 GB):
         * 192 Gb / 16 channels = 12 Gb a channel, [ram2]'s row up to 16 Gb,
         * tRFCab 450 ns. ESTIMATE: HBM3e (no JEDEC standard of its own; the
         * vendors extend JESD238's pin rate) keeps HBM3's timing in
         * nanoseconds, its interface and its 1 KB page: only the refresh
         * of its denser channel differs. */
        .name = "hbm3e",
        .refresh_cycle = 450e-9,
        .refresh_interval = 3900e-9,
        .write_to_read = HBM3_WRITE_TO_READ,
        .read_to_write = HBM3_READ_TO_WRITE,
        .channel_bits = 32,
        .page_bytes = 1024,
    },
};

const strata_dram_timing *strata_dram_find(const char *name)
{
    for (size_t i = 0; i < sizeof dram_timings / sizeof dram_timings[0]; i++)
        if (strcmp(dram_timings[i].name, name) == 0)
            return &dram_timings[i];
    return NULL;
}

char *strata_dram_names(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < sizeof dram_timings / sizeof dram_timings[0]; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", dram_timings[i].name);
    return g_string_free(s, FALSE);
}

char *strata_dram_describe(void)
{
    char *names = strata_dram_names();
    char *text = g_strdup_printf("the DRAM timing set its port pays (refresh, and bus turnarounds in a copy inside "
                                 "it): %s (hw/dram.h); bandwidth is then the pin rate; none undoes a base file's", names);
    g_free(names);
    return text;
}

double strata_dram_refresh_share(const strata_dram_timing *t)
{
    return 1.0 - t->refresh_cycle / t->refresh_interval;
}

double strata_dram_copy_share(const strata_dram_timing *t, double bandwidth, uint32_t bus_width)
{
    double pin_rate = bandwidth * 8.0 / bus_width;            /* bits/s per data pin */
    double channel_rate = pin_rate * t->channel_bits / 8.0;   /* bytes/s of one pseudo channel */
    double page_time = (double)t->page_bytes / channel_rate;  /* one page read, or one written */
    return 2 * page_time / (2 * page_time + t->write_to_read + t->read_to_write);
}

double strata_dram_copy_extra(const strata_memory_spec *m, uint64_t bytes)
{
    if (m->copy_share <= 0 || m->copy_share >= 1)
        return 0;
    return 2.0 * (double)bytes / m->bandwidth * (1.0 / m->copy_share - 1.0);
}
