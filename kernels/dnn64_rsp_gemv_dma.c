/* int8 Gemm of one row on the RSP with the RSP streaming the weight rows itself
 * (dnn64_rsp.h): gemv_dma_s8.rsp.
 *
 * The CPU writes a as 16-bit (a - a_zero_point) << 7 values, writes the D-cache back
 * over them and the weight tile, and starts the RSP on up to ROWS output channels at a
 * time; the RSP fetches the weight rows by SP DMA (the next piece while it multiplies
 * this one) and writes 8 lane sums a channel. While it runs the next ROWS, the CPU adds
 * the last ROWS' lanes and the bias and runs the output stage. Exact: see the
 * microcode (|lane sum| < 2^23 for k <= K_MAX). */
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
#define PIECE_MAX 256    /* weights a piece (DMEM buffer) */
#define ROWS 256         /* output channels a start */
#define LANES 8
#define HEADER_BYTES 32

static int16_t DNN64_ALIGNED(a_values[K_MAX]);
static int16_t DNN64_ALIGNED(lanes[2][ROWS * 2 * LANES]);
static uint16_t DNN64_ALIGNED(header[HEADER_BYTES / 2]);

/* Pieces a row: the fewest whose size is a multiple of 8 and at most PIECE_MAX. */
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

/* Starts the RSP on `rows` channels from b (row after row), lane sums to out. */
static void start(int32_t k, int32_t rows, const int8_t *b, int16_t *out)
{
    const int32_t pieces = pieces_of(k);
    header[0] = (uint16_t)k;
    header[1] = (uint16_t)rows;
    header[2] = (uint16_t)(k / pieces);
    header[3] = (uint16_t)pieces;
    dnn64__rsp_put_u32(header + 4, dnn64_rsp_dram_address(a_values));
    dnn64__rsp_put_u32(header + 6, dnn64_rsp_dram_address(b));
    dnn64__rsp_put_u32(header + 8, dnn64_rsp_dram_address(out));
    dnn64_rsp_flush(out, (uint32_t)(rows * 2 * LANES * 2));
    dnn64_rsp_write(0, header, HEADER_BYTES);
    dnn64_rsp_start_gemv_dma();
}

void dnn64_rsp_gemv_dma_s8(int32_t k, int32_t n, const int8_t *a, int32_t a_zero_point,
                           const int8_t *b_tile, const int32_t *bias_tile,
                           const int32_t *mult_tile, const int32_t *shift_tile,
                           int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                           int8_t *y)
{
    int32_t i, r0, buf = 0;
    (void)n;
    if (!(dnn64_rsp_available && dnn64_rsp_start_gemv_dma && dnn64_rsp_available()) ||
        !dnn64_rsp_gemv_dma_fits(k, b_tile) || oc_count <= 0) {
        dnn64_gemm_s8(1, k, n, a, a_zero_point, b_tile, 1, bias_tile, mult_tile, shift_tile,
                      oc_begin, oc_count, q, y);
        return;
    }
    for (i = 0; i < k; ++i)
        a_values[i] = (int16_t)((a[i] - a_zero_point) * 128);
    dnn64_rsp_flush(a_values, (uint32_t)(k * 2));
    dnn64_rsp_flush(b_tile, (uint32_t)(oc_count * k));
    start(k, oc_count < ROWS ? oc_count : ROWS, b_tile, lanes[0]);
    for (r0 = 0; r0 < oc_count; r0 += ROWS) {
        const int32_t rows = oc_count - r0 < ROWS ? oc_count - r0 : ROWS;
        const int16_t *d = lanes[buf];
        int32_t r;
        dnn64_rsp_wait();
        if (r0 + ROWS < oc_count) /* the next rows run while the CPU finishes these */
            start(k, oc_count - r0 - ROWS < ROWS ? oc_count - r0 - ROWS : ROWS,
                  b_tile + (r0 + ROWS) * k, lanes[buf ^ 1]);
        for (r = 0; r < rows; ++r, d += 2 * LANES) {
            const int32_t t = r0 + r;
            uint32_t acc = (uint32_t)(bias_tile ? bias_tile[t] : 0);
            int32_t l;
            for (l = 0; l < LANES; ++l) /* low halves, then high halves */
                acc += ((uint32_t)(uint16_t)d[LANES + l] << 16) | (uint16_t)d[l];
            y[oc_begin + t] = dnn64__out_s8((int32_t)acc, mult_tile[t], shift_tile[t], q);
        }
        buf ^= 1;
    }
}
