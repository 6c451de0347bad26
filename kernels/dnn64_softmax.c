/* Softmax along one axis, fp32 (own expf) and integer-only int8 (exp table); fp32
 * LogSoftmax. */
#include "dnn64_internal.h"
#include "dnn64_math.h"

void dnn64_softmax_f32(int32_t outer, int32_t axis_len, int32_t inner, const float *x, float *y)
{
    int32_t o, j, i;
    for (o = 0; o < outer; ++o) {
        for (j = 0; j < inner; ++j) {
            const float *xs = x + o * axis_len * inner + j;
            float *ys = y + o * axis_len * inner + j;
            float mx = xs[0], sum = 0.0f, inv;
            for (i = 1; i < axis_len; ++i)
                mx = xs[i * inner] > mx ? xs[i * inner] : mx;
            for (i = 0; i < axis_len; ++i) {
                const float e = dnn64_expf(xs[i * inner] - mx);
                ys[i * inner] = e;
                sum += e;
            }
            inv = 1.0f / sum;
            for (i = 0; i < axis_len; ++i)
                ys[i * inner] *= inv;
        }
    }
}

void dnn64_log_softmax_f32(int32_t outer, int32_t axis_len, int32_t inner, const float *x,
                           float *y)
{
    int32_t o, j, i;
    for (o = 0; o < outer; ++o) {
        for (j = 0; j < inner; ++j) {
            const float *xs = x + o * axis_len * inner + j;
            float *ys = y + o * axis_len * inner + j;
            float mx = xs[0], sum = 0.0f, shift;
            for (i = 1; i < axis_len; ++i)
                mx = xs[i * inner] > mx ? xs[i * inner] : mx;
            for (i = 0; i < axis_len; ++i)
                sum += dnn64_expf(xs[i * inner] - mx);
            shift = mx + dnn64_logf(sum);
            for (i = 0; i < axis_len; ++i)
                ys[i * inner] = xs[i * inner] - shift;
        }
    }
}

void dnn64_softmax_s8(int32_t outer, int32_t axis_len, int32_t inner, const int8_t *x,
                      const int32_t *exp_table, int32_t mult, int32_t shift,
                      int32_t out_zero_point, int8_t *y)
{
    int32_t o, j, i;
    for (o = 0; o < outer; ++o) {
        for (j = 0; j < inner; ++j) {
            const int8_t *xs = x + o * axis_len * inner + j;
            int8_t *ys = y + o * axis_len * inner + j;
            int32_t mx = xs[0], sum = 0;
            for (i = 1; i < axis_len; ++i)
                mx = xs[i * inner] > mx ? xs[i * inner] : mx;
            for (i = 0; i < axis_len; ++i)
                sum += exp_table[mx - xs[i * inner]];
            for (i = 0; i < axis_len; ++i) {
                const int32_t e = exp_table[mx - xs[i * inner]];
                const int32_t prob = (e * 16384 + sum / 2) / sum; /* Q14, half up */
                const int32_t v = dnn64__mbqm(prob, mult, shift);
                ys[i * inner] = (int8_t)(dnn64__clamp(v, -128 - out_zero_point,
                                                      127 - out_zero_point) + out_zero_point);
            }
        }
    }
}
