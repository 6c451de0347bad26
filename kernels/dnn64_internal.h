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

/* For a loop body specialised by a constant argument at each call: gcc does
 * not inline a large static function called twice on its own. Elsewhere a
 * plain inline (still correct, perhaps slower). */
#if defined(__GNUC__)
#define DNN64__ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define DNN64__ALWAYS_INLINE inline
#endif

#define DNN64__INT32_MIN (-2147483647 - 1)
#define DNN64__INT32_MAX 2147483647

/* The int32 of the same bits (C99 leaves the plain conversion of values above
 * INT32_MAX implementation-defined; gcc compiles this to nothing). */
static inline int32_t dnn64__s32(uint32_t v)
{
    return v > (uint32_t)DNN64__INT32_MAX ? -(int32_t)(~v) - 1 : (int32_t)v;
}

/* floor((a * b + nudge) / 2^31) for any int32 a, b whose result fits int32
 * (all but a == b == INT32_MIN). Computed on the product's two 32-bit words
 * (the nudge carries from the low into the high word): one MULT, no 64-bit
 * additions or shifts, which cost several instructions each on a 32-bit ABI. */
static inline int32_t dnn64__mul_floor31(int32_t a, int32_t b, uint32_t nudge)
{
#if defined(__mips__) && !defined(__mips16)
    /* One MULT: where a requantisation is unrolled, gcc builds the signed
     * 64-bit product from a MULTU and two sign-correcting MULTs. In a
     * function with an asm statement gcc leaves hazards to the assembler. */
    uint32_t p_lo, p_hi;
    __asm__("mult %2, %3\n\tmflo %0\n\tmfhi %1" : "=r"(p_lo), "=r"(p_hi) : "r"(a), "r"(b)
            : "hi", "lo");
#else
    const int64_t p = (int64_t)a * (int64_t)b;
    const uint32_t p_lo = (uint32_t)p, p_hi = (uint32_t)((uint64_t)p >> 32);
#endif
    const uint32_t lo = p_lo + nudge;
    const uint32_t hi = p_hi + (lo < p_lo ? 1u : 0u);
    return dnn64__s32((hi << 1) | (lo >> 31));
}

/* dnn64__srdhm for all but a == b == INT32_MIN (where it saturates).
 * gemmlowp nudges a*b by +2^30 (>= 0) or 1 - 2^30 (< 0) and truncates toward
 * zero: for either sign that is floor((a*b + 2^30) / 2^31). */
static inline int32_t dnn64__srdhm_unsat(int32_t a, int32_t b)
{
    return dnn64__mul_floor31(a, b, 0x40000000u);
}

static inline int32_t dnn64__srdhm(int32_t a, int32_t b)
{
    if (a == DNN64__INT32_MIN && b == DNN64__INT32_MIN)
        return DNN64__INT32_MAX;
    return dnn64__srdhm_unsat(a, b);
}

/* floor(x / 2^e) without right-shifting a negative value (implementation-defined
 * in C99) and without a branch: for x < 0 it is ~(~x >> e). */
static inline int32_t dnn64__floor_shift(int32_t x, int32_t e)
{
    const uint32_t sign = 0u - ((uint32_t)x >> 31);
    return dnn64__s32((((uint32_t)x ^ sign) >> e) ^ sign);
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

/* dnn64__rq_out relies on >> of a negative int32 being an arithmetic shift
 * (implementation-defined in C99; gcc and clang document it so). */
typedef char dnn64__arithmetic_shift[(-5 >> 1) == -3 ? 1 : -1];

/* dnn64__out_s8 of one output channel, with the work that does not depend on
 * the sum done once (dnn64__rq_of): per output one MULT, a rounding shift, the
 * clamp and the LUT. A positive shift (a left shift, rare) and the multiplier
 * INT32_MIN (the one case srdhm saturates) take dnn64__out_s8 itself. */
typedef struct {
    int32_t general; /* nonzero: use dnn64__out_s8(acc, mult, shift, q) */
    int32_t mult, shift;
    int32_t exp, mask, half; /* -shift, 2^exp - 1, mask >> 1 */
    int32_t lo, hi, zp;      /* clamp bounds before the zero point, zero point */
    const int8_t *lut;
    const dnn64_q8_out *q;
} dnn64__rq;

static inline dnn64__rq dnn64__rq_of(int32_t mult, int32_t shift, const dnn64_q8_out *q)
{
    dnn64__rq r;
    r.general = shift > 0 || mult == DNN64__INT32_MIN;
    r.mult = mult;
    r.shift = shift;
    r.exp = shift > 0 ? 0 : -shift;
    r.mask = (int32_t)(((uint32_t)1 << r.exp) - 1u);
    r.half = r.mask >> 1;
    r.zp = q->out_zero_point;
    r.lo = q->act_min - r.zp;
    r.hi = q->act_max - r.zp;
    r.lut = q->lut;
    r.q = q;
    return r;
}

/* dnn64__out_s8 for a dnn64__rq, out of line (dnn64_fixedpoint.c): the rare
 * general case stays out of the unrolled loops' code. */
int8_t dnn64__rq_out_general(const dnn64__rq *r, int32_t acc);

static DNN64__ALWAYS_INLINE int8_t dnn64__rq_out(const dnn64__rq *r, int32_t acc)
{
    int32_t s, v;
    if (r->general)
        return dnn64__rq_out_general(r, acc);
    /* dnn64__rdbp(dnn64__srdhm(acc, mult), exp) with the per-channel parts ready */
    s = dnn64__srdhm_unsat(acc, r->mult);
    /* s >> exp: floor, as the compilers the kernels build with shift signed values
     * arithmetically (checked by dnn64__arithmetic_shift below); one SRAV instead
     * of dnn64__floor_shift's four instructions, per output. */
    v = (s >> r->exp) + ((s & r->mask) > r->half + (s < 0 ? 1 : 0) ? 1 : 0);
    v = (v < r->lo ? r->lo : (v > r->hi ? r->hi : v)) + r->zp;
    return r->lut ? r->lut[v + 128] : (int8_t)v;
}

/* y[t][p] = out(bias[t] + sum_ic (x[ic][p] - x_zp) * w[t][ic]) for t < oc_count,
 * p < plane: an int8 1x1 Conv of one image and group, or a Gemm row (plane 1).
 * x [c_in][plane]; w [oc_count][c_in]; bias NULL or oc_count, mult and shift
 * oc_count int32 (as dnn64_conv_s8); y [oc_count][plane]. Defined in
 * dnn64_pointwise.c; uses 4 KiB of stack. */
void dnn64__pointwise_s8(const int8_t *x, int32_t c_in, int32_t plane, int32_t x_zp,
                         const int8_t *w, const int32_t *bias, const int32_t *mult,
                         const int32_t *shift, int32_t oc_count, const dnn64_q8_out *q,
                         int8_t *y);

/* The sum of n int8 values (n >= 0, any alignment), four a word where x is
 * word-aligned. Defined in dnn64_fixedpoint.c, the int8 primitives. */
int32_t dnn64__sum_s8(const int8_t *x, int32_t n);

/* TFLite's average: total / count rounded half away from zero (the int8 pools). */
static inline int32_t dnn64__div_round(int32_t total, int32_t count)
{
    return total > 0 ? (total + count / 2) / count : (total - count / 2) / count;
}

/* The int8 output of a GlobalAveragePool plane from its sum of n values (the CPU's and the
 * RSP's pools). */
static inline int8_t dnn64__gap_out_s8(int32_t sum, int32_t n, int32_t act_min, int32_t act_max)
{
    return (int8_t)dnn64__clamp(dnn64__div_round(sum, n), act_min, act_max);
}

/* The int8 output of a ReduceMean from its sum of n values (the CPU's and the RSP's). */
static inline int8_t dnn64__reduce_mean_out_s8(int32_t sum, int32_t n, int32_t x_zero_point,
                                               int32_t mult, int32_t shift,
                                               int32_t out_zero_point)
{
    const int32_t v = dnn64__mbqm(sum - n * x_zero_point, mult, shift);
    return (int8_t)(dnn64__clamp(v, -128 - out_zero_point, 127 - out_zero_point) +
                    out_zero_point);
}

/* rows x cols of the plane x (h_in x w_in) starting at (-top, -left), the places
 * outside it filled with `fill`, into out[rows][cols] (dnn64_conv.c; the RSP Conv's
 * padded channels too). */
void dnn64__pad_plane(const int8_t *x, int32_t h_in, int32_t w_in, int32_t top,
                      int32_t left, int32_t rows, int32_t cols, int8_t fill, int8_t *out);

/* One fp32 activation; act may be NULL. Defined in dnn64_activation.c. */
float dnn64__act_f32(const dnn64_act_f32 *act, float v);

/* One axis of the window of output o (Conv, MaxPool, AveragePool): it starts
 * at input index `start` (may be negative); tap k reads input start + k * dil,
 * and the taps k in [lo, hi) are those inside [0, size). lo <= hi <= k. */
typedef struct {
    int32_t start, lo, hi;
} dnn64__window;

static inline dnn64__window dnn64__window_at(int32_t o, int32_t stride, int32_t pad,
                                             int32_t dil, int32_t k, int32_t size)
{
    dnn64__window w;
    int32_t hi = k;
    w.start = o * stride - pad;
    /* dil == 1 without dividing: a DIV takes 37 cycles on the VR4300 */
    w.lo = w.start >= 0 ? 0 : (dil == 1 ? -w.start : (-w.start + dil - 1) / dil);
    if (w.start > size - 1)
        hi = 0;
    else if (w.start + (k - 1) * dil > size - 1)
        hi = (dil == 1 ? size - 1 - w.start : (size - 1 - w.start) / dil) + 1;
    if (w.lo > k)
        w.lo = k;
    w.hi = hi < w.lo ? w.lo : hi;
    return w;
}

/* The row (oy) and column (ox) windows for a dnn64_conv_geom or a
 * dnn64_pool_geom, which name these fields alike. */
#define DNN64__WINDOW_Y(g, oy) \
    dnn64__window_at((oy), (g)->stride_h, (g)->pad_top, (g)->dil_h, (g)->k_h, (g)->h_in)
#define DNN64__WINDOW_X(g, ox) \
    dnn64__window_at((ox), (g)->stride_w, (g)->pad_left, (g)->dil_w, (g)->k_w, (g)->w_in)

/* Where output channel oc_begin + t of batch image n (Conv, ConvTranspose)
 * reads and writes, as element offsets, the same for every element type. */
typedef struct {
    int32_t x; /* into x: the first input plane of the channel's group */
    int32_t w; /* into w_tile: the channel's c_in/group * k_h * k_w weights */
    int32_t y; /* into y: the channel's output plane */
} dnn64__conv_chan;

static inline dnn64__conv_chan dnn64__conv_chan_at(const dnn64_conv_geom *g, int32_t n,
                                                   int32_t oc_begin, int32_t t)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group, oc = oc_begin + t;
    dnn64__conv_chan c;
    c.x = (n * g->c_in + (oc / ocpg) * icpg) * (g->h_in * g->w_in);
    c.w = t * icpg * (g->k_h * g->k_w);
    c.y = (n * g->c_out + oc) * g->h_out * g->w_out;
    return c;
}

/* A QuantizeLinear's constants, built once for a tensor quantized in pieces (the RSP
 * stem quantizes its input band by band); dnn64_quantize_f32_s8 is init + one piece
 * (dnn64_fixedpoint.c, where the exactness argument is). */
#define DNN64__Q_STEPS 512 /* |w >> 12| on the fast path */
typedef struct {
    float scale, r; /* r = 1 / scale */
    int32_t zero_point, fast; /* fast: r is a normal float, the table path applies */
    int8_t out[2 * DNN64__Q_STEPS + 1]; /* the outputs of steps -DNN64__Q_STEPS .. */
} dnn64__quantizer;
void dnn64__quantizer_init(dnn64__quantizer *q, float scale, int32_t zero_point);
void dnn64__quantize_piece(const dnn64__quantizer *q, const float *x, int32_t count, int8_t *y);

#endif /* DNN64_INTERNAL_H */
