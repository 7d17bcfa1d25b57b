/*
 * engine_compiled.h: a compiled trace, the file that holds a trace as the
 * engine's first pass leaves it (read, checked and bound to one hardware
 * model), so that `strata run` replays it without the text pass.
 *
 * What it holds: the tape of bound ops (engine_tape.h) and what the second
 * pass needs beside it: the trace's origin (the results name the text
 * trace it was compiled from), its op and event counts, its `option`
 * lines, its streams' names and devices, and the routes its copies were
 * bound to (as pairs of memories: route ids are dense in order of first
 * use, so the pairs in id order rebuild the same ids against the model).
 * It names what it was bound against: strata's version, the tape's format
 * (engine_compiled.c's tape_format) and the hardware model's fingerprint
 * (strata_hw_fingerprint: the model's keys after its base and --set).
 *
 * The file (every integer a little-endian u64, every text its u64 length
 * and its bytes):
 *   magic (ENGINE_COMPILED_MAGIC, 8 bytes), the format's version text,
 *   strata's version, the tape format, the model's fingerprint, the
 *   model's name, the origin, ops, events, options (a count, then key and
 *   value each), streams (a count, then name and device each), routes (a
 *   count, then source and destination memory each), the tape (its length,
 *   its bytes), and a check of every byte before it (a 64-bit hash of its
 *   8-byte words).
 *
 * Invariants:
 *  1. engine_compiled_read() gives back what engine_compiled_write() was
 *     given, or fails with STRATA_ERROR_INPUT naming the file: a file that
 *     is not a compiled trace, is truncated or damaged (length or check),
 *     or was compiled by another strata or tape format, or for another
 *     model (fingerprint), is refused and never replayed;
 *  2. the tape it reads back replays the ops it was written from, in order.
 */
#ifndef STRATA_ENGINE_COMPILED_H
#define STRATA_ENGINE_COMPILED_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "engine/engine_tape.h"

#define ENGINE_COMPILED_MAGIC "\x89STRATA\x1a"
#define ENGINE_COMPILED_VERSION "strata compiled trace 1"

typedef struct engine_compiled {
    char *path;           /* read: the file's path, for messages */
    char *hw_fingerprint; /* strata_hw_fingerprint of the model bound against */
    char *hw_name;        /* its name, for messages */
    char *origin;         /* the text trace's origin */
    uint64_t n_ops;
    uint32_t n_events;
    GPtrArray *options;      /* char *: key, value, key, value... in the trace's order */
    GPtrArray *streams;      /* char *: by stream index */
    GArray *stream_devices;  /* uint32_t: by stream index */
    GArray *routes;          /* uint32_t: source, destination memory, by route id */
    engine_tape *tape;       /* read: to replay (owned); written: the first pass's (borrowed) */
} engine_compiled;

engine_compiled *engine_compiled_new(void);
void engine_compiled_free(engine_compiled *c); /* NULL ok; and c->tape (a writer clears a borrowed one first) */

/* True when the file at path begins with ENGINE_COMPILED_MAGIC ("-" and
 * unreadable paths: false). */
bool engine_compiled_is(const char *path);
/* Writes c to stream, the file at path (named in a message); the caller
 * owns the stream, and with it keeping the file whole or not at all
 * (an outfile: core/outfile.h). */
bool engine_compiled_write(const engine_compiled *c, const char *path, FILE *stream, GError **err);
/* Reads path, refusing it (invariant 1) unless it was compiled by this
 * strata for the model whose fingerprint is hw_fingerprint (hw_name names
 * that model in the message). */
/* The file's check of its first n bytes (they end with it: ENGINE_COMPILED_*'s
 * layout above). */
uint64_t engine_compiled_check(const uint8_t *p, size_t n);
engine_compiled *engine_compiled_read(const char *path, const char *hw_fingerprint, const char *hw_name,
                                      GError **err);

#endif
