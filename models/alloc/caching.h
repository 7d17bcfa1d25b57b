/*
 * caching.h: the constants of PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp), shared by the allocator model
 * (caching.c, strata_alloc_caching) and the snapshot importer
 * (sim/import/torch*), which must round and pool requests as it does.
 */
#ifndef STRATA_ALLOC_CACHING_H
#define STRATA_ALLOC_CACHING_H

#include <stdint.h>

#define CACHING_MIN_BLOCK 512u                       /* kMinBlockSize: request rounding */
#define CACHING_SMALL_SIZE (UINT64_C(1) << 20)       /* kSmallSize: small-pool requests */
#define CACHING_SMALL_BUFFER (UINT64_C(2) << 20)     /* kSmallBuffer: small segment, page */
#define CACHING_LARGE_BUFFER (UINT64_C(20) << 20)    /* kLargeBuffer: large segment, page */
#define CACHING_MIN_LARGE_ALLOC (UINT64_C(10) << 20) /* kMinLargeAlloc */
#define CACHING_ROUND_LARGE (UINT64_C(2) << 20)      /* kRoundLarge: large segment rounding */
#define CACHING_INTERVALS 16 /* kRoundUpPowerOfTwoIntervals: 1 MiB .. 32 GiB */

#endif
