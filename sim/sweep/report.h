/*
 * report.h: the sweep's plots and HTML report, drawn by viz/report.py from
 * the results files alone (results.json, points/ID.json and the points'
 * timelines), into OUT/report.html and OUT/plots/.
 *
 * Python is found as $STRATA_PYTHON, else /usr/bin/python3 (Debian's, which
 * has python3-matplotlib), else python3 on PATH; viz/ as $STRATA_VIZ_DIR,
 * else the source tree's viz/ (STRATA_SOURCE_DIR).
 *
 * Invariant: the report is written to a temporary and renamed by report.py,
 * so OUT/report.html is complete or absent.
 */
#ifndef STRATA_SWEEP_REPORT_H
#define STRATA_SWEEP_REPORT_H

#include "sweep/runner.h"

/* Runs viz/report.py on out_dir; *report_path gets OUT/report.html (g_free). */
bool strata_sweep_make_report(const strata_sweep_ctx *ctx, char **report_path, GError **err);

#endif
