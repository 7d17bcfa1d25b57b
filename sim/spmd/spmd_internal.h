/*
 * spmd_internal.h: the SPMD expansion's state and its emit records, shared
 * by spmd.c (planning: input op -> emits) and spmd_render.c (an emit ->
 * the output op). Not part of the contract (spmd.h).
 *
 * Invariants: those of spmd.c (its header comment); an emit names a device
 * and lane of the current collective, and its strings are rendered into
 * the state's reusable buffers, valid until the next op is handed out.
 */
#ifndef STRATA_SPMD_INTERNAL_H
#define STRATA_SPMD_INTERNAL_H

#include "spmd/spmd.h"
#include "spmd/spmd_phase.h"
#include "spmd/spmd_schedules.h"
#include "core/mesh.h"
#include "hw/coll_host.h"
#include "trace/check.h"

typedef enum { EM_PLAIN, EM_OPTION, EM_ALLOC_TMP, EM_FREE_TMP, EM_RECORD, EM_WAIT, EM_COPY, EM_REDUCE,
               EM_LAUNCH, EM_DELAY, EM_FLOOR } emit_kind;

enum { STR_NAME, STR_SRC, STR_MEMORY, STR_STREAM, STR__COUNT };

#define TMP_BUF 2u /* a step's receive buffer, besides STRATA_COLL_IN and _OUT */
/* a reducing step's receive buffer's lane (strata_coll_step.recv_lane) */
#define RECV_LANE(st) ((st)->recv_lane ? (st)->recv_lane : (st)->lane)

typedef struct emit {
    uint8_t kind;
    uint8_t src_buf, dst_buf, own_buf;
    uint32_t device, lane;
    uint32_t peer;      /* WAIT: whose event; COPY, REDUCE: the sending device */
    uint32_t peer_lane; /* WAIT: the lane of that event; COPY, REDUCE: its receive buffer's lane */
    uint32_t phase;     /* COPY, REDUCE: the phase it stands for (strata_spmd_step; 0: one round) */
    uint32_t from;      /* COPY: the device it comes from, when peer is that device's representative */
    uint64_t bytes;
} emit;

typedef struct spmd {
    strata_source *in;
    const strata_hw *hw;
    strata_spmd_collectives mode;
    strata_spmd_classes *classes; /* CLASSES: the devices' classes; NULL: every device is expanded */
    char *note;            /* what the classes' choice costs or changes (strata_spmd_note), or NULL */
    bool fell_back;        /* AUTO that runs FAST (note: why) */
    bool phases;           /* rounds may join into phases (spmd_phases_allowed) */
    uint32_t devices;
    strata_checker *checker;
    strata_mesh *mesh;
    const strata_op *cur;  /* the input op being expanded (borrowed from in) */
    strata_op_refs refs;
    GArray *emits;
    guint next_emit;
    /* the collective being expanded */
    GArray *steps;         /* strata_coll_step, by round */
    guint step_at;
    uint32_t rounds, round, mask, n_lanes;
    uint32_t sub;          /* a folded run (strata_coll_step.rounds) that contends: its rounds done */
    uint64_t *tmp_size;    /* per lane: the largest reduce step (0: no receive buffer) */
    uint32_t beside;       /* FAST: lane L's paced reductions run on beside + L, lanes no step uses (0: none) */
    uint8_t *touched;      /* per device x lane: worked this round */
    uint8_t *conn;         /* per lane: recorded at the start: a connection's (strata_coll_step.conn_lane),
                            * or a lane some step waits for on its source (src_lane, and + 1 if src_fused) */
    uint32_t *lane_map;    /* with classes and src_lane steps: per device x lane, its representative's lane
                            * (spmd_classes_lane_maps; owned by lane_maps); NULL: lanes as they are */
    GHashTable *lane_maps; /* the collective's sig -> its lane_map, built once */
    bool lanes_unmapped;   /* with classes, src_lane steps whose lanes have no map: waits for S~e0 */
    spmd_links *links;     /* the rounds' link accounting (spmd_phase.h) */
    uint64_t sig[5];       /* the collective's schedule's arguments (kind, axes, algo, in_bytes, shift) */
    GArray *leaders;       /* uint32_t: the current collective's groups to walk, by leader (ascending):
                            * every group, or with classes those holding a representative */
    GArray *expanded_devs; /* uint32_t: the devices whose ops are handed out (ascending) */
    GHashTable *decided;   /* (sig, step, round, sub) -> decision: a round's phase, decided once */
    spmd_schedules *schedules; /* each distinct collective's steps, built once */
    strata_coll_info *info;
    strata_spmd_step last; /* the side table's entry of the op handed out last */
    double launch_s;       /* the collective's fixed cost per rank (its algorithm's tune) */
    strata_coll_host host; /* one process's GPUs, the host's time per communicator (coll_host.h) */
    uint32_t floor_lane;   /* back-to-back calls: the lane of the host's floor beside the steps' (0: none) */
    GPtrArray *infos;      /* strata_coll_info, by index (kept across rewinds) */
    uint32_t n_coll;
    double bytes_per_element;
    /* a collective with device=D: D's group only (ONLY_ALL: every group);
     * a collective-permute with device=D: D's send only, to only_dst */
    uint32_t only_leader, only_src, only_dst;
    /* the output op and its strings */
    strata_op out;
    GString *strs[STR__COUNT]; /* names of the output op, reused */
    GPtrArray *s_lists[3]; /* GString: in=, out=, donate= */
    GPtrArray *lists[3];   /* char *, NULL-terminated */
} spmd;

/* The output op of a plain op's record on device d (render_plain), and of
 * a collective's record e (render_step), into s->out. */
void spmd_render_plain(spmd *s, uint32_t d);
void spmd_render_step(spmd *s, const emit *e);
/* The launch op's time on device d: the library's fixed cost, after the
 * host's work for the other communicators of d's process that comes first
 * (coll_host.h). */
double spmd_launch_time(const spmd *s, uint32_t d);
/* The host's floor on device d after its launch op (back-to-back calls:
 * strata_coll_host_floor less spmd_launch_time; 0: none). */
double spmd_floor_time(const spmd *s, uint32_t d);

#endif
