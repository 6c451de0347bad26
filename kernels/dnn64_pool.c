/* MaxPool, AveragePool and GlobalAveragePool, fp32 and int8. */
#include "dnn64_internal.h"

void dnn64_maxpool_f32(const dnn64_pool_geom *g, const float *x, float *y)
{
    const int32_t in_plane = g->h_in * g->w_in, out_plane = g->h_out * g->w_out;
    int32_t p, oy, ox, ky, kx;
    for (p = 0; p < g->n * g->c; ++p) {
        const float *xp = x + p * in_plane;
        float *yp = y + p * out_plane;
        for (oy = 0; oy < g->h_out; ++oy) {
            const dnn64__window wy = DNN64__WINDOW_Y(g, oy);
            for (ox = 0; ox < g->w_out; ++ox) {
                const dnn64__window wx = DNN64__WINDOW_X(g, ox);
                float best = -3.40282347e38f;
                for (ky = wy.lo; ky < wy.hi; ++ky) {
                    const float *xr = xp + (wy.start + ky * g->dil_h) * g->w_in;
                    for (kx = wx.lo; kx < wx.hi; ++kx)
                        if (xr[wx.start + kx * g->dil_w] > best)
                            best = xr[wx.start + kx * g->dil_w];
                }
                yp[oy * g->w_out + ox] = best;
            }
        }
    }
}

/* The outputs [*lo, *hi) along an axis whose windows lie wholly inside the input. */
static void dnn64__inside(int32_t out, int32_t stride, int32_t pad, int32_t dil, int32_t k,
                          int32_t size, int32_t *lo, int32_t *hi)
{
    const int32_t last = size - 1 - (k - 1) * dil + pad; /* the last start + pad inside */
    *lo = (pad + stride - 1) / stride;
    *hi = last < 0 ? 0 : last / stride + 1;
    if (*hi > out)
        *hi = out;
    if (*lo > *hi)
        *lo = *hi;
}

/* The largest of rows x taps bytes from x, rows `row_step` and taps `tap_step` apart. */
static int8_t dnn64__max_s8(const int8_t *x, int32_t rows, int32_t row_step, int32_t taps,
                            int32_t tap_step)
{
    int8_t best = -128;
    int32_t r, t;
    for (r = 0; r < rows; ++r, x += row_step)
        for (t = 0; t < taps; ++t)
            if (x[t * tap_step] > best)
                best = x[t * tap_step];
    return best;
}

/* The largest of `rows` bytes `row_step` apart (one column of a window), as an int32_t:
 * int8_t intermediates cost the VR4300 a sign extension (two shifts) each. */
static int32_t dnn64__column_max_s8(const int8_t *x, int32_t rows, int32_t row_step)
{
    int32_t best = -128;
    if (rows == 3) { /* a window inside the input along y */
        const int32_t a = x[0], b = x[row_step], c = x[2 * row_step];
        best = a > b ? a : b;
        return best > c ? best : c;
    }
    for (; rows > 0; --rows, x += row_step) {
        const int32_t v = x[0];
        if (v > best)
            best = v;
    }
    return best;
}

/* Outputs [ox, hi) of one row of 3-wide windows (dilation 1) inside the input along x,
 * from xc (the first window's top left): columns reduced over the rows first, and with
 * stride 2 each window's last column is the next one's first (3x3 stride-2 MaxPools:
 * ResNet, SqueezeNet, ShuffleNet). */
static void dnn64__max3_row_s8(const int8_t *xc, int32_t rows, int32_t row_step,
                               int32_t stride, int8_t *y, int32_t ox, int32_t hi)
{
    int32_t first = dnn64__column_max_s8(xc, rows, row_step);
    for (; ox < hi; ++ox, xc += stride) {
        int32_t best = stride == 2 ? first : dnn64__column_max_s8(xc, rows, row_step);
        const int32_t mid = dnn64__column_max_s8(xc + 1, rows, row_step);
        const int32_t last = dnn64__column_max_s8(xc + 2, rows, row_step);
        if (mid > best)
            best = mid;
        if (last > best)
            best = last;
        y[ox] = (int8_t)best;
        first = last;
    }
}

/* The geometry is read into locals once (stores through y, an int8_t pointer, could alias
 * *g and make the compiler reload it); the windows inside the input along x take no
 * clipping (measured in cen64: 196 cycles an output of a 3x3 window before). */
void dnn64_maxpool_s8(const dnn64_pool_geom *g, const int8_t *x, int8_t *y)
{
    const int32_t h_in = g->h_in, w_in = g->w_in, h_out = g->h_out, w_out = g->w_out;
    const int32_t k_w = g->k_w, dil_h = g->dil_h, dil_w = g->dil_w, planes = g->n * g->c;
    const int32_t stride_w = g->stride_w, pad_left = g->pad_left;
    const int32_t in_plane = h_in * w_in, out_plane = h_out * w_out;
    int32_t p, oy, ox, lo, hi;
    dnn64__inside(w_out, stride_w, pad_left, dil_w, k_w, w_in, &lo, &hi);
    for (p = 0; p < planes; ++p) {
        const int8_t *xp = x + p * in_plane;
        int8_t *yp = y + p * out_plane;
        for (oy = 0; oy < h_out; ++oy, yp += w_out) {
            const dnn64__window wy = DNN64__WINDOW_Y(g, oy);
            const int8_t *xr = xp + (wy.start + wy.lo * dil_h) * w_in;
            const int32_t rows = wy.hi - wy.lo, row_step = dil_h * w_in;
            for (ox = 0; ox < w_out; ++ox) {
                if (ox == lo && lo < hi) {
                    const int8_t *xc = xr + lo * stride_w - pad_left;
                    if (k_w == 3 && dil_w == 1) {
                        dnn64__max3_row_s8(xc, rows, row_step, stride_w, yp, ox, hi);
                        ox = hi;
                    } else {
                        for (; ox < hi; ++ox, xc += stride_w)
                            yp[ox] = dnn64__max_s8(xc, rows, row_step, k_w, dil_w);
                    }
                    if (ox == w_out)
                        break;
                }
                {
                    const dnn64__window wx = DNN64__WINDOW_X(g, ox);
                    yp[ox] = dnn64__max_s8(xr + wx.start + wx.lo * dil_w, rows, row_step,
                                           wx.hi - wx.lo, dil_w);
                }
            }
        }
    }
}

/* Taps of a window starting at `start` (>= -pad_begin) that lie before the end
 * of the padded input, size + pad_end: the begin pad counts, taps past the end
 * pad (ceil_mode) do not. */
static int32_t dnn64__padded_taps(int32_t start, int32_t dil, int32_t k, int32_t size,
                                  int32_t pad_end)
{
    const int32_t limit = size + pad_end, n = start >= limit ? 0 : (limit - 1 - start) / dil + 1;
    return n < k ? n : k;
}

/* Input positions (taps inside the input) of the window wy x wx. */
static int32_t dnn64__valid_taps(const dnn64__window *wy, const dnn64__window *wx)
{
    return (wy->hi - wy->lo) * (wx->hi - wx->lo);
}

/* The divisor of the average window wy x wx. */
static int32_t dnn64__avg_count(const dnn64_pool_geom *g, int32_t count_include_pad,
                                const dnn64__window *wy, const dnn64__window *wx)
{
    if (!count_include_pad)
        return dnn64__valid_taps(wy, wx);
    return dnn64__padded_taps(wy->start, g->dil_h, g->k_h, g->h_in, g->pad_bottom) *
           dnn64__padded_taps(wx->start, g->dil_w, g->k_w, g->w_in, g->pad_right);
}

void dnn64_avgpool_f32(const dnn64_pool_geom *g, int32_t count_include_pad, const float *x,
                       float *y)
{
    const int32_t in_plane = g->h_in * g->w_in, out_plane = g->h_out * g->w_out;
    int32_t p, oy, ox, ky, kx;
    for (p = 0; p < g->n * g->c; ++p) {
        const float *xp = x + p * in_plane;
        float *yp = y + p * out_plane;
        for (oy = 0; oy < g->h_out; ++oy) {
            const dnn64__window wy = DNN64__WINDOW_Y(g, oy);
            for (ox = 0; ox < g->w_out; ++ox) {
                const dnn64__window wx = DNN64__WINDOW_X(g, ox);
                int32_t count;
                float sum = 0.0f;
                for (ky = wy.lo; ky < wy.hi; ++ky) {
                    const float *xr = xp + (wy.start + ky * g->dil_h) * g->w_in;
                    for (kx = wx.lo; kx < wx.hi; ++kx)
                        sum += xr[wx.start + kx * g->dil_w];
                }
                count = dnn64__avg_count(g, count_include_pad, &wy, &wx);
                yp[oy * g->w_out + ox] = count > 0 ? sum / (float)count : 0.0f;
            }
        }
    }
}

void dnn64_avgpool_s8(const dnn64_pool_geom *g, int32_t count_include_pad,
                      int32_t x_zero_point, int32_t act_min, int32_t act_max, const int8_t *x,
                      int8_t *y)
{
    const int32_t in_plane = g->h_in * g->w_in, out_plane = g->h_out * g->w_out;
    int32_t p, oy, ox, ky, kx;
    for (p = 0; p < g->n * g->c; ++p) {
        const int8_t *xp = x + p * in_plane;
        int8_t *yp = y + p * out_plane;
        for (oy = 0; oy < g->h_out; ++oy) {
            const dnn64__window wy = DNN64__WINDOW_Y(g, oy);
            for (ox = 0; ox < g->w_out; ++ox) {
                const dnn64__window wx = DNN64__WINDOW_X(g, ox);
                int32_t count, sum = 0, v = x_zero_point;
                for (ky = wy.lo; ky < wy.hi; ++ky) {
                    const int8_t *xr = xp + (wy.start + ky * g->dil_h) * g->w_in;
                    for (kx = wx.lo; kx < wx.hi; ++kx)
                        sum += xr[wx.start + kx * g->dil_w];
                }
                count = dnn64__avg_count(g, count_include_pad, &wy, &wx);
                if (count > 0)
                    v = dnn64__div_round(sum + (count - dnn64__valid_taps(&wy, &wx)) * x_zero_point,
                                         count);
                yp[oy * g->w_out + ox] = (int8_t)dnn64__clamp(v, act_min, act_max);
            }
        }
    }
}

void dnn64_global_avgpool_f32(int32_t planes, int32_t hw, const float *x, float *y)
{
    int32_t p, i;
    for (p = 0; p < planes; ++p) {
        const float *xp = x + p * hw;
        float sum = 0.0f;
        for (i = 0; i < hw; ++i)
            sum += xp[i];
        y[p] = sum / (float)hw;
    }
}

void dnn64_global_avgpool_s8(int32_t planes, int32_t hw, int32_t act_min, int32_t act_max,
                             const int8_t *x, int8_t *y)
{
    int32_t p;
    for (p = 0; p < planes; ++p)
        y[p] = dnn64__gap_out_s8(dnn64__sum_s8(x + p * hw, hw), hw, act_min, act_max);
}
