/* dnn64_rsp.h - int8 kernels that run on the RSP.
 *
 * Same contracts and bit-exact results as the CPU kernels they stand for
 * (dnn64_kernels.h). The CPU moves each job's int8 weights and inputs (rows of the
 * input, or an im2col block it packs) into DMEM; the RSP
 * (dnn64build/rsp/microcode/matmul_s8.rsp) computes the dot products, carries them
 * from job to job along the reduction as a 32-bit state in DMEM, and runs the int8
 * output stage (requantisation, zero point, clamp) itself for channels whose
 * multiplier it can take (2 <= -shift <= 15, multiplier > 2^30, no table); for the
 * others the CPU reads the state back and requantises.
 *
 * Exactness (docs/rsp.md): a job sums at most DNN64_RSP_K_PER_JOB products
 * (|x w| <= 2^14) exactly in the 48-bit accumulator; the state holds 2 * acc with
 * acc = bias - x_zero_point * sum W + sum x W, |acc| < 2^29 when
 * K = c_in/group * k_h * k_w <= DNN64_RSP_K_MAX and |bias| < 2^28 (the kernel checks
 * both and runs the CPU kernel otherwise, as it does on platforms without an RSP). */
#ifndef DNN64_RSP_H
#define DNN64_RSP_H

#include "dnn64_kernels.h"

#define DNN64_RSP_K_PER_JOB 128
#define DNN64_RSP_K_MAX 8192

/* int8 Conv on the RSP; arguments exactly as dnn64_conv_s8. */
void dnn64_rsp_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                       const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y);

/* int8 Gemm of one row (m = 1) on the RSP, the output channels in its lanes; arguments
 * as dnn64_gemm_s8 with m = 1 and trans_b = 1. The RSP sums a . B (exact: |2 sum| < 2^28
 * for k <= DNN64_RSP_K_MAX); the CPU adds bias - a_zero_point * sum B and runs the
 * output stage. */
void dnn64_rsp_gemv_s8(int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                       const int8_t *b_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y);

/* int8 depthwise Conv (group = c_in = c_out) on the RSP, which fetches its own input
 * rows and writes its outputs by SP DMA (dwconv_s8.rsp); arguments exactly as
 * dnn64_conv_s8. Takes k x k = 3x3 or 5x5, stride 1 or 2, no dilation, begin pads below
 * k, rows of at most 128 bytes with their padding, every channel's output stage on the
 * RSP (as dnn64_rsp_conv_s8's) and |bias| < 2^28; otherwise runs dnn64_conv_s8. */
void dnn64_rsp_dwconv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                         const int8_t *w_tile, const int32_t *bias_tile,
                         const int32_t *mult_tile, const int32_t *shift_tile,
                         int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q, int8_t *y);

/* 1: dnn64_rsp_dwconv_s8 runs this geometry on the RSP (given the per-channel
 * conditions above). */
int dnn64_rsp_dwconv_fits(const dnn64_conv_geom *g);

/* int8 1x1 Conv (stride 1, no padding, one group) on the RSP, which fetches the weight
 * rows, the input rows and the output spans by SP DMA itself (pwconv_s8.rsp); arguments
 * exactly as dnn64_conv_s8. Takes c_in up to 8, or a multiple of 8 (at most
 * DNN64_RSP_K_MAX) with 8-byte aligned weight rows, every channel's output stage on the
 * RSP and |bias| < 2^28; otherwise runs dnn64_rsp_conv_s8. */
void dnn64_rsp_pwconv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                         const int8_t *w_tile, const int32_t *bias_tile,
                         const int32_t *mult_tile, const int32_t *shift_tile,
                         int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q, int8_t *y);

/* dnn64_rsp_pwconv_s8 for c_in above 8 and not a multiple of 8 (ShuffleNetV2's 58 and 116
 * channels): w_tile holds each channel's row padded with zeros to c_in rounded up to 8
 * (8-byte aligned), so the RSP runs those taps too (reading bytes past x, which the zero
 * weights cancel). When the RSP cannot take the tile, each channel runs through
 * dnn64_rsp_conv_s8 on its row's first c_in bytes. */
void dnn64_rsp_pwconv_padded_s8(const dnn64_conv_geom *g, const int8_t *x,
                                int32_t x_zero_point, const int8_t *w_tile,
                                const int32_t *bias_tile, const int32_t *mult_tile,
                                const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                                const dnn64_q8_out *q, int8_t *y);

/* 1: dnn64_rsp_pwconv_s8 runs this geometry and weight tile on the RSP. */
int dnn64_rsp_pwconv_fits(const dnn64_conv_geom *g, const int8_t *w_tile);

/* 1: dnn64_rsp_conv_s8 runs this geometry through stem_s8.rsp (the RSP fetching its own
 * input rows): 3 input channels, one group, 3x3, stride 2, no dilation, pads of at most
 * 2, W_out a multiple of 8, input rows of at most 232 bytes (given an 8-byte aligned
 * output and every channel's output stage on the RSP with |bias| < 2^28). */
int dnn64_rsp_stem_fits(const dnn64_conv_geom *g);

/* A QuantizeLinear of the float input x_f into x (as dnn64_quantize_f32_s8 with scale and
 * zero_point) and the Conv of x into y (as dnn64_rsp_conv_s8) in one call: through
 * stem_s8.rsp, the CPU quantizes the input rows of the next band of output rows while
 * the RSP computes one. Same results as the two calls, which it makes when the stem does
 * not take the Conv or x_f or x shares a D-cache line with y. */
void dnn64_rsp_conv_quantized_s8(const dnn64_conv_geom *g, const float *x_f, float scale,
                                 int32_t zero_point, int8_t *x, int32_t x_zero_point,
                                 const int8_t *w_tile, const int32_t *bias_tile,
                                 const int32_t *mult_tile, const int32_t *shift_tile,
                                 int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                                 int8_t *y);

/* int8 Gemm of one row (m = 1, trans_b = 1) on the RSP, which streams the weights by SP
 * DMA itself (gemv_dma_s8.rsp); arguments as dnn64_gemm_s8 with m = 1, except b_tile:
 * blocks of 8 output channels, tap after tap (W[8b + j][i] at byte 8 (k b + i) + j; the
 * last block's channels past oc_count zero). Takes k a multiple of 8 up to 1280 and an
 * 8-byte aligned tile; otherwise the CPU computes the same layout. */
void dnn64_rsp_gemv_dma_s8(int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                           const int8_t *b_tile, const int32_t *bias_tile,
                           const int32_t *mult_tile, const int32_t *shift_tile,
                           int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                           int8_t *y);

/* 1: dnn64_rsp_gemv_dma_s8 runs this reduction length and weight tile on the RSP. */
int dnn64_rsp_gemv_dma_fits(int32_t k, const int8_t *b_tile);

/* int8 Mul of planes [channels, h, w] by one value a channel ([channels, 1, 1]; b if
 * b_per_channel, else a), one image; arguments as dnn64_mul_s8 (bc describes the same
 * broadcast) plus that shape. On the RSP (dwconv_s8.rsp with k = 1) when the output
 * stage can run there (2 <= -shift <= 15, multiplier > 2^30) and rows of w <= 128;
 * otherwise dnn64_mul_s8. */
void dnn64_rsp_mul_channels_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                               const dnn64_mul_s8_params *p, int8_t *y, int32_t channels,
                               int32_t h, int32_t w, int b_per_channel);

/* int8 GlobalAveragePool (arguments as dnn64_global_avgpool_s8) with the planes summed on
 * the RSP (sums_s8.rsp, which fetches them by SP DMA itself): planes of 1 to 65535 bytes
 * at any alignment; otherwise on the CPU. */
void dnn64_rsp_global_avgpool_s8(int32_t planes, int32_t hw, int32_t act_min,
                                 int32_t act_max, const int8_t *x, int8_t *y);

/* int8 ReduceMean over the trailing axes: `planes` planes of n values reduced, arguments
 * otherwise as dnn64_reduce_mean_s8; the planes summed on the RSP as above (n <= 65535),
 * otherwise on the CPU. */
void dnn64_rsp_reduce_mean_s8(int32_t planes, int32_t n, int32_t x_zero_point, int32_t mult,
                              int32_t shift, int32_t out_zero_point, const int8_t *x, int8_t *y);

#endif /* DNN64_RSP_H */
