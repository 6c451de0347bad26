/* Fixed-point primitives, the per-element int8 (re)quantization kernels, the int8 sum. */
#include "dnn64_internal.h"
#include "platform/dnn64_platform.h"

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
    /* Four a pass, all four loaded before any store (y may be x): gcc -O2 does not unroll,
     * and the byte loop paid its loop test and a load-use stall per byte. */
    const int8_t *const t = lut + 128;
    int32_t i;
    for (i = 0; i + 4 <= count; i += 4) {
        const int8_t a = t[x[i]], b = t[x[i + 1]], c = t[x[i + 2]], d = t[x[i + 3]];
        y[i] = a;
        y[i + 1] = b;
        y[i + 2] = c;
        y[i + 3] = d;
    }
    for (; i < count; ++i)
        y[i] = t[x[i]];
}

/* Words a 16-bit field of the sum below can take: two bytes of at most 255 each a word. */
#define DNN64__SUM_WORDS 128

int32_t dnn64__sum_s8(const int8_t *x, int32_t n)
{
    int32_t sum = 0, i = 0;
    while (i < n && ((uintptr_t)(x + i) & 3u) != 0)
        sum += x[i++];
    while (n - i >= 8) {
        /* x ^ 0x80 is x + 128 as an unsigned byte; the bytes of a word go pairwise into the
         * two 16-bit fields of acc, each at most 2 * 255 a word: 128 words stay below 2^16. */
        const int32_t pairs = (n - i) / 8 < DNN64__SUM_WORDS / 2 ? (n - i) / 8
                                                                 : DNN64__SUM_WORDS / 2;
        const uint32_t *w = (const uint32_t *)(x + i);
        uint32_t acc = 0;
        int32_t k;
        for (k = 0; k < pairs; ++k, w += 2) {
            const uint32_t u = w[0] ^ 0x80808080u, v = w[1] ^ 0x80808080u;
            acc += (u & 0x00FF00FFu) + ((u >> 8) & 0x00FF00FFu) + (v & 0x00FF00FFu) +
                   ((v >> 8) & 0x00FF00FFu);
        }
        sum += (int32_t)((acc & 0xFFFFu) + (acc >> 16)) - 1024 * pairs;
        i += 8 * pairs;
    }
    while (i < n)
        sum += x[i++];
    return sum;
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

/* The bits of an fp32 value (C99 reads a union member other than the last written as
 * the same bytes). */
static uint32_t dnn64__f32_bits(float f)
{
    union {
        float f;
        uint32_t u;
    } b;
    b.f = f;
    return b.u;
}

/* A DIV.S takes 29 cycles, so each value is first rounded without one, to 2^-12 step,
 * by the FPU's own rounding: with r = fl(1 / scale) (normal), q = fl(x r) and C = 1.5 *
 * 2^11, fl(q + C) lies in [2^11, 2^12), whose ulp is 2^-12, whenever |q| < 2^10, so its
 * bits minus C's are z = 2^12 q rounded to the nearest integer (ties to even: the FPU's
 * default mode, FCSR RM = 0 on the N64). With u = 2^-24, t = x / scale and the
 * reference's fl(t) = t (1 + e3), q = t (1 + e1)(1 + e2), |ei| <= u, so for |z| <= 2^21
 * (|t| < 513) |z - 2^12 fl(t)| <= 1/2 + 2^12 * 513 * 3.001 u < 0.88 (a q flushed to zero
 * errs by less than 2^-126). The reference rounds at the half steps, where 2^12 fl(t) +
 * 2^11 is a multiple of 2^12: when w = z + 2^11 is not a multiple, 2^12 fl(t) + 2^11,
 * within 1 of w, lies strictly between the same two multiples, so w's floor by 2^12 is
 * rint(fl(t)) (no tie); beyond 256 steps the reference's clamp at 256 and ours at the
 * int8 range give the same saturated output. Otherwise (1 value in 4096),
 * for NaN, infinities (whose bits lie far outside +-2^21 from C's, as do those of any
 * negative sum) and for |z| > 2^21, the value takes the division. The result of the
 * rounding step, w >> 12 in [-512, 512], picks its output (the zero point added,
 * saturated) from a table.
 *
 * Four values a pass share one test, with no branch between them (so the compiler fills
 * the FPU's and mfc1's delay slots with the other values' work). For each,
 * v = z + 2^21 + 2^11 (the bits of the sum less a constant) and m = (v mod 2^12) - 1
 * (0xFFFFFFFF at a half step, as v mod 2^12 = w mod 2^12): v | m <= 0x400FFF (unsigned)
 * holds only if m <= 0x400FFF, so no half step, and v <= 0x400FFF, so
 * -2^21 - 2^11 <= z < 2^21 + 2^11 (|t| < 514 steps: |z - 2^12 fl(t)| < 1/2 + 2^12 * 514 *
 * 3.001 u < 0.88 still), where v >> 12 = (w >> 12) + 512 lies in [0, 1024]: the table's
 * index as it is. The OR of the four is at most 0x400FFF only if each one is; otherwise
 * the four take the one-value path above. */
#define DNN64__Q_MAGIC_BITS 0x45400000u /* 3072.0f = 1.5 * 2^11 */
#define DNN64__Q_FOUR_MAX 0x400FFFu   /* the four's v | m */

/* One value; out: the outputs of steps -DNN64__Q_STEPS .. DNN64__Q_STEPS. */
static DNN64__ALWAYS_INLINE int8_t dnn64__quantize_one(float x, float r, float scale,
                                                       int32_t zero_point, const int8_t *out)
{
    const uint32_t z = dnn64__f32_bits(x * r + 3072.0f) - DNN64__Q_MAGIC_BITS;
    const uint32_t w = z + 0x800u;
    /* >> of a negative: arithmetic (dnn64__arithmetic_shift) */
    if (z + 0x200000u <= 0x400000u && (w & 0xFFFu) != 0)
        return out[(dnn64__s32(w) >> 12) + DNN64__Q_STEPS];
    return (int8_t)dnn64__clamp(dnn64__quantize_exact(x, scale) + zero_point, -128, 127);
}

/* v of one value (above), its v | m folded into *test. */
static DNN64__ALWAYS_INLINE uint32_t dnn64__quantize_v(float x, float r, uint32_t *test)
{
    const uint32_t v = dnn64__f32_bits(x * r + 3072.0f) - (DNN64__Q_MAGIC_BITS - 0x200800u);
    *test |= v | ((v & 0xFFFu) - 1u);
    return v;
}

/* y[0 .. count) of x[0 .. count) by the fast path four at a time (out: the table above). */
static void dnn64__quantize_run(const float *x, int32_t count, float r, float scale,
                                int32_t zero_point, const int8_t *out, int8_t *y)
{
    int32_t i;
    for (i = 0; i + 3 < count; i += 4) {
        uint32_t test = 0;
        const uint32_t v0 = dnn64__quantize_v(x[i], r, &test);
        const uint32_t v1 = dnn64__quantize_v(x[i + 1], r, &test);
        const uint32_t v2 = dnn64__quantize_v(x[i + 2], r, &test);
        const uint32_t v3 = dnn64__quantize_v(x[i + 3], r, &test);
        if (test <= DNN64__Q_FOUR_MAX) {
            y[i] = out[v0 >> 12];
            y[i + 1] = out[v1 >> 12];
            y[i + 2] = out[v2 >> 12];
            y[i + 3] = out[v3 >> 12];
        } else {
            int32_t j;
            for (j = i; j < i + 4; ++j)
                y[j] = dnn64__quantize_one(x[j], r, scale, zero_point, out);
        }
    }
    for (; i < count; ++i)
        y[i] = dnn64__quantize_one(x[i], r, scale, zero_point, out);
}

#pragma weak dnn64_dcache_claim

/* Outputs a block: the D-cache lines of y taken before each block (dnn64_dcache_claim, on
 * the platforms that have it: no read of RDRAM for lines every byte of which is written
 * next), few enough that the inputs read meanwhile rarely evict them. */
#define DNN64__Q_BLOCK 256

void dnn64__quantizer_init(dnn64__quantizer *q, float scale, int32_t zero_point)
{
    const float r = 1.0f / scale;
    int32_t i;
    q->scale = scale;
    q->r = r;
    q->zero_point = zero_point;
    q->fast = (r > 1.0e-30f && r < 1.0e30f) || (r < -1.0e-30f && r > -1.0e30f);
    for (i = -DNN64__Q_STEPS; i <= DNN64__Q_STEPS; ++i)
        q->out[i + DNN64__Q_STEPS] = (int8_t)dnn64__clamp(i + zero_point, -128, 127);
}

void dnn64__quantize_piece(const dnn64__quantizer *q, const float *x, int32_t count, int8_t *y)
{
    int32_t i = 0;
    if (!q->fast) {
        for (; i < count; ++i)
            y[i] = (int8_t)dnn64__clamp(dnn64__quantize_exact(x[i], q->scale) + q->zero_point,
                                        -128, 127);
        return;
    }
    if (dnn64_dcache_claim) {
        for (; i + DNN64__Q_BLOCK <= count; i += DNN64__Q_BLOCK) {
            dnn64_dcache_claim(y + i, DNN64__Q_BLOCK); /* the lines wholly inside */
            dnn64__quantize_run(x + i, DNN64__Q_BLOCK, q->r, q->scale, q->zero_point, q->out,
                                y + i);
        }
    }
    dnn64__quantize_run(x + i, count - i, q->r, q->scale, q->zero_point, q->out, y + i);
}

void dnn64_quantize_f32_s8(const float *x, int32_t count, float scale, int32_t zero_point,
                           int8_t *y)
{
    dnn64__quantizer q;
    dnn64__quantizer_init(&q, scale, zero_point);
    dnn64__quantize_piece(&q, x, count, y);
}

void dnn64_dequantize_s8_f32(const int8_t *x, int32_t count, float scale, int32_t zero_point,
                             float *y)
{
    int32_t i;
    for (i = 0; i < count; ++i)
        y[i] = (float)(x[i] - zero_point) * scale;
}
