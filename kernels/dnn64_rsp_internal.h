/* dnn64_rsp_internal.h - pieces the RSP kernels share (not part of the kernel API). */
#ifndef DNN64_RSP_INTERNAL_H
#define DNN64_RSP_INTERNAL_H

#include <stdint.h>

/* Whether matmul_s8.rsp's output stage (also dwconv_s8.rsp's) takes a channel:
 * 2 <= -shift <= 15 and a multiplier above 2^30 (dnn64_rsp_conv.c). */
int dnn64__rsp_requant_on_rsp(int32_t mult, int32_t shift);

/* The 16-byte P row of a channel: 2c (c = bias - x_zero_point * sum W) and the output
 * stage constants (layout in matmul_s8.rsp). */
void dnn64__rsp_put_params(uint8_t *p, int32_t c, int32_t mult, int32_t shift, int on_rsp);

/* A 32-bit value at two 16-bit words of a job header, high word first (big-endian). */
static inline void dnn64__rsp_put_u32(uint16_t *at, uint32_t v)
{
    at[0] = (uint16_t)(v >> 16);
    at[1] = (uint16_t)v;
}

#endif /* DNN64_RSP_INTERNAL_H */
