/*
 * pickle_collect.h: the copying collector of a streamed pickle (private to
 * sim/import/pickle*.c).
 *
 * Copies what the parse can still reach (the stack, the memo values still
 * to be read, the root) into fresh arrays, in the order Cheney's algorithm
 * finds them, so a stream's memory is its live values. The old arrays
 * become the spare to-space of the next collection, so that their pages
 * stay mapped.
 *
 * Invariant: it runs only between items (never inside run()), so every
 * handle the machine holds is on the stack or in the memo; handles held
 * elsewhere are invalid after it.
 */
#ifndef STRATA_PICKLE_COLLECT_H
#define STRATA_PICKLE_COLLECT_H

#include "import/pickle_machine.h"

/* Compacts ps's document to what ps still reaches; *spare: the arrays to
 * copy into (none yet: nodes NULL), given the old ones back. */
void strata_pickle_collect(parser *ps, pickle_space *spare);
/* Unmaps the spare arrays (NULL nodes: nothing). */
void strata_pickle_space_clear(pickle_space *spare);

#endif
