/* rsp_gap_probe.c - runs dnn64_rsp_global_avgpool_s8 and dnn64_global_avgpool_s8, or
 * dnn64_rsp_reduce_mean_s8 and dnn64_reduce_mean_s8 over the trailing axis, on the cases
 * of the "cases" asset (tests/emulator/test_rsp_gap.py writes it and checks every output
 * against numpy).
 *
 * Asset: big-endian int32 words: the case count, then per case planes, hw, the byte
 * offset of x past an 8-byte boundary, act_min, act_max, mean (1: ReduceMean), x zero
 * point, multiplier, shift, out zero point; x (planes x hw int8, padded to 4 bytes).
 * Prints per case
 *   gap<i> <first index> <hex>...   the RSP kernel's y (planes int8)
 *   sam<i> <1 if the CPU kernel wrote the same y, else 0> */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

#define DATA_MAX 655360u
#define Y_MAX 2048u /* planes a case */
#include "probe_cases.h"

static int8_t DNN64_ALIGNED(x_placed[DATA_MAX + 8]); /* x at the case's offset */
static int8_t DNN64_ALIGNED(y_rsp[Y_MAX]);
static int8_t DNN64_ALIGNED(y_cpu[Y_MAX]);

int main(void)
{
    int32_t count, c;
    dnn64_platform_init();
    count = read_cases("rsp_gap_probe: cases asset too big");
    for (c = 0; c < count; c++) {
        const int32_t planes = word(), hw = word(), offset = word();
        const int32_t act_min = word(), act_max = word(), mean = word(), x_zp = word();
        const int32_t mult = word(), shift = word(), out_zp = word();
        const int32_t dims[2] = {planes, hw};
        const int8_t *x = bytes(planes * hw);
        int32_t i, same = 1;
        char prefix[8] = "gap";
        if (planes > (int32_t)Y_MAX)
            dnn64_fail("rsp_gap_probe: case too big");
        for (i = 0; i < planes * hw; i++)
            x_placed[offset + i] = x[i];
        if (mean) {
            dnn64_rsp_reduce_mean_s8(planes, hw, x_zp, mult, shift, out_zp, x_placed + offset,
                                     y_rsp);
            dnn64_reduce_mean_s8(2, dims, 2, x_zp, mult, shift, out_zp, x_placed + offset,
                                 y_cpu);
        } else {
            dnn64_rsp_global_avgpool_s8(planes, hw, act_min, act_max, x_placed + offset, y_rsp);
            dnn64_global_avgpool_s8(planes, hw, act_min, act_max, x_placed + offset, y_cpu);
        }
        for (i = 0; i < planes; i++)
            same &= y_rsp[i] == y_cpu[i];
        prefix[3] = (char)('0' + c / 10), prefix[4] = (char)('0' + c % 10), prefix[5] = 0;
        dnn64_print_i8_hex(prefix, y_rsp, (uint32_t)planes);
        prefix[0] = 's', prefix[1] = 'a', prefix[2] = 'm';
        dnn64_print_u64(prefix, (uint64_t)same);
    }
    return 0;
}
