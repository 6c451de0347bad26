/* int8 Gemm of one row through matmul_s8.rsp's jobs (dnn64_rsp_gemv_s8, dnn64_rsp.h;
 * the jobs in dnn64_rsp_matmul.h): a job's one row of A is the input row, its columns of
 * B the weight rows of 8 output channels a block. */
#include "dnn64_internal.h"
#include "dnn64_rsp_internal.h"
#include "dnn64_rsp_matmul.h"

/* Weak: without a platform layer (the kernel unit tests) it runs dnn64_gemm_s8. */
#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_start
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_read

/* B[nb][kk][lane] = b_tile[oc0 + 8 nb + lane][k0 + kk] (0 past the channels or k), and
 * wsum[col] += the column's weights. */
static void pack_columns(int8_t *b0, const job_shape *s, const int8_t *b_tile, int32_t k,
                         int32_t k0, int32_t oc0, int32_t oc_count, int32_t *wsum)
{
    const int32_t kc = s->kgroups * LANES, cols = s->blocks * LANES;
    const int32_t taps = k - k0 < kc ? k - k0 : kc;
    int32_t col, kk;
    for (col = 0; col < cols; ++col) {
        int8_t *dst = b0 + (col >> 3) * kc * LANES + (col & 7);
        const int8_t *src = b_tile + (oc0 + col) * k + k0;
        int32_t sum = 0;
        if (oc0 + col >= oc_count) {
            for (kk = 0; kk < kc; ++kk)
                dst[kk * LANES] = 0;
            continue;
        }
        for (kk = 0; kk < taps; ++kk) {
            dst[kk * LANES] = src[kk];
            sum += src[kk];
        }
        for (; kk < kc; ++kk)
            dst[kk * LANES] = 0;
        wsum[col] += sum;
    }
}

void dnn64_rsp_gemv_s8(int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                       const int8_t *b_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y)
{
    const int32_t kgroups = (k + LANES - 1) / LANES < KGROUPS_MAX ? (k + LANES - 1) / LANES
                                                                 : KGROUPS_MAX;
    const int32_t kc = kgroups * LANES, k_jobs = (k + kc - 1) / kc;
    const int32_t fit = (int32_t)(DNN64_RSP_DMEM_BYTES / 2u) / (kgroups * 64);
    const job_shape s =
        dnn64__rsp_shape_of(1, fit < BLOCKS_MAX ? fit : BLOCKS_MAX, kgroups, 1, 0);
    const int32_t cols = s.blocks * LANES;
    int32_t oc0, kj, col, wsum[COLS_MAX];
    uint8_t *image = dnn64__rsp_images[0];
    if (k > DNN64_RSP_K_MAX || !dnn64_rsp_available || !dnn64_rsp_available()) {
        dnn64_gemm_s8(1, k, n, a, a_zero_point, b_tile, 1, bias_tile, mult_tile, shift_tile,
                      oc_begin, oc_count, q, y);
        return;
    }
    /* V = 2 sum a B; the CPU's output stage */
    dnn64__rsp_put_params(image + s.p, 0, 0, 0, 0);
    for (oc0 = 0; oc0 < oc_count; oc0 += cols) {
        for (col = 0; col < cols; ++col)
            wsum[col] = 0;
        for (kj = 0; kj < k_jobs; ++kj) {
            const int32_t k0 = kj * kc, taps = k - k0 < kc ? k - k0 : kc;
            job_shape sj = s;
            int32_t kk;
            sj.kgroups = (taps + LANES - 1) / LANES;
            dnn64__rsp_put_header(
                image, &sj, sj.kgroups,
                (kj == 0 ? FLAG_FIRST : 0u) | (kj == k_jobs - 1 ? FLAG_LAST : 0u), 0, q);
            for (kk = 0; kk < sj.kgroups * LANES; ++kk) /* the row of A: a's taps */
                ((int8_t *)image)[s.a + (uint32_t)kk] = kk < taps ? a[k0 + kk] : 0;
            pack_columns((int8_t *)image + s.b, &sj, b_tile, k, k0, oc0, oc_count, wsum);
            dnn64_rsp_write(0, image, s.b + (uint32_t)(sj.kgroups * 64 * s.blocks));
            dnn64_rsp_start();
            dnn64_rsp_wait();
        }
        dnn64_rsp_read(dnn64__rsp_result + s.s, s.s, (uint32_t)(s.blocks * STATE_BYTES));
        for (col = 0; col < cols && oc0 + col < oc_count; ++col) {
            const int32_t t = oc0 + col;
            const uint8_t *v = dnn64__rsp_result + s.s +
                               (uint32_t)((col / LANES) * STATE_BYTES + (col % LANES) * 2);
            const uint32_t lo = ((uint32_t)v[0] << 8) | v[1];
            const uint32_t hi = ((uint32_t)v[16] << 8) | v[17];
            const int32_t dot = (int32_t)((hi << 16) | lo) / 2; /* V is even */
            const uint32_t acc = (uint32_t)(bias_tile ? bias_tile[t] : 0) + (uint32_t)dot -
                                 (uint32_t)a_zero_point * (uint32_t)wsum[col];
            y[oc_begin + t] = dnn64__out_s8((int32_t)acc, mult_tile[t], shift_tile[t], q);
        }
    }
}
