/* dnn64_rsp_internal.h - pieces the RSP kernels share (not part of the kernel API). */
#ifndef DNN64_RSP_INTERNAL_H
#define DNN64_RSP_INTERNAL_H

#include <stdint.h>

#include "dnn64_kernels.h"

/* Whether matmul_s8.rsp's output stage (also dwconv_s8.rsp's) takes a channel:
 * 2 <= -shift <= 15 and a multiplier above 2^30 (dnn64_rsp_matmul.c). */
int dnn64__rsp_requant_on_rsp(int32_t mult, int32_t shift);

/* The 16-byte P row of a channel: 2c (c = bias - x_zero_point * sum W) and the output
 * stage constants (layout in matmul_s8.rsp; dnn64_rsp_matmul.c). */
void dnn64__rsp_put_params(uint8_t *p, int32_t c, int32_t mult, int32_t shift, int on_rsp);

/* A 32-bit value at two 16-bit words of a job header, high word first (big-endian). */
static inline void dnn64__rsp_put_u32(uint16_t *at, uint32_t v)
{
    at[0] = (uint16_t)(v >> 16);
    at[1] = (uint16_t)v;
}

/* Header words 16..21 of pwconv_s8 and stem_s8 (the constants their
 * output_stage.inc loads): out zero point, act_min, act_max, 256, 1, -1. */
static inline void dnn64__rsp_put_output_consts(uint16_t *header, int32_t out_zero_point,
                                               int32_t act_min, int32_t act_max)
{
    header[16] = (uint16_t)out_zero_point;
    header[17] = (uint16_t)act_min;
    header[18] = (uint16_t)act_max;
    header[19] = 256u;
    header[20] = 1u;
    header[21] = 0xFFFFu;
}

/* The float input the stem quantizes into its int8 input as it goes
 * (dnn64_rsp_conv_quantized_s8): planes [n, 3, h_in, w_in] of `from` into `to` (the
 * stem's x) by q (as dnn64_quantize_f32_s8, its table built once); rows [0, have) of the
 * current image are done. */
typedef struct {
    const float *from;
    int8_t *to;
    dnn64__quantizer q;
    int32_t have;
} dnn64__stem_input;

/* dnn64_rsp_conv_s8's contract for a Conv of 3 input channels, 3x3, stride 2 (an RGB
 * stem) through stem_s8.rsp (dnn64_rsp_stem.c): 1 when it ran the call on the RSP, 0
 * (nothing done) when the shape (dnn64_rsp_stem_fits), the output's alignment or a
 * channel's output stage or bias keeps it off. With src (src->to == x), the rows of x
 * are quantized as the RSP's bands need them. */
int dnn64__rsp_stem_s8(const dnn64_conv_geom *g, dnn64__stem_input *src, const int8_t *x,
                       int32_t x_zero_point, const int8_t *w_tile, const int32_t *bias_tile,
                       const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                       int32_t oc_count, const dnn64_q8_out *q, int8_t *y);

#endif /* DNN64_RSP_INTERNAL_H */
