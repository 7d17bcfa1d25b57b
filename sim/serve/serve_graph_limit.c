/*
 * serve_graph_limit.c: the engines' CUDA graph limits by hardware
 * (serve_graph_limit.h), one row a release whose rule was read.
 *
 * The memory both read is nvidia-smi's memory.total in MiB, the least over
 * the node's GPUs (utils get_nvgpu_memory_capacity; ROCm: rocminfo's pool
 * size in MiB, get_amdgpu_memory_capacity): here the device's capacity in
 * MiB (capacity / 2^20). The hardware files give the parts' memory in GiB
 * (docs/hardware.md, "Device memory capacities"): an H100's 80 GiB reads
 * 81,920 MiB here and 81,559 on its nvidia-smi, an H200's 141 GiB 144,384
 * (143,771), a B200's 180 GiB 184,320 (183,359): each on the same side of
 * every threshold below as the driver's.
 *
 * "sglang-0.4" (the sglang-v0.4 row): SGLang 0.4.0's PyPI wheel,
 *   sglang/srt/server_args.py:152-155 reads the memory, :177-182
 *   cuda_graph_max_bs = 8 under 25,000 MiB, else 160 (no TP term); the
 *   capture list (model_executor/cuda_graph_runner.py:128-138) is [1, 2, 4]
 *   + 8 x (1..20), those <= cuda_graph_max_bs (and the request pool's size,
 *   not modelled: a batch never exceeds the running requests), max_bs its
 *   last (:150): an option of 200 still captures up to 160. can_run (:214-
 *   229): batch_size <= max_bs (under attention DP the largest rank's);
 *   replay pads to bisect_left's size (:341-346).
 * "sglang-0.5" (the sglang-v0.5 row): SGLang 0.5.6's PyPI wheel,
 *   sglang/srt/server_args.py:609-613 reads the memory (utils/common.py:
 *   1610-1641, 1729-1746) and _handle_gpu_memory_settings (:701-808) sets
 *   cuda_graph_max_bs on CUDA and ROCm:
 *     < 20 GiB (T4, 4080) 8;
 *     < 35 GiB (A10, 4090, 5090) 24 at TP < 4, else 80;
 *     < 60 GiB (A100 40 GB, L40) 32 at TP < 4, else 160;
 *     < 90 GiB (H100, A100 80 GB) and < 160 GiB (H20, H200) 256 at TP < 4,
 *     else 512;
 *     else (B200, MI300) 512;
 *   (the NPU brackets, :734-742 and :766-775, are Ascend's: not here). The
 *   capture list without speculation (_generate_cuda_graph_batch_sizes,
 *   :870-899; :880-886): [1, 2, 4, 8, 12] + 16..256 by 8 + 272..496 by 16 +
 *   512..cuda_graph_max_bs by 32, those <= cuda_graph_max_bs (:897);
 *   CudaGraphRunner's max_bs is its last (model_executor/
 *   cuda_graph_runner.py:189-216, :293); can_run (:359-377): batch_size <=
 *   max_bs (under attention DP, require_mlp_tp_gather: the largest rank's
 *   tokens); replay pads by bisect_left (:756-758). Not modelled: the
 *   speculative-decoding list (no speculation row), --disable-cuda-graph-
 *   padding, the request pool's size added to the list where it is smaller,
 *   the two-batch-overlap and gathered-buffer multiples (:198-206; attention
 *   TP 1 under strata's --attention-dp keeps every size).
 */
#include "serve/serve_graph_limit.h"
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct strata_serve_graph_limit {
    const char *name;
    uint32_t (*by_memory)(uint64_t mib, uint32_t tp); /* cuda_graph_max_bs where none is given */
    /* the least captured size >= n on the release's whole list (no limit), 0 past its end */
    uint32_t (*next)(uint32_t n);
    uint32_t last; /* the whole list's last size (UINT32_MAX: none, it runs on by 32) */
};

static uint32_t round_up(uint32_t n, uint32_t a) { return (n + a - 1) / a * a; }

/* SGLang 0.4.0's server_args.py:177-182. */
static uint32_t sgl04_by_memory(uint64_t mib, uint32_t tp)
{
    (void)tp;
    return mib < 25000 ? 8 : 160;
}

/* SGLang 0.4.0's list, [1, 2, 4] + 8 x (1..20). */
static uint32_t sgl04_next(uint32_t n)
{
    return n <= 2 ? n : n <= 4 ? 4 : n <= 160 ? round_up(n, 8) : 0;
}

/* SGLang 0.5.6's server_args.py:726-808 off NPUs, thresholds in MiB. */
static uint32_t sgl05_by_memory(uint64_t mib, uint32_t tp)
{
    bool wide = tp >= 4;
    return mib < 20 * 1024   ? 8
           : mib < 35 * 1024 ? (wide ? 80 : 24)
           : mib < 60 * 1024 ? (wide ? 160 : 32)
           : mib < 160 * 1024 ? (wide ? 512 : 256)
                              : 512;
}

/* SGLang 0.5.6's list, [1, 2, 4, 8, 12] + 16..256 by 8 + 272..496 by 16 + 512 on by 32 (unbounded here: the limit
 * bounds it). */
static uint32_t sgl05_next(uint32_t n)
{
    if (n <= 2)
        return n;
    if (n <= 12)
        return n <= 4 ? 4 : n <= 8 ? 8 : 12;
    if (n <= 256)
        return round_up(n, 8);
    if (n <= 496)
        return round_up(n, 16);
    return n <= 512 ? 512 : 512 + round_up(n - 512, 32);
}

static const strata_serve_graph_limit rows[] = {
    {"sglang-0.4", sgl04_by_memory, sgl04_next, 160},
    {"sglang-0.5", sgl05_by_memory, sgl05_next, UINT32_MAX},
};

const strata_serve_graph_limit *strata_serve_graph_limit_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

uint32_t strata_serve_graph_limit_default(const strata_serve_graph_limit *r, uint64_t capacity_bytes, uint32_t tp)
{
    return r->by_memory(capacity_bytes >> 20, tp);
}

uint32_t strata_serve_graph_limit_largest(const strata_serve_graph_limit *r, uint32_t max_bs)
{
    /* the list's last <= max_bs: walk down from max_bs, or the list's end (its gaps are at most 32) */
    uint32_t m = max_bs < r->last ? max_bs : r->last;
    m = m ? m : 1;
    while (m > 1 && r->next(m) != m)
        m--;
    return m;
}

uint32_t strata_serve_graph_limit_size(const strata_serve_graph_limit *r, uint32_t max_bs, uint32_t n)
{
    uint32_t s = r->next(n ? n : 1);
    return s && s <= strata_serve_graph_limit_largest(r, max_bs) ? s : 0;
}
