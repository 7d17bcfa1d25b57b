/*
 * test_hardening_twentieth.c: the twentieth hardening pass (wave 40;
 * docs/reliability.md, "The twentieth pass"), a row per case: each refused
 * row was taken at exit 0 on the base (f1b55992); the rows at 0 pin what
 * stays taken.
 *
 * What the pass found as a new user: a nonzero figure below the least
 * double (1e-400: 10^-400 is under 4.9e-324, the least subnormal) is read
 * by strtod as 0, and 0 is a figure with its own meaning in each place
 * that read it: a rate of 0 sends every request at once, a time scale of
 * 0 puts every arrival at 0, a time of 0 is no time at all. Refused where
 * serve reads a decimal (serve_stream.c strata_serve_decimal) and where any
 * time, bandwidth, rate or clock is parsed (units.c parse_real: hardware
 * files, traces, --step-overhead's units); 0 itself, however written
 * (0e-400, 0.0s), stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

/* serve of a 2-layer llama-2-7b's Poisson stream on h100.ini, results in out.json (its keys, then the options) */
#define SERVE_P(keys) HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --json out.json --poisson " keys " "
#define SERVE8 SERVE_P("n=8,rate=50,prompt=64,output=4")

/* --poisson rate=1e-400 (a request every 10^400 s) ran as rate=0, all 8
 * at time 0 (the stream line said "rate=0"), exit 0; rate=1e-300 was
 * refused for its arrivals past 1e7 s. --time-scale 1e-400 ran as 0 too,
 * and a request CSV's arrival_s 1e-400 as 0, where 1e-320 (a subnormal)
 * is refused at its line for the picosecond floor. */
STRATA_ROWS_TEST(serve_decimal_below_least_double,
    {SERVE_P("n=8,rate=1e-400"), 2, "serve: --poisson rate: expected a number >= 0, got '1e-400'"},
    {SERVE8 "--time-scale 1e-400", 2, "serve: --time-scale: expected a factor >= 0, got '1e-400'"},
    {HR_CSV("0,8,8\\n1e-400,8,8\\n") HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --requests r.csv "
     "--json out.json", 2, "serve: r.csv:3: arrival_s: expected seconds >= 0, got '1e-400'"},
    /* what stays taken: 0 written as 0 or with a zero significand */
    {SERVE_P("n=8,rate=0"), 0, NULL},
    {SERVE8 "--time-scale 0e-400", 0, NULL},
)

/* --step-overhead 1e-400 (and 1e-400s) was a step overhead of 0 at exit
 * 0 where 1e-320 is refused ("expected 0, or from 1e-12 s"); a hardware
 * file's time (--hw-set link.pcie.latency=1e-400s) was a latency of 0;
 * a trace's compute time=1e-400s ran as a compute of no time. */
STRATA_ROWS_TEST(times_below_least_double,
    {SERVE8 "--step-overhead 1e-400", 2,
     "serve: --step-overhead: expected a finite number of seconds >= 0 or a time such as 2ms, got 1e-400"},
    {SERVE8 "--step-overhead 1e-400s", 2, "serve: --step-overhead: expected a finite number of seconds"},
    {SERVE8 "--hw-set link.pcie.latency=1e-400s", 2,
     "[link pcie] latency: '1e-400s' is below the least double and reads as 0; expected 0 or a time such as 250ns"},
    {HR_TRACE_OF("compute k time=1e-400s in=a out=a") "\"$S\" run --hw \"$H/h100.ini\" --trace t.trace "
     "--json out.json", 2, "t.trace:3:16: expected a time such as 250ns, 3us, 2ms or 1.5s, got '1e-400s'"},
    /* what stays taken: a time of 0 */
    {SERVE8 "--step-overhead 0.0s", 0, NULL},
    {HR_TRACE_OF("compute k time=0e-400s in=a out=a") "\"$S\" run --hw \"$H/h100.ini\" --trace t.trace "
     "--json out.json", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        serve_decimal_below_least_double,
        times_below_least_double,
        NULL,
    };
    return strata_hardening_main("twentieth", tests);
}
