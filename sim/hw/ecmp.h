/*
 * ecmp.h: static flow placement on a leaf's uplinks (ECMP), as a leaf
 * switch of a two-tier fabric does it without adaptive routing: each flow
 * (a queue pair of one of NCCL's network connections) is hashed onto one
 * of the leaf's `uplinks` equal uplinks and keeps it; flows hashed onto
 * one uplink share it evenly (an uplink's share = its bandwidth / its
 * flows) while other uplinks may idle, and a ring runs at the pace of its
 * slowest flow. With adaptive routing (InfiniBand AR) the packets spread
 * over every uplink: the uplinks act as one link (strata's leaf uplink).
 *
 * Placement: the expected maximum load of balls in bins. `keys` distinct
 * hash keys (the flows, or the destination ports where the route is a
 * destination's: InfiniBand's static routes are the subnet manager's
 * per-destination forwarding tables), each as likely on every uplink and
 * independent. Why not a fixed hash of the flows' endpoints: strata's
 * device numbers are neither the fabric's LIDs nor its UDP source ports,
 * so a hash of them would pick one of the placements a real fabric could
 * have, arbitrarily; the expectation over placements is the figure a run
 * on an unknown placement can expect, and it is the same on every run
 * (exact arithmetic over the occupancy distribution, no random numbers).
 *
 * With M the keys on the busiest uplink (a random variable), each of the
 * F flows behind the K keys gets at most (uplink bandwidth) / (M F / K),
 * and the ring's flows run at the slowest: the leaf carries at most
 * F x that = (U uplinks' bandwidth) x K / (U M). strata_ecmp_expected_share
 * returns E[K / (U M)], the fraction of the leaf's uplinks the ring can
 * use: 1 where U = 1 or K = 0, 1 / U where K = 1 (one key is on one uplink), e.g.
 * 4 keys on 4 uplinks that take 3 distinct uplinks: M = 2, 4 / 8 = 1/2.
 *
 * Invariants: pure functions; the result is in [1/U, 1] (1/U where every
 * key lands on one uplink, 1 where they spread evenly).
 */
#ifndef STRATA_HW_ECMP_H
#define STRATA_HW_ECMP_H

#include <stdint.h>

/* The most keys and uplinks strata_ecmp_expected_share takes (more: the
 * share of the most). Its cost is about uplinks x keys x the m it sums
 * over: 512 on 512 about 0.3 s (the review found 4,096 keys on 2 uplinks
 * took 16 s); hw_network.c's keys stop at 512 uplinks and 16 QPs a
 * connection. */
#define STRATA_ECMP_MAX 512u

/* E[keys / (uplinks x M)], M the most keys on one uplink when `keys`
 * keys are placed uniformly and independently on `uplinks` uplinks.
 * keys = 0 or uplinks <= 1: 1. */
double strata_ecmp_expected_share(uint32_t keys, uint32_t uplinks);

#endif
