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

float dnn64_logf(float x)
{
    /* x = m * 2^k with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s), s = (m-1)/(m+1). */
    const float LN2_HI = 0.693145752f;
    const float LN2_LO = 1.42860677e-6f;
    dnn64__fbits b;
    float m, s, z;
    int32_t k = 0;
    if (x != x || x < 0.0f) {
        b.u = 0x7fc00000u;
        return b.f;
    }
    b.f = x;
    if ((b.u & 0x7f800000u) == 0x7f800000u)
        return x; /* +inf */
    if (x == 0.0f) {
        b.u = 0xff800000u;
        return b.f;
    }
    if (b.u < 0x00800000u) { /* subnormal: scale into the normal range */
        b.f = x * 8388608.0f; /* 2^23 */
        k = -23;
    }
    k += (int32_t)(b.u >> 23) - 127;
    b.u = (b.u & 0x007fffffu) | 0x3f800000u; /* m in [1, 2) */
    m = b.f;
    if (m > 1.41421356f) {
        m *= 0.5f;
        k += 1;
    }
    s = (m - 1.0f) / (m + 1.0f); /* |s| <= 0.1716 */
    z = s * s;
    /* atanh series to s^11: truncation below 2e-10. */
    m = 2.0f * s + 2.0f * s * z * (3.33333343e-1f + z * (2.00000003e-1f + z * (1.42857149e-1f
        + z * (1.11111112e-1f + z * 9.09090936e-2f))));
    return ((float)k * LN2_HI + m) + (float)k * LN2_LO;
}
