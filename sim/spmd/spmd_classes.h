/*
 * spmd_classes.h: classes of equivalent devices of an SPMD program on a
 * hardware model, and the quotient the engine simulates in their place
 * (spmd.h's CLASSES mode; docs/multi-device.md, "Simulating what
 * differs, once").
 *
 * A symmetry is a permutation g of the devices that maps the machine and
 * the program onto themselves: every link between devices, from one to a
 * switch or between switches (a cluster's NICs, rails' leaves and spine:
 * spmd_machine.h) to a link of the same figures, every step of every
 * collective of the program to a step of the same collective and round
 * that moves the same (ranks, buffers, bytes) on the lane a permutation of
 * the collective's lanes gives (NCCL's tree: channel c's lanes onto
 * channel c+1's), and every copy's route to the
 * route of its image, link by link. Hosts are no part of it where the
 * program touches no host memory; no route between devices passes through
 * a host (hw.h). Where it does (an offload to each device's host), the
 * symmetry must also keep each host's devices together (spmd_machine.h,
 * with hosts) and the representatives must be whole hosts (every device of
 * a host with one is one: G moves the hosts freely), else no classes: a
 * host memory of the quotient then carries exactly its own devices'
 * traffic, as in the full run. The classes are the orbits of the group G
 * such symmetries generate; the representative of a class is its least
 * device. Candidates are the rotations of each mesh axis by a divisor of
 * its size (the least that holds is kept), then within blocks of
 * consecutive coordinates (data+8 data+1/8: 64 devices whose symmetry
 * holds within each 8), then, where no rotation moves those blocks, their
 * mirror if their count is even (data:mirror/8: NCCL's tree 1 is tree 0's
 * mirror), each rotating (the mirror: reversing) one digit of the axis'
 * coordinate in a mixed radix, so G is a product of cyclic groups on
 * distinct digits: abelian, and free on the devices (no g but the
 * identity fixes a device), hence on directed links too.
 *
 * Exactness: in the full run, the ops of device g(d) are those of d with
 * every name moved by g, and every copy's route is moved by g, so the
 * max-min rates of SimGrid's sharing (unique, and G-invariant) give every
 * device of a class the same dates as its representative. The engine then
 * simulates only the representatives: a copy into a representative from
 * a device p crosses, for each link of its true route, the link that
 * represents that link's orbit (a directed link: UP and DOWN of a full-
 * duplex link are separate orbits), and the source port of p's
 * representative. On a representative link the representatives' copies
 * stand for every copy of the orbit: each link of an orbit carries, by
 * symmetry, exactly the images of the copies that cross its
 * representative, as many times as they cross the orbit (G free on the
 * devices; a link between switches that some g keeps carries |G|/|orbit|
 * images of each: strata_spmd_link_weight). So the
 * quotient's flows get the full run's rates, and every figure of a
 * device, memory, link and unit is its representative's. Not exact: a
 * half-duplex link that a symmetry turns around (a generator doing so is
 * refused), programs with device= ops or explicit instances (no
 * classes), floating-point rounding (SimGrid solves a smaller system:
 * the last bits may differ).
 *
 * Invariants: rep(d) <= d, rep(rep(d)) = rep(d); link_rep is a key of the
 * same orbit, the least; immutable once found.
 */
#ifndef STRATA_SPMD_CLASSES_H
#define STRATA_SPMD_CLASSES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct strata_spmd_classes strata_spmd_classes;

/* The number of devices and of classes (representatives). */
uint32_t strata_spmd_classes_devices(const strata_spmd_classes *c);
uint32_t strata_spmd_classes_count(const strata_spmd_classes *c);
/* The representative of device's class. */
uint32_t strata_spmd_class_rep(const strata_spmd_classes *c, uint32_t device);
/* The representative of a directed link (hw link `link`, crossed from its
 * a to its b when forward): its link and direction. A half-duplex link's
 * two directions are one resource: forward is then returned as given. */
uint32_t strata_spmd_link_rep(const strata_spmd_classes *c, uint32_t link, bool forward, bool *rep_forward);
/* Whether the classes are exact (above); false for approximate classes
 * (spmd.h's FAST): some generator maps a copy onto one whose route is not
 * its route's image (a ring laid row by row over a torus, whose wrap-around
 * routes the site graph's tie-breaking lays differently). */
bool strata_spmd_classes_exact(const strata_spmd_classes *c);
/* Whether the program touches its hosts' memories (above): the quotient
 * then holds the representatives' hosts, whole. */
bool strata_spmd_classes_hosts(const strata_spmd_classes *c);
/* The weight of the copies on a representative link (>= 1; for exact
 * classes the link's strata_spmd_link_weight, 1 but on links that a
 * symmetry keeps): approximate classes make their representatives' copies
 * stand for the most loaded link of each orbit, whose copies' count over
 * the representatives' crossings of the orbit (the worst round's) this
 * is, at least that weight; the quotient divides the link's bandwidth by
 * it. */
double strata_spmd_link_scale(const strata_spmd_classes *c, uint32_t link, bool forward);
/* The copies of the full run that one copy of the quotient on the link
 * (that direction) stands for: 1 where the symmetries move the link
 * freely, k where k of them keep it (a rail's leaf uplink under rotations
 * of the hosts): the quotient's link has 1/k of the bandwidth and reports
 * k times its bytes. */
double strata_spmd_link_weight(const strata_spmd_classes *c, uint32_t link, bool forward);
/* The generators found, as text ("data+16 model+1"; "" when none): for
 * messages and the bench. */
const char *strata_spmd_classes_describe(const strata_spmd_classes *c);

#endif
