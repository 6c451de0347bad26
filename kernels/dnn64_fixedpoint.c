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

/* 1.5 * 2^23: (v + it) - it rounds a |v| < 2^22 to an integer, half to even
 * (the sum's ulp is 1, and the constant is even). */
#define DNN64__RINT_MAGIC 12582912.0f

/* The exact QuantizeLinear of one value: an fp32 division, as the reference. */
static int32_t dnn64__quantize_exact(float x, float scale)
{
    float v = x / scale;
    if (v != v)
        v = 0.0f;
    /* Anything beyond +-256 steps saturates after the zero point anyway. */
    v = v > 256.0f ? 256.0f : (v < -256.0f ? -256.0f : v);
    return dnn64__round_half_even(v);
}

/* A DIV.S takes 29 cycles, so each value is first tried with q = x * (1 /
 * scale). With u = 2^-24 and r = fl(1 / scale) normal, q = t (1 + e1)(1 + e2)
 * and the reference's fl(t) = t (1 + e3) for t = x / scale, |ei| <= u, so
 * |q - fl(t)| <= 3.001 u |t| < |q| 2^-22 (tiny values err by less than
 * 2^-126 absolute, far from any tie). When q lies more than |q| 2^-20 from
 * the nearest half-integer (measured in fp32: q - rint(q) is exact, and the
 * rest errs by far less than the margin), no half-integer lies between q and
 * fl(t), so both round to the same integer; otherwise (and for |q| > 255, NaN,
 * infinities) the value takes the division. */
void dnn64_quantize_f32_s8(const float *x, int32_t count, float scale, int32_t zero_point,
                           int8_t *y)
{
    const float r = 1.0f / scale;
    const int fast = (r > 1.0e-37f && r < 1.0e37f) || (r < -1.0e-37f && r > -1.0e37f);
    int32_t i;
    for (i = 0; i < count; ++i) {
        const float q = x[i] * r;
        int32_t v;
        if (fast && q <= 255.0f && q >= -255.0f) {
            const float n = (q + DNN64__RINT_MAGIC) - DNN64__RINT_MAGIC, d = q - n;
            const float tie = 0.5f - (d < 0.0f ? -d : d), margin = (q < 0.0f ? -q : q) *
                                                                   9.5367431640625e-07f;
            v = tie > margin ? (int32_t)n : dnn64__quantize_exact(x[i], scale);
        } else {
            v = dnn64__quantize_exact(x[i], scale);
        }
        y[i] = (int8_t)dnn64__clamp(v + zero_point, -128, 127);
    }
}

void dnn64_dequantize_s8_f32(const int8_t *x, int32_t count, float scale, int32_t zero_point,
                             float *y)
{
    int32_t i;
    for (i = 0; i < count; ++i)
        y[i] = (float)(x[i] - zero_point) * scale;
}
