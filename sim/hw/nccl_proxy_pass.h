/*
 * nccl_proxy_pass.h: NCCL's proxy thread's pass over its network operations,
 * as a network step waits on it where the network library progresses only
 * from NCCL's calls (aws-ofi-nccl over libfabric's EFA provider).
 *
 * The mechanism (docs/clusters.md, "The EFA proxy pass (wave 35)"): one
 * proxy thread a rank runs every network operation of the rank in a loop
 * (NVIDIA/nccl v2.9.9-1 src/proxy.cc persistentThread l. 413-449 over
 * progressOps l. 336-351; v2.22.3-1 ncclProxyProgress l. 787-842), each
 * operation's progress making at most one network call a sub per pass
 * (src/transport/net.cc v2.9.9-1 netSendProxy l. 297-410 and netRecvProxy
 * l. 412-526: post, isend or test, then `continue`), and a pass that
 * progressed nothing ends in sched_yield() (v2.9.9-1 l. 445-446; v2.22.3-1
 * l. 824-837, after ncclProxyGetPostedOps's trylock). A test that finds its
 * request incomplete progresses the library: aws-ofi-nccl's SENDRECV test
 * reads its endpoint's completion queue (v1.8.1-aws src/nccl_ofi_sendrecv.c
 * test l. 334-372, ofi_process_cq l. 160-220, fi_cq_read until empty), its
 * RDMA protocol every rail's (v1.16.3 src/nccl_ofi_rdma.cpp test l.
 * 2625-2660, ofi_process_cq l. 1995-2016: one fi_cq_read a rail, then the
 * pending requests). libfabric's EFA RDM endpoint makes progress only there
 * (FI_PROGRESS_MANUAL): an arriving packet is handled, and a step's data
 * learned of, in the receiving proxy's next test.
 *
 * So a network step, beyond the library's message (the route) and NCCL's
 * own ends (net_protocol.h), waits on average half a pass at the sender (its
 * proxy sees the GPU's data at its next visit and isends) and half a pass
 * at the receiver (its next test reads the arrival): one pass; Simple's
 * receiver also waits half a pass more to see its GPUDirect flush complete
 * (netRecvProxy's flush and its test, l. 456-505): 1.5 passes. A pass while
 * a step is in flight makes one test an operation, each reading the
 * library's queues (the row's cq_read_s, rails_per_test), and yields.
 *
 * Operations on one rank's proxy: the network connections the collective's
 * channels put on it, spread over the ranks: a ring's channel crosses
 * between nodes `nodes` times, a send and a receive each (2 x nodes); a
 * tree's `nodes - 1` edges carry a send and a receive each way (4 x (nodes
 * - 1)); at least one.
 *
 * Invariant: pure functions; 0 for a row without cq_read_s (InfiniBand
 * files: NCCL's hwLatencies[NET] holds IB's proxy), for one node, or for no
 * row.
 */
#ifndef STRATA_HW_NCCL_PROXY_PASS_H
#define STRATA_HW_NCCL_PROXY_PASS_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/net_protocol.h"
#include "hw/nccl_tuning.h"

/* Network operations on one rank's proxy thread: ceil(links x channels /
 * ranks), links 2 x nodes for a ring, 4 x (nodes - 1) else; at least 1. */
uint32_t strata_nccl_proxy_pass_ops(strata_nccl_algo algo, uint32_t ranks, uint32_t nodes, uint32_t channels);

/* One idle pass of a proxy holding `ops` operations: each one test, which
 * reads the row's queues (cq_read_s, on each of `rails` rails where the row
 * reads them all), then the sched_yield. proto NULL or no cq_read_s: 0. */
double strata_nccl_proxy_pass_s(const strata_net_protocol *proto, uint32_t ops, uint32_t rails);

/* A network step's wait on the two ends' proxies: 1 pass on LL and LL128,
 * 1.5 on Simple where the receiver flushes (`flushes`: the flush's
 * completion; 1 where it does not, Hopper on), of the proxy holding
 * strata_nccl_proxy_pass_ops's operations. One node, proto NULL: 0. */
double strata_nccl_proxy_pass_step_s(const strata_net_protocol *proto, strata_nccl_proto nccl_proto,
                                     strata_nccl_algo algo, uint32_t ranks, uint32_t nodes, uint32_t channels,
                                     uint32_t rails, bool flushes);

#endif
