/*
 * testutil.h: helpers shared by the Check suites.
 *
 * - strata_test_run_cli(): runs the strata binary with arguments and captures
 *   exit status, stdout and stderr (for end-to-end tests).
 * - strata_test_write_temp(): writes text to a fresh temporary file.
 * - strata_test_shared_path(): path under ../shared/data, or NULL (and a
 *   message) when absent, for tests that skip without the data.
 * - strata_test_main(): runs a suite in fork mode (SimGrid: one engine per
 *   process) and returns the process exit status.
 */
#ifndef STRATA_TESTUTIL_H
#define STRATA_TESTUTIL_H

#include <check.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <sys/resource.h>

typedef struct strata_cli_result {
    int status;   /* exit status, or -1 if killed by a signal */
    char *out;    /* stdout (g_free) */
    char *err;    /* stderr (g_free) */
} strata_cli_result;

/* The strata binary, then argv, NULL-terminated (strings borrowed; g_ptr_array_free(, TRUE)). */
GPtrArray *strata_test_binary_argv(const char *const *argv);
/* argv is NULL-terminated, without the binary. */
strata_cli_result strata_test_run_cli(const char *const *argv);
/* Same, with standard error on a pseudo-terminal (stdout to a file, stdin
 * empty): r.err is what the terminal showed, progress lines included. */
strata_cli_result strata_test_run_cli_tty(const char *const *argv);
/* Runs argv (exit 0 expected) three ways and checks that `shown` (e.g.
 * "import torch: ") is on standard error only on a terminal: under a
 * pseudo-terminal it is; with --quiet added, and on a pipe, neither it nor
 * the erase-line sequence a progress line ends with is (a terminal turns
 * every newline into "\r\n", so a carriage return proves nothing). */
void strata_test_progress_only_on_tty(const char *const *argv, const char *shown);
/* argv (NULL-terminated) followed by `--set X` for each X of sets
 * (NULL-terminated; NULL for none). */
strata_cli_result strata_test_run_cli_sets(const char *const *argv, const char *const *sets);
/* Same, with a shell-like list: strata_test_cli("run", "--hw", x, NULL). */
strata_cli_result strata_test_cli(const char *first, ...) G_GNUC_NULL_TERMINATED;
void strata_cli_result_clear(strata_cli_result *r);

/* NULL when the len bytes of text are one strict JSON text (RFC 8259:
 * UTF-8 strings, numbers of its grammar only, no NaN nor infinity); else
 * where and what was expected (g_free). _jsonl: every line one such text. */
char *strata_test_json_strict_error(const char *text, gsize len);
char *strata_test_jsonl_strict_error(const char *text, gsize len);
/* After a successful run of argv: every JSON it wrote (--json PATH or -,
 * --timeline PATH, not .gz) is strict JSON, else the test fails.
 * strata_test_run_cli and _tty call it on every run, so every test's JSON
 * output is checked. */
void strata_test_check_json_outputs_in(const char *dir, const char *const *argv, const strata_cli_result *r);

/* Limits of a command's process (0: none). */
typedef struct strata_test_limits {
    rlim_t fsize; /* RLIMIT_FSIZE */
    rlim_t as;    /* RLIMIT_AS */
} strata_test_limits;
/* strata ARGV in dir under the limits (NULL: none); its JSON checked as above. */
strata_cli_result strata_test_run_in(const char *dir, const strata_test_limits *lim, const char *const *argv);
/* sh -c SCRIPT in dir, with $S the strata binary and $H configs/hw. */
strata_cli_result strata_test_sh_in(const char *dir, const char *script);
/* A row of strata_test_sh_rows: a script, its exit status, a message in
 * its standard error (NULL: anything). */
typedef struct strata_test_sh_case {
    const char *script;
    int status;
    const char *message;
} strata_test_sh_case;
/* Runs each row through strata_test_sh_in in a fresh directory; after a
 * refusal (exit 2) the directory holds no output (out.*) and no outfile.c
 * temporary (a name starting with '.'). */
void strata_test_sh_rows(const strata_test_sh_case *rows, size_t n);
/* r exited `status` with in_err (NULL: anything) in its standard error. */
void strata_test_expect(const strata_cli_result *r, int status, const char *in_err);
/* dir holds exactly the names given (NULL-terminated): no temporary. */
void strata_test_only(const char *dir, ...) G_GNUC_NULL_TERMINATED;

/* Writes text to a new temporary file named like `pattern` (e.g. "x-XXXXXX.trace"); g_free. */
char *strata_test_write_temp(const char *pattern, const char *text);
/* A fresh temporary directory (g_free; removed by the OS's tmp cleaning). */
char *strata_test_temp_dir(void);
/* Removes the files in dir, then dir (not recursive; what is missing is skipped). */
void strata_test_remove_dir(const char *dir);
/* Path of a file in the repository (g_free). */
char *strata_test_source_path(const char *relative);
/* Path under ../shared/data or NULL with a printed skip message (g_free). */
char *strata_test_shared_path(const char *relative);
/* The same for a slow data-driven case (a whole real snapshot, trace or
 * benchmark file): such cases run in the plain build only, so in a
 * sanitizer build (STRATA_SANITIZE) this prints that the case is skipped and
 * why, and returns NULL. */
char *strata_test_slow_data_path(const char *relative);

/* Loads configs/hw/NAME.ini with the overrides (NULL or NULL-terminated
 * KEY=VALUE), failing the test with the loader's message if it cannot. */
typedef struct strata_hw strata_hw;
strata_hw *strata_test_load_hw(const char *name, const char *const *overrides);
/* The same for a hardware file at a path relative to the source tree
 * (validation/held-out/hw/mi300x-roce.ini). */
strata_hw *strata_test_load_hw_file(const char *relative, const char *const *overrides);
/* Loads the hardware text head followed by keys, as a file named t.ini (so
 * messages read "t.ini:LINE: ..."); NULL with *err set where the loader
 * refuses it. For tests of a section's keys: head ends in the section. */
strata_hw *strata_test_load_hw_text(const char *head, const char *keys, GError **err);
/* Runs the trace text (written to a temporary file, removed after) on hw
 * with opt (NULL: the defaults): the results, out of memory included, or
 * NULL with *err where the engine refuses the run; a trace that cannot be
 * opened fails the test. */
typedef struct strata_results strata_results;
typedef struct strata_engine_options strata_engine_options;
strata_results *strata_test_run_trace_text(const strata_hw *hw, const char *trace, const strata_engine_options *opt,
                                           GError **err);
/* A four-device hardware file on one switch whose collectives are NCCL's
 * (hopper, 4 channels of 1 GB/s), its last key on line 14: the head the
 * NCCL key tests append one key to, so that key stands on line 15. */
#define STRATA_TEST_NCCL_HW_HEAD                                                                                   \
    "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"                             \
    "bandwidth = 1TB/s\n[interconnect x]\ntopology = switch\nbandwidth = 1GB/s\n"                                    \
    "collectives = nccl\nnccl_arch = hopper\nnccl_channels = 4\n"                                                  \
    "nccl_channel_bandwidth = 1GB/s\n"
/* Fails the test unless the loader refuses head followed by keys with an
 * input error whose message holds `wanted` (FILE:LINE, the key, why). */
void strata_test_hw_text_refused(const char *head, const char *keys, const char *wanted);
/* The link named name (failing the test when there is none), and the number
 * of links whose name starts with prefix. */
typedef struct strata_link_spec strata_link_spec;
const strata_link_spec *strata_test_link(const strata_hw *hw, const char *name);
uint32_t strata_test_count_links(const strata_hw *hw, const char *prefix);
/* The links of the route between two memories named as the model names
 * them, "a,b,c" (g_free), failing the test where there is none. */
char *strata_test_route_links(const strata_hw *hw, const char *from, const char *to);

/* `strata run --hw HW --trace TRACE --json` (hw relative to the source
 * tree), asserting exit 0; the results JSON parsed (g_object_unref). */
JsonParser *strata_test_run_results(const char *hw, const char *trace);

/* Runs `text` (a strata trace) on the hardware file at `hw` (relative to
 * the source tree), returns collective 0's time and its algo, and in *nccl
 * (when not NULL) the results' "nccl" member as
 * "ALGORITHM/PROTOCOL/CHANNELS" (NULL when it has none). */
double strata_test_run_collective(const char *hw, const char *text, char **algo, char **nccl);

int strata_test_main(Suite *suite);

#endif
