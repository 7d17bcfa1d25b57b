/*
 * engine_sg_flow.cpp: a host-to-host flow of bounded rate (contract in
 * engine_sg_flow.h).
 */
#include "engine/engine_sg_flow.h"
#include <cmath>
#include <simgrid/host.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <string>

namespace sg4 = simgrid::s4u;

/* The destination's mailbox, with its permanent receiver (made on first use, the host marked by a property). */
static sg4::Mailbox *paced_box(sg4::Host *to)
{
    sg4::Mailbox *box = sg4::Mailbox::by_name("paced:" + to->get_name());
    if (to->get_property("strata:paced") == nullptr) { /* the host's mark: its receiver is made */
        to->set_property("strata:paced", "1");
        sg4::ActorPtr receiver = sg4::Actor::create("paced:" + to->get_name(), to, [box] {
            for (;;)
                box->get<char>(); /* drains what has arrived */
        });
        receiver->daemonize();
        box->set_receiver(receiver);
    }
    return box;
}

void engine_sg_sendto_bounded(sg_host_t from, sg_host_t to, double bytes, double rate)
{
    if (!(rate > 0)) {
        sg_host_sendto(from, to, bytes);
        return;
    }
    static const char payload = 0; /* a comm carries a pointer; never dereferenced */
    sg4::Mailbox *box = paced_box(to);
    sg4::Host *home = sg4::this_actor::get_host();
    if (home != from)
        sg4::this_actor::set_host(from);
    box->put_init(const_cast<char *>(&payload), static_cast<uint64_t>(std::llround(bytes)))->set_rate(rate)->wait();
    if (home != from)
        sg4::this_actor::set_host(home);
}
