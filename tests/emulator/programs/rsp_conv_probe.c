/* rsp_conv_probe.c - runs dnn64_rsp_conv_s8 and dnn64_conv_s8 on the cases of the
 * "cases" asset (tests/emulator/test_rsp_kernels.py writes it and checks every
 * output against its numpy integer reference).
 *
 * Asset: big-endian int32 words: the case count, then per case the 16 fields of
 * dnn64_conv_geom in order, x_zero_point, out_zero_point, act_min, act_max, 1 if a
 * table follows, oc_begin, oc_count, x bytes, w bytes; x and w (int8, each padded to
 * 4 bytes); the table (256 int8) if any; bias, mult, shift (oc_count int32 each). Prints per case
 *   rsp<i> <first index> <hex>...   the RSP kernel's y (dnn64_print_i8_hex)
 *   same<i> <1 if the CPU kernel wrote the same y, else 0>
 * and for a case of one image of 1x1 planes (a Gemm of one row)
 *   gemv<i> <1 if dnn64_rsp_gemv_s8 wrote the same y, else 0>
 * The weights are copied to an 8-byte aligned buffer, 4 bytes past it for odd-numbered
 * cases: SP DMA moves the weight rows of the even ones (when K is a multiple of 8), the
 * CPU packs the others. */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

/* The RSP kernel under test; rsp_own_dma_probe.c includes this file with its own. */
#ifndef RSP_CONV
#define RSP_CONV dnn64_rsp_conv_s8
#endif

#define DATA_MAX 196608u
#define Y_MAX 16384u
#define W_MAX 32768u
#include "probe_cases.h"

static int8_t DNN64_ALIGNED(y_rsp[Y_MAX]);
static int8_t DNN64_ALIGNED(y_cpu[Y_MAX]);
static int8_t DNN64_ALIGNED(w_copy[W_MAX + 4u]);

static const int32_t *words(int32_t count, int32_t *store)
{
    int32_t i;
    for (i = 0; i < count; i++)
        store[i] = word();
    return store;
}

int main(void)
{
    static int32_t bias[1024], mult[1024], shift[1024];
    int32_t count, c;

    dnn64_platform_init();
    count = read_cases("rsp_conv_probe: cases asset too big");
    for (c = 0; c < count; c++) {
        dnn64_conv_geom g;
        dnn64_q8_out q;
        int32_t x_zp, has_lut, oc_begin, oc_count, x_bytes, w_bytes, y_count, i, same = 1;
        const int8_t *x, *w;
        char prefix[16] = "rsp";
        g.n = word(), g.c_in = word(), g.h_in = word(), g.w_in = word();
        g.c_out = word(), g.h_out = word(), g.w_out = word();
        g.k_h = word(), g.k_w = word(), g.stride_h = word(), g.stride_w = word();
        g.dil_h = word(), g.dil_w = word(), g.pad_top = word(), g.pad_left = word();
        g.group = word();
        x_zp = word();
        q.out_zero_point = word(), q.act_min = word(), q.act_max = word();
        has_lut = word();
        oc_begin = word(), oc_count = word(), x_bytes = word(), w_bytes = word();
        x = bytes(x_bytes);
        if (w_bytes > (int32_t)W_MAX)
            dnn64_fail("rsp_conv_probe: weights too big");
        w = bytes(w_bytes);
        for (i = 0; i < w_bytes; i++)
            w_copy[(c & 1) * 4 + i] = w[i];
        w = w_copy + (c & 1) * 4;
        q.lut = has_lut ? bytes(256) : 0;
        words(oc_count, bias), words(oc_count, mult), words(oc_count, shift);
        y_count = g.n * g.c_out * g.h_out * g.w_out;
        if (y_count > (int32_t)Y_MAX || oc_count > 1024)
            dnn64_fail("rsp_conv_probe: case too big");
        for (i = 0; i < y_count; i++)
            y_rsp[i] = y_cpu[i] = 0;
        RSP_CONV(&g, x, x_zp, w, bias, mult, shift, oc_begin, oc_count, &q, y_rsp);
        dnn64_conv_s8(&g, x, x_zp, w, bias, mult, shift, oc_begin, oc_count, &q, y_cpu);
        for (i = 0; i < y_count; i++)
            same &= y_rsp[i] == y_cpu[i];
        prefix[3] = (char)('0' + c / 10), prefix[4] = (char)('0' + c % 10), prefix[5] = 0;
        dnn64_print_i8_hex(prefix, y_rsp, (uint32_t)y_count);
        prefix[0] = 's', prefix[1] = 'a', prefix[2] = 'm';
        dnn64_print_u64(prefix, (uint64_t)same);
        if (g.n == 1 && g.h_in == 1 && g.w_in == 1 && g.k_h == 1 && g.k_w == 1 && g.group == 1) {
            for (i = 0; i < y_count; i++)
                y_rsp[i] = 0;
            dnn64_rsp_gemv_s8(g.c_in, g.c_out, x, x_zp, w, bias, mult, shift, oc_begin,
                              oc_count, &q, y_rsp);
            for (i = 0, same = 1; i < y_count; i++)
                same &= y_rsp[i] == y_cpu[i];
            prefix[0] = 'g', prefix[1] = 'e', prefix[2] = 'm', prefix[3] = 'v';
            prefix[4] = (char)('0' + c / 10), prefix[5] = (char)('0' + c % 10), prefix[6] = 0;
            dnn64_print_u64(prefix, (uint64_t)same);
        }
    }
    return 0;
}
