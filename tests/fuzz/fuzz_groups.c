/*
 * fuzz_groups.c: libFuzzer target for XLA replica groups (issue 46): the
 * validator (xla_groups_check) and the mesh cutter (xla_mesh_add, _build,
 * _axes) on the same text, in the explicit {{..}}, iota [G,S]<=[..]T(..)
 * and named mesh[..] forms.
 *
 * The input's first byte picks the module's devices (0: not given, else
 * 1 to 255 times a power of two), the rest is the groups' text (seeds:
 * tests/fuzz/corpus/groups). Oracle: no crash, leak, UB or hang; a refusal
 * says what was expected; groups the validator accepts never make the
 * cutter read past its devices (ASan).
 */
#include <string.h>
#include "fuzz_input.h"
#include "import/xla_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint64_t devices = data[0] ? (uint64_t)(data[0] & 0x3f) << (data[0] >> 6) * 4 : 0;
    char *text = g_strndup((const char *)data + 1, size - 1);
    char *why = NULL;
    bool ok = xla_groups_check(text, devices, &why);
    if (!ok && (why == NULL || *why == '\0'))
        __builtin_trap(); /* a refusal says what was expected */
    g_free(why);
    xla_mesh *m = xla_mesh_new(devices);
    int set = xla_mesh_add(m, text);
    if (set >= 0 && xla_mesh_build(m)) {
        uint64_t n = 0;
        g_free(xla_mesh_option(m));
        g_free(xla_mesh_axes(m, set, &n));
    }
    xla_mesh_free(m);
    g_free(text);
    return 0;
}
