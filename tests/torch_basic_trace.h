/*
 * torch_basic_trace.h: the setup ops of make_snapshot.py's `basic` device
 * run, derived by hand in test_torch_import.c's header comment; shared by
 * the tests whose snapshots hold that run (test_torch_import.c,
 * test_torch_host.c).
 */
#ifndef STRATA_TEST_TORCH_BASIC_TRACE_H
#define STRATA_TEST_TORCH_BASIC_TRACE_H

#define TORCH_BASIC_SETUP_OPS                                        \
    "alloc seg.0 20MiB addr=0x7f0000000000 stream=s0 note=setup\n"   \
    "free seg.0 stream=s0 note=setup\n"                              \
    "alloc b.1 4000000 addr=0x7f0000000000 stream=s0 note=setup\n"   \
    "alloc fill.2 16971264 stream=s0 note=setup\n"                   \
    "alloc b.3 1000 addr=0x7f0002000000 stream=s0 note=setup\n"      \
    "alloc fill.4 1MiB stream=s0 note=setup\n"                       \
    "alloc fill.5 1023KiB stream=s0 note=setup\n"                    \
    "free fill.2 stream=s0 note=setup\n"                             \
    "free fill.4 stream=s0 note=setup\n"                             \
    "free fill.5 stream=s0 note=setup\n"

#endif
