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
 */
#include "hw/dram.h"
#include <glib.h>
#include <string.h>

/* Seconds of one clock of [dramsim3]'s HBM2 timing (tCK = 1 ns). The
 * timings are analogue delays of the DRAM core, quoted in nanoseconds at
 * this clock and held in nanoseconds at other pin rates. */
#define HBM2_TCK 1e-9

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
                                 "it): %s (hw/dram.h); bandwidth is then the pin rate", names);
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
