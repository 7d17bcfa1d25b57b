/*
 * xla_mesh.h: the device mesh behind an SPMD module's collectives, from
 * their `replica_groups=` (HloCollectiveInstruction), so that `import xla`
 * writes `option mesh=` and each collective's `axis=`.
 *
 * XLA prints a collective's groups in one of three forms (openxla/xla
 * xla/hlo/ir/collective_device_list.cc, hlo_instruction.cc):
 *   {{0,1,2,3},{4,5,6,7}}                      explicit device lists ({} = all)
 *   [2,4]<=[8]   [4,2]<=[2,4]T(1,0)            an iota: arange(N) reshaped to
 *                                              the dims, transposed, cut in rows
 *   mesh['axis_0'=2,'axis_1'=4] {'axis_1'}     mesh axes and the ones reduced over
 *   mesh['batch'=4,'feats'=2] {'batch':(2)2}   ... or a sub-axis (Shardy's 'a':(K)M:
 *                                              the axis as factors K x M x rest,
 *                                              major first; M the one meant)
 * With use_global_device_ids the ids are the module's partitions (devices).
 *
 * A group set is mesh-like when every group is its first device plus one
 * set of offsets that is a product of strided runs (stride s, size m): the
 * offsets {c_1 s_1 + c_2 s_2 + ... : c_i < m_i}. Each run spans device-id
 * strides [s, s m). The mesh is cut at every boundary s and s m of every
 * run (and at 1 and N): consecutive boundaries b < b' make an axis of size
 * b'/b (b must divide b'), named x0, x1, ... from the largest stride (the
 * outermost, as `option mesh=` numbers devices row-major, last axis
 * fastest). A group set is then the axes its runs span.
 *
 * Invariants: at most XLA_MESH_MAX_DEVICES devices; a group set that is not
 * mesh-like, or a cut that does not divide, is reported as such (the
 * importer then keeps the collective as a compute with a note).
 */
#ifndef STRATA_IMPORT_XLA_MESH_H
#define STRATA_IMPORT_XLA_MESH_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define XLA_MESH_MAX_DEVICES 65536u

typedef struct xla_mesh xla_mesh;

/* n_devices: the module's partitions (num_partitions=), 0 when unknown (then
 * the groups' devices give it). */
xla_mesh *xla_mesh_new(uint64_t n_devices);
void xla_mesh_free(xla_mesh *m);
/* Reads one collective's replica_groups= value (text from its first
 * character; what follows the value is ignored). Returns the group set's
 * number, or -1 when it is not mesh-like (or not a form above). */
int xla_mesh_add(xla_mesh *m, const char *groups);
/* Whether `groups` are replica groups XLA accepts for a module of
 * n_devices (replica_count x num_partitions; 0: not given): every device below the
 * count and in one group at most, groups of one size and not empty, an
 * iota form whose groups cover its dims and whose transpose is a
 * permutation. False with *why, what was expected (g_free). Groups that
 * pass but are not mesh axes stay notes (xla_mesh_add). */
bool xla_groups_check(const char *groups, uint64_t n_devices, char **why);
/* Reads a collective-permute's source_target_pairs= value {{S,T},...}:
 * when the pairs permute every device (n_devices known) in cycles of one
 * size, each a group the mesh can cut (a cyclic shift along mesh axes,
 * the cycle's devices in rank order), the group set's number, and *shift
 * the rank step (T's rank - S's, the signed step of least magnitude: +1,
 * -1); -1 otherwise (a chain, a partial permutation, unequal cycles). */
int xla_mesh_add_pairs(xla_mesh *m, const char *pairs, int32_t *shift);
/* Cuts the mesh from every group set added; false when the cuts do not
 * divide or no device count is known (no mesh: collectives stay notes). */
bool xla_mesh_build(xla_mesh *m);
/* "x0:2,x1:4" (g_free); NULL before a successful build. */
char *xla_mesh_option(const xla_mesh *m);
/* The axes group set `set` spans, "x1" or "x0,x1" (g_free), and *group_size
 * their product; NULL when its groups are single devices (no exchange). */
char *xla_mesh_axes(const xla_mesh *m, int set, uint64_t *group_size);

/* A collective-permute's source_target_pairs= value as pairs of devices
 * (2 per pair, source then target; g_array_free): every id below the
 * built mesh's device count, no source and no target twice (XLA's
 * verifier, CheckDuplicatedSourceOrTarget). NULL when malformed, or
 * before a successful build. A partial permutation, or one of self
 * pairs, is what an SPMD reshard writes. */
GArray *xla_mesh_pairs(const xla_mesh *m, const char *pairs);
/* One pair's send on the built mesh: the axes on which source and target
 * differ ("x0,x2", g_free, as xla_mesh_axes names them) and *shift the
 * target's rank minus the source's in the group over those axes, row-major
 * as the trace numbers them (signed, of least magnitude). NULL with
 * *shift 0 when source == target (no exchange). */
char *xla_mesh_pair_axes(const xla_mesh *m, uint64_t source, uint64_t target, int32_t *shift);

/* XLA's collective group modes (CollectiveOpGroupMode, openxla/xla
 * xla/service/collective_ops_utils.h): what a collective's replica_groups
 * ids are. */
typedef enum xla_groups_mode {
    XLA_GROUPS_CROSS_REPLICA,               /* no channel_id: replica ids, per partition */
    XLA_GROUPS_CROSS_PARTITION,             /* channel_id, no use_global_device_ids attribute
                                               (all-to-all, collective-permute): partition ids,
                                               per replica */
    XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, /* channel_id, use_global_device_ids false: replica
                                               ids, each with all its partitions */
    XLA_GROUPS_FLATTENED_ID                 /* use_global_device_ids=true: device ids
                                               (replica x partitions + partition) */
} xla_groups_mode;

/* GetCollectiveOpGroupMode: the mode of a collective of `opcode` with or
 * without channel_id= and use_global_device_ids=true. */
xla_groups_mode xla_groups_mode_of(const char *opcode, bool channel, bool global_ids);
/* GetParticipatingFlattenedIdGroups: `groups` of `mode` as groups of device
 * ids (replica x partitions + partition) over replicas x partitions (0:
 * unknown, taken as 1). True with *out NULL when the ids are devices already
 * (flattened ids; replica ids with one partition; partition ids with one
 * replica), with *out the explicit groups (g_free) otherwise; false when
 * they cannot be mapped (an iota or mesh form, an id past its count). */
bool xla_groups_flatten(const char *groups, xla_groups_mode mode, uint64_t replicas, uint64_t partitions, char **out);

#endif
