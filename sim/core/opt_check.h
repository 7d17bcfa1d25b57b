/*
 * opt_check.h: a command line's options checked against its GOption
 * entries before GOption reads them, for what GOption takes silently:
 *   - a single-valued option given twice (`--capacity 1GiB --capacity
 *     2GiB`, `--sweep a=1 --sweep a=2`): GOption keeps the last, so the
 *     first was dropped at exit 0. Refused, naming both values. Flags
 *     (no value) and the array options (--set, --policy) may repeat;
 *   - an integer option's value that is not plain decimal: GOption reads
 *     it with strtol(.., 0), so `--tp 010` was 8 (octal), `--tp 0x2` 2 and
 *     ` 2` 2. Refused: the digits, an optional '-', no leading zero;
 *   - an int option given -2147483648 (G_MININT), the value serve and
 *     sweep read as "not given": it ran at the option's default. Refused.
 *
 * It follows GOption's reading of argv: "--" ends the options (as does
 * the first argument that is not one, with strict_posix); "--NAME=VALUE"
 * or "--NAME VALUE"; "-abc" a group of short options, the one that takes a
 * value taking the next argument ("-oFILE" is not GOption's: it refuses a
 * second letter that takes a value, and an unknown letter). Options it
 * does not know, and such groups, are left to GOption, which refuses them.
 *
 * Invariants: reads argv only; false only with *message set (g_free).
 */
#ifndef STRATA_CORE_OPT_CHECK_H
#define STRATA_CORE_OPT_CHECK_H

#include <glib.h>
#include <stdbool.h>

/* entries: NULL-name terminated. argv[0] is the command. */
bool strata_opt_check(const GOptionEntry *entries, int argc, char **argv, bool strict_posix, char **message);

#endif
