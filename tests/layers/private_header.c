/*
 * private_header.c: a source of the tools layer that includes a private
 * header of the engine layer below it. The ctest
 * layers_private_header_include builds it and passes only when the compiler
 * fails on that include: a layer exports only its public headers
 * (CMakeLists.txt, strata_folder), so engine_internal.h is not on the tools
 * layer's include path while engine.h, from the same folder, is. The
 * includes before it are found.
 */
#include "core/error.h"             /* base: a public header below tools */
#include "cli/cli.h"                /* tools itself */
#include "engine/engine.h"          /* engine: public */
#include "engine/engine_internal.h" /* engine: private to its layer */

int strata_layer_probe_private(void);
int strata_layer_probe_private(void) { return 0; }
