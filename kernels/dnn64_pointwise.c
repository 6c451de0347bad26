/*
 * int8 pointwise products: the 1x1 Conv (stride 1, no pad) and the Gemm with
 * a transposed constant B are both y[oc][p] = out(bias[oc] + sum_ic (x[ic][p] -
 * zp) * w[oc][ic]).
 *
 * Shaped by cycle counts in cen64 (tools/bench/bench_cycles.py): the VR4300 has
 * no multiply-add, and after an MFLO the next two instructions must not start
 * a multiply, so a multiply-accumulate costs at least MULT + MFLO + ADDU and a
 * slot. Over a plane (2 pixels or more) two multiply-accumulates share a MULT:
 *
 * With X = x_a + x_b * 2^16 (the raw int8 inputs of channels a, b at a pixel)
 * and W = w_b + w_a * 2^16 (their weights, crossed), X * W = x_a*w_b +
 * (x_a*w_a + x_b*w_b) * 2^16 + x_b*w_a * 2^32, so the low word of the product
 * (MFLO) is L + D * 2^16 modulo 2^32, D the two channels' dot product and L =
 * x_a*w_b. For int8 values L lies in [-16256, 16384] and D in [-32512, 32768],
 * so V = L - 2^15 + D * 2^16 lies in [-2^31 + 2^24, 2^31 - 2^14): the word
 * minus 2^15 is V itself as an int32, and V >> 16 (arithmetic) is
 * floor(V / 2^16) = D - 1, as L - 2^15 lies in [-2^16, 0). A pair of
 * multiply-accumulates then costs MULT, MFLO, ADDIU, SRA, ADDU, with no slot
 * to fill (36 instructions per 8 multiply-accumulates became 49 per 16). The
 * sums start at bias - zp * sum(w) + pairs (the zero point, and the -1 of each
 * pair), so they equal the reference's sum (x - zp) * w + bias (in wrapping
 * int32 arithmetic, exact wherever the reference's int32 sum is).
 * Inputs are packed a strip of pixels at a time (xs[pixel pair][pair][2]),
 * weights per block of 4 output channels for each strip (wp[pair][4]); strips
 * are as even as DNN64__PP_STRIP allows, so the weights are packed as few
 * times as possible (a 7x7 plane once, 14x14 to 56x56 in strips of 49 pixels).
 * A Gemm row (plane 1) takes a plain loop: its weights serve one pixel.
 * Integer sums are exact in any order, so every path gives the same result.
 */
#include "dnn64_internal.h"

#define DNN64__PP_STRIP 50          /* pixels per strip at most (even) */
#define DNN64__PP_KP 32             /* channel pairs per chunk */
#define DNN64__PP_STRIP_BYTES 4096  /* of packed inputs: half the VR4300's D-cache */
#define DNN64__PP_OCG 32   /* over one chunk: output channels whose sums wait on the stack */

static DNN64__ALWAYS_INLINE void dnn64__pp_4x2(const uint32_t *xs, int32_t pairs,
                                                const uint32_t *wp, int32_t acc[4][2])
{
#if defined(__mips__) && !defined(__mips16)
    int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
    int32_t a20 = acc[2][0], a21 = acc[2][1], a30 = acc[3][0], a31 = acc[3][1];
    const uint32_t *end = xs + 2 * pairs;
    if (pairs <= 0)
        return;
    /* X0 $8, X1 $9, W0-W3 $10 $11 $13 $14, product $12. The two instructions
     * after each MFLO (ADDIU, SRA) are not multiplies, as the VR4300 requires. */
    __asm__ volatile(
        ".set push\n\t.set noreorder\n"
        "1:\tlw $8, 0(%[xs])\n\t"
        "lw $9, 4(%[xs])\n\t"
        "lw $10, 0(%[wp])\n\t"
        "lw $11, 4(%[wp])\n\t"
        "mult $8, $10\n\t"
        "lw $13, 8(%[wp])\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a00], %[a00], $12\n\t"
        "mult $9, $10\n\t"
        "lw $14, 12(%[wp])\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a01], %[a01], $12\n\t"
        "mult $8, $11\n\t"
        "addiu %[xs], %[xs], 8\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a10], %[a10], $12\n\t"
        "mult $9, $11\n\t"
        "addiu %[wp], %[wp], 16\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a11], %[a11], $12\n\t"
        "mult $8, $13\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a20], %[a20], $12\n\t"
        "mult $9, $13\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a21], %[a21], $12\n\t"
        "mult $8, $14\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "addu %[a30], %[a30], $12\n\t"
        "mult $9, $14\n\t"
        "mflo $12\n\t"
        "addiu $12, $12, -32768\n\t"
        "sra $12, $12, 16\n\t"
        "bne %[xs], %[end], 1b\n\t"
        "addu %[a31], %[a31], $12\n\t"
        ".set pop"
        : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
          [a20] "+r"(a20), [a21] "+r"(a21), [a30] "+r"(a30), [a31] "+r"(a31), [xs] "+r"(xs),
          [wp] "+r"(wp)
        : [end] "r"(end)
        : "$8", "$9", "$10", "$11", "$12", "$13", "$14", "hi", "lo", "memory");
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
    acc[2][0] = a20, acc[2][1] = a21, acc[3][0] = a30, acc[3][1] = a31;
#else
    int32_t i, j, k;
    for (i = 0; i < pairs; ++i, xs += 2, wp += 4)
        for (j = 0; j < 4; ++j)
            for (k = 0; k < 2; ++k) {
                /* the MULT's low word, then the same shift */
                const uint32_t lo = xs[k] * wp[j];
                acc[j][k] += dnn64__s32(lo - 0x8000u) >> 16;
            }
#endif
}

/* One packed word: a + b * 2^16 as an int32's bits. */
static uint32_t dnn64__pp_word(int32_t a, int32_t b)
{
    return (uint32_t)a + ((uint32_t)b << 16);
}

/* Pixels [p0, p0 + count) of channel pairs [k0, k0 + kp) of x [c_in][plane]
 * as xs[pixel pair][kp][2] words (x_a + x_b * 2^16); a channel past c_in and
 * the pixel after an odd count are 0. */
static void dnn64__pp_fill(const int8_t *x, int32_t c_in, int32_t plane, int32_t p0,
                           int32_t count, int32_t k0, int32_t kp, uint32_t *xs)
{
    /* the pairs with both channels inside c_in */
    const int32_t whole = (c_in >> 1) - k0 < kp ? (c_in >> 1) - k0 : kp;
    int32_t p, i;
    for (p = 0; p < count; ++p) {
        const int8_t *xa = x + 2 * k0 * plane + p0 + p;
        uint32_t *out = xs + (p >> 1) * 2 * kp + (p & 1);
        for (i = 0; i < whole; ++i, xa += 2 * plane, out += 2)
            *out = dnn64__pp_word(xa[0], xa[plane]);
        if (i < kp) /* odd c_in: the last channel alone */
            *out = dnn64__pp_word(xa[0], 0);
    }
    if (count & 1)
        for (i = 0; i < kp; ++i)
            xs[(count >> 1) * 2 * kp + 2 * i + 1] = 0;
}

/* Rows [r0, r0 + 4) of w [rows][c_in], channel pairs [k0, k0 + kp), as
 * wp[kp][4] words (w_b + w_a * 2^16; rows from `rows` on are 0); corr[j]
 * gains kp - zp * (the row's weights in the chunk). */
static void dnn64__pp_pack(const int8_t *w, int32_t c_in, int32_t rows, int32_t r0,
                           int32_t k0, int32_t kp, int32_t zp, uint32_t *wp, uint32_t corr[4])
{
    const int32_t whole = (c_in >> 1) - k0 < kp ? (c_in >> 1) - k0 : kp;
    int32_t j, i;
    for (j = 0; j < 4; ++j) {
        const int8_t *wr = w + (r0 + j) * c_in + 2 * k0;
        uint32_t *out = wp + j;
        int32_t sum = 0;
        if (r0 + j >= rows) {
            for (i = 0; i < kp; ++i)
                wp[4 * i + j] = 0;
            continue;
        }
        for (i = 0; i < whole; ++i, wr += 2, out += 4) {
            const int32_t wa = wr[0], wb = wr[1];
            *out = dnn64__pp_word(wb, wa);
            sum += wa + wb;
        }
        if (i < kp) { /* odd c_in: the last channel alone */
            *out = dnn64__pp_word(0, wr[0]);
            sum += wr[0];
        }
        corr[j] += (uint32_t)kp - (uint32_t)zp * (uint32_t)sum;
    }
}

/* Balanced strips: the pixels per strip (even), at most DNN64__PP_STRIP and
 * DNN64__PP_STRIP_BYTES of kp channel pairs. */
static int32_t dnn64__pp_strip_size(int32_t plane, int32_t kp)
{
    const int32_t fit = (int32_t)(DNN64__PP_STRIP_BYTES / (2 * sizeof(uint32_t))) / kp * 2;
    const int32_t most = fit < DNN64__PP_STRIP ? fit : DNN64__PP_STRIP;
    const int32_t strips = (plane + most - 1) / most;
    const int32_t size = (plane + strips - 1) / strips;
    return size + (size & 1);
}

/* Every output channel at the strip's `count` pixels over all channel pairs
 * (one chunk): the sums of a 4-channel block stay in registers from the bias
 * to the output. y: the first channel's output at the strip's first pixel. */
static void dnn64__pp_strip(const uint32_t *xs, int32_t pairs, int32_t count, const int8_t *w,
                            int32_t c_in, int32_t x_zp, const int32_t *bias, const int32_t *mult,
                            const int32_t *shift, int32_t oc_count, const dnn64_q8_out *q,
                            int32_t plane, int8_t *y, uint32_t *wp)
{
    int32_t t, p, j;
    for (t = 0; t < oc_count; t += 4) {
        const int32_t rows = oc_count - t < 4 ? oc_count - t : 4;
        uint32_t corr[4] = {0, 0, 0, 0};
        dnn64__rq rq[4];
        int32_t b[4];
        dnn64__pp_pack(w, c_in, oc_count, t, 0, pairs, x_zp, wp, corr);
        for (j = 0; j < 4; ++j) {
            /* rows past oc_count: computed with row t's stage, not stored */
            const int32_t r = j < rows ? t + j : t;
            rq[j] = dnn64__rq_of(mult[r], shift[r], q);
            b[j] = dnn64__s32((bias ? (uint32_t)bias[r] : 0u) + corr[j]);
        }
        for (p = 0; p < count; p += 2) {
            int32_t acc[4][2];
            for (j = 0; j < 4; ++j)
                acc[j][0] = acc[j][1] = b[j];
            dnn64__pp_4x2(xs + p * pairs, pairs, wp, acc);
            /* all requantised before any is stored: a store through int8_t *
             * could alias rq, which would then be reloaded for every output */
            for (j = 0; j < 4; ++j) {
                acc[j][0] = dnn64__rq_out(&rq[j], acc[j][0]);
                acc[j][1] = dnn64__rq_out(&rq[j], acc[j][1]);
            }
            if (rows == 4 && p + 1 < count) {
                for (j = 0; j < 4; ++j) {
                    y[(t + j) * plane + p] = (int8_t)acc[j][0];
                    y[(t + j) * plane + p + 1] = (int8_t)acc[j][1];
                }
            } else {
                for (j = 0; j < rows; ++j) {
                    y[(t + j) * plane + p] = (int8_t)acc[j][0];
                    if (p + 1 < count)
                        y[(t + j) * plane + p + 1] = (int8_t)acc[j][1];
                }
            }
        }
    }
}

/* Over DNN64__PP_KP channel pairs: the chunks in turn, the sums of
 * DNN64__PP_OCG output channels x the strip's pixels on the stack between
 * them. */
static void dnn64__pp_chunked(const int8_t *x, int32_t c_in, int32_t plane, int32_t p0,
                              int32_t count, int32_t x_zp, const int8_t *w, const int32_t *bias,
                              const int32_t *mult, const int32_t *shift, int32_t oc_count,
                              const dnn64_q8_out *q, int8_t *y, uint32_t *xs, uint32_t *wp)
{
    uint32_t sums[DNN64__PP_OCG][DNN64__PP_STRIP];
    const int32_t pairs = (c_in + 1) >> 1;
    int32_t g0, gn, k0, kp, j, p, r;
    for (g0 = 0; g0 < oc_count; g0 += gn) {
        gn = oc_count - g0 < DNN64__PP_OCG ? oc_count - g0 : DNN64__PP_OCG;
        for (j = 0; j < gn; ++j) /* an odd count's extra pixel too */
            for (p = 0; p < count + (count & 1); ++p)
                sums[j][p] = bias ? (uint32_t)bias[g0 + j] : 0u;
        for (k0 = 0; k0 < pairs; k0 += kp) {
            kp = pairs - k0 < DNN64__PP_KP ? pairs - k0 : DNN64__PP_KP;
            dnn64__pp_fill(x, c_in, plane, p0, count, k0, kp, xs);
            for (j = 0; j < gn; j += 4) {
                uint32_t corr[4] = {0, 0, 0, 0};
                dnn64__pp_pack(w, c_in, oc_count, g0 + j, k0, kp, x_zp, wp, corr);
                for (p = 0; p < count; p += 2) {
                    int32_t acc[4][2];
                    for (r = 0; r < 4; ++r) {
                        /* rows past the group's end: computed, not kept */
                        const int32_t s = j + r < gn ? j + r : j;
                        acc[r][0] = dnn64__s32(sums[s][p] + corr[r]);
                        acc[r][1] = dnn64__s32(sums[s][p + 1] + corr[r]);
                    }
                    dnn64__pp_4x2(xs + p * kp, kp, wp, acc);
                    for (r = 0; r < 4 && j + r < gn; ++r)
                        sums[j + r][p] = (uint32_t)acc[r][0],
                        sums[j + r][p + 1] = (uint32_t)acc[r][1];
                }
            }
        }
        for (j = 0; j < gn; ++j) {
            const dnn64__rq rq = dnn64__rq_of(mult[g0 + j], shift[g0 + j], q);
            for (p = 0; p < count; ++p)
                sums[j][p] = (uint32_t)dnn64__rq_out(&rq, dnn64__s32(sums[j][p]));
            for (p = 0; p < count; ++p)
                y[(g0 + j) * plane + p0 + p] = (int8_t)sums[j][p];
        }
    }
}

/* The sums over n int16 inputs xs (the zero point subtracted) of 4 output
 * channels (weight rows w, c_in apart), or of 1 with rows == 1. */
static void dnn64__pw_rows(const int16_t *xs, int32_t n, const int8_t *w, int32_t c_in,
                           int32_t rows, int32_t acc[4])
{
    const int8_t *w1 = w + c_in, *w2 = w1 + c_in, *w3 = w2 + c_in;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], ic;
    if (rows == 1) {
        for (ic = 0; ic < n; ++ic)
            a0 += xs[ic] * w[ic];
        acc[0] = a0;
        return;
    }
    for (ic = 0; ic < n; ++ic) {
        const int32_t v = xs[ic];
        a0 += v * w[ic];
        a1 += v * w1[ic];
        a2 += v * w2[ic];
        a3 += v * w3[ic];
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* A Gemm row (plane 1): its weights serve one pixel, so no pairs. The input
 * minus the zero point as int16 on the stack (DNN64__ROW_KC channels at a
 * time), 4 output channels at a time. */
#define DNN64__ROW_KC 2048

static void dnn64__pw_row(const int8_t *x, int32_t c_in, int32_t x_zp, const int8_t *w,
                          const int32_t *bias, const int32_t *mult, const int32_t *shift,
                          int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    int16_t xs[DNN64__ROW_KC];
    int32_t t, k0, kc, j, rows;
    for (t = 0; t < oc_count; t += rows) {
        int32_t acc[4];
        rows = oc_count - t < 4 ? 1 : 4;
        for (j = 0; j < rows; ++j)
            acc[j] = bias ? bias[t + j] : 0;
        for (k0 = 0; k0 < c_in; k0 += kc) {
            kc = c_in - k0 < DNN64__ROW_KC ? c_in - k0 : DNN64__ROW_KC;
            /* one chunk: filled once for every block */
            if (t == 0 || kc < c_in)
                for (j = 0; j < kc; ++j)
                    xs[j] = (int16_t)(x[k0 + j] - x_zp);
            dnn64__pw_rows(xs, kc, w + t * c_in + k0, c_in, rows, acc);
        }
        for (j = 0; j < rows; ++j)
            y[t + j] = dnn64__out_s8(acc[j], mult[t + j], shift[t + j], q);
    }
}

void dnn64__pointwise_s8(const int8_t *x, int32_t c_in, int32_t plane, int32_t x_zp,
                         const int8_t *w, const int32_t *bias, const int32_t *mult,
                         const int32_t *shift, int32_t oc_count, const dnn64_q8_out *q,
                         int8_t *y)
{
    uint32_t xs[DNN64__PP_STRIP_BYTES / sizeof(uint32_t)];
    uint32_t wp[4 * DNN64__PP_KP];
    const int32_t pairs = (c_in + 1) >> 1;
    const int32_t strip = dnn64__pp_strip_size(plane, pairs < DNN64__PP_KP ? pairs : DNN64__PP_KP);
    int32_t p0, count;
    if (plane == 1) {
        dnn64__pw_row(x, c_in, x_zp, w, bias, mult, shift, oc_count, q, y);
        return;
    }
    for (p0 = 0; p0 < plane; p0 += count) {
        count = plane - p0 < strip ? plane - p0 : strip;
        if (pairs > DNN64__PP_KP) {
            dnn64__pp_chunked(x, c_in, plane, p0, count, x_zp, w, bias, mult, shift, oc_count,
                              q, y, xs, wp);
            continue;
        }
        dnn64__pp_fill(x, c_in, plane, p0, count, 0, pairs, xs);
        dnn64__pp_strip(xs, pairs, count, w, c_in, x_zp, bias, mult, shift, oc_count, q, plane,
                        y + p0, wp);
    }
}
