/* rsp_quantized_stem_probe.c - rsp_conv_probe.c's cases through a kernel that quantizes
 * its float input itself (RSP_KERNEL: dnn64_rsp_conv_quantized_s8). Each case's int8
 * input x becomes the float input (x - x_zero_point) * SCALE, which quantizes back to x
 * exactly (|x - x_zero_point| <= 255: the float error is far below half a step), so
 * rsp_conv_probe.c's references hold. Even-numbered cases write y over the float input
 * (the kernel must then quantize it all before the RSP writes a byte), odd ones into
 * their own buffer. Prints per case, besides rsp_conv_probe.c's lines,
 *   fit<i> <RSP_FITS: 1 if the kernel takes the case's geometry, not its fallback> */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

#define SCALE 0.05f
#define X_MAX 65536u

static float DNN64_ALIGNED(x_float[X_MAX]);
static int8_t DNN64_ALIGNED(x_int8[X_MAX]);
static int32_t case_index;

static void quantizing_kernel(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                              const int8_t *w_tile, const int32_t *bias_tile,
                              const int32_t *mult_tile, const int32_t *shift_tile,
                              int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                              int8_t *y)
{
    const int32_t x_count = g->n * g->c_in * g->h_in * g->w_in;
    const int32_t y_count = g->n * g->c_out * g->h_out * g->w_out;
    const int over_input = case_index % 2 == 0;
    int8_t *const out = over_input ? (int8_t *)x_float : y;
    char prefix[8] = "fit";
    int32_t i;
    if (x_count > (int32_t)X_MAX || y_count > (int32_t)(4u * X_MAX))
        dnn64_fail("rsp_quantized_stem_probe: case too big");
    for (i = 0; i < x_count; i++)
        x_float[i] = (float)(x[i] - x_zero_point) * SCALE;
    prefix[3] = (char)('0' + case_index / 10), prefix[4] = (char)('0' + case_index % 10);
    prefix[5] = 0;
    ++case_index;
    dnn64_print_u64(prefix, (uint64_t)RSP_FITS(g, w_tile));
    RSP_KERNEL(g, x_float, SCALE, x_zero_point, x_int8, x_zero_point, w_tile, bias_tile,
               mult_tile, shift_tile, oc_begin, oc_count, q, out);
    for (i = 0; over_input && i < y_count; i++) { /* the tile's channels of each image */
        const int32_t oc = i / (g->h_out * g->w_out) % g->c_out;
        if (oc >= oc_begin && oc < oc_begin + oc_count)
            y[i] = out[i];
    }
}

#define RSP_CONV quantizing_kernel
#include "rsp_conv_probe.c"
