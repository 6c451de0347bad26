/* Normalizations of issue 22, fp32: LRN (across channels), LayerNormalization. */
#include "dnn64_kernels.h"
#include "dnn64_math.h"

void dnn64_lrn_f32(int32_t n, int32_t c, int32_t inner, int32_t size, float alpha, float beta,
                   float bias, const float *x, float *y)
{
    const int32_t before = (size - 1) / 2, after = size / 2; /* floor, ceil of (size-1)/2 */
    const float scale = alpha / (float)size;
    int32_t b, ch, j, i;
    for (b = 0; b < n; ++b) {
        const float *xb = x + b * c * inner;
        float *yb = y + b * c * inner;
        for (ch = 0; ch < c; ++ch) {
            const int32_t lo = ch - before < 0 ? 0 : ch - before;
            const int32_t hi = ch + after > c - 1 ? c - 1 : ch + after;
            for (j = 0; j < inner; ++j) {
                float sum = 0.0f;
                for (i = lo; i <= hi; ++i)
                    sum += xb[i * inner + j] * xb[i * inner + j];
                yb[ch * inner + j] = xb[ch * inner + j]
                    * dnn64_expf(-beta * dnn64_logf(bias + scale * sum));
            }
        }
    }
}

void dnn64_layer_norm_f32(int32_t outer, int32_t inner, float epsilon, const float *x,
                          const float *scale, const float *bias, float *y)
{
    int32_t o, i;
    for (o = 0; o < outer; ++o) {
        const float *xs = x + o * inner;
        float *ys = y + o * inner;
        float mean = 0.0f, var = 0.0f, inv;
        for (i = 0; i < inner; ++i)
            mean += xs[i];
        mean /= (float)inner;
        for (i = 0; i < inner; ++i)
            var += (xs[i] - mean) * (xs[i] - mean);
        inv = dnn64_expf(-0.5f * dnn64_logf(var / (float)inner + epsilon));
        for (i = 0; i < inner; ++i)
            ys[i] = (xs[i] - mean) * inv * scale[i] + (bias ? bias[i] : 0.0f);
    }
}
