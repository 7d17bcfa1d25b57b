/*
 * wrong_way.c: a source of the hw layer that includes a header of the
 * engine layer above it. The ctest layers_wrong_way_include builds it and
 * passes only when the compiler fails on that include: the layers' include
 * folders (CMakeLists.txt, Layers) keep an upward include from compiling.
 * The includes before it, from hw's own layer and those below, are found
 * (hw_internal.h too: a layer sees its own private headers).
 */
#include "core/error.h"     /* base: below hw */
#include "trace/op.h"       /* ir: below hw */
#include "hw/hw.h"          /* hw itself */
#include "hw/hw_internal.h" /* hw itself, private */
#include "engine/engine.h"  /* engine: above hw, not on hw's include path */

int strata_layer_probe(void);
int strata_layer_probe(void) { return 0; }
