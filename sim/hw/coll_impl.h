/*
 * coll_impl.h: the table of collective implementations, the library a
 * hardware model's collectives run on ([interconnect] collectives = NAME,
 * docs/hardware.md), looked up by name as allocators are.
 *
 * A row (one file each: coll_impl_nccl.c, coll_impl_xla.c,
 * coll_impl_ideal.c) says
 *   name     what `collectives =` names;
 *   keys     its parameter block: the [interconnect] keys that it alone
 *            takes. With it chosen, its required keys must be there; with
 *            another one chosen, any of them is an error at its line;
 *   load     reads its keys into a block of its own, with the loader's
 *            typed readers (hw_internal.h), so that a bad value names
 *            FILE:LINE as the loader's own keys do. The block is one
 *            allocation that owns no pointer: the model frees it with
 *            g_free. NULL: the row has no keys. domain: the devices the
 *            interconnect joins per scale-up domain (a node's ranks),
 *            for keys that describe one node;
 *   pick     the default algorithm (models/collective's table) of a
 *            collective whose trace names none, over the group of the
 *            mesh's axes `mask`: an algorithm's name, or NULL to leave the
 *            choice to ideal's pick;
 *   tune     a cost hook, for an algorithm run as the library runs it
 *            (algo=nccl): the library's own choice of algorithm, protocol
 *            and channels for that collective, and its fixed cost per
 *            rank; NULL where the library has no such model.
 *
 * Where the table lives, and why: in the hw layer, beside the loader.
 * Every load (plain or checked) refuses an unknown key or a bad value at
 * its line, as the loader does for its own keys, and the loader cannot
 * call up into the layers above it; so the rows, their parameter
 * declarations and their hooks sit here, and the layers above
 * (models/collective's algorithms, sim/spmd's expansion) reach the hooks
 * through the model's row (strata_hw_coll_impl). The hooks are pure
 * functions of the model and their arguments; NCCL's tuning model
 * (nccl_tuning.h) is the nccl row's.
 *
 * Adding one (an rccl row): a file coll_impl_rccl.c that defines
 * `const strata_coll_impl strata_coll_impl_rccl`, and its line in
 * coll_impl.c's STRATA_COLL_IMPLS; docs/extending.md walks through it.
 *
 * Invariants: names are unique; the keys of all rows are distinct from one
 * another and from the loader's own [interconnect] keys; a row with keys
 * has a load; a model always has a row (ideal when it names none).
 */
#ifndef STRATA_HW_COLL_IMPL_H
#define STRATA_HW_COLL_IMPL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/keyfile.h"
#include "core/mesh.h"
#include "hw/hw.h"
#include "hw/coll_host.h"
#include "hw/ib_frame.h"
#include "hw/nccl_tuning.h"
#include "hw/nccl_p2p.h"

struct hw_load_ctx; /* the loader's (hw_internal.h) */

/* One key of a parameter block (core/keyfile.h's declared key): its name,
 * whether the row needs it (its load checks that, when the row is chosen),
 * and its line in the help text (strata_hw_describe). */
typedef strata_key_def strata_coll_impl_key;

/* What tune chose for one collective: NCCL's algorithm and protocol, the
 * channels and the chunk per channel (0: the algorithm's default), the
 * fraction of the link's data rate NVLS reaches (0: all), the fixed cost
 * every rank pays before the first round (the kernel launch), and across
 * domains the library's fixed cost of a step over the network and the
 * ranks of a domain that exchange over it (NVLS_TREE's heads; 0: all);
 * RCCL's: whether an MSCCL algorithm runs instead of algo, and the rings of
 * the topology model it matched (ring r's rank at position i is
 * rings[r * ring_len + i], ranks of one domain; owned by the model; NULL:
 * none, the library searches its own); the host side of the launch when
 * one process drives several GPUs (coll_host.h: GPUs per process, the
 * host's time per communicator's plan and launch; 1 GPU: no delay). */
typedef struct strata_coll_tuning {
    strata_nccl_algo algo;
    strata_nccl_proto proto;
    uint32_t channels;
    uint64_t chunk_bytes;
    /* NCCL's ring all-reduce on LL or LL128: the bytes a channel and rank's chunk of the last loop is
     * rounded up to (strata_nccl_choice ring_grain_bytes); 0: the even
     * share */
    uint64_t ring_grain;
    /* NCCL from v2.25 (strata_nccl_choice chan_lo_bytes, chan_mid_bytes):
     * channel 0 carries the first chan_lo bytes, each next chan_mid, the
     * last the rest; both 0: the even split */
    uint64_t chan_lo, chan_mid;
    double nvls_efficiency;
    double launch_s;
    double net_step_s;
    /* Across domains, on the Simple protocol: the receiver's flush of
     * every step it receives by GPUDirect RDMA before its GPU may read it
     * (a one-byte RDMA read of the received buffer by a loopback QP
     * through the NIC: RCCL on AMD GPUs, hw/coll_impl_rccl.c; NCCL below
     * compute capability 9.0, hw/coll_impl_nccl.c); paid on a network
     * step as net_step_s is, and on RCCL's rings, which pay no
     * net_step_s; 0: none */
    double net_flush_s;
    /* Across domains, on NCCL's own network transport: the least time
     * between two steps of one network connection, its proxy's work for
     * every connection it serves (hw/nccl_proxy_floor.h); paced on the
     * connection's lane of the ring's LL and LL128 steps (coll_sched.h
     * conn_lane, proxy_s); 0: none */
    double net_proxy_s;
    /* Across domains: the link layer whose packets carry a network step's
     * message (ib_frame.h: its headers per path MTU of payload and per
     * message, on the wire beside the data) and that path MTU; NULL: the
     * data alone */
    const strata_ib_frame *net_frame;
    uint32_t net_mtu;
    /* Inside a domain, on the Simple protocol: the wait a step's flag adds
     * beyond the links' flight (the sender's fence before it posts the
     * flag, the receiver's poll that sees it); 0: the flight alone */
    double simple_sync_s;
    uint32_t heads;
    /* NVLS_TREE across domains: the rate (B/s of the buffer) below which
     * no stage of its pipeline runs, the kernel's (strata_nccl_choice
     * stage_gbs); 0: the links alone decide */
    double stage_bw;
    /* NVLS's copy path on one node: a load's latency for the kernel's
     * scatter warps (from the rank's input in its device memory) and its
     * gather warps (from its NVLS buffer, which the switch's multicast has
     * just written through the GPU's on-chip cache); 0: no pace */
    double nvls_scatter_lat_s, nvls_gather_lat_s;
    /* the library's own estimate of the whole collective (NCCL's
     * ncclTopoGetAlgoTime for the pair it picks, RCCL's likewise), in
     * seconds; 0 where it has none (an MSCCL algorithm). A closed form for
     * callers that time a collective without scheduling its steps (the
     * serving cost model, serve_cost.c) */
    double estimate_s;
    /* NCCL's Simple protocol: a step of its buffer per connection
     * (comm->buffSizes[SIMPLE] / NCCL_STEPS, NCCL_BUFFSIZE as a run sets
     * it; enqueue.cc calcCollChunking's stepSize); 0: NCCL's default
     * buffer, 4 MiB (init.cc DEFAULT_BUFFSIZE), 512 KiB a step */
    uint64_t simple_step_bytes;
    /* NCCL's all-to-all: its point-to-point plan (nccl_p2p.h: p2p
     * channels, channels per peer, the step); zero for the others */
    strata_nccl_p2p p2p;
    bool msccl;
    /* NCCL's ring all-reduce on LL and LL128 across domains: a step waits
     * for its source's receipt on its own channel only, as NCCL's kernel
     * does (nccl_ring_wait = channel); false: for its source's receipts
     * of the round before on every channel (coll_sched.h src_lane) */
    bool ring_own_channel;
    const uint8_t *rings;
    uint32_t n_rings, ring_len;
    strata_coll_host host;
} strata_coll_tuning;

struct strata_coll_impl {
    const char *name;
    const strata_coll_impl_key *keys; /* NULL-terminated; NULL: none */
    void *(*load)(const struct hw_load_ctx *ctx, const char *group, uint32_t domain, GError **err);
    const char *(*pick)(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask);
    /* kind over `ranks` ranks (2 or more), `domain_ranks` of them per
     * scale-up domain (coll_sched.h), in_bytes of IN on each; algos: the
     * library's algorithms it may choose among (strata_nccl_algo bits, an
     * algorithm run as NCCL_ALGO forces it; 0: all it runs) */
    bool (*tune)(const strata_hw *hw, strata_op_kind kind, uint32_t ranks, uint32_t domain_ranks, uint64_t in_bytes,
                 uint32_t algos, strata_coll_tuning *out, GError **err);
};

/* The rows, in the table's order, NULL-terminated. */
const strata_coll_impl *const *strata_coll_impls(void);
/* The row named `name`, or NULL. */
const strata_coll_impl *strata_coll_impl_find(const char *name);
/* "nccl, rccl, xla or ideal": the rows' names, for messages and help (g_free). */
char *strata_coll_impl_names(void);
/* The default algorithm's name for a collective of kind over the mesh's
 * axes `mask` that names none: the model's row's pick, else ideal's. */
const char *strata_coll_impl_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask);
/* The GPU generation the hardware's [collectives] nccl row names (nccl_arch), for a model that picks a kernel
 * by it (a serving engine's Hopper or Blackwell kernels): false where the hardware's collectives are not NCCL's. */
bool strata_hw_nccl_arch(const strata_hw *hw, strata_nccl_arch *out);
/* comm->nChannels of NCCL's communicator over `ranks` ranks in one node of hw (strata_nccl_comm_channels): the
 * channels whose ring connections hold buffers (a serving rank's NCCL memory, serve_holdings.h); 0 where the
 * hardware's collectives are not NCCL's or ranks < 2. */
uint32_t strata_hw_nccl_channels(const strata_hw *hw, uint32_t ranks);

/* True for the collectives a library's all-reduce family covers:
 * all-reduce, all-gather and reduce-scatter. */
static inline bool strata_coll_reducing(strata_op_kind kind)
{
    return kind == STRATA_OP_ALL_REDUCE || kind == STRATA_OP_ALL_GATHER || kind == STRATA_OP_REDUCE_SCATTER;
}

#endif
