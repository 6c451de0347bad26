/* rsp_gemv_probe.c - runs dnn64_rsp_gemv_dma_s8 and dnn64_gemm_s8 (m = 1) on the cases
 * of the "cases" asset (tests/emulator/test_rsp_gemv_dma.py writes it and checks every
 * output against the numpy integer reference).
 *
 * Asset: big-endian int32 words: the case count, then per case k, n, oc_begin,
 * oc_count, a_zero_point, out_zero_point, act_min, act_max; a (k int8), the tile in
 * blocks of 8 channels tap after tap (dnn64_rsp_gemv_dma_s8's layout, ceil(oc_count / 8)
 * x 8 x k int8) and its weight rows (oc_count x k int8, dnn64_gemm_s8's), each padded to
 * 4 bytes; bias, mult, shift (oc_count int32 each). Prints per case
 *   gemv<i> <first index> <hex>...   the RSP kernel's y (n int8; 0 outside the tile)
 *   sam<i> <1 if dnn64_gemm_s8 wrote the same y, else 0>
 *   fit<i> <1 if dnn64_rsp_gemv_dma_fits takes it> */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

#define DATA_MAX 524288u
#define N_MAX 2048u
#include "probe_cases.h"

static int8_t DNN64_ALIGNED(w_aligned[DATA_MAX]); /* as the weight staging places them */
static int8_t DNN64_ALIGNED(y_rsp[N_MAX]);
static int8_t DNN64_ALIGNED(y_cpu[N_MAX]);
static int32_t bias[N_MAX], mult[N_MAX], shift[N_MAX];

int main(void)
{
    int32_t count, c;
    dnn64_platform_init();
    count = read_cases("rsp_gemv_probe: cases asset too big");
    for (c = 0; c < count; c++) {
        dnn64_q8_out q;
        const int32_t k = word(), n = word(), oc_begin = word(), oc_count = word();
        const int32_t a_zp = word();
        const int8_t *a, *blocks, *w;
        int32_t i, same = 1;
        char prefix[8] = "gemv";
        q.out_zero_point = word(), q.act_min = word(), q.act_max = word(), q.lut = 0;
        a = bytes(k);
        blocks = bytes((oc_count + 7) / 8 * 8 * k);
        w = bytes(oc_count * k);
        for (i = 0; i < oc_count; i++)
            bias[i] = word();
        for (i = 0; i < oc_count; i++)
            mult[i] = word();
        for (i = 0; i < oc_count; i++)
            shift[i] = word();
        if (n > (int32_t)N_MAX)
            dnn64_fail("rsp_gemv_probe: case too big");
        for (i = 0; i < (oc_count + 7) / 8 * 8 * k; i++)
            w_aligned[i] = blocks[i];
        for (i = 0; i < n; i++)
            y_rsp[i] = y_cpu[i] = 0;
        dnn64_rsp_gemv_dma_s8(k, n, a, a_zp, w_aligned, bias, mult, shift, oc_begin, oc_count,
                              &q, y_rsp);
        dnn64_gemm_s8(1, k, n, a, a_zp, w, 1, bias, mult, shift, oc_begin, oc_count, &q,
                      y_cpu);
        for (i = 0; i < n; i++)
            same &= y_rsp[i] == y_cpu[i];
        prefix[4] = (char)('0' + c / 10), prefix[5] = (char)('0' + c % 10), prefix[6] = 0;
        dnn64_print_i8_hex(prefix, y_rsp, (uint32_t)n);
        prefix[0] = 's', prefix[1] = 'a', prefix[2] = 'm';
        prefix[3] = (char)('0' + c / 10), prefix[4] = (char)('0' + c % 10), prefix[5] = 0;
        dnn64_print_u64(prefix, (uint64_t)same);
        prefix[0] = 'f', prefix[1] = 'i', prefix[2] = 't';
        dnn64_print_u64(prefix, (uint64_t)dnn64_rsp_gemv_dma_fits(k, w_aligned));
    }
    return 0;
}
