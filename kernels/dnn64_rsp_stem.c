/* int8 RGB stem Conv on the RSP (dnn64_rsp_internal.h): stem_s8.rsp.
 *
 * A Conv of 3 input channels, 3x3, stride 2, one group (the first layer of an image
 * network): the CPU writes one 48-byte descriptor an output channel (its output stage
 * constants, its 27 weights, the RDRAM address of its output plane) and a header, writes
 * the D-cache back over the input and output, and starts the RSP once per image and list
 * of up to DESCS channels; the RSP fetches the descriptors and the input rows by SP DMA,
 * splits each row into its even and odd padded columns once for every output channel,
 * and writes each output row. While the RSP runs one list the CPU writes the next.
 *
 * dnn64_rsp_conv_quantized_s8 also quantizes the float input itself: it starts the RSP
 * on bands of output rows, each once the input rows it reads are quantized and written
 * back, and quantizes the next band's rows while the RSP computes one.
 *
 * Exactness (docs/rsp.md): a lane sums 27 products |x w| <= 2^14 (<< 17) in its 48-bit
 * accumulator; V = 2 (c + sum) with |c| < 2^28 + 2^19 fits 32 bits. */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "dnn64_rsp_internal.h"
#include "platform/dnn64_platform.h"

#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_start_stem
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_flush
#pragma weak dnn64_rsp_dram_address

#define TAPS 27
#define DESC_BYTES 48
#define DESCS 16 /* channels a start */
#define HEADER_BYTES 64
#define SLOT_BYTES 128 /* one parity of one padded input row (stem_s8.rsp) */
#define STAGE_BYTES 704
#define BIAS_LIMIT (1 << 28)
#define LINE_BYTES 16u    /* the VR4300's D-cache line */
#define LUT_BAND_ROWS 8   /* output rows a start when the CPU applies a table behind it */
#define QUANT_BAND_ROWS 8 /* output rows a start when the CPU quantizes the input ahead */

static uint8_t DNN64_ALIGNED(descs[2][DESCS * DESC_BYTES]);
static uint16_t DNN64_ALIGNED(header[HEADER_BYTES / 2]);

/* The padded columns (rows) past the input that outputs read, given the begin pad. */
static int32_t end_pad(int32_t out, int32_t in, int32_t begin)
{
    return (out - 1) * 2 + 3 - in - begin;
}

int dnn64_rsp_stem_fits(const dnn64_conv_geom *g)
{
    const int32_t pl = g->pad_left, w = g->w_in;
    const int32_t steps = (w + 15) / 16, right_even = (pl + w + 1) / 2;
    return g->group == 1 && g->c_in == 3 && g->k_h == 3 && g->k_w == 3 && g->stride_h == 2 &&
           g->stride_w == 2 && g->dil_h == 1 && g->dil_w == 1 && g->pad_top >= 0 &&
           g->pad_top <= 2 && pl >= 0 && pl <= 2 && end_pad(g->w_out, w, pl) <= 2 &&
           end_pad(g->h_out, g->h_in, g->pad_top) <= 2 && g->w_out % 8 == 0 &&
           /* the copy and the right padding stay inside a slot; 3 rows fit STAGE */
           1 + 8 * steps <= SLOT_BYTES && right_even + 8 <= SLOT_BYTES &&
           3 * w + 7 <= STAGE_BYTES;
}

static void put_header(const dnn64_conv_geom *g, int32_t x_zp, const dnn64_q8_out *q)
{
    const int32_t pl = g->pad_left, w = g->w_in;
    header[1] = (uint16_t)w;
    header[2] = (uint16_t)g->h_in;
    header[3] = (uint16_t)g->w_out;
    header[5] = (uint16_t)(g->w_out / 8);
    header[7] = (uint16_t)((w + 15) / 16);
    /* input column j is padded column j + pl: slot (j + pl) % 2, byte (j + pl) / 2 */
    header[8] = (uint16_t)((pl & 1) * SLOT_BYTES + (pl >> 1));
    header[9] = (uint16_t)(((pl + 1) & 1) * SLOT_BYTES + ((pl + 1) >> 1));
    header[10] = (uint16_t)((pl + w + 1) / 2);
    header[11] = (uint16_t)(SLOT_BYTES + (pl + w) / 2);
    dnn64__rsp_put_output_consts(header, q->out_zero_point, q->act_min, q->act_max);
    header[22] = (uint16_t)x_zp;
    header[23] = (uint16_t)((uint32_t)(x_zp & 0xFF) * 0x101u);
    dnn64__rsp_put_u32(&header[24], (uint32_t)(g->h_in * w));
}

/* The descriptor of output channel t of the tile, its plane at y_plane. */
static void put_desc(uint8_t *d, const int8_t *w, int32_t c0, int32_t mult, int32_t shift,
                     int32_t x_zp, int8_t *y_plane)
{
    int32_t i, sum = 0;
    for (i = 0; i < 32; ++i) {
        const int8_t v = i < TAPS ? w[i] : 0;
        d[16 + i] = (uint8_t)v;
        sum += v;
    }
    dnn64__rsp_put_params(d, c0 - x_zp * sum, mult, shift, 1);
    *(uint32_t *)(void *)(d + 44) = dnn64_rsp_dram_address(y_plane); /* native: big-endian */
}

/* Starts the RSP on `count` descriptors at d, output rows [r0, r0 + rows) of the image
 * whose input channel 0 is at x. */
static void start_rows(const dnn64_conv_geom *g, const uint8_t *d, int32_t count,
                       const int8_t *x, int32_t r0, int32_t rows)
{
    const int32_t iy = 2 * r0 - g->pad_top;
    header[0] = (uint16_t)count;
    header[4] = (uint16_t)rows;
    header[6] = (uint16_t)iy;
    dnn64__rsp_put_u32(&header[12], dnn64_rsp_dram_address(d));
    dnn64__rsp_put_u32(&header[14], dnn64_rsp_dram_address(x));
    dnn64__rsp_put_u32(&header[26], (uint32_t)(iy * g->w_in));
    dnn64__rsp_put_u32(&header[28], (uint32_t)(r0 * g->w_out));
    dnn64_rsp_write(0, header, HEADER_BYTES);
    dnn64_rsp_start_stem();
}

/* Output rows a start. With a table LUT_BAND_ROWS, so that the CPU looks up one band's
 * outputs while the RSP computes the next; only when every band and plane starts on a
 * D-cache line (else a line the CPU dirtied could hold bytes of the next band from before
 * the RSP wrote them, and write them back over its outputs); otherwise all rows. Without
 * a table QUANT_BAND_ROWS while the CPU quantizes the input ahead (it writes no output
 * line), else all. */
static int32_t rows_a_start(const dnn64_conv_geom *g, const dnn64_q8_out *q, const int8_t *y0,
                            int quantizing)
{
    if (!q->lut)
        return quantizing ? QUANT_BAND_ROWS : g->h_out;
    return ((uintptr_t)y0 & (LINE_BYTES - 1)) == 0 && (g->h_out * g->w_out) % LINE_BYTES == 0 &&
                   (LUT_BAND_ROWS * g->w_out) % LINE_BYTES == 0
               ? LUT_BAND_ROWS
               : g->h_out;
}

/* Quantizes input rows [src->have, need) of every channel plane of the image whose
 * channel 0 is at element `at0` (need clamped to the rows) and writes them back for the
 * RSP. The bytes of rows before `have` that share a D-cache line are final: written back
 * again unchanged. */
static void quantize_rows(const dnn64_conv_geom *g, dnn64__stem_input *src, int32_t at0,
                          int32_t need)
{
    const int32_t plane = g->h_in * g->w_in;
    int32_t c;
    if (need > g->h_in)
        need = g->h_in;
    if (need <= src->have)
        return;
    for (c = 0; c < 3; ++c) {
        const int32_t at = at0 + c * plane + src->have * g->w_in;
        const int32_t count = (need - src->have) * g->w_in;
        dnn64__quantize_piece(&src->q, src->from + at, count, src->to + at);
        dnn64_rsp_flush(src->to + at, (uint32_t)count);
    }
    src->have = need;
}

/* The outputs a start wrote, for the table. */
typedef struct {
    int32_t n, t0, count, r0, rows;
} band;

static void lookup_band(const dnn64_conv_geom *g, const band *b, int32_t oc_begin,
                        const dnn64_q8_out *q, int8_t *y)
{
    int32_t t;
    for (t = 0; t < b->count; ++t) {
        int8_t *p = y + dnn64__conv_chan_at(g, b->n, oc_begin, b->t0 + t).y + b->r0 * g->w_out;
        dnn64_lut_s8(q->lut, p, p, b->rows * g->w_out);
    }
}

int dnn64__rsp_stem_s8(const dnn64_conv_geom *g, dnn64__stem_input *src, const int8_t *x,
                       int32_t x_zero_point, const int8_t *w_tile, const int32_t *bias_tile,
                       const int32_t *mult_tile, const int32_t *shift_tile, int32_t oc_begin,
                       int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    const int32_t plane_in = g->h_in * g->w_in, plane_out = g->h_out * g->w_out;
    int8_t *const y0 = y + dnn64__conv_chan_at(g, 0, oc_begin, 0).y;
    band done = {0, 0, 0, 0, 0}; /* the last start's outputs, for the table */
    int32_t t, n, step, buf = 0, started = 0;
    int fits = dnn64_rsp_available && dnn64_rsp_start_stem && dnn64_rsp_available() &&
               dnn64_rsp_stem_fits(g) && (dnn64_rsp_dram_address(y0) & 7u) == 0;
    for (t = 0; fits && t < oc_count; ++t)
        fits = dnn64__rsp_requant_on_rsp(mult_tile[t], shift_tile[t]) &&
               (!bias_tile || (bias_tile[t] < BIAS_LIMIT && bias_tile[t] > -BIAS_LIMIT));
    if (!fits)
        return 0;
    put_header(g, x_zero_point, q);
    step = rows_a_start(g, q, y0, src != NULL);
    for (n = 0; n < g->n; ++n) {
        const dnn64__conv_chan first = dnn64__conv_chan_at(g, n, oc_begin, 0);
        int32_t t0, r0;
        if (src)
            src->have = 0;
        else
            dnn64_rsp_flush(x + first.x, (uint32_t)(3 * plane_in));
        dnn64_rsp_flush(y + first.y, (uint32_t)(oc_count * plane_out));
        for (t0 = 0; t0 < oc_count; t0 += DESCS) {
            const int32_t count = oc_count - t0 < DESCS ? oc_count - t0 : DESCS;
            for (t = 0; t < count; ++t) {
                const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t0 + t);
                put_desc(descs[buf] + t * DESC_BYTES, w_tile + c.w,
                         bias_tile ? bias_tile[t0 + t] : 0, mult_tile[t0 + t],
                         shift_tile[t0 + t], x_zero_point, y + c.y);
            }
            dnn64_rsp_flush(descs[buf], (uint32_t)(count * DESC_BYTES));
            for (r0 = 0; r0 < g->h_out; r0 += step) {
                const band next = {n, t0, count, r0, g->h_out - r0 < step ? g->h_out - r0 : step};
                if (src) /* the rows it reads, while the RSP computes the band before */
                    quantize_rows(g, src, first.x, 2 * (r0 + next.rows) - g->pad_top + 1);
                if (started)
                    dnn64_rsp_wait();
                start_rows(g, descs[buf], count, x + first.x, r0, next.rows);
                if (started && q->lut)
                    lookup_band(g, &done, oc_begin, q, y);
                done = next;
                started = 1;
            }
            buf ^= 1;
        }
    }
    dnn64_rsp_wait();
    if (q->lut)
        lookup_band(g, &done, oc_begin, q, y);
    return 1;
}

/* Byte ranges [a, a + an) and [b, b + bn) share a D-cache line. */
static int share_lines(const void *a, uint32_t an, const void *b, uint32_t bn)
{
    const uintptr_t a0 = (uintptr_t)a & ~(uintptr_t)(LINE_BYTES - 1);
    const uintptr_t b0 = (uintptr_t)b & ~(uintptr_t)(LINE_BYTES - 1);
    return a0 < (uintptr_t)b + bn && b0 < (uintptr_t)a + an;
}

void dnn64_rsp_conv_quantized_s8(const dnn64_conv_geom *g, const float *x_f, float scale,
                                 int32_t zero_point, int8_t *x, int32_t x_zero_point,
                                 const int8_t *w_tile, const int32_t *bias_tile,
                                 const int32_t *mult_tile, const int32_t *shift_tile,
                                 int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q,
                                 int8_t *y)
{
    const int32_t count = g->n * g->c_in * g->h_in * g->w_in;
    const uint32_t y_bytes = (uint32_t)(g->n * g->c_out * g->h_out * g->w_out);
    dnn64__stem_input src;
    src.from = x_f;
    src.to = x;
    dnn64__quantizer_init(&src.q, scale, zero_point);
    src.have = 0;
    /* The RSP writes y while the CPU reads x_f and writes back lines of x: neither may
     * share a line with y (the plan keeps them apart; checked, not trusted). */
    if (!share_lines(x_f, (uint32_t)count * 4u, y, y_bytes) &&
        !share_lines(x, (uint32_t)count, y, y_bytes) &&
        dnn64__rsp_stem_s8(g, &src, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile,
                           oc_begin, oc_count, q, y))
        return;
    dnn64__quantize_piece(&src.q, x_f, count, x);
    dnn64_rsp_conv_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile, oc_begin,
                      oc_count, q, y);
}
