/*
 * engine_phase.c: a collective's phase as the engine runs it (contract in
 * engine_phase.h).
 */
#include "engine/engine_phase.h"
#include <glib.h>

uint32_t engine_phase_rounds(const strata_coll_phase *phase)
{
    return phase && phase->rounds > 1 ? phase->rounds : 1;
}

uint64_t engine_phase_bytes(const strata_coll_phase *phase, uint64_t bytes)
{
    return bytes * engine_phase_rounds(phase);
}

double engine_phase_flow_rate(const strata_coll_phase *phase, uint64_t bytes, double latency)
{
    uint32_t rounds = engine_phase_rounds(phase);
    if (rounds <= 1 || !phase->paced)
        return 0;
    /* alone, latency + k bytes / rate = k round times: the flow ends with the rounds */
    double flowing = rounds * (double)phase->round_time_ps * 1e-12 - latency;
    return flowing > 0 ? rounds * (double)bytes / flowing : 0;
}

double engine_phase_flops(const strata_coll_phase *phase, double flops)
{
    return flops * engine_phase_rounds(phase);
}

double engine_phase_copy_until(const strata_coll_phase *phase, double t0, double now, double latency, bool equal)
{
    uint32_t rounds = engine_phase_rounds(phase);
    if (rounds <= 1)
        return now;
    double paced = t0 + rounds * (double)phase->round_time_ps * 1e-12;
    if (phase->paced) {
        /* alone its flow paid the rounds' latencies at their pace
         * (engine_phase_flow_rate) and ends at `paced`; held past it by
         * what shares its links, its rounds were bandwidth-bound, and each
         * round after the first leaves its links idle for the round's
         * least latency before its bytes (the steps' rounds: the first
         * copy's start), which the one flow did not: up to k - 1 of those,
         * no more than it was held. Under equal sharing only: CM02's
         * shares, weighted by route latency, already hold the long
         * routes' flows (flow_sharing = latency; the 2x2x2 pair of
         * test_fast_paced_phases_share_links: +0.79% without it) */
        double idle = (rounds - 1) * (double)phase->round_idle_ps * 1e-12;
        double held = now - paced; /* none within the rounding of the round's time to a ps, k x 0.5 ps */
        return equal && held > rounds * 0.5e-12 ? now + MIN(idle, held) : MAX(now, paced);
    }
    double round_latency = phase->round_latency_ps ? (double)phase->round_latency_ps * 1e-12 : latency;
    /* the k rounds' latencies; at least k times the round's slowest copy alone */
    return MAX(now + rounds * round_latency - latency, paced);
}

double engine_phase_compute_alone(const strata_coll_phase *phase, double amount, const strata_compute_spec *u,
                                  const strata_hw *hw, uint32_t memory, uint64_t bytes)
{
    uint32_t rounds = engine_phase_rounds(phase);
    if (rounds <= 1)
        return 0;
    const strata_memory_spec *m = strata_hw_memory(hw, memory);
    /* each round would have paid max(work, operand latency + bytes) on its own */
    double work = amount / (u->flops > 0 ? u->flops : 1.0) / rounds;
    double read = bytes > 0 && m->bandwidth > 0 ? m->latency + (double)bytes / m->bandwidth : 0;
    return rounds * MAX(work, read) - MAX(rounds * work, read > 0 ? m->latency + rounds * (read - m->latency) : 0);
}

double engine_phase_overhead(const strata_coll_phase *phase, double overhead)
{
    return overhead * engine_phase_rounds(phase);
}
