/*
 * test_nccl_channels.c: NCCL's division of one collective's bytes among
 * its channels (sim/hw/nccl_channels.h), by release, against values worked
 * by hand from src/enqueue.cc scheduleCollTasksToPlan (v2.22.3-1, v2.25.1-1,
 * v2.27.7-1, v2.30.7-1) and v2.19.3-1's even split.
 *
 * Names as in the source: T = max(Min, count x trafficPerByte); tpc =
 * trafficPerChannel; cell = cellSize; per = cellsPerChannel.
 */
#include <check.h>
#include "hw/nccl_channels.h"
#include "testutil.h"

/* nc channels after the tuning's cut, max the communicator's */
static strata_nccl_split split(const char *release, strata_op_kind kind, strata_nccl_proto p, uint32_t ranks,
                               uint64_t bytes, uint32_t nc, uint32_t max)
{
    const strata_nccl_version *v = strata_nccl_version_find(release);
    ck_assert_ptr_nonnull(v);
    return strata_nccl_channel_split(v, kind, p, ranks, bytes, nc, max);
}

static void check_split(strata_nccl_split s, uint32_t channels, uint64_t lo, uint64_t mid, uint32_t n_mid, uint64_t hi)
{
    ck_assert_uint_eq(s.channels, channels);
    ck_assert_uint_eq(s.lo, lo);
    ck_assert_uint_eq(s.mid, mid);
    ck_assert_uint_eq(s.n_mid, n_mid);
    ck_assert_uint_eq(s.hi, hi);
}

/* 1 MiB of Simple all-reduce (trafficPerByte 2), 8 ranks, 24 channels.
 * v2.30 (Min 32 KiB): T = 2,097,152; tpc = divUp(2,097,152 / 24 = 87,381,
 * 16) x 16 = 87,392; cell = divUp(divUp(32,768, 2), 16) x 16 = 16,384;
 * cells = 64; trafficPerCell 32,768; per = divUp(87,392, 32,768) = 3;
 * cellsLo 3, nMid (64 - 3) / 3 = 20, cellsHi 61 % 3 = 1: 22 channels,
 * 21 x 49,152 B and one of 16,384 (21 x 49,152 + 16,384 = 1,048,576).
 * v2.27 (Min 16 KiB): tpc = max(16,384, 87,381) = 87,381; cell 8,192;
 * cells 128; trafficPerCell 16,384; per = divUp(87,381, 16,384) = 6
 * (49,152 B); nMid 122 / 6 = 20, cellsHi 122 % 6 = 2 (16,384 B): the same.
 * v2.19: all 24 channels, the even share (lo = mid = 0). */
START_TEST(one_mib_simple_all_reduce_on_24_channels)
{
    check_split(split("2.30", STRATA_OP_ALL_REDUCE, STRATA_NCCL_SIMPLE, 8, 1 << 20, 24, 24), 22, 49152, 49152, 20,
                16384);
    check_split(split("2.27", STRATA_OP_ALL_REDUCE, STRATA_NCCL_SIMPLE, 8, 1 << 20, 24, 24), 22, 49152, 49152, 20,
                16384);
    check_split(split("2.19", STRATA_OP_ALL_REDUCE, STRATA_NCCL_SIMPLE, 8, 1 << 20, 24, 24), 24, 0, 0, 0, 0);
}
END_TEST

/* v2.22.3-1's cells (src/enqueue.cc l. 603-690): a cell of 16 bytes,
 * Min 512, T = count x trafficPerByte without the max, cellsLo rounded
 * down. 4,000 B of all-reduce on 3 channels: T = 8,000, tpc = max(512,
 * 2,666) = 2,666; cells 250, trafficPerCell 32; per = divUp(2,666, 32) =
 * 84; cellsLo = 2,666 / 32 = 83; nMid (250 - 83) / 84 = 1, cellsHi 167 %
 * 84 = 83: 1,328 + 1,344 + 1,328 = 4,000 B on 3 channels (v2.25 would
 * take cellsLo 84). v2.25 (Min 16 KiB): T = 16,384, tpc 16,384, cell
 * 8,192, one cell: the whole 4,000 B on one channel. 4,096 B on 2: tpc
 * 4,096, per = cellsLo = 128, nMid 1, cellsHi 0, then cellsHi 128, nMid 0:
 * 2,048 and 2,048. An all-gather of 64 ranks, 32 B a rank, on 4 channels:
 * T 2,048, tpc max(512, 512) = 512, trafficPerCell 16 x 64 = 1,024, cells
 * 2, per = min(2, 1) = 1, cellsLo = 512 / 1,024 = 0; nMid 2, cellsHi 0,
 * then cellsHi 1, nMid 1; cellsLo 0: "Least channel skipped", cellsLo =
 * per, nMid 0: 16 B and 16 B on 2 channels. */
START_TEST(cells_of_16_bytes_in_2_22)
{
    check_split(split("2.22", STRATA_OP_ALL_REDUCE, STRATA_NCCL_SIMPLE, 8, 4000, 3, 8), 3, 1328, 1344, 1, 1328);
    check_split(split("2.25", STRATA_OP_ALL_REDUCE, STRATA_NCCL_SIMPLE, 8, 4000, 3, 8), 1, 4000, 0, 0, 0);
    check_split(split("2.22", STRATA_OP_ALL_REDUCE, STRATA_NCCL_LL, 8, 4096, 2, 8), 2, 2048, 0, 0, 2048);
    check_split(split("2.22", STRATA_OP_ALL_GATHER, STRATA_NCCL_SIMPLE, 64, 32, 4, 8), 2, 16, 0, 0, 16);
}
END_TEST

/* 64 KiB of LL all-reduce on 8 channels of a communicator's 8. v2.26 (LL's traffic x 4 = 8 a
 * byte): T = 131,072, tpc = max(16,384, 16,384) = 16,384; cell =
 * divUp(16,384 / 8, 16) x 16 = 2,048; cells 32; trafficPerCell 16,384;
 * per 1; cellsLo 1, nMid 31, cellsHi 0: 33 > 8 channels overflow, so nMid =
 * 8 - 2 = 6, per = 31 / 7 = 4, cellsHi = 4 + 31 % 7 = 7: 2,048 B, 6 x
 * 8,192, 14,336 (= 65,536). v2.25 (no x 4): cell = 8,192, cells 8, per 1,
 * cellsLo 1, nMid 7, cellsHi 0, then cellsHi = per, nMid 6: 8 x 8,192. */
START_TEST(ll_cells_by_release)
{
    check_split(split("2.26", STRATA_OP_ALL_REDUCE, STRATA_NCCL_LL, 8, 65536, 8, 8), 8, 2048, 8192, 6, 14336);
    check_split(split("2.25", STRATA_OP_ALL_REDUCE, STRATA_NCCL_LL, 8, 65536, 8, 8), 8, 8192, 8192, 6, 8192);
}
END_TEST

/* An all-gather of 100,000 B per rank (task->count), 8 ranks (trafficPerByte
 * 8), Simple, 16 channels, v2.27: T = 800,000, tpc = max(16,384, 50,000) =
 * 50,000; cell = divUp(2,048, 16) x 16 = 2,048; cells = divUp(100,000,
 * 2,048) = 49; trafficPerCell 16,384; per = divUp(50,000, 16,384) = 4
 * (8,192 B); cellsLo 4, nMid 45 / 4 = 11, cellsHi 1, whose 2,048 B lose
 * the padding 49 x 2,048 - 100,000 = 352: 1,696. 13 channels. */
START_TEST(all_gather_pads_the_last_channel)
{
    check_split(split("2.27", STRATA_OP_ALL_GATHER, STRATA_NCCL_SIMPLE, 8, 100000, 16, 16), 13, 8192, 8192, 11, 1696);
}
END_TEST

/* A buffer of one cell: one channel takes it all (cellsLo = cells = 1), the
 * padding off it: 4,096 B of Simple all-reduce on 24 channels, v2.30:
 * cell 16,384, 1 cell, lo 16,384 - 12,288 = 4,096. */
START_TEST(small_buffer_one_channel)
{
    check_split(split("2.30", STRATA_OP_ALL_REDUCE, STRATA_NCCL_SIMPLE, 8, 4096, 24, 24), 1, 4096, 0, 0, 0);
}
END_TEST

/* 114,688 B of LL all-reduce over 16 ranks, cut to 16 channels of a
 * communicator's 32, v2.30: T = 229,376; tpc = divUp(229,376 / 16 =
 * 14,336, 16) x 16 = 14,336; cell = divUp(32,768 / 8, 16) x 16 = 4,096;
 * cells 28; trafficPerCell 32,768; per = divUp(14,336, 32,768) = 1;
 * cellsLo 1, nMid 27, cellsHi 0: 28 channels fit 32, then cellsHi = 1,
 * nMid 26: 28 channels of 4,096 B, more than the 16 of the cut. With 16
 * channels in all, 28 overflow: nMid = 14, per = 27 / 15 = 1, cellsHi =
 * 1 + 27 % 15 = 13 (53,248 B). */
START_TEST(cells_beyond_the_cut_and_overflow)
{
    check_split(split("2.30", STRATA_OP_ALL_REDUCE, STRATA_NCCL_LL, 16, 114688, 16, 32), 28, 4096, 4096, 26, 4096);
    check_split(split("2.30", STRATA_OP_ALL_REDUCE, STRATA_NCCL_LL, 16, 114688, 16, 16), 16, 4096, 4096, 14, 53248);
}
END_TEST

static Suite *nccl_channels_suite(void)
{
    Suite *s = suite_create("nccl_channels");
    TCase *tc = tcase_create("split");
    tcase_add_test(tc, one_mib_simple_all_reduce_on_24_channels);
    tcase_add_test(tc, ll_cells_by_release);
    tcase_add_test(tc, cells_of_16_bytes_in_2_22);
    tcase_add_test(tc, all_gather_pads_the_last_channel);
    tcase_add_test(tc, small_buffer_one_channel);
    tcase_add_test(tc, cells_beyond_the_cut_and_overflow);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_channels_suite()); }
