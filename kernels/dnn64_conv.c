/*
 * Conv, fp32 and int8, on an output-channel tile. One generic loop (pads,
 * strides, dilations, groups) plus a depthwise and a 1x1 fast path; all
 * three add the same products in the same order (bias, then input channel,
 * ky, kx ascending), so the fp32 paths agree bit for bit.
 */
#include "dnn64_internal.h"

/* ---- fp32 ---- */

static void dnn64__conv_generic_f32(const dnn64_conv_geom *g, const float *x,
                                    const float *w_tile, const float *b_tile, int32_t oc_begin,
                                    int32_t oc_count, const dnn64_act_f32 *act, float *y)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group;
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    int32_t n, t, oy, ox, ic, ky, kx;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const int32_t oc = oc_begin + t;
            const float *xg = x + ((int32_t)n * g->c_in + (oc / ocpg) * icpg) * in_plane;
            const float *wt = w_tile + t * icpg * ksize;
            float *yp = y + ((int32_t)n * g->c_out + oc) * g->h_out * g->w_out;
            const float bias = b_tile ? b_tile[t] : 0.0f;
            for (oy = 0; oy < g->h_out; ++oy) {
                const int32_t iy0 = oy * g->stride_h - g->pad_top;
                int32_t ky_lo, ky_hi;
                dnn64__tap_range(iy0, g->dil_h, g->k_h, g->h_in, &ky_lo, &ky_hi);
                for (ox = 0; ox < g->w_out; ++ox) {
                    const int32_t ix0 = ox * g->stride_w - g->pad_left;
                    int32_t kx_lo, kx_hi;
                    float acc = bias;
                    dnn64__tap_range(ix0, g->dil_w, g->k_w, g->w_in, &kx_lo, &kx_hi);
                    for (ic = 0; ic < icpg; ++ic) {
                        const float *xp = xg + ic * in_plane;
                        const float *wk = wt + ic * ksize;
                        for (ky = ky_lo; ky < ky_hi; ++ky) {
                            const float *xr = xp + (iy0 + ky * g->dil_h) * g->w_in;
                            const float *wr = wk + ky * g->k_w;
                            for (kx = kx_lo; kx < kx_hi; ++kx)
                                acc += xr[ix0 + kx * g->dil_w] * wr[kx];
                        }
                    }
                    yp[oy * g->w_out + ox] = dnn64__act_f32(act, acc);
                }
            }
        }
    }
}

/* Depthwise: one input channel per output channel, no group bookkeeping. */
static void dnn64__conv_depthwise_f32(const dnn64_conv_geom *g, const float *x,
                                      const float *w_tile, const float *b_tile,
                                      int32_t oc_begin, int32_t oc_count,
                                      const dnn64_act_f32 *act, float *y)
{
    const int32_t in_plane = g->h_in * g->w_in, out_plane = g->h_out * g->w_out;
    int32_t n, t, oy, ox, ky, kx;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const int32_t c = oc_begin + t;
            const float *xp = x + ((int32_t)n * g->c_in + c) * in_plane;
            const float *wk = w_tile + t * g->k_h * g->k_w;
            float *yp = y + ((int32_t)n * g->c_out + c) * out_plane;
            const float bias = b_tile ? b_tile[t] : 0.0f;
            for (oy = 0; oy < g->h_out; ++oy) {
                const int32_t iy0 = oy * g->stride_h - g->pad_top;
                int32_t ky_lo, ky_hi;
                dnn64__tap_range(iy0, g->dil_h, g->k_h, g->h_in, &ky_lo, &ky_hi);
                for (ox = 0; ox < g->w_out; ++ox) {
                    const int32_t ix0 = ox * g->stride_w - g->pad_left;
                    int32_t kx_lo, kx_hi;
                    float acc = bias;
                    dnn64__tap_range(ix0, g->dil_w, g->k_w, g->w_in, &kx_lo, &kx_hi);
                    for (ky = ky_lo; ky < ky_hi; ++ky) {
                        const float *xr = xp + (iy0 + ky * g->dil_h) * g->w_in;
                        const float *wr = wk + ky * g->k_w;
                        for (kx = kx_lo; kx < kx_hi; ++kx)
                            acc += xr[ix0 + kx * g->dil_w] * wr[kx];
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
        const float *xn = x + (int32_t)n * g->c_in * plane;
        for (t = 0; t < oc_count; ++t) {
            float *yp = y + ((int32_t)n * g->c_out + oc_begin + t) * plane;
            const float *wt = w_tile + t * g->c_in;
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
        dnn64__conv_depthwise_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y);
    else
        dnn64__conv_generic_f32(g, x, w_tile, b_tile, oc_begin, oc_count, act, y);
}

/* ---- int8 ---- */

static void dnn64__conv_generic_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zp,
                                   const int8_t *w_tile, const int32_t *bias_tile,
                                   const int32_t *mult_tile, const int32_t *shift_tile,
                                   int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                                   int8_t *y)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group;
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    int32_t n, t, oy, ox, ic, ky, kx;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const int32_t oc = oc_begin + t;
            const int8_t *xg = x + ((int32_t)n * g->c_in + (oc / ocpg) * icpg) * in_plane;
            const int8_t *wt = w_tile + t * icpg * ksize;
            int8_t *yp = y + ((int32_t)n * g->c_out + oc) * g->h_out * g->w_out;
            const int32_t bias = bias_tile ? bias_tile[t] : 0;
            for (oy = 0; oy < g->h_out; ++oy) {
                const int32_t iy0 = oy * g->stride_h - g->pad_top;
                int32_t ky_lo, ky_hi;
                dnn64__tap_range(iy0, g->dil_h, g->k_h, g->h_in, &ky_lo, &ky_hi);
                for (ox = 0; ox < g->w_out; ++ox) {
                    const int32_t ix0 = ox * g->stride_w - g->pad_left;
                    int32_t kx_lo, kx_hi;
                    int32_t acc = bias;
                    dnn64__tap_range(ix0, g->dil_w, g->k_w, g->w_in, &kx_lo, &kx_hi);
                    for (ic = 0; ic < icpg; ++ic) {
                        const int8_t *xp = xg + ic * in_plane;
                        const int8_t *wk = wt + ic * ksize;
                        for (ky = ky_lo; ky < ky_hi; ++ky) {
                            const int8_t *xr = xp + (iy0 + ky * g->dil_h) * g->w_in;
                            const int8_t *wr = wk + ky * g->k_w;
                            for (kx = kx_lo; kx < kx_hi; ++kx)
                                acc += (xr[ix0 + kx * g->dil_w] - x_zp) * wr[kx];
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
        const int8_t *xn = x + (int32_t)n * g->c_in * plane;
        for (t = 0; t < oc_count; ++t) {
            int8_t *yp = y + ((int32_t)n * g->c_out + oc_begin + t) * plane;
            const int8_t *wt = w_tile + t * g->c_in;
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
