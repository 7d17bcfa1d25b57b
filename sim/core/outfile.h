/*
 * outfile.h: output files that are complete or absent, never partial.
 *
 * strata_outfile_open() checks at once that the path can be written (so a bad
 * --json path is an error before any work starts) and returns a stream to a
 * temporary file beside it; strata_outfile_commit() flushes, fsyncs and
 * renames it over the path; strata_outfile_abort() removes the temporary.
 * The path "-" means standard output (commit flushes, abort does nothing).
 * strata_outfile_gzip() makes an output whose path ends in ".gz" gzip-
 * compressed as it is written (core/gzstream.h): strata_outfile_stream() is
 * then the compressing stream, and commit ends the gzip data before renaming.
 *
 * A path that is a symbolic link is written through: the temporary is made
 * beside the link's final target and renamed over it, so the link stays.
 * A write past a file-size limit (ulimit -f) fails with "cannot write" and
 * removes the temporary: opening an output ignores SIGXFSZ, so the write
 * returns EFBIG instead of the signal killing the process.
 *
 * The guard every writer goes through (issue 46):
 *  - never an input: a set knows its command's inputs
 *    (strata_outfile_set_input); an output whose target (links followed)
 *    is one of them is refused, exit 2;
 *  - one writer per path: opening takes an exclusive flock on ".BASE.lock"
 *    beside the target, held until commit or abort (the lock file then
 *    unlinked); while another process holds it, the open waits its turn
 *    (at most 10 minutes), so two writers of one path take turns and the
 *    later one's file replaces the earlier's whole, never a mix.
 *    A set of files under one prefix (export chakra's PREFIX.D.et) takes
 *    one lock for the prefix (strata_outfile_set_lock), which then covers
 *    every member opened in the set;
 *  - temporaries and locks fit the directory's file-name limit: a name
 *    too long for ".NAME.XXXXXX" is cut and carries a hash of the whole;
 *  - a set of files is all or nothing: each member is written and
 *    strata_outfile_prepare()d (closed, fsynced), then
 *    strata_outfile_commit_all() renames them all under the set's lock, so
 *    a full disk, a size limit or a signal leaves none of them.
 *
 * Invariant: whatever happens, the file at `path` is either its old content
 * or the complete new content.
 *
 * A set (strata_outfile_set) holds the outputs a command has open, so that a
 * process ended by a signal can remove their temporaries from another
 * thread: strata_outfile_set_discard() unlinks every temporary of the set
 * and makes any later commit in it fail, so nothing is renamed into place
 * after an interrupt. Outputs opened with strata_outfile_open() belong to no
 * set.
 */
#ifndef STRATA_OUTFILE_H
#define STRATA_OUTFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct strata_outfile strata_outfile;
typedef struct strata_outfile_set strata_outfile_set;

strata_outfile_set *strata_outfile_set_new(void);
void strata_outfile_set_free(strata_outfile_set *set); /* aborts what is still open */
/* Unlinks every open temporary (and lock) of the set; later commits in it
 * fail. Safe to call from any thread. */
void strata_outfile_set_discard(strata_outfile_set *set);
/* Names an input of the set's command (a regular file; links followed;
 * NULL, "-" and what does not exist are ignored): no output of the set may
 * be it. */
void strata_outfile_set_input(strata_outfile_set *set, const char *path);
/* Takes the one-writer lock of a set of files named PREFIX... (waiting
 * while another process holds it): the members then opened in the set
 * take none of their own. Held until the set is freed. */
bool strata_outfile_set_lock(strata_outfile_set *set, const char *prefix, GError **err);

strata_outfile *strata_outfile_open(const char *path, GError **err);
/* The same, registered in `set` (NULL: none) until commit or abort. */
strata_outfile *strata_outfile_open_in(strata_outfile_set *set, const char *path, GError **err);
FILE *strata_outfile_stream(strata_outfile *out);
/* For a path ending in ".gz" (else nothing to do): what is written from now
 * on is gzip-compressed. Call before the first write; false with err when
 * zlib cannot start (the caller aborts). */
bool strata_outfile_gzip(strata_outfile *out, GError **err);
const char *strata_outfile_path(const strata_outfile *out);
bool strata_outfile_commit(strata_outfile *out, GError **err); /* frees out */
/* Ends what out's temporary holds (flushed, fsynced, closed; a ".gz"
 * stream ended) without renaming it, so that many can wait for
 * strata_outfile_commit_all without holding a descriptor each; false with
 * err when a write failed (the caller aborts). "-" and devices: nothing. */
bool strata_outfile_prepare(strata_outfile *out, GError **err);
/* Renames n prepared outputs of one set (NULL set: none) in one step under
 * the set's lock: all, or (a discard, a failed rename) the rest removed and
 * false with err. Frees every out. */
bool strata_outfile_commit_all(strata_outfile **outs, size_t n, GError **err);
void strata_outfile_abort(strata_outfile *out);                 /* frees out; NULL ok */

/* Inputs are never clobbered: false (err: STRATA_ERROR_INPUT, "cannot write
 * OUT: it is the input IN") when out's target is the file `input` (same
 * device and inode, links followed). For commands whose reader finds its
 * files itself (an importer given a directory): call it with each file it
 * read before committing. NULL input, "-" or a target that does not exist
 * yet: true. */
bool strata_outfile_check_input(const strata_outfile *out, const char *input, GError **err);

/* Whole-buffer convenience: atomically write `len` bytes to path ("-" ok). */
bool strata_write_file_atomic(const char *path, const char *data, gsize len, GError **err);
/* The same, in `set` (its inputs refused, discarded on a signal). */
bool strata_write_file_atomic_in(strata_outfile_set *set, const char *path, const char *data, gsize len,
                                 GError **err);

#endif
