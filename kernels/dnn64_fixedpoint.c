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

/* A DIV.S takes 29 cycles, so each value is first tried without one, in
 * units of 2^-16 step: Q = fl(x * r16), r16 = fl(1 / scale) * 2^16 (exact
 * when normal). With u = 2^-24, t = x / scale and the reference's fl(t) =
 * t (1 + e3), Q = 2^16 t (1 + e1)(1 + e2), |ei| <= u, so for |Q| <= 255 * 2^16
 * |Q - 2^16 fl(t)| <= 2^16 * 3.001 u * 256 < 4 (tiny values err by far less),
 * and i = trunc(Q) is within 5 of 2^16 fl(t). The reference rounds at the
 * half steps, where 2^16 fl(t) + 2^15 is a multiple of 2^16: when z = i +
 * 2^15 lies at least 8 from every multiple, z and 2^16 fl(t) + 2^15 share
 * their floor by 2^16, which is rint(fl(t)) (no tie, and |fl(t)| < 256 so the
 * reference's clamp at 256 does not act). Otherwise (1 value in 4096 or so),
 * and for NaN, infinities and |Q| > 255 * 2^16, the value takes the division. */
void dnn64_quantize_f32_s8(const float *x, int32_t count, float scale, int32_t zero_point,
                           int8_t *y)
{
    const float r = 1.0f / scale, r16 = r * 65536.0f;
    const int fast = (r > 1.0e-30f && r < 1.0e30f) || (r < -1.0e-30f && r > -1.0e30f);
    int32_t i;
    for (i = 0; i < count; ++i) {
        const float q = x[i] * r16;
        int32_t v;
        if (fast && q <= 16711680.0f && q >= -16711680.0f) { /* 255 * 2^16 */
            const int32_t z = (int32_t)q + 0x8000;
            /* >> of a negative: arithmetic (dnn64__arithmetic_shift) */
            v = (uint32_t)((z & 0xFFFF) - 8) <= 65520u ? z >> 16
                                                       : dnn64__quantize_exact(x[i], scale);
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
