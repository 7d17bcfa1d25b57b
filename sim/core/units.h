/*
 * units.h: parsing and printing of sizes, bandwidths, times, flop rates
 * and clock frequencies.
 *
 * Accepted text (case of the unit as shown; no space or one space before it):
 *   size       4096, 4096B, 64KB, 64kB, 64KiB, 1.5GiB, 2MB, 1TiB, 1PB, 1EiB
 *              (KB = kB = 1000, KiB = 1024; B, K/k, M, G, T, P, E prefixes)
 *   bandwidth  16GB/s, 16 GB/s, 900GiB/s, 1e9B/s, 819 GB/s, 1 kB/s, 10 PB/s
 *              (B/s up to PB/s and PiB/s)
 *   time       250ns, 3us, 2ms, 1.5s, 0 (a bare number is seconds only for 0)
 *   flop rate  197TFLOP/s, 918 TFLOP/s, 1.2PFLOP/s, 4e12FLOP/s
 *   frequency  1830MHz, 1.83GHz, 1830 MHz (Hz, kHz, MHz, GHz)
 *   flops      1000000, 2e9, 4.5GFLOP, 3TFLOP (an amount of work)
 *   boolean    true, false, yes, no, 1, 0 (any case): strata's one rule for
 *              a yes-or-no value, of a model's parameters (core/params.h),
 *              a hardware file's keys (pageable, staging_overlap, nvls,
 *              wraparound) and an experiment's [output] keys
 *
 * Invariants: a parse either succeeds with a finite, non-negative value or
 * fails with a STRATA_ERROR_INPUT error quoting the text that failed; a size
 * that does not fit in 64 bits is an error (never wraps); fractional bytes
 * are an error (1.5B), fractional sizes in larger units round to the nearest
 * byte. Printing uses binary units for sizes and decimal for rates.
 */
#ifndef STRATA_UNITS_H
#define STRATA_UNITS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool strata_parse_size(const char *text, uint64_t *bytes, GError **err);
/* The same, refusing 0 ("expected a size above 0, got '0'"): a capacity,
 * where 0 would otherwise stand for a default. */
bool strata_parse_size_above_zero(const char *text, uint64_t *bytes, GError **err);
bool strata_parse_bandwidth(const char *text, double *bytes_per_s, GError **err);
bool strata_parse_time(const char *text, double *seconds, GError **err);
bool strata_parse_flop_rate(const char *text, double *flops_per_s, GError **err);
bool strata_parse_frequency(const char *text, double *hz, GError **err);
bool strata_parse_flops(const char *text, double *flops, GError **err);
/* A boolean (the rule above); false, and *value untouched, for any other
 * text. It sets no error: each reader says what it expects in its words. */
bool strata_parse_bool(const char *text, bool *value);
/* Whether a digit 1-9 stands in the significand of the decimal number
 * text[0..len), before its exponent ('e' or 'E'): a number with one that
 * strtod reads as 0 (1e-400, below the least double) lost its value, where
 * 0e-400 is 0. The rule of the parsers' "below the least double" refusal
 * and of serve's decimals (serve_stream.h strata_serve_decimal). */
bool strata_decimal_mantissa_nonzero(const char *text, size_t len);
/* Plain unsigned integer (decimal or 0x hex), overflow is an error. */
bool strata_parse_u64(const char *text, uint64_t *value, GError **err);

/* Printing: each returns a newly allocated string (g_free). */
char *strata_format_size(uint64_t bytes);          /* "1.50 GiB", "512 B" */
char *strata_format_size_exact(uint64_t bytes);    /* shortest exact: "64KiB", "1000" */
char *strata_format_time(double seconds);          /* "67.109 ms", "1.000 us" */
char *strata_format_time_exact(double seconds);    /* round-trips: "250ns", "0.0671s" */
char *strata_format_bandwidth(double bytes_per_s); /* "16.00 GB/s" */
/* a and b as strata_format_bandwidth writes them, with more decimals where unequal values would read alike
 * ("25.00 GB/s" and "25.00 GB/s" become "25.000 GB/s" and "25.001 GB/s"): each g_free */
void strata_format_bandwidth_pair(double a, double b, char **sa, char **sb);
char *strata_format_flop_rate(double flops_per_s); /* "197.0 TFLOP/s" */
/* The decimal digits of v into buf (no NUL, no allocation: for writers that
 * print a number per event); returns how many. */
#define STRATA_U64_DIGITS 20
size_t strata_format_u64(char buf[STRATA_U64_DIGITS], uint64_t v);

#endif
