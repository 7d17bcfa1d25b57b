/*
 * engine_sg_flow.h: a host-to-host flow whose rate is bounded, through
 * SimGrid's C++ interface (engine_sg_flow.cpp).
 *
 * Why not sg_host_sendto: SimGrid 3.32's host-to-host comms
 * (s4u::Comm::sendto_init, src/s4u/s4u_Comm.cpp) take no rate: Comm::start
 * makes their CommImpl from the hosts and the size alone, so set_rate()
 * before the start is kept and ignored (measured: a bound of 0.5 or 2 times
 * the flow's need gave the same dates to the ps), and after it refused
 * (s4u_Comm.cpp:211). A mailbox comm carries its rate to the network model
 * (CommImpl::isend's rate, the action's user bound in
 * src/surf/network_cm02.cpp: the flow's variable is bounded by it), between
 * its sender's host and its receiver's. So the flow is a put, with the
 * rate, on a mailbox of the destination host whose permanent receiver (a
 * daemon actor there, made on first use) lets it start at once
 * (Mailbox::set_receiver: comms to it start without a get) and drains it;
 * the calling actor moves to the source host for the put and back after.
 *
 * For engine.c's copies of a paced phase (engine_phase.h): k rounds' bytes
 * as one flow held at the rounds' pace, so that whatever shares its links
 * sees it for the phase's whole length.
 *
 * Invariant: called from an actor, which it blocks until the flow has
 * ended, on its own host again; the receivers are SimGrid's (found by the
 * mailbox's name), no state of the caller's.
 */
#ifndef STRATA_ENGINE_SG_FLOW_H
#define STRATA_ENGINE_SG_FLOW_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Like sg_host_sendto(from, to, bytes), the flow's rate at most `rate` B/s
 * (rate <= 0: unbounded, sg_host_sendto itself). */
void engine_sg_sendto_bounded(sg_host_t from, sg_host_t to, double bytes, double rate);

#ifdef __cplusplus
}
#endif

#endif
