/* int8 Gemm of one row on the RSP with the RSP streaming the weights itself
 * (dnn64_rsp.h): gemv_dma_s8.rsp.
 *
 * The weight tile comes in blocks of 8 output channels, tap after tap (codegen lays it
 * out; the channels past oc_count in the last block are zeros): one 8-byte load holds one
 * tap of 8 channels, so the RSP keeps the output channels in its lanes and needs no lane
 * sums. The CPU writes a as 16-bit (a - a_zero_point) << 7 values, writes the D-cache
 * back over them and the weight tile, and starts the RSP on up to BLOCKS blocks at a
 * time; the RSP fetches the weights by SP DMA (the next piece while it multiplies this
 * one) and writes each channel's 32-bit sum. While it runs the next BLOCKS, the CPU adds
 * the bias to the last ones and runs the output stage. Exact: see the microcode (|sum| <
 * 2^26 for k <= K_MAX). */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "dnn64_rsp_internal.h"
#include "platform/dnn64_platform.h"

#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_start_gemv_dma
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_flush
#pragma weak dnn64_rsp_dram_address

#define K_MAX 1280       /* the a values fill 2.5 KiB of DMEM */
#define PIECE_MAX 64     /* taps a piece (a DMEM buffer of 8 channels x 64 taps) */
#define LANES 8
#define BLOCKS 8         /* blocks of LANES output channels a start */
#define HEADER_BYTES 32

static int16_t DNN64_ALIGNED(a_values[K_MAX]);
static int16_t DNN64_ALIGNED(sums[2][BLOCKS * 2 * LANES]);
static uint16_t DNN64_ALIGNED(header[HEADER_BYTES / 2]);

/* Pieces a block: the fewest whose taps are a multiple of 8 and at most PIECE_MAX. */
static int32_t pieces_of(int32_t k)
{
    int32_t p = (k + PIECE_MAX - 1) / PIECE_MAX;
    while (k % (LANES * p) != 0)
        ++p;
    return p;
}

int dnn64_rsp_gemv_dma_fits(int32_t k, const int8_t *b_tile)
{
    return k > 0 && k % LANES == 0 && k <= K_MAX && ((uintptr_t)b_tile & 7u) == 0;
}

/* Starts the RSP on `blocks` blocks from b, the channels' sums to out. */
static void start(int32_t k, int32_t blocks, const int8_t *b, int16_t *out)
{
    const int32_t pieces = pieces_of(k);
    header[0] = (uint16_t)k;
    header[1] = (uint16_t)blocks;
    header[2] = (uint16_t)(k / pieces);
    header[3] = (uint16_t)pieces;
    dnn64__rsp_put_u32(header + 4, dnn64_rsp_dram_address(a_values));
    dnn64__rsp_put_u32(header + 6, dnn64_rsp_dram_address(b));
    dnn64__rsp_put_u32(header + 8, dnn64_rsp_dram_address(out));
    dnn64_rsp_flush(out, (uint32_t)(blocks * 2 * LANES * 2));
    dnn64_rsp_write(0, header, HEADER_BYTES);
    dnn64_rsp_start_gemv_dma();
}

/* The CPU's dot products of one block (the RSP's, when it cannot run them). */
static void block_sums_cpu(int32_t k, const int8_t *a, int32_t a_zero_point,
                           const int8_t *b, uint32_t *acc)
{
    int32_t i, j;
    for (j = 0; j < LANES; ++j)
        acc[j] = 0;
    for (i = 0; i < k; ++i, b += LANES) {
        const int32_t v = a[i] - a_zero_point;
        for (j = 0; j < LANES; ++j)
            acc[j] += (uint32_t)(b[j] * v);
    }
}

void dnn64_rsp_gemv_dma_s8(int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                           const int8_t *b_tile, const int32_t *bias_tile,
                           const int32_t *mult_tile, const int32_t *shift_tile,
                           int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                           int8_t *y)
{
    const int32_t blocks = (oc_count + LANES - 1) / LANES;
    const int on_rsp = dnn64_rsp_available && dnn64_rsp_start_gemv_dma &&
                       dnn64_rsp_available() && dnn64_rsp_gemv_dma_fits(k, b_tile);
    int32_t i, b0, buf = 0;
    (void)n;
    if (oc_count <= 0)
        return;
    if (on_rsp) {
        for (i = 0; i < k; ++i)
            a_values[i] = (int16_t)((a[i] - a_zero_point) * 128);
        dnn64_rsp_flush(a_values, (uint32_t)(k * 2));
        dnn64_rsp_flush(b_tile, (uint32_t)(blocks * LANES * k));
        start(k, blocks < BLOCKS ? blocks : BLOCKS, b_tile, sums[0]);
    }
    for (b0 = 0; b0 < blocks; b0 += BLOCKS) {
        const int32_t count = blocks - b0 < BLOCKS ? blocks - b0 : BLOCKS;
        const int16_t *d = sums[buf];
        int32_t b;
        if (on_rsp) {
            dnn64_rsp_wait();
            if (b0 + BLOCKS < blocks) /* the next blocks run while the CPU finishes these */
                start(k, blocks - b0 - BLOCKS < BLOCKS ? blocks - b0 - BLOCKS : BLOCKS,
                      b_tile + (b0 + BLOCKS) * LANES * k, sums[buf ^ 1]);
        }
        for (b = 0; b < count; ++b, d += 2 * LANES) {
            uint32_t acc[LANES];
            int32_t j;
            if (on_rsp) /* bits 0..15, then 16..31 */
                for (j = 0; j < LANES; ++j)
                    acc[j] = ((uint32_t)(uint16_t)d[LANES + j] << 16) | (uint16_t)d[j];
            else
                block_sums_cpu(k, a, a_zero_point, b_tile + (b0 + b) * LANES * k, acc);
            for (j = 0; j < LANES && (b0 + b) * LANES + j < oc_count; ++j) {
                const int32_t t = (b0 + b) * LANES + j;
                acc[j] += (uint32_t)(bias_tile ? bias_tile[t] : 0);
                y[oc_begin + t] = dnn64__out_s8((int32_t)acc[j], mult_tile[t], shift_tile[t], q);
            }
        }
        buf ^= 1;
    }
}
