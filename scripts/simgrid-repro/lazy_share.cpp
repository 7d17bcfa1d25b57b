/*
 * lazy_share.cpp: four transfers started together over shared link
 * directions; under SimGrid 3.32's CM02 with network/crosstraffic:0 and the
 * lazy update (network/optim:Lazy, CM02's default) one pair ends as if it
 * had its link directions alone. See README.md.
 *
 * Usage: lazy_share [HOPS [LATENCY_US]] [SimGrid --cfg=... options]
 *   HOPS 3 (default) or 1, LATENCY_US each link's latency (default 0.5).
 *
 * Platform (one Full zone), HOPS = 3: hosts h63, h15, h0, h16 and the links
 *   l63_15, l15_3, l3_0, l0_16   SPLITDUPLEX, 100 GB/s each direction, LATENCY
 *   p63, p15, p0, p16            SHARED, 2,765 GB/s, latency 0: each host's
 *                                own port, on every route from or to it
 * (the platform strata builds for these four copies on a TPU v5p 4x4x4
 * torus: chips 63, 15, 3, 0, 16 on a line of the torus, each chip's HBM
 * port on the routes that read or write its HBM; chip 3 is only crossed).
 * Transfers of 65,536 bytes, all started at date 0, each by its own actor:
 *   t1  h63 -> h0   p63, l63_15 UP,   l15_3 UP,   l3_0 UP,    p0
 *   t2  h15 -> h16  p15, l15_3 UP,    l3_0 UP,    l0_16 UP,   p16
 *   t3  h0  -> h63  p0,  l3_0 DOWN,   l15_3 DOWN, l63_15 DOWN, p63
 *   t4  h16 -> h15  p16, l0_16 DOWN,  l3_0 DOWN,  l15_3 DOWN, p15
 * HOPS = 1 keeps only l3_0 on each route (p63, l3_0 UP, p0 for t1, ...).
 * t1 and t2 share the UP directions of l15_3 and l3_0, t3 and t4 their DOWN
 * directions; the ports join the two pairs into one system (t1 and t3 both
 * cross p0 and p63) without limiting them. Max-min: each pair gets 50 GB/s
 * on its shared directions, so every transfer ends at
 * HOPS x LATENCY + 65536 / 50e9 s (3 x 0.5 us + 1.31072 us = 2.81072 us).
 */
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;
using D = sg4::LinkInRoute::Direction;

static const double LINK_BW = 100e9;
static const double PORT_BW = 2765e9;
static const double BYTES = 65536;

static void transfer(sg4::Host *src, sg4::Host *dst, std::string name)
{
    sg4::Comm::sendto(src, dst, BYTES);
    std::printf("%-12s ended at %.6f us\n", name.c_str(), sg4::Engine::get_clock() * 1e6);
}

int main(int argc, char **argv)
{
    sg4::Engine e(&argc, argv); /* takes the --cfg= options out of argv */
    int hops = argc > 1 ? std::atoi(argv[1]) : 3;
    double latency = (argc > 2 ? std::atof(argv[2]) : 0.5) * 1e-6;
    if (hops != 1 && hops != 3) {
        std::fprintf(stderr, "usage: %s [HOPS (1 or 3) [LATENCY_US]] [--cfg=...]\n", argv[0]);
        return 2;
    }

    auto *zone = sg4::create_full_zone("world");
    sg4::Host *h63 = zone->create_host("h63", 1e9)->seal();
    sg4::Host *h15 = zone->create_host("h15", 1e9)->seal();
    sg4::Host *h0 = zone->create_host("h0", 1e9)->seal();
    sg4::Host *h16 = zone->create_host("h16", 1e9)->seal();
    auto link = [&](const char *name) -> const sg4::Link * {
        sg4::SplitDuplexLink *l = zone->create_split_duplex_link(name, LINK_BW);
        l->set_latency(latency)->seal();
        return l;
    };
    auto port = [&](const char *name) -> const sg4::Link * {
        return zone->create_link(name, PORT_BW)->set_latency(0)->seal(); /* SHARED */
    };
    const sg4::Link *l63_15 = link("l63_15"), *l15_3 = link("l15_3"), *l3_0 = link("l3_0"), *l0_16 = link("l0_16");
    const sg4::Link *p63 = port("p63"), *p15 = port("p15"), *p0 = port("p0"), *p16 = port("p16");

    auto route = [&](sg4::Host *a, sg4::Host *b, const sg4::Link *pa, std::vector<sg4::LinkInRoute> middle,
                     const sg4::Link *pb) {
        std::vector<sg4::LinkInRoute> links{{pa, D::NONE}};
        for (auto const &m : middle)
            if (hops == 3 || m.get_link() == l3_0)
                links.push_back(m);
        links.emplace_back(pb, D::NONE);
        zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr, links, false);
    };
    route(h63, h0, p63, {{l63_15, D::UP}, {l15_3, D::UP}, {l3_0, D::UP}}, p0);
    route(h15, h16, p15, {{l15_3, D::UP}, {l3_0, D::UP}, {l0_16, D::UP}}, p16);
    route(h0, h63, p0, {{l3_0, D::DOWN}, {l15_3, D::DOWN}, {l63_15, D::DOWN}}, p63);
    route(h16, h15, p16, {{l0_16, D::DOWN}, {l3_0, D::DOWN}, {l15_3, D::DOWN}}, p15);
    zone->seal();

    sg4::Actor::create("t1", h63, transfer, h63, h0, "t1 h63->h0");
    sg4::Actor::create("t2", h15, transfer, h15, h16, "t2 h15->h16");
    sg4::Actor::create("t3", h0, transfer, h0, h63, "t3 h0->h63");
    sg4::Actor::create("t4", h16, transfer, h16, h15, "t4 h16->h15");
    e.run();
    std::printf("max-min: every transfer ends at %.6f us\n", (hops * latency + BYTES / (LINK_BW / 2)) * 1e6);
    return 0;
}
