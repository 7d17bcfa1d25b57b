/*
 * gzstream.h: a write-only stdio stream that gzip-compresses everything
 * written to it into another stream, as it is written (zlib's deflate at
 * its fastest level: outputs such as timelines are large and written while
 * a run goes, so speed matters more than the last bytes of compression).
 *
 * fclose() on the returned stream ends the gzip member (trailer included)
 * and leaves the underlying stream open; it returns EOF when a write to the
 * underlying stream failed, as does ferror() on the stream from the failed
 * write on.
 */
#ifndef STRATA_GZSTREAM_H
#define STRATA_GZSTREAM_H

#include <stdbool.h>
#include <stdio.h>

/* NULL when out of memory or zlib refuses to start (errno set). */
FILE *strata_gzip_stream(FILE *under);
/* True when path names a gzip file (ends in ".gz"). */
bool strata_gzip_path(const char *path);

#endif
