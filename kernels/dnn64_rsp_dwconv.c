/* int8 depthwise Conv on the RSP (dnn64_rsp.h): dwconv_s8.rsp.
 *
 * The CPU writes one 64-byte descriptor a channel (its output stage constants, the
 * RDRAM addresses of its input and output planes, its weights), writes the D-cache
 * back over the input and output, and starts the RSP once for up to DESCS channels;
 * the RSP fetches the descriptors, the input rows and the output spans by SP DMA
 * itself, so the CPU neither packs nor copies. While the RSP runs one list the CPU
 * writes the next. Shapes outside dnn64_rsp_dwconv_fits run dnn64_conv_s8.
 *
 * dnn64_rsp_mul_channels_s8 runs an int8 Mul of planes by one value a channel (a
 * squeeze-excite scale) through the same microcode as a 1x1 "depthwise Conv".
 *
 * Exactness (docs/rsp.md): a lane's accumulator holds A * 2^25, A = c + at most 25
 * products |x w| <= 2^14: with |bias| < 2^20, |c| < 2^20 + 2^19 and |A| < 2^21, which
 * dw_output_stage.inc takes. A Mul's one product is at most 128 * 255, |c| = |zp w| < 2^15. */
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
#define HALF_SLOT 64      /* stride 2: its even columns, then its odd ones */
#define BIAS_LIMIT (1 << 20) /* |A| < 2^21 (dw_output_stage.inc) */
#define LINE_BYTES 16u /* the VR4300's D-cache line */

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

/* A padded input row fits its slot and one band of output rows fits DMEM. */
static int layout_fits(const dnn64_conv_geom *g)
{
    uint32_t o, st, sl;
    return g->pad_left + g->w_in + pad_right(g) <= SLOT_BYTES &&
           layout_end(g, 1, &o, &st, &sl) <= DNN64_RSP_DMEM_BYTES;
}

int dnn64_rsp_dwconv_fits(const dnn64_conv_geom *g)
{
    const int32_t k = g->k_h, s = g->stride_h;
    return g->group == g->c_in && g->c_out == g->c_in && k == g->k_w && (k == 3 || k == 5) &&
           s == g->stride_w && (s == 1 || s == 2) && g->dil_h == 1 && g->dil_w == 1 &&
           g->pad_top >= 0 && g->pad_top < k && g->pad_left >= 0 && g->pad_left < k &&
           layout_fits(g);
}

/* The descriptor's RDRAM addresses (native big-endian words): the input from row
 * -pad_top, the output plane. */
static void put_planes(uint8_t *d, const dnn64_conv_geom *g, const int8_t *x, int8_t *y)
{
    uint32_t *addr = (uint32_t *)(void *)(d + 16);
    addr[0] = dnn64_rsp_dram_address(x) - (uint32_t)(g->pad_top * g->w_in);
    addr[1] = dnn64_rsp_dram_address(y);
}

static void put_header(const dnn64_conv_geom *g, int32_t x_zp, int32_t act_min, int32_t act_max)
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
    header[7] = (uint16_t)((g->w_out + 7) / 8);
    header[8] = (uint16_t)g->pad_left;
    header[9] = (uint16_t)pad_right(g);
    header[10] = (uint16_t)band;
    header[11] = (uint16_t)(s == 1 ? (g->w_in + 7) / 8 : (g->w_in + 15) / 16);
    header[14] = (uint16_t)outbuf;
    header[15] = (uint16_t)stage;
    /* dw_output_stage.inc's constants: the clamp on 256 y + r, 256, 1, -32768, 128 */
    header[16] = (uint16_t)(act_min * 256);
    header[17] = (uint16_t)(act_max * 256 + 255);
    header[18] = 256u;
    header[19] = 1u;
    header[20] = 0x8000u;
    header[21] = 128u;
    header[22] = (uint16_t)x_zp;
    header[23] = (uint16_t)((uint32_t)(x_zp & 0xFF) * 0x101u);
    header[24] = (uint16_t)slots;
    /* k = 1 (a Mul) reads its rows where the SP DMA put them, W_in apart */
    header[25] = (uint16_t)(k == 1 ? 0u : slots + (uint32_t)(k / 2 * SLOT_BYTES));
    header[26] = (uint16_t)(k == 1 ? g->w_in : s * SLOT_BYTES);
    header[27] = (uint16_t)(band * s * g->w_in);
    header[28] = (uint16_t)(band * g->w_out);
    header[29] = (uint16_t)g->pad_top;
    /* stride 2: input column j is padded column j + pad_left, at byte (j + pad_left) / 2
     * of the slot's even or odd half */
    header[30] = (uint16_t)((g->pad_left & 1) * HALF_SLOT + (g->pad_left >> 1));
    header[31] = (uint16_t)(((g->pad_left + 1) & 1) * HALF_SLOT + ((g->pad_left + 1) >> 1));
}

/* The descriptor's output stage row (dw_output_stage.inc, native big-endian words): t1, t2
 * with 128 t1 - 32768 t2 = 2^9 c (the accumulator's start), the multiplier, ta, tb with
 * -32768 ta + 128 tb = T = 2^7 + 2^(7+e) (1 + 2 zp), and 2^(16-e); |c| < 2^21 - 32 keeps t2
 * in 16 bits, and 2 <= e <= 15, |zp| <= 128 keep ta there. */
static void put_dw_params(uint8_t *d, int32_t c, int32_t mult, int32_t shift, int32_t out_zp)
{
    uint16_t *p = (uint16_t *)(void *)d;
    const int32_t e = -shift;
    const int32_t t1 = (int32_t)(((uint32_t)(4 * c + 128)) & 0xFFu) - 128;
    const int32_t t128 = 1 + (1 << e) * (1 + 2 * out_zp); /* T / 128 */
    const int32_t tb = (int32_t)(((uint32_t)(t128 + 128)) & 0xFFu) - 128;
    p[0] = (uint16_t)t1;
    p[1] = (uint16_t)((t1 - 4 * c) / 256); /* exact */
    dnn64__rsp_put_u32(p + 2, (uint32_t)mult);
    p[4] = (uint16_t)((tb - t128) / 256); /* exact */
    p[5] = (uint16_t)tb;
    p[6] = (uint16_t)(1u << (16 - e));
    p[7] = 0;
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

/* Descriptor i of a call (image i / channels, channel i % channels of the tile). */
typedef void (*put_desc_fn)(uint8_t *d, int32_t i, const void *call);

/* The table (q->lut) over the outputs of channels [first, end) of a call, the RSP already
 * past them; rsp_busy: the RSP is writing later channels, so only when no D-cache line the
 * CPU dirties holds their bytes (else it returns 0, nothing done). */
typedef int (*lookup_fn)(const void *call, int32_t first, int32_t end, int rsp_busy);

/* Runs `total` channels in lists of DESCS (the header written): the CPU writes list
 * i + 1 while the RSP runs list i, and (lookup, if any) looks up list i - 1's outputs.
 * in, out: what the RSP reads and writes by SP DMA (`spans` spans of span_bytes,
 * span_stride apart), out of the D-cache first. */
static void run_lists(int32_t total, put_desc_fn put, const void *call, lookup_fn lookup,
                      const int8_t *in, int8_t *out, int32_t spans, int32_t span_bytes,
                      int32_t span_stride)
{
    int32_t i, filled, buf = 0, looked = 0, previous = 0;
    for (i = 0; i < spans; ++i) {
        dnn64_rsp_flush(in + i * span_stride, (uint32_t)span_bytes);
        dnn64_rsp_flush(out + i * span_stride, (uint32_t)span_bytes);
    }
    for (i = 0, filled = 0; i < total; i = filled) {
        for (; filled < total && filled < i + DESCS; ++filled)
            put(descs[buf] + (filled - i) * DESC_BYTES, filled, call);
        if (i > 0)
            dnn64_rsp_wait();
        start(descs[buf], filled - i);
        if (lookup && i > 0 && looked == previous && lookup(call, previous, i, 1))
            looked = i;
        previous = i;
        buf ^= 1;
    }
    if (total > 0)
        dnn64_rsp_wait();
    if (lookup && looked < total)
        lookup(call, looked, total, 0);
}

typedef struct {
    const dnn64_conv_geom *g;
    const int8_t *x, *w_tile;
    int32_t x_zp, out_zp, oc_begin, oc_count;
    const int32_t *bias_tile, *mult_tile, *shift_tile;
    int8_t *y;
    const int8_t *lut;
} conv_call;

static int8_t *out_plane(const conv_call *c, int32_t i)
{
    return c->y + dnn64__conv_chan_at(c->g, i / c->oc_count, c->oc_begin, i % c->oc_count).y;
}

static int lookup_conv(const void *call, int32_t first, int32_t end, int rsp_busy)
{
    const conv_call *c = (const conv_call *)call;
    const int32_t plane = c->g->h_out * c->g->w_out;
    /* one image's planes are contiguous: then only the span's two ends can share a line
     * with planes the RSP writes later */
    if (rsp_busy && (first / c->oc_count != (end - 1) / c->oc_count ||
                     ((uintptr_t)out_plane(c, first) & (LINE_BYTES - 1)) != 0 ||
                     ((uintptr_t)(out_plane(c, end - 1) + plane) & (LINE_BYTES - 1)) != 0))
        return 0;
    for (; first < end; ++first) {
        int8_t *p = out_plane(c, first);
        dnn64_lut_s8(c->lut, p, p, plane);
    }
    return 1;
}

/* Descriptor of output channel oc_begin + i % oc_count of image i / oc_count. */
static void put_conv_desc(uint8_t *d, int32_t i, const void *call)
{
    const conv_call *c = (const conv_call *)call;
    const int32_t k = c->g->k_h, t = i % c->oc_count;
    const dnn64__conv_chan at = dnn64__conv_chan_at(c->g, i / c->oc_count, c->oc_begin, t);
    const int8_t *w = c->w_tile + at.w;
    int32_t ky, kx, sum = 0;
    for (ky = 0; ky < 5; ++ky)
        for (kx = 0; kx < 8; ++kx) {
            const int8_t v = ky < k && kx < k ? w[ky * k + kx] : 0;
            d[24 + ky * 8 + kx] = (uint8_t)v;
            sum += v;
        }
    put_dw_params(d, (c->bias_tile ? c->bias_tile[t] : 0) - c->x_zp * sum, c->mult_tile[t],
                  c->shift_tile[t], c->out_zp);
    put_planes(d, c->g, c->x + at.x, c->y + at.y);
}

void dnn64_rsp_dwconv_s8(const dnn64_conv_geom *g, const int8_t *x, int32_t x_zero_point,
                         const int8_t *w_tile, const int32_t *bias_tile,
                         const int32_t *mult_tile, const int32_t *shift_tile,
                         int32_t oc_begin, int32_t oc_count, const dnn64_q8_out *q, int8_t *y)
{
    const int32_t plane_in = g->h_in * g->w_in, plane_out = g->h_out * g->w_out;
    const conv_call call = {g, x, w_tile, x_zero_point, q->out_zero_point, oc_begin, oc_count,
                            bias_tile, mult_tile, shift_tile, y, q->lut};
    int32_t t, n;
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
    put_header(g, x_zero_point, q->act_min, q->act_max);
    for (n = 0; n < g->n; ++n) {
        dnn64_rsp_flush(x + (n * g->c_in + oc_begin) * plane_in, (uint32_t)(oc_count * plane_in));
        dnn64_rsp_flush(y + (n * g->c_out + oc_begin) * plane_out,
                        (uint32_t)(oc_count * plane_out));
    }
    run_lists(g->n * oc_count, put_conv_desc, &call, q->lut ? lookup_conv : 0, x, y, 0, 0, 0);
}

typedef struct {
    const dnn64_conv_geom *g;
    const int8_t *planes, *scales;
    int32_t planes_zp, scales_zp, mult, shift, out_zp;
    int8_t *y;
} mul_call;

/* Channel i: y = out((x - planes_zp) * w), w = scale - scales_zp, i.e. A = c + x w with
 * c = -planes_zp * w; the weight as 2w (dwconv_s8.rsp, k = 1). */
static void put_mul_desc(uint8_t *d, int32_t i, const void *call)
{
    const mul_call *c = (const mul_call *)call;
    const int32_t plane = c->g->h_in * c->g->w_in, w = c->scales[i] - c->scales_zp;
    *(int16_t *)(void *)(d + 24) = (int16_t)(w * 2); /* native: big-endian */
    put_dw_params(d, -c->planes_zp * w, c->mult, c->shift, c->out_zp);
    put_planes(d, c->g, c->planes + i * plane, c->y + i * plane);
}

/* The fewest rows of at most SLOT_BYTES a plane of h x w splits into (a Mul is elementwise:
 * any split of a plane is the same Mul, and each row costs the RSP a slot copy and a
 * pass), or h when no split has fewer. */
static int32_t plane_rows(int32_t h, int32_t w)
{
    const int32_t positions = h * w;
    int32_t r;
    for (r = 1; r < h; ++r)
        if (positions % r == 0 && positions / r <= SLOT_BYTES)
            return r;
    return h;
}

void dnn64_rsp_mul_channels_s8(const dnn64_bcast *bc, const int8_t *a, const int8_t *b,
                               const dnn64_mul_s8_params *p, int8_t *y, int32_t channels,
                               int32_t h, int32_t w, int b_per_channel)
{
    dnn64_conv_geom g;
    mul_call call;
    const int32_t rows = plane_rows(h, w);
    w = h * w / rows, h = rows;
    g.n = 1, g.c_in = channels, g.c_out = channels, g.group = channels;
    g.h_in = h, g.w_in = w, g.h_out = h, g.w_out = w;
    g.k_h = 1, g.k_w = 1, g.stride_h = 1, g.stride_w = 1, g.dil_h = 1, g.dil_w = 1;
    g.pad_top = 0, g.pad_left = 0;
    if (!(dnn64_rsp_available && dnn64_rsp_start_dwconv && dnn64_rsp_available()) ||
        !dnn64__rsp_requant_on_rsp(p->mult, p->shift) || !layout_fits(&g)) {
        dnn64_mul_s8(bc, a, b, p, y);
        return;
    }
    call.g = &g;
    call.planes = b_per_channel ? a : b;
    call.scales = b_per_channel ? b : a;
    call.planes_zp = b_per_channel ? p->a_zero_point : p->b_zero_point;
    call.scales_zp = b_per_channel ? p->b_zero_point : p->a_zero_point;
    call.mult = p->mult, call.shift = p->shift, call.out_zp = p->out_zero_point, call.y = y;
    put_header(&g, call.planes_zp, p->act_min, p->act_max);
    run_lists(channels, put_mul_desc, &call, 0, call.planes, y, 1, channels * h * w, 0);
}
