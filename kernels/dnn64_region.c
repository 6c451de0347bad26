/*
 * Conv and pooling on a region of the output, reading a region of the input:
 * what a fused group (dnn64build/planner/fusion.py) runs band by band or
 * patch by patch. Each entry point builds, per channel, the geometry of a
 * small problem whose input is the held region and whose output is the
 * requested one, and calls the whole-tensor kernel on it, so the arithmetic
 * (and its order) is exactly that of dnn64_conv_* / dnn64_*pool_*.
 *
 * Why this is exact: the region held of the input contains every in-bounds
 * tap of every requested output, and a tap outside it is outside the tensor
 * (the caller's contract). Shifting the begin pads by the region's origin
 * puts each window at the same taps; the kernels skip taps outside [0, h_in)
 * x [0, w_in) exactly as they skip the padding.
 */
#include "dnn64_internal.h"

/* The per-channel geometry of a Conv output region (one output channel). */
static dnn64_conv_geom dnn64__conv_sub(const dnn64_conv_geom *g, const dnn64_region *xr,
                                       int32_t out_row0, int32_t out_rows, int32_t out_col0,
                                       int32_t out_cols)
{
    dnn64_conv_geom s = *g;
    s.n = 1;
    s.c_in = g->c_in / g->group;
    s.c_out = 1;
    s.group = 1;
    s.h_in = xr->rows;
    s.w_in = xr->cols;
    s.h_out = out_rows;
    s.w_out = out_cols;
    s.pad_top = g->pad_top + xr->row0 - out_row0 * g->stride_h;
    s.pad_left = g->pad_left + xr->col0 - out_col0 * g->stride_w;
    return s;
}

/* The per-plane geometry of a pooling output region. */
static dnn64_pool_geom dnn64__pool_sub(const dnn64_pool_geom *g, const dnn64_region *xr,
                                       int32_t out_row0, int32_t out_rows, int32_t out_col0,
                                       int32_t out_cols)
{
    dnn64_pool_geom s = *g;
    s.n = 1;
    s.c = 1;
    s.h_in = xr->rows;
    s.w_in = xr->cols;
    s.h_out = out_rows;
    s.w_out = out_cols;
    s.pad_top = g->pad_top + xr->row0 - out_row0 * g->stride_h;
    s.pad_left = g->pad_left + xr->col0 - out_col0 * g->stride_w;
    /* The padded extent ends where the whole tensor's does (AveragePool's count). */
    s.pad_bottom = g->h_in + g->pad_bottom - xr->row0 - xr->rows;
    s.pad_right = g->w_in + g->pad_right - xr->col0 - xr->cols;
    return s;
}

/* Output rows written per kernel call: the whole region when its rows are
 * contiguous in y, else one row at a time. */
static int32_t dnn64__rows_per_call(const dnn64_region *yr)
{
    return yr->row_stride == yr->cols ? (yr->rows > 0 ? yr->rows : 1) : 1;
}

void dnn64_conv_region_f32(const dnn64_conv_geom *g, const dnn64_region *xr, const float *x,
                           const float *w_tile, const float *b_tile, int32_t oc_begin,
                           int32_t oc_count, const dnn64_act_f32 *act,
                           const dnn64_region *yr, float *y)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group;
    const int32_t step = dnn64__rows_per_call(yr);
    int32_t t, r;
    for (t = 0; t < oc_count; ++t) {
        const int32_t oc = oc_begin + t;
        const float *xg = x + xr->offset + (oc / ocpg) * icpg * xr->plane_stride;
        const float *wt = w_tile + t * icpg * g->k_h * g->k_w;
        for (r = 0; r < yr->rows; r += step) {
            const int32_t n = yr->rows - r < step ? yr->rows - r : step;
            const dnn64_conv_geom s = dnn64__conv_sub(g, xr, yr->row0 + r, n, yr->col0,
                                                      yr->cols);
            dnn64_conv_f32(&s, xg, wt, b_tile ? b_tile + t : NULL, 0, 1, act,
                           y + yr->offset + oc * yr->plane_stride + r * yr->row_stride);
        }
    }
}

void dnn64_conv_region_s8(const dnn64_conv_geom *g, const dnn64_region *xr, const int8_t *x,
                          int32_t x_zero_point, const int8_t *w_tile, const int32_t *bias_tile,
                          const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                          int32_t oc_count, const dnn64_q8_out *q, const dnn64_region *yr,
                          int8_t *y)
{
    const int32_t icpg = g->c_in / g->group, ocpg = g->c_out / g->group;
    const int32_t step = dnn64__rows_per_call(yr);
    int32_t t, r;
    for (t = 0; t < oc_count; ++t) {
        const int32_t oc = oc_begin + t;
        const int8_t *xg = x + xr->offset + (oc / ocpg) * icpg * xr->plane_stride;
        const int8_t *wt = w_tile + t * icpg * g->k_h * g->k_w;
        for (r = 0; r < yr->rows; r += step) {
            const int32_t n = yr->rows - r < step ? yr->rows - r : step;
            const dnn64_conv_geom s = dnn64__conv_sub(g, xr, yr->row0 + r, n, yr->col0,
                                                      yr->cols);
            dnn64_conv_s8(&s, xg, x_zero_point, wt, bias_tile ? bias_tile + t : NULL,
                          mult_tile + t, shift_tile + t, 0, 1, q,
                          y + yr->offset + oc * yr->plane_stride + r * yr->row_stride);
        }
    }
}

/* The pooling entry points differ only in the kernel called per plane. */
#define DNN64__POOL_REGION(T, CALL)                                                        \
    const int32_t step = dnn64__rows_per_call(yr);                                         \
    int32_t c, r;                                                                          \
    for (c = 0; c < g->n * g->c; ++c) {                                                    \
        const T *xp = x + xr->offset + c * xr->plane_stride;                               \
        for (r = 0; r < yr->rows; r += step) {                                             \
            const int32_t n = yr->rows - r < step ? yr->rows - r : step;                   \
            const dnn64_pool_geom s = dnn64__pool_sub(g, xr, yr->row0 + r, n, yr->col0,    \
                                                      yr->cols);                           \
            T *yp = y + yr->offset + c * yr->plane_stride + r * yr->row_stride;            \
            CALL;                                                                          \
        }                                                                                  \
    }

void dnn64_maxpool_region_f32(const dnn64_pool_geom *g, const dnn64_region *xr, const float *x,
                              const dnn64_region *yr, float *y)
{
    DNN64__POOL_REGION(float, dnn64_maxpool_f32(&s, xp, yp))
}

void dnn64_maxpool_region_s8(const dnn64_pool_geom *g, const dnn64_region *xr,
                             const int8_t *x, const dnn64_region *yr, int8_t *y)
{
    DNN64__POOL_REGION(int8_t, dnn64_maxpool_s8(&s, xp, yp))
}

void dnn64_avgpool_region_f32(const dnn64_pool_geom *g, int32_t count_include_pad,
                              const dnn64_region *xr, const float *x, const dnn64_region *yr,
                              float *y)
{
    DNN64__POOL_REGION(float, dnn64_avgpool_f32(&s, count_include_pad, xp, yp))
}

void dnn64_avgpool_region_s8(const dnn64_pool_geom *g, int32_t count_include_pad,
                             int32_t x_zero_point, int32_t act_min, int32_t act_max,
                             const dnn64_region *xr, const int8_t *x, const dnn64_region *yr,
                             int8_t *y)
{
    DNN64__POOL_REGION(int8_t, dnn64_avgpool_s8(&s, count_include_pad, x_zero_point, act_min,
                                                act_max, xp, yp))
}

#undef DNN64__POOL_REGION

/* Byte copy that is safe for overlapping ranges (memmove without libc). */
static void dnn64__move(uint8_t *dst, const uint8_t *src, int32_t n)
{
    int32_t i;
    if (dst < src)
        for (i = 0; i < n; ++i)
            dst[i] = src[i];
    else if (dst > src)
        for (i = n - 1; i >= 0; --i)
            dst[i] = src[i];
}

void dnn64_region_keep(uint8_t *buf, int32_t planes, int32_t row_bytes, int32_t old_rows,
                       int32_t keep_from, int32_t keep_rows, int32_t new_rows)
{
    const int32_t old_plane = old_rows * row_bytes, new_plane = new_rows * row_bytes;
    const int32_t bytes = keep_rows * row_bytes;
    int32_t c;
    if (keep_rows <= 0)
        return;
    /* Planes that move up are moved last-first and planes that move down
     * first-last, so no plane is overwritten before it has moved. */
    if (new_plane > old_plane)
        for (c = planes - 1; c >= 0; --c)
            dnn64__move(buf + c * new_plane, buf + c * old_plane + keep_from * row_bytes, bytes);
    else
        for (c = 0; c < planes; ++c)
            dnn64__move(buf + c * new_plane, buf + c * old_plane + keep_from * row_bytes, bytes);
}

dnn64_region dnn64_rows_region(int32_t held_lo, int32_t held_hi, int32_t lo, int32_t hi,
                               int32_t width)
{
    dnn64_region r;
    r.row0 = lo;
    r.rows = hi - lo;
    r.col0 = 0;
    r.cols = width;
    r.offset = (lo - held_lo) * width;
    r.row_stride = width;
    r.plane_stride = (held_hi - held_lo) * width;
    return r;
}

int32_t dnn64_next_firing(dnn64_firings *walk, int32_t *f)
{
    const dnn64_firing_run *run;
    const int16_t *row;
    int32_t k;
    if (walk->run >= walk->run_count)
        return 0;
    run = &walk->runs[walk->run];
    row = walk->templates[run->first + walk->row];
    f[0] = row[0];
    for (k = 1; k <= DNN64_FIRING_FIELDS; ++k)
        f[k] = row[k] + walk->rep * row[k + DNN64_FIRING_FIELDS];
    if (++walk->row == run->count) {
        walk->row = 0;
        if (++walk->rep == run->times) {
            walk->rep = 0;
            ++walk->run;
        }
    }
    return 1;
}
