/*
 * interrupt.h: SIGINT, SIGTERM, SIGHUP (a closed terminal) and SIGQUIT as an
 * orderly exit of a command.
 *
 * strata_interrupt_start() blocks the four signals in the calling thread, and so
 * in every thread created after it (SimGrid's, the host backend's), and
 * starts one watcher thread that waits for them on a signalfd. When one
 * arrives, the watcher discards the command's open outputs (their
 * temporaries are unlinked, no later commit renames anything: outfile.h),
 * prints "strata CMD: interrupted by SIGINT while WHAT; no output was
 * written" on standard error and ends the process with 128 + the signal
 * number (130, 143, 129, 131: the shell's convention), once its children (sweep
 * points, published cases) have had SIGTERM and ended. A signal that was ignored when
 * strata started (nohup, a background job of a script) stays ignored, even
 * once SimGrid has installed its own handlers: it is blocked like the
 * others and the watcher drops it.
 *
 * There is no global state: what the watcher needs (the output set, the
 * command name, what is being done) lives in the returned object, shared
 * with the command under a mutex. strata_interrupt_stop() ends the watcher,
 * sets what was ignored at start to SIG_IGN again (over SimGrid's handler)
 * and restores the signal mask.
 *
 * SIGPIPE: start also gives SIGPIPE a handler that does nothing (where it
 * was at its default), kept to the exit: a write to a pipe whose reader
 * has gone fails with EPIPE, so an output on it fails its commit (exit 2,
 * the other outputs' temporaries removed) where the default action killed
 * strata with them left behind. exec resets a handler to the default, so
 * the programs strata starts get SIGPIPE as before.
 *
 * Children: strata_interrupt_child_setup, given to g_spawn_*() as the child
 * setup with a strata_child_signals read in the parent just before (or
 * NULL), unblocks the signals in the child and asks the kernel to send it
 * SIGTERM when the spawning thread dies (PR_SET_PDEATHSIG), so that a child
 * is interrupted with its parent, even when the parent is killed with -9.
 * It ignores in the child what the parent ignores of SIGINT, SIGHUP and
 * SIGQUIT: g_spawn resets SIGINT and SIGHUP to their default in the child,
 * before the child setup runs (GLib 2.74, gspawn.c), so a caller's
 * `trap '' INT` or nohup reached the sweep but not its points, and a
 * Ctrl-C the caller meant to ignore killed them. SIGTERM stays at its
 * default in every child: it is how a parent stops its children.
 */
#ifndef STRATA_INTERRUPT_H
#define STRATA_INTERRUPT_H

#include <glib.h>
#include "core/outfile.h"

typedef struct strata_interrupt strata_interrupt;

/* `outs` is borrowed and must outlive the watcher (stop it first). */
strata_interrupt *strata_interrupt_start(const char *cmd, strata_outfile_set *outs);
/* What the command is doing now, for the message ("simulating t.trace"); copied. */
void strata_interrupt_set_doing(strata_interrupt *intr, const char *what);
void strata_interrupt_stop(strata_interrupt *intr); /* NULL ok */

/* The signals a child should keep ignoring, read in the parent. */
typedef struct strata_child_signals {
    int ignored[3]; /* of SIGINT, SIGHUP, SIGQUIT, those ignored now; 0 ends the list */
} strata_child_signals;
void strata_child_signals_read(strata_child_signals *s);
/* signals: a strata_child_signals (const), or NULL to ignore none. */
void strata_interrupt_child_setup(gpointer signals);

/* Runs fn(data) in a forked child (set up by strata_interrupt_child_setup,
 * with the signals the parent ignores kept ignored), which writes the text
 * fn returns to a pipe and exits 0; returns what the parent read from it
 * (g_free), once the child has ended. So a simulation that SimGrid allows
 * once a process runs once a call (validate --published's cases, the
 * benchmarks' points). NULL, with err set, when the pipe or the fork
 * failed (STRATA_ERROR_IO) or the child did not exit 0 (killed, or its
 * write failed: STRATA_ERROR_INTERNAL, "the child process was killed by
 * signal 9 (Killed)"): a part of its text is never taken for its answer. */
char *strata_child_text(char *(*fn)(void *data), void *data, GError **err);

#endif
