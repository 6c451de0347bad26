/*
 * int8 pointwise products: the 1x1 Conv (stride 1, no pad) and the Gemm with
 * a transposed constant B are both y[oc][p] = out(bias[oc] + sum_ic (x[ic][p] -
 * zp) * w[oc][ic]).
 *
 * Shaped by cycle counts in cen64 (tools/bench/bench_cycles.py): the VR4300 has
 * no multiply-add, and after an MFLO the next two instructions must not start
 * a multiply, so a multiply-accumulate costs MULT + MFLO + ADDU and gcc pads
 * the hazard with NOPs where its schedule leaves no other instruction.
 * - The input is copied a strip of pixels at a time onto the stack as int16
 *   with the zero point already subtracted (so the sums need no per-channel
 *   correction), pixel pairs interleaved: xs[pair][ic][2]. The inner loop then
 *   reads both pixels of a pair through one pointer.
 * - DNN64__PW_OCB output channels x 2 pixels of sums stay in registers while
 *   the strip and the weights stream past; on MIPS that loop is written in
 *   assembly with the hazard slots filled by the loads and pointer increments
 *   (36 instructions per 8 multiply-accumulates, gcc's schedule of the C
 *   took 43), elsewhere
 *   the same sums in C.
 * Integer sums are exact in any order, so every path gives the same result.
 */
#include "dnn64_internal.h"

#define DNN64__PW_OCB 4             /* output channels per register block */
#define DNN64__PW_STRIP 16          /* pixels per strip at most */
#define DNN64__PW_STRIP_BYTES 4096  /* bytes of the strip (on the stack) */
#define DNN64__PW_KC 64             /* many input channels: channels per chunk */
#define DNN64__PW_OCG 32            /* many input channels: output channels per group */
/* Chunked when a strip would hold fewer pixels than this (over 256 channels):
 * measured in cen64, 160 channels (12-pixel strips) are faster unchunked. */
#define DNN64__PW_CHUNK_BELOW 8

/* The sums of 4 output channels (weight rows w0..w3) at the pixel pair of xs
 * (xs[ic][2]) over ic < c_in, added to acc[channel][pixel]. */
static void dnn64__pw_4x2(const int16_t *xs, int32_t c_in, const int8_t *w0, const int8_t *w1,
                          const int8_t *w2, const int8_t *w3, int32_t acc[4][2])
{
#if defined(__mips__) && !defined(__mips16)
    int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
    int32_t a20 = acc[2][0], a21 = acc[2][1], a30 = acc[3][0], a31 = acc[3][1];
    const int16_t *end = xs + 2 * c_in;
    if (c_in <= 0)
        return;
    /* Every MFLO is followed by two instructions that are not multiplies. The
     * temporaries are fixed registers ($8-$12, clobbered): gcc allows an asm
     * 30 operands, and each "+r" counts twice. */
    __asm__ volatile(
        ".set push\n\t.set noreorder\n"
        "1:\tlh $8, 0(%[xs])\n\t"
        "lh $9, 2(%[xs])\n\t"
        "lb $10, 0(%[w0])\n\t"
        "lb $11, 0(%[w1])\n\t"
        "mult $8, $10\n\t"
        "mflo $12\n\t"
        "addu %[a00], %[a00], $12\n\t"
        "addiu %[xs], %[xs], 4\n\t"
        "mult $9, $10\n\t"
        "mflo $12\n\t"
        "addu %[a01], %[a01], $12\n\t"
        "lb $10, 0(%[w2])\n\t"
        "mult $8, $11\n\t"
        "mflo $12\n\t"
        "addu %[a10], %[a10], $12\n\t"
        "addiu %[w0], %[w0], 1\n\t"
        "mult $9, $11\n\t"
        "mflo $12\n\t"
        "addu %[a11], %[a11], $12\n\t"
        "lb $11, 0(%[w3])\n\t"
        "mult $8, $10\n\t"
        "mflo $12\n\t"
        "addu %[a20], %[a20], $12\n\t"
        "addiu %[w1], %[w1], 1\n\t"
        "mult $9, $10\n\t"
        "mflo $12\n\t"
        "addu %[a21], %[a21], $12\n\t"
        "addiu %[w2], %[w2], 1\n\t"
        "mult $8, $11\n\t"
        "mflo $12\n\t"
        "addu %[a30], %[a30], $12\n\t"
        "addiu %[w3], %[w3], 1\n\t"
        "mult $9, $11\n\t"
        "mflo $12\n\t"
        "bne %[xs], %[end], 1b\n\t"
        "addu %[a31], %[a31], $12\n\t"
        ".set pop"
        : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11),
          [a20] "+r"(a20), [a21] "+r"(a21), [a30] "+r"(a30), [a31] "+r"(a31), [xs] "+r"(xs),
          [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3)
        : [end] "r"(end)
        : "$8", "$9", "$10", "$11", "$12", "hi", "lo", "memory");
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
    acc[2][0] = a20, acc[2][1] = a21, acc[3][0] = a30, acc[3][1] = a31;
#else
    int32_t ic;
    for (ic = 0; ic < c_in; ++ic, xs += 2) {
        const int32_t x0 = xs[0], x1 = xs[1];
        int32_t k = w0[ic];
        acc[0][0] += x0 * k, acc[0][1] += x1 * k;
        k = w1[ic], acc[1][0] += x0 * k, acc[1][1] += x1 * k;
        k = w2[ic], acc[2][0] += x0 * k, acc[2][1] += x1 * k;
        k = w3[ic], acc[3][0] += x0 * k, acc[3][1] += x1 * k;
    }
#endif
}

/* The sum of one output channel (weights w) at one pixel of the strip, whose
 * channels are 2 apart (xs[ic][2]). */
static int32_t dnn64__pw_1x1(const int16_t *xs, int32_t c_in, const int8_t *w)
{
    int32_t ic, sum = 0;
    for (ic = 0; ic < c_in; ++ic)
        sum += xs[2 * ic] * w[ic];
    return sum;
}

/* The sums over n input channels of 4 output channels (weight rows w, `rows`
 * apart) at one pixel of the strip (channels 2 apart), added to acc: each input
 * value loaded once for the 4 (a Gemm row, the odd pixel of a strip). */
static void dnn64__pw_4x1(const int16_t *xs, int32_t n, const int8_t *w, int32_t rows,
                          int32_t acc[4])
{
    const int8_t *w1 = w + rows, *w2 = w1 + rows, *w3 = w2 + rows;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], ic;
    for (ic = 0; ic < n; ++ic) {
        const int32_t v = xs[2 * ic];
        a0 += v * w[ic];
        a1 += v * w1[ic];
        a2 += v * w2[ic];
        a3 += v * w3[ic];
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* Pixel p of the strip xs[pair][ic][2]: its channels are 2 apart from there. */
static const int16_t *dnn64__pw_pixel(const int16_t *xs, int32_t c_in, int32_t p)
{
    return xs + (p >> 1) * 2 * c_in + (p & 1);
}

/* The strip: pixels [p0, p0 + count) of x [c_in][plane] minus zp, as
 * xs[pair][ic][2] (an odd last pixel fills the first half of its pair). */
static void dnn64__pw_fill(const int8_t *x, int32_t c_in, int32_t plane, int32_t zp,
                           int32_t p0, int32_t count, int16_t *xs)
{
    int32_t p, ic;
    for (p = 0; p < count; ++p) {
        const int8_t *xp = x + p0 + p;
        int16_t *out = (int16_t *)dnn64__pw_pixel(xs, c_in, p);
        for (ic = 0; ic < c_in; ++ic, xp += plane, out += 2)
            *out = (int16_t)(*xp - zp);
    }
}

/* Output channels [0, oc_count) at the strip's `count` pixels; y: the first
 * channel's output at the strip's first pixel, channels `plane` apart. */
static void dnn64__pw_strip(const int16_t *xs, int32_t c_in, int32_t count, const int8_t *w,
                            const int32_t *bias, const int32_t *mult, const int32_t *shift,
                            int32_t oc_count, const dnn64_q8_out *q, int32_t plane, int8_t *y)
{
    int32_t t, p, j;
    for (t = 0; t + DNN64__PW_OCB <= oc_count; t += DNN64__PW_OCB) {
        const int8_t *wt = w + t * c_in;
        dnn64__rq rq[DNN64__PW_OCB];
        int32_t b[DNN64__PW_OCB];
        for (j = 0; j < DNN64__PW_OCB; ++j) {
            rq[j] = dnn64__rq_of(mult[t + j], shift[t + j], q);
            b[j] = bias ? bias[t + j] : 0;
        }
        for (p = 0; p + 2 <= count; p += 2) {
            int32_t acc[4][2];
            for (j = 0; j < 4; ++j)
                acc[j][0] = acc[j][1] = b[j];
            dnn64__pw_4x2(xs + p * c_in, c_in, wt, wt + c_in, wt + 2 * c_in, wt + 3 * c_in, acc);
            /* all requantised before any is stored: a store through int8_t *
             * could alias rq, which would then be reloaded for every output */
            for (j = 0; j < 4; ++j) {
                acc[j][0] = dnn64__rq_out(&rq[j], acc[j][0]);
                acc[j][1] = dnn64__rq_out(&rq[j], acc[j][1]);
            }
            for (j = 0; j < 4; ++j) {
                y[(t + j) * plane + p] = (int8_t)acc[j][0];
                y[(t + j) * plane + p + 1] = (int8_t)acc[j][1];
            }
        }
        if (p < count) { /* the odd last pixel */
            int32_t acc[4];
            for (j = 0; j < 4; ++j)
                acc[j] = b[j];
            dnn64__pw_4x1(dnn64__pw_pixel(xs, c_in, p), c_in, wt, c_in, acc);
            for (j = 0; j < 4; ++j)
                acc[j] = dnn64__rq_out(&rq[j], acc[j]);
            for (j = 0; j < 4; ++j)
                y[(t + j) * plane + p] = (int8_t)acc[j];
        }
    }
    for (; t < oc_count; ++t)
        for (p = 0; p < count; ++p)
            y[t * plane + p] = dnn64__out_s8(
                (bias ? bias[t] : 0) + dnn64__pw_1x1(dnn64__pw_pixel(xs, c_in, p), c_in, w + t * c_in),
                mult[t], shift[t], q);
}

/* Many input channels (a strip would hold few pixels): the
 * channels are taken DNN64__PW_KC at a time, the sums of DNN64__PW_OCG output
 * channels x DNN64__PW_STRIP pixels kept on the stack between chunks. So
 * every weight tile line serves DNN64__PW_STRIP pixels per load instead of
 * the 2 that a whole-channel strip would hold (the tile streams through the
 * D-cache once per strip). */
static void dnn64__pw_chunked(const int8_t *x, int32_t c_in, int32_t plane, int32_t x_zp,
                              const int8_t *w, const int32_t *bias, const int32_t *mult,
                              const int32_t *shift, int32_t oc_count, const dnn64_q8_out *q,
                              int8_t *y)
{
    int16_t xs[DNN64__PW_STRIP * DNN64__PW_KC];
    int32_t sums[DNN64__PW_OCG][DNN64__PW_STRIP];
    int32_t p0, count, g0, gn, k0, kc, j, p, r;
    for (p0 = 0; p0 < plane; p0 += count) {
        count = plane - p0 < DNN64__PW_STRIP ? plane - p0 : DNN64__PW_STRIP;
        for (g0 = 0; g0 < oc_count; g0 += gn) {
            gn = oc_count - g0 < DNN64__PW_OCG ? oc_count - g0 : DNN64__PW_OCG;
            for (j = 0; j < gn; ++j)
                for (p = 0; p < count; ++p)
                    sums[j][p] = bias ? bias[g0 + j] : 0;
            for (k0 = 0; k0 < c_in; k0 += kc) {
                kc = c_in - k0 < DNN64__PW_KC ? c_in - k0 : DNN64__PW_KC;
                dnn64__pw_fill(x + k0 * plane, kc, plane, x_zp, p0, count, xs);
                for (j = 0; j + 4 <= gn; j += 4) {
                    const int8_t *wj = w + (g0 + j) * c_in + k0;
                    for (p = 0; p + 2 <= count; p += 2) {
                        int32_t acc[4][2];
                        for (r = 0; r < 4; ++r)
                            acc[r][0] = sums[j + r][p], acc[r][1] = sums[j + r][p + 1];
                        dnn64__pw_4x2(xs + p * kc, kc, wj, wj + c_in, wj + 2 * c_in,
                                      wj + 3 * c_in, acc);
                        for (r = 0; r < 4; ++r)
                            sums[j + r][p] = acc[r][0], sums[j + r][p + 1] = acc[r][1];
                    }
                    if (p < count) { /* the odd last pixel */
                        int32_t acc[4];
                        for (r = 0; r < 4; ++r)
                            acc[r] = sums[j + r][p];
                        dnn64__pw_4x1(dnn64__pw_pixel(xs, kc, p), kc, wj, c_in, acc);
                        for (r = 0; r < 4; ++r)
                            sums[j + r][p] = acc[r];
                    }
                }
                for (; j < gn; ++j)
                    for (p = 0; p < count; ++p)
                        sums[j][p] += dnn64__pw_1x1(dnn64__pw_pixel(xs, kc, p), kc,
                                                    w + (g0 + j) * c_in + k0);
            }
            for (j = 0; j < gn; ++j) {
                const dnn64__rq rq = dnn64__rq_of(mult[g0 + j], shift[g0 + j], q);
                for (p = 0; p < count; ++p)
                    sums[j][p] = dnn64__rq_out(&rq, sums[j][p]);
                for (p = 0; p < count; ++p)
                    y[(g0 + j) * plane + p0 + p] = (int8_t)sums[j][p];
            }
        }
    }
}

void dnn64__pointwise_s8(const int8_t *x, int32_t c_in, int32_t plane, int32_t x_zp,
                         const int8_t *w, const int32_t *bias, const int32_t *mult,
                         const int32_t *shift, int32_t oc_count, const dnn64_q8_out *q,
                         int8_t *y)
{
    int16_t xs[DNN64__PW_STRIP_BYTES / sizeof(int16_t)];
    /* whole pairs: an odd last pixel takes a pair's room */
    int32_t strip = (int32_t)(DNN64__PW_STRIP_BYTES / sizeof(int16_t)) / (2 * c_in) * 2;
    int32_t p0, count;
    if (strip < DNN64__PW_CHUNK_BELOW && plane > strip) {
        dnn64__pw_chunked(x, c_in, plane, x_zp, w, bias, mult, shift, oc_count, q, y);
        return;
    }
    if (strip > DNN64__PW_STRIP)
        strip = DNN64__PW_STRIP;
    for (p0 = 0; p0 < plane; p0 += count) {
        count = plane - p0 < strip ? plane - p0 : strip;
        dnn64__pw_fill(x, c_in, plane, x_zp, p0, count, xs);
        dnn64__pw_strip(xs, c_in, count, w, bias, mult, shift, oc_count, q, plane, y + p0);
    }
}
