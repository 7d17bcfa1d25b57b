/*
 * timeline_writer.c: the pending output the timeline's writers share
 * (timeline_writer.h): bytes gathered in a buffer and written to the
 * stream when it is full, so that no event calls into stdio.
 */
#include "results/timeline_writer.h"

void strata_tl_out_init(strata_tl_out *o, FILE *out, size_t cap)
{
    *o = (strata_tl_out){.out = out, .buf = g_malloc(cap), .cap = cap};
}

void strata_tl_out_flush(strata_tl_out *o)
{
    fwrite(o->buf, 1, o->len, o->out);
    o->len = 0;
}

bool strata_tl_out_finish(strata_tl_out *o)
{
    strata_tl_out_flush(o);
    return fflush(o->out) == 0 && !ferror(o->out);
}
