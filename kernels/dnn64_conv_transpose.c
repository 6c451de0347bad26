/*
 * ConvTranspose, fp32 and int8, on an output-channel tile, as a gather: each
 * output sums the inputs that a scatter would have sent to it, so a tile
 * writes only its own channels and int8 can requantize each sum once.
 * Output oy receives input iy through tap ky when oy = iy * stride - pad + ky * dil.
 * The tap loops are outermost so that each (ky, kx) costs its index divisions
 * once, not once per input channel.
 */
#include "dnn64_internal.h"

/* The input index that reaches output o through tap k, or -1 when none does. */
static int32_t dnn64__src_index(int32_t o, int32_t pad, int32_t k, int32_t dil, int32_t stride,
                                int32_t size)
{
    int32_t t = o + pad - k * dil;
    int32_t i;
    if (t < 0)
        return -1;
    i = t / stride;
    return (i * stride == t && i < size) ? i : -1;
}

void dnn64_conv_transpose_f32(const dnn64_conv_geom *g, const float *x, const float *w_tile,
                              const float *b_tile, int32_t oc_begin, int32_t oc_count,
                              const dnn64_act_f32 *act, float *y)
{
    const int32_t icpg = g->c_in / g->group;
    const int32_t ksize = g->k_h * g->k_w, in_plane = g->h_in * g->w_in;
    int32_t n, t, oy, ox, ic, ky, kx;
    for (n = 0; n < g->n; ++n) {
        for (t = 0; t < oc_count; ++t) {
            const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
            const float *xg = x + c.x, *wt = w_tile + c.w;
            float *yp = y + c.y;
            const float bias = b_tile ? b_tile[t] : 0.0f;
            for (oy = 0; oy < g->h_out; ++oy) {
                for (ox = 0; ox < g->w_out; ++ox) {
                    float acc = bias;
                    for (ky = 0; ky < g->k_h; ++ky) {
                        const int32_t iy = dnn64__src_index(oy, g->pad_top, ky, g->dil_h,
                                                            g->stride_h, g->h_in);
                        if (iy < 0)
                            continue;
                        for (kx = 0; kx < g->k_w; ++kx) {
                            const int32_t ix = dnn64__src_index(ox, g->pad_left, kx, g->dil_w,
                                                                g->stride_w, g->w_in);
                            const float *xp, *wk;
                            if (ix < 0)
                                continue;
                            xp = xg + iy * g->w_in + ix;
                            wk = wt + ky * g->k_w + kx;
                            for (ic = 0; ic < icpg; ++ic)
                                acc += xp[ic * in_plane] * wk[ic * ksize];
                        }
                    }
                    yp[oy * g->w_out + ox] = dnn64__act_f32(act, acc);
                }
            }
        }
    }
}

void dnn64_conv_transpose_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
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
                for (ox = 0; ox < g->w_out; ++ox) {
                    int32_t acc = bias;
                    for (ky = 0; ky < g->k_h; ++ky) {
                        const int32_t iy = dnn64__src_index(oy, g->pad_top, ky, g->dil_h,
                                                            g->stride_h, g->h_in);
                        if (iy < 0)
                            continue;
                        for (kx = 0; kx < g->k_w; ++kx) {
                            const int32_t ix = dnn64__src_index(ox, g->pad_left, kx, g->dil_w,
                                                                g->stride_w, g->w_in);
                            const int8_t *xp, *wk;
                            if (ix < 0)
                                continue;
                            xp = xg + iy * g->w_in + ix;
                            wk = wt + ky * g->k_w + kx;
                            for (ic = 0; ic < icpg; ++ic)
                                acc += (xp[ic * in_plane] - x_zero_point) * wk[ic * ksize];
                        }
                    }
                    yp[oy * g->w_out + ox] = dnn64__out_s8(acc, mult_tile[t], shift_tile[t], q);
                }
            }
        }
    }
}
