/* rsp_own_dma_probe.c - rsp_conv_probe.c's cases through an RSP kernel that fetches its
 * own data by SP DMA (RSP_KERNEL: dnn64_rsp_dwconv_s8 or dnn64_rsp_pwconv_s8), with
 * the input and weights copied 16-byte aligned first, as the arena and the weight
 * staging place them. Prints per case, besides rsp_conv_probe.c's lines,
 *   fit<i> <RSP_FITS: 1 if the kernel takes the case's geometry, not its fallback> */
#include "dnn64_kernels.h"
#include "dnn64_platform.h"
#include "dnn64_rsp.h"

#define ALIGNED_MAX 65536u

static int8_t DNN64_ALIGNED(x_aligned[ALIGNED_MAX]);
static int8_t DNN64_ALIGNED(w_aligned[ALIGNED_MAX]);
static int32_t case_index;

static void own_dma_kernel(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                           const int8_t *w_tile, const int32_t *bias_tile,
                           const int32_t *mult_tile, const int32_t *shift_tile,
                           int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                           int8_t *y)
{
    const int32_t x_bytes = g->n * g->c_in * g->h_in * g->w_in;
    const int32_t w_bytes = oc_count * (g->c_in / g->group) * g->k_h * g->k_w;
    char prefix[8] = "fit";
    int32_t i;
    if (x_bytes > (int32_t)ALIGNED_MAX || w_bytes > (int32_t)ALIGNED_MAX)
        dnn64_fail("rsp_own_dma_probe: case too big");
    for (i = 0; i < x_bytes; i++)
        x_aligned[i] = x[i];
    for (i = 0; i < w_bytes; i++)
        w_aligned[i] = w_tile[i];
    prefix[3] = (char)('0' + case_index / 10), prefix[4] = (char)('0' + case_index % 10);
    prefix[5] = 0;
    ++case_index;
    dnn64_print_u64(prefix, (uint64_t)RSP_FITS(g, w_aligned));
    RSP_KERNEL(g, x_aligned, x_zero_point, w_aligned, bias_tile, mult_tile, shift_tile,
               oc_begin, oc_count, q, y);
}

#define RSP_CONV own_dma_kernel
#include "rsp_conv_probe.c"
