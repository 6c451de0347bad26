/* rsp_mul_probe.c - runs dnn64_rsp_mul_channels_s8 and dnn64_mul_s8 on the cases of the
 * "cases" asset (tests/emulator/test_rsp_dwconv.py writes it and checks every output
 * against the numpy integer reference).
 *
 * Asset: big-endian int32 words: the case count, then per case channels, h, w,
 * b_per_channel, in_place, a_zero_point, b_zero_point, out_zero_point, mult, shift,
 * act_min, act_max; the planes (channels * h * w int8) and the per-channel values
 * (channels int8), each padded to 4 bytes. In place, y is the planes' buffer. Prints
 * per case
 *   mul<i> <first index> <hex>...   the RSP kernel's y
 *   sam<i> <1 if dnn64_mul_s8 wrote the same y, else 0> */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

#define DATA_MAX 65536u
#define Y_MAX 16384u
#include "probe_cases.h"

static int8_t DNN64_ALIGNED(y_rsp[Y_MAX]);
static int8_t DNN64_ALIGNED(y_cpu[Y_MAX]);

int main(void)
{
    int32_t count, c;
    dnn64_platform_init();
    count = read_cases("rsp_mul_probe: cases asset too big");
    for (c = 0; c < count; c++) {
        dnn64_mul_s8_params p;
        dnn64_bcast bc;
        const int32_t channels = word(), h = word(), w = word(), b_per_channel = word();
        const int32_t in_place = word(), size = channels * h * w;
        const int8_t *planes, *scales;
        const int8_t *a, *b;
        int32_t i, same = 1;
        char prefix[8] = "mul";
        p.a_zero_point = word(), p.b_zero_point = word(), p.out_zero_point = word();
        p.mult = word(), p.shift = word(), p.act_min = word(), p.act_max = word();
        planes = bytes(size);
        scales = bytes(channels);
        if (size > (int32_t)Y_MAX)
            dnn64_fail("rsp_mul_probe: case too big");
        bc.rank = 3, bc.dims[0] = channels, bc.dims[1] = h, bc.dims[2] = w;
        for (i = 0; i < 3; i++) { /* the planes contiguous, the values one a channel */
            const int32_t plane_stride = i == 0 ? h * w : i == 1 ? w : 1;
            const int32_t value_stride = i == 0 ? 1 : 0;
            bc.a_strides[i] = b_per_channel ? plane_stride : value_stride;
            bc.b_strides[i] = b_per_channel ? value_stride : plane_stride;
        }
        for (i = 0; i < size; i++)
            y_rsp[i] = in_place ? planes[i] : 0;
        a = b_per_channel ? (in_place ? y_rsp : planes) : scales;
        b = b_per_channel ? scales : (in_place ? y_rsp : planes);
        dnn64_rsp_mul_channels_s8(&bc, a, b, &p, y_rsp, channels, h, w, b_per_channel);
        dnn64_mul_s8(&bc, b_per_channel ? planes : scales, b_per_channel ? scales : planes, &p,
                     y_cpu);
        for (i = 0; i < size; i++)
            same &= y_rsp[i] == y_cpu[i];
        prefix[3] = (char)('0' + c / 10), prefix[4] = (char)('0' + c % 10), prefix[5] = 0;
        dnn64_print_i8_hex(prefix, y_rsp, (uint32_t)size);
        prefix[0] = 's', prefix[1] = 'a', prefix[2] = 'm';
        dnn64_print_u64(prefix, (uint64_t)same);
    }
    return 0;
}
