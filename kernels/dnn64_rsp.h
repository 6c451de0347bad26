/* dnn64_rsp.h - int8 kernels that run their multiply-accumulates on the RSP.
 *
 * Same contracts and bit-exact results as the CPU kernels they stand for
 * (dnn64_kernels.h). The CPU packs each job (weights widened to int16, an im2col
 * block of the input), the RSP computes the int32 dot products
 * (dnn64build/rsp/microcode/matmul_s8.rsp), the CPU subtracts the zero point's
 * share, adds the bias and requantizes exactly as dnn64_conv_s8.
 *
 * Exactness: every int8 x int8 product has |p| <= 2^14 and fits a 16-bit lane;
 * a job sums at most DNN64_RSP_K_PER_JOB = 128 of them (|sum| <= 2^21), which the
 * microcode keeps exact in the 48-bit accumulator as sum << 24 (needs < 2^23).
 * Jobs are added in int32 on the CPU, exact while the reduction length
 * K = c_in/group * k_h * k_w <= DNN64_RSP_K_MAX (|acc| <= 2^14 * K + |bias| and
 * the zero-point share, both < 2^31 for these K). Larger K, and platforms
 * without an RSP (host), run the CPU kernel. */
#ifndef DNN64_RSP_H
#define DNN64_RSP_H

#include "dnn64_kernels.h"

#define DNN64_RSP_K_PER_JOB 128
#define DNN64_RSP_K_MAX 65536

/* int8 Conv on the RSP; arguments exactly as dnn64_conv_s8. */
void dnn64_rsp_conv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                       const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                       const dnn64_q8_out *q, int8_t *y);

#endif /* DNN64_RSP_H */
