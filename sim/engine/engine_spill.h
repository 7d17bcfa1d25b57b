/*
 * engine_spill.h: a temporary file of records, for tapes (engine_tape.h)
 * that keep part of their bytes on disk instead of in memory.
 *
 * A record is a header of two uint64_t (a link, which its writer may set
 * again later: engine_tape.c chains a tape's chunks on file through it,
 * and the number of bytes that follow), then those bytes. Records are
 * appended at the end of what is in use and read back by offset. The file
 * is made on the first append, in the temporary folder (TMPDIR when set,
 * read at that moment, else GLib's g_get_tmp_dir()), and unlinked at once:
 * it goes with the process, whatever way it ends.
 *
 * Invariants:
 *  1. a record reads back exactly as it was appended (its link as last set);
 *  2. `live` counts the records appended and not yet let go
 *     (engine_spill_let_go); when it reaches 0 the file starts over at
 *     offset 0 (nothing in it is read any more);
 *  3. after a failed create, write or read, every later call fails too, and
 *     engine_spill_failure() says what failed and why (errno): a caller
 *     never goes on with bytes it did not get back;
 *  4. the file gives its disk back as it is read: a record released
 *     (engine_spill_release: read for the last time) has the file system
 *     blocks wholly inside it punched out, where the file system can
 *     (else it keeps them, as before: no error), and when `live` reaches 0
 *     the file is truncated to nothing. Its allocated bytes
 *     (engine_spill_allocated) are then at most what the live records
 *     span plus a block at each end of each released one.
 */
#ifndef STRATA_ENGINE_SPILL_H
#define STRATA_ENGINE_SPILL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct engine_spill engine_spill;

/* `what` names its contents in the messages ("queued ops", "first pass's
 * tape"): static text. The file is TMPDIR/strata-spill-XXXXXX. */
engine_spill *engine_spill_new(const char *what);
void engine_spill_free(engine_spill *s); /* NULL ok: closes the file */
/* Appends the record (link, the n bytes at data): its offset into *off.
 * False on failure (invariant 3). */
bool engine_spill_append(engine_spill *s, uint64_t link, const void *data, size_t n, uint64_t *off);
/* Sets the link of the record at off. */
bool engine_spill_set_link(engine_spill *s, uint64_t off, uint64_t link);
/* The header of the record at off: its link and its byte count. */
bool engine_spill_read_header(engine_spill *s, uint64_t off, uint64_t *link, uint64_t *n);
/* Its n bytes (its header's count) into data. */
bool engine_spill_read_data(engine_spill *s, uint64_t off, void *data, size_t n);
/* n records are read back or abandoned (invariant 2). */
void engine_spill_let_go(engine_spill *s, uint64_t n);
/* The record at off, of n bytes (its header's count), is read for the last
 * time: its whole blocks go back to the file system, and it is let go
 * (invariants 2 and 4). Every caller reads a record once (engine_tape.c's
 * unspill), so each is released then. */
void engine_spill_release(engine_spill *s, uint64_t off, uint64_t n);
/* The disk the file takes now (st_blocks * 512; 0 before the first append). */
uint64_t engine_spill_allocated(const engine_spill *s);
uint64_t engine_spill_bytes(const engine_spill *s); /* written in all, headers included */
/* NULL while nothing has failed; else a sentence such as "cannot write
 * the temporary file of the first pass's tape in '/tmp' (No space left on
 * device)", owned by s. */
const char *engine_spill_failure(const engine_spill *s);

#endif
