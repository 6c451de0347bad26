/*
 * Conv, fp32 and int8, on an output-channel tile. One generic loop (pads,
 * strides, dilations, groups; fp32 also has it specialised for depthwise)
 * plus a 1x1 fast path; all add the same products in the same order (bias,
 * then input channel, ky, kx ascending), so the fp32 paths agree bit for bit.
 */
#include "dnn64_internal.h"

/* ---- fp32 ---- */

/* The generic loop. `depthwise` (one input channel per output channel) is a
 * constant at each call, so that once inlined the depthwise copy loses the
 * input-channel loop; both copies add the same products in the same order. */
static DNN64__ALWAYS_INLINE void dnn64__conv_generic_f32(const dnn64_conv_geom *g,
                                                         const float *x, const float *w_tile,
                                                         const float *b_tile, int32_t oc_begin,
                                                         int32_t oc_count,
                                                         const dnn64_act_f32 *act, float *y,
                                                         int depthwise)
{
    const int32_t icpg = depthwise ? 1 : g->c_in / g->group;
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    int32_t n, t, oy, ox, ic, ky, kx;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const float *xg = x + c.x, *wt = w_tile + c.w;
            float *yp = y + c.y;
            const float bias = b_tile ? b_tile[t] : 0.0f;
            for (oy = 0; oy < g->h_out; ++oy) {
                const dnn64__window wy = DNN64__WINDOW_Y(g, oy);
                for (ox = 0; ox < g->w_out; ++ox) {
                    const dnn64__window wx = DNN64__WINDOW_X(g, ox);
                    float acc = bias;
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
                    yp[oy * g->w_out + ox] = dnn64__act_f32(act, acc);
                }
            }
        }
    }
}

/* 1x1, stride 1, no pad, group 1: the output plane is bias + sum_ic w[ic] * x-plane[ic],
 * accumulated plane-wise so that the inner loop streams through memory. */
static void dnn64__conv_1x1_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                                const float *b_tile, int32_t oc_begin, int32_t oc_count,
                                const dnn64_act_f32 *act, float *y)
{
    const int32_t plane = g->h_in * g->w_in;
    int32_t n, t, ic, p;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const float *xn = x + c.x, *wt = w_tile + c.w;
            float *yp = y + c.y;
            const float bias = b_tile ? b_tile[t] : 0.0f;
            for (p = 0; p < plane; ++p)
                yp[p] = bias;
            for (ic = 0; ic < g->c_in; ++ic) {
                const float *xp = xn + ic * plane;
                const float wv = wt[ic];
                for (p = 0; p < plane; ++p)
                    yp[p] += xp[p] * wv;
            }
            if (act && act->kind != DNN64_ACT_NONE)
                for (p = 0; p < plane; ++p)
                    yp[p] = dnn64__act_f32(act, yp[p]);
        }
    }
}

static int dnn64__is_depthwise(const dnn64_conv_geom *g)
{
    return g->group == g->c_in && g->group == g->c_out;
}

static int dnn64__is_1x1(const dnn64_conv_geom *g)
{
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
           g->pad_top == 0 && g->pad_left == 0 && g->group == 1 && g->h_out == g->h_in &&
           g->w_out == g->w_in;
}

void dnn64_conv_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                    const float *b_tile, int32_t oc_begin, int32_t oc_count,
                    const dnn64_act_f32 *act, float *y)
{
    if (dnn64__is_1x1(g))
        dnn64__conv_1x1_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y);
    else if (dnn64__is_depthwise(g))
        dnn64__conv_generic_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y, 1);
    else
        dnn64__conv_generic_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y, 0);
}

/* ---- int8 ---- */

static void dnn64__conv_generic_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zp,
                                   const int8_t *w_tile, const int32_t *bias_tile,
                                   const int32_t *mult_tile, const int32_t *shift_tile,
                                   int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                                   int8_t *y)
{
    const int32_t icpg = g->c_in / g->group;
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    int32_t n, t, oy, ox, ic, ky, kx;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const int8_t *xg = x + c.x, *wt = w_tile + c.w;
            int8_t *yp = y + c.y;
            const int32_t bias = bias_tile ? bias_tile[t] : 0;
            for (oy = 0; oy < g->h_out; ++oy) {
                const dnn64__window wy = DNN64__WINDOW_Y(g, oy);
                for (ox = 0; ox < g->w_out; ++ox) {
                    const dnn64__window wx = DNN64__WINDOW_X(g, ox);
                    int32_t acc = bias;
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
                    yp[oy * g->w_out + ox] = dnn64__out_s8(acc, mult_tile[t], shift_tile[t], q);
                }
            }
        }
    }
}

/* 1x1 int8: accumulate a whole output row of int32 at a time in a small
 * stack buffer (DNN64__ROW pixels), so the input planes are streamed. */
#define DNN64__ROW 64

static void dnn64__conv_1x1_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zp,
                               const int8_t *w_tile, const int32_t *bias_tile,
                               const int32_t *mult_tile, const int32_t *shift_tile,
                               int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                               int8_t *y)
{
    const int32_t plane = g->h_in * g->w_in;
    int32_t acc[DNN64__ROW];
    int32_t n, t, ic, p0, p, len;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const int8_t *xn = x + c.x, *wt = w_tile + c.w;
            int8_t *yp = y + c.y;
            const int32_t bias = bias_tile ? bias_tile[t] : 0;
            for (p0 = 0; p0 < plane; p0 += DNN64__ROW) {
                len = plane - p0 < DNN64__ROW ? plane - p0 : DNN64__ROW;
                for (p = 0; p < len; ++p)
                    acc[p] = bias;
                for (ic = 0; ic < g->c_in; ++ic) {
                    const int8_t *xp = xn + ic * plane + p0;
                    const int32_t wv = wt[ic];
                    for (p = 0; p < len; ++p)
                        acc[p] += (xp[p] - x_zp) * wv;
                }
                for (p = 0; p < len; ++p)
                    yp[p0 + p] = dnn64__out_s8(acc[p], mult_tile[t], shift_tile[t], q);
            }
        }
    }
}

void dnn64_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                   const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                   const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                   const dnn64_q8_out *q, int8_t *y)
{
    /* Integer sums are exact in any order; the depthwise case is the generic
     * loop with one input channel per group. */
    if (dnn64__is_1x1(g))
        dnn64__conv_1x1_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                           oc_begin, oc_count, q, y);
    else
        dnn64__conv_generic_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                               oc_begin, oc_count, q, y);
}
