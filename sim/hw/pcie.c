/*
 * pcie.c: a PCI Express link's data rate per direction (pcie.h).
 *
 * Sources:
 *   [spec]  PCI Express Base Specification (rev. 3.0 to 6.0): line rates
 *           8, 16, 32 and 64 GT/s per lane for Gen3 to Gen6; 128b/130b
 *           encoding for Gen3 to Gen5; the TLP layout (STP token with the
 *           sequence number, 3- or 4-DW header, payload, 32-bit LCRC);
 *           DLLPs of 8 bytes on the wire; Ack latency limits (rev. 5.0
 *           Tables 3-7 to 3-9) and UpdateFC guidelines (Tables 2-46 to 2-48).
 *   [model] Neugebauer et al., "Understanding PCIe performance for end host
 *           networking", ACM SIGCOMM 2018, section 3 (the model), and its
 *           published code github.com/pcie-bench/pcie-model, model/pcie.py:
 *           DLLP_Hdr 8 B (framing, sequence number and LCRC of a TLP), the
 *           4-byte generic TLP header plus 12 bytes for a 64-bit Memory Write
 *           or Read and 8 bytes for a Completion with Data; one Ack DLLP and
 *           one UpdateFC DLLP (8 B each) per Ack limit / FC guideline bytes of
 *           the tables below; SKP ordered sets of 4 bytes every 1538; the TLP
 *           rate is the raw rate less these.
 *   [flit]  PCI Express 6.0 specification, Flit Mode (PCI-SIG, "PCIe 6.0
 *           Specification: The Interconnect for I/O Needs of the Future"):
 *           64 GT/s PAM4, no line encoding; a 256-byte flit carries 236 bytes
 *           of TLPs, 6 of DLLP payload, 8 of CRC and 6 of FEC. TLPs in Flit
 *           Mode have no framing token or LCRC (the flit's CRC covers them)
 *           and DLLPs ride in the flit's DLP bytes, not between TLPs.
 */
#include "hw/pcie.h"

#include <stddef.h>

/* [spec] GT/s per lane by generation (index 3..6). */
static const double line_rate_gt[7] = {0, 0, 0, 8.0, 16.0, 32.0, 64.0};

static const uint32_t lane_counts[] = {1, 2, 4, 8, 16, 32};
static const uint32_t payload_sizes[] = {128, 256, 512, 1024, 2048, 4096};

/* [spec] via [model]: the Ack latency limit and the UpdateFC guideline for
 * Gen3 to Gen5 (the same table for both and for the three generations in
 * [model]), by lanes (rows as lane_counts) and max payload (columns as
 * payload_sizes). [model] sends one 8-byte DLLP of each kind per this many
 * bytes. */
static const double dllp_interval[6][6] = {
    {333, 512, 655, 1167, 2191, 4239}, /* x1 */
    {224, 313, 385, 641, 1153, 2177},  /* x2 */
    {169, 214, 250, 378, 634, 1146},   /* x4 */
    {163, 203, 182, 246, 374, 630},    /* x8 */
    {144, 168, 182, 246, 374, 630},    /* x16 */
    {129, 141, 148, 180, 244, 372},    /* x32 */
};

/* [model] DLLP size on the wire (2 B framing + 4 B DLLP + 2 B CRC). */
#define DLLP_BYTES 8.0
/* [model] SKP ordered sets: 4 bytes every 1538. */
#define SKP_BYTES 4.0
#define SKP_INTERVAL 1538.0
/* [model] per TLP: framing, sequence number and LCRC (Gen3-5). */
#define TLP_LINK_BYTES 8.0
/* [model] 4-byte generic header + 12 (64-bit Memory Write / Read). */
#define MWR64_HEADER 16.0
/* [model] 4-byte generic header + 8 (Completion with Data). */
#define CPLD_HEADER 12.0
/* [flit] TLP bytes per 256-byte flit. */
#define FLIT_TLP_BYTES 236.0
#define FLIT_BYTES 256.0

static int index_of(const uint32_t *values, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++)
        if (values[i] == v)
            return (int)i;
    return -1;
}

const char *strata_pcie_check(const strata_pcie_config *cfg)
{
    if (cfg->generation < 3 || cfg->generation > 6)
        return "generation: expected 3, 4, 5 or 6";
    if (index_of(lane_counts, G_N_ELEMENTS(lane_counts), cfg->lanes) < 0)
        return "lanes: expected 1, 2, 4, 8, 16 or 32";
    if (index_of(payload_sizes, G_N_ELEMENTS(payload_sizes), cfg->max_payload) < 0)
        return "max_payload: expected 128, 256, 512, 1024, 2048 or 4096 (bytes)";
    if (index_of(payload_sizes, G_N_ELEMENTS(payload_sizes), cfg->max_read_request) < 0)
        return "max_read_request: expected 128, 256, 512, 1024, 2048 or 4096 (bytes)";
    if (cfg->read_completion != 0 && cfg->read_completion != 64 &&
        index_of(payload_sizes, G_N_ELEMENTS(payload_sizes), cfg->read_completion) < 0)
        return "read_completion: expected 64, 128, 256, 512, 1024, 2048 or 4096 (bytes)";
    if (cfg->read_completion > cfg->max_payload)
        return "read_completion: a completion carries at most max_payload bytes";
    return NULL;
}

double strata_pcie_raw_rate(const strata_pcie_config *cfg)
{
    double bits = line_rate_gt[cfg->generation] * 1e9 * cfg->lanes;
    /* [spec] 128b/130b for Gen3 to Gen5; [flit] Gen6: the TLP share of a flit. */
    double useful = cfg->generation <= 5 ? 128.0 / 130.0 : FLIT_TLP_BYTES / FLIT_BYTES;
    return bits * useful / 8.0;
}

double strata_pcie_tlp_rate(const strata_pcie_config *cfg)
{
    double overhead = SKP_BYTES / SKP_INTERVAL;
    if (cfg->generation <= 5) { /* [flit]: in Flit Mode DLLPs take no TLP bytes */
        int l = index_of(lane_counts, G_N_ELEMENTS(lane_counts), cfg->lanes);
        int p = index_of(payload_sizes, G_N_ELEMENTS(payload_sizes), cfg->max_payload);
        overhead += 2 * DLLP_BYTES / dllp_interval[l][p]; /* one Ack and one UpdateFC */
    }
    return strata_pcie_raw_rate(cfg) * (1.0 - overhead);
}

/* Data rate of TLPs carrying `payload` bytes behind `header` bytes. */
static double payload_rate(const strata_pcie_config *cfg, double payload, double header)
{
    double per_tlp = header + (cfg->generation <= 5 ? TLP_LINK_BYTES : 0.0);
    return strata_pcie_tlp_rate(cfg) * payload / (payload + per_tlp);
}

double strata_pcie_write_rate(const strata_pcie_config *cfg)
{
    return payload_rate(cfg, cfg->max_payload, MWR64_HEADER);
}

double strata_pcie_read_rate(const strata_pcie_config *cfg)
{
    uint32_t c = cfg->read_completion ? cfg->read_completion : cfg->max_payload;
    if (c > cfg->max_read_request) /* a completion never exceeds its request */
        c = cfg->max_read_request;
    return payload_rate(cfg, c, CPLD_HEADER);
}

double strata_pcie_data_rate(const strata_pcie_config *cfg)
{
    double w = strata_pcie_write_rate(cfg), r = strata_pcie_read_rate(cfg);
    return w < r ? w : r;
}
