/*
 * spmd_machine.h: the symmetries of a hardware model's devices' part, for
 * the classes (spmd_classes.h): whether a permutation of the devices maps
 * the machine onto itself, and how it then moves the links.
 *
 * The devices' part of the machine is every link between two device
 * memories, from a device memory to a switch, or between two switches (a
 * [network]'s NIC to its leaf, a leaf to the spine): the links the
 * program's copies may cross (it touches no host memory; a route that
 * crosses a host link has no image here, and the classes refuse it). A
 * permutation of the devices moves every device memory to its instance on
 * the image device; it moves a switch to the switch its links lead to:
 * from a device (or a switch already placed), the one link of the image
 * with the same name (but its instance number), figures and kind of
 * switch. So host rotations move the rails' NICs with their nodes and
 * keep the rails' leaves; rotations within nodes move the rails' leaves
 * onto each other; the spine stays.
 *
 * With hosts (a program that offloads to its hosts' memories: issue 40's
 * MoE step), the hosts are part of it too: a permutation must take each
 * host's devices onto another host's (devices_per_host consecutive
 * devices), no two hosts onto one (so the group the classes take moves
 * the hosts freely); it moves a host memory to its instance on the
 * image host, and the links of hosts (PCIe, a host's staging, a host's
 * NIC to its switch) as the devices' links.
 *
 * Invariants: a symmetry maps every link of the devices' part to one of
 * the same bandwidth, latency, duplex and staging, and joins switches one
 * to one (a bijection of the switch vertices); without hosts, the links
 * of hosts are fixed. Immutable but for the permutation of the last
 * symmetry tried.
 */
#ifndef STRATA_SPMD_MACHINE_H
#define STRATA_SPMD_MACHINE_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"

typedef struct spmd_machine spmd_machine;

/* The devices' part of hw (with hosts: and its hosts'); NULL when two of
 * its links join the same ends (a link's image would be ambiguous: no
 * symmetry is tried). */
spmd_machine *spmd_machine_new(const strata_hw *hw, bool hosts);
void spmd_machine_free(spmd_machine *m);

/* True when perm (device -> device) maps the devices' part onto itself;
 * then spmd_machine_key_image() gives its permutation of directed links. */
bool spmd_machine_symmetry(spmd_machine *m, const uint32_t *perm);
/* The image of directed link key (2 x link + forward) under the last
 * symmetry that held (a host's link: itself). */
uint32_t spmd_machine_key_image(const spmd_machine *m, uint32_t key);
/* Whether link is in the devices' part (a symmetry may move it). */
bool spmd_machine_moves(const spmd_machine *m, uint32_t link);
/* The image of memory `mem` (a device's, with hosts a host's; NO_MEMORY,
 * or a host's without hosts: itself) under perm. */
uint32_t spmd_machine_memory_image(const spmd_machine *m, const uint32_t *perm, uint32_t mem);

#endif
