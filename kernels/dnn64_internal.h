/*
 * dnn64_internal.h - helpers shared by the kernel sources; not part of the API.
 *
 * The fixed-point helpers are the inline twins of dnn64_srdhm/rdbp/mbqm
 * (dnn64_kernels.h); their definition is dnn64build/quant/intmath.py. Only
 * 32x32->64 multiplies are used (no 64-bit division or shifts of negative
 * values), so nothing calls into libgcc on a 32-bit MIPS target.
 */
#ifndef DNN64_INTERNAL_H
#define DNN64_INTERNAL_H

#include <stdint.h>

#include "dnn64_kernels.h"

#define DNN64__INT32_MIN (-2147483647 - 1)
#define DNN64__INT32_MAX 2147483647

static inline int32_t dnn64__srdhm(int32_t a, int32_t b)
{
    int64_t ab, nudged;
    if (a == DNN64__INT32_MIN && b == DNN64__INT32_MIN)
        return DNN64__INT32_MAX;
    ab = (int64_t)a * (int64_t)b;
    nudged = ab >= 0 ? ab + (1 << 30) : ab + (1 - (1 << 30));
    /* C division by 2^31, truncating toward zero, without shifting a negative */
    return (int32_t)(nudged >= 0 ? nudged >> 31 : -((-nudged) >> 31));
}

/* floor(x / 2^e) without right-shifting a negative value (implementation-defined in C99). */
static inline int32_t dnn64__floor_shift(int32_t x, int32_t e)
{
    return x >= 0 ? x >> e : ~((~x) >> e);
}

static inline int32_t dnn64__rdbp(int32_t x, int32_t exponent)
{
    int32_t mask = (int32_t)(((uint32_t)1 << exponent) - 1u);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return dnn64__floor_shift(x, exponent) + (remainder > threshold ? 1 : 0);
}

static inline int32_t dnn64__mbqm(int32_t x, int32_t multiplier, int32_t shift)
{
    if (shift > 0) {
        int32_t limit = (int32_t)(0x7fffffffu >> shift);
        if (x > limit)
            x = DNN64__INT32_MAX;
        else if (x < -limit - 1)
            x = DNN64__INT32_MIN;
        else
            x = x * (int32_t)((uint32_t)1 << shift);
        return dnn64__srdhm(x, multiplier);
    }
    return dnn64__rdbp(dnn64__srdhm(x, multiplier), -shift);
}

static inline int32_t dnn64__clamp(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The int8 output stage: requantize, add the zero point, clamp, optional LUT.
 * Clamping before adding the zero point keeps the sum inside int32. */
static inline int8_t dnn64__out_s8(int32_t acc, int32_t mult, int32_t shift,
                                   const dnn64_q8_out *q)
{
    int32_t zp = q->out_zero_point;
    int32_t v = dnn64__clamp(dnn64__mbqm(acc, mult, shift), q->act_min - zp, q->act_max - zp) + zp;
    return q->lut ? q->lut[v + 128] : (int8_t)v;
}

/* One fp32 activation; act may be NULL. Defined in dnn64_activation.c. */
float dnn64__act_f32(const dnn64_act_f32 *act, float v);

/* Taps k in [*lo, *hi) of a k-tap window starting at `start` with dilation
 * `dil` that fall inside [0, size). *lo <= *hi. */
static inline void dnn64__tap_range(int32_t start, int32_t dil, int32_t k, int32_t size,
                                    int32_t *lo, int32_t *hi)
{
    int32_t a = 0, b = k;
    if (start < 0)
        a = (-start + dil - 1) / dil;
    if (start > size - 1)
        b = 0;
    else if (start + (k - 1) * dil > size - 1)
        b = (size - 1 - start) / dil + 1;
    if (a > k)
        a = k;
    *lo = a;
    *hi = b < a ? a : b;
}

#endif /* DNN64_INTERNAL_H */
