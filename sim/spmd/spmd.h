/*
 * spmd.h: the SPMD expansion, a source that runs one program on N devices.
 *
 * It reads the program (a trace with `option mesh=`, or one without, whose
 * ops run on device 0 or their device=) and hands out the ops of every
 * device, names qualified by device as traces/FORMAT.md says: buffer B@D,
 * stream S@D, event E@D, memory M@D (a host memory M@H, H the device's
 * host), unit U@D; spmd/spmd_names.h makes every name (the expansion's own
 * too) and says how each prints, the one place that knows the scheme. A
 * collective becomes its step schedule
 * (models/collective/coll_sched.h, its algorithm's row of coll_algo.h) on
 * every device of every group: per step, on the
 * receiving device, a copy from the sender's buffer (into a receive
 * buffer, tagged temp, when the step reduces) and a reduction compute
 * (flops = elements, operand bytes = 3 x the chunk: two reads and a
 * write), ordered by record/wait on per-device events; lanes past the first
 * run on streams S~L@D. Every op handed out has device=D set: the
 * device that runs it.
 *
 * The side table (what the expansion knows of an op that the op, holding
 * only what a trace can say, does not): strata_spmd_step_of() says of the op
 * just handed out which collective it is a step of (1 + the index of its
 * strata_coll_info, which strata_spmd_coll() looks up; STRATA_COLL_NONE
 * for an op of the program) and which phase it stands for (1 + an index
 * in that collective's phases, strata_spmd_phase(); 0: one round). A
 * consumer that keeps ops (the engine's tape) keeps that pair beside each.
 *
 * Invariants:
 *  1. the input is checked as it is read (trace/check.h, with the device
 *     count), so every error names the program's FILE:LINE;
 *  2. memory is bounded by one input op's expansion (one round of a
 *     collective at a time) plus one strata_coll_info per collective (with
 *     its distinct phases, a few): the program is streamed, never held;
 *  3. rewind() gives the same ops again, with the same collective and
 *     phase numbers; the infos keep their numbers and their addresses.
 */
#ifndef STRATA_SPMD_H
#define STRATA_SPMD_H

#include "hw/hw.h"
#include "results/results.h"
#include "spmd/spmd_classes.h"
#include "trace/source.h"

typedef struct strata_coll_info {
    strata_collective_desc desc; /* axis owned; algo its name in models/collective's table */
    GArray *phases;              /* strata_coll_phase, distinct, in order of first use */
} strata_coll_info;

/* strata_spmd_step_of()'s collective of an op that is no step of a collective. */
#define STRATA_COLL_NONE 0u

/* A phase (below): the rounds of the schedule each of its copies and
 * reductions stands for (k > 1), and, for a copy, what each round costs:
 * its latency, the slowest route's of the round (the step schedule's
 * per-round waits pace every copy by it; 0: the copy's own route's, as a
 * flag copy's), and its time alone, the round's slowest copy's latency +
 * bytes / share, a handshake copy's flag included (for a handshake copy's
 * data: the round less its flag; 0: none, a flag copy). */
typedef struct strata_coll_phase {
    uint32_t rounds;
    uint64_t round_latency_ps;
    uint64_t round_time_ps;
    bool paced; /* FAST, copies of unequal route latency on a link: the
                 * copy's flow carries one round's bytes, its time alone
                 * is the rounds' (round_time_ps: spmd_fill.h) */
    uint64_t round_idle_ps; /* paced: the round's least copy latency (its
                             * first copy's start), before which each round
                             * leaves its links idle in the steps */
} strata_coll_phase;

/* Of an op handed out by an expansion: its collective and its phase, and
 * with classes (CLASSES), of a copy of a collective: the device it comes
 * from, whose representative's buffer it names. */
typedef struct strata_spmd_step {
    uint32_t coll;  /* 1 + its collective's index; STRATA_COLL_NONE */
    uint32_t phase; /* 1 + an index in its collective's phases; 0: one round */
    uint32_t from;  /* 1 + the device a copy comes from (CLASSES); 0: as its names say */
    uint64_t lead_ps; /* a record or wait that ends a paced phase together (FAST; coll: its
                       * collective, phase 0): how long before it the first device of its class
                       * ends the phase in the steps' rounds, the collective alone (the ring's
                       * drift), when its stream's next collective starts there; 0: none */
} strata_spmd_step;

/* The most copies one round of a collective may move at once, over all
 * its groups: SimGrid's flow sharing costs about the square of the
 * concurrent flows, so a direct all-to-all over 64 devices (4,032 copies
 * in one round on a ring) takes 15 s on a 2-core machine and one over 256
 * (65,280) more than 300 s; wider rounds are refused (exit 2). */
#define STRATA_SPMD_MAX_CONCURRENT_STEPS 8192u
/* ... unless no link direction carries more than STRATA_SPMD_SPARSE_LINK_COPIES
 * of the round's copies (a ring or torus over neighbours: each link carries
 * one copy, a few where a ring turns a corner of the torus): SimGrid's
 * sharing then costs in proportion to the copies, and a round may move up
 * to STRATA_SPMD_MAX_SPARSE_STEPS (a bidirectional ring over a full TPU v5p
 * pod, 8,960 chips, moves 17,920). */
#define STRATA_SPMD_SPARSE_LINK_COPIES 4u
#define STRATA_SPMD_MAX_SPARSE_STEPS 65536u

/* The number of devices of the model: its [hardware] devices
 * (strata_hw_devices(); 1 when it declares none). */
uint32_t strata_spmd_devices(const strata_hw *hw);

/* How a collective's schedule becomes ops.
 *  STEPS   every step of every round, as above (the reference);
 *  PHASES  consecutive rounds whose steps are the same moves (same ranks,
 *          lanes, buffers and bytes: the rounds of a ring, of each ring of
 *          a torus dimension, of a bidirectional ring; any schedule built
 *          by models/collective, whose folded runs are such rounds already)
 *          make one phase when the round's copies do not contend
 *          (spmd_phase.h: every copy gets the same share of its links under
 *          the engine's sharing rule). A phase is expanded once: each copy
 *          and reduction of its first round stands for the k rounds (its
 *          strata_spmd_step's phase, k = strata_coll_phase.rounds): the
 *          engine moves k times the bytes as one flow and waits the latency
 *          of the k - 1 other rounds, and a reduction does k times the work
 *          and overhead (engine_phase.h). Alone on its links this is the
 *          step schedule's time exactly; it differs where other traffic's
 *          share of a link changes within the phase (docs/multi-device.md
 *          gives by how much), so a program whose collectives are issued
 *          on two streams or more, which may run beside each other, keeps
 *          every round (spmd_phase.h, spmd_phases_allowed). Rounds that
 *          differ (a tree, chunks of unequal size) or contend stay one
 *          phase each;
 *  CLASSES PHASES, handing out the ops of one device per class of
 *          equivalent devices (spmd_classes.h: devices that a symmetry of
 *          the machine and the program maps onto each other), names of a
 *          device of the class standing for every device of it: a step
 *          received from device p names the buffers and events of p's
 *          representative and says p in the side table (`from`), for the
 *          engine to take p's true route. Phases are decided over every
 *          group, as in PHASES; a program without symmetry expands every
 *          device, as PHASES;
 *  FAST    CLASSES, approximate: the classes may map a copy onto one whose
 *          route is not its route's image (spmd_classes.h: a ring laid row
 *          by row over a torus), each representative link then weighs as
 *          its orbit's most loaded link (strata_spmd_link_scale), and
 *          rounds whose copies of unequal route latency meet on a link
 *          join phases too (PHASES keeps those step by step): paced
 *          phases, each round as long as its copies started together
 *          take (spmd_fill.h), and keep them beside other collectives.
 *          Not exact: docs/classes.md gives the errors measured against
 *          STEPS. */
typedef enum {
    STRATA_SPMD_PHASES,
    STRATA_SPMD_STEPS,
    STRATA_SPMD_CLASSES,
    STRATA_SPMD_FAST,
    /* `strata run`'s default: CLASSES; but where the program has no exact
     * symmetry and every device's run would move more than max_copies
     * copies in one round (strata_spmd_expand_auto), FAST, when FAST finds
     * classes: strata_spmd_fell_back() and strata_spmd_note() then say so and why. */
    STRATA_SPMD_AUTO
} strata_spmd_collectives;

/* AUTO's max_copies by default: STRATA_SPMD_MAX_CONCURRENT_STEPS, the
 * round past which the engine's sharing, whose cost grows with the
 * square of the copies at once, is accepted only because the copies are
 * sparse on the links; every device of a bidirectional-ring all-reduce
 * over a pod past it costs about k C^2 a round (C copies, k about 3.5 to
 * 4 ns measured: docs/classes.md, "When the default runs fast"). */
#define STRATA_SPMD_AUTO_COPIES STRATA_SPMD_MAX_CONCURRENT_STEPS

/* The expansion of src (taken: freed with the result) on hw (borrowed; it
 * must outlive the source), with phases. */
strata_source *strata_spmd_expand(strata_source *src, const strata_hw *hw);
strata_source *strata_spmd_expand_as(strata_source *src, const strata_hw *hw, strata_spmd_collectives mode);
/* As strata_spmd_expand_as; AUTO's threshold max_copies (CLASSES's for
 * its note; the other modes ignore it). */
strata_source *strata_spmd_expand_auto(strata_source *src, const strata_hw *hw, strata_spmd_collectives mode,
                                       uint64_t max_copies);
/* Whether src is an AUTO expansion that runs FAST. */
bool strata_spmd_fell_back(const strata_source *src);
/* One line for the user where the classes' choice changed the mode (AUTO
 * that runs FAST: why) or will cost long (CLASSES without an exact
 * symmetry past max_copies: every device runs); valid as long as src;
 * NULL otherwise, or when src is no expansion. */
const char *strata_spmd_note(const strata_source *src);

/* The side table. Of the op src (an expansion by strata_spmd_expand())
 * handed out last: its collective and phase ({STRATA_COLL_NONE, 0} when
 * src is no expansion, or before its first op). */
strata_spmd_step strata_spmd_step_of(const strata_source *src);
/* Whether src is an expansion by strata_spmd_expand() (its side table
 * then speaks of its ops; otherwise every step is {STRATA_COLL_NONE, 0}). */
bool strata_spmd_is_expansion(const strata_source *src);
/* The collective `coll` (not STRATA_COLL_NONE) of src's steps: valid as
 * long as src. NULL when src is no expansion or has no such collective. */
const strata_coll_info *strata_spmd_coll(const strata_source *src, uint32_t coll);
/* Phase `phase` of collective `coll`: valid until src hands out a step of
 * that collective again (copy it). NULL for phase 0, or none such. */
const strata_coll_phase *strata_spmd_phase(const strata_source *src, uint32_t coll, uint32_t phase);
/* With CLASSES, the classes src hands out the representatives of (valid as
 * long as src); NULL when src is no expansion, or expands every device
 * (another mode, or a program without symmetry). */
const strata_spmd_classes *strata_spmd_classes_of(const strata_source *src);

#endif
