/*
 * pcie.h: a PCI Express link's data rate per direction, derived from its
 * protocol: the line rate and encoding of its generation, the TLP framing,
 * header and LCRC each payload carries, the DLLPs (Ack and UpdateFC) and
 * SKP ordered sets sharing the wire, and, for a device reading host memory,
 * the size of the completions that bring the data back.
 *
 * The derivation is the public model of Neugebauer et al., "Understanding
 * PCIe performance for end host networking", SIGCOMM 2018, as published in
 * github.com/pcie-bench/pcie-model (model/pcie.py): every figure below is
 * cited in pcie.c to it and to the PCI Express Base Specification it
 * quotes. Gen6's FLIT mode follows the PCIe 6.0 specification.
 *
 * Two directions, two mechanisms (seen from the device):
 *  - write (device to host, cudaMemcpy D2H): posted Memory Write TLPs of
 *    max_payload bytes, each with a 64-bit-address header;
 *  - read (host to device, H2D: the device's copy engine reads host
 *    memory): Memory Read requests of up to max_read_request bytes go up,
 *    and the data comes back in Completion-with-Data TLPs of the
 *    completion size (max_payload unless the completer splits at its Read
 *    Completion Boundary; never above max_read_request).
 * The request TLPs travel the other way and do not load the data
 * direction.
 *
 * Invariants: a config accepted by strata_pcie_check gives rates > 0 and
 * below the raw rate; read and write rates grow with their payload size.
 */
#ifndef STRATA_HW_PCIE_H
#define STRATA_HW_PCIE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct strata_pcie_config {
    uint32_t generation;       /* 3, 4, 5 or 6 */
    uint32_t lanes;            /* 1, 2, 4, 8, 16 or 32 */
    uint32_t max_payload;      /* MPS: 128, 256, ... 4096 bytes */
    uint32_t max_read_request; /* MRRS: 128 ... 4096 bytes */
    uint32_t read_completion;  /* completion size of a read: 64 ... 4096; 0 = max_payload */
} strata_pcie_config;

/* NULL when cfg is valid, else a static text saying which field is not and
 * what it must be. */
const char *strata_pcie_check(const strata_pcie_config *cfg);

/* Bytes per second on the wire per direction after line encoding (Gen6:
 * the TLP bytes of a flit). */
double strata_pcie_raw_rate(const strata_pcie_config *cfg);
/* Bytes per second left for TLPs after DLLPs and SKP ordered sets. */
double strata_pcie_tlp_rate(const strata_pcie_config *cfg);
/* Data bytes per second of device writes to host memory (D2H). */
double strata_pcie_write_rate(const strata_pcie_config *cfg);
/* Data bytes per second of device reads of host memory (H2D). */
double strata_pcie_read_rate(const strata_pcie_config *cfg);
/* The rate a strata link carries (one per link, both directions): the
 * lower of the read and write rates. */
double strata_pcie_data_rate(const strata_pcie_config *cfg);

#endif
