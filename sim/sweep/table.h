/*
 * table.h: a sweep's table of results, one row per point, from the points'
 * json files: OUT/results.csv and OUT/results.json.
 *
 * Columns: the axes first (values as written in the experiment), then the
 * figures (result keys such as makespan_s, looked up in each point's
 * results; a key a point lacks is empty in the CSV and null in the JSON).
 * results.json also carries the experiment's name, title, description,
 * runner, each axis's unit and numeric values (for charts), the figures,
 * the plots asked for and each point's timeline file.
 *
 * Invariants: rows are in point order; both files are written atomically;
 * numbers are printed with fixed formats, so the same points give
 * byte-identical tables.
 */
#ifndef STRATA_SWEEP_TABLE_H
#define STRATA_SWEEP_TABLE_H

#include "sweep/runner.h"

/* Every point must be done. Counts oom points into stats->oom. A figure of
 * the experiment's [output] figures that no point's results hold, where a
 * point has results, is an error at the figures' line naming the keys they
 * hold, and no table is written (the points stay). The runner's default
 * figures that no point has are listed in *missing (g_strfreev; NULL when
 * none). */
bool strata_sweep_write_table(const strata_sweep_ctx *ctx, strata_sweep_stats *stats, char ***missing,
                              GError **err);

#endif
