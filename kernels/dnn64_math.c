/* fp32 exp / tanh / sigmoid / log without libm; accuracy documented in dnn64_math.h. */
#include "dnn64_math.h"

#include <stdint.h>

typedef union {
    float f;
    uint32_t u;
} dnn64__fbits;

static float dnn64__pow2i(int32_t k) /* 2^k for k in [-126, 127] */
{
    dnn64__fbits b;
    b.u = (uint32_t)(k + 127) << 23;
    return b.f;
}

float dnn64_expf(float x)
{
    /* ln 2 split so that k * LN2_HI is exact for |k| < 2^11 (Cody-Waite). */
    const float LN2_HI = 0.693145752f;
    const float LN2_LO = 1.42860677e-6f;
    float kf, r, p;
    int32_t k;
    if (x != x)
        return x;
    if (x > 88.7228394f) {
        dnn64__fbits inf;
        inf.u = 0x7f800000u;
        return inf.f;
    }
    if (x < -103.972084f)
        return 0.0f;
    kf = x * 1.44269504f;
    k = (int32_t)(kf >= 0.0f ? kf + 0.5f : kf - 0.5f);
    r = (x - (float)k * LN2_HI) - (float)k * LN2_LO; /* |r| <= 0.347 */
    /* Taylor to r^7: truncation below 1.5e-8 relative on |r| <= 0.347. */
    p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
        r * (8.33333377e-3f + r * (1.38888892e-3f + r * 1.98412701e-4f))))));
    if (k > 127) {
        p *= 2.0f;
        k -= 1;
    } else if (k < -126) {
        p *= 5.42101086e-20f; /* 2^-64, exact */
        k += 64;
    }
    return p * dnn64__pow2i(k);
}

float dnn64_tanhf(float x)
{
    float a = x < 0.0f ? -x : x;
    float t;
    if (x != x)
        return x;
    if (a < 0.5f) {
        /* Taylor series of tanh, odd terms to x^17: error below 1e-9 relative. */
        float z = x * x;
        return x + x * z * (-3.33333343e-1f + z * (1.33333340e-1f + z * (-5.39682545e-2f +
               z * (2.18694881e-2f + z * (-8.86323866e-3f + z * (3.59212984e-3f +
               z * (-1.45583438e-3f + z * 5.90027436e-4f)))))));
    }
    if (a > 9.0f)
        t = 1.0f;
    else
        t = 1.0f - 2.0f / (dnn64_expf(2.0f * a) + 1.0f);
    return x < 0.0f ? -t : t;
}

float dnn64_sigmoidf(float x)
{
    float e;
    if (x >= 0.0f)
        return 1.0f / (1.0f + dnn64_expf(-x));
    e = dnn64_expf(x); /* NaN lands here too and propagates */
    return e / (1.0f + e);
}

/* --- the unary element-wise ops' functions (issue 22) --- */

static float dnn64__nanf(void)
{
    dnn64__fbits b;
    b.u = 0x7fc00000u;
    return b.f;
}

static float dnn64__inff(void)
{
    dnn64__fbits b;
    b.u = 0x7f800000u;
    return b.f;
}

float dnn64_expm1f(float x)
{
    if (x > -0.34657359f && x < 0.34657359f) {
        /* Taylor to x^8: truncation below 2e-9 relative on |x| < ln(2) / 2. */
        return x * (1.0f + x * (0.5f + x * (1.66666672e-1f + x * (4.16666679e-2f +
               x * (8.33333377e-3f + x * (1.38888892e-3f + x * (1.98412701e-4f +
               x * 2.48015876e-5f)))))));
    }
    return dnn64_expf(x) - 1.0f;
}

float dnn64_logf(float x)
{
    const float LN2_HI = 0.693145752f; /* ln 2 split as in dnn64_expf */
    const float LN2_LO = 1.42860677e-6f;
    dnn64__fbits b;
    int32_t e;
    float m, s, z, p;
    if (x != x)
        return x;
    if (x < 0.0f)
        return dnn64__nanf();
    if (x == 0.0f)
        return -dnn64__inff();
    b.f = x;
    if (b.u >= 0x7f800000u)
        return x; /* +inf */
    e = 0;
    if (b.u < 0x00800000u) { /* subnormal: scale by 2^23 first */
        b.f = x * 8388608.0f;
        e = -23;
    }
    e += (int32_t)(b.u >> 23) - 127;
    b.u = (b.u & 0x007fffffu) | 0x3f800000u; /* the mantissa m in [1, 2) */
    m = b.f;
    if (m > 1.41421354f) {
        m *= 0.5f;
        e += 1;
    }
    /* log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: odd series to s^11,
     * truncation below 1e-10 relative. m - 1 is exact (m in [0.707, 1.415]). */
    s = (m - 1.0f) / (m + 1.0f);
    z = s * s;
    p = 2.0f * s * (1.0f + z * (3.33333343e-1f + z * (2.00000003e-1f + z * (1.42857149e-1f +
        z * (1.11111112e-1f + z * 9.09090936e-2f)))));
    return (float)e * LN2_HI + (p + (float)e * LN2_LO);
}

float dnn64_sqrtf(float x)
{
    dnn64__fbits b;
    float y, scale = 1.0f;
    int32_t i;
    if (x != x || x == 0.0f)
        return x; /* NaN, +-0 */
    if (x < 0.0f)
        return dnn64__nanf();
    b.f = x;
    if (b.u >= 0x7f800000u)
        return x; /* +inf */
    if (b.u < 0x00800000u) { /* subnormal: sqrt(x 2^64) 2^-32 */
        x *= 1.84467441e19f;
        scale = 2.32830644e-10f;
        b.f = x;
    }
    /* Halving the exponent bits gives a start within 4%; three Newton steps square the
     * error each time (to below one rounding). */
    b.u = (b.u >> 1) + 0x1fbd1df5u;
    y = b.f;
    for (i = 0; i < 3; ++i)
        y = 0.5f * (y + x / y);
    return y * scale;
}

float dnn64_erff(float x)
{
    float a = x < 0.0f ? -x : x;
    float t, r;
    if (x != x)
        return x;
    if (a < 1.0f) {
        /* Maclaurin series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) to n = 10. */
        const float z = x * x;
        return x * (1.12837917f + z * (-3.76126389e-1f + z * (1.12837917e-1f +
               z * (-2.68661706e-2f + z * (5.22397762e-3f + z * (-8.54832702e-4f +
               z * (1.20553330e-4f + z * (-1.49256504e-5f + z * (1.64621144e-6f +
               z * (-1.63658447e-7f + z * 1.48071928e-8f))))))))));
    }
    if (a >= 4.0f)
        r = 1.0f; /* erfc(4) = 1.5e-8 is below half an ulp of 1 */
    else {
        /* Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7, i.e. relative as erf >= 0.84. */
        t = 1.0f / (1.0f + 0.3275911f * a);
        r = 1.0f - t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
            t * (-1.453152027f + t * 1.061405429f)))) * dnn64_expf(-a * a);
    }
    return x < 0.0f ? -r : r;
}

float dnn64_powf(float x, float e)
{
    const float ae = e < 0.0f ? -e : e;
    if (ae < 16777216.0f && e == (float)(int32_t)e) {
        /* An integer exponent: square and multiply, so negative bases work. */
        int32_t n = (int32_t)ae;
        float r = 1.0f, base = x;
        while (n) {
            if (n & 1)
                r *= base;
            base *= base;
            n >>= 1;
        }
        return e < 0.0f ? 1.0f / r : r;
    }
    if (x != x || e != e)
        return x + e; /* NaN */
    if (e == 0.5f)
        return dnn64_sqrtf(x);
    if (x < 0.0f)
        return dnn64__nanf(); /* a negative base to a non-integer power */
    if (x == 0.0f)
        return e > 0.0f ? 0.0f : dnn64__inff();
    return dnn64_expf(e * dnn64_logf(x));
}
