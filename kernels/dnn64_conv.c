/*
 * Conv, fp32 and int8, on an output-channel tile, NCHW.
 *
 * Shaped by cycle counts in cen64 (tools/bench/bench_cycles.py): on the VR4300
 * loads and D-cache misses cost more than the multiplies (8 KiB, direct-mapped,
 * 16-byte lines: the planes of different channels often map to the same
 * lines), and there is no multiply-add.
 * - 1x1 (stride 1, no pad, any group): fp32 copies the input DNN64__STRIP
 *   pixels at a time into a pixel-major strip on the stack; DNN64__OCB_F32
 *   output channels x DNN64__PXB_F32 pixels of sums then stay in registers
 *   while the strip and the weights stream past. int8: dnn64_pointwise.c.
 * - any other kernel: the outputs of a row whose windows lie inside the input
 *   are summed DNN64__ROW at a time on the stack, one input channel at a time
 *   (only that channel's rows are live in the cache), without bounds checks
 *   (3x3 undilated unrolled, its weights in registers); the border outputs go
 *   through the generic window loop (pads, strides, dilations, groups).
 * - int8 with few input channels per group (depthwise, a stem's 3) and a 3x3
 *   or 5x5 kernel: DNN64__DWB outputs of a row at a time in registers over all
 *   their channels; a depthwise plane whose border outputs would cost more
 *   than a copy is first copied onto the stack padded with the zero point, so
 *   that all its outputs take that loop.
 * fp32 adds the same products in the same order everywhere (bias, then input
 * channel, ky, kx ascending), so all its paths agree bit for bit. int8 sums
 * are exact in any order; inside the input the zero point is folded out:
 * sum (x - zp) w = sum x w - zp sum w.
 */
#include "dnn64_internal.h"

/* fp32 1x1 register blocks: few sums, as the FPU has 16 registers for singles
 * with FR=0; DNN64__PXB pixels when x is read in place */
#define DNN64__OCB_F32 4
#define DNN64__PXB_F32 1
#define DNN64__PXB 2
#define DNN64__STRIP_MIN_F32 8 /* fp32 1x1: below, x read in place */
#define DNN64__ROW 64           /* kxk: outputs of a row summed at a time */
#define DNN64__DWB 4            /* int8, few input channels: outputs per register block */
#define DNN64__FEW_IC 4         /* int8 3x3: at most this many input channels per group */
#define DNN64__STRIP 16         /* 1x1: pixels per strip read pixel-major */
#define DNN64__STRIP_BYTES 2048 /* 1x1: bytes of the strip (on the stack) */
#define DNN64__PADDED_BYTES 16384 /* int8 depthwise: a padded input plane (on the stack) */

/* Unroll the register block's loops fully, so that its sums live in registers
 * (gcc -O2 alone keeps them in a stack array). */
#if defined(__GNUC__)
#define DNN64__UNROLL _Pragma("GCC unroll 8")
#else
#define DNN64__UNROLL
#endif

/* The output range [lo, hi) of one axis whose windows lie wholly inside [0, size). */
typedef struct {
    int32_t lo, hi;
} dnn64__span;

static dnn64__span dnn64__inner_span(int32_t stride, int32_t pad, int32_t dil, int32_t k,
                                     int32_t size, int32_t out)
{
    dnn64__span r;
    const int32_t last = size - 1 + pad - (k - 1) * dil; /* largest o * stride allowed */
    /* ceil(pad / stride), and 0 for a negative pad (a region's sub-problem, see
     * dnn64_region.c, starts inside the tensor): division truncates toward zero. */
    r.lo = pad > 0 ? (pad + stride - 1) / stride : 0;
    r.hi = last < 0 ? 0 : last / stride + 1;
    if (r.hi > out)
        r.hi = out;
    if (r.lo > r.hi)
        r.lo = r.hi;
    return r;
}

#define DNN64__SPAN_Y(g) \
    dnn64__inner_span((g)->stride_h, (g)->pad_top, (g)->dil_h, (g)->k_h, (g)->h_in, (g)->h_out)
#define DNN64__SPAN_X(g) \
    dnn64__inner_span((g)->stride_w, (g)->pad_left, (g)->dil_w, (g)->k_w, (g)->w_in, (g)->w_out)

static int dnn64__is_1x1(const dnn64_conv_geom *g)
{
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
           g->pad_top == 0 && g->pad_left == 0 && g->h_out == g->h_in && g->w_out == g->w_in;
}

/* ---- fp32 ---- */

/* The sum of output (oy, ox) over its taps inside the input, from `acc`. */
static float dnn64__border_f32(const dnn64_conv_geom *g, const float *xg, const float *wt,
                               int32_t icpg, int32_t oy, int32_t ox, float acc)
{
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    const dnn64__window wy = DNN64__WINDOW_Y(g, oy), wx = DNN64__WINDOW_X(g, ox);
    int32_t ic, ky, kx;
    for (ic = 0; ic < icpg; ++ic) {
        const float *xp = xg + ic * in_plane;
        const float *wk = wt + ic * ksize;
        for (ky = wy.lo; ky < wy.hi; ++ky) {
            const float *xr = xp + (wy.start + ky * g->dil_h) * g->w_in;
            const float *wr = wk + ky * g->k_w;
            for (kx = wx.lo; kx < wx.hi; ++kx)
                acc += xr[wx.start + kx * g->dil_w] * wr[kx];
        }
    }
    return acc;
}

/* `count` outputs of one row whose windows lie inside the input, as
 * dnn64__inner_row_s8: sums on the stack, one input channel at a time (each
 * sum still gets bias, then input channel, ky, kx ascending). */
static void dnn64__inner_row_f32(const dnn64_conv_geom *g, const float *x0, const float *wt,
                                 int32_t icpg, int32_t count, float bias,
                                 const dnn64_act_f32 *act, float *y)
{
    const int32_t in_plane = g->h_in * g->w_in, ksize = g->k_h * g->k_w, w_in = g->w_in;
    const int32_t stride = g->stride_w;
    const int k3 = g->k_h == 3 && g->k_w == 3 && g->dil_h == 1 && g->dil_w == 1;
    float acc[DNN64__ROW];
    int32_t c0, len, i, ic, ky, kx;
    for (c0 = 0; c0 < count; c0 += len) {
        len = count - c0 < DNN64__ROW ? count - c0 : DNN64__ROW;
        for (i = 0; i < len; ++i)
            acc[i] = bias;
        for (ic = 0; ic < icpg; ++ic) {
            const float *xc = x0 + ic * in_plane + c0 * stride, *w = wt + ic * ksize;
            if (k3) {
                const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5],
                            w6 = w[6], w7 = w[7], w8 = w[8];
                for (i = 0; i < len; ++i, xc += stride) {
                    const float *r1 = xc + w_in, *r2 = r1 + w_in;
                    float a = acc[i];
                    a += xc[0] * w0;
                    a += xc[1] * w1;
                    a += xc[2] * w2;
                    a += r1[0] * w3;
                    a += r1[1] * w4;
                    a += r1[2] * w5;
                    a += r2[0] * w6;
                    a += r2[1] * w7;
                    a += r2[2] * w8;
                    acc[i] = a;
                }
                continue;
            }
            for (i = 0; i < len; ++i, xc += stride) {
                float a = acc[i];
                for (ky = 0; ky < g->k_h; ++ky) {
                    const float *xr = xc + ky * g->dil_h * w_in, *wr = w + ky * g->k_w;
                    for (kx = 0; kx < g->k_w; ++kx)
                        a += xr[kx * g->dil_w] * wr[kx];
                }
                acc[i] = a;
            }
        }
        for (i = 0; i < len; ++i)
            y[c0 + i] = dnn64__act_f32(act, acc[i]);
    }
}

static void dnn64__conv_generic_f32(const dnn64_conv_geom *g, const float *x,
                                    const float *w_tile, const float *b_tile, int32_t oc_begin,
                                    int32_t oc_count, const dnn64_act_f32 *act, float *y)
{
    const int32_t icpg = g->c_in / g->group;
    const dnn64__span sy = DNN64__SPAN_Y(g), sx = DNN64__SPAN_X(g);
    int32_t n, t, oy, ox;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const float *xg = x + c.x, *wt = w_tile + c.w;
            const float bias = b_tile ? b_tile[t] : 0.0f;
            for (oy = 0; oy < g->h_out; ++oy) {
                float *yr = y + c.y + oy * g->w_out;
                const int inner_row = oy >= sy.lo && oy < sy.hi;
                const int32_t first = inner_row ? sx.lo : g->w_out;
                for (ox = 0; ox < first; ++ox)
                    yr[ox] = dnn64__act_f32(act, dnn64__border_f32(g, xg, wt, icpg, oy, ox, bias));
                if (!inner_row)
                    continue;
                dnn64__inner_row_f32(g,
                                     xg + (oy * g->stride_h - g->pad_top) * g->w_in +
                                         sx.lo * g->stride_w - g->pad_left,
                                     wt, icpg, sx.hi - sx.lo, bias, act, yr + sx.lo);
                for (ox = sx.hi; ox < g->w_out; ++ox)
                    yr[ox] = dnn64__act_f32(act, dnn64__border_f32(g, xg, wt, icpg, oy, ox, bias));
            }
        }
    }
}

/* 1x1 fp32 on `ocb` output channels (weights w[ocb][c_in], bias b or NULL)
 * x `pxb` pixels (constants once inlined), the sums in registers: bias first,
 * then input channel ascending. Input channel ic of pixel r is
 * x[r * xr + ic * xc]; y: the first channel's output at the first pixel,
 * channels `plane` apart. */
static DNN64__ALWAYS_INLINE void dnn64__pw_block_f32(const float *x, int32_t xr, int32_t xc,
                                                     int32_t c_in, const float *w,
                                                     const float *b, int ocb, int pxb,
                                                     const dnn64_act_f32 *act, int32_t plane,
                                                     float *y)
{
    float acc[DNN64__OCB_F32][DNN64__PXB];
    int32_t ic;
    int j, r;
    DNN64__UNROLL
    for (j = 0; j < ocb; ++j)
        DNN64__UNROLL
        for (r = 0; r < pxb; ++r)
            acc[j][r] = b ? b[j] : 0.0f;
    for (ic = 0; ic < c_in; ++ic, x += xc) {
        float xv[DNN64__PXB];
        DNN64__UNROLL
        for (r = 0; r < pxb; ++r)
            xv[r] = x[r * xr];
        DNN64__UNROLL
        for (j = 0; j < ocb; ++j) {
            const float wv = w[j * c_in + ic];
            DNN64__UNROLL
            for (r = 0; r < pxb; ++r)
                acc[j][r] += xv[r] * wv;
        }
    }
    DNN64__UNROLL
    for (j = 0; j < ocb; ++j)
        DNN64__UNROLL
        for (r = 0; r < pxb; ++r)
            y[j * plane + r] = dnn64__act_f32(act, acc[j][r]);
}

/* Output channels [t, t + ocb) at `count` pixels of the strip xs[count][c_in]. */
static DNN64__ALWAYS_INLINE void dnn64__pw_strip_f32(const float *xs, int32_t count,
                                                     int32_t c_in, const float *w,
                                                     const float *b, int ocb,
                                                     const dnn64_act_f32 *act, int32_t plane,
                                                     float *y)
{
    int32_t p;
    for (p = 0; p + DNN64__PXB_F32 <= count; p += DNN64__PXB_F32)
        dnn64__pw_block_f32(xs + p * c_in, c_in, 1, c_in, w, b, ocb, DNN64__PXB_F32, act,
                            plane, y + p);
    for (; p < count; ++p)
        dnn64__pw_block_f32(xs + p * c_in, c_in, 1, c_in, w, b, ocb, 1, act, plane, y + p);
}

/* 1x1 fp32 with x read in place (channels `plane` apart), DNN64__PXB
 * neighbouring pixels at a time: they share D-cache lines. Measured in cen64,
 * cheaper than strips of fewer than DNN64__STRIP_MIN_F32 pixels. */
static DNN64__ALWAYS_INLINE void dnn64__pw_in_place_f32(const float *xn, int32_t c_in,
                                                        int32_t plane, const float *w,
                                                        const float *b, int ocb,
                                                        const dnn64_act_f32 *act, float *y)
{
    int32_t p;
    for (p = 0; p + DNN64__PXB <= plane; p += DNN64__PXB)
        dnn64__pw_block_f32(xn + p, 1, plane, c_in, w, b, ocb, DNN64__PXB, act, plane, y + p);
    for (; p < plane; ++p)
        dnn64__pw_block_f32(xn + p, 1, plane, c_in, w, b, ocb, 1, act, plane, y + p);
}

/* 1x1 fp32 of one image and one group, read in pixel-major strips as the
 * int8 version below: x [c_in][plane], w [oc_count][c_in], b NULL or
 * [oc_count], y [oc_count][plane]. */
static void dnn64__pw_f32(const float *xn, int32_t c_in, int32_t plane, const float *w_tile,
                          const float *b_tile, int32_t oc_count, const dnn64_act_f32 *act,
                          float *yn)
{
    float xs[DNN64__STRIP_BYTES / sizeof(float)];
    int32_t strip = (int32_t)(DNN64__STRIP_BYTES / sizeof(float)) / c_in;
    int32_t t, p0, count, ic, p;
    int ocb;
    if (strip > DNN64__STRIP)
        strip = DNN64__STRIP;
    if (strip < DNN64__STRIP_MIN_F32) {
        for (t = 0; t < oc_count; t += ocb) {
            const float *w = w_tile + t * c_in, *b = b_tile ? b_tile + t : 0;
            ocb = oc_count - t >= DNN64__OCB_F32 ? DNN64__OCB_F32 : 1;
            if (ocb == DNN64__OCB_F32)
                dnn64__pw_in_place_f32(xn, c_in, plane, w, b, DNN64__OCB_F32, act,
                                       yn + t * plane);
            else
                dnn64__pw_in_place_f32(xn, c_in, plane, w, b, 1, act, yn + t * plane);
        }
        return;
    }
    for (p0 = 0; p0 < plane; p0 += count) {
        count = plane - p0 < strip ? plane - p0 : strip;
        for (ic = 0; ic < c_in; ++ic)
            for (p = 0; p < count; ++p)
                xs[p * c_in + ic] = xn[ic * plane + p0 + p];
        for (t = 0; t < oc_count; t += ocb) {
            const float *w = w_tile + t * c_in, *b = b_tile ? b_tile + t : 0;
            float *yt = yn + t * plane + p0;
            ocb = oc_count - t >= DNN64__OCB_F32 ? DNN64__OCB_F32 : 1;
            if (ocb == DNN64__OCB_F32)
                dnn64__pw_strip_f32(xs, count, c_in, w, b, DNN64__OCB_F32, act, plane, yt);
            else
                dnn64__pw_strip_f32(xs, count, c_in, w, b, 1, act, plane, yt);
        }
    }
}

/* 1x1, stride 1, no pad, any group: per image, the tile's run of channels in
 * each group. */
static void dnn64__conv_1x1_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                                const float *b_tile, int32_t oc_begin, int32_t oc_count,
                                const dnn64_act_f32 *act, float *y)
{
    const int32_t plane = g->h_in * g->w_in, icpg = g->c_in / g->group;
    const int32_t ocpg = g->c_out / g->group;
    int32_t n, t, run;
    for (n = 0; n < g->n; ++n)
        for (t = 0; t < oc_count; t += run) {
            const int32_t oc = oc_begin + t, gi = oc / ocpg;
            run = (gi + 1) * ocpg - oc < oc_count - t ? (gi + 1) * ocpg - oc : oc_count - t;
            dnn64__pw_f32(x + (n * g->c_in + gi * icpg) * plane, icpg, plane, w_tile + t * icpg,
                          b_tile ? b_tile + t : 0, run, act, y + (n * g->c_out + oc) * plane);
        }
}

void dnn64_conv_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                    const float *b_tile, int32_t oc_begin, int32_t oc_count,
                    const dnn64_act_f32 *act, float *y)
{
    if (dnn64__is_1x1(g))
        dnn64__conv_1x1_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y);
    else
        dnn64__conv_generic_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y);
}

/* ---- int8 ---- */

/* bias + sum (x - zp) w over the taps of output (oy, ox) inside the input. */
static int32_t dnn64__border_s8(const dnn64_conv_geom *g, const int8_t *xg, int32_t x_zp,
                                const int8_t *wt, int32_t icpg, int32_t oy, int32_t ox,
                                int32_t acc)
{
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    const dnn64__window wy = DNN64__WINDOW_Y(g, oy), wx = DNN64__WINDOW_X(g, ox);
    int32_t ic, ky, kx;
    for (ic = 0; ic < icpg; ++ic) {
        const int8_t *xp = xg + ic * in_plane;
        const int8_t *wk = wt + ic * ksize;
        for (ky = wy.lo; ky < wy.hi; ++ky) {
            const int8_t *xr = xp + (wy.start + ky * g->dil_h) * g->w_in;
            const int8_t *wr = wk + ky * g->k_w;
            for (kx = wx.lo; kx < wx.hi; ++kx)
                acc += (xr[wx.start + kx * g->dil_w] - x_zp) * wr[kx];
        }
    }
    return acc;
}

/* Few input channels (depthwise, or a stem's 3): `count` outputs of a row whose
 * windows lie inside the input, DNN64__DWB at a time with their sums in
 * registers over all icpg channels, so each weight is loaded once per
 * DNN64__DWB outputs and each sum is requantised straight from its register.
 * x0: the first window's top-left input of the first channel, channels
 * `in_plane` apart; w: [icpg][k_h][k_w]; base: bias - zp * sum of the weights.
 * The geometry comes as arguments so that the callers below make it constant. */
static DNN64__ALWAYS_INLINE void dnn64__few_block(const int8_t *x0, const int8_t *w, int nb,
                                                 int32_t icpg, int32_t in_plane, int32_t base,
                                                 int32_t s, int32_t k, int32_t row,
                                                 const dnn64__rq *rq, int8_t *y)
{
    int32_t a[DNN64__DWB];
    int32_t ic, ky, kx;
    int r;
    DNN64__UNROLL
    for (r = 0; r < nb; ++r)
        a[r] = base;
    for (ic = 0; ic < icpg; ++ic, x0 += in_plane) {
        const int8_t *xr = x0;
        for (ky = 0; ky < k; ++ky, xr += row, w += k) {
            DNN64__UNROLL
            for (kx = 0; kx < k; ++kx) {
                const int32_t wv = w[kx];
                DNN64__UNROLL
                for (r = 0; r < nb; ++r)
                    a[r] += xr[kx + r * s] * wv;
            }
        }
    }
    /* all requantised before any is stored: a store through int8_t * could
     * alias *rq, which would then be reloaded for every output */
    DNN64__UNROLL
    for (r = 0; r < nb; ++r)
        a[r] = dnn64__rq_out(rq, a[r]);
    DNN64__UNROLL
    for (r = 0; r < nb; ++r)
        y[r] = (int8_t)a[r];
}

static DNN64__ALWAYS_INLINE void dnn64__few_row_body(const int8_t *x0, const int8_t *w,
                                                    int32_t count, int32_t icpg,
                                                    int32_t in_plane, int32_t base, int32_t s,
                                                    int32_t k, int32_t row,
                                                    const dnn64__rq *rq, int8_t *y)
{
    /* The outputs go to y a run at a time from the stack: a store into y
     * between the loads could evict (direct-mapped D-cache) an input line
     * that the next block reads again. */
    int8_t out[DNN64__ROW];
    int32_t c0, len, i;
    for (c0 = 0; c0 < count; c0 += len, x0 += len * s) {
        len = count - c0 < DNN64__ROW ? count - c0 : DNN64__ROW;
        for (i = 0; i + DNN64__DWB <= len; i += DNN64__DWB)
            dnn64__few_block(x0 + i * s, w, DNN64__DWB, icpg, in_plane, base, s, k, row, rq,
                             out + i);
        for (; i < len; ++i)
            dnn64__few_block(x0 + i * s, w, 1, icpg, in_plane, base, s, k, row, rq, out + i);
        for (i = 0; i < len; ++i)
            y[c0 + i] = out[i];
    }
}

/* Whether dnn64__few_row_s8 takes this geometry: square 3x3 or 5x5 kernels,
 * undilated, stride 1 or 2, one input channel per group, or up to
 * DNN64__FEW_IC with a 3x3 kernel (whose k_h rows of every channel stay in the
 * D-cache together). */
static int dnn64__few_row_fits(const dnn64_conv_geom *g, int32_t icpg)
{
    return g->dil_h == 1 && g->dil_w == 1 && g->k_h == g->k_w &&
           (g->stride_w == 1 || g->stride_w == 2) &&
           ((icpg == 1 && (g->k_w == 3 || g->k_w == 5)) || (icpg <= DNN64__FEW_IC && g->k_w == 3));
}

/* dnn64__few_row_body with the geometry constant. */
static void dnn64__few_row_s8(const dnn64_conv_geom *g, const int8_t *x0, const int8_t *w,
                              int32_t icpg, int32_t count, int32_t base, const dnn64__rq *rq,
                              int8_t *y)
{
    const int32_t row = g->w_in, in_plane = g->h_in * g->w_in, s1 = g->stride_w == 1;
    if (icpg > 1) {
        if (s1)
            dnn64__few_row_body(x0, w, count, icpg, in_plane, base, 1, 3, row, rq, y);
        else
            dnn64__few_row_body(x0, w, count, icpg, in_plane, base, 2, 3, row, rq, y);
    } else if (g->k_w == 3) {
        if (s1)
            dnn64__few_row_body(x0, w, count, 1, 0, base, 1, 3, row, rq, y);
        else
            dnn64__few_row_body(x0, w, count, 1, 0, base, 2, 3, row, rq, y);
    } else {
        if (s1)
            dnn64__few_row_body(x0, w, count, 1, 0, base, 1, 5, row, rq, y);
        else
            dnn64__few_row_body(x0, w, count, 1, 0, base, 2, 5, row, rq, y);
    }
}

/* `count` outputs of one row whose windows lie inside the input, sums in
 * int32 on the stack DNN64__ROW at a time: one input channel at a time, so
 * that only that channel's k_h input rows are live in the direct-mapped
 * D-cache (the planes of different channels often map to the same lines).
 * x0: the first window's top-left input of the group's first channel, the
 * windows `stride_w` apart; base: bias - zp * sum of the weights (the zero
 * point folded out). 3x3 undilated is unrolled, its weights in registers;
 * 5x5 undilated unrolled. */
static void dnn64__inner_row_s8(const dnn64_conv_geom *g, const int8_t *x0, const int8_t *wt,
                                int32_t icpg, int32_t count, int32_t base, const dnn64__rq *rq,
                                int8_t *y)
{
    const int32_t in_plane = g->h_in * g->w_in, ksize = g->k_h * g->k_w, w_in = g->w_in;
    const int32_t stride = g->stride_w, k_h = g->k_h, k_w = g->k_w, dil_h = g->dil_h;
    const int32_t dil_w = g->dil_w;
    const int undilated = dil_h == 1 && dil_w == 1;
    const int k3 = k_h == 3 && k_w == 3 && undilated, k5 = k_h == 5 && k_w == 5 && undilated;
    int32_t acc[DNN64__ROW];
    int32_t c0, len, i, ic, ky, kx;
    if (dnn64__few_row_fits(g, icpg)) {
        dnn64__few_row_s8(g, x0, wt, icpg, count, base, rq, y);
        return;
    }
    for (c0 = 0; c0 < count; c0 += len) {
        len = count - c0 < DNN64__ROW ? count - c0 : DNN64__ROW;
        for (i = 0; i < len; ++i)
            acc[i] = base;
        for (ic = 0; ic < icpg; ++ic) {
            const int8_t *xc = x0 + ic * in_plane + c0 * stride, *w = wt + ic * ksize;
            if (k3) {
                const int32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4],
                              w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
                for (i = 0; i < len; ++i, xc += stride) {
                    const int8_t *r1 = xc + w_in, *r2 = r1 + w_in;
                    acc[i] += xc[0] * w0 + xc[1] * w1 + xc[2] * w2 + r1[0] * w3 + r1[1] * w4 +
                              r1[2] * w5 + r2[0] * w6 + r2[1] * w7 + r2[2] * w8;
                }
                continue;
            }
            if (k5) {
                for (i = 0; i < len; ++i, xc += stride) {
                    int32_t sum = 0;
                    DNN64__UNROLL
                    for (ky = 0; ky < 5; ++ky)
                        DNN64__UNROLL
                        for (kx = 0; kx < 5; ++kx)
                            sum += xc[ky * w_in + kx] * w[ky * 5 + kx];
                    acc[i] += sum;
                }
                continue;
            }
            for (i = 0; i < len; ++i, xc += stride) {
                int32_t sum = 0;
                for (ky = 0; ky < k_h; ++ky) {
                    const int8_t *xr = xc + ky * dil_h * w_in, *wr = w + ky * k_w;
                    for (kx = 0; kx < k_w; ++kx, xr += dil_w)
                        sum += *xr * wr[kx];
                }
                acc[i] += sum;
            }
        }
        for (i = 0; i < len; ++i)
            y[c0 + i] = dnn64__rq_out(rq, acc[i]);
    }
}

/* The rows (or columns) of input that the outputs of one axis read, from the
 * first window's start. */
static int32_t dnn64__extent(int32_t out, int32_t stride, int32_t k, int32_t dil)
{
    return (out - 1) * stride + (k - 1) * dil + 1;
}

void dnn64__pad_plane(const int8_t *x, int32_t h_in, int32_t w_in, int32_t top,
                      int32_t left, int32_t rows, int32_t cols, int8_t fill, int8_t *out)
{
    /* the columns [lo, hi) of each row lie inside the input */
    const int32_t lo = left < 0 ? 0 : (left < cols ? left : cols);
    const int32_t hi_in = w_in + left, hi = hi_in < lo ? lo : (hi_in < cols ? hi_in : cols);
    int32_t r, c;
    for (r = 0; r < rows; ++r, out += cols) {
        const int32_t iy = r - top;
        if (iy < 0 || iy >= h_in) {
            for (c = 0; c < cols; ++c)
                out[c] = fill;
            continue;
        }
        for (c = 0; c < lo; ++c)
            out[c] = fill;
        for (; c < hi; ++c)
            out[c] = x[iy * w_in + c - left];
        for (; c < cols; ++c)
            out[c] = fill;
    }
}

/* Depthwise-like channels (one input channel each) whose padded plane fits
 * DNN64__PADDED_BYTES and whose border outputs would cost more than the copy:
 * the plane is copied onto the stack with its pads set to
 * the zero point, where (x - zp) = 0, so that every output is an inner one
 * (no bounds checks, no border loop; on small planes such as 7x7 with a 5x5
 * kernel most outputs touch a pad). Returns 0, doing nothing, when it does
 * not apply. */
static int dnn64__conv_padded_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zp,
                                 const int8_t *w_tile, const int32_t *bias_tile,
                                 const int32_t *mult_tile, const int32_t *shift_tile,
                                 int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                                 int8_t *y)
{
    int8_t plane[DNN64__PADDED_BYTES];
    const int32_t ksize = g->k_h * g->k_w;
    const dnn64__span sy = DNN64__SPAN_Y(g), sx = DNN64__SPAN_X(g);
    const int32_t border = g->h_out * g->w_out - (sy.hi - sy.lo) * (sx.hi - sx.lo);
    dnn64_conv_geom pg = *g;
    int32_t n, t, oy;
    if (g->c_in != g->group || g->h_out <= 0 || g->w_out <= 0)
        return 0;
    pg.h_in = dnn64__extent(g->h_out, g->stride_h, g->k_h, g->dil_h);
    pg.w_in = dnn64__extent(g->w_out, g->stride_w, g->k_w, g->dil_w);
    /* Worth it when the border outputs' taps, at ~28 instructions each through
     * dnn64__border_s8, cost more than copying the plane at ~5 a byte. */
    if (pg.h_in * pg.w_in > DNN64__PADDED_BYTES || 4 * border * ksize <= pg.h_in * pg.w_in)
        return 0;
    pg.pad_top = pg.pad_left = 0;
    for (n = 0; n < g->n; ++n)
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const int8_t *wt = w_tile + c.w;
            const int32_t base = (bias_tile ? bias_tile[t] : 0) - x_zp * dnn64__sum_s8(wt, ksize);
            const dnn64__rq rq = dnn64__rq_of(mult_tile[t], shift_tile[t], q);
            dnn64__pad_plane(x + c.x, g->h_in, g->w_in, g->pad_top, g->pad_left, pg.h_in,
                             pg.w_in, (int8_t)x_zp, plane);
            for (oy = 0; oy < g->h_out; ++oy)
                dnn64__inner_row_s8(&pg, plane + oy * g->stride_h * pg.w_in, wt, 1, g->w_out,
                                    base, &rq, y + c.y + oy * g->w_out);
        }
    return 1;
}

static void dnn64__conv_generic_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zp,
                                   const int8_t *w_tile, const int32_t *bias_tile,
                                   const int32_t *mult_tile, const int32_t *shift_tile,
                                   int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                                   int8_t *y)
{
    const int32_t icpg = g->c_in / g->group, ksize = g->k_h * g->k_w;
    const dnn64__span sy = DNN64__SPAN_Y(g), sx = DNN64__SPAN_X(g);
    int32_t n, t, oy, ox;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const int8_t *xg = x + c.x, *wt = w_tile + c.w;
            const int32_t bias = bias_tile ? bias_tile[t] : 0;
            /* inside the input: bias + sum (x - zp) w = inner_bias + sum x w */
            const int32_t inner_bias = bias - x_zp * dnn64__sum_s8(wt, icpg * ksize);
            const int32_t mult = mult_tile[t], shift = shift_tile[t];
            const dnn64__rq rq = dnn64__rq_of(mult, shift, q);
            for (oy = 0; oy < g->h_out; ++oy) {
                int8_t *yr = y + c.y + oy * g->w_out;
                const int inner_row = oy >= sy.lo && oy < sy.hi;
                const int32_t first = inner_row ? sx.lo : g->w_out;
                const int8_t *x0; /* the window of (oy, 0) if it were inside the input */
                for (ox = 0; ox < first; ++ox)
                    yr[ox] = dnn64__out_s8(dnn64__border_s8(g, xg, x_zp, wt, icpg, oy, ox, bias),
                                           mult, shift, q);
                if (!inner_row)
                    continue;
                x0 = xg + (oy * g->stride_h - g->pad_top) * g->w_in + sx.lo * g->stride_w -
                     g->pad_left;
                dnn64__inner_row_s8(g, x0, wt, icpg, sx.hi - sx.lo, inner_bias, &rq, yr + sx.lo);
                for (ox = sx.hi; ox < g->w_out; ++ox)
                    yr[ox] = dnn64__out_s8(dnn64__border_s8(g, xg, x_zp, wt, icpg, oy, ox, bias),
                                           mult, shift, q);
            }
        }
    }
}

/* 1x1, stride 1, no pad, any group: per image, the tile's run of channels in
 * each group. */
static void dnn64__conv_1x1_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zp,
                               const int8_t *w_tile, const int32_t *bias_tile,
                               const int32_t *mult_tile, const int32_t *shift_tile,
                               int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                               int8_t *y)
{
    const int32_t plane = g->h_in * g->w_in, icpg = g->c_in / g->group;
    const int32_t ocpg = g->c_out / g->group;
    int32_t n, t, run;
    for (n = 0; n < g->n; ++n)
        for (t = 0; t < oc_count; t += run) {
            const int32_t oc = oc_begin + t, gi = oc / ocpg;
            run = (gi + 1) * ocpg - oc < oc_count - t ? (gi + 1) * ocpg - oc : oc_count - t;
            dnn64__pointwise_s8(x + (n * g->c_in + gi * icpg) * plane, icpg, plane, x_zp,
                                w_tile + t * icpg, bias_tile ? bias_tile + t : 0,
                                mult_tile + t, shift_tile + t, run, q,
                                y + (n * g->c_out + oc) * plane);
        }
}

void dnn64_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                   const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                   const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                   const dnn64_q8_out *q, int8_t *y)
{
    if (dnn64__is_1x1(g))
        dnn64__conv_1x1_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                           oc_begin, oc_count, q, y);
    else if (!dnn64__conv_padded_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile,
                                    shift_tile, oc_begin, oc_count, q, y))
        dnn64__conv_generic_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                               oc_begin, oc_count, q, y);
}
