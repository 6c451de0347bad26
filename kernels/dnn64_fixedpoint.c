/* Public fixed-point primitives and the per-element int8 (re)quantization kernels. */
#include "dnn64_internal.h"

int32_t dnn64_srdhm(int32_t a, int32_t b)
{
    return dnn64__srdhm(a, b);
}

int32_t dnn64_rdbp(int32_t x, int32_t exponent)
{
    return dnn64__rdbp(x, exponent);
}

int32_t dnn64_mbqm(int32_t x, int32_t multiplier, int32_t shift)
{
    return dnn64__mbqm(x, multiplier, shift);
}

int8_t dnn64__rq_out_general(const dnn64__rq *r, int32_t acc)
{
    return dnn64__out_s8(acc, r->mult, r->shift, r->q);
}

void dnn64_lut_s8(const int8_t *lut, const int8_t *x, int8_t *y, int32_t count)
{
    int32_t i;
    for (i = 0; i < count; ++i)
        y[i] = lut[x[i] + 128];
}

void dnn64_requantize_s8(const int8_t *x, int32_t count, int32_t x_zero_point, int32_t mult,
                         int32_t shift, int32_t out_zero_point, int8_t *y)
{
    int32_t i;
    for (i = 0; i < count; ++i) {
        int32_t v = dnn64__mbqm(x[i] - x_zero_point, mult, shift);
        y[i] = (int8_t)(dnn64__clamp(v, -128 - out_zero_point, 127 - out_zero_point) +
                        out_zero_point);
    }
}

/* Round half to even of v, |v| <= 256: the truncation and the remainder are exact in fp32. */
static int32_t dnn64__round_half_even(float v)
{
    int32_t i = (int32_t)v;
    float d = v - (float)i;
    if (d > 0.5f || (d == 0.5f && (i & 1)))
        ++i;
    else if (d < -0.5f || (d == -0.5f && (i & 1)))
        --i;
    return i;
}

void dnn64_quantize_f32_s8(const float *x, int32_t count, float scale, int32_t zero_point,
                           int8_t *y)
{
    int32_t i;
    for (i = 0; i < count; ++i) {
        float v = x[i] / scale;
        int32_t q;
        if (v != v)
            v = 0.0f;
        /* Anything beyond +-256 steps saturates after the zero point anyway. */
        v = v > 256.0f ? 256.0f : (v < -256.0f ? -256.0f : v);
        q = dnn64__round_half_even(v) + zero_point;
        y[i] = (int8_t)dnn64__clamp(q, -128, 127);
    }
}

void dnn64_dequantize_s8_f32(const int8_t *x, int32_t count, float scale, int32_t zero_point,
                             float *y)
{
    int32_t i;
    for (i = 0; i < count; ++i)
        y[i] = (float)(x[i] - zero_point) * scale;
}
