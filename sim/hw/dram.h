/*
 * dram.h: what a DRAM's timing leaves of its pin rate.
 *
 * A memory's datasheet bandwidth is its pin rate: every data pin busy on
 * every clock edge. The DRAM's own timing takes two shares of it:
 *
 *  - refresh: every refresh interval (tREFI) the controller refreshes the
 *    banks, and for the refresh cycle (tRFC) they take no reads or writes;
 *    the port keeps 1 - tRFC / tREFI of the pin rate for all traffic;
 *  - bus turnaround: a copy inside the memory reads the source and writes
 *    the destination over the same data bus. Each switch from writes to
 *    reads leaves the bus idle from the last write's data to the first
 *    read's (the write-to-read delay tWTR plus the read latency RL), each
 *    switch back for the read preamble and the rank-to-rank turnaround
 *    (tRPRE + tRTRS). The controller writes one DRAM page per pseudo channel
 *    between switches (an ESTIMATE, below), so a round of one page read and
 *    one page written takes 2 x page / channel rate + the two turnarounds,
 *    of which the bus carries data 2 x page / channel rate.
 *
 * A timing set is chosen by name (`[memory NAME] dram = hbm2`, `hbm3`,
 * `hbm3e`; `none` undoes a base file's) with the
 * interface width (`bus_width =`, bits of all stacks together): the pin
 * rate per data pin is bandwidth x 8 / bus_width, a pseudo channel's rate
 * channel_bits x that / 8.
 *
 * Invariants: both shares lie in (0, 1]; a memory without a timing set
 * (dram unset) keeps its pin rate for every access, and a copy inside it
 * pays no turnaround (strata_dram_copy_extra() = 0).
 */
#ifndef STRATA_HW_DRAM_H
#define STRATA_HW_DRAM_H

#include <stdint.h>
#include "hw/hw.h"

typedef struct strata_dram_timing {
    const char *name;
    double refresh_cycle;    /* seconds: tRFC, the banks refresh and take no access */
    double refresh_interval; /* seconds: tREFI, the average time between refreshes */
    double write_to_read;    /* seconds the data bus idles switching from writes to reads */
    double read_to_write;    /* seconds the data bus idles switching from reads to writes */
    uint32_t channel_bits;   /* data width of one (pseudo) channel */
    uint32_t page_bytes;     /* bytes of one row (page) of a (pseudo) channel */
} strata_dram_timing;

/* The timing set called name; NULL when there is none. */
const strata_dram_timing *strata_dram_find(const char *name);

/* The known names, comma-separated (for error messages), from the table; g_free. */
char *strata_dram_names(void);
/* The help line of [memory] dram, its names from the table; g_free. */
char *strata_dram_describe(void);

/* The share of the pin rate refresh leaves: 1 - tRFC / tREFI. */
double strata_dram_refresh_share(const strata_dram_timing *t);

/* The share of the port's time a copy inside the memory carries data, for a
 * memory of `bandwidth` bytes/s (the pin rate) over bus_width data pins:
 * 2 p / (2 p + write_to_read + read_to_write), p = page_bytes / channel rate. */
double strata_dram_copy_share(const strata_dram_timing *t, double bandwidth, uint32_t bus_width);

/* Seconds a copy of bytes inside memory m takes beyond its reads and writes
 * at the port's rate (2 x bytes / m->bandwidth): the turnarounds,
 * 2 x bytes / m->bandwidth x (1 / m->copy_share - 1); 0 without a timing set. */
double strata_dram_copy_extra(const strata_memory_spec *m, uint64_t bytes);

#endif
