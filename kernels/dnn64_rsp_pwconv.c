/* int8 1x1 Conv on the RSP with the RSP moving its own data (dnn64_rsp.h):
 * pwconv_s8.rsp.
 *
 * The CPU computes each channel's P row (2c = 2 (bias - x_zero_point * sum W) and the
 * output stage constants), writes the D-cache back over what the RSP reads and writes,
 * writes a header and starts the RSP once per image and list of up to LIST channels
 * (the P rows of the next list are written while the RSP runs this one). The RSP fetches
 * the weight rows, the input rows and the output spans by SP DMA itself: the CPU packs
 * and copies nothing, but for K <= 8: then each channel's P row is followed by its weights
 * as 16-bit values (zero past K), so the RSP needs neither a weight fetch nor 8-byte
 * weight rows (codegen sends a Conv on one position to dnn64_rsp_gemv_dma_s8); other
 * shapes dnn64_rsp_conv_s8 (dnn64_rsp_pwconv_padded_s8: K not a multiple of 8, with
 * weight rows that codegen padded with zero taps). Exactness: matmul_s8.rsp's
 * (docs/rsp.md). */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "dnn64_rsp_internal.h"
#include "platform/dnn64_platform.h"

#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_start_pwconv
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_flush
#pragma weak dnn64_rsp_dram_address

#define LIST 64        /* channels a start */
#define FIRST_LIST 16  /* channels of the first start */
#define PARAM_BYTES 16
#define SMALL_K 8      /* K up to this: the weights come with the P rows, 16 bits a tap */
#define ROWS 8         /* channels the RSP computes at a time */
#define SMALL_ROWS 32  /* with K <= SMALL_K */
#define KC 32          /* taps a chunk along k */
#define SKIP_MAX 4095 /* a strided transfer's skip field: K - (the last chunk's taps >= 8) */
#define HEADER_BYTES 64
#define BIAS_LIMIT (1 << 28)
#define LINE 16u      /* the D-cache line */

static uint8_t DNN64_ALIGNED(params[2][LIST * 2 * PARAM_BYTES]);
static uint16_t DNN64_ALIGNED(header[HEADER_BYTES / 2]);

/* The shape test of dnn64_rsp_pwconv_fits with weight rows of k bytes (c_in, or c_in
   rounded up to 8: dnn64_rsp_pwconv_padded_s8). */
static int shape_fits(const dnn64_conv_geom *g, int32_t k, const int8_t *w_tile)
{
    return g->group == 1 && g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 &&
           g->stride_w == 1 && g->pad_top == 0 && g->pad_left == 0 && g->h_out == g->h_in &&
           g->w_out == g->w_in &&
           (k <= SMALL_K || (k % 8 == 0 && k <= DNN64_RSP_K_MAX && k - 8 <= SKIP_MAX &&
                             ((uintptr_t)w_tile & 7u) == 0));
}

int dnn64_rsp_pwconv_fits(const dnn64_conv_geom *g, const int8_t *w_tile)
{
    return shape_fits(g, g->c_in, w_tile);
}

/* Whether the channels run on the RSP, with weight rows of k bytes. */
static int runs_on_rsp(const dnn64_conv_geom *g, int32_t k, const int8_t *w_tile,
                       const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile, int32_t oc_count)
{
    int32_t t;
    int fits = dnn64_rsp_available && dnn64_rsp_start_pwconv && dnn64_rsp_available() &&
               shape_fits(g, k, w_tile);
    for (t = 0; fits && t < oc_count; ++t)
        fits = dnn64__rsp_requant_on_rsp(mult_tile[t], shift_tile[t]) &&
               (!bias_tile || (bias_tile[t] < BIAS_LIMIT && bias_tile[t] > -BIAS_LIMIT));
    return fits;
}

/* Bytes a channel's record takes: its P row, and for K <= 8 its 8 weights as 16 bits. */
static int32_t param_bytes(int32_t k)
{
    return k <= SMALL_K ? 2 * PARAM_BYTES : PARAM_BYTES;
}

/* Channels the RSP computes at a time (their input vectors loaded once a block). */
static int32_t group_rows(int32_t k)
{
    return k <= SMALL_K ? SMALL_ROWS : ROWS;
}

/* The records of channels [t0, t0 + count) of the tile. */
static void put_params(uint8_t *p, int32_t t0, int32_t count, int32_t k, int32_t x_zp,
                       const int8_t *w_tile, const int32_t *bias_tile, const int32_t *mult_tile,
                       const int32_t *shift_tile)
{
    int32_t t, i;
    for (t = t0; t < t0 + count; ++t) {
        const int8_t *w = w_tile + t * k;
        uint8_t *record = p + (t - t0) * param_bytes(k);
        int32_t sum = 0;
        for (i = 0; i < k; ++i)
            sum += w[i];
        dnn64__rsp_put_params(record, (bias_tile ? bias_tile[t] : 0) - x_zp * sum, mult_tile[t],
                              shift_tile[t], 1);
        for (i = 0; k <= SMALL_K && i < SMALL_K; ++i) { /* big-endian 16-bit lanes */
            const int32_t wi = i < k ? w[i] : 0;
            record[PARAM_BYTES + 2 * i] = (uint8_t)(wi >> 8);
            record[PARAM_BYTES + 2 * i + 1] = (uint8_t)wi;
        }
    }
}

/* Channels of the list from t0: a short first list, so the RSP starts sooner (the CPU
   writes the P rows of each later list while the RSP runs the one before); with
   K <= SMALL_K a whole group (its records are quick to write). */
static int32_t list_count(int32_t t0, int32_t oc_count, int32_t k)
{
    const int32_t most = t0 ? LIST : k <= SMALL_K ? SMALL_ROWS : FIRST_LIST;
    return oc_count - t0 < most ? oc_count - t0 : most;
}

/* The table on y[0 .. count) but for the D-cache lines it shares with other bytes
   (`edges` 0), or on those only (1). The CPU applies it to a start's outputs while the
   RSP writes the next start's, which may share a line with them (edges wait for the end). */
static void lut_part(const int8_t *lut, int8_t *y, int32_t count, int edges)
{
    const uintptr_t a = (uintptr_t)y, b = a + (uint32_t)count;
    uintptr_t lo = (a + LINE - 1) & ~(uintptr_t)(LINE - 1), hi = b & ~(uintptr_t)(LINE - 1);
    if (lo > b)
        lo = b;
    if (hi < lo)
        hi = lo;
    if (!edges) {
        dnn64_lut_s8(lut, (int8_t *)lo, (int8_t *)lo, (int32_t)(hi - lo));
        return;
    }
    dnn64_lut_s8(lut, y, y, (int32_t)(lo - a));
    dnn64_lut_s8(lut, (int8_t *)hi, (int8_t *)hi, (int32_t)(b - hi));
}

/* The RSP's run (runs_on_rsp): weight rows of k bytes, k >= c_in; the taps past c_in
   have zero weights, so whatever the RSP reads past the input's rows adds nothing. */
static void run_on_rsp(const dnn64_conv_geom *g, int32_t k, const int8_t *x,
                       int32_t x_zero_point, const int8_t *w_tile, const int32_t *bias_tile,
                       const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                       int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    const int32_t positions = g->h_in * g->w_in;
    int32_t n, t0, count, buf = 0, started = 0, done_count = 0;
    int8_t *done = 0; /* the outputs of the start before the running one */
    for (n = 0; n < g->n; ++n)
        dnn64_rsp_flush(x + n * g->c_in * positions, (uint32_t)(g->c_in * positions));
    header[0] = (uint16_t)k;
    header[2] = (uint16_t)positions;
    header[3] = KC;
    dnn64__rsp_put_u32(header + 12, (uint32_t)(KC * positions));
    dnn64__rsp_put_u32(header + 14, (uint32_t)(group_rows(k) * positions));
    dnn64__rsp_put_output_consts(header, q->out_zero_point, q->act_min, q->act_max);
    header[22] = 0u;
    header[23] = 0u;
    header[26] = k <= SMALL_K;
    header[27] = (uint16_t)(group_rows(k) * param_bytes(k));
    header[28] = (uint16_t)group_rows(k);
    for (t0 = 0; t0 < oc_count; t0 += count) {
        count = list_count(t0, oc_count, k);
        put_params(params[buf], t0, count, k, x_zero_point, w_tile, bias_tile, mult_tile,
                   shift_tile);
        dnn64_rsp_flush(params[buf], (uint32_t)(count * param_bytes(k)));
        /* the list's weights and outputs, while the RSP runs the list before (a line
           they share with its outputs was written back and dropped before it started) */
        dnn64_rsp_flush(w_tile + t0 * k, (uint32_t)(count * k));
        for (n = 0; n < g->n; ++n)
            dnn64_rsp_flush(y + (n * g->c_out + oc_begin + t0) * positions,
                            (uint32_t)(count * positions));
        for (n = 0; n < g->n; ++n) {
            if (started)
                dnn64_rsp_wait();
            header[1] = (uint16_t)count;
            dnn64__rsp_put_u32(header + 4,
                               dnn64_rsp_dram_address(x + n * g->c_in * positions));
            dnn64__rsp_put_u32(header + 6,
                    dnn64_rsp_dram_address(y + (n * g->c_out + oc_begin + t0) * positions));
            dnn64__rsp_put_u32(header + 8, dnn64_rsp_dram_address(w_tile + t0 * k));
            dnn64__rsp_put_u32(header + 10, dnn64_rsp_dram_address(params[buf]));
            /* input rows and output spans of whole granules; a chunk's input rows by one
               strided transfer of 32-byte rows when its skip (P - 32) is a 12-bit field's:
               not below 32 positions (the skip cannot be negative) */
            header[25] = positions % 8 == 0 && !(header[5] & 7u) && !(header[7] & 7u);
            header[24] = header[25] && positions >= 32 && positions - 32 <= SKIP_MAX;
            dnn64_rsp_write(0, header, HEADER_BYTES);
            dnn64_rsp_start_pwconv();
            started = 1;
            if (q->lut && done)
                lut_part(q->lut, done, done_count, 0);
            done = y + (n * g->c_out + oc_begin + t0) * positions;
            done_count = count * positions;
        }
        buf ^= 1;
    }
    if (started)
        dnn64_rsp_wait();
    if (!q->lut || !done)
        return;
    lut_part(q->lut, done, done_count, 0);
    for (t0 = 0; t0 < oc_count; t0 += count) {
        count = list_count(t0, oc_count, k);
        for (n = 0; n < g->n; ++n)
            lut_part(q->lut, y + (n * g->c_out + oc_begin + t0) * positions,
                     count * positions, 1);
    }
}

void dnn64_rsp_pwconv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                         const int8_t *w_tile, const int32_t *bias_tile,
                         const int32_t *mult_tile, const int32_t *shift_tile,
                         int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    if (runs_on_rsp(g, g->c_in, w_tile, bias_tile, mult_tile, shift_tile, oc_count))
        run_on_rsp(g, g->c_in, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                   oc_begin, oc_count, q, y);
    else
        dnn64_rsp_conv_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                          oc_begin, oc_count, q, y);
}

void dnn64_rsp_pwconv_padded_s8(const dnn64_conv_geom *g, const int8_t *x,
                                int32_t x_zero_point, const int8_t *w_tile,
                                const int32_t *bias_tile, const int32_t *mult_tile,
                                const int32_t *shift_tile, int32_t oc_begin, int32_t oc_count,
                                const dnn64_q8_out *q, int8_t *y)
{
    const int32_t k = (g->c_in + 7) & ~7;
    int32_t t;
    if (runs_on_rsp(g, k, w_tile, bias_tile, mult_tile, shift_tile, oc_count)) {
        run_on_rsp(g, k, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile, oc_begin,
                   oc_count, q, y);
        return;
    }
    for (t = 0; t < oc_count; ++t) /* one channel a call: its row's first c_in bytes */
        dnn64_rsp_conv_s8(g, x, x_zero_point, w_tile + t * k, bias_tile ? bias_tile + t : 0,
                          mult_tile + t, shift_tile + t, oc_begin + t, 1, q, y);
}
