/* int8 depthwise Conv on the RSP (dnn64_rsp.h): dwconv_s8.rsp.
 *
 * The CPU writes one 64-byte descriptor a channel (its output stage constants, the
 * RDRAM addresses of its input and output planes, its weights), writes the D-cache
 * back over the input and output, and starts the RSP once for up to DESCS channels;
 * the RSP fetches the descriptors, the input rows and the output spans by SP DMA
 * itself, so the CPU neither packs nor copies. While the RSP runs one list the CPU
 * writes the next. Shapes outside dnn64_rsp_dwconv_fits run dnn64_conv_s8.
 *
 * Exactness (docs/rsp.md): a lane sums at most 25 products |x w| <= 2^14 (<< 17) in
 * its 48-bit accumulator; V = 2 (c + sum) with |c| < 2^28 + 2^19 fits 32 bits. */
#include "dnn64_internal.h"
#include "dnn64_rsp.h"
#include "dnn64_rsp_internal.h"
#include "platform/dnn64_platform.h"

#pragma weak dnn64_rsp_available
#pragma weak dnn64_rsp_write
#pragma weak dnn64_rsp_start_dwconv
#pragma weak dnn64_rsp_wait
#pragma weak dnn64_rsp_flush
#pragma weak dnn64_rsp_dram_address

#define DESC_BYTES 64
#define DESCS 32 /* channels a start */
#define HEADER_BYTES 64
#define FIXED_BYTES 0x100 /* header, descriptor, saved bytes (dwconv_s8.rsp) */
#define SLOT_BYTES 128    /* one padded input row */
#define BIAS_LIMIT (1 << 28)

static uint8_t DNN64_ALIGNED(descs[2][DESCS * DESC_BYTES]);
static uint16_t DNN64_ALIGNED(header[HEADER_BYTES / 2]);

static uint32_t round8(uint32_t v)
{
    return (v + 7u) & ~7u;
}

/* The input columns right of the plane that outputs read (x_zero_point there). */
static int32_t pad_right(const dnn64_conv_geom *g)
{
    const int32_t r = (g->w_out - 1) * g->stride_w + g->k_w - g->w_in - g->pad_left;
    return r > 0 ? r : 0;
}

/* DMEM layout for a band of `band` output rows: OUTBUF, STAGE, SLOTS; the end of it
 * (past the slots, 16 bytes of slack for the loads of the lanes past the row). */
static uint32_t layout_end(const dnn64_conv_geom *g, int32_t band, uint32_t *outbuf,
                           uint32_t *stage, uint32_t *slots)
{
    const int32_t slot_count = (band - 1) * g->stride_h + g->k_h;
    *outbuf = FIXED_BYTES;
    *stage = *outbuf + round8((uint32_t)(band * g->w_out) + 16u);
    *slots = (*stage + round8((uint32_t)(slot_count * g->w_in) + 16u) + 15u) & ~15u;
    return *slots + (uint32_t)slot_count * SLOT_BYTES + 16u;
}

int dnn64_rsp_dwconv_fits(const dnn64_conv_geom *g)
{
    const int32_t k = g->k_h, s = g->stride_h;
    uint32_t o, st, sl;
    return g->group == g->c_in && g->c_out == g->c_in && k == g->k_w && (k == 3 || k == 5) &&
           s == g->stride_w && (s == 1 || s == 2) && g->dil_h == 1 && g->dil_w == 1 &&
           g->pad_top >= 0 && g->pad_top < k && g->pad_left >= 0 && g->pad_left < k &&
           g->pad_left + g->w_in + pad_right(g) <= SLOT_BYTES &&
           layout_end(g, 1, &o, &st, &sl) <= DNN64_RSP_DMEM_BYTES;
}

/* Descriptor of output channel oc_begin + t of image n. */
static void put_desc(uint8_t *d, const dnn64_conv_geom *g, int32_t n, int32_t oc_begin,
                     int32_t t, const int8_t *x, int32_t x_zp, const int8_t *w_tile,
                     const int32_t *bias_tile, const int32_t *mult_tile,
                     const int32_t *shift_tile, int8_t *y)
{
    const int32_t k = g->k_h;
    const dnn64__conv_chan c = dnn64__conv_chan_at(g, n, oc_begin, t);
    const int8_t *w = w_tile + c.w;
    uint32_t *addr = (uint32_t *)(d + 16);
    int32_t ky, kx, sum = 0;
    for (ky = 0; ky < 5; ++ky)
        for (kx = 0; kx < 8; ++kx) {
            const int8_t v = ky < k && kx < k ? w[ky * k + kx] : 0;
            d[24 + ky * 8 + kx] = (uint8_t)v;
            sum += v;
        }
    dnn64__rsp_put_params(d, (bias_tile ? bias_tile[t] : 0) - x_zp * sum, mult_tile[t],
                          shift_tile[t], 1);
    /* native (big-endian) words; the input from row -pad_top */
    addr[0] = dnn64_rsp_dram_address(x + c.x) - (uint32_t)(g->pad_top * g->w_in);
    addr[1] = dnn64_rsp_dram_address(y + c.y);
}

static void put_header(const dnn64_conv_geom *g, int32_t x_zp, const dnn64_q8_out *q)
{
    const int32_t s = g->stride_h, k = g->k_h;
    int32_t band = g->h_out;
    uint32_t outbuf, stage, slots;
    while (layout_end(g, band, &outbuf, &stage, &slots) > DNN64_RSP_DMEM_BYTES)
        --band;
    header[1] = (uint16_t)g->w_in;
    header[2] = (uint16_t)g->h_in;
    header[3] = (uint16_t)g->w_out;
    header[4] = (uint16_t)g->h_out;
    header[5] = (uint16_t)k;
    header[6] = (uint16_t)(s - 1);
    header[7] = (uint16_t)(s == 1 ? (g->w_out + 7) / 8 : (g->w_out + 3) / 4);
    header[8] = (uint16_t)g->pad_left;
    header[9] = (uint16_t)pad_right(g);
    header[10] = (uint16_t)band;
    header[11] = (uint16_t)((g->pad_left + g->w_in + 7) / 8);
    header[14] = (uint16_t)outbuf;
    header[15] = (uint16_t)stage;
    header[16] = (uint16_t)q->out_zero_point;
    header[17] = (uint16_t)q->act_min;
    header[18] = (uint16_t)q->act_max;
    header[19] = 256u;
    header[20] = 1u;
    header[21] = 0xFFFFu;
    header[22] = (uint16_t)x_zp;
    header[23] = (uint16_t)((uint32_t)(x_zp & 0xFF) * 0x101u);
    header[24] = (uint16_t)slots;
    header[25] = (uint16_t)(slots + (uint32_t)(k / 2 * SLOT_BYTES));
    header[26] = (uint16_t)(s * SLOT_BYTES);
    header[27] = (uint16_t)(band * s * g->w_in);
    header[28] = (uint16_t)(band * g->w_out);
    header[29] = (uint16_t)g->pad_top;
}

/* Starts the RSP on `count` descriptors at d. */
static void start(const uint8_t *d, int32_t count)
{
    const uint32_t at = dnn64_rsp_dram_address(d);
    header[0] = (uint16_t)count;
    header[12] = (uint16_t)(at >> 16);
    header[13] = (uint16_t)at;
    dnn64_rsp_flush(d, (uint32_t)(count * DESC_BYTES));
    dnn64_rsp_write(0, header, HEADER_BYTES);
    dnn64_rsp_start_dwconv();
}

void dnn64_rsp_dwconv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                         const int8_t *w_tile, const int32_t *bias_tile,
                         const int32_t *mult_tile, const int32_t *shift_tile,
                         int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    const int32_t plane_in = g->h_in * g->w_in, plane_out = g->h_out * g->w_out;
    const int32_t total = g->n * oc_count;
    int32_t i, t, n, filled, buf = 0;
    int fits = dnn64_rsp_available && dnn64_rsp_start_dwconv && dnn64_rsp_available() &&
               dnn64_rsp_dwconv_fits(g);
    for (t = 0; fits && t < oc_count; ++t)
        fits = dnn64__rsp_requant_on_rsp(mult_tile[t], shift_tile[t]) &&
               (!bias_tile || (bias_tile[t] < BIAS_LIMIT && bias_tile[t] > -BIAS_LIMIT));
    if (!fits) {
        dnn64_conv_s8(g, x, x_zero_point, w_tile, bias_tile, mult_tile, shift_tile, oc_begin,
                      oc_count, q, y);
        return;
    }
    put_header(g, x_zero_point, q);
    for (n = 0; n < g->n; ++n) { /* what the RSP reads and writes, out of the D-cache */
        dnn64_rsp_flush(x + (n * g->c_in + oc_begin) * plane_in, (uint32_t)(oc_count * plane_in));
        dnn64_rsp_flush(y + (n * g->c_out + oc_begin) * plane_out,
                        (uint32_t)(oc_count * plane_out));
    }
    /* list i: (image, channel) pairs i * DESCS..; the CPU writes list i + 1 while the
     * RSP runs list i */
    for (i = 0, filled = 0; i < total; i = filled) {
        for (; filled < total && filled < i + DESCS; ++filled)
            put_desc(descs[buf] + (filled - i) * DESC_BYTES, g, filled / oc_count, oc_begin,
                     filled % oc_count, x, x_zero_point, w_tile, bias_tile, mult_tile,
                     shift_tile, y);
        if (i > 0)
            dnn64_rsp_wait();
        start(descs[buf], filled - i);
        buf ^= 1;
    }
    if (total > 0)
        dnn64_rsp_wait();
    if (q->lut)
        for (n = 0; n < g->n; ++n) {
            int8_t *p = y + (n * g->c_out + oc_begin) * plane_out;
            for (i = 0; i < oc_count * plane_out; ++i)
                p[i] = q->lut[p[i] + 128];
        }
}
