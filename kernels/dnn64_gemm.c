/* Gemm (constant B, output-column tiles) and MatMul of two activations, fp32 and int8. */
#include "dnn64_internal.h"

void dnn64_gemm_f32(int32_t m, int32_t k, int32_t n, const float *a, const float *b_tile,
                    int32_t trans_b, const float *bias_tile, int32_t oc_begin, int32_t oc_count,
                    const dnn64_act_f32 *act, float *y)
{
    /* B element (kk, t) of the tile: [oc_count, k] when transposed, else [k, oc_count]. */
    const int32_t sk = trans_b ? 1 : oc_count, st = trans_b ? k : 1;
    int32_t i, t, kk;
    for (i = 0; i < m; ++i) {
        const float *ar = a + i * k;
        for (t = 0; t < oc_count; ++t) {
            const float *bc = b_tile + t * st;
            float acc = bias_tile ? bias_tile[t] : 0.0f;
            for (kk = 0; kk < k; ++kk)
                acc += ar[kk] * bc[kk * sk];
            y[i * n + oc_begin + t] = dnn64__act_f32(act, acc);
        }
    }
}

void dnn64_gemm_s8(int32_t m, int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                   const int8_t *b_tile, int32_t trans_b, const int32_t *bias_tile,
                   const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                   int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    const int32_t sk = trans_b ? 1 : oc_count, st = trans_b ? k : 1;
    int32_t i, t, kk;
    if (trans_b) {
        /* each row is a 1x1 Conv of one pixel */
        for (i = 0; i < m; ++i)
            dnn64__pointwise_s8(a + i * k, k, 1, a_zero_point, b_tile, bias_tile, mult_tile,
                                shift_tile, oc_count, q, y + i * n + oc_begin);
        return;
    }
    for (i = 0; i < m; ++i) {
        const int8_t *ar = a + i * k;
        for (t = 0; t < oc_count; ++t) {
            const int8_t *bc = b_tile + t * st;
            int32_t acc = bias_tile ? bias_tile[t] : 0;
            for (kk = 0; kk < k; ++kk)
                acc += (ar[kk] - a_zero_point) * bc[kk * sk];
            y[i * n + oc_begin + t] = dnn64__out_s8(acc, mult_tile[t], shift_tile[t], q);
        }
    }
}

void dnn64_matmul_f32(int32_t batch, int32_t m, int32_t k, int32_t n, const float *a,
                      int32_t a_batch_stride, const float *b, int32_t b_batch_stride, float *y)
{
    int32_t bi, i, j, kk;
    for (bi = 0; bi < batch; ++bi) {
        const float *ab = a + bi * a_batch_stride;
        const float *bb = b + bi * b_batch_stride;
        float *yb = y + bi * m * n;
        for (i = 0; i < m; ++i)
            for (j = 0; j < n; ++j) {
                float acc = 0.0f;
                for (kk = 0; kk < k; ++kk)
                    acc += ab[i * k + kk] * bb[kk * n + j];
                yb[i * n + j] = acc;
            }
    }
}

void dnn64_matmul_s8(int32_t batch, int32_t m, int32_t k, int32_t n, const int8_t *a,
                     int32_t a_batch_stride, int32_t a_zero_point, const int8_t *b,
                     int32_t b_batch_stride, int32_t b_zero_point, int32_t multiplier,
                     int32_t shift, const dnn64_q8_out *q, int8_t *y)
{
    int32_t bi, i, j, kk;
    for (bi = 0; bi < batch; ++bi) {
        const int8_t *ab = a + bi * a_batch_stride;
        const int8_t *bb = b + bi * b_batch_stride;
        int8_t *yb = y + bi * m * n;
        for (i = 0; i < m; ++i)
            for (j = 0; j < n; ++j) {
                int32_t acc = 0;
                for (kk = 0; kk < k; ++kk)
                    acc += (ab[i * k + kk] - a_zero_point) * (bb[kk * n + j] - b_zero_point);
                yb[i * n + j] = dnn64__out_s8(acc, multiplier, shift, q);
            }
    }
}
