/*
 * Resize over the last two dims, nearest (any element type) and bilinear
 * (fp32, int8). Source coordinates are computed in fp32 exactly as
 * onnxruntime writes them, per output row and column.
 */
#include "dnn64_internal.h"

static float dnn64__src_coord(int32_t o, float scale, int32_t in, int32_t out, int32_t mode)
{
    switch (mode) {
    case DNN64_COORD_ASYMMETRIC:
        return (float)o / scale;
    case DNN64_COORD_ALIGN_CORNERS:
        return out == 1 ? 0.0f : (float)o * (float)(in - 1) / (float)(out - 1);
    case DNN64_COORD_PYTORCH_HALF_PIXEL:
        if (out == 1)
            return 0.0f;
        return ((float)o + 0.5f) / scale - 0.5f;
    default:
        return ((float)o + 0.5f) / scale - 0.5f;
    }
}

/* floor for |v| < 2^31 without libm: truncate, then step down for negatives. */
static int32_t dnn64__floor(float v)
{
    int32_t i = (int32_t)v;
    return (float)i > v ? i - 1 : i;
}

static int32_t dnn64__nearest(float v, int32_t mode, int32_t in)
{
    const int32_t f = dnn64__floor(v);
    const float frac = v - (float)f; /* exact */
    int32_t i;
    switch (mode) {
    case DNN64_NEAREST_FLOOR:
        i = f;
        break;
    case DNN64_NEAREST_CEIL:
        i = frac > 0.0f ? f + 1 : f;
        break;
    case DNN64_NEAREST_ROUND_PREFER_CEIL:
        i = frac >= 0.5f ? f + 1 : f;
        break;
    default:
        i = frac > 0.5f ? f + 1 : f;
        break;
    }
    return dnn64__clamp(i, 0, in - 1);
}

void dnn64_resize_nearest(int32_t elem_size, int32_t planes, int32_t h_in, int32_t w_in,
                          int32_t h_out, int32_t w_out, float scale_h, float scale_w,
                          int32_t coord_mode, int32_t nearest_mode, const void *x, void *y)
{
    int32_t p, oy, ox;
    for (p = 0; p < planes; ++p) {
        for (oy = 0; oy < h_out; ++oy) {
            const int32_t iy = dnn64__nearest(
                dnn64__src_coord(oy, scale_h, h_in, h_out, coord_mode), nearest_mode, h_in);
            const int32_t src_row = (p * h_in + iy) * w_in, dst_row = (p * h_out + oy) * w_out;
            for (ox = 0; ox < w_out; ++ox) {
                const int32_t ix = dnn64__nearest(
                    dnn64__src_coord(ox, scale_w, w_in, w_out, coord_mode), nearest_mode, w_in);
                if (elem_size == 4)
                    ((uint32_t *)y)[dst_row + ox] = ((const uint32_t *)x)[src_row + ix];
                else if (elem_size == 2)
                    ((uint16_t *)y)[dst_row + ox] = ((const uint16_t *)x)[src_row + ix];
                else
                    ((uint8_t *)y)[dst_row + ox] = ((const uint8_t *)x)[src_row + ix];
            }
        }
    }
}

/* One axis of a bilinear tap: i0, i1 and the fraction f of i1. */
typedef struct {
    int32_t i0, i1;
    float f;
} dnn64__lin_tap;

static dnn64__lin_tap dnn64__linear_tap(int32_t o, float scale, int32_t in, int32_t out,
                                        int32_t mode)
{
    dnn64__lin_tap t;
    float v = dnn64__src_coord(o, scale, in, out, mode);
    v = v < 0.0f ? 0.0f : (v > (float)(in - 1) ? (float)(in - 1) : v);
    t.i0 = (int32_t)v;
    t.i1 = t.i0 + 1 < in ? t.i0 + 1 : in - 1;
    t.f = v - (float)t.i0;
    return t;
}

void dnn64_resize_linear_f32(int32_t planes, int32_t h_in, int32_t w_in, int32_t h_out,
                             int32_t w_out, float scale_h, float scale_w, int32_t coord_mode,
                             const float *x, float *y)
{
    int32_t p, oy, ox;
    for (p = 0; p < planes; ++p) {
        const float *xp = x + p * h_in * w_in;
        float *yp = y + p * h_out * w_out;
        for (oy = 0; oy < h_out; ++oy) {
            const dnn64__lin_tap ty = dnn64__linear_tap(oy, scale_h, h_in, h_out, coord_mode);
            const float *r0 = xp + ty.i0 * w_in, *r1 = xp + ty.i1 * w_in;
            for (ox = 0; ox < w_out; ++ox) {
                const dnn64__lin_tap tx = dnn64__linear_tap(ox, scale_w, w_in, w_out, coord_mode);
                const float top = (1.0f - tx.f) * r0[tx.i0] + tx.f * r0[tx.i1];
                const float bot = (1.0f - tx.f) * r1[tx.i0] + tx.f * r1[tx.i1];
                yp[oy * w_out + ox] = (1.0f - ty.f) * top + ty.f * bot;
            }
        }
    }
}

static int32_t dnn64__q11(float f)
{
    return (int32_t)(f * 2048.0f + 0.5f);
}

void dnn64_resize_linear_s8(int32_t planes, int32_t h_in, int32_t w_in, int32_t h_out,
                            int32_t w_out, float scale_h, float scale_w, int32_t coord_mode,
                            const int8_t *x, int8_t *y)
{
    int32_t p, oy, ox;
    for (p = 0; p < planes; ++p) {
        const int8_t *xp = x + p * h_in * w_in;
        int8_t *yp = y + p * h_out * w_out;
        for (oy = 0; oy < h_out; ++oy) {
            const dnn64__lin_tap ty = dnn64__linear_tap(oy, scale_h, h_in, h_out, coord_mode);
            const int32_t wy1 = dnn64__q11(ty.f), wy0 = 2048 - wy1;
            const int8_t *r0 = xp + ty.i0 * w_in, *r1 = xp + ty.i1 * w_in;
            for (ox = 0; ox < w_out; ++ox) {
                const dnn64__lin_tap tx = dnn64__linear_tap(ox, scale_w, w_in, w_out, coord_mode);
                const int32_t wx1 = dnn64__q11(tx.f), wx0 = 2048 - wx1;
                const int32_t acc = wy0 * (wx0 * r0[tx.i0] + wx1 * r0[tx.i1]) +
                                    wy1 * (wx0 * r1[tx.i0] + wx1 * r1[tx.i1]);
                yp[oy * w_out + ox] = (int8_t)dnn64__rdbp(acc, 22);
            }
        }
    }
}
